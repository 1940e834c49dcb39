"""Row checks from the reference run: what each write must leave behind, matched on meaningful columns.

A write step gives ``row_exists`` checks on the rows it added or changed, matching only columns
whose values the plan passed (looked-up ones included), references to existing records, and state
fields it moved (``status``...). Generated ids and timestamps are never matched unless they came
from a read. ``composer.compose`` adds the rest (flows, traps, policy, answer, no collateral).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Table

from mcp_services.kernel.diff import StateDiff
from mcp_services.tasks.checks import ChangeKind, RowDeleted, RowExists, names
from mcp_services.tasks.surface import kind_of

from composer.catalog import Catalog
from composer.plan import Composed, Lit, Ref, StepSpec, resolve

_STATE_NAMES = ("status", "state", "stage")

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:40]


_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def is_timestamp(value: Any) -> bool:
    return isinstance(value, str) and bool(_TIMESTAMP.match(value))


def _arg_values(spec: StepSpec, arguments: Mapping[str, Any], items: Sequence[Any]) -> list[tuple[str, Any, Any]]:
    """(name, expression, concrete value) for each argument."""
    return [(name, expr, arguments.get(name)) for name, expr in spec.args]


def _matcher(expr: Any, arg: Any, value: Any, items: Sequence[Any]) -> Any | None:
    """How a column holding ``value`` is matched, given the argument that produced it (None: not from it)."""
    if isinstance(expr, Composed):
        refs = [p for p in expr.parts if isinstance(p, Ref)]
        if isinstance(value, str) and isinstance(arg, str) and value.strip() and arg.strip() in value:
            if refs:
                found = resolve(refs[0], items)
                if isinstance(found, (str, int, float)) and not isinstance(found, bool):
                    return {"$states": [{"kind": kind_of(found), "value": found}]}
                return {"$icontains": str(found)}
            literal = max((p for p in expr.parts if isinstance(p, str)), key=len, default="")
            return {"$icontains": literal.strip()[:60]} if literal.strip() else None
        return None
    if isinstance(arg, list):
        if isinstance(value, list) and arg and all(_contains(value, a) for a in arg):
            return {"$includes": arg}
        if len(arg) == 1 and _same(arg[0], value):
            return value
        return None
    if isinstance(arg, bool) or isinstance(value, bool):
        return value if arg == value else None
    if isinstance(arg, (int, float)) and isinstance(value, (int, float)):
        return {"$approx": value} if abs(float(arg) - float(value)) <= 0.005 else None
    if isinstance(arg, str) and isinstance(value, str):
        # A name or title the request states is matched as people write it: case, quotes and punctuation aside.
        if isinstance(expr, Lit) and expr.stated and _is_name(arg) and (names(arg, value) or (len(arg) > 12 and arg.lower() in value.lower())):
            return {"$names": arg}
        if arg == value or arg.lower() == value.lower():
            if isinstance(expr, Lit) and expr.stated and len(arg) > 12:
                return {"$icontains": arg}
            return value
    return None


def _is_name(text: str) -> bool:
    """Words a request states as a name or title (not a time, an address or a code it gives as written)."""
    return " " in text.strip() and any(c.isalpha() for c in text) and not is_timestamp(text) and "@" not in text


def _contains(values: list[Any], item: Any) -> bool:
    return any(_same(v, item) for v in values)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


def _fk_columns(table: Table) -> set[str]:
    return {c.name for c in table.columns if c.foreign_keys}


def deleted_checks(service: str, changes: StateDiff) -> list[RowDeleted]:
    """A ``row_deleted`` check for every row one write step deleted."""
    return [
        RowDeleted(id=f"{service}-{slug(table)}-deleted", service=service, table=table, key=key)
        for table, t in sorted(changes.tables.items()) for key in sorted(t.deleted)
    ]


def row_checks(
    catalog: Catalog,
    service: str,
    spec: StepSpec,
    arguments: Mapping[str, Any],
    items: Sequence[Any],
    changes: StateDiff,
    final: StateDiff,
    tables: Mapping[str, Table],
    created_keys: set[tuple[str, str]],
    unstated: Sequence[Any] = (),
) -> list[RowExists]:
    """``row_exists`` checks for the rows one write step added or changed (as they are at the end). ``unstated``: the
    values of arguments the request leaves to the agent (a reason, a note's wording): a column holding one is
    checked for being filled, never for those words."""
    checks: list[RowExists] = []
    args = _arg_values(spec, arguments, items)
    for table_name, t in sorted(changes.tables.items()):
        table = tables[table_name]
        pk = [c.name for c in table.primary_key.columns]
        fks = _fk_columns(table)
        final_table = final.table(table_name)
        for key in sorted(t.added):
            row = final_table.added.get(key)
            if row is None:
                continue
            match: dict[str, Any] = {}
            for column, value in row.items():
                if value is None or value == "" or value == [] or column in pk:
                    continue
                for _, expr, arg in args:
                    matcher = _matcher(expr, arg, value, items)
                    if matcher is not None:
                        match[column] = matcher
                        break
                else:
                    if column in fks and isinstance(value, str) and (table_name, value) not in created_keys:
                        if not any((tn, value) in created_keys for tn in tables):
                            match[column] = value  # a reference to an existing record the arguments chose
            if any(c not in fks for c in match) or (match and len(t.added) == 1):
                checks.append(
                    RowExists(id=f"{service}-{slug(table_name)}-added", service=service, table=table_name, change="added", match=match)
                )
        for key in sorted(t.changed):
            after = final_table.changed.get(key)
            # A record the plan created and then changed (tagged, assigned) is an added row at the end.
            row = after.after if after is not None else final_table.added.get(key)
            if row is None:
                continue
            change: ChangeKind = "changed" if after is not None else "added"
            match = {c: row[c] for c in pk}
            moved: dict[str, Any] = {}
            for column in t.changed[key].fields:
                value = row.get(column)
                if column in pk:
                    continue
                if value is None:  # cleared (a link removed, a field emptied): a real change, named by no argument
                    moved[column] = None
                    continue
                from_arg = None
                for _, expr, arg in args:
                    from_arg = _matcher(expr, arg, value, items)
                    if from_arg is not None:
                        break
                if from_arg is not None:
                    match[column] = from_arg
                elif (column in _STATE_NAMES or column.endswith("_status")) and not is_timestamp(value):
                    match[column] = value
                elif value in unstated:
                    moved[column] = {"$filled": True}
                elif not is_timestamp(value):
                    moved[column] = value
            if len(match) == len(pk):
                match.update(moved)  # nothing named by the arguments: every real change counts
            if len(match) > len(pk):
                checks.append(
                    RowExists(id=f"{service}-{slug(table_name)}-changed", service=service, table=table_name, change=change, match=match)
                )
    return checks


def met_by_other_steps(checks: Sequence[RowExists], service: str, own: StateDiff, final: Mapping[str, StateDiff]) -> bool:
    """Whether rows that other steps added already satisfy every check of one step's added rows.

    Then leaving the step out would still pass (a reply and a forward in one thread look alike): the
    step has no check of its own.
    """
    if any(c.change != "added" for c in checks):
        return False
    # A row another step created and this one changed (tagged, assigned) owes its values to this step.
    if any(isinstance(c.match.get("id"), str) and c.match["id"] not in own.table(c.table).added for c in checks):
        return False
    rest = {
        name: replace(t, added={k: row for k, row in t.added.items() if k not in own.table(name).added})
        for name, t in final[service].tables.items()
    }
    without = {**final, service: StateDiff(rest)}
    return all(c.holds(without, None) for c in checks)
