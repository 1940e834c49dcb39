"""House rules the plan must follow, stated in the instruction.

Two kinds, both generic over the library:

- ``threshold``: a write's enum argument depends on a number found earlier, often in another
  service ("if the invoice total is above 1,000 USD, give the ticket high priority; otherwise
  normal"). The plan carries it as a ``Cond`` so every replay applies the rule to what it finds.
- ``signature``: text the agent writes must end with a fixed sign-off.

Either way, a replay that ignores the rule is kept as a counterfactual that must fail.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Any, Literal

from composer.catalog import Catalog
from composer.graph import polymorphic_partner
from composer.plan import Composed, Cond, Expr, Lit, Ref, StepSpec, field_value
from composer.walk import Walk

_SKIPPED_ENUMS = frozenset({"currency", "mime_type", "channel", "order_by", "kind", "method", "access"})


@dataclass(frozen=True, slots=True)
class Policy:
    kind: Literal["threshold", "signature"]
    step: int  # the write the rule governs
    param: str
    expected: Any  # the value the rule gives here (threshold) or the sign-off (signature)
    violating: Expr  # the argument a plan that ignores the rule passes
    source: Ref | None = None
    threshold: float | None = None
    above: Any = None
    otherwise: Any = None


def nice_number(x: float) -> float:
    """Round to two significant figures, as a person would write a limit."""
    if x <= 0:
        return 0.0
    scale = 10 ** (math.floor(math.log10(x)) - 1)
    return float(round(x / scale) * scale)


def add_threshold(catalog: Catalog, walk: Walk, rng: random.Random) -> tuple[list[StepSpec], Policy] | None:
    options: list[tuple[float, int, str, Ref, float]] = []
    for j, spec in enumerate(walk.specs):
        tool = catalog.tool(spec.service, spec.tool)
        if not tool.is_write:
            continue
        for param in tool.params:
            if len(param.enum) < 2 or param.name in _SKIPPED_ENUMS or param.is_list:
                continue
            if any(polymorphic_partner(tool, p) is param for p in tool.params):
                continue
            bound = spec.arg(param.name)
            if bound is not None and not (isinstance(bound, Lit) and bound.stated):
                continue
            for i in range(j):
                source = catalog.tool(walk.specs[i].service, walk.specs[i].tool)
                stated = {path for path, _ in walk.notes[i].descriptors}
                for f in source.fields:
                    if f.semtype != "money" or f.is_list or "." in f.path or f.path in stated:
                        continue
                    value = field_value(walk.items[i], f.path)
                    if not isinstance(value, (int, float)) or value <= 1:
                        continue
                    weight = 3.0 if source.service != tool.service else 1.0
                    options.append((weight, j, param.name, Ref(i, f.path), float(value)))
    if not options:
        return None
    _, j, name, ref, value = rng.choices(options, weights=[o[0] for o in options])[0]
    param = catalog.tool(walk.specs[j].service, walk.specs[j].tool).param(name)
    assert param is not None
    low, high = sorted(rng.sample(range(len(param.enum)), 2))
    otherwise, above = param.enum[low], param.enum[high]
    threshold = nice_number(value * rng.uniform(0.4, 0.8)) if rng.random() < 0.5 else nice_number(value * rng.uniform(1.3, 2.5))
    if threshold == value or threshold <= 0:
        return None
    expected = above if value > threshold else otherwise
    violating = Lit(otherwise if expected == above else above)
    specs = list(walk.specs)
    specs[j] = specs[j].with_arg(name, Cond(ref, threshold, above, otherwise))
    policy = Policy("threshold", j, name, expected, violating, ref, threshold, above, otherwise)
    return specs, policy


def add_signature(
    catalog: Catalog, walk: Walk, rng: random.Random, signer: str, organisation: str
) -> tuple[list[StepSpec], Policy] | None:
    options: list[tuple[int, str, Expr]] = []
    for j, spec in enumerate(walk.specs):
        tool = catalog.tool(spec.service, spec.tool)
        for name, expr in spec.args:
            param = tool.param(name)
            if param is None or param.semtype != "text":
                continue  # a sign-off ends a message body or a note, not a subject line
            if isinstance(expr, Composed) or (isinstance(expr, Lit) and expr.stated and isinstance(expr.value, str)):
                options.append((j, name, expr))
    if not options:
        return None
    j, name, expr = rng.choice(options)
    first = signer.split(" ")[0]
    sign_off = rng.choice((f"-- {first}, {organisation}", f"Best, {first} ({organisation})", f"{organisation} support team"))
    parts: tuple[Any, ...] = expr.parts if isinstance(expr, Composed) else (str(expr.value),)  # type: ignore[union-attr]
    signed = Composed(tuple(parts) + (f"\n{sign_off}",))
    specs = list(walk.specs)
    specs[j] = replace(specs[j], args=tuple((k, signed if k == name else e) for k, e in specs[j].args))
    return specs, Policy("signature", j, name, sign_off, expr)
