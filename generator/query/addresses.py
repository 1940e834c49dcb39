"""The ways a product lets a row be named besides its id, read from the spec when a service is compiled:

- an id parameter documented as taking another value: ``issueIdOrKey`` ("The ID or key of the issue"), Postmark's
  ``templateIdOrAlias`` ("The 'TemplateID' or 'Alias' value"), Trello's ``idMember`` ("idMember or username"):
  the column so named becomes one of the binding's ``alternates``;
- ``me`` where the tool's documentation offers it for a person (Trello: "If you specify 'me' as the username"):
  an alias of the signed-in user.
"""

from __future__ import annotations

import re
from typing import Any

from generator.query.evaluate import squash
from generator.spec import Binding, EntityDef, ServiceSpec, ToolDef

_ID_OR = re.compile(r"(?i)id_?or_?([a-z]+)$")
_OR_WORD = re.compile(r"""(?i)\b(?:\w*id|id\w*)\b['"`]?\s+or\s+(?:the\s+|its\s+|a\s+)?['"`]?([A-Za-z_]+)""")
_ME = re.compile(r"""['"`]me['"`]""")
_ROLES = ("key", "parent", "via")


def _column(entity: EntityDef, word: str) -> str | None:
    """The entity's column that ``word`` names (``key``, ``Alias``, ``username``), never its id."""
    wanted = {squash(word), squash(entity.name + word)}
    return next((f.name for f in entity.fields if squash(f.name) in wanted and f.stored and f.name != "id"), None)


def _alternates(entity: EntityDef, param: str, schema: dict[str, Any]) -> list[str]:
    words = [m.group(1)] if (m := _ID_OR.search(param)) else []
    words += _OR_WORD.findall(str(schema.get("description") or ""))
    found = [c for w in words if (c := _column(entity, w)) is not None]
    return list(dict.fromkeys(found))


def _addressed(spec: ServiceSpec, tool: ToolDef) -> ToolDef:
    entities = {e.name: e for e in spec.entities}
    properties = tool.parameters.get("properties", {})
    changed: dict[str, Binding] = {}
    for param, binding in tool.bindings.items():
        if binding.role not in _ROLES:
            continue
        name = tool.behaviour.entity if binding.role == "key" else binding.entity
        entity = entities.get(name or "")
        if entity is None or (binding.role == "key" and (binding.column or "id") != "id") or \
                (binding.role != "key" and (binding.lookup or "id") != "id"):
            continue
        schema = properties.get(param) if isinstance(properties.get(param), dict) else {}
        alternates = [c for c in _alternates(entity, param, schema) if c not in binding.alternates]
        aliases = ["me"] if entity.person and "me" not in binding.aliases and (
            _ME.search(tool.description) or _ME.search(str(schema.get("description") or ""))) else []
        if alternates or aliases:
            changed[param] = binding.model_copy(update={"alternates": [*binding.alternates, *alternates],
                                                        "aliases": [*binding.aliases, *aliases]})
    return tool.model_copy(update={"bindings": {**tool.bindings, **changed}}) if changed else tool


def with_addresses(spec: ServiceSpec) -> ServiceSpec:
    """``spec`` with the other names its products accept for rows (the same spec when there are none)."""
    tools = [_addressed(spec, t) for t in spec.tools]
    if all(a is b for a, b in zip(tools, spec.tools)):
        return spec
    return spec.model_copy(update={"tools": tools})
