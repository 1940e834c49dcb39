"""The policy as a harness agent: each turn is sampled from the model being trained, token by token on record.

The harness's runner drives the episode (prompt, tool calls through the task's private episode,
grading) exactly as it does for evaluation; this agent only turns the runner's messages into the
next turn. It keeps one ``Transcript`` per episode, so that GRPO later scores exactly the tokens
that were sampled, and it parses turns with the harness's ``<tool_call>`` parser.

One ``PolicyAgent`` serves one batch of rollouts (the harness asks agents to be stateless across
episodes; the transcripts are this batch's record, keyed by episode, and are read once it ends).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.agents.base import AgentTurn, Message, ToolSchema, TurnContext
from harness.errors import AgentError
from harness.parsing import parse_completion
from training.rl_generation import EpisodeKey, GenerationRequest, TurnBatcher
from training.rl_tokens import ChatTokens, Transcript

__all__ = ["PolicyAgent", "TurnLimits"]


@dataclass(frozen=True, slots=True)
class TurnLimits:
    """Token budgets: per turn, per episode after the prompt (GRPO's completion), and the model's context."""

    max_turn_tokens: int
    max_completion_length: int
    context_length: int


def _trailing_tool_messages(messages: list[Message]) -> list[Message]:
    """The tool results the runner appended since the model's last turn."""
    tail: list[Message] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        tail.append(message)
    return tail[::-1]


class PolicyAgent:
    def __init__(self, name: str, chat: ChatTokens, batcher: TurnBatcher, limits: TurnLimits) -> None:
        self.name = name
        self._chat = chat
        self._batcher = batcher
        self._limits = limits
        self.transcripts: dict[EpisodeKey, Transcript] = {}

    def _budget(self, transcript: Transcript, pending: int) -> int:
        used = len(transcript.completion_ids) + pending
        return min(
            self._limits.max_turn_tokens,
            self._limits.max_completion_length - used,
            self._limits.context_length - len(transcript.prompt_ids) - used,
        )

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        key: EpisodeKey = (context.task_id, context.rollout)
        transcript = self.transcripts.get(key)
        pending: list[int] = []
        if transcript is None:
            transcript = self.transcripts[key] = Transcript(self._chat.prompt_ids(messages, tools))
        else:
            if transcript.completion_ids and transcript.completion_ids[-1] not in self._chat.stop_ids:
                pending.append(self._chat.end_of_turn)  # the turn was cut at its token limit: close it
            pending += self._chat.tool_suffix_ids(_trailing_tool_messages(messages))
        budget = self._budget(transcript, len(pending))
        if budget < 1:
            # The runner ends the episode here and grades it as it stands.
            raise AgentError("the episode used up its token budget (max_completion_length or the model's context)")
        transcript.add_template(pending)
        turn = await self._batcher.submit(GenerationRequest(key, context.turn, transcript.context(), budget))
        transcript.add_model(turn.ids, turn.logprobs)
        return parse_completion(self._chat.decode(turn.ids))

    async def aclose(self) -> None:
        return None
