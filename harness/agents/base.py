"""What an agent is: given the messages and tools so far, the next assistant turn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from mcp_services.serving.surface import Mode
from mcp_services.tasks.spec import TaskSpec

__all__ = ["Agent", "AgentTurn", "Message", "TaskBook", "ToolCallRequest", "ToolSchema", "TurnContext"]

Message = dict[str, Any]  # one OpenAI chat message
ToolSchema = dict[str, Any]  # one OpenAI ``tools`` entry
TaskBook = Mapping[str, TaskSpec]
"""The tasks a host runs, by id: what the reference agent is built with (never handed to a turn)."""


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One tool call as the model wrote it.

    ``arguments`` is the JSON text the model produced (not parsed: bad JSON must reach the runner,
    which answers it with an error result). ``error`` is set when not even the call's structure
    could be read (a broken ``<tool_call>`` block); the runner then answers with that message.
    """

    name: str
    arguments: str = "{}"
    error: str | None = None


@dataclass(frozen=True, slots=True)
class AgentTurn:
    """The model's next message: text, tool calls, and (for reasoning models) its reasoning."""

    content: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    reasoning: str | None = None


@dataclass(frozen=True, slots=True)
class TurnContext:
    """What a turn is about. Agents must not keep per-episode state elsewhere: one agent serves
    many concurrent episodes, and a stateless agent can be re-created anywhere (e.g. a Ray actor).

    Only the task's id: an agent sees the task through the messages and tools, as a model does;
    its plan, checks and answer are never here (the reference agent is built with its tasks).
    """

    task_id: str
    rollout: int
    seed: int  # the rollout's sampling seed (same seed, same samples where the backend allows)
    turn: int
    mode: Mode


@runtime_checkable
class Agent(Protocol):
    """Anything that, given messages and tools, returns the next assistant turn."""

    @property
    def name(self) -> str:
        """The agent's identity as recorded in trajectories (its spec string)."""
        ...

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        """The next turn. Raise ``AgentError`` to end only this episode, ``AgentUnavailableError``
        to stop the run."""
        ...

    async def aclose(self) -> None:
        """Release models, connections and threads."""
        ...
