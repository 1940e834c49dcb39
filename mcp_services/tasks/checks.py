"""Checks on an episode's outcome: frozen data in a task, each able to say whether it holds.

A check reads what an agent did: the episode's state diff (initial state -> final state, per
service) and the agent's final answer. ``Check`` is the union a task's ``checks`` field holds, told
apart by ``kind``; every member answers ``holds(diff, answer)``, so grading never asks which kind a
check is (``mcp_services.tasks.grading``).

Value matchers in ``row_exists``: a plain JSON value must be equal; an object with one operator key
matches loosely: ``{"$icontains": "re_0007"}`` (text contains, case-insensitive),
``{"$includes": ["a@x.example"]}`` (a list contains every item, case-insensitive for text),
``{"$approx": 120.5}`` (a number within 0.01), ``{"$in": ["room_0002", "room_0005"]}`` (any of these: a
request that allows several right answers).

Negative checks (``row_unchanged``, ``no_collateral``) pass on inaction by design; a rubric criterion
that uses one must also bind a positive check, which the composer guarantees.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mcp_services.kernel.diff import StateDiff

__all__ = [
    "AnswerCheck",
    "Check",
    "CheckBase",
    "Diff",
    "InfoFlow",
    "NoCollateral",
    "RowAbsent",
    "RowExists",
    "AnswerExcludes",
    "RowUnchanged",
    "value_matches",
]

Diff = Mapping[str, StateDiff]
"""A run's state diff, per mounted service."""

ChangeKind = Literal["added", "changed", "added_or_changed"]


class CheckBase(BaseModel, ABC):
    """What every check has: an id the rubric names it by, and a way to say whether it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    description: str = ""

    #: Whether the check holds on an untouched world (a criterion needs a positive check beside it).
    negative: ClassVar[bool] = False

    @abstractmethod
    def holds(self, diff: Diff, answer: str | None) -> bool:
        """Whether this check holds for a run with this state diff and final answer."""

    def collateral(self, diff: Diff) -> list[str]:
        """The changes this check finds that the task did not call for, for a person to read."""
        return []


class RowExists(CheckBase):
    """Some row of ``service.table`` that the run added (or changed) matches every value in ``match``."""

    kind: Literal["row_exists"] = "row_exists"
    service: str
    table: str
    change: ChangeKind = "added_or_changed"
    match: dict[str, Any]

    def holds(self, diff: Diff, answer: str | None) -> bool:
        return any(
            all(column in row and value_matches(want, row[column]) for column, want in self.match.items())
            for row in _candidate_rows(diff, self.service, self.table, self.change)
        )


class RowUnchanged(CheckBase):
    """The row with primary key ``key`` is neither changed nor deleted (a distractor stays untouched)."""

    kind: Literal["row_unchanged"] = "row_unchanged"
    service: str
    table: str
    key: str

    negative: ClassVar[bool] = True

    def holds(self, diff: Diff, answer: str | None) -> bool:
        state = diff.get(self.service)
        if state is None:
            return True
        table = state.table(self.table)
        return self.key not in table.changed and self.key not in table.deleted


class InfoFlow(CheckBase):
    """A value the agent had to read in one service appears in a row it wrote in another."""

    kind: Literal["info_flow"] = "info_flow"
    value: str | int | float
    source_service: str
    source_tool: str
    service: str
    table: str
    column: str

    def holds(self, diff: Diff, answer: str | None) -> bool:
        needle: Any = {"$icontains": str(self.value)} if isinstance(self.value, str) else self.value
        for row in _candidate_rows(diff, self.service, self.table, "added_or_changed"):
            actual = row.get(self.column)
            cells = actual if isinstance(actual, list) else [actual]
            if any(value_matches(needle, cell) for cell in cells):
                return True
        return False


class NoCollateral(CheckBase):
    """Nothing changed beyond what the task needs.

    ``changed_keys``: per service and table, the only rows that may be changed or deleted;
    ``added_counts``: per service and table, at most this many rows may be added.
    """

    kind: Literal["no_collateral"] = "no_collateral"
    changed_keys: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    added_counts: dict[str, dict[str, int]] = Field(default_factory=dict)

    negative: ClassVar[bool] = True

    def holds(self, diff: Diff, answer: str | None) -> bool:
        return not self.collateral(diff)

    def collateral(self, diff: Diff) -> list[str]:
        found: list[str] = []
        for service, state in sorted(diff.items()):
            for name, table in sorted(state.tables.items()):
                allowed_keys = set(self.changed_keys.get(service, {}).get(name, ()))
                for key in sorted(set(table.changed) | set(table.deleted)):
                    if key not in allowed_keys:
                        verb = "changed" if key in table.changed else "deleted"
                        found.append(f"{service}.{name} row {key} was {verb}")
                budget = self.added_counts.get(service, {}).get(name, 0)
                if len(table.added) > budget:
                    found.append(f"{service}.{name}: {len(table.added)} rows added, at most {budget} expected")
        return found


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


class AnswerCheck(CheckBase):
    """The agent's final answer states the expected value."""

    kind: Literal["answer"] = "answer"
    expected: str | int | float | list[str]
    match: Literal["contains", "number", "all_of"] = "contains"

    @model_validator(mode="after")
    def _number_is_one_value(self) -> AnswerCheck:
        if self.match == "number" and isinstance(self.expected, list):
            raise ValueError("an answer matched as a number expects one number, not a list")
        return self

    def holds(self, diff: Diff, answer: str | None) -> bool:
        if not answer:
            return False
        expected = self.expected
        if self.match == "number" and not isinstance(expected, list):
            target = float(expected)
            numbers = [float(n.replace(",", "")) for n in _NUMBER.findall(answer)]
            return any(abs(n - target) <= 0.005 for n in numbers)
        text = _norm(answer)
        if self.match == "all_of":
            items = expected if isinstance(expected, list) else [str(expected)]
            return all(_norm(str(item)) in text for item in items)
        return _norm(str(expected)) in text


class RowAbsent(CheckBase):
    """No row of ``service.table`` that the run added or changed matches ``match``: what must not happen did not.

    (A refund the policy forbids, an email to the wrong person.) Negative: a criterion pairs it with a
    positive check of what should happen instead.
    """

    kind: Literal["row_absent"] = "row_absent"
    service: str
    table: str
    match: dict[str, Any]

    negative: ClassVar[bool] = True

    def holds(self, diff: Diff, answer: str | None) -> bool:
        return not any(
            all(column in row and value_matches(want, row[column]) for column, want in self.match.items())
            for row in _candidate_rows(diff, self.service, self.table, "added_or_changed")
        )


class AnswerExcludes(CheckBase):
    """The final answer states none of these values: an answer that lists every candidate is no answer."""

    kind: Literal["answer_excludes"] = "answer_excludes"
    values: list[str | int | float]

    negative: ClassVar[bool] = True

    def holds(self, diff: Diff, answer: str | None) -> bool:
        if not answer:
            return True
        text = _norm(answer)
        numbers = [float(n.replace(",", "")) for n in _NUMBER.findall(answer)]
        for value in self.values:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if any(abs(n - float(value)) <= 0.005 for n in numbers):
                    return False
            elif _norm(str(value)) in text:
                return False
        return True


Check = Annotated[
    RowExists | RowUnchanged | InfoFlow | NoCollateral | AnswerCheck | RowAbsent | AnswerExcludes,
    Field(discriminator="kind"),
]


# -- matching ------------------------------------------------------------------------------------


def value_matches(expected: Any, actual: Any) -> bool:
    """Whether a cell's value ``actual`` matches ``expected`` (a JSON value or a one-key matcher)."""
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
        if op == "$in":
            return isinstance(target, list) and any(value_matches(option, actual) for option in target)
        raise ValueError(f"unknown matcher {op!r}")
    if isinstance(expected, str) and isinstance(actual, str):
        return expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool):
        return abs(float(expected) - float(actual)) <= 1e-9
    return bool(expected == actual)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _candidate_rows(diff: Diff, service: str, table: str, change: ChangeKind) -> list[dict[str, Any]]:
    state = diff.get(service)
    if state is None:
        return []
    found = state.table(table)
    rows: list[dict[str, Any]] = []
    if change in ("added", "added_or_changed"):
        rows.extend(found.added.values())
    if change in ("changed", "added_or_changed"):
        rows.extend(c.after for c in found.changed.values())
    return rows
