"""Proving referring expressions: each one the instruction uses picks out exactly one record.

A ``Reference`` says how its record is found: conditions on the record's fields (``status`` is open),
on fields of records it points at (``requester_id.email`` is Ana's address: through the ticket's
``requester_id`` to the user it names), and optionally "the latest" by a column. ``resolve`` runs those
conditions on the world as the agent will find it (setup included) and returns every match; a task is
kept only when the match is its record alone. ``relation_of`` names the real relation the conditions
follow, from the fields' declared roles and refs (``helpdesk.ticket.requester_id (requester) ->
helpdesk.user.email``), for the audit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_services.kernel.entity import EntityRuntime

from composer.scenario import Rec, Reference, Scenario, StateView


def _same(want: Any, have: Any) -> bool:
    if isinstance(want, tuple):
        return any(_same(w, have) for w in want)
    if isinstance(want, str) and isinstance(have, str):
        return want.casefold() == have.casefold()
    return bool(want == have)


def _follow(s: StateView, service: str, runtime: EntityRuntime, row: Mapping[str, Any], path: str, cache: dict[tuple[str, Any], Any]) -> Any:
    """The value at ``path`` from a row: ``"status"``, or ``"requester_id.email"`` through a ref field."""
    head, _, rest = path.partition(".")
    value = row.get(head)
    if not rest or value is None:
        return value
    target = runtime.target_of(head)
    key = (target.name, value)
    if key not in cache:
        found = s.records(service, target.name, where={"id": value})
        cache[key] = found[0].row if found else None
    target_row = cache[key]
    return None if target_row is None else _follow(s, service, target, target_row, rest, cache)


def value_at(s: StateView, rec: Rec, path: str) -> Any:
    """The value at ``path`` from a record (``"status"``, or ``"employee_id.name"`` through a ref field)."""
    return _follow(s, rec.service, s.runtime(rec.service, rec.entity), rec.row, path, {})


def resolve(s: StateView, reference: Reference) -> list[str]:
    """The keys of every record the reference's conditions pick out, in the current state."""
    rec = reference.rec
    runtime = s.runtime(rec.service, rec.entity)
    # Conditions on the record's own stored columns run in SQL; the rest (paths, derived values) here.
    direct = {k: v for k, v in reference.where.items() if "." not in k and k in runtime.column_set}
    cache: dict[tuple[str, Any], Any] = {}
    matches = [
        r
        for r in s.records(rec.service, rec.entity, where=direct, fold=True)
        if all(_same(want, _follow(s, rec.service, runtime, r.row, path, cache)) for path, want in reference.where.items())
    ]
    if reference.latest and matches:
        column = reference.latest
        top = max(str(r.get(column) or "") for r in matches)
        matches = [r for r in matches if str(r.get(column) or "") == top]
    return [r.key for r in matches]


def relation_of(s: StateView, reference: Reference) -> str:
    """The relation a reference follows, in terms of declared fields, roles and refs."""
    rec = reference.rec
    runtime = s.runtime(rec.service, rec.entity)
    parts = []
    for path in reference.where:
        current = runtime
        hops = []
        for name in path.split("."):
            f = current.definition.field(name)
            role = f" ({f.role})" if f is not None and f.role else ""
            hops.append(f"{rec.service}.{current.name}.{name}{role}")
            if f is not None and f.ref:
                current = current.target_of(name)
        parts.append(" -> ".join(hops))
    label = reference.relation
    return f"{label}: " + "; ".join(parts) + (f"; latest by {reference.latest}" if reference.latest else "")


def unresolved(s: Scenario) -> list[str]:
    """Why a scenario's references do not each pick out their own record (empty when they all do)."""
    problems = []
    for reference in s.references:
        keys = resolve(s.view, reference)
        if keys != [reference.rec.key]:
            what = "nothing" if not keys else f"{len(keys)} records" if len(keys) > 1 else f"another record ({keys[0]})"
            problems.append(f"{reference.text!r} picks out {what}, not {reference.rec.entity} {reference.rec.key}")
    return problems
