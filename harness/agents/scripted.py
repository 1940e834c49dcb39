"""A scripted agent for tests and benchmarks: a fixed list of turns, or a function of the conversation."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence

from harness.agents.base import AgentTurn, Message, ToolSchema, TurnContext

__all__ = ["Script", "ScriptedAgent"]

Script = Callable[[list[Message], list[ToolSchema], TurnContext], AgentTurn | Awaitable[AgentTurn]]


class ScriptedAgent:
    """``turns[i]`` is the answer to the i-th request of an episode (then ``final``), or ``script``
    computes each turn; ``latency`` simulates a model's response time."""

    def __init__(
        self,
        turns: Sequence[AgentTurn] | Script,
        *,
        name: str = "scripted",
        latency: float = 0.0,
        final: AgentTurn = AgentTurn(content="Done."),
    ) -> None:
        self.name = name
        self._turns = turns
        self._latency = latency
        self._final = final

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        if self._latency:
            await asyncio.sleep(self._latency)
        if callable(self._turns):
            turn = self._turns(messages, tools, context)
            return await turn if inspect.isawaitable(turn) else turn
        index = context.turn
        return self._turns[index] if index < len(self._turns) else self._final

    async def aclose(self) -> None:
        return None
