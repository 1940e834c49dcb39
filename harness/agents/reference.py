"""The reference agent (replays the task's plan: proves solvability, gives golden trajectories)
and the null agent (answers at once without a tool: the no-op baseline).

The reference agent is the one agent that knows the tasks: it is built with them (a ``TaskBook``),
since a turn carries only the task's id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness.agents.base import AgentTurn, Message, TaskBook, ToolCallRequest, ToolSchema, TurnContext
from harness.errors import AgentUnavailableError
from mcp_services.tasks.spec import TaskSpec

if TYPE_CHECKING:
    from harness.agents import AgentConfig

__all__ = ["NullAgent", "ReferenceAgent", "reference_answer", "reference_calls"]

NULL_ANSWER = "I have not taken any action."


def reference_answer(task: TaskSpec) -> str:
    """The final message of a reference rollout: the task's expected answer, if it asks a question."""
    expected = task.expected_answer
    if expected is None:
        return "Done."
    text = "; ".join(str(item) for item in expected) if isinstance(expected, list) else str(expected)
    return f"Done. Answer: {text}"


def reference_calls(task: TaskSpec, mode: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of a reference rollout.

    Direct mode: the plan's steps. Discover mode: what a careful agent would do with the meta-tools:
    list the services once, list a service's tools before its first use, describe a tool before its
    first call, then ``call_tool``; so golden trajectories in discover mode show discovery too.
    """
    if mode != "discover":
        return [(f"{step.service}__{step.tool}", dict(step.arguments)) for step in task.plan]
    calls: list[tuple[str, dict[str, Any]]] = [("list_services", {})]
    listed: set[str] = set()
    described: set[tuple[str, str]] = set()
    for step in task.plan:
        if step.service not in listed:
            listed.add(step.service)
            calls.append(("list_tools", {"service": step.service}))
        if (step.service, step.tool) not in described:
            described.add((step.service, step.tool))
            calls.append(("describe_tool", {"service": step.service, "tool": step.tool}))
        calls.append(("call_tool", {"service": step.service, "tool": step.tool, "arguments": dict(step.arguments)}))
    return calls


class ReferenceAgent:
    """One call per turn, then the answer. Stateless: the next call is the number of tool results so far.

    ``tasks``: the tasks it may be asked to run. A mapping by id is kept as given and read at each
    turn, so a host that learns tasks as their jobs arrive (a Ray actor) can add them to it.
    """

    name = "reference"

    def __init__(self, tasks: TaskBook | Iterable[TaskSpec]) -> None:
        self.tasks: TaskBook = tasks if isinstance(tasks, Mapping) else {task.id: task for task in tasks}

    @classmethod
    def from_config(cls, target: str, config: AgentConfig, tasks: TaskBook) -> ReferenceAgent:
        return cls(tasks)

    def task(self, task_id: str) -> TaskSpec:
        """The task this turn is about; a host that did not give it is a bug that stops the run."""
        task = self.tasks.get(task_id)
        if task is None:
            raise AgentUnavailableError(
                f"the reference agent was not built with task {task_id}; build it with the tasks it runs"
            )
        return task

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        task = self.task(context.task_id)
        done = sum(1 for m in messages if m["role"] == "tool")
        calls = reference_calls(task, context.mode)
        if done >= len(calls):
            return AgentTurn(content=reference_answer(task))
        name, arguments = calls[done]
        return AgentTurn(tool_calls=(ToolCallRequest(name, json.dumps(arguments, ensure_ascii=False)),))

    async def aclose(self) -> None:
        return None


class NullAgent:
    """Does nothing: every task must fail against it, or its checks pass on inaction."""

    name = "null"

    @classmethod
    def from_config(cls, target: str, config: AgentConfig, tasks: TaskBook) -> NullAgent:
        return cls()

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        return AgentTurn(content=NULL_ANSWER)

    async def aclose(self) -> None:
        return None
