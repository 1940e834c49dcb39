"""Which of a large API's tools are behaviours: the resources people work on, not its configuration.

Where a product has hundreds of endpoints (over ``CORE_ONLY_OVER`` tools), the planner keeps as
behaviours the tools of the rows people create, list or delete, or act on through several tools, unless
the rows' names say configuration (settings, schemes, permissions...); the others are simulated, and
their world model answers from the rows of the entity their path names (``route_entity``).
"""

from __future__ import annotations

from typing import Protocol

from generator.naming import singular, snake, words
from generator.planner.intents import Intent, PreparedTool
from generator.planner.resources import method_of
from generator.spec import EntityDef


class _Planned(Protocol):
    tool: PreparedTool
    intent: Intent


def route_entity(tool: PreparedTool, entities: dict[str, EntityDef]) -> EntityDef | None:
    """The entity a tool's path or RPC method names, nearest the end (``GET /files/{id}/thumbnail`` -> file)."""
    pieces = method_of(tool)
    nouns: list[str] = []
    if pieces and len(pieces) >= 2:
        nouns = [singular(snake(p)) for p in pieces[:-1]]
    elif tool.path:
        nouns = [singular(snake(s)) for s in tool.path.split("?")[0].split("/") if s and "{" not in s]
    for noun in reversed(nouns):
        for candidate in (noun, noun.rsplit("_", 1)[-1]):
            if candidate in entities:
                return entities[candidate]
    return None


OUTSIDE_CORE = "outside the core resources of a large API (those it lets you create, read and list)"


#: Words of the side resources of a large API: its configuration and internals, not what people work on.
_SIDE_WORDS = frozenset({"setting", "settings", "scheme", "schemes", "configuration", "config", "preference",
                         "preferences", "permission", "permissions", "policy", "audit", "log", "logs", "token",
                         "session", "avatar", "property", "properties", "metadata", "watermark", "screen", "locale",
                         "license", "plugin", "schema", "mapping", "capability", "feature", "flag", "limit",
                         "quota", "health", "status", "theme", "branding", "migration"})


def core_entities(planned: list[_Planned], entities: dict[str, EntityDef]) -> set[str]:
    """Entities people automate in a large API: rows they create, list or delete, or act on through several
    tools, unless their names say configuration (settings, schemes, permissions...)."""
    kinds: dict[str, list[str]] = {}
    for p in planned:
        if p.intent.entity:
            kinds.setdefault(p.intent.entity, []).append(p.intent.kind)
    core = set()
    for name, found in kinds.items():
        if set(words(name)) & _SIDE_WORDS:
            continue
        if set(found) & {"create", "send", "list", "search", "delete", "link", "unlink"} or len(found) >= 3:
            core.add(name)
    return core
