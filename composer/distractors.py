"""Near-miss distractor records: a copy of an item the task picks, different in one stated detail.

For a step that picks one item out of a list (the customer named in the instruction, the ticket the
task acts on), the distractor is a copy of that item's row with a new key and one column changed:
another organisation for a person with the same name, another status for a ticket with the same
subject, another amount for a charge. It is inserted as a setup record, so the agent sees both in
the same list; the instruction states the detail that tells them apart; the task checks that the
distractor stays untouched, and a replay that picks it instead of the target must fail.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Index, Table, UniqueConstraint

from composer.catalog import Catalog, ToolInfo
from composer.plan import field_value, resolve
from composer.runner import Runner, result_items
from composer.walk import DESCRIPTOR_NAMES, DESCRIPTOR_TYPES, Walk
from composer.words import role_of
from mcp_services.tasks.spec import SetupRecord

_STATE_NAMES = ("status", "state", "stage")


@dataclass(frozen=True, slots=True)
class Distractor:
    step: int  # the plan step whose pick it imitates
    record: SetupRecord
    key: str  # its primary key, as the diff names it
    select_value: Any  # its value of the step's key field (what a replay that picks it selects)
    differs: tuple[str, Any]  # (result field, the target's value): what the instruction must state


def _table_for(runner: Runner, service: str, key_value: Any) -> tuple[str, dict[str, Any]] | None:
    """The table whose single-column primary key holds ``key_value``, and that row."""
    for table in runner.tracker.tables(service):
        info = runner.tracker.table_info(service, table)
        if len(info.pk) != 1:
            continue
        row = runner.tracker.row(service, table, [key_value])
        if row is not None:
            return table, row
    return None


def _unique_columns(table: Table) -> set[str]:
    names = {c.name for c in table.columns if c.unique}
    for constraint in table.constraints:
        if isinstance(constraint, UniqueConstraint):
            names.update(c.name for c in constraint.columns)
    for index in table.indexes:
        if isinstance(index, Index) and index.unique:
            names.update(c.name for c in index.columns)
    return names


def _new_key(runner: Runner, service: str, table: str, key: Any, rng: random.Random) -> Any:
    for _ in range(20):
        if isinstance(key, str):
            match = re.match(r"^(.*?)(\d+)$", key)
            if match:
                digits = match.group(2)
                candidate: Any = f"{match.group(1)}{rng.randint(9 * 10 ** (len(digits) - 1) if len(digits) > 1 else 9, 10 ** len(digits) - 1):0{len(digits)}d}"
            else:
                candidate = f"{key}-{rng.randint(2, 99)}"
        elif isinstance(key, int):
            candidate = key + 100000 + rng.randint(0, 999)
        else:
            return None
        if runner.tracker.row(service, table, [candidate]) is None:
            return candidate
    return None


def _vary_unique(value: Any, rng: random.Random) -> Any:
    if isinstance(value, str) and "@" in value:
        local, domain = value.split("@", 1)
        return f"{local}{rng.randint(2, 9)}@{domain}"
    if isinstance(value, str):
        return f"{value}-{rng.randint(2, 99)}"
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 100000 + rng.randint(0, 999)
    return value


def _other_fk_value(runner: Runner, service: str, table: Table, column: str, current: Any, rng: random.Random) -> Any:
    col = table.columns[column]
    fks = list(col.foreign_keys)
    if not fks:
        return None
    target = fks[0].column
    conn = runner.tracker.connection(service)
    rows = conn.execute(
        f'SELECT "{target.name}" FROM "{target.table.name}" WHERE "{target.name}" IS NOT ? ORDER BY 1 LIMIT 40', (current,)
    ).fetchall()
    return rng.choice(rows)[0] if rows else None


def _mutations(
    tool: ToolInfo,
    table: Table,
    row: Mapping[str, Any],
    identity: bool,
    runner: Runner,
    service: str,
    rng: random.Random,
    keep: set[str],
) -> list[dict[str, Any]]:
    """Ways to change a copy so it differs in a detail a person can state, best first.

    ``keep``: normalised values the step searched by; columns holding them stay, or the copy would
    not show up where the target does.
    """
    fields = {f.path: f for f in tool.fields if "." not in f.path and not f.is_list}

    def kept(column: str) -> bool:
        return _norm(row.get(column)) in keep

    identity_moves: list[dict[str, Any]] = []
    for c in row:
        f = fields.get(c)
        if f and f.semtype == "company_name" and row[c] and not kept(c):
            others = [o.name for o in runner.world.organisations[1:] if o.name != row[c]]
            identity_moves.append({c: rng.choice(others)})
        elif f and f.semtype == "city" and row[c] and not kept(c):
            cities = sorted({o.city for o in runner.world.organisations} - {row[c]})
            if cities:
                identity_moves.append({c: rng.choice(cities)})
    for column in table.columns:
        c = column.name
        if column.foreign_keys and row.get(c) is not None and not kept(c):
            if role_of(c) in ("company", "organization", "organisation", "contact", "customer"):
                value = _other_fk_value(runner, service, table, c, row[c], rng)
                if value is not None:
                    identity_moves.append({c: value})
    item_moves: list[dict[str, Any]] = []
    for c in row:
        f = fields.get(c)
        if f is None or kept(c) or row[c] is None:
            continue
        if f.enum and (c in _STATE_NAMES or c.endswith("_status")):
            options = [v for v in f.enum if v != row[c]]
            if options:
                item_moves.append({c: rng.choice(options)})
        elif f.semtype == "money" and isinstance(row[c], (int, float)) and row[c] > 0:
            item_moves.append({c: round(float(row[c]) * rng.choice((1.5, 2.0, 3.0)), 2)})
        elif (f.semtype in ("subject", "file_name") or (f.semtype is None and c in ("name", "title", "summary"))) and isinstance(row[c], str):
            item_moves.append({c: _near_miss_text(row[c], rng)})
    shift = rng.choice((-21, -14, -9, -7))
    times = {c: _shift_days(v, shift) for c, v in row.items() if isinstance(v, str) and _ISO.match(v) and not kept(c)}
    if times:
        item_moves.append(times)
    return identity_moves + item_moves if identity else item_moves + identity_moves


def _near_miss_text(text: str, rng: random.Random) -> str:
    stem, dot, ext = text.rpartition(".")
    if dot and 1 <= len(ext) <= 5 and " " not in ext:
        return f"{stem} ({rng.choice(('old', 'draft', 'copy'))}).{ext}"
    return rng.choice((f"{text} (old)", f"Re: {text}", f"{text} - draft"))


def _shift_days(value: str, days: int) -> str:
    from datetime import datetime, timedelta

    if len(value) >= 19 and value[10] == "T":
        moment = datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S") + timedelta(days=days)
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + value[19:]
    moment = datetime.strptime(value[:10], "%Y-%m-%d") + timedelta(days=days)
    return moment.strftime("%Y-%m-%d") + value[10:]


def _norm(value: Any) -> str:
    return " ".join(str(value).lower().split())


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2})?")


def make_distractor(
    catalog: Catalog, runner: Runner, walk: Walk, step: int, rng: random.Random, setup: list[SetupRecord]
) -> Distractor | None:
    """A near-miss copy of the item ``walk`` picks at ``step``, or None if none can be told apart.

    The runner must hold the fresh state plus ``setup`` (earlier distractors); it is left so.
    """
    spec = walk.specs[step]
    tool = catalog.tool(spec.service, spec.tool)
    if tool.result_kind == "object" or tool.key_field is None or spec.select_value is None:
        return None
    found = _table_for(runner, spec.service, spec.select_value)
    if found is None:
        return None
    table_name, row = found
    table = runner.episode.stores[spec.service].table(table_name)
    pk = [c.name for c in table.primary_key.columns][0]
    if row.get(pk) != spec.select_value and tool.key_field not in row:
        return None
    new_key = _new_key(runner, spec.service, table_name, row[pk], rng)
    if new_key is None:
        return None
    base = dict(row)
    base[pk] = new_key
    for column in _unique_columns(table) - {pk}:
        if base.get(column) is not None:
            base[column] = _vary_unique(base[column], rng)
    arguments = {name: resolve(expr, walk.items) for name, expr in spec.args}
    keep = {_norm(v) for v in arguments.values() if not isinstance(v, (list, dict))}
    keep |= {_norm(v) for v in arguments.values() if isinstance(v, list) for v in v}
    for change in _mutations(tool, table, row, step == 0, runner, spec.service, rng, keep)[:4]:
        clone = dict(base)
        clone.update(change)
        record = SetupRecord(service=spec.service, table=table_name, row=clone)
        state = runner.checkpoint(spec.service)
        try:
            runner.insert([record])
        except Exception:  # noqa: BLE001 - a copy the store refuses (a constraint) is just not a distractor
            runner.rollback(spec.service, state)
            continue
        differs = _visible_difference(catalog, runner, walk, step, new_key if tool.key_field == pk else clone.get(tool.key_field))
        if differs is None:
            runner.rollback(spec.service, state)
            continue
        setup.append(record)
        select_value = new_key if tool.key_field == pk else clone.get(tool.key_field)
        return Distractor(step, record, str(new_key), select_value, differs)
    return None


def _visible_difference(catalog: Catalog, runner: Runner, walk: Walk, step: int, clone_key: Any) -> tuple[str, Any] | None:
    """Run the step's read again: both items must show, with a stateable field that differs."""
    spec = walk.specs[step]
    tool = catalog.tool(spec.service, spec.tool)
    arguments = {name: resolve(expr, walk.items) for name, expr in spec.args}
    result = runner.call(spec.service, spec.tool, arguments)
    if not result.success:
        return None
    items = result_items(tool, result.data)
    target = next((it for it in items if field_value(it, tool.key_field or "") == spec.select_value), None)
    clone = next((it for it in items if field_value(it, tool.key_field or "") == clone_key), None)
    if target is None or clone is None:
        return None
    preferred: list[str] = []
    for semtype in DESCRIPTOR_TYPES:
        preferred += [f.path for f in tool.fields if f.semtype == semtype and not f.is_list and "." not in f.path]
    preferred += [f.path for f in tool.fields if f.enum and not f.is_list and "." not in f.path]
    preferred += [f.path for f in tool.fields if f.path in DESCRIPTOR_NAMES]
    preferred += [f.path for f in tool.fields if f.semtype in ("city", "datetime") and not f.is_list and "." not in f.path]
    for path in preferred:
        a, b = field_value(target, path), field_value(clone, path)
        if a is not None and a != b and not isinstance(a, (dict, list)):
            return path, a
    return None
