"""Pass@k, pass^k and bootstrap confidence intervals over tasks.

Per task with ``n`` rollouts of which ``c`` passed:

- pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k rollouts passes (the
  unbiased estimator of Chen et al. 2021); pass@1 = c / n.
- pass^k = C(c, k) / C(n, k): the chance that all k rollouts pass (tau-bench's reliability metric).

A metric is the mean over tasks. Its 95% interval comes from resampling tasks with replacement
(percentile bootstrap) with a seeded RNG, so the same run always reports the same interval.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

__all__ = ["TaskOutcome", "bootstrap_ci", "pass_at_k", "pass_hat_k"]


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    task_id: str
    n: int  # rollouts
    c: int  # rollouts that passed
    rubric: float  # mean rubric score over its rollouts


def pass_at_k(n: int, c: int, k: int) -> float:
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n}, not {k}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n}, not {k}")
    return comb(c, k) / comb(n, k)


def bootstrap_ci(
    values: Sequence[float], *, seed: str | int, resamples: int = 1000, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of the mean of ``values`` under resampling with replacement."""
    n = len(values)
    if n == 0:
        return (0.0, 0.0)
    if n == 1 or min(values) == max(values):
        return (float(values[0]), float(values[0])) if n == 1 else (float(min(values)), float(max(values)))
    rng = random.Random(str(seed))
    indices = range(n)
    get = values.__getitem__
    means = sorted(sum(map(get, rng.choices(indices, k=n))) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    low = means[int(tail * (resamples - 1))]
    high = means[int(round((1.0 - tail) * (resamples - 1)))]
    return (low, high)
