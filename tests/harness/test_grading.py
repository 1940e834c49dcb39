"""Grades are computed on the live final state, and the same grade comes back from a saved trajectory."""

from __future__ import annotations

import asyncio
import json

from harness.agents import AgentTurn, NullAgent, ReferenceAgent, ScriptedAgent, ToolCallRequest
from harness.grading import regrade
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import InProcessTransport
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskSpec


def rollout(task: TaskSpec, agent: object, mode: str = "direct") -> Trajectory:
    job = RolloutJob(task, 0, 1)
    live = asyncio.run(run_episode(job, agent, InProcessTransport(), RunnerConfig(mode=mode)))  # type: ignore[arg-type]
    return Trajectory.from_line(live.to_line())  # as saved and read back


def test_regrading_a_saved_trajectory_gives_the_same_grade(tasks: list[TaskSpec]) -> None:
    sloppy = ScriptedAgent([AgentTurn(tool_calls=(
        ToolCallRequest("crm__update_contact", '{"contact_id": "ct_9001", "lifecycle_stage": "customer"}'),
        ToolCallRequest("crm__update_contact", '{"contact_id": "ct_0054", "lifecycle_stage": "customer"}'),
        ToolCallRequest("crm__update_contact", '{"contact_id": '),
        ToolCallRequest("unparsed_tool_call", "<junk>", error="Your tool call is not valid JSON."),
    ))])
    for task in tasks:
        for agent in (ReferenceAgent([task]), NullAgent(), sloppy):
            for mode in ("direct", "discover"):
                saved = rollout(task, agent, mode)
                again = regrade(saved, task)
                assert again.agrees_with(saved), (task.instruction, agent, mode)
                assert again.mismatches == []


def test_regrading_reports_tool_results_that_no_longer_match(tasks: list[TaskSpec]) -> None:
    saved = rollout(tasks[0], ReferenceAgent(tasks))
    first_result = next(m for m in saved.messages if m["role"] == "tool")
    first_result["content"] = json.dumps({"success": True, "data": {"items": []}})
    result = regrade(saved, tasks[0])
    assert result.agrees_with(saved)
    assert result.mismatches == ["tool call 0 (crm__search_contacts) returned a different result than recorded"]


def test_a_tampered_grade_is_caught(tasks: list[TaskSpec]) -> None:
    saved = rollout(tasks[0], NullAgent())
    saved.passed, saved.criteria = True, {k: True for k in saved.criteria}
    assert not regrade(saved, tasks[0]).agrees_with(saved)
