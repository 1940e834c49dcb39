"""What the report's plots show: pass rates by group with bootstrap intervals, and distributions.

A pass rate is pass@1 averaged over tasks (as in ``harness eval``), with a 95% percentile bootstrap
interval over tasks from a seeded resampler: the same run always draws the same picture.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from harness.metrics import bootstrap_ci
from harness.trajectory import Trajectory

__all__ = ["BREAKDOWNS", "Breakdown", "GroupRate", "histogram", "pass_rates"]

GroupKey = Callable[[Trajectory], Iterable[str]]


@dataclass(frozen=True, slots=True)
class GroupRate:
    group: str
    n_tasks: int
    pass_rate: float
    ci: tuple[float, float]


@dataclass(frozen=True, slots=True)
class Breakdown:
    name: str
    title: str
    axis: str  # what a group is, for the axis label
    key: GroupKey


def _n_services(t: Trajectory) -> list[str]:
    return [str(len(t.task_info.get("services") or []))]


BREAKDOWNS: tuple[Breakdown, ...] = (
    Breakdown("n_services", "Pass rate by number of services", "services", _n_services),
    Breakdown(
        "plan_length",
        "Pass rate by plan length",
        "plan length (calls)",
        lambda t: [str(t.task_info.get("plan_length", "?"))],
    ),
    Breakdown(
        "capability",
        "Pass rate by capability",
        "capability",
        lambda t: list(t.task_info.get("capabilities") or []) or ["(none)"],
    ),
    Breakdown("service", "Pass rate by service", "service", lambda t: list(t.task_info.get("services") or [])),
)


def _order(group: str) -> tuple[int, int, str]:
    return (0, int(group), "") if group.isdigit() else (1, 0, group)


def pass_rates(
    trajectories: Sequence[Trajectory], key: GroupKey, *, seed: str, resamples: int = 1000
) -> list[GroupRate]:
    """Per group: tasks, mean pass@1 over its tasks, and the 95% interval."""
    by_group: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for t in trajectories:
        for group in key(t):
            by_group[group][t.task_id].append(t.passed)
    rates = []
    for group in sorted(by_group, key=_order):
        per_task = [sum(runs) / len(runs) for _, runs in sorted(by_group[group].items())]
        low, high = bootstrap_ci(per_task, seed=f"{seed}:{group}", resamples=resamples)
        rates.append(GroupRate(group, len(per_task), sum(per_task) / len(per_task), (low, high)))
    return rates


def histogram(values: Sequence[float], edges: Sequence[float]) -> list[float]:
    """Share of ``values`` in each bin ``[edges[i], edges[i+1])``, the last bin closed."""
    counts = [0] * (len(edges) - 1)
    for value in values:
        for i in range(len(counts)):
            last = i == len(counts) - 1
            if edges[i] <= value < edges[i + 1] or (last and value == edges[i + 1]):
                counts[i] += 1
                break
    total = len(values) or 1
    return [c / total for c in counts]
