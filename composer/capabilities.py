"""Which task shapes a task has, read off its plan (not from what the generator intended)."""

from __future__ import annotations

from collections.abc import Sequence

from composer.catalog import Catalog
from composer.distractors import Distractor
from composer.plan import Cond, Ref, StepSpec, field_value, refs_of, step_refs
from composer.policy import Policy
from composer.runner import Run
from mcp_services.tasks.spec import CAPABILITIES


def dependency_depth(specs: Sequence[StepSpec]) -> int:
    """Calls in the longest chain where each one needs a value the previous one found."""
    depth: list[int] = []
    for spec in specs:
        parents = [depth[r.step] for r in step_refs(spec) if r.step < len(depth)]
        depth.append(1 + max(parents, default=0))
    return max(depth, default=0)


def crosses_services(catalog: Catalog, specs: Sequence[StepSpec], run: Run, stated: set[str]) -> bool:
    """A value found in one service decides a write in another (an argument, or a house rule's input)."""
    for spec in specs:
        if not catalog.tool(spec.service, spec.tool).is_write:
            continue
        for _, expr in spec.args:
            for ref in refs_of(expr):
                if specs[ref.step].service == spec.service:
                    continue
                value = field_value(run.items[ref.step], ref.field)
                if isinstance(expr, Cond) or " ".join(str(value).lower().split()) not in stated:
                    return True
    return False


def capabilities_of(
    catalog: Catalog,
    specs: Sequence[StepSpec],
    run: Run,
    *,
    policy: Policy | None,
    distractors: Sequence[Distractor],
    answer: Ref | None,
    stated: set[str],
) -> list[str]:
    found = set()
    if dependency_depth(specs) >= 3:
        found.add("sequential-dependency")
    if crosses_services(catalog, specs, run, stated):
        found.add("cross-service-constraint")
    if distractors:
        found.add("distractor-avoidance")
    if answer is not None:
        found.add("information-question")
    if policy is not None:
        found.add("policy")
    return [c for c in CAPABILITIES if c in found]
