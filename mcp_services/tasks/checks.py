"""Checks on an episode's outcome: frozen data in a task, each able to say whether it holds.

A check reads what an agent did: the episode's state diff (initial state -> final state, per
service) and the agent's final answer. ``Check`` is the union a task's ``checks`` field holds, told
apart by ``kind``; every member answers ``holds(diff, answer)``, so grading never asks which kind a
check is (``mcp_services.tasks.grading``).

Value matchers in ``row_exists``: a plain JSON value must be equal; an object with one operator key
matches loosely: ``{"$icontains": "re_0007"}`` (text contains, case-insensitive),
``{"$includes": ["a@x.example"]}`` (a list contains every item, case-insensitive for text),
``{"$approx": 120.5}`` (a number within 0.01), ``{"$in": ["room_0002", "room_0005"]}`` (any of these: a
request that allows several right answers), ``{"$states": [{"kind": "money", "value": 2774.0}, ...]}`` (a text
states every one of these facts in any usual surface form: ``mcp_services.tasks.surface``), ``{"$names": "Q3 Travel"}``
(a name or title the request stated, case, quotes and punctuation aside: ``names``), ``{"$filled": true}``
(any value that is not empty: a detail the request leaves to the agent, such as a void reason in its own words).

Negative checks (``row_unchanged``, ``no_collateral``) pass on inaction by design; a rubric criterion
that uses one must also bind a positive check, which the composer guarantees.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from mcp_services.kernel.diff import StateDiff
from mcp_services.tasks.surface import FactKind, kind_of, states

__all__ = [
    "AnswerCheck",
    "AnyOf",
    "Check",
    "CheckBase",
    "Diff",
    "InfoFlow",
    "NoCollateral",
    "RowAbsent",
    "RowExists",
    "AnswerExcludes",
    "CarriedValue",
    "Fact",
    "RowUnchanged",
    "names",
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
    #: Columns whose change is not a change to the record (a read flag, a label added while working).
    incidental: list[str] = Field(default_factory=list)

    negative: ClassVar[bool] = True

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without(handler(self), "incidental")

    def holds(self, diff: Diff, answer: str | None) -> bool:
        state = diff.get(self.service)
        if state is None:
            return True
        table = state.table(self.table)
        if self.key in table.deleted:
            return False
        change = table.changed.get(self.key)
        return change is None or set(change.fields) <= set(self.incidental)


class RowDeleted(CheckBase):
    """The row with primary key ``key`` of ``service.table`` was deleted (what a request to delete must leave)."""

    kind: Literal["row_deleted"] = "row_deleted"
    service: str
    table: str
    key: str

    def holds(self, diff: Diff, answer: str | None) -> bool:
        state = diff.get(self.service)
        return state is not None and self.key in state.table(self.table).deleted


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
    ``added_counts``: per service and table, at most this many rows may be added, beyond the messages to the people
    the work is for (``correspondents``): the one collateral rule (docs/composer.md, "Collateral").
    """

    kind: Literal["no_collateral"] = "no_collateral"
    changed_keys: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    added_counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    #: Per service and table, columns whose change is never collateral (read flags, labels added while working).
    incidental: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    #: The people the work is for (the customer who asked, the colleague who passed it on, whoever must be told), by
    #: address or number, and per service and table the columns that name a message's recipients: a message to one of
    #: them (and the thread it starts) is a write the request implies, never collateral.
    correspondents: list[str] = Field(default_factory=list)
    recipients: dict[str, dict[str, list[str]]] = Field(default_factory=dict)

    negative: ClassVar[bool] = True

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without(_without(_without(handler(self), "incidental"), "correspondents"), "recipients")

    def holds(self, diff: Diff, answer: str | None) -> bool:
        return not self.collateral(diff)

    def implied(self, service: str, state: StateDiff) -> set[tuple[str, str]]:
        """(table, key) of the rows a run added that are messages to the people the work is for, and the rows those
        messages start (a new email's thread)."""
        people = {p.casefold() for p in self.correspondents}
        free: set[tuple[str, str]] = set()
        for table, columns in self.recipients.get(service, {}).items():
            for key, row in state.table(table).added.items():
                cells = [c for column in columns for c in _cells(row.get(column))]
                if any(isinstance(c, str) and c.casefold() in people for c in cells):
                    free.add((table, key))
        named = {cell for table, key in free for cell in state.table(table).added[key].values() if isinstance(cell, str)}
        for name, table_diff in state.tables.items():
            free |= {(name, key) for key in table_diff.added if key in named}
        return free

    def collateral(self, diff: Diff) -> list[str]:
        found: list[str] = []
        for service, state in sorted(diff.items()):
            free = self.implied(service, state)
            for name, table in sorted(state.tables.items()):
                allowed_keys = set(self.changed_keys.get(service, {}).get(name, ()))
                harmless = set(self.incidental.get(service, {}).get(name, ()))
                for key in sorted(set(table.changed) | set(table.deleted)):
                    if key in table.changed and set(table.changed[key].fields) <= harmless:
                        continue
                    if key not in allowed_keys:
                        verb = "changed" if key in table.changed else "deleted"
                        found.append(f"{service}.{name} row {key} was {verb}")
                budget = self.added_counts.get(service, {}).get(name, 0)
                added = len([key for key in table.added if (name, key) not in free])
                if added > budget:
                    found.append(f"{service}.{name}: {added} rows added, at most {budget} expected")
        return found


class AnswerCheck(CheckBase):
    """The agent's final answer states the expected value."""

    kind: Literal["answer"] = "answer"
    expected: str | int | float | list[str]
    #: How the value is read: "contains" (the text, case-insensitive), "number" (any way of writing it),
    #: "all_of" (every item of a list), or a fact kind ("money", "date", "datetime"...: any usual surface form).
    match: Literal["contains", "number", "all_of", "money", "date", "datetime", "time"] = "contains"

    @model_validator(mode="after")
    def _number_is_one_value(self) -> AnswerCheck:
        if self.match not in ("contains", "all_of") and isinstance(self.expected, list):
            raise ValueError("an answer matched as a number expects one number, not a list")
        return self

    def holds(self, diff: Diff, answer: str | None) -> bool:
        if not answer:
            return False
        expected = self.expected
        if self.match in ("number", "money") and not isinstance(expected, list):
            # A count reads in words too ("three"), and never as the day of a date; an amount reads as amounts do.
            count = self.match == "number" and isinstance(expected, int) and not isinstance(expected, bool)
            return states(answer, "number", expected) if count else states(answer, "money", float(expected))
        if self.match in ("date", "datetime", "time") and not isinstance(expected, list):
            return states(answer, self.match, expected)
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
    """The final answer states none of these values: an answer that lists every candidate is no answer.

    Each value is read as its type says (``kind_of``): an amount in any of its forms, a count in digits or words (not
    the day of a date), a date in any usual form ("12 May", "2025-05-12"); other text as written."""

    kind: Literal["answer_excludes"] = "answer_excludes"
    values: list[str | int | float]

    negative: ClassVar[bool] = True

    def holds(self, diff: Diff, answer: str | None) -> bool:
        if not answer:
            return True
        text = _norm(answer)
        for value in self.values:
            kind = kind_of(value)
            if states(answer, kind, value) if kind != "text" else _norm(str(value)) in text:
                return False
        return True


class Fact(BaseModel):
    """One fact a text must state: a value read as ``kind`` (an amount, a date, an id, a decision...), or any of
    ``forms``: the record's other identifying forms (its number for its title, the customer for their only order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: FactKind
    value: str | int | float
    forms: list[str | int | float] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without(handler(self), "forms")

    def stated_in(self, text: str | None) -> bool:
        """Whether ``text`` states this fact in any of its forms."""
        return any(states(text, self.kind if n == 0 else kind_of(v), v) for n, v in enumerate([self.value, *self.forms]))


class CarriedValue(CheckBase):
    """A value of a row the agent added (a code it chose, the id of what it created) is stated in a row it wrote.

    Some row added to ``source_service.source_table`` matching ``source_match`` has a ``source_column`` value
    that a row added or changed in ``service.table`` matching ``match`` states in ``column``: the check follows
    the agent's own record, never the reference run's literal.
    """

    kind: Literal["carried_value"] = "carried_value"
    source_service: str
    source_table: str
    source_match: dict[str, Any] = Field(default_factory=dict)
    source_column: str
    service: str
    table: str
    match: dict[str, Any] = Field(default_factory=dict)
    column: str

    def holds(self, diff: Diff, answer: str | None) -> bool:
        sources = [
            row.get(self.source_column)
            for row in _candidate_rows(diff, self.source_service, self.source_table, "added")
            if all(c in row and value_matches(w, row[c]) for c, w in self.source_match.items())
        ]
        values = [v for v in sources if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip()]
        if not values:
            return False
        for row in _candidate_rows(diff, self.service, self.table, "added_or_changed"):
            if not all(c in row and value_matches(w, row[c]) for c, w in self.match.items()):
                continue
            cell = row.get(self.column)
            cells = [str(c) for c in (cell if isinstance(cell, list) else [cell]) if c is not None]
            if any(states(c, kind_of(v), v) for v in values for c in cells):
                return True
        return False


class AnyOf(CheckBase):
    """One of several ways of doing one thing holds (a word to a colleague by email, or in a chat with them): each
    option is a list of checks that must all hold."""

    kind: Literal["any_of"] = "any_of"
    options: list[list[RowExists | CarriedValue]] = Field(min_length=1)

    def holds(self, diff: Diff, answer: str | None) -> bool:
        return any(all(check.holds(diff, answer) for check in option) for option in self.options)


Check = Annotated[
    RowExists | RowUnchanged | RowDeleted | InfoFlow | NoCollateral | AnswerCheck | RowAbsent | AnswerExcludes | CarriedValue
    | AnyOf,
    Field(discriminator="kind"),
]


# -- matching ------------------------------------------------------------------------------------


def _without(body: dict[str, Any], name: str) -> dict[str, Any]:
    """A check's JSON without a field newer versions added, where empty: older task files read back byte for byte."""
    if not body.get(name):
        body.pop(name, None)
    return body


def value_matches(expected: Any, actual: Any) -> bool:
    """Whether a cell's value ``actual`` matches ``expected`` (a JSON value or a one-key matcher)."""
    if isinstance(expected, dict) and len(expected) == 1 and next(iter(expected)).startswith("$"):
        op, target = next(iter(expected.items()))
        if op == "$icontains":
            return isinstance(actual, str) and _norm(str(target)) in _norm(actual)
        if op == "$includes":
            if not isinstance(actual, list):
                return False
            if any(isinstance(x, (dict, list)) for x in (*actual, *target)):  # records in a list (an order's lines)
                return all(any(t == a for a in actual) for t in target)
            have = {_norm(a) if isinstance(a, str) else a for a in actual}
            return all((_norm(t) if isinstance(t, str) else t) in have for t in target)
        if op == "$approx":
            return isinstance(actual, (int, float)) and abs(float(actual) - float(target)) <= 0.01
        if op == "$names":
            return isinstance(actual, str) and names(str(target), actual)
        if op == "$filled":
            return actual not in (None, "", [], {})
        if op == "$in":
            return isinstance(target, list) and any(value_matches(option, actual) for option in target)
        if op == "$states":
            facts = [f if isinstance(f, Fact) else Fact.model_validate(f) for f in target]
            return bool(facts) and all(f.stated_in(actual if isinstance(actual, str) else None) for f in facts)
        raise ValueError(f"unknown matcher {op!r}")
    if isinstance(expected, str) and isinstance(actual, str):
        return expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool):
        return abs(float(expected) - float(actual)) <= 1e-9
    return bool(expected == actual)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _cells(value: Any) -> list[Any]:
    """A cell's values: a list's items, or the value itself."""
    return list(value) if isinstance(value, list) else [value]


def names(name: str, actual: str) -> bool:
    """Whether a cell holds a name or title the request stated, as people write it: case, quotes, punctuation and
    spacing aside ("Q3 Travel" is 'q3-travel'); a long one (a sentence of a title) may sit in more words."""
    want, have = _words(name), _words(actual)
    return bool(want) and (want == have or (len(name) > 12 and f" {want} " in f" {have} "))


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.casefold().replace("\u2019", "'").replace("'", "")).split())


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
