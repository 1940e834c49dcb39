"""Checks on an episode's outcome, and grading a task's rubric from them.

A check is frozen data (part of a task); ``evaluate`` reads it against what an agent did: the
episode's state diff (initial state -> final state, per service) and the agent's final answer.
Grading is the same function for the composer (verifying a task), the harness (grading a rollout)
and training (rewards), so a grade means one thing everywhere.

Value matchers in ``row_exists``: a plain JSON value must be equal; an object with one operator key
matches loosely: ``{"$icontains": "re_0007"}`` (text contains, case-insensitive),
``{"$includes": ["a@x.example"]}`` (a list contains every item, case-insensitive for text),
``{"$approx": 120.5}`` (a number within 0.01).

Negative checks (``row_unchanged``, ``no_collateral``) pass on inaction by design; a rubric criterion
that uses one must also bind a positive check, which the composer guarantees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcp_services.kernel.diff import StateDiff

ChangeKind = Literal["added", "changed", "added_or_changed"]


class _CheckBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    description: str = ""


class RowExists(_CheckBase):
    """Some row of ``service.table`` that the run added (or changed) matches every value in ``match``."""

    kind: Literal["row_exists"] = "row_exists"
    service: str
    table: str
    change: ChangeKind = "added_or_changed"
    match: dict[str, Any]


class RowUnchanged(_CheckBase):
    """The row with primary key ``key`` is neither changed nor deleted (a distractor stays untouched)."""

    kind: Literal["row_unchanged"] = "row_unchanged"
    service: str
    table: str
    key: str


class InfoFlow(_CheckBase):
    """A value the agent had to read in one service appears in a row it wrote in another."""

    kind: Literal["info_flow"] = "info_flow"
    value: str | int | float
    source_service: str
    source_tool: str
    service: str
    table: str
    column: str


class NoCollateral(_CheckBase):
    """Nothing changed beyond what the task needs.

    ``changed_keys``: per service and table, the only rows that may be changed or deleted;
    ``added_counts``: per service and table, at most this many rows may be added.
    """

    kind: Literal["no_collateral"] = "no_collateral"
    changed_keys: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    added_counts: dict[str, dict[str, int]] = Field(default_factory=dict)


class AnswerCheck(_CheckBase):
    """The agent's final answer states the expected value."""

    kind: Literal["answer"] = "answer"
    expected: str | int | float | list[str]
    match: Literal["contains", "number", "all_of"] = "contains"


Check = Annotated[RowExists | RowUnchanged | InfoFlow | NoCollateral | AnswerCheck, Field(discriminator="kind")]

#: Kinds that can pass on an untouched world; a criterion needs a positive check beside them.
NEGATIVE_KINDS = frozenset({"row_unchanged", "no_collateral"})


class RubricItem(BaseModel):
    """A named criterion: it passes when all of its checks pass."""

    model_config = ConfigDict(extra="allow", frozen=True)
    id: str = Field(min_length=1)
    description: str
    checks: list[str] = Field(min_length=1)


class Grade(BaseModel):
    """Per-check and per-criterion results, the rubric score (mean of criteria) and pass (all)."""

    checks: dict[str, bool]
    criteria: dict[str, bool]
    rubric_score: float
    passed: bool
    collateral: list[str] = Field(default_factory=list)


# -- matching ------------------------------------------------------------------------------------


def value_matches(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict) and len(expected) == 1 and next(iter(expected)).startswith("$"):
        op, target = next(iter(expected.items()))
        if op == "$icontains":
            return isinstance(actual, str) and _norm(str(target)) in _norm(actual)
        if op == "$includes":
            if not isinstance(actual, list):
                return False
            have = {_norm(a) if isinstance(a, str) else a for a in actual}
            return all((_norm(t) if isinstance(t, str) else t) in have for t in target)
        if op == "$approx":
            return isinstance(actual, (int, float)) and abs(float(actual) - float(target)) <= 0.01
        raise ValueError(f"unknown matcher {op!r}")
    if isinstance(expected, str) and isinstance(actual, str):
        return expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool):
        return abs(float(expected) - float(actual)) <= 1e-9
    return bool(expected == actual)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _candidate_rows(diff: Mapping[str, StateDiff], service: str, table: str, change: ChangeKind) -> list[dict[str, Any]]:
    state = diff.get(service)
    if state is None:
        return []
    t = state.table(table)
    rows: list[dict[str, Any]] = []
    if change in ("added", "added_or_changed"):
        rows.extend(t.added.values())
    if change in ("changed", "added_or_changed"):
        rows.extend(c.after for c in t.changed.values())
    return rows


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def answer_matches(check: AnswerCheck, answer: str | None) -> bool:
    if not answer:
        return False
    text = _norm(answer)
    if check.match == "number":
        target = float(check.expected)  # type: ignore[arg-type]
        numbers = [float(n.replace(",", "")) for n in _NUMBER.findall(answer)]
        return any(abs(n - target) <= 0.005 for n in numbers)
    if check.match == "all_of":
        items = check.expected if isinstance(check.expected, list) else [str(check.expected)]
        return all(_norm(str(item)) in text for item in items)
    return _norm(str(check.expected)) in text


# -- evaluation ----------------------------------------------------------------------------------


def evaluate(check: Any, diff: Mapping[str, StateDiff], answer: str | None) -> bool:
    """Whether one check holds for a run with this state diff and final answer."""
    if isinstance(check, RowExists):
        return any(
            all(col in row and value_matches(want, row[col]) for col, want in check.match.items())
            for row in _candidate_rows(diff, check.service, check.table, check.change)
        )
    if isinstance(check, RowUnchanged):
        state = diff.get(check.service)
        if state is None:
            return True
        t = state.table(check.table)
        return check.key not in t.changed and check.key not in t.deleted
    if isinstance(check, InfoFlow):
        needle = {"$icontains": str(check.value)} if isinstance(check.value, str) else check.value
        for row in _candidate_rows(diff, check.service, check.table, "added_or_changed"):
            actual = row.get(check.column)
            if isinstance(actual, list):
                if any(value_matches(needle, a) for a in actual):
                    return True
            elif value_matches(needle, actual):
                return True
        return False
    if isinstance(check, NoCollateral):
        return not collateral_changes(check, diff)
    if isinstance(check, AnswerCheck):
        return answer_matches(check, answer)
    raise TypeError(f"unknown check {check!r}")


def collateral_changes(check: NoCollateral, diff: Mapping[str, StateDiff]) -> list[str]:
    """Human-readable descriptions of every change the task did not call for."""
    found: list[str] = []
    for service, state in sorted(diff.items()):
        for table, t in sorted(state.tables.items()):
            allowed_keys = set(check.changed_keys.get(service, {}).get(table, ()))
            for key in sorted(set(t.changed) | set(t.deleted)):
                if key not in allowed_keys:
                    verb = "changed" if key in t.changed else "deleted"
                    found.append(f"{service}.{table} row {key} was {verb}")
            budget = check.added_counts.get(service, {}).get(table, 0)
            if len(t.added) > budget:
                found.append(f"{service}.{table}: {len(t.added)} rows added, at most {budget} expected")
    return found


def grade(
    checks: list[Any], rubric: list[RubricItem], diff: Mapping[str, StateDiff], answer: str | None
) -> Grade:
    """Evaluate every check and roll them up into the rubric."""
    results = {check.id: evaluate(check, diff, answer) for check in checks}
    criteria = {}
    for item in rubric:
        missing = [c for c in item.checks if c not in results]
        if missing:
            raise ValueError(f"rubric criterion {item.id!r} names unknown checks: {', '.join(missing)}")
        criteria[item.id] = all(results[c] for c in item.checks)
    collateral: list[str] = []
    for check in checks:
        if isinstance(check, NoCollateral):
            collateral.extend(collateral_changes(check, diff))
    score = sum(criteria.values()) / len(criteria) if criteria else 0.0
    return Grade(
        checks=results,
        criteria=criteria,
        rubric_score=score,
        passed=bool(criteria) and all(criteria.values()),
        collateral=collateral,
    )
