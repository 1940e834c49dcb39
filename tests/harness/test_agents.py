"""Agents come from one table, and only the reference agent knows a task beyond its messages and tools."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest

from harness.agents import (
    AGENTS,
    Agent,
    AgentConfig,
    AgentKind,
    AgentTurn,
    Message,
    ReferenceAgent,
    ScriptedAgent,
    TaskBook,
    ToolSchema,
    TurnContext,
    make_agent,
    parse_agent_spec,
)
from harness.errors import AgentUnavailableError, HarnessInputError
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import InProcessTransport
from harness.trajectory import Trajectory
from mcp_services.serving.surface import Mode
from mcp_services.tasks.spec import TaskSpec


def _run(task: TaskSpec, agent: Agent, mode: Mode = "direct") -> Trajectory:
    transport = InProcessTransport()
    try:
        return asyncio.run(run_episode(RolloutJob(task, 0, 0), agent, transport, RunnerConfig(mode=mode)))
    finally:
        transport.close()


class _Echo:
    """An agent kind added for the test: it repeats its target."""

    name = "echo"

    def __init__(self, target: str) -> None:
        self.target = target

    @classmethod
    def from_config(cls, target: str, config: AgentConfig, tasks: TaskBook) -> _Echo:
        return cls(target)

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        return AgentTurn(content=self.target)

    async def aclose(self) -> None:
        return None


def test_adding_an_agent_kind_is_one_row_and_every_spec_check_and_message_follows(
    monkeypatch: pytest.MonkeyPatch, tasks: list[TaskSpec]
) -> None:
    monkeypatch.setitem(AGENTS, "echo", AgentKind("echo", _Echo.from_config, "<words>"))
    agent = make_agent(AgentConfig("echo:hello there"), {})
    assert _run(tasks[0], agent).answer == "hello there"
    assert parse_agent_spec("echo:x") == ("echo", "x")
    with pytest.raises(HarnessInputError, match=r"use reference, null, .*hf:<model path\|smollm2\|tiny-qwen3> or echo:<words>"):
        AgentConfig("gpt4")
    with pytest.raises(HarnessInputError, match="needs a model after 'echo:'"):
        AgentConfig("echo:")


def _fields(value: Any) -> list[Any]:
    """Every value reachable from a turn context, however deep."""
    found = [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            found += _fields(getattr(value, item.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found += _fields(item)
    elif isinstance(value, dict):
        for item in value.values():
            found += _fields(item)
    return found


def test_a_model_agent_sees_the_messages_and_tools_but_never_the_plan_or_the_answer(tasks: list[TaskSpec]) -> None:
    note, question = tasks[0], tasks[1]
    # What only the plan and the answer know: the company id found by a lookup, the amount asked for.
    hidden = {note.id: "co_0004", question.id: "21600"}
    assert all(hidden[t.id] not in t.instruction for t in (note, question))
    seen: list[tuple[list[Message], list[ToolSchema], TurnContext]] = []

    def spy(messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        seen.append(([dict(m) for m in messages], tools, context))
        return AgentTurn(content="Nothing to add.")

    modes: tuple[Mode, ...] = ("direct", "discover")
    for task in (note, question):
        for mode in modes:
            seen.clear()
            _run(task, ScriptedAgent(spy), mode)
            (messages, tools, context), = seen
            assert context.task_id == task.id
            reachable = _fields(context)
            assert all(isinstance(v, (str, int, float, bool)) or v is context for v in reachable), reachable
            assert not any(isinstance(v, TaskSpec) for v in reachable)
            text = json.dumps([messages, tools, dataclasses.asdict(context)])
            assert hidden[task.id] not in text and task.instruction in text


def test_the_reference_agent_replays_the_plans_it_was_built_with_and_refuses_any_other(tasks: list[TaskSpec]) -> None:
    note, other = tasks[0], tasks[2]
    reference = make_agent(AgentConfig("reference"), {note.id: note})
    assert isinstance(reference, ReferenceAgent) and _run(note, reference).passed
    with pytest.raises(AgentUnavailableError, match=f"not built with task {other.id}"):
        _run(other, reference)


def test_a_host_can_add_tasks_to_a_reference_agent_after_it_is_built(tasks: list[TaskSpec]) -> None:
    book: dict[str, TaskSpec] = {}
    reference = ReferenceAgent(book)
    book[tasks[2].id] = tasks[2]
    trajectory = _run(tasks[2], reference)
    assert trajectory.passed and trajectory.n_tool_calls == len(tasks[2].plan)
    calls = [c["function"] for m in trajectory.messages for c in m.get("tool_calls") or ()]
    assert calls[0] == {"name": "crm__find_contact_by_email", "arguments": '{"email": "zed.quill@quill.example"}'}
