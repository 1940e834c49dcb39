"""A list's ``show<State>`` flags (Google Tasks' ``showCompleted``, ``showDeleted``), read from the spec when a
service is compiled: rows in that state or with that flag are left out unless the flag is true, and the flag's
documented default ("The default is True.") is the schema's, so leaving it out keeps the product's behaviour."""

from __future__ import annotations

import re
from typing import Any

from generator.query.evaluate import squash
from generator.spec import Binding, EntityDef, ServiceSpec, ToolDef

_SHOW = re.compile(r"^(?:show|include)_?([A-Za-z]+)$")
_DEFAULT = re.compile(r"(?i)\bthe default is (true|false)\b")


def _target(entity: EntityDef, word: str) -> tuple[str, Any] | None:
    """(column, value) that marks rows the flag names: a boolean column (``deleted``), or a state value
    (``completed`` of ``status``)."""
    wanted = squash(word)
    for f in entity.fields:
        if f.type == "boolean" and squash(f.name) in (wanted, wanted.removesuffix("d"), wanted + "d"):
            return f.name, True
    for f in entity.fields:
        if f.name == "status" or entity.state is not None and f.name == entity.state.field:
            values = entity.state.values if entity.state is not None and f.name == entity.state.field else (f.enum or [])
            # "Status of the task. This is either "needsAction" or "completed"."
            values = [*values, *re.findall(r"[\"'`](\w+)[\"'`]", str(getattr(f, "description", "") or ""))]
            for value in values:
                if squash(str(value)) == wanted:
                    return f.name, value
    return None


def _flagged(spec: ServiceSpec, tool: ToolDef) -> ToolDef:
    if tool.effect != "read" or tool.behaviour.kind not in ("list", "search"):
        return tool
    entity = next((e for e in spec.entities if e.name == tool.behaviour.entity), None)
    properties = tool.parameters.get("properties", {})
    changed: dict[str, Binding] = {}
    schemas: dict[str, Any] = {}
    for param, schema in properties.items():
        m = _SHOW.match(param)
        binding = tool.bindings.get(param)
        if entity is None or m is None or not isinstance(schema, dict) or schema.get("type") != "boolean" or \
                binding is not None and binding.role != "option":
            continue
        target = _target(entity, m.group(1))
        if target is None:
            continue
        changed[param] = Binding(role="filter", column=target[0], op="include", value=target[1])
        default = _DEFAULT.search(str(schema.get("description") or ""))
        if default is not None and "default" not in schema:
            schemas[param] = {**schema, "default": default.group(1).lower() == "true"}
    if not changed:
        return tool
    parameters = {**tool.parameters, "properties": {**properties, **schemas}}
    return tool.model_copy(update={"bindings": {**tool.bindings, **changed}, "parameters": parameters})


def with_flags(spec: ServiceSpec) -> ServiceSpec:
    """``spec`` with its lists' ``show`` flags choosing rows (the same spec when none has one)."""
    tools = [_flagged(spec, t) for t in spec.tools]
    if all(a is b for a, b in zip(tools, spec.tools)):
        return spec
    return spec.model_copy(update={"tools": tools})
