"""Agents for the Ray backend tests, in a module of their own: Ray actors import them by name
(the test fixture puts this folder on the workers' PYTHONPATH)."""

from __future__ import annotations

from harness.agents import AgentTurn, Message, ReferenceAgent, TaskBook, ToolCallRequest, ToolSchema, TurnContext
from harness.errors import AgentUnavailableError, HarnessInputError


class SeededAgent(ReferenceAgent):
    """The reference plan, but the rollout seed decides whether it first makes a bad call: the
    trajectories then depend on the seed, so equal trajectories prove the seeds travel intact."""

    name = "seeded"

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        extra = context.seed % 2
        results = [m for m in messages if m["role"] == "tool"]
        if extra and not results:
            return AgentTurn(
                tool_calls=(ToolCallRequest("crm__get_deal", f'{{"deal_id": "dl_{context.seed % 9973}"}}'),)
            )
        # The reference agent counts tool results to find its step: hide the extra call's.
        return await super().respond([m for m in messages if m["role"] != "tool"] + results[extra:], tools, context)


class DownAgent(ReferenceAgent):
    """A model endpoint that is down for one task: the run must stop with that error."""

    name = "down"

    def __init__(self, down_for: str, tasks: TaskBook) -> None:
        super().__init__(tasks)
        self.down_for = down_for

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        if context.task_id == self.down_for:
            raise AgentUnavailableError("the model endpoint http://127.0.0.1:9/v1 is down (after 4 retries)")
        return await super().respond(messages, tools, context)


def missing_model(tasks: TaskBook) -> DownAgent:
    """An agent factory that fails on the worker, as a model path missing on that node would."""
    raise HarnessInputError("no model at /models/missing on this node")
