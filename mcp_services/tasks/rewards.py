"""Group rewards from rubric scores: the Completion-Focused Rubric Reward (CFRR) and two baselines.

Every function takes the scores of one group of rollouts of the same task: ``scores[i][k]`` is
rollout ``i``'s score on rubric criterion ``k``, in ``[0, 1]``. CFRR (see DESIGN.md, Training):

- pass rate of criterion k in the group: ``p_k = mean_i s_ik``;
- weights ``w_k = (1 - p_k + eps)^beta / sum_j (1 - p_j + eps)^beta`` (``beta = 0``: plain mean);
- completion ``c_i = 1`` if rollout i passes every criterion (``s_ik == 1`` for all k), else 0;
- reward ``r_i = lam * c_i + (1 - lam) * sum_k w_k s_ik``.

Criteria the group already passes weigh little, the ones it still fails weigh most, so the
gradient points at finishing the task. Pure Python on purpose: it runs inside reward functions
of any trainer and in the harness without numpy or torch.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

__all__ = [
    "RewardKind",
    "binary_reward",
    "completion_focused_rubric_reward",
    "group_rewards",
    "rubric_reward",
]

RewardKind = Literal["cfrr", "binary", "rubric"]
Scores = Sequence[Sequence[float]]


def _validated(scores: Scores) -> list[list[float]]:
    """Return the scores as floats, or raise ValueError on an empty group, ragged rows or bad values."""
    rows = [list(row) for row in scores]
    if not rows:
        raise ValueError("empty group: need the scores of at least one rollout")
    n_criteria = len(rows[0])
    if n_criteria == 0:
        raise ValueError("rollout 0 has no criterion scores: a task needs at least one rubric criterion")
    out: list[list[float]] = []
    for i, row in enumerate(rows):
        if len(row) != n_criteria:
            raise ValueError(
                f"ragged scores: rollout 0 has {n_criteria} criteria but rollout {i} has {len(row)}; "
                "every rollout of a group must be scored on the same criteria"
            )
        checked: list[float] = []
        for k, value in enumerate(row):
            # bool is an int subclass: True/False are valid pass/fail scores.
            if not isinstance(value, int | float):
                raise ValueError(f"score [{i}][{k}] is {value!r}, expected a number in [0, 1]")
            number = float(value)
            if math.isnan(number) or not 0.0 <= number <= 1.0:
                raise ValueError(f"score [{i}][{k}] is {value!r}, outside [0, 1]")
            checked.append(number)
        out.append(checked)
    return out


def _completed(row: Sequence[float]) -> float:
    return 1.0 if all(score == 1.0 for score in row) else 0.0


def completion_focused_rubric_reward(
    scores: Scores, *, beta: float = 1.0, lam: float = 0.5, eps: float = 0.05
) -> list[float]:
    """CFRR reward of each rollout of one group (same task), in the order given."""
    if not (math.isfinite(beta) and beta >= 0.0):
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    if not (math.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    rows = _validated(scores)
    n_rollouts, n_criteria = len(rows), len(rows[0])
    pass_rates = [sum(row[k] for row in rows) / n_rollouts for k in range(n_criteria)]
    raw = [(1.0 - p + eps) ** beta for p in pass_rates]
    total = sum(raw)
    # Only with eps = 0 and every criterion passed by the whole group: no criterion is harder, weigh them equally.
    weights = [w / total for w in raw] if total > 0.0 else [1.0 / n_criteria] * n_criteria
    return [
        lam * _completed(row) + (1.0 - lam) * sum(w * s for w, s in zip(weights, row, strict=True)) for row in rows
    ]


def binary_reward(scores: Scores) -> list[float]:
    """Baseline: 1.0 for a rollout that passes every criterion, else 0.0."""
    return [_completed(row) for row in _validated(scores)]


def rubric_reward(scores: Scores) -> list[float]:
    """Baseline: the plain mean of a rollout's criterion scores."""
    return [sum(row) / len(row) for row in _validated(scores)]


def group_rewards(
    task_ids: Sequence[Hashable],
    scores: Scores,
    kind: RewardKind | str = "cfrr",
    **knobs: float,
) -> list[float]:
    """Rewards for a batch that mixes tasks, returned in the batch's order.

    Groups are formed by task id, never by position: a trainer process may see only a slice of
    each task's rollouts, and in any order. ``knobs`` (``beta``, ``lam``, ``eps``) go to CFRR.
    """
    if kind not in ("cfrr", "binary", "rubric"):
        raise ValueError(f"unknown reward kind {kind!r}; expected 'cfrr', 'binary' or 'rubric'")
    if kind != "cfrr" and knobs:
        raise ValueError(f"reward kind {kind!r} takes no knobs, got {sorted(knobs)}")
    unknown = sorted(set(knobs) - {"beta", "lam", "eps"})
    if unknown:
        raise ValueError(f"unknown CFRR knob(s) {unknown}; expected beta, lam, eps")
    if len(task_ids) != len(scores):
        raise ValueError(f"got {len(task_ids)} task ids but {len(scores)} score rows")
    if not task_ids:
        raise ValueError("empty batch: need at least one rollout")
    groups: dict[Hashable, list[int]] = {}
    for position, task_id in enumerate(task_ids):
        groups.setdefault(task_id, []).append(position)
    rewards: list[float] = [0.0] * len(task_ids)
    for task_id, positions in groups.items():
        group = [scores[p] for p in positions]
        try:
            if kind == "cfrr":
                values = completion_focused_rubric_reward(group, **knobs)
            elif kind == "binary":
                values = binary_reward(group)
            else:
                values = rubric_reward(group)
        except ValueError as error:
            raise ValueError(f"task {task_id!r}: {error}") from None
        for position, value in zip(positions, values, strict=True):
            rewards[position] = value
    return rewards
