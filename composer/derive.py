"""Checks and rubric from the reference run: what must exist afterwards, what must flow, what must not change.

- Each write step gives ``row_exists`` checks on the rows it added or changed, matching only
  meaningful columns: values the plan passed (looked-up ones included), references to existing
  records, and state fields it moved (``status``...). Generated ids and timestamps are never
  matched unless they came from a read.
- Each looked-up value that crosses into another service's write gives an ``info_flow`` check.
- A question gives an ``answer`` check; a house rule its own check; each distractor a
  ``row_unchanged`` check; the whole diff a ``no_collateral`` check.
- Every rubric criterion binds at least one positive check, so none can pass on inaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Table

from mcp_services.kernel.diff import StateDiff
from mcp_services.tasks.checks import AnswerCheck, InfoFlow, NoCollateral, RowExists, RowUnchanged
from mcp_services.tasks.grading import RubricItem

from composer.catalog import Catalog
from composer.distractors import Distractor
from composer.plan import Composed, Cond, ListOf, Lit, Ref, StepSpec, field_value, resolve, text_of
from composer.policy import Policy
from composer.runner import Run
from composer.walk import is_timestamp

_STATE_NAMES = ("status", "state", "stage")

#: Info-flow criteria per task: the first few crossings say it; more only inflate the rubric.
MAX_FLOWS = 3
_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:40]


@dataclass(slots=True)
class Derived:
    checks: list[Any] = field(default_factory=list)
    rubric: list[RubricItem] = field(default_factory=list)
    flows: list[InfoFlow] = field(default_factory=list)
    positive: list[str] = field(default_factory=list)  # ids of checks that fail on inaction by construction
    unchecked_writes: list[int] = field(default_factory=list)  # write steps whose change no check can name

    def add(self, check: Any, positive: bool = True) -> str:
        existing = {c.id for c in self.checks}
        base, n = check.id, 2
        while check.id in existing:
            check = check.model_copy(update={"id": f"{base}-{n}"})
            n += 1
        self.checks.append(check)
        if positive:
            self.positive.append(check.id)
        return str(check.id)


@dataclass(frozen=True, slots=True)
class Describe:
    """Phrases from the verbaliser for criterion descriptions."""

    step: Callable[[int], str]
    value: Callable[[Ref], str]
    distractor: Callable[[Distractor], str]
    policy: Callable[[Policy], str]
    answer: Callable[[Ref], str]


def _arg_values(spec: StepSpec, arguments: Mapping[str, Any], items: Sequence[Any]) -> list[tuple[str, Any, Any]]:
    """(name, expression, concrete value) for each argument."""
    return [(name, expr, arguments.get(name)) for name, expr in spec.args]


def _matcher(expr: Any, arg: Any, value: Any, items: Sequence[Any]) -> Any | None:
    """How a column holding ``value`` is matched, given the argument that produced it (None: not from it)."""
    if isinstance(expr, Composed):
        refs = [p for p in expr.parts if isinstance(p, Ref)]
        if isinstance(value, str) and isinstance(arg, str) and value.strip() and arg.strip() in value:
            if refs:
                return {"$icontains": text_of(resolve(refs[0], items))}
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
        if arg == value or arg.lower() == value.lower():
            if isinstance(expr, Lit) and expr.stated and len(arg) > 12:
                return {"$icontains": arg}
            return value
        if isinstance(expr, Lit) and expr.stated and len(arg) > 12 and arg.lower() in value.lower():
            return {"$icontains": arg}
    return None


def _contains(values: list[Any], item: Any) -> bool:
    return any(_same(v, item) for v in values)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


def _fk_columns(table: Table) -> set[str]:
    return {c.name for c in table.columns if c.foreign_keys}


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
) -> list[RowExists]:
    """``row_exists`` checks for the rows one write step added or changed (as they are at the end)."""
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
            if after is None:
                continue
            row = after.after
            match = {c: row[c] for c in pk}
            moved: dict[str, Any] = {}
            for column in t.changed[key].fields:
                value = row.get(column)
                if value is None or column in pk:
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
                elif not is_timestamp(value):
                    moved[column] = value
            if len(match) == len(pk):
                match.update(moved)  # nothing named by the arguments: every real change counts
            if len(match) > len(pk):
                checks.append(
                    RowExists(id=f"{service}-{slug(table_name)}-changed", service=service, table=table_name, change="changed", match=match)
                )
    return checks


def derive(
    catalog: Catalog,
    specs: Sequence[StepSpec],
    run: Run,
    diff: Mapping[str, StateDiff],
    tables: Mapping[str, Mapping[str, Table]],
    describe: Describe,
    *,
    answer: Ref | None,
    answer_value: Any,
    distractors: Sequence[Distractor],
    policy: Policy | None,
    stated_values: set[str],
) -> Derived:
    items = run.items
    out = Derived()
    created_keys = {
        (table, key)
        for service, state in diff.items()
        for table, t in state.tables.items()
        for key in t.added
    }
    step_checks: dict[int, list[str]] = {}
    for j, (spec, step) in enumerate(zip(specs, run.steps, strict=True)):
        if step.changes is None:
            continue
        checks = row_checks(
            catalog, spec.service, spec, step.call.arguments, items, step.changes, diff[spec.service],
            tables[spec.service], created_keys,
        )
        if checks and _met_by_other_steps(checks, spec.service, step.changes, diff):
            out.unchecked_writes.append(j)  # leaving this step out would still pass
            continue
        ids = [out.add(check) for check in checks]
        if ids:
            step_checks[j] = ids
            out.rubric.append(
                RubricItem(id=f"step-{j + 1}-{slug(spec.tool)}", description=describe.step(j), checks=ids)
            )
        elif step.changes:
            out.unchecked_writes.append(j)
    _add_flows(catalog, specs, run, diff, describe, out, stated_values)
    if answer is not None:
        expected = answer_value
        check = AnswerCheck(
            id="answer",
            description="The final answer states the value asked for",
            expected=expected,
            match="number" if isinstance(expected, (int, float)) and not isinstance(expected, bool) else "contains",
        )
        aid = out.add(check)
        out.rubric.append(RubricItem(id="answer", description=describe.answer(answer), checks=[aid]))
    if policy is not None:
        pid = _policy_check(policy, specs, run, diff, tables, out)
        if pid is not None:
            out.rubric.append(RubricItem(id="policy", description=describe.policy(policy), checks=[pid]))
    anchor_positive = out.positive[0] if out.positive else None
    for n, distractor in enumerate(distractors, 1):
        record = distractor.record
        did = out.add(
            RowUnchanged(
                id=f"distractor-{n}-untouched",
                description="A near-miss record the task does not ask for stays as it was",
                service=record.service,
                table=record.table,
                key=distractor.key,
            ),
            positive=False,
        )
        positive = _positive_for_step(distractor.step, specs, step_checks) or anchor_positive
        if positive is None:
            continue
        out.rubric.append(
            RubricItem(id=f"distractor-{n}", description=describe.distractor(distractor), checks=[did, positive])
        )
    collateral = NoCollateral(
        id="no-collateral",
        description="Nothing changed beyond what the task needs",
        changed_keys={
            service: {table: sorted(set(t.changed) | set(t.deleted)) for table, t in state.tables.items() if t.changed or t.deleted}
            for service, state in diff.items()
            if any(t.changed or t.deleted for t in state.tables.values())
        },
        added_counts={
            service: {table: len(t.added) for table, t in state.tables.items() if t.added}
            for service, state in diff.items()
            if any(t.added for t in state.tables.values())
        },
    )
    cid = out.add(collateral, positive=False)
    if anchor_positive is not None:
        out.rubric.append(
            RubricItem(id="no-collateral", description="Changes nothing the task does not ask for", checks=[cid, anchor_positive])
        )
    return out


def _met_by_other_steps(checks: Sequence[RowExists], service: str, own: StateDiff, final: Mapping[str, StateDiff]) -> bool:
    """Whether rows that other steps added already satisfy every check of one step's added rows."""
    if any(c.change != "added" for c in checks):
        return False
    rest = {
        name: replace(t, added={k: row for k, row in t.added.items() if k not in own.table(name).added})
        for name, t in final[service].tables.items()
    }
    without = {**final, service: StateDiff(rest)}
    return all(c.holds(without, None) for c in checks)


def _positive_for_step(step: int, specs: Sequence[StepSpec], step_checks: Mapping[int, list[str]]) -> str | None:
    """A check on a write that acts on (or after) the item picked at ``step``."""
    for j in sorted(step_checks):
        if any(isinstance(r, Ref) and r.step == step for _, e in specs[j].args for r in _refs(e)):
            return step_checks[j][0]
    return None


def _refs(expr: Any) -> list[Ref]:
    if isinstance(expr, Ref):
        return [expr]
    if isinstance(expr, Composed):
        return [p for p in expr.parts if isinstance(p, Ref)]
    if isinstance(expr, ListOf):
        return [r for i in expr.items for r in _refs(i)]
    if isinstance(expr, Cond):
        return [expr.ref]
    return []


def _touched_rows(step_changes: StateDiff, final: StateDiff) -> list[tuple[str, dict[str, Any]]]:
    rows: list[tuple[str, dict[str, Any]]] = []
    for table, t in sorted(step_changes.tables.items()):
        final_table = final.table(table)
        for key in sorted(t.added):
            if key in final_table.added:
                rows.append((table, final_table.added[key]))
        for key in sorted(t.changed):
            if key in final_table.changed:
                rows.append((table, final_table.changed[key].after))
    return rows


def _holds(value: Any, cell: Any) -> bool:
    if isinstance(cell, list):
        return any(_holds(value, c) for c in cell)
    if isinstance(value, str) and isinstance(cell, str):
        return value.lower() in cell.lower()
    if isinstance(value, (int, float)) and isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return abs(float(value) - float(cell)) <= 0.005
    return False


def _add_flows(
    catalog: Catalog,
    specs: Sequence[StepSpec],
    run: Run,
    diff: Mapping[str, StateDiff],
    describe: Describe,
    out: Derived,
    stated_values: set[str],
) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    for j, (spec, step) in enumerate(zip(specs, run.steps, strict=True)):
        if step.changes is None or len(out.flows) >= MAX_FLOWS:
            continue
        rows = _touched_rows(step.changes, diff[spec.service])
        for _, expr in spec.args:
            for ref in _refs(expr):
                if isinstance(expr, Cond):
                    continue
                source = specs[ref.step]
                source_tool = catalog.tool(source.service, source.tool)
                if source.service == spec.service and not source_tool.is_write:
                    continue
                value = field_value(run.items[ref.step], ref.field)
                if value is None or isinstance(value, bool) or " ".join(str(value).lower().split()) in stated_values:
                    continue
                if isinstance(value, str) and len(value) < 4:
                    continue
                if isinstance(value, (int, float)) and value <= 0:
                    continue  # a zero says nothing about where it came from
                for table, row in rows:
                    column = next((c for c, cell in row.items() if _holds(value, cell)), None)
                    if column is None:
                        continue
                    key = (str(value), spec.service, table, column)
                    if key in seen:
                        break
                    seen.add(key)
                    check = InfoFlow(
                        id=f"flow-{slug(ref.field)}-to-{spec.service}",
                        description=f"{source.service}.{source.tool} -> {spec.service}.{table}.{column}",
                        value=value if isinstance(value, (str, int, float)) else str(value),
                        source_service=source.service,
                        source_tool=source.tool,
                        service=spec.service,
                        table=table,
                        column=column,
                    )
                    if len(out.flows) >= MAX_FLOWS:
                        break
                    fid = out.add(check)
                    out.flows.append(check)
                    out.rubric.append(
                        RubricItem(
                            id=f"flow-{len(out.flows)}",
                            description=f"{describe.value(ref)[:1].upper()}{describe.value(ref)[1:]} (found in {source.service}) is used in {spec.service}",
                            checks=[fid],
                        )
                    )
                    break


def _policy_check(
    policy: Policy,
    specs: Sequence[StepSpec],
    run: Run,
    diff: Mapping[str, StateDiff],
    tables: Mapping[str, Mapping[str, Table]],
    out: Derived,
) -> str | None:
    spec = specs[policy.step]
    step = run.steps[policy.step]
    if step.changes is None:
        return None
    for table, row in _touched_rows(step.changes, diff[spec.service]):
        for column, cell in row.items():
            if policy.kind == "threshold" and cell == policy.expected and isinstance(cell, str):
                return out.add(
                    RowExists(
                        id="policy-rule",
                        description="The house rule decided this value",
                        service=spec.service,
                        table=table,
                        match={**_key_match(row, diff[spec.service], tables[spec.service][table]), column: cell},
                    )
                )
            if policy.kind == "signature" and isinstance(cell, str) and str(policy.expected).lower() in cell.lower():
                return out.add(
                    RowExists(
                        id="policy-sign-off",
                        description="Text the agent wrote carries the required sign-off",
                        service=spec.service,
                        table=table,
                        match={column: {"$icontains": str(policy.expected)}},
                    )
                )
    return None


def _key_match(row: Mapping[str, Any], final: StateDiff, table: Table) -> dict[str, Any]:
    """Match a changed row by its key (it existed before, the agent had to find it); an added row by nothing."""
    pk = [c.name for c in table.primary_key.columns]
    key = "|".join(str(row[k]) for k in pk)
    return {k: row[k] for k in pk} if key in final.table(table.name).changed else {}
