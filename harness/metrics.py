"""Pass@k, pass^k and bootstrap confidence intervals over tasks; token figures over trajectories.

Per task with ``n`` rollouts of which ``c`` passed:

- pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k rollouts passes (the
  unbiased estimator of Chen et al. 2021); pass@1 = c / n.
- pass^k = C(c, k) / C(n, k): the chance that all k rollouts pass (tau-bench's reliability metric).

A metric is the mean over tasks. Its 95% interval comes from resampling tasks with replacement
(percentile bootstrap) with a seeded RNG, so the same run always reports the same interval.

Token figures: the median, 90th percentile (nearest rank) and maximum of the trajectories' token
counts (``harness.tokens``), with the counter that made them.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

__all__ = ["TaskOutcome", "TokenFigures", "bootstrap_ci", "pass_at_k", "pass_hat_k", "token_figures"]


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


@dataclass(frozen=True, slots=True)
class TokenFigures:
    """Tokens per trajectory over a run."""

    counter: str  # what counted them ("qwen3", or an estimate): one counter per run
    n: int  # trajectories counted
    median: float
    p90: int
    max: int
    n_uncounted: int = 0  # trajectories without a count (lines written before counts existed)

    def to_dict(self) -> dict[str, Any]:
        return {"counter": self.counter, "n": self.n, "median": self.median, "p90": self.p90, "max": self.max,
                "n_uncounted": self.n_uncounted}

    def describe(self) -> str:
        text = (f"tokens per trajectory ({self.counter}): median {self.median:,.0f}, p90 {self.p90:,}, "
                f"max {self.max:,} over {self.n} trajectories")
        return text + (f" ({self.n_uncounted} not counted)" if self.n_uncounted else "")


def token_figures(counts: Iterable[tuple[int | None, str | None]]) -> TokenFigures | None:
    """Figures of ``(n_tokens, counter)`` pairs; None when no trajectory has a count."""
    pairs = list(counts)
    counted = sorted(n for n, _ in pairs if n is not None)
    if not counted:
        return None
    names = sorted({str(name) for n, name in pairs if n is not None})
    if len(names) > 1:  # callers count a run with one counter (``harness.tokens.counts_by``)
        raise ValueError(f"token counts of one run by several counters ({', '.join(names)}) cannot be summed up")
    rank = max(1, math.ceil(0.9 * len(counted)))  # nearest rank: the 90th percentile is a real count
    return TokenFigures(
        counter=names[0],
        n=len(counted),
        median=float(statistics.median(counted)),
        p90=counted[rank - 1],
        max=counted[-1],
        n_uncounted=len(pairs) - len(counted),
    )
