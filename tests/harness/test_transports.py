"""In process and over MCP (stdio, streamable HTTP), the model sees the same tools and results."""

from __future__ import annotations

import asyncio
import json

import pytest
from harness_fixtures import hostile_turn

from harness.agents import AgentTurn, Message, ScriptedAgent, ToolCallRequest, ToolSchema, TurnContext
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import make_transport
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskSpec

pytestmark = pytest.mark.e2e


def call(name: str, arguments: object) -> ToolCallRequest:
    return ToolCallRequest(name, arguments if isinstance(arguments, str) else json.dumps(arguments))


EMAIL = {"email": "zed.quill@quill.example"}
CONVERT = {"contact_id": "ct_9001", "lifecycle_stage": "customer"}

DIRECT = [
    AgentTurn(content="Looking the lead up.", tool_calls=(
        call("crm__find_contact_by_email", '{"email": '),  # bad JSON
        call("crm__find_contact", EMAIL),  # unknown tool
        call("crm__find_contact_by_email", {"mail": "zed.quill@quill.example"}),  # wrong arguments
        call("crm__find_contact_by_email", EMAIL),
    )),
    AgentTurn(tool_calls=(call("crm__update_contact", CONVERT),)),
]
DISCOVER = [
    AgentTurn(tool_calls=(
        call("list_services", {}),
        call("list_tools", {"service": "crm"}),
        call("describe_tool", {"service": "crm", "tool": "update_contact"}),
        call("call_tool", {"service": "crm", "tool": "find_contact", "arguments": EMAIL}),  # unknown tool
        call("call_tool", {"service": "crm", "tool": "find_contact_by_email", "arguments": EMAIL}),
    )),
    AgentTurn(tool_calls=(call("call_tool", {"service": "crm", "tool": "update_contact", "arguments": CONVERT}),)),
]


def scripted(turns: list[AgentTurn]) -> ScriptedAgent:
    def play(messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        return turns[context.turn] if context.turn < len(turns) else AgentTurn(content="Zed Quill is now a customer.")

    return ScriptedAgent(play)


def rollout(task: TaskSpec, transport: str, mode: str, turns: list[AgentTurn]) -> Trajectory:
    job = RolloutJob(task, 0, 11)
    config = RunnerConfig(mode=mode, call_timeout=60)  # type: ignore[arg-type]
    return asyncio.run(run_episode(job, scripted(turns), make_transport(transport), config))


@pytest.mark.parametrize(("transport", "mode", "turns"), [("stdio", "direct", DIRECT), ("http", "discover", DISCOVER)])
def test_mcp_transport_gives_the_same_trajectory_as_in_process(tasks: list[TaskSpec], transport: str, mode: str,
                                                               turns: list[AgentTurn]) -> None:
    task = tasks[2]  # it has setup records: the server's file-backed state must hold them once
    local = rollout(task, "inprocess", mode, turns)
    remote = rollout(task, transport, mode, turns)
    assert remote.without_timings() == local.without_timings()
    assert local.passed and local.n_service_calls == (3 if mode == "direct" else 2)
    results = [json.loads(m["content"]) for m in local.messages if m["role"] == "tool"]
    assert [r["success"] for r in results].count(False) == (3 if mode == "direct" else 1)


def test_hostile_calls_get_the_same_error_results_over_mcp_as_in_process(tasks: list[TaskSpec]) -> None:
    turns = [hostile_turn(), AgentTurn(tool_calls=(call("crm__get_deal", {"deal_id": "dl_0002"}),))]
    local = rollout(tasks[1], "inprocess", "direct", turns)
    remote = rollout(tasks[1], "stdio", "direct", turns)
    assert remote.without_timings() == local.without_timings()
    assert remote.stop_reason == "answer" and remote.n_tool_calls == len(turns[0].tool_calls) + 1
