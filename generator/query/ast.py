"""What every dialect parses into: conditions on fields, joined by and / or / not, and an order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

#: A literal value, a list of them (``in (a, b)``), or a function call such as ``currentUser()`` (``Call``).
Value = Union[str, int, float, bool, None, "Call", tuple["Value", ...]]


@dataclass(frozen=True)
class Call:
    """A function a dialect evaluates when the query runs (JQL's ``currentUser()``, ``now()``)."""

    name: str


@dataclass(frozen=True)
class Cond:
    """``field op value``. Ops: ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``contains`` (text holds every
    word), ``phrase`` (holds the exact phrase), ``!contains``, ``in`` / ``not in`` (a tuple of values), ``has`` (a list field holds the value:
    Drive's ``'x' in parents``), ``empty`` / ``not empty``."""

    field: str
    op: str
    value: Value = None


@dataclass(frozen=True)
class And:
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    part: Node


Node = Union[Cond, And, Or, Not]


@dataclass(frozen=True)
class Query:
    """A parsed query: ``where`` (None: every row) and ``order`` as (field, descending) pairs."""

    where: Node | None
    order: tuple[tuple[str, bool], ...] = ()


class QueryError(ValueError):
    """A query a dialect cannot read: the message says which part and what the dialect supports."""

    def __init__(self, dialect: str, part: str, problem: str, supported: str) -> None:
        self.dialect = dialect
        self.part = part
        super().__init__(f"{dialect}: {problem} at {part!r}. Supported: {supported}.")
