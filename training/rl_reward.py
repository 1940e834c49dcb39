"""The GRPO reward function: rubric scores of graded episodes → CFRR (or a baseline), grouped by task id.

TRL calls it with the dataset's columns (``task_id``) and the rollout function's extra fields
(``criterion_scores``, ``trajectory``) for this process's slice of the batch. A group's CFRR weights
depend on the whole group's pass rates, so the slices of every process are gathered first and the
groups are formed by task id over the whole batch (``training.rewards.group_rewards``), never by
position. Each rollout, with its reward, is appended to ``rollouts.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from training.rewards import RewardKind, group_rewards

__all__ = ["GroupRubricReward", "RolloutLog"]


class RolloutLog:
    """Appends every rollout of the run (its trajectory record, step and reward) to a JSON Lines file.

    The file is emptied when the log is made: a run reusing an output folder must not mix in old rollouts.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")

    def write(self, step: int, kind: str, trajectories: Sequence[dict[str, Any]], rewards: Sequence[float]) -> None:
        with self.path.open("a", encoding="utf-8") as lines:
            for trajectory, reward in zip(trajectories, rewards, strict=True):
                record = {"step": step, "reward_kind": kind, "reward": reward, **trajectory}
                lines.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def _gathered(task_ids: list[str], scores: list[list[float]]) -> tuple[list[str], list[list[float]], int]:
    """Every process's rows (in process order) and where this process's rows start."""
    from accelerate import PartialState
    from accelerate.utils import gather_object

    state = PartialState()
    if state.num_processes == 1:
        return task_ids, scores, 0
    # GRPO gives every process a slice of the same length.
    return gather_object(task_ids), gather_object(scores), state.process_index * len(task_ids)


class GroupRubricReward:
    """``reward_funcs=[GroupRubricReward(...)]``: one reward per rollout, from the grade's criteria."""

    def __init__(self, kind: RewardKind, knobs: dict[str, float], log: RolloutLog | None = None) -> None:
        self.kind = kind
        self.knobs = dict(knobs)
        self.log = log
        self.__name__ = kind  # TRL logs the reward under the function's name

    def __call__(
        self,
        *,
        task_id: Sequence[str],
        criterion_scores: Sequence[Sequence[float]],
        trajectory: Sequence[dict[str, Any]],
        trainer_state: Any = None,
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        ids = [str(value) for value in task_id]
        for expected, record in zip(ids, trajectory, strict=True):
            if record["task_id"] != expected:  # the prompt's tag and the dataset row disagree: a bug, not bad input
                raise RuntimeError(f"rollout of task {record['task_id']} scored as task {expected}")
        all_ids, all_scores, start = _gathered(ids, [list(row) for row in criterion_scores])
        rewards = group_rewards(all_ids, all_scores, self.kind, **self.knobs)[start : start + len(ids)]
        if log_metric is not None:
            n = len(trajectory)
            log_metric("compoworld/pass_rate", sum(bool(t["passed"]) for t in trajectory) / n)
            log_metric("compoworld/rubric_score", sum(float(t["rubric_score"]) for t in trajectory) / n)
            log_metric("compoworld/service_calls", sum(int(t["n_service_calls"]) for t in trajectory) / n)
        if self.log is not None:
            step = int(getattr(trainer_state, "global_step", 0))
            self.log.write(step, self.kind, trajectory, rewards)
        return rewards
