"""Product invariants: checks derived from the documented surface and from pairs of tools, not from the
planner's reading of each tool (the consistency gate, ``contracts.py``, and the behavioural gate,
``behaviour.py``, check a tool against its own spec; these check it against the product):

- ``ids_round_trip``: every id a create returns matches the declared pattern or format of every
  parameter that carries that entity's id, and every tool taking that entity accepts it;
- ``write_visible``: a write's effect shows through the read tools of the same resource (invite, then
  the members; a comment on a file, then the file's comments; pay, then the invoice);
- ``action_keeps_row``: an action on ``/x/{id}/verb`` (or ``x.verb(x)``) never deletes x and never
  creates another x, unless the verb deletes; an action that says what becomes of x (clear, contest,
  transition, void, close...) and makes no record of its own changes x;
- ``params_change_result``: a list parameter named like a returned field, a state, or an include or
  exclude flag changes the result when the rows differ in it;
- ``aliases_resolve``: values a parameter documents as aliases (``me``, ``primary``, the root folder
  ``0``) are accepted;
- ``amount_within_parent``: a record created under a parent never exceeds the parent's amount (a
  refund never exceeds its charge; amounts in money objects too: Square's ``amount_money.amount``, of the
  payment its ``payment_id`` names);
- ``status_from_enum``: status values are the ones the API documents, never invented ones.

They run in the gate worker beside the other checks; a tool is implemented only when they pass too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.compiler.behaviours import AMOUNT, GIVING_BACK, amount_columns, amount_of, is_money, names_own_amount
from generator.compiler.validation import make_validator
from generator.gate.behaviour import Failed, _changed, _initial_rows, _rows_now
from generator.gate.examples import _fit, canonical
from generator.gate.surface import DELETING_VERBS, Surface, declared_enum, route_of
from generator.naming import is_plural, words
from generator.semantics import documented_aliases
from generator.planner.lexicon import (
    verb_class,
    CURSOR_PARAMS,
    LIMIT_PARAMS,
    OFFSET_PARAMS,
    PAGE_PARAMS,
    SEARCH_PARAMS,
    squash,
)

if TYPE_CHECKING:
    from generator.gate.contracts import ToolChecks

_TIMESTAMPS = ("created_at", "updated_at")
_FLAG_LEADS = frozenset({"include", "exclude", "show", "hide", "with", "only", "is"})
_SHAPE_WORDS = frozenset({"fields", "field", "sort", "order", "expand", "format", "view", "embed", "count",
                          "locale", "language", "lang", "pretty", "projection", "select", "total", "num",
                          "members", "users", "email", "locale", "properties", "metadata", "link", "links",
                          "html", "body", "content", "preview", "image", "images", "details", "detail"})
_LIMIT = 100
#: RPC verbs that change who belongs to the row they name (``conversations.invite(channel, users)``).
RPC_MEMBERSHIP = frozenset({"invite", "join", "leave", "kick", "subscribe", "unsubscribe", "enroll", "unenroll"})
#: RPC read verbs that return rows of the resource itself (``conversations.info``, ``usergroups.list``).
_RESOURCE_READS = frozenset({"info", "list", "get", "search", "lookup", "find", "read", "view", "show", "fetch",
                             "retrieve"})
#: RPC reads that show who belongs to a row (``conversations.members``).
_MEMBER_READS = frozenset({"members", "users", "participants", "member", "info"})


def surface_of(tc: ToolChecks) -> Surface:
    if "surface" not in tc.shared:
        tc.shared["surface"] = Surface(tc.runtime.spec)
    surface: Surface = tc.shared["surface"]
    return surface


def run_invariants(tc: ToolChecks) -> None:
    """Add the per-tool product invariants of ``tc``'s tool (after its valid call succeeded)."""
    kind = tc.definition.behaviour.kind
    tc._check("status_from_enum", lambda: _status_from_enum(tc))
    if aliases(tc.definition.parameters):
        tc._check("aliases_resolve", lambda: _aliases_resolve(tc))
    if tc.definition.effect == "write":
        tc._check("action_keeps_row", lambda: _action_keeps_row(tc))
        tc._check("write_visible", lambda: _write_visible(tc))
    if kind in ("create", "send"):
        tc._check("amount_within_parent", lambda: _amount_within_parent(tc))
    if kind in ("list", "search"):
        tc._check("params_change_result", lambda: _params_change_result(tc))


# -- helpers -----------------------------------------------------------------------------------------------


def _call(tc: ToolChecks, tool: str, arguments: dict[str, Any]) -> Any:
    return tc.episode.call(tc.service.name, tool, arguments)


def _fitted(tc: ToolChecks, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """``arguments`` in the types ``tool`` declares, or None when they do not validate."""
    definition = tc.runtime.spec.tool(tool)
    properties = definition.parameters.get("properties", {})
    fitted = {k: _fit(v, properties.get(k, {})) for k, v in arguments.items() if k in properties}
    return fitted if make_validator(definition.parameters).is_valid(fitted) else None


def _with_max_limit(tc: ToolChecks, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    properties = tc.runtime.spec.tool(tool).parameters.get("properties", {})
    out = dict(arguments)
    for param, schema in properties.items():
        if squash(param) in LIMIT_PARAMS and isinstance(schema, dict) and schema.get("type") in ("integer", "number"):
            most = schema.get("maximum")
            out[param] = int(min(_LIMIT, most)) if isinstance(most, (int, float)) else _LIMIT
    return out


def _ids(data: Any) -> set[str]:
    """The ids of the records a read returned (a page's items, or one record)."""
    if isinstance(data, dict):
        items = data.get("items")
        if isinstance(items, list):
            return {canonical(i.get("id")) for i in items if isinstance(i, dict)}
        if "id" in data:
            return {canonical(data.get("id"))}
    return set()


def _without_timestamps(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_timestamps(v) for k, v in node.items() if k not in _TIMESTAMPS}
    if isinstance(node, list):
        return [_without_timestamps(v) for v in node]
    return node


def _seen(result: Any) -> str:
    return canonical(_without_timestamps(result.envelope()))


def examples(tc: ToolChecks) -> dict[str, Any]:
    """Every tool's valid example call of this gate pass (``ToolChecks.run`` records them)."""
    found: dict[str, Any] = tc.shared.setdefault("examples", {})
    return found


# -- status_from_enum ---------------------------------------------------------------------------------------


def _status_from_enum(tc: ToolChecks) -> None:
    entity_name = tc.definition.behaviour.entity
    if not entity_name or entity_name not in tc.runtime.entities:
        return
    entity = tc.runtime.entity(entity_name)
    if entity.state is None:
        return
    declared = declared_enum(tc.runtime.spec, entity_name, entity.state.field, surface_of(tc))
    if declared is None:
        return
    known = {canonical(v) for v in declared}
    invented = [v for v in entity.state.values if canonical(v) not in known]
    if invented:
        raise Failed(f"the {entity_name}'s {entity.state.field} takes {invented[0]!r}, which the API does not "
                     f"document (it documents {', '.join(map(str, declared[:8]))})")
    transition = tc.definition.behaviour.transition
    if transition is not None and transition.field == entity.state.field and canonical(transition.to) not in known:
        raise Failed(f"the action sets {transition.field} to {transition.to!r}, which the API does not document")


# -- aliases_resolve ----------------------------------------------------------------------------------------


def aliases(parameters: dict[str, Any]) -> dict[str, list[str]]:
    """Parameter -> the alias values its description documents (``me``, ``primary``, ``0``)."""
    out: dict[str, list[str]] = {}
    for param, schema in parameters.get("properties", {}).items():
        if isinstance(schema, dict) and schema.get("type") in ("string", "integer") and _names_a_row(param):
            found = documented_aliases(schema.get("description"))
            if found:
                out[param] = found
    return out


def _names_a_row(param: str) -> bool:
    """``userId``, ``calendar_id``, ``folder``: a parameter that can carry an alias of a row."""
    parts = words(param)
    return bool(parts) and (parts[-1] in ("id", "key", "name") or len(parts) == 1)


def _aliases_resolve(tc: ToolChecks) -> None:
    """An alias answers exactly as the id of the row it stands for (the first one: the signed-in user, the
    primary calendar, the root folder); where the entity is unknown, it is at least accepted."""
    assert tc.example is not None
    properties = tc.definition.parameters.get("properties", {})
    for param, values in aliases(tc.definition.parameters).items():
        if param not in tc.example.arguments:
            continue
        entity = _alias_entity(tc, param)
        current = list(_initial_rows(tc).get(tc.runtime.entity(entity).table, {})) if entity else []
        for value in values:
            arguments = _fitted(tc, tc.name, {**tc.example.arguments, param: value})
            if arguments is None:
                if properties[param].get("type") == "integer" and not value.isdigit():
                    continue
                raise Failed(f"{param} documents {value!r} but the tool's schema refuses it")
            tc.fresh()
            result = _call(tc, tc.name, arguments)
            if current and entity:
                plain = _fitted(tc, tc.name, {**tc.example.arguments, param: tc.runtime.coerce(entity, "id", current[0])})
                if plain is not None:
                    tc.fresh()
                    expected = _call(tc, tc.name, plain)
                    if _seen(result) != _seen(expected):
                        raise Failed(f"{param}={value!r} did not answer as {param}={current[0]!r}, the {entity} it "
                                     f"stands for ({result.error_code or 'a different result'})")
                    continue
            if not result.success and str(result.error_code) in ("not_found", "invalid_argument"):
                raise Failed(f"{param}={value!r} (documented: {properties[param]['description'][:80]!r}) gave "
                             f"{result.error_code}")


def _alias_entity(tc: ToolChecks, param: str) -> str | None:
    binding = tc.definition.bindings.get(param)
    entity = _binds_to(tc.definition, binding)
    if entity is None:
        route = surface_of(tc).routes.get(tc.name)
        step = next((s for s in route.steps if param in s.params), None) if route is not None else None
        entity = surface_of(tc).entity_of(step.literal) if step is not None else None
    return entity if entity in tc.runtime.entities else None


# -- action_keeps_row -----------------------------------------------------------------------------------


def _action_keeps_row(tc: ToolChecks) -> None:
    surface = surface_of(tc)
    route = surface.routes.get(tc.name)
    if route is None or route.action is None or route.action in DELETING_VERBS:
        return
    if route.rpc and verb_class(route.action) in ("create", "send", "list", "get") and route.action not in RPC_MEMBERSHIP:
        return  # emoji.add, views.open, files.upload: the method makes one
    entity = surface.row_entity(tc.name)
    param = surface.row_param(tc.name)
    if entity is None or param is None or tc.example is None:
        return
    table = tc.runtime.entity(entity).table
    before = _initial_rows(tc)
    ids = list(before.get(table, {}))
    value = tc.example.arguments.get(param)
    if value is None or str(value) not in before.get(table, {}):
        if not ids:
            return
        value = tc.runtime.coerce(entity, "id", ids[0])
    arguments = _fitted(tc, tc.name, {**tc.example.arguments, **_naming_rows(tc, before, entity), param: value}) \
        or _fitted(tc, tc.name, {**tc.example.arguments, param: value})
    if arguments is None:
        return
    tc.fresh()
    result = _call(tc, tc.name, arguments)
    if not result.success:
        return
    added, _, deleted = _changed(before, _rows_now(tc))
    if (table, str(value)) in deleted:
        raise Failed(f"the action {route.action!r} deleted the {entity} {value!r} it names")
    made = [key for t, key in added if t == table]
    if made:
        raise Failed(f"the action {route.action!r} on the {entity} {value!r} created another {entity} {made[0]!r}")
    if route.action in ROW_CHANGING_VERBS and not _row_changed(before, _rows_now(tc), table, str(value)):
        raise Failed(f"the action {route.action!r} left the {entity} {value!r} it names unchanged")
    for other, named in _named_rows(tc, arguments, before, entity):  # addTag {tag}: the tag named, not a new one
        made = [key for t, key in added if t == tc.runtime.entity(other).table]
        if made:
            raise Failed(f"the action {route.action!r} names the {other} {named!r} but created another {other} {made[0]!r}")


#: Verbs of ``/x/{id}/verb`` that say what becomes of x and make no record of their own (a refund, a payment
#: or a copy is a record; a clear, a contest or a transition is a change of x).
ROW_CHANGING_VERBS = frozenset({"clear", "contest", "transition", "transitions", "trash", "untrash", "void",
                                "finalize", "cancel", "close", "reopen", "restore", "archive", "unarchive", "complete",
                                "approve", "reject", "decline", "accept", "publish", "unpublish", "activate",
                                "deactivate", "enable", "disable", "pause", "resume", "suspend", "unsuspend",
                                "lock", "unlock", "block", "unblock", "resolve"})


def _row_changed(before: dict[str, dict[str, dict[str, Any]]], after: dict[str, dict[str, dict[str, Any]]],
                 table: str, key: str) -> bool:
    old, new = before.get(table, {}).get(key), after.get(table, {}).get(key)
    if old is None or new is None:
        return True
    return {k: v for k, v in old.items() if k != "updated_at"} != {k: v for k, v in new.items() if k != "updated_at"}


def _naming_rows(tc: ToolChecks, before: dict[str, dict[str, dict[str, Any]]], row_entity: str) -> dict[str, Any]:
    """Arguments that name a stored row of another entity, for the parameters named like one (``tag``)."""
    from generator.compiler.simulated import reference_entity

    out: dict[str, Any] = {}
    for param in tc.definition.parameters.get("properties", {}):
        other = reference_entity(param, None, tc.runtime.entities)
        if other is not None and other != row_entity:
            stored = list(before.get(tc.runtime.entity(other).table, {}))
            if stored:
                out[param] = tc.runtime.coerce(other, "id", stored[0])
    return out


def _named_rows(tc: ToolChecks, arguments: dict[str, Any], before: dict[str, dict[str, dict[str, Any]]],
                row_entity: str) -> list[tuple[str, Any]]:
    """(entity, id) of the stored rows the arguments name by id (``tag``, ``tag_id``), the acted-on row aside."""
    from generator.compiler.simulated import reference_entity

    out = []
    for param, value in arguments.items():
        other = reference_entity(param, None, tc.runtime.entities)
        if other is not None and other != row_entity and isinstance(value, (str, int)) \
                and str(value) in before.get(tc.runtime.entity(other).table, {}):
            out.append((other, value))
    return out


# -- write_visible -----------------------------------------------------------------------------------------


def _read_arguments(tc: ToolChecks, read: str, write_args: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments for ``read`` that look at what the write touched: the read's own example, with the
    write's values for the id parameters both take (the same channel, the same charge)."""
    example = examples(tc).get(read)
    if example is None:
        return None
    definition = tc.runtime.spec.tool(read)
    properties = definition.parameters.get("properties", {})
    route = surface_of(tc).routes.get(read)
    path_params = {p for s in route.steps for p in s.params} if route is not None else set()
    kept = set(definition.parameters.get("required", [])) | path_params | {
        p for p, b in definition.bindings.items() if b.role in ("parent", "key", "via", "limit")}
    arguments = {p: v for p, v in example.arguments.items() if p in kept}  # its filters would pick other rows
    row = surface_of(tc).row_param(tc.name)  # conversations.join(channel), then conversations.members(channel)
    for param, value in write_args.items():
        if param in properties and (param in path_params or param == row or _id_like(tc, param)):
            arguments[param] = value
    return arguments


def _id_like(tc: ToolChecks, param: str) -> bool:
    """A parameter that names a row: ``*_id``, or named like an entity of the service (``charge``)."""
    parts = words(param)
    return bool(parts) and (parts[-1] in ("id", "ids", "sid", "uuid") or surface_of(tc).entity_of(param) is not None
                            and squash(param) in {squash(e) for e in tc.runtime.entities})


def _write_visible(tc: ToolChecks) -> None:
    assert tc.example is not None
    surface = surface_of(tc)
    kind = tc.definition.behaviour.kind
    entity = tc.definition.behaviour.entity or ""
    reads = [r for r in surface.reads_of(tc.name) if r in examples(tc)]
    if not reads:
        return
    if kind in ("create", "send"):
        _created_is_read(tc, surface, [r for r in reads if _returns(tc, surface, r, entity)])
        return
    route = surface.routes.get(tc.name)
    if route is not None and route.rpc:
        reads = _rpc_reads(tc, surface, route.verb or "", surface.row_param(tc.name), reads)
    before: dict[str, tuple[dict[str, Any], str]] = {}
    tc.fresh()
    for read in reads:
        arguments = _read_arguments(tc, read, tc.example.arguments)
        fitted = _fitted(tc, read, _with_max_limit(tc, read, arguments)) if arguments is not None else None
        if fitted is not None:
            before[read] = (fitted, _seen(_call(tc, read, fitted)))
    if not before:
        return
    tc.fresh()
    if not _call(tc, tc.name, tc.example.arguments).success:
        return
    for read, (arguments, seen) in before.items():
        if _seen(_call(tc, read, arguments)) != seen:
            return
    raise Failed(f"none of the reads of its resource ({', '.join(list(before)[:3])}) shows a change after the call")


def _rpc_reads(tc: ToolChecks, surface: Surface, verb: str, row: str | None, reads: list[str]) -> list[str]:
    """The reads of an RPC resource that can show an action on one of its rows: for a membership verb, its
    member reads; else its reads of that row (and its lists)."""
    out = []
    for read in reads:
        route = surface.routes[read]
        takes_row = row is not None and row in tc.runtime.spec.tool(read).parameters.get("properties", {})
        if verb in RPC_MEMBERSHIP:
            if takes_row and route.verb in _MEMBER_READS:
                out.append(read)
        elif route.verb in _RESOURCE_READS and (takes_row or route.verb == "list"):
            out.append(read)
    return out


def _returns(tc: ToolChecks, surface: Surface, read: str, entity: str) -> bool:
    """Whether ``read`` returns rows of ``entity`` (by its path, or as the planner built it)."""
    route = surface.routes.get(read)
    if route is not None and route.rpc:
        return route.verb in _RESOURCE_READS and surface.entity_of(route.steps[-2].literal) == entity \
            if len(route.steps) >= 2 else False
    step = route.collection or route.keyed if route is not None else None
    if step is not None and surface.entity_of(step.literal) is not None:
        return surface.entity_of(step.literal) == entity
    return tc.runtime.spec.tool(read).behaviour.entity == entity


def _created_is_read(tc: ToolChecks, surface: Surface, reads: list[str]) -> None:
    """A new row is listed by every read of its kind that lists the parent it was created under."""
    assert tc.example is not None
    tc.fresh()
    result = _call(tc, tc.name, tc.example.arguments)
    created = result.data if result.success and isinstance(result.data, dict) else None
    if created is None or "id" not in created:
        return
    entity = tc.definition.behaviour.entity or ""
    missing: list[str] = []
    for read in reads:
        arguments = _read_arguments(tc, read, tc.example.arguments)
        route = surface.routes.get(read)
        if arguments is None or route is None:
            continue
        own = surface.row_param(read)
        if own is not None and route.keyed is not None:
            arguments[own] = created["id"]  # GET /x/{id} after POST /xs: the new row
        applicable = True
        for step in route.parents:
            parent = surface.entity_of(step.literal)
            if parent is None or not step.params:
                continue
            value = _parent_of(tc, entity, parent, created)
            if value is None:
                value = _named_row(tc, parent, tc.example.arguments)
                if value is None:
                    applicable = False  # created under no row of that kind: this read cannot list it
                    break
            arguments[step.params[-1]] = value
        if not applicable:
            continue
        fitted = _fitted(tc, read, _with_max_limit(tc, read, arguments))
        if fitted is None:
            continue
        seen = _call(tc, read, fitted)
        if canonical(created["id"]) not in _ids(seen.data):
            missing.append(read)
    if missing:
        raise Failed(f"{', '.join(missing[:2])} does not list the new {entity} {created['id']!r}")


def _parent_of(tc: ToolChecks, entity: str, parent: str, created: dict[str, Any]) -> Any:
    if entity not in tc.runtime.entities:
        return None
    for f in tc.runtime.entity(entity).fields:
        if f.ref == parent and created.get(f.name) is not None:
            return created[f.name]
    return None


def _named_row(tc: ToolChecks, parent: str, arguments: dict[str, Any]) -> Any:
    """The id of a ``parent`` row the call's arguments name (``item: {id: "file_0001", type: "file"}``)."""
    ids = {canonical(r.get("id")): r.get("id") for r in tc.rows.get(parent, [])}
    noun = squash(parent.rsplit("_", 1)[-1])

    def walk(node: Any, name: str, depth: int) -> Any:
        if depth > 3:
            return None
        if isinstance(node, dict):
            for key, value in node.items():
                found = walk(value, f"{name}.{key}", depth + 1)
                if found is not None:
                    return found
            return None
        if isinstance(node, list):
            return next((f for f in (walk(v, name, depth + 1) for v in node[:5]) if f is not None), None)
        hint = squash(name)
        if canonical(node) in ids and (noun in hint or "id" in hint or "item" in hint or "parent" in hint):
            return ids[canonical(node)]
        return None

    return walk(arguments, "", 0)


# -- amount_within_parent -----------------------------------------------------------------------------------


def _amount_within_parent(tc: ToolChecks) -> None:
    assert tc.example is not None
    properties = tc.definition.parameters.get("properties", {})
    own = tc.definition.behaviour.entity or ""
    # the parameter of the new record's amount: a number ``amount``, or a money object (``amount_money``)
    param = next((p for p, schema in properties.items() if isinstance(schema, dict) and (
        p == AMOUNT and schema.get("type") in ("integer", "number")
        or schema.get("type") == "object" and is_money(schema) and names_own_amount(p, own))), None)
    if param is None:
        return
    surface = surface_of(tc)
    route = surface.routes.get(tc.name)
    candidates: list[tuple[str, str]] = []
    if route is not None:
        candidates += [(s.params[-1], e) for s in route.parents if s.params and (e := surface.entity_of(s.literal))]
    for entity in surface.parents_of(own):  # POST /refunds {charge}: refunds are listed under charges
        candidates += [(p, entity) for t, p in surface.id_params(entity) if t == tc.name]
    if any(word in own for word in GIVING_BACK):  # POST /v2/refunds {payment_id}: a refund of the payment it names
        candidates += [(p, entity) for entity in sorted(tc.runtime.entities) if entity != own
                       for t, p in surface.id_params(entity) if t == tc.name]
    for name, entity in candidates:
        value = tc.example.arguments.get(name)
        definition = tc.runtime.entities.get(entity)
        columns = amount_columns(definition, parent=True) if definition is not None else []
        row = next((r for r in tc.rows.get(entity, []) if canonical(r.get("id")) == canonical(tc.runtime.coerce(
            entity, "id", value))), None) if value is not None else None
        named = value
        if row is None and value is not None:  # the valid call names no stored one: name one with an amount
            row = next((r for r in tc.rows.get(entity, []) if (amount_of(r, columns) or (None, 0))[1] > 0), None)
            named = row.get("id") if row is not None else value
        found = amount_of(row, columns) if row is not None else None
        parent_amount = found[1] if found is not None else None
        if parent_amount is None or parent_amount <= 0:
            continue
        too_much: float = parent_amount * 2 + 1
        schema = properties[param]
        amount_type = (schema.get("properties", {}).get(AMOUNT, {}) if schema.get("type") == "object" else schema).get("type")
        if amount_type == "integer":
            too_much = int(too_much)
        current = tc.example.arguments.get(param)
        passed: Any = ({**current, AMOUNT: too_much} if isinstance(current, dict) else {AMOUNT: too_much}) \
            if schema.get("type") == "object" else too_much
        arguments = _fitted(tc, tc.name, {**tc.example.arguments, name: named, param: passed})
        if arguments is None:
            return
        tc.expect_refused(arguments, f"{param} {too_much} on a {entity} of {parent_amount}")
        return


# -- params_change_result -----------------------------------------------------------------------------------


def _params_change_result(tc: ToolChecks) -> None:
    assert tc.example is not None
    definition = tc.definition
    properties = definition.parameters.get("properties", {})
    item = (tc.tool.data_schema.get("properties", {}).get("items", {}) or {}).get("items", {})
    returned = {squash(name): name for name in (item.get("properties") or {}) if isinstance(name, str)}
    route = route_of(definition)
    path_params = {p for s in route.steps for p in s.params} if route is not None else set()
    required = set(definition.parameters.get("required", []))
    base = {p: v for p, v in tc.example.arguments.items() if p in required or p in path_params
            or (definition.bindings.get(p) is not None and definition.bindings[p].role == "parent")}
    base = _with_max_limit(tc, tc.name, base)
    cache: dict[str, Any] = {}
    for param, schema in properties.items():
        if param in base or not isinstance(schema, dict):
            continue
        s = squash(param)
        if s in LIMIT_PARAMS | CURSOR_PARAMS | PAGE_PARAMS | OFFSET_PARAMS | SEARCH_PARAMS:
            continue
        parts = words(param)
        if not parts or parts[-1] in _SHAPE_WORDS or parts[0] in ("sort", "order", "fields", "expand", "format"):
            continue
        if parts[0] in _FLAG_LEADS or parts[-1] == "only":
            _flag_changes(tc, param, schema, base, parts, cache)
            continue
        column = returned.get(s) or returned.get(s + "id") or (returned.get(s[:-1] + "id") if s.endswith("s") else None)
        if column is None and s in ("state", "status", "statuses", "stage"):
            column = returned.get("status") or returned.get("state")
        if column is not None and column not in _TIMESTAMPS:
            _field_changes(tc, param, schema, column, base, cache)


def _listing(tc: ToolChecks, arguments: dict[str, Any], cache: dict[str, Any]) -> list[dict[str, Any]] | None:
    fitted = _fitted(tc, tc.name, arguments)
    if fitted is None:
        return None
    key = canonical(fitted)
    if key not in cache:
        tc.fresh()
        result = _call(tc, tc.name, fitted)
        data = result.data if result.success and isinstance(result.data, dict) else {}
        items = data.get("items")
        cache[key] = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else None
    found: list[dict[str, Any]] | None = cache[key]
    return found


def _field_changes(tc: ToolChecks, param: str, schema: dict[str, Any], column: str, base: dict[str, Any],
                   cache: dict[str, Any]) -> None:
    everything = _listing(tc, base, cache)
    if not everything:
        return
    values: list[Any] = []
    for item in everything:
        value = item.get(column)
        if value is not None and not isinstance(value, (dict, list)) and canonical(value) not in map(canonical, values):
            values.append(value)
    allowed = [v for v in values if make_validator(schema).is_valid(_fit(v, schema))]
    if len(values) < 2 or not allowed:
        return
    tried = 0
    for value in allowed[:4]:
        narrowed = _listing(tc, {**base, param: value}, cache)
        if narrowed is None:
            continue
        tried += 1
        if {canonical(i.get("id")) for i in narrowed} != {canonical(i.get("id")) for i in everything}:
            return
    if tried:
        raise Failed(f"{param} returned the same {len(everything)} rows whatever its value, though the rows differ "
                     f"in {column}")


def _flag_changes(tc: ToolChecks, param: str, schema: dict[str, Any], base: dict[str, Any], parts: list[str],
                  cache: dict[str, Any]) -> None:
    """``exclude_archived``, ``includeSpamTrash``, ``show_deleted``: on and off differ when rows differ in it."""
    if schema.get("type") != "boolean":
        return
    wanted = [w for w in parts if w not in _FLAG_LEADS and w != "only"]
    entity = tc.definition.behaviour.entity or ""
    rows = tc.rows.get(entity, [])
    if not wanted or not rows or entity not in tc.runtime.entities:
        return
    definition = tc.runtime.entity(entity)
    state = definition.state.field if definition.state else None

    def marked(row: dict[str, Any]) -> bool:
        for f in definition.fields:
            fw = set(words(f.name))
            if f.type == "boolean" and any(_stem(w) in {_stem(x) for x in fw} for w in wanted) and row.get(f.name):
                return True
        value = row.get(state) if state else None
        return isinstance(value, str) and any(_stem(w) == _stem(value) for w in wanted)

    on, off = _listing(tc, {**base, param: True}, cache), _listing(tc, {**base, param: False}, cache)
    if on is None or off is None:
        return
    seen = {canonical(i.get("id")): i for i in [*on, *off]}
    stored = {canonical(r.get("id")): r for r in rows}
    scope = [stored.get(k, i) for k, i in seen.items()]
    if not any(marked(r) for r in scope) or all(marked(r) for r in scope):
        return  # the rows it can return do not differ in what the flag is about
    if {canonical(i.get("id")) for i in on} == {canonical(i.get("id")) for i in off}:
        raise Failed(f"{param}=true and {param}=false returned the same rows, though some are "
                     f"{' '.join(wanted)} and some are not")


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ed", "d", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 3:
            return word[: -len(suffix)]
    return word


# -- ids_round_trip (across tools) ---------------------------------------------------------------------------


def ids_round_trip(checks: dict[str, ToolChecks]) -> None:
    """For every compiled create: its new id fits every parameter that carries its entity's id, and every
    tool taking that entity accepts it. Failures go to the create (a bad id) or to the tool (a bad lookup)."""
    any_tc = next(iter(checks.values()), None)
    if any_tc is None:
        return
    surface = surface_of(any_tc)
    found: dict[str, list[str]] = {}
    tried: set[str] = set()
    for name, tc in checks.items():
        if tc.definition.behaviour.kind not in ("create", "send") or tc.example is None or tc.result is None:
            continue
        entity = tc.definition.behaviour.entity or ""
        created = tc.result.data if isinstance(tc.result.data, dict) else {}
        if "id" not in created or entity not in tc.runtime.entities:
            continue
        consumers = _consumers(tc, surface, entity)
        problems: list[str] = []
        for tool, param in consumers:
            schema = tc.runtime.spec.tool(tool).parameters.get("properties", {}).get(param, {})
            if schema.get("type") not in ("string", "integer"):
                continue
            if not make_validator(schema).is_valid(_fit(created["id"], schema)):
                problems.append(f"its new id {created['id']!r} does not fit {tool}'s {param} "
                                f"({schema.get('pattern') or schema.get('format') or schema.get('type')})")
        if problems:
            found.setdefault(name, []).extend(problems[:1])
            continue
        if entity in tried:
            continue
        tried.add(entity)
        for tool, param in consumers:
            other = checks.get(tool)
            if other is None or other.example is None or other.result is None or tool == name:
                continue
            if other.definition.behaviour.kind in ("create", "send") and other.definition.behaviour.entity == entity:
                continue
            if not _names_its_row(surface, tool, param, other):
                continue
            problem = _accepts(tc, tool, param, other.example.arguments, surface)
            if problem:
                found.setdefault(tool, []).append(problem)
    for name, tc in checks.items():
        if tc.example is None or tc.result is None or tc.definition.behaviour.kind in ("simulated",):
            continue
        problems = found.get(name, [])
        tc.checks.append(_check("ids_round_trip", problems))


def _names_its_row(surface: Surface, tool: str, param: str, tc: ToolChecks) -> bool:
    """Whether ``param`` names the row ``tool`` acts on, or the parent of the collection it lists or adds to
    (a parent of a child named by another key would not find that child under a new parent)."""
    route = surface.routes.get(tool)
    if route is None:
        return any(b.role == "key" for p, b in tc.definition.bindings.items() if p == param)
    if route.rpc:
        return surface.row_param(tool) == param
    keyed = route.keyed
    if keyed is not None:
        return param in keyed.params
    collection = route.collection
    if collection is not None and len(route.steps) >= 2 and param in route.steps[-2].params:
        last = words(collection.literal)
        return bool(last) and is_plural(last[-1])  # /customers/{c}/cards, not /customers/{c}/discount
    return False


def _check(name: str, problems: list[str]) -> Any:
    from generator.gate.report import Check

    return Check(name, not problems, problems[0][:300] if problems else "")


def _consumers(tc: ToolChecks, surface: Surface, entity: str) -> list[tuple[str, str]]:
    """(tool, parameter) pairs that take an id of ``entity``: path keys after a segment naming it, parameters
    named like it (unless the planner reads them as another entity's), and the planner's own bindings."""
    pairs = set(surface.path_id_params(entity))
    for tool, param in surface.id_params(entity):
        definition = tc.runtime.spec.tool(tool)
        binding = definition.bindings.get(param)
        schema = definition.parameters.get("properties", {}).get(param, {})
        if schema.get("enum") or _binds_to(definition, binding) not in (None, entity):
            continue
        if squash(param) == squash(entity) and binding is not None and binding.role not in ("key", "parent", "via"):
            target = tc.runtime.entities.get(definition.behaviour.entity or "")
            column = target.field(binding.column or param) if target is not None else None
            if column is None or column.ref != entity:
                continue  # Stripe's sku "price" is an amount, not a price's id
        pairs.add((tool, param))
    for claimed in tc.runtime.spec.tools:
        for param, binding in claimed.bindings.items():
            if _binds_to(claimed, binding) == entity and (binding.lookup or "id") == "id" and (binding.column or "id") in (
                    "id", f"{entity}_id") or binding.role == "key" and claimed.behaviour.entity == entity and binding.column == "id":
                pairs.add((claimed.name, param))
    return sorted(pairs)


def _binds_to(tool: Any, binding: Any) -> str | None:
    """The entity whose id a binding says its parameter carries (None: no entity)."""
    if binding is None:
        return None
    if binding.role == "key" and (binding.column or "id") == "id":
        return str(tool.behaviour.entity) if tool.behaviour.entity else None
    if binding.role in ("parent", "via"):
        return str(binding.entity) if binding.entity else None
    return None


def _accepts(tc: ToolChecks, tool: str, param: str, example: dict[str, Any], surface: Surface) -> str | None:
    """Why ``tool`` does not accept the id ``tc``'s create returns in ``param`` (None when it does)."""
    if param not in example:
        return None
    tc.fresh()
    made = _call(tc, tc.name, tc.example.arguments)  # type: ignore[union-attr]
    if not made.success or not isinstance(made.data, dict):
        return None
    arguments = {**example, param: made.data["id"]}
    route = surface.routes.get(tool)
    entity = tc.definition.behaviour.entity or ""
    for step in route.parents if route is not None and not route.rpc else ():
        parent = surface.entity_of(step.literal)
        if parent is None or not step.params or param in step.params:
            continue
        value = _parent_of(tc, entity, parent, made.data)
        if value is None:
            return None  # the new row has no such parent: this tool cannot reach it
        arguments[step.params[-1]] = value
    consumer = tc.runtime.spec.tool(tool)
    in_path = {p for step in route.parents for p in step.params} if route is not None and not route.rpc else set()
    if consumer.behaviour.entity == entity:
        for other, binding in consumer.bindings.items():  # the parents the tool names the row under outside its
            # path (a comment's file, a message's project_id) are the new row's own, as a person would pass them
            if other != param and other not in in_path and binding.role == "parent" and binding.column \
                    and (binding.lookup or "id") == "id" and made.data.get(binding.column) is not None:
                arguments[other] = made.data[binding.column]
    fitted = _fitted(tc, tool, arguments)
    if fitted is None:
        return None
    result = _call(tc, tool, fitted)
    message = result.error_message or ""
    if result.success or str(result.error_code) not in ("not_found", "invalid_argument"):
        return None
    if str(result.error_code) == "invalid_argument" and f"'{param}'" not in message and str(made.data["id"]) not in message:
        return None  # refused for another argument (an amount over what the new row has)
    return (f"{param}={made.data['id']!r}, the id {tc.name} returned, gave {result.error_code}: "
            f"{(result.error_message or '')[:120]}")
