"""What some parameters mean beyond their names: the members of a membership change, the object holding
the row a create goes under (Box's ``item``), and the flags that leave rows out of a list."""

from __future__ import annotations

from typing import Any

from generator.naming import words
from generator.planner.intents import Intent, PreparedTool
from generator.planner.lexicon import squash
from generator.spec import Binding, EntityDef

def member_column(intent: Intent, tool: PreparedTool) -> str:
    """The link row's column for its member: its entity's id (``tag_id``), an email when the tool names members
    by email, else a user id."""
    if intent.member_entity:
        return f"{intent.member_entity}_id"
    for param in intent.members:
        if "email" in squash(param) or tool.properties.get(param, {}).get("format") == "email":
            return "email"
    return "user_id"


#: Object arguments that hold the row something is created under, whatever its kind (Box's ``item``).
GENERIC_HOLDERS = frozenset({"item", "parent", "target", "object", "resource", "entity", "source"})


#: Flags of a list that leave rows out by what they are (``exclude_archived``) or, off by default, keep them
#: in (``include_disabled``, ``includeSpamTrash``, ``showDeleted``).
_EXCLUDING, _INCLUDING = frozenset({"exclude", "hide", "skip", "omit"}), frozenset({"include", "show", "with"})


def flag_binding(param: str, schema: dict[str, Any], entity: EntityDef) -> Binding | None:
    kind = schema.get("type")
    if (next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind) != "boolean":
        return None
    parts = words(param)
    if len(parts) < 2 or parts[0] not in _EXCLUDING | _INCLUDING:
        return None
    op = "exclude" if parts[0] in _EXCLUDING else "include"
    for word in parts[1:]:
        stem = _flag_stem(word)
        for f in entity.fields:  # "trashed", "is_archived": a flag that is the word itself ("neverMarkSpam" is not)
            named = [w for w in words(f.name) if w != "is"]
            if f.type == "boolean" and len(named) == 1 and _flag_stem(named[0]) == stem:
                return Binding(role="filter", column=f.name, op=op, value=True)  # type: ignore[arg-type]
        if entity.state is not None:
            for value in entity.state.values:
                if _flag_stem(value) == stem:
                    return Binding(role="filter", column=entity.state.field, op=op, value=value)  # type: ignore[arg-type]
    return None


def _flag_stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ed", "d", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word
