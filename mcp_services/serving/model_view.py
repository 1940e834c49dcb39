"""A model's view of a tool: what an LLM reads, derived from the tool's MCP JSON schemas.

The MCP wire keeps each tool's full schemas (titles, semantic types, formats, patterns, length
limits): clients and validators rely on them. A model reads its tool list on every turn, and there
most of that is noise repeated on every field: one email field's regex and length limits cost as
much as its description. The model view keeps what decides a correct call and drops the rest:

- parameters: a JSON schema of types, enums, formats, required names and one short description per
  parameter; an optional value is its type (not ``anyOf`` with null) and ``$ref`` is inlined; titles,
  semantic types (``x-*``), patterns, length and numeric limits and defaults are left out;
- results: their shape, one line of field names and nesting such as ``{items: [{id, name}], total}``.

Everything is derived from the schemas alone, never per service, so generated services get the same
view. The arguments a tool accepts do not change: the server still validates against the full schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["model_description", "model_parameters", "model_summary", "model_tool", "result_shape", "tool_card"]

#: What a parameter's schema keeps: what decides a correct call. Titles, semantic types (``x-*``),
#: patterns, length and numeric limits and defaults stay on the wire, where the server enforces them.
_SCHEMA_KEYS = ("type", "description", "enum", "const", "format", "properties", "required", "items",
                "additionalProperties", "anyOf", "oneOf", "allOf")
_PARAMETER_CHARS = 200  # a parameter's description is cut at a sentence end within this many characters
_TOOL_CHARS = 800  # a tool's description likewise
_MAX_DEPTH = 6  # deeper (or recursive) parts of a schema are shown as their bare type
_SUMMARY_CHARS = 160  # a tool's one-line summary (discover mode's list_tools)
# A sentence ends at . ! or ? before a space, except in "e.g." and "i.e.".
_SENTENCE_END = re.compile(r"(?<![eE]\.g\.)(?<![iI]\.e\.)(?<=[.!?])\s")


def _short(text: Any, limit: int) -> str:
    """``text`` on one line, cut at the last sentence end within ``limit`` characters (else at a word)."""
    flat = " ".join(str(text or "").split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit + 1]
    ends = [m.start() for m in _SENTENCE_END.finditer(head)]
    if ends:
        return head[: ends[-1]]
    cut = head.rfind(" ", 0, limit)
    return (head[:cut] if cut > 0 else flat[:limit]).rstrip(",;:") + "..."


def model_description(description: str) -> str:
    """A tool's description as a model reads it: on one line, bounded in length."""
    return _short(description, _TOOL_CHARS)


def model_summary(description: str) -> str:
    """A tool's first sentence: what a list of tools says of each (its description says the rest)."""
    flat = _short(description, _TOOL_CHARS)
    end = _SENTENCE_END.search(flat)
    return _short(flat[: end.start()] if end else flat, _SUMMARY_CHARS)


def _resolve(node: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
    """``node`` with a local ``$ref`` replaced by its definition (keys beside the ``$ref`` win)."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(("#/$defs/", "#/definitions/")):
        return node, None
    name = ref.rsplit("/", 1)[1]
    target = defs.get(name)
    if not isinstance(target, Mapping):
        return node, None
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}, name


def _without_null(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """An optional value as its type: ``anyOf``/``oneOf`` without the null option, ``type`` without "null"."""
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if not isinstance(options, list):
            continue
        real = [o for o in options if o != {"type": "null"}]
        if len(real) == len(options):
            return node
        rest = {k: v for k, v in node.items() if k != key}
        if len(real) == 1 and isinstance(real[0], Mapping):
            # The outer keys (description) describe the value: they win over the option's.
            return {**real[0], **rest}
        return {**rest, key: real}
    node_type = node.get("type")
    if isinstance(node_type, list) and "null" in node_type:
        kept = [t for t in node_type if t != "null"]
        return {**node, "type": kept[0] if len(kept) == 1 else kept}
    return node


def _parameter(node: Any, defs: Mapping[str, Any], depth: int, stack: tuple[str, ...], described: bool) -> Any:
    """One compacted schema node; ``described``: an enclosing node already says what this value is."""
    if not isinstance(node, Mapping):
        return node
    node, ref = _resolve(node, defs)
    if ref in stack or depth > _MAX_DEPTH:
        node = {key: node[key] for key in ("type", "description") if key in node}
    if ref is not None:
        stack = (*stack, ref)
    node = _without_null(node)
    inner = described or bool(node.get("description"))  # one description per value: the outermost
    out: dict[str, Any] = {}
    for key in _SCHEMA_KEYS:
        value = node.get(key)
        if value is None:
            continue
        if key == "description":
            text = _short(value, _PARAMETER_CHARS)
            if text and not described:
                out[key] = text
        elif key == "properties" and isinstance(value, Mapping):
            # Keys of "properties" are parameter names, never keywords; each property has its own description.
            out[key] = {name: _parameter(schema, defs, depth + 1, stack, False) for name, schema in value.items()}
        elif key == "required":
            if value:
                out[key] = list(value)
        elif key == "additionalProperties":
            if isinstance(value, Mapping) and value:  # a map's value type; false (no extra keys) is the server's check
                out[key] = _parameter(value, defs, depth + 1, stack, inner)
        elif key == "items":
            out[key] = _parameter(value, defs, depth + 1, stack, inner)
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [_parameter(option, defs, depth + 1, stack, inner) for option in value]
        else:
            out[key] = value
    return out


def model_parameters(input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The compact JSON schema of a tool's arguments (see the module docstring)."""
    defs = {**input_schema.get("definitions", {}), **input_schema.get("$defs", {})}
    compact: dict[str, Any] = _parameter(input_schema, defs, 0, (), False)
    compact.setdefault("type", "object")
    if compact["type"] == "object":
        compact.setdefault("properties", {})
    return compact


def model_tool(name: str, description: str, input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI ``tools`` entry a model is given for a tool."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": model_description(description),
            "parameters": model_parameters(input_schema),
        },
    }


def _shape(node: Any, defs: Mapping[str, Any], depth: int, stack: tuple[str, ...]) -> str:
    """The structure of a value: objects list their fields, arrays their item; a scalar is ``""``."""
    if not isinstance(node, Mapping):
        return ""
    node, ref = _resolve(node, defs)
    if ref in stack or depth > _MAX_DEPTH:
        return ""
    if ref is not None:
        stack = (*stack, ref)
    node = _without_null(node)
    options = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
    if isinstance(options, list):
        shapes = [shape for shape in (_shape(o, defs, depth + 1, stack) for o in options) if shape]
        return " | ".join(shapes)
    properties = node.get("properties")
    if isinstance(properties, Mapping) and properties:
        required = set(node.get("required") or ())
        fields = []
        for name, schema in properties.items():
            inner = _shape(schema, defs, depth + 1, stack)
            fields.append(f"{name}{'' if name in required else '?'}{': ' + inner if inner else ''}")
        return "{" + ", ".join(fields) + "}"
    if node.get("type") == "array" or "items" in node:
        return f"[{_shape(node.get('items'), defs, depth + 1, stack) or _scalar_type(node.get('items'))}]"
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping) and extra:
        return "{string: " + (_shape(extra, defs, depth + 1, stack) or _scalar_type(extra)) + "}"
    return ""


def _scalar_type(node: Any) -> str:
    kind = node.get("type") if isinstance(node, Mapping) else None
    if isinstance(node, Mapping) and kind == "string" and isinstance(node.get("format"), str):
        return str(node["format"])  # "email", "date", "date-time", "uri": read as what they are
    return kind if isinstance(kind, str) else "any"


def result_shape(data_schema: Mapping[str, Any]) -> str:
    """The shape of a tool's result ``data`` on one line: field names and nesting, no types.

    ``{items: [{id, name, tags: [string]}], total, next_cursor}``; ``?`` marks a field a result may
    leave out. A model sees the values (and their types) in every result it reads; what it needs
    beforehand is which fields exist and where they sit.
    """
    defs = {**data_schema.get("definitions", {}), **data_schema.get("$defs", {})}
    return _shape(data_schema, defs, 0, ()) or _scalar_type(data_schema)


def tool_card(
    service: str,
    name: str,
    effect: str | None,
    description: str,
    input_schema: Mapping[str, Any],
    data_schema: Mapping[str, Any],
) -> dict[str, Any]:
    """A tool as discover mode's ``describe_tool`` shows it: its arguments and the shape of its result."""
    return {
        "service": service,
        "name": name,
        "effect": effect,
        "description": model_description(description),
        "input_schema": model_parameters(input_schema),
        "returns": result_shape(data_schema),
    }
