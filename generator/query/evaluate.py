"""Answering a parsed ``Query`` over rows (dicts keyed by column), as a product answers it.

A field names a column (exactly, or spelled another way: ``issuetype`` is ``issue_type``), a dialect's synonym,
or a value inside a ``fields`` object (a Jira issue kept as the API sends it); ``Resolver.values`` gives a row's
values for it. A stored object matches by any identifying value (a project by its key, id or name), a list by
any element; text compares without case; dates compare as dates (relative ones, ``-7d``, from the episode's
clock); ``currentUser()`` and ``me`` are the signed-in user.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from generator.query.ast import And, Call, Cond, Node, Not, Or, Query, QueryError, Value

Row = Mapping[str, Any]
#: Keys of a stored object that name it (a project by its key, a status by its name, a user by email).
IDENTIFYING = ("id", "key", "name", "value", "displayName", "emailAddress", "email", "accountId", "title", "username")
_RELATIVE = re.compile(r"^([-+]?)(\d+)([mhdwy])$")
_UNIT = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1),
         "y": timedelta(days=365)}


def squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass
class Resolver:
    """How a dialect reads one entity's rows: its ``columns``, the dialect's ``synonyms`` (a query field -> the
    columns that may hold it, in order), the signed-in user's identifiers (``me``), names of ids (a label's name
    -> its id) and the episode's clock."""

    dialect: str
    columns: Sequence[str]
    synonyms: Mapping[str, Sequence[str]] = field(default_factory=dict)
    me: frozenset[str] = frozenset()
    names: Mapping[str, str] = field(default_factory=dict)
    now: datetime = field(default_factory=lambda: datetime(2025, 1, 1, tzinfo=timezone.utc))
    getters: Mapping[str, Callable[[Row], list[Any]]] = field(default_factory=dict)
    supported: str = ""

    def __post_init__(self) -> None:
        self._by_squash = {squash(c): c for c in self.columns}

    def column_for(self, name: str) -> list[str] | None:
        """The columns a query field reads, or None when the entity has no such field."""
        if name in self.getters:
            return []
        for candidate in (*self.synonyms.get(name, ()), *self.synonyms.get(name.lower(), ()), name):
            if candidate in self.columns:
                return [candidate]
            if squash(candidate) in self._by_squash:
                return [self._by_squash[squash(candidate)]]
        if "fields" in self.columns:
            return ["fields." + name]
        return None

    def check(self, query: Query) -> None:
        """Every field the query names exists; ``QueryError`` names the first one that does not."""
        for name in [*_fields(query.where), *(f for f, _ in query.order)]:
            if self.column_for(name) is None:
                known = sorted({*self.synonyms, *self.getters} | {c for c in self.columns if not c.startswith("_")})
                raise QueryError(self.dialect, name, f"unknown field {name!r}",
                                 self.supported or "fields " + ", ".join(known[:30]))

    def values(self, row: Row, name: str) -> list[Any]:
        """The row's values of a query field (a list column gives its elements)."""
        if name in self.getters:
            return self.getters[name](row)
        out: list[Any] = []
        for column in self.column_for(name) or []:
            value: Any = row.get(column)
            if column.startswith("fields.") and isinstance(row.get("fields"), Mapping):
                value = row["fields"].get(column.removeprefix("fields."))
            out.extend(value if isinstance(value, list) else [value])
        return [v for v in out if v is not None]


def _fields(node: Node | None) -> Iterable[str]:
    if isinstance(node, Cond):
        yield node.field
    elif isinstance(node, (And, Or)):
        for part in node.parts:
            yield from _fields(part)
    elif isinstance(node, Not):
        yield from _fields(node.part)


# -- values ------------------------------------------------------------------------------------------------


def _time(value: Any, now: datetime) -> datetime | None:
    """A date or time in any usual form (ISO, 2024/01/31, epoch seconds or milliseconds, ``-7d``, ``now()``)."""
    if isinstance(value, Call):
        if value.name == "now":
            return now
        if value.name in ("startofday", "startofweek", "startofmonth", "startofyear"):
            start = now.replace(hour=0, minute=0, second=0, microsecond=0)
            if value.name == "startofweek":
                return start - timedelta(days=start.weekday())
            if value.name == "startofmonth":
                return start.replace(day=1)
            return start.replace(month=1, day=1) if value.name == "startofyear" else start
        return None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit() and len(value) >= 9):
        number = float(value)
        return datetime.fromtimestamp(number / 1000 if number > 1e11 else number, tz=timezone.utc)
    if not isinstance(value, str):
        return None
    m = _RELATIVE.match(value.strip())
    if m is not None:
        delta = _UNIT[m.group(3)] * int(m.group(2))
        return now + delta if m.group(1) == "+" else now - delta
    text = value.strip().replace("/", "-").replace("Z", "+00:00")
    if not re.match(r"^\d{4}-\d{1,2}-\d{1,2}", text):
        return None
    try:
        parsed = datetime.fromisoformat(re.sub(r"^(\d{4})-(\d)(?=-)", r"\1-0\2", text).replace(" ", "T", 1))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
        return float(value)
    return None


def _names(stored: Any) -> list[Any]:
    """A stored value as the values that name it: an object's identifying values, else itself."""
    if isinstance(stored, Mapping):
        return [stored[k] for k in IDENTIFYING if stored.get(k) is not None and not isinstance(stored[k], (dict, list))]
    return [stored]


def _text(stored: Any) -> str:
    if isinstance(stored, Mapping):
        return " ".join(_text(v) for v in stored.values())
    if isinstance(stored, list):
        return " ".join(_text(v) for v in stored)
    return "" if stored is None else str(stored)


class _Matcher:
    def __init__(self, resolver: Resolver) -> None:
        self.r = resolver

    def equal(self, stored: Any, wanted: Value) -> bool:
        if isinstance(wanted, Call) and wanted.name == "currentuser" or wanted == "me" and self.r.me:
            return any(str(n) in self.r.me for n in _names(stored))
        for name in _names(stored):
            if isinstance(wanted, bool) or isinstance(name, bool):
                if isinstance(wanted, bool) and name in (0, 1, True, False, "true", "false"):
                    if (name in (1, True, "true")) == wanted:
                        return True
                continue
            a, b = _number(name), _number(wanted)
            if a is not None and b is not None:
                if a == b:
                    return True
                continue
            if isinstance(wanted, str) and str(name).casefold() == wanted.casefold():
                return True
            if isinstance(wanted, str) and self.r.names.get(wanted.casefold()) == name:
                return True  # a label by its name, where rows hold its id
            t1, t2 = _time(name, self.r.now), _time(wanted, self.r.now)
            if t1 is not None and t2 is not None and (t1 == t2 or isinstance(wanted, str) and len(wanted) <= 10
                                                      and t1.date() == t2.date()):
                return True
        return False

    def compare(self, stored: Any, op: str, wanted: Value) -> bool:
        a: Any = _number(stored)
        b: Any = _number(wanted)
        if a is None or b is None or isinstance(wanted, str) and _time(wanted, self.r.now) and not str(wanted).isdigit():
            a, b = _time(stored, self.r.now), _time(wanted, self.r.now)
        if a is None or b is None:
            if isinstance(stored, str) and isinstance(wanted, str):
                a, b = stored.casefold(), wanted.casefold()
            else:
                return False
        return bool({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])

    def holds(self, stored: Any, wanted: Value, phrase: bool) -> bool:
        text = _text(stored).casefold()
        wanted_text = str(wanted).casefold()
        if phrase:
            return re.search(rf"(?<!\w){re.escape(wanted_text)}(?!\w)", text) is not None
        return all(word in text for word in wanted_text.split())

    def cond(self, row: Row, c: Cond) -> bool:
        values = self.r.values(row, c.field)
        op = c.op
        if op in ("empty", "not empty"):
            filled = any(v not in ("", [], {}) for v in values)
            return filled if op == "not empty" else not filled
        if op in ("=", "has"):
            return any(self.equal(v, c.value) for v in values)
        if op == "!=":
            return not any(self.equal(v, c.value) for v in values)
        if op in ("in", "not in"):
            options = c.value if isinstance(c.value, tuple) else (c.value,)
            found = any(self.equal(v, o) for v in values for o in options)
            return found if op == "in" else not found
        if op in ("contains", "phrase"):
            return any(self.holds(v, c.value, op == "phrase") for v in values)
        if op == "!contains":
            return not any(self.holds(v, c.value, False) for v in values)
        return any(self.compare(v, op, c.value) for v in values)

    def node(self, row: Row, node: Node) -> bool:
        if isinstance(node, Cond):
            return self.cond(row, node)
        if isinstance(node, And):
            return all(self.node(row, p) for p in node.parts)
        if isinstance(node, Or):
            return any(self.node(row, p) for p in node.parts)
        return not self.node(row, node.part)


def _sort_key(resolver: Resolver, row: Row, name: str) -> tuple[int, Any]:
    values = resolver.values(row, name)
    if not values:
        return (1, "")
    value = _names(values[0])[0] if _names(values[0]) else values[0]
    number = _number(value)
    if number is not None:
        return (0, (number, ""))
    when = _time(value, resolver.now)
    if when is not None:
        return (0, (when.timestamp(), ""))
    return (0, (0.0, str(value).casefold()))


def select(query: Query, rows: Sequence[Row], resolver: Resolver) -> list[int]:
    """Indexes of the rows ``query`` selects, in its order (the given order where it names none)."""
    resolver.check(query)
    matcher = _Matcher(resolver)
    chosen = [i for i, row in enumerate(rows) if query.where is None or matcher.node(row, query.where)]
    for name, descending in reversed(query.order):  # stable sorts, last key first
        present = [i for i in chosen if resolver.values(rows[i], name)]
        absent = [i for i in chosen if not resolver.values(rows[i], name)]
        present.sort(key=lambda i: _sort_key(resolver, rows[i], name), reverse=descending)
        chosen = present + absent
    return chosen
