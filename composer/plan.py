"""A symbolic plan: tool calls whose arguments say where each value comes from.

The walk writes plans in this form so that they can be replayed: the reference replay fixes the
concrete values; a replay that picks a distractor record instead of the target (an override of one
step's selection) shows what an agent following the distractor would do, values found downstream
included. Each argument is one of:

- ``Lit``: a value the generator chose (stated in the instruction when ``stated``);
- ``Ref``: a field of the item an earlier step selected (a value the agent must look up);
- ``Composed``: text the agent writes, with looked-up values inside it;
- ``ListOf``: a list of the above (recipients);
- ``Cond``: a house rule: one value if a looked-up number is above a threshold, another otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Union


@dataclass(frozen=True, slots=True)
class Lit:
    value: Any
    stated: bool = True


@dataclass(frozen=True, slots=True)
class Ref:
    step: int
    field: str


@dataclass(frozen=True, slots=True)
class Composed:
    parts: tuple[Union[str, Ref], ...]


@dataclass(frozen=True, slots=True)
class ListOf:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Cond:
    ref: Ref
    threshold: float
    above: Any
    otherwise: Any


Expr = Union[Lit, Ref, Composed, ListOf, Cond]


class MissingValue(LookupError):
    """A Ref names a field the selected item does not have (or has as null)."""


@dataclass(frozen=True, slots=True)
class StepSpec:
    """One call: its arguments as expressions, and which result item it selects (by key)."""

    service: str
    tool: str
    args: tuple[tuple[str, Expr], ...]
    select_key: str | None = None
    select_value: Any = None

    def arg(self, name: str) -> Expr | None:
        for key, expr in self.args:
            if key == name:
                return expr
        return None

    def with_arg(self, name: str, expr: Expr) -> StepSpec:
        args = [(k, e) for k, e in self.args if k != name] + [(name, expr)]
        return replace(self, args=tuple(args))


def field_value(item: Mapping[str, Any] | None, path: str) -> Any:
    value: Any = item
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def refs_of(expr: Expr) -> Iterator[Ref]:
    if isinstance(expr, Ref):
        yield expr
    elif isinstance(expr, Composed):
        yield from (p for p in expr.parts if isinstance(p, Ref))
    elif isinstance(expr, ListOf):
        for item in expr.items:
            yield from refs_of(item)
    elif isinstance(expr, Cond):
        yield expr.ref


def step_refs(spec: StepSpec) -> list[Ref]:
    return [ref for _, expr in spec.args for ref in refs_of(expr)]


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def text_of(value: Any) -> str:
    """How a looked-up value reads inside text a person writes: 2,774.00; 13 October 2025; 13 October 2025 at 14:00."""
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, str) and len(value) >= 10 and value[4] == "-" and value[7] == "-" and value[:4].isdigit():
        try:
            day = f"{int(value[8:10])} {_MONTHS[int(value[5:7]) - 1]} {value[:4]}"
        except (ValueError, IndexError):
            return value
        if len(value) >= 16 and value[10] in "T " and value[13] == ":":
            return f"{day} at {value[11:16]}"
        return day if len(value) == 10 else value
    return str(value)


def resolve(expr: Expr, items: Sequence[Mapping[str, Any] | None]) -> Any:
    """The concrete value of ``expr``, given the item each earlier step selected (``items[i]`` for step i)."""
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, Ref):
        if expr.step >= len(items):
            raise MissingValue(f"step {expr.step} has not run")
        value = field_value(items[expr.step], expr.field)
        if value is None:
            raise MissingValue(f"step {expr.step} has no {expr.field}")
        return value
    if isinstance(expr, Composed):
        return "".join(p if isinstance(p, str) else text_of(resolve(p, items)) for p in expr.parts)
    if isinstance(expr, ListOf):
        return [resolve(item, items) for item in expr.items]
    if isinstance(expr, Cond):
        number = resolve(expr.ref, items)
        if not isinstance(number, (int, float)):
            raise MissingValue(f"step {expr.ref.step} {expr.ref.field} is not a number")
        return expr.above if float(number) > expr.threshold else expr.otherwise
    raise TypeError(f"not an expression: {expr!r}")


def renumber(expr: Expr, mapping: Mapping[int, int]) -> Expr:
    if isinstance(expr, Ref):
        return Ref(mapping[expr.step], expr.field)
    if isinstance(expr, Composed):
        return Composed(tuple(p if isinstance(p, str) else Ref(mapping[p.step], p.field) for p in expr.parts))
    if isinstance(expr, ListOf):
        return ListOf(tuple(renumber(i, mapping) for i in expr.items))
    if isinstance(expr, Cond):
        return Cond(Ref(mapping[expr.ref.step], expr.ref.field), expr.threshold, expr.above, expr.otherwise)
    return expr


def renumber_step(spec: StepSpec, mapping: Mapping[int, int]) -> StepSpec:
    return replace(spec, args=tuple((k, renumber(e, mapping)) for k, e in spec.args))
