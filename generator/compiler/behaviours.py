"""What each behaviour does to the state, given a tool's bindings and the call's arguments.

Every executor runs inside the kernel's transaction for the call: raising ``ToolError`` rolls the
whole call back. Rules enforced here are the ones a hand-written service would keep: parents and
referenced rows must exist, a transition must start from an allowed state, a read changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.entity import quote
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import Query, like_pattern

from generator.compiler.queries import answer, parsed_query
from generator.compiler.runtime import Row, ServiceRuntime
from generator.spec import Binding, ToolDef

DEFAULT_LIMIT = 20
MAX_LIMIT = 100

Executor = Callable[[ServiceRuntime, ToolDef, ToolContext, dict[str, Any]], Any]


# -- finding rows ----------------------------------------------------------------------------------


_ABSENT: Any = object()


def argument(args: dict[str, Any], param: str, binding: Binding) -> Any:
    """The value a binding reads from the call: the argument, or the value at its ``path`` inside it;
    ``_ABSENT`` when it is missing, null, or another argument rules the binding out (``when``)."""
    if args.get(param) is None:
        return _ABSENT
    for other, wanted in binding.when.items():
        if other in args and args[other] != wanted:
            return _ABSENT
    value = args[param]
    for step in binding.path:
        if not isinstance(value, dict) or value.get(step) is None:
            return _ABSENT
        value = value[step]
    return value


def current_row(rt: ServiceRuntime, ctx: ToolContext, entity: str) -> Row | None:
    """The entity's current row: the first one (for people, the signed-in user the seed puts first)."""
    record = rt.query(ctx, entity).first()
    return None if record is None else rt.records[entity].dump(record)


def _resolved(rt: ServiceRuntime, ctx: ToolContext, entity: str, binding: Binding, value: Any) -> Any:
    """``value``, or the current row's id when it is one of the binding's aliases (``me``, ``primary``), or the id of
    the row one of its ``alternates`` names (an issue by its key, a template by its alias)."""
    if binding.aliases and str(value) in binding.aliases:
        row = current_row(rt, ctx, entity)
        if row is not None:
            return row["id"]
    if binding.alternates and entity in rt.entities and isinstance(value, (str, int)) and not isinstance(value, bool) \
            and (not rt.comparable(entity, "id", value) or rt.find(ctx, entity, {"id": value}) is None):
        for column in binding.alternates:
            if column in rt.columns(entity):
                row = rt.find(ctx, entity, {column: value})
                if row is not None:
                    return row["id"]
    return value


def _parents(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Check every parent the call names exists; returns {fk column: parent id} for this entity."""
    by_entity: dict[str, list[tuple[str, Binding, Any]]] = {}
    for param, binding in tool.bindings.items():
        if binding.role == "parent" and binding.entity:
            value = argument(args, param, binding)
            if value is not _ABSENT:
                by_entity.setdefault(binding.entity, []).append((param, binding, _resolved(rt, ctx, binding.entity, binding, value)))
    links: dict[str, Any] = {}
    for entity, bound in by_entity.items():
        conditions = {(b.lookup or "id"): v for _, b, v in bound}
        shown = ", ".join(f"{p} {v!r}" for p, _, v in bound)
        row = rt.require(ctx, entity, conditions, shown)
        for _, binding, _ in bound:
            if binding.column:
                links[binding.column] = row["id"]
    return links


def _target(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    """The one row a get/update/delete/transition acts on."""
    behaviour = tool.behaviour
    entity = behaviour.entity
    assert entity is not None
    definition = rt.entity(entity)
    links = _parents(rt, tool, ctx, args)
    if behaviour.via:
        via = [(p, b) for p, b in tool.bindings.items() if b.role == "via" and p in args]
        if not via:
            raise ToolError.invalid_argument(f"{tool.name} needs the id of the row that holds the {rt.noun(entity)}.")
        source = via[0][1].entity or ""
        shown = ", ".join(f"{p} {args[p]!r}" for p, _ in via)
        holder = rt.require(ctx, source, {(b.lookup or "id"): _resolved(rt, ctx, source, b, args[p]) for p, b in via}, shown)
        key = holder.get(behaviour.via)
        if key is None:
            raise ToolError("not_found", f"That {rt.noun(source)} has no {rt.noun(entity)}.")
        return rt.require(ctx, entity, {"id": key})
    conditions: dict[str, Any] = dict(links)
    shown_parts: list[str] = []
    for param, binding in tool.bindings.items():
        if param not in args or args[param] is None:
            continue
        if binding.role == "key":
            value = args[param]
            if isinstance(value, list) and len(value) == 1:
                value = value[0]  # an id passed as a one-item list (some specs type path ids as arrays)
            conditions[binding.column or "id"] = _resolved(rt, ctx, entity, binding, value)
            shown_parts.append(f"{param} {args[param]!r}")
        elif binding.role == "filter" and binding.op == "eq" and binding.column:
            conditions[binding.column] = args[param]
            shown_parts.append(f"{param} {args[param]!r}")
    if behaviour.current or definition.singleton or (definition.per_parent and not shown_parts and not links):
        row = _first(rt, ctx, entity, conditions)
        if row is None:
            raise ToolError("not_found", f"There is no {rt.noun(entity)} here yet.")
        return row
    if not conditions:
        raise ToolError.invalid_argument(f"{tool.name} needs the id of the {rt.noun(entity)} to act on.")
    return rt.require(ctx, entity, conditions, ", ".join(shown_parts) or None)


def _first(rt: ServiceRuntime, ctx: ToolContext, entity: str, conditions: dict[str, Any]) -> Row | None:
    if conditions:
        return rt.find(ctx, entity, conditions)
    record = rt.query(ctx, entity).first()
    return None if record is None else rt.records[entity].dump(record)


def _values(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Column values the call writes (``field`` bindings); referenced rows must exist."""
    entity = tool.behaviour.entity or ""
    definition = rt.entity(entity)
    values: dict[str, Any] = {}
    for param, binding in tool.bindings.items():
        if binding.role != "field" or param not in args or not binding.column:
            continue
        value = args[param]
        field = definition.field(binding.column)
        if field is not None and field.ref and value is not None and field.ref in rt.entities:
            rt.require(ctx, field.ref, {"id": value}, f"{param} {value!r}")
        values[binding.column] = value
    return values


# -- behaviours ------------------------------------------------------------------------------------


def run_create(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    entity = tool.behaviour.entity or ""
    definition = rt.entity(entity)
    values = _values(rt, tool, ctx, args)
    values.update(_parents(rt, tool, ctx, args))
    for param, binding in tool.bindings.items():
        if binding.role == "key" and args.get(param) is not None:
            if not rt.comparable(entity, "id", args[param]):
                raise ToolError.invalid_argument(f"'{param}' is not a valid {rt.noun(entity)} id.")
            if rt.find(ctx, entity, {"id": args[param]}) is not None:
                raise ToolError.conflict(f"A {rt.noun(entity)} with id {args[param]!r} already exists.")
            values["id"] = args[param]
    if definition.per_parent:
        owner = definition.owner_field
        if owner is not None and values.get(owner.name) is not None:
            if rt.find(ctx, entity, {owner.name: values[owner.name]}) is not None:
                raise ToolError.conflict(f"That {rt.noun(owner.ref or '')} already has a {rt.noun(entity)}; update it instead.")
    if definition.singleton and rt.count(ctx, entity) > 0:
        raise ToolError.conflict(f"There is already a {rt.noun(entity)}; update it instead.")
    if definition.state and values.get(definition.state.field) is None:
        values[definition.state.field] = definition.state.initial
    for f in definition.fields:
        if f.type == "boolean" and f.name not in values and f.name in _flag_fields(rt, entity):
            values[f.name] = False
    left = _within_parent_amount(rt, ctx, entity, values,
                                 tuple(b.column for b in tool.bindings.values() if b.role == "field" and b.column))
    row = rt.insert(ctx, entity, values)
    _insert_children(rt, tool, ctx, args, row)
    if left is None or left <= 0:  # Stripe's charge.refunded: "fully refunded"; a partial refund leaves it false
        _mark_parent(rt, tool, ctx, args)
    return rt.row_out(entity, row)


def _insert_children(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any], row: Row) -> None:
    """Sub-records passed with a new row become rows of their own under it, which the reads of that kind list:
    an envelope's ``recipients`` (DocuSign's ``{signers: [...], carbonCopies: [...]}``), a quote's ``line_items``."""
    entity = tool.behaviour.entity or ""
    for param, child in (tool.behaviour.children or {}).items():
        value = args.get(param)
        items = value if isinstance(value, list) else [value] if isinstance(value, dict) and value else []
        definition = rt.entity(child)
        link = next(f.name for f in definition.fields if f.ref == entity)
        for item in items:
            if not isinstance(item, dict):
                continue
            values = {f.name: item[key] for key in item for f in [_child_field(definition, key)]
                      if f is not None and not f.ref and f.stored and _fits(f.type, item[key])}
            if definition.state and values.get(definition.state.field) is None:
                values[definition.state.field] = definition.state.initial
            rt.insert(ctx, child, {**values, link: row["id"]})


def _child_field(definition: Any, key: str) -> Any:
    found = definition.field(key)
    return found if found is not None else next((f for f in definition.fields if f.name.lower() == key.lower()), None)


_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                            "boolean": (bool,), "object": (dict,), "array": (list,)}


def _fits(kind: str, value: Any) -> bool:
    wanted = _JSON_TYPES.get(kind)
    return wanted is None or isinstance(value, wanted) and not (isinstance(value, bool) and bool not in wanted)


def _mark_parent(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> None:
    """A record made under a row by an action on it changes that row as the product shows it: refunding a
    charge records a refund and marks the charge ``refunded``; paying an order marks it ``paid``."""
    marks, marked = tool.behaviour.marks, tool.behaviour.marks_entity
    if not marks or marked is None:
        return
    conditions = {}
    for param, binding in tool.bindings.items():
        if binding.role == "parent" and binding.entity == marked:
            value = argument(args, param, binding)
            if value is not _ABSENT:
                conditions[binding.lookup or "id"] = _resolved(rt, ctx, marked, binding, value)
    row = rt.find(ctx, marked, conditions) if conditions else None
    if row is not None:
        rt.update(ctx, marked, row["id"], dict(marks))


AMOUNT = "amount"
#: Records that give back part of the row they name, whichever reference names it (a refund of the payment
#: in its ``payment_id``, owner or not); other rows are a share only of an owner (a charge is no share of the
#: source it is paid from).
GIVING_BACK = ("refund", "reversal", "chargeback", "credit_note")


def is_money(schema: Any) -> bool:
    """A money object: an object holding an ``amount`` (Square's ``amount_money: {amount, currency}``)."""
    amount = ((schema or {}).get("properties") or {}).get(AMOUNT) if isinstance(schema, dict) else None
    return isinstance(amount, dict) and amount.get("type") in ("integer", "number")


def names_own_amount(name: str, entity: str) -> bool:
    """Whether a money object named ``name`` is the amount of a record of ``entity``: ``amount_money``, or one
    named for it (a refund's ``refunded_money``), never a fee or a tip (``app_fee_money``)."""
    stem = entity.split("_")[-1].removesuffix("e")
    base = name.removesuffix("_money")
    return name.endswith("_money") and (base == AMOUNT or bool(stem) and base.startswith(stem))


def amount_columns(definition: Any, *, parent: bool = False) -> list[Any]:
    """The columns holding a row's amount, the one to use first: a number ``amount``, else money objects (a
    parent's ``total_money`` then ``amount_money``; a record's own, see ``names_own_amount``)."""
    out = []
    flat = definition.field(AMOUNT)
    if flat is not None and flat.type in ("integer", "number"):
        out.append(flat)
    money = [f for f in definition.fields if f.stored and f.type == "object" and is_money(f.json_schema)]
    if parent:
        out += [f for name in ("total_money", "amount_money") for f in money if f.name == name]
    else:
        out += sorted((f for f in money if names_own_amount(f.name, definition.name)), key=lambda f: f.name != "amount_money")
    return out


def amount_of(row: dict[str, Any], columns: list[Any]) -> tuple[Any, float] | None:
    """The first of ``columns`` holding an amount in ``row`` (a number, or a money object's ``amount``)."""
    for f in columns:
        value = row.get(f.name)
        if f.type == "object":
            value = value.get(AMOUNT) if isinstance(value, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return f, value
    return None


def with_amount(f: Any, current: Any, amount: float, like: Any = None) -> Any:
    """``amount`` as column ``f`` holds it: the number, or the money object with it (its other keys kept, the
    currency taken from ``like``, the parent's money, where the object names none)."""
    if f.type != "object":
        return int(amount) if f.type == "integer" else amount
    money = dict(current) if isinstance(current, dict) else {}
    properties = (f.json_schema or {}).get("properties") or {}
    for key, value in (like.items() if isinstance(like, dict) else ()):
        if key != AMOUNT and key in properties and money.get(key) is None:
            money[key] = value
    kind = properties.get(AMOUNT, {}).get("type")
    money[AMOUNT] = int(amount) if kind == "integer" else amount
    return money


def amount_parents(definition: Any, values: dict[str, Any], entities: dict[str, Any]) -> list[Any]:
    """The references whose rows a row's amount is a share of, of those ``values`` sets: owner references to
    a row kind with an amount of its own (a refund of the charge it names, not of the application fee it has
    no link to; a charge is no share of the source it is paid from, which does not own it), then, for a record
    that gives back (``GIVING_BACK``), any reference to one (Square's refund names its payment by
    ``payment_id``)."""
    refs = [f for f in definition.fields if f.ref and f.owner and f.ref in entities]
    if any(word in definition.name for word in GIVING_BACK):
        refs += [f for f in definition.fields if f.ref and not f.owner and f.ref in entities and f.ref != definition.name]
    return [f for f in refs if values.get(f.name) is not None and amount_columns(entities[f.ref], parent=True)]


def amount_owner(definition: Any, values: dict[str, Any], entities: dict[str, Any]) -> Any:
    """The first of ``amount_parents`` (None when there is none)."""
    return next(iter(amount_parents(definition, values, entities)), None)


def amount_left(definition: Any, values: dict[str, Any], entities: dict[str, Any],
                parent_row: Callable[[Any], dict[str, Any] | None],
                siblings: Callable[[Any], Iterable[dict[str, Any]]]) -> tuple[float, float, Any, Any] | None:
    """What is left of the amount of the parent with the least left (``left, total, parent reference, parent
    row``), or None when no parent names an amount: the parent's amount less its records' (``siblings``, the
    stored rows of the kind whose reference ``f`` names that parent)."""
    mine = amount_columns(definition)
    best: tuple[float, float, Any, Any] | None = None
    if not mine:
        return None
    for f in amount_parents(definition, values, entities):
        parent = parent_row(f)
        found = amount_of(parent, amount_columns(entities[f.ref], parent=True)) if parent is not None else None
        if found is None:
            continue
        taken = sum((amount_of(r, mine) or (None, 0))[1] for r in siblings(f))
        left = found[1] - taken
        if best is None or left < best[0]:
            best = (left, found[1], f, parent)
    return best


def _within_parent_amount(rt: ServiceRuntime, ctx: ToolContext, entity: str, values: dict[str, Any],
                          written: tuple[str, ...] = ()) -> float | None:
    """A row created under a row with an amount (a refund of a charge, of a payment's ``amount_money``) takes at
    most what that row has left; without an amount it takes all of it (in a column the tool writes, ``written``).
    Returns what is left of the row's amount once this one is made (None where no amount is shared)."""
    definition = rt.entity(entity)
    mine = amount_columns(definition)
    found = amount_left(
        definition, values, rt.entities,
        lambda f: rt.find(ctx, f.ref, {"id": values[f.name]}),
        lambda f: (rt.records[entity].dump(x) for x in rt.query(ctx, entity).where(**{f.name: values[f.name]}).all()),
    )
    if found is None:
        return None
    left, total, owner, parent = found
    noun = rt.noun(owner.ref)
    parent_column, _ = amount_of(parent, amount_columns(rt.entity(owner.ref), parent=True)) or (None, 0)
    what = AMOUNT if parent_column is None or parent_column.type != "object" else f"{parent_column.name}.{AMOUNT}"
    passed = amount_of(values, mine)
    if passed is None:
        if left <= 0:
            raise ToolError.invalid_state(f"Nothing is left of that {noun}'s {what} ({total}).")
        column = next((f for f in mine if values.get(f.name) is not None),
                      next((f for f in mine if f.name in written), mine[0]))
        like = parent.get(parent_column.name) if parent_column is not None else None
        values[column.name] = with_amount(column, values.get(column.name), left, like)
        return 0
    column, wanted = passed
    if wanted > left:
        label = AMOUNT if column.type != "object" else f"{column.name}.{AMOUNT}"
        raise ToolError.invalid_argument(
            f"'{label}' {wanted} is more than is left of that {noun}'s {what}: {max(left, 0)} of {total}; nothing was changed."
        )
    return left - wanted


def run_send(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    return run_create(rt, tool, ctx, args)


def run_get(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    entity = tool.behaviour.entity or ""
    return rt.row_out(entity, _target(rt, tool, ctx, args))


def run_update(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    entity = tool.behaviour.entity or ""
    row = _target(rt, tool, ctx, args)
    values = _values(rt, tool, ctx, args)
    writable = [p for p, b in tool.bindings.items() if b.role == "field"]
    if writable and not values:
        shown = ", ".join(writable[:8]) + (", ..." if len(writable) > 8 else "")
        raise ToolError.invalid_argument(f"Pass at least one field to change ({shown}).")
    values = {column: merged(row.get(column), value) for column, value in values.items()}
    return rt.row_out(entity, rt.update(ctx, entity, row["id"], values))


def merged(old: Any, new: Any) -> Any:
    """A partial update of an object keeps what it does not name: ``{"address": {"city": ...}}`` changes the
    city and keeps the street (at every depth). Lists and scalars are replaced whole."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    out = dict(old)
    for key, value in new.items():
        out[key] = merged(old.get(key), value)
    return out


def run_delete(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    entity = tool.behaviour.entity or ""
    row = _target(rt, tool, ctx, args)
    rt.delete(ctx, entity, row["id"])
    return {"id": row["id"], "deleted": True}


def run_transition(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    entity = tool.behaviour.entity or ""
    transition = tool.behaviour.transition
    assert transition is not None
    row = _target(rt, tool, ctx, args)
    current = row.get(transition.field)
    if isinstance(transition.to, bool) and current is None:
        current = False
    noun = rt.noun(entity)
    shown_to = str(transition.to).lower() if isinstance(transition.to, bool) else transition.to
    if current == transition.to:
        raise ToolError.invalid_state(f"This {noun} already has {transition.field} {shown_to}; nothing to do.")
    if transition.allowed_from is not None and current not in transition.allowed_from:
        allowed = ", ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in transition.allowed_from)
        raise ToolError.invalid_state(
            f"This {noun} has {transition.field} {current!r}; it can change to {shown_to} only from {allowed}."
        )
    values = _values(rt, tool, ctx, args)
    values[transition.field] = transition.to
    return rt.row_out(entity, rt.update(ctx, entity, row["id"], values))


def _members(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> tuple[str, list[Any]]:
    """(column, member ids) a link or unlink names: its member argument (one id, a list, or comma-separated
    ids), else the current user (``join``, ``leave``); each member must exist."""
    entity = rt.entity(tool.behaviour.entity or "")
    owner = entity.owner_field
    bound = next(((p, b) for p, b in tool.bindings.items() if b.role == "member"), None)
    if bound is not None:
        param, binding = bound
        column = binding.column or param
        value = argument(args, param, binding)
    else:
        column = next((f.name for f in entity.fields if f.ref and f is not owner), "user_id")
        param, binding, value = column, Binding(role="member"), _ABSENT
    members: list[Any]
    if value is _ABSENT:
        members = []
    elif isinstance(value, list):
        members = value
    elif isinstance(value, str):
        members = [v.strip() for v in value.split(",") if v.strip()]
    else:
        members = [value]
    field = entity.field(column)
    target = binding.entity or (field.ref if field is not None else None)
    if not members and target:
        row = current_row(rt, ctx, target)
        members = [row["id"]] if row is not None else []
    if not members:
        raise ToolError.invalid_argument(f"'{param}' must name at least one member.")
    if target:
        members = [rt.require(ctx, target, {"id": _resolved(rt, ctx, target, binding, m)}, f"{param} {m!r}")["id"]
                   for m in members]
    return column, list(dict.fromkeys(members))


def _membership(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> \
        tuple[str, dict[str, Any], str, Row, str, list[Any]]:
    """(link entity, owner columns, owner entity, owner row, member column, members) of a link or unlink."""
    entity = tool.behaviour.entity or ""
    links = _parents(rt, tool, ctx, args)
    owner = rt.entity(entity).owner_field
    if owner is None or owner.ref is None or links.get(owner.name) is None:
        raise ToolError.invalid_argument("Name the row to add members to or remove them from.")
    row = rt.require(ctx, owner.ref, {"id": links[owner.name]})
    column, members = _members(rt, tool, ctx, args)
    return entity, links, owner.ref, row, column, members


def run_link(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    """Add members to a row (join, invite): one link row per member; members already there stay as they are."""
    entity, links, parent, row, column, members = _membership(rt, tool, ctx, args)
    for member in members:
        if rt.find(ctx, entity, {**links, column: member}) is None:
            rt.insert(ctx, entity, {**_values(rt, tool, ctx, args), **links, column: member})
    return rt.row_out(parent, row)


def run_unlink(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Row:
    """Remove members from a row (leave, kick); a member who is not there is an error."""
    entity, links, parent, row, column, members = _membership(rt, tool, ctx, args)
    for member in members:
        link = rt.find(ctx, entity, {**links, column: member})
        if link is None:
            raise ToolError.invalid_state(f"{member!r} is not a member of that {rt.noun(parent)}; nothing to remove.")
        rt.delete(ctx, entity, link["id"])
    return rt.row_out(parent, row)


def run_list(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    entity = tool.behaviour.entity or ""
    records = rt.records[entity]
    spoken = parsed_query(tool, args)  # read first: a query the product would refuse changes nothing
    query = rt.query(ctx, entity)
    for column, value in _parents(rt, tool, ctx, args).items():
        query.where(**{column: value})
    limit, offset = DEFAULT_LIMIT, 0
    for param, binding in tool.bindings.items():
        if binding.role == "filter" and binding.op in ("exclude", "include") and binding.column in records.column_set:
            documented = tool.parameters.get("properties", {}).get(param, {})
            _flag_filter(query, rt, entity, binding, args.get(param, documented.get("default")))
            continue
        if param not in args or args[param] is None:
            continue
        value = args[param]
        role = binding.role
        if role == "filter" and binding.column in records.column_set:
            _filter(query, rt, entity, binding, value)
        elif role == "search" and isinstance(value, str):
            query.search(value, *(records.search_columns or ("id",)))
        elif role == "limit":
            limit = max(1, min(MAX_LIMIT, _count(param, value)))
        elif role in ("cursor", "offset"):
            offset = _offset(param, value)
        elif role == "page":
            page = _count(param, value)
            base = 0 if _zero_based(tool, param) else 1
            offset = max(0, page - base) * _page_size(tool, args)
    if spoken is not None:
        return answer(rt, entity, ctx, query, spoken[0], spoken[1], limit, offset)
    found = query.page_at(limit, offset)
    return {"items": present_records(ctx.conn, records, found.items), "total": found.total, "next_cursor": found.next_cursor}


_OPERATORS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _holds(query: Query[Any], name: str, item: Any) -> None:
    """Rows whose JSON list column holds ``item``. Matched on the stored text, between the list's delimiters:
    SQLite 3.40's json_each in a filter of this shape crashes the process, so it is not used."""
    if isinstance(item, str):
        query.where_sql(f"{quote(name)} LIKE ? ESCAPE '\\'", like_pattern(json.dumps(item, ensure_ascii=False)))
        return
    text = json.dumps(item)
    edges = [f"[{text},", f",{text},", f",{text}]", f"[{text}]"]
    query.where_sql("(" + " OR ".join(f"{quote(name)} LIKE ? ESCAPE '\\'" for _ in edges) + ")",
                    *(like_pattern(e) for e in edges))


def _flag_filter(query: Query[Any], rt: ServiceRuntime, entity: str, binding: Binding, value: Any) -> None:
    """``exclude_archived=true`` leaves out archived rows; ``include_spam_trash`` absent or false leaves out
    trashed ones."""
    if binding.op == "exclude" and value is not True:
        return
    if binding.op == "include" and value is True:
        return
    name = binding.column or ""
    stored = rt.coerce(entity, name, binding.value)
    if isinstance(stored, bool):
        stored = int(stored)
    query.where_sql(f"({quote(name)} IS NULL OR {quote(name)} != ?)", stored)


def _filter(query: Query[Any], rt: ServiceRuntime, entity: str, binding: Binding, value: Any) -> None:
    """Narrow ``query`` to rows whose bound column matches ``value`` as the binding's ``op`` says."""
    name = binding.column or ""
    kind = rt.columns(entity).get(name)
    if kind == "array" and binding.op in ("contains", "in"):
        for item in value if isinstance(value, list) else [value]:  # rows whose list holds every value
            _holds(query, name, item)
        return
    if kind in ("object", "array", "any"):
        return  # JSON columns are not filtered on
    if binding.op == "in":
        query.where_in(name, [rt.coerce(entity, name, v) for v in (value if isinstance(value, list) else [value])])
    elif binding.op in ("gte", "lte"):
        query.compare(name, _OPERATORS[binding.op], rt.coerce(entity, name, value))
    elif binding.op == "range":
        _range(query, rt, entity, name, value)
    elif binding.op == "contains":
        query.contains(name, str(value))
    else:
        query.where(**{name: rt.coerce(entity, name, value)})


def _range(query: Query[Any], rt: ServiceRuntime, entity: str, name: str, value: Any) -> None:
    """``{gt, gte, lt, lte}`` bounds (or one value: equal); Unix seconds compare with ISO timestamp columns."""
    bounds = value if isinstance(value, dict) else {"eq": value}
    for op, bound in bounds.items():
        if bound is None:
            continue
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and rt.columns(entity).get(name) == "string":
            bound = datetime.fromtimestamp(bound, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        bound = rt.coerce(entity, name, bound)
        if op == "eq":
            query.where(**{name: bound})
        else:
            query.compare(name, _OPERATORS[op], bound)


def run_search(rt: ServiceRuntime, tool: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return run_list(rt, tool, ctx, args)


def _offset(param: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ToolError.invalid_argument(f"'{param}' must be a cursor from a previous page.")
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, str) and not value.strip():
        return 0
    raise ToolError.invalid_argument(
        f"'{param}' value {value!r} is not a valid cursor; pass the next_cursor of a previous page, or omit it."
    )


def _count(param: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ToolError.invalid_argument(f"'{param}' must be a whole number.")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise ToolError.invalid_argument(f"'{param}' must be a whole number, not {value!r}.")


def _zero_based(tool: ToolDef, param: str) -> bool:
    schema = tool.parameters.get("properties", {}).get(param, {})
    return schema.get("minimum") == 0 or schema.get("default") == 0


def _page_size(tool: ToolDef, args: dict[str, Any]) -> int:
    for param, binding in tool.bindings.items():
        if binding.role == "limit" and args.get(param) is not None:
            return max(1, min(MAX_LIMIT, _count(param, args[param])))
    return DEFAULT_LIMIT


def _flag_fields(rt: ServiceRuntime, entity: str) -> set[str]:
    """Boolean fields some transition of the service toggles (they start false)."""
    return {
        t.behaviour.transition.field
        for t in rt.spec.tools
        if t.behaviour.entity == entity and t.behaviour.transition is not None and isinstance(t.behaviour.transition.to, bool)
    }


EXECUTORS: dict[str, Executor] = {
    "create": run_create,
    "send": run_send,
    "get": run_get,
    "update": run_update,
    "delete": run_delete,
    "transition": run_transition,
    "list": run_list,
    "search": run_search,
    "link": run_link,
    "unlink": run_unlink,
}
