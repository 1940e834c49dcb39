"""The trajectory viewer's data: per (task, rollout), each run's messages, grade and state diff.

Trajectories do not store the state diff; it is recomputed by replaying the recorded tool calls
into a fresh episode of the task (as ``harness regrade`` does), which also re-checks the grade. The
viewer holds at most ``limit`` rollouts, those that failed in some run first, so a report of a
large run stays a file a browser opens at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.grading import recorded_calls
from harness.report.runs import RunData
from harness.runner import decode_arguments
from harness.tools import EpisodePool
from harness.trajectory import Trajectory
from mcp_services.kernel.results import ToolResult
from mcp_services.serving.surface import ToolSurface
from mcp_services.tasks.spec import TaskSpec

__all__ = ["ViewerData", "viewer_data"]

_MAX_TEXT = 20_000  # characters of one message kept in the report


@dataclass(frozen=True)
class ViewerData:
    items: list[dict[str, Any]]
    n_keys: int  # rollouts in all runs together; items holds at most the limit of them


def _clip(text: Any) -> Any:
    if isinstance(text, str) and len(text) > _MAX_TEXT:
        return f"{text[:_MAX_TEXT]}\n... ({len(text) - _MAX_TEXT} more characters not shown)"
    return text


def _message(message: dict[str, Any]) -> dict[str, Any]:
    view = {k: _clip(v) for k, v in message.items() if k != "tool_calls"}
    if message.get("tool_calls"):
        view["tool_calls"] = [
            {
                "id": call.get("id"),
                "name": (call.get("function") or {}).get("name"),
                "arguments": _clip((call.get("function") or {}).get("arguments")),
            }
            for call in message["tool_calls"]
        ]
    return view


def _first_user_message(trajectory: Trajectory) -> str:
    return next((str(m.get("content") or "") for m in trajectory.messages if m.get("role") == "user"), "")


def _replay(trajectory: Trajectory, task: TaskSpec, pool: EpisodePool) -> tuple[dict[str, Any], bool]:
    """The state diff of the recorded calls, and whether re-grading it agrees with the record."""
    pooled = pool.acquire(task)
    try:
        surface = ToolSurface(pooled.episode, trajectory.mode)  # type: ignore[arg-type]
        for call, _ in recorded_calls(trajectory):
            arguments = decode_arguments(call)
            if not isinstance(arguments, ToolResult):
                surface.call(call.name, arguments)
        diff = pooled.episode.diff()
        grade = task.grade(diff, trajectory.answer)
    except BaseException:
        pooled.episode.close()
        raise
    pool.release(task, pooled)
    agrees = grade.criteria == trajectory.criteria and grade.passed == trajectory.passed
    return {service: d.to_dict() for service, d in sorted(diff.items()) if d}, agrees


def _view(trajectory: Trajectory, task: TaskSpec | None, pool: EpisodePool) -> dict[str, Any]:
    view: dict[str, Any] = {
        "agent": trajectory.agent,
        "mode": trajectory.mode,
        "passed": trajectory.passed,
        "rubric_score": trajectory.rubric_score,
        "criteria": trajectory.criteria,
        "collateral": trajectory.collateral,
        "answer": _clip(trajectory.answer),
        "error": _clip(trajectory.error),
        "stop_reason": trajectory.stop_reason,
        "n_tool_calls": trajectory.n_tool_calls,
        "n_service_calls": trajectory.n_service_calls,
        "n_turns": trajectory.n_turns,
        "n_tools": len(trajectory.tools),
        "timings": trajectory.timings,
        "messages": [_message(m) for m in trajectory.messages],
        "diff": None,
        "regrade_agrees": None,
    }
    if task is not None:
        view["diff"], view["regrade_agrees"] = _replay(trajectory, task, pool)
    return view


def viewer_data(runs: Sequence[RunData], limit: int) -> ViewerData:
    by_run = [{t.key: t for t in run.trajectories} for run in runs]
    keys = sorted(set().union(*by_run))
    # Failures first (where a person looks), then by task and rollout; the same order in every report.
    keys.sort(key=lambda k: all(k in index and index[k].passed for index in by_run))
    items: list[dict[str, Any]] = []
    pool = EpisodePool(max_idle=8)
    try:
        for task_id, rollout in keys[:limit]:
            task = next((run.tasks[task_id] for run in runs if task_id in run.tasks), None)
            first = next(index[(task_id, rollout)] for index in by_run if (task_id, rollout) in index)
            items.append(
                {
                    "task_id": task_id,
                    "rollout": rollout,
                    "instruction": task.instruction if task else _first_user_message(first),
                    "rubric": [{"id": r.id, "description": r.description} for r in task.rubric] if task else [],
                    "task_info": first.task_info,
                    "runs": [
                        _view(index[(task_id, rollout)], run.tasks.get(task_id), pool)
                        if (task_id, rollout) in index
                        else None
                        for run, index in zip(runs, by_run, strict=True)
                    ],
                }
            )
    finally:
        pool.close()
    return ViewerData(items, len(keys))
