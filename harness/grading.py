"""Re-grading a saved trajectory: replay its tool calls into a fresh episode and grade that state.

Live grading happens in the runner (``task.grade`` on the episode's final diff). This is the
later, independent check: it needs only the task and the trajectory, and it also reports any tool
result that differs from the recorded one (which would mean the environment changed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from harness.agents.base import ToolCallRequest
from harness.bounds import shows
from harness.runner import decode_arguments
from harness.trajectory import Trajectory
from mcp_services.kernel.results import ToolResult
from mcp_services.serving.surface import ToolSurface
from mcp_services.tasks.episodes import episode_for
from mcp_services.tasks.grading import Grade
from mcp_services.tasks.spec import TaskSpec

__all__ = ["Regrade", "recorded_calls", "regrade"]


@dataclass(frozen=True)
class Regrade:
    grade: Grade
    mismatches: list[str] = field(default_factory=list)  # tool results that differ from the recording

    def agrees_with(self, trajectory: Trajectory) -> bool:
        """Same criteria, rubric score, pass and collateral as recorded."""
        return (
            self.grade.criteria == trajectory.criteria
            and abs(self.grade.rubric_score - trajectory.rubric_score) < 1e-12
            and self.grade.passed == trajectory.passed
            and list(self.grade.collateral) == trajectory.collateral
        )


def recorded_calls(trajectory: Trajectory) -> Iterator[tuple[ToolCallRequest, str | None]]:
    """Each tool call in order, with the result text the model got (None if none was recorded)."""
    results = {m.get("tool_call_id"): m.get("content") for m in trajectory.messages if m.get("role") == "tool"}
    for message in trajectory.messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            request = ToolCallRequest(str(function.get("name") or ""), str(function.get("arguments") or "{}"))
            yield request, results.get(call.get("id"))


def regrade(trajectory: Trajectory, task: TaskSpec) -> Regrade:
    """Replay ``trajectory``'s tool calls into a fresh in-process episode of ``task`` and grade it."""
    if trajectory.task_id != task.id:
        raise ValueError(f"trajectory is for task {trajectory.task_id}, not {task.id}")
    mismatches: list[str] = []
    with episode_for(task) as episode:
        surface = ToolSurface(episode, trajectory.mode)  # type: ignore[arg-type]
        for index, (call, recorded) in enumerate(recorded_calls(trajectory)):
            arguments = decode_arguments(call)
            if isinstance(arguments, ToolResult):
                # A call that could not be read reached nothing; its recorded wording may come from
                # the agent's parser, so only the failure itself must match.
                if recorded is not None and not _is_failure(recorded):
                    mismatches.append(
                        f"tool call {index} ({call.name}) cannot be decoded but was recorded as a success"
                    )
                continue
            text = surface.call(call.name, arguments).result.to_json()
            if recorded is not None and not shows(recorded, text):  # the model may have seen it cut
                mismatches.append(f"tool call {index} ({call.name}) returned a different result than recorded")
        grade = task.grade(episode.diff(), trajectory.answer)
    return Regrade(grade, mismatches)


def _is_failure(text: str) -> bool:
    try:
        return json.loads(text).get("success") is False
    except (json.JSONDecodeError, AttributeError):
        return False
