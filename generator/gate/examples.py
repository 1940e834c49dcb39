"""Example calls for the gate's contract tests: valid arguments built from a tool's spec and the seeded state.

Keys come from seeded rows (a transition picks a row in a state it may leave), parents from the
row's own references, written values from the value generator (by semantic type, pattern, enum...).
Every example is validated against the tool's input schema before it is used.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from mcp_services.kernel.world import World

from generator.compiler.runtime import ServiceRuntime
from generator.compiler.validation import make_validator, problems
from generator.query.dialects import example_query
from generator.spec import ToolDef
from generator.values import ValueMaker

Rows = dict[str, list[dict[str, Any]]]  # entity -> rows

MISSING = {"string": "zz_missing_0000", "integer": 987_654_321}


@dataclass
class Example:
    arguments: dict[str, Any]
    row: dict[str, Any] | None  # the row a keyed call acts on


class NoExample(Exception):
    """No valid example call could be built; the message says why."""


def rows_by_entity(runtime: ServiceRuntime, dump: dict[str, dict[str, dict[str, Any]]]) -> Rows:
    return {name: list(dump.get(e.table, {}).values()) for name, e in runtime.entities.items()}


def valid_example(runtime: ServiceRuntime, tool: ToolDef, rows: Rows, world: World) -> Example:
    maker = ValueMaker(world, random.Random(f"gate:{runtime.spec.name}:{tool.name}"))
    validator = make_validator(tool.parameters)
    last: list[str] = []
    for attempt in range(4):
        example = _build(runtime, tool, rows, maker, prefer_examples=attempt % 2 == 0, optional=attempt < 2)
        last = problems(validator, example.arguments)
        if not last:
            return example
    raise NoExample(f"no valid example call could be built ({'; '.join(last)[:200]})")


def _target_row(runtime: ServiceRuntime, tool: ToolDef, rows: Rows) -> dict[str, Any] | None:
    behaviour = tool.behaviour
    entity = behaviour.entity
    if entity is None or behaviour.kind not in ("get", "update", "delete", "transition"):
        return None
    if behaviour.via:
        via = next((b.entity for b in tool.bindings.values() if b.role == "via"), None)
        holders = [r for r in rows.get(via or "", []) if r.get(behaviour.via) is not None]
        return holders[0] if holders else None
    candidates = _first_per_key(tool, rows.get(entity, []))
    transition = behaviour.transition
    if transition is not None:
        def allowed(row: dict[str, Any]) -> bool:
            value = row.get(transition.field)
            if isinstance(transition.to, bool) and value is None:
                value = False
            if value == transition.to:
                return False
            return transition.allowed_from is None or value in transition.allowed_from

        candidates = [r for r in candidates if allowed(r)]
    parent_columns = [b.column for b in tool.bindings.values() if b.role == "parent" and b.column]
    with_parents = [r for r in candidates if all(r.get(c) is not None for c in parent_columns)]
    candidates = with_parents or candidates
    if behaviour.current and candidates:
        return candidates[0]
    return candidates[len(candidates) // 2] if candidates else None


def _build(runtime: ServiceRuntime, tool: ToolDef, rows: Rows, maker: ValueMaker, *, prefer_examples: bool,
           optional: bool) -> Example:
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    behaviour = tool.behaviour
    entity = behaviour.entity
    row = _target_row(runtime, tool, rows)
    if row is None and behaviour.kind in ("get", "update", "delete", "transition"):
        if behaviour.via:
            raise NoExample(f"no seeded row reaches a {entity} through {behaviour.via}")
        raise NoExample(f"no seeded {entity} this call can act on")
    parents = _parents(runtime, tool, rows, row)
    if behaviour.kind == "link" and not any(b.role == "member" for b in tool.bindings.values()):
        _unjoined(runtime, tool, rows, parents)
    args: dict[str, Any] = {}
    conditions: dict[str, Any] = {}  # arguments a binding's ``when`` needs (Box's type: file)
    for param, schema in properties.items():
        binding = tool.bindings.get(param)
        role = binding.role if binding else None
        value: Any = _UNSET
        if binding is not None and role == "key" and row is not None:
            value = row.get(binding.column or "id")
        elif binding is not None and role in ("parent", "via"):
            source = parents.get(binding.entity or "") if role == "parent" else row
            if source is not None:
                value = source.get(binding.lookup or "id")
                for step in reversed(binding.path):  # item: {"id": ...}
                    value = {step: _fit(value, (schema.get("properties") or {}).get(step, {}))}
                for other, wanted in binding.when.items():
                    conditions[other] = wanted
        elif binding is not None and role == "filter" and row is not None and binding.op == "eq":
            value = row.get(binding.column or "")
        elif binding is not None and role == "member":
            value = _member(runtime, tool, rows, parents, binding)
            if value is _UNSET and binding.entity is None:  # members named freely (no rows of their kind)
                value = maker.value(schema, param, prefer_examples=prefer_examples)
        elif binding is not None and role == "field":
            if param in required or (optional and _simple(schema)):
                value = _field_value(runtime, entity or "", binding.column or param, schema, param, rows, maker, prefer_examples,
                                     row)
                value = _within_owner(runtime, entity or "", binding.column or param, value, parents, rows)
        elif binding is None and behaviour.kind == "simulated" and _referenced_row(runtime, param, entity, rows):
            value = _referenced_row(runtime, param, entity, rows)["id"]  # a simulated tool refuses unknown ids
        elif param in required:
            if role == "filter" and entity and rows.get(entity):
                value = rows[entity][0].get(binding.column or "") if binding else _UNSET
            elif role == "search" and entity and rows.get(entity):
                value = _search_word(runtime, entity, rows[entity][0])
            elif role == "query" and binding is not None and example_query(binding.dialect) is not None:
                value = example_query(binding.dialect)
            elif role == "limit":
                value = 10
            elif role in ("page", "offset"):
                value = 1 if role == "page" else 0
            elif role == "cursor":
                value = "0"
            if value is _UNSET or value is None:
                value = maker.value(schema, param, prefer_examples=prefer_examples)
        if value is _UNSET or (value is None and param not in required):
            continue
        value = _fit(value, schema)
        if role in ("parent", "via") and binding is not None and binding.path:
            value = {**maker.value(schema, param, prefer_examples=prefer_examples), **value} if isinstance(value, dict) else value
        if role not in ("key", "parent", "via") and not _fits(schema, value):
            if param not in required:
                continue  # a stored value this parameter's schema does not allow: leave it out
            value = maker.value(schema, param, prefer_examples=True)
        args[param] = value
    args.update({k: v for k, v in conditions.items() if k in properties})
    if behaviour.kind == "update" and not any(
        b.role == "field" and p in args for p, b in tool.bindings.items()
    ):  # an update must change something: pass the first writable field
        for param, binding in tool.bindings.items():
            if binding.role == "field" and param in properties:
                args[param] = _fit(_field_value(runtime, entity or "", binding.column or param, properties[param], param,
                                                rows, maker, prefer_examples, row), properties[param])
                break
    if behaviour.kind in ("create", "send") or behaviour.planned in ("create", "send"):
        _amount_within_what_is_left(runtime, tool, args, rows)
    return Example(args, row)


def _amount_within_what_is_left(runtime: ServiceRuntime, tool: ToolDef, args: dict[str, Any], rows: Rows) -> None:
    """A new record's amount (a number or a money object, ``amount_money``) above what is left of the rows it is
    a share of (a refund of more than is left of its payment) becomes a share of what is left."""
    from generator.compiler.behaviours import AMOUNT, amount_columns, amount_left, amount_of, with_amount

    entity = tool.behaviour.entity or ""
    definition = runtime.entities.get(entity)
    if definition is None or not amount_columns(definition):
        return
    columns: dict[str, str] = {}  # column -> the parameter writing it (by its binding, else by its name)
    for param in args:
        binding = tool.bindings.get(param)
        column = binding.column if binding is not None and binding.role in ("field", "parent") else \
            (param if binding is None and definition.field(param) is not None else None)
        if column:
            columns.setdefault(column, param)
    values = {column: args[param] for column, param in columns.items()}

    def parent_row(f: Any) -> dict[str, Any] | None:
        return next((r for r in rows.get(f.ref, []) if canonical(r.get("id")) == canonical(values[f.name])), None)

    def siblings(f: Any) -> list[dict[str, Any]]:
        return [r for r in rows.get(entity, []) if canonical(r.get(f.name)) == canonical(values[f.name])]

    found = amount_left(definition, values, runtime.entities, parent_row, siblings)
    passed = amount_of(values, amount_columns(definition))
    if found is None or passed is None or passed[1] <= found[0] or found[0] <= 0:
        return
    column, _ = passed
    share = found[0] / 4
    kind = column.type if column.type != "object" else ((column.json_schema or {}).get("properties", {}).get(AMOUNT, {}).get("type"))
    amount = max(1, int(share)) if kind == "integer" and found[0] >= 1 else round(max(0.01, share), 2)
    args[columns[column.name]] = with_amount(column, args[columns[column.name]], amount)


_UNSET: Any = object()


def _within_owner(runtime: ServiceRuntime, entity: str, column: str, value: Any, parents: dict[str, dict[str, Any]],
                  rows: Rows) -> Any:
    """An amount a row under an owner can take: a share of what is left of the owner's (a partial refund)."""
    from generator.compiler.behaviours import AMOUNT, amount_owner

    definition = runtime.entities.get(entity)
    if column != AMOUNT or definition is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    owner = amount_owner(definition, {f.name: parents[f.ref]["id"] for f in definition.fields if f.ref in parents},
                         runtime.entities)
    if owner is None:
        return value
    parent = parents.get(owner.ref or "")
    total = parent.get(AMOUNT) if parent is not None else None
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        return value
    taken = sum(r.get(AMOUNT) or 0 for r in rows.get(entity, []) if r.get(owner.name) == parent.get("id"))  # type: ignore[union-attr]
    left = total - taken
    if left <= 0:
        return value
    share = left / 4
    return max(1, int(share)) if isinstance(value, int) else round(max(0.01, share), 2)


def _unjoined(runtime: ServiceRuntime, tool: ToolDef, rows: Rows, parents: dict[str, dict[str, Any]]) -> None:
    """A join acts on a row the current user (the first of the members' kind) is not in yet."""
    entity = runtime.entities.get(tool.behaviour.entity or "")
    owner = entity.owner_field if entity is not None else None
    member = next((f for f in entity.fields if f.ref and f is not owner), None) if entity is not None else None
    if entity is None or owner is None or owner.ref is None or member is None or not rows.get(member.ref or ""):
        return
    me = rows[member.ref or ""][0].get("id")
    joined = {r.get(owner.name) for r in rows.get(entity.name, []) if r.get(member.name) == me}
    free = [r for r in rows.get(owner.ref, []) if r.get("id") not in joined]
    if free:
        parents[owner.ref] = free[0]


def _member(runtime: ServiceRuntime, tool: ToolDef, rows: Rows, parents: dict[str, dict[str, Any]], binding: Any) -> Any:
    """A member to add (one not yet in the parent row) or to remove (one that is)."""
    entity = runtime.entities.get(tool.behaviour.entity or "")
    owner = entity.owner_field if entity is not None else None
    if entity is None or owner is None or owner.ref is None or binding.entity is None:
        return _UNSET
    parent = parents.get(owner.ref)
    column = binding.column or ""
    linked = [r.get(column) for r in rows.get(entity.name, []) if parent is not None and r.get(owner.name) == parent.get("id")]
    pool = [r.get("id") for r in rows.get(binding.entity, [])]
    if tool.behaviour.kind == "unlink":
        return linked[-1] if linked else _UNSET
    fresh = [m for m in pool if m not in linked]
    return fresh[-1] if fresh else _UNSET


def _referenced_row(runtime: ServiceRuntime, param: str, entity: str | None, rows: Rows) -> dict[str, Any] | None:
    from generator.compiler.simulated import reference_entity

    target = reference_entity(param, entity, runtime.entities)
    pool = rows.get(target or "", [])
    return pool[0] if pool else None


def _first_per_key(tool: ToolDef, candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows a natural-key lookup can reach: the first one (in insertion order) of each key value."""
    columns = [b.column for b in tool.bindings.values() if b.role == "key" and b.column and b.column != "id"]
    if not columns:
        return candidates
    seen: set[str] = set()
    reachable = []
    for row in candidates:
        key = canonical([row.get(c) for c in columns])
        if key not in seen:
            seen.add(key)
            reachable.append(row)
    return reachable


def _parents(runtime: ServiceRuntime, tool: ToolDef, rows: Rows, row: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """For each parent entity a call names, the row to name: the target row's own, else a row with children."""
    out: dict[str, dict[str, Any]] = {}
    entity = tool.behaviour.entity
    for binding in tool.bindings.values():
        if binding.role != "parent" or not binding.entity or binding.entity in out:
            continue
        pool = rows.get(binding.entity, [])
        chosen = None
        if binding.column and entity:
            own = row if row is not None else next((r for r in rows.get(entity, []) if r.get(binding.column) is not None), None)
            if own is not None and own.get(binding.column) is not None:
                chosen = next((p for p in pool if p.get("id") == own.get(binding.column)), None)
        if chosen is None and row is not None:
            # an ancestor further up: reach it through the parent rows already chosen
            for other in out.values():
                for column, value in other.items():
                    if column.endswith("_id") and value is not None:
                        chosen = next((p for p in pool if p.get("id") == value), None) or chosen
        if chosen is None and pool:
            chosen = pool[0]
        if chosen is not None:
            out[binding.entity] = chosen
    return out


def _field_value(runtime: ServiceRuntime, entity: str, column: str, schema: dict[str, Any], param: str, rows: Rows,
                 maker: ValueMaker, prefer_examples: bool, row: dict[str, Any] | None = None) -> Any:
    """A value to write to ``column``; for a reference, a stored row of its kind, one the acted-on ``row`` does not
    already point at when there is one (an update that moves an account to another institution changes it)."""
    definition = runtime.entities.get(entity)
    field = definition.field(column) if definition else None
    if field is not None and field.ref and rows.get(field.ref):
        current = canonical(row.get(column)) if row is not None else None
        other = next((r for r in rows[field.ref] if canonical(r["id"]) != current), rows[field.ref][0])
        return other["id"]
    if definition is not None and definition.state and column == definition.state.field:
        values = [v for v in (schema.get("enum") or definition.state.values)]
        if values:
            return values[0]
    return maker.value(schema, param, semantic=field.semantic if field else None, entity=entity,
                       prefer_examples=prefer_examples)


def _search_word(runtime: ServiceRuntime, entity: str, row: dict[str, Any]) -> str:
    definition = runtime.entities[entity]
    for f in definition.fields:
        value = row.get(f.name)
        if f.type == "string" and not f.ref and isinstance(value, str) and value.strip():
            return value.split()[0][:20]
    return str(row.get("id"))


def _simple(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind in ("string", "integer", "number", "boolean") or bool(schema.get("enum"))


def _fit(value: Any, schema: dict[str, Any]) -> Any:
    """A stored value in the type the parameter declares (an integer id passed as a string, say)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if kind == "integer" and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    if kind == "array" and not isinstance(value, list) and value is not None:
        return [value]
    return value


def _fits(schema: dict[str, Any], value: Any) -> bool:
    return make_validator(schema).is_valid(value)


def missing_value(schema: dict[str, Any]) -> Any:
    """An id no seeded row has, in the parameter's type."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return MISSING["integer"] if kind == "integer" else MISSING["string"]


def wrong_type(schema: dict[str, Any]) -> Any:
    """A value of the wrong JSON type for ``schema`` (None when every type is allowed)."""
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind} if kind else set()
    if not kinds or schema.get("anyOf") or schema.get("oneOf"):
        return None
    if "object" not in kinds:
        return {"unexpected": "object"}
    if "array" not in kinds:
        return ["unexpected"]
    return None


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def holds(stored: Any, written: Any) -> bool:
    """Whether a stored value shows what was written: an object holds every key written (an update merges
    into it and keeps the others), anything else is equal."""
    if isinstance(written, dict) and isinstance(stored, dict):
        return all(holds(stored.get(k), v) for k, v in written.items())
    return canonical(stored) == canonical(written)
