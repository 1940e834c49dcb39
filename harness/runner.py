"""The episode runner: one agent, one task, one private episode, one trajectory.

The loop: system prompt and instruction; the agent answers; each tool call it makes runs through
the tool seam and its result goes back as a ``tool`` message; the episode ends when the agent
answers without a tool call, or at the turn limit, the episode deadline, or an agent error. The
final state is then graded. Malformed tool calls (bad JSON, unknown tool, wrong arguments) are
answered with error results the model can read: they never end the run.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

from harness.agents.base import Agent, AgentTurn, Message, ToolCallRequest, ToolSchema, TurnContext
from harness.bounds import DEFAULT_MAX_RESULT_CHARS, MIN_MAX_RESULT_CHARS, bound_result
from harness.defaults import DEFAULT_MAX_TURNS
from harness.errors import AgentError, TaskServerError, ToolTransportError
from harness.parsing import UnreadableJson, read_json
from harness.prompt import system_prompt, user_prompt
from harness.tools import CallOutcome, ToolSession, ToolTransport
from harness.trajectory import Trajectory
from mcp_services.kernel.bounds import abridge
from mcp_services.kernel.errors import ErrorCode
from mcp_services.kernel.results import ToolResult
from mcp_services.serving.surface import MODES, Mode
from mcp_services.tasks.spec import TaskSpec

__all__ = ["RolloutJob", "RunnerConfig", "decode_arguments", "rollout_seed", "run_episode", "task_info"]


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    """How episodes run. ``call_timeout`` bounds each model request and each tool call over MCP;
    ``episode_timeout`` bounds a whole rollout (it is then graded as it stands); a tool result
    longer than ``max_result_chars`` reaches the model cut, with a note saying so."""

    mode: Mode = "direct"
    max_turns: int = DEFAULT_MAX_TURNS
    call_timeout: float = 120.0
    episode_timeout: float = 1800.0
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS  # the most of one tool result the model reads

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.max_turns < 1:
            raise ValueError(f"max turns must be at least 1, not {self.max_turns}")
        if self.call_timeout <= 0 or self.episode_timeout <= 0:
            raise ValueError("timeouts must be positive")
        if self.max_result_chars < MIN_MAX_RESULT_CHARS:
            raise ValueError(f"max result chars must be at least {MIN_MAX_RESULT_CHARS:,}, not {self.max_result_chars}")


@dataclass(frozen=True, slots=True)
class RolloutJob:
    """One (task, rollout) to run; plain data, so any backend can ship it."""

    task: TaskSpec
    rollout: int
    seed: int


def rollout_seed(run_seed: int, task_id: str, rollout: int) -> int:
    """The sampling seed of one rollout: stable, independent of order and concurrency."""
    digest = hashlib.sha256(f"{run_seed}:{task_id}:{rollout}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def task_info(task: TaskSpec) -> dict[str, Any]:
    """What evaluation breaks results down by, carried in each trajectory."""
    return {
        "services": list(task.services),
        "capabilities": list(task.capabilities),
        "plan_length": len(task.plan),
    }


def decode_arguments(call: ToolCallRequest) -> dict[str, Any] | ToolResult:
    """The call's arguments as an object, or the error result the model reads instead. Never raises."""
    if call.error is not None:
        return ToolResult.fail(ErrorCode.INVALID_ARGUMENT, call.error)
    text = call.arguments.strip() if isinstance(call.arguments, str) else ""
    try:
        value = read_json(text or "{}")
        if isinstance(value, str):
            # Double-encoded arguments are a common model slip: accept them when they hold an object.
            try:
                value = read_json(value)
            except UnreadableJson:
                pass
    except UnreadableJson as exc:
        return ToolResult.fail(
            ErrorCode.INVALID_ARGUMENT,
            f"The arguments of {abridge(call.name)} are {exc}. Pass one JSON object, e.g. {{\"name\": \"value\"}}.",
        )
    if not isinstance(value, dict):
        return ToolResult.fail(
            ErrorCode.INVALID_ARGUMENT,
            f"Arguments for {abridge(call.name)} must be a JSON object, not {type(value).__name__}.",
        )
    return value


def _assistant_message(turn: AgentTurn, turn_index: int) -> Message:
    message: Message = {"role": "assistant", "content": turn.content}
    if turn.reasoning:
        message["reasoning_content"] = turn.reasoning
    if turn.tool_calls:
        # Ids are ours, not the model's: the model reads them back, and stable ids keep
        # trajectories identical for the same seeds (servers hand out random ones).
        message["tool_calls"] = [
            {
                "id": f"call_{turn_index}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for i, call in enumerate(turn.tool_calls)
        ]
    return message


@dataclass(slots=True)
class _Clock:
    """Wall-clock spent per phase; only ever written to ``timings``."""

    started: float = field(default_factory=time.perf_counter)
    agent: float = 0.0
    tools: float = 0.0

    def remaining(self, budget: float) -> float:
        return budget - (time.perf_counter() - self.started)


@dataclass(slots=True)
class _Transcript:
    """The conversation so far and how it ended."""

    messages: list[Message]
    answer: str | None = None
    stop: str = "max_turns"
    error: str | None = None
    n_turns: int = 0
    n_calls: int = 0
    n_service_calls: int = 0


async def _converse(
    transcript: _Transcript,
    job: RolloutJob,
    agent: Agent,
    session: ToolSession,
    tools: list[ToolSchema],
    config: RunnerConfig,
    clock: _Clock,
) -> _Transcript:
    """Turns until the agent answers, or a limit or an agent error ends the episode."""
    task = job.task
    messages = transcript.messages
    timed_out = f"the episode ran past {config.episode_timeout:g} s"
    for turn_index in range(config.max_turns):
        remaining = clock.remaining(config.episode_timeout)
        if remaining <= 0:
            transcript.stop, transcript.error = "episode_timeout", timed_out
            return transcript
        context = TurnContext(task.id, job.rollout, job.seed, turn_index, config.mode)
        began = time.perf_counter()
        try:
            async with asyncio.timeout(remaining):  # no extra task per turn, unlike wait_for
                turn = await agent.respond(messages, tools, context)
        except TimeoutError:
            transcript.stop, transcript.error = "episode_timeout", timed_out
            return transcript
        except AgentError as exc:
            transcript.stop, transcript.error = "agent_error", str(exc)
            return transcript
        finally:
            clock.agent += time.perf_counter() - began
        transcript.n_turns += 1
        messages.append(_assistant_message(turn, turn_index))
        if not turn.tool_calls:
            transcript.stop, transcript.answer = "answer", turn.content
            return transcript
        began = time.perf_counter()
        for i, call in enumerate(turn.tool_calls):
            timeout = min(config.call_timeout, max(clock.remaining(config.episode_timeout), 0.001))
            outcome = await _call(session, call, timeout)
            transcript.n_calls += 1
            transcript.n_service_calls += outcome.service is not None
            text = bound_result(outcome.text, config.max_result_chars)
            messages.append({"role": "tool", "tool_call_id": f"call_{turn_index}_{i}", "content": text})
        clock.tools += time.perf_counter() - began
    return transcript


async def run_episode(job: RolloutJob, agent: Agent, transport: ToolTransport, config: RunnerConfig) -> Trajectory:
    """Run one rollout and grade it. Raises only for run-level failures (e.g. ``AgentUnavailableError``)."""
    task = job.task
    clock = _Clock()
    transcript = _Transcript(
        [
            {"role": "system", "content": system_prompt(task, config.mode)},
            {"role": "user", "content": user_prompt(task)},
        ]
    )
    async with transport.open(task, config.mode) as session:
        setup_s = time.perf_counter() - clock.started
        tools = await session.list_tools()
        try:
            await _converse(transcript, job, agent, session, tools, config, clock)
        except TaskServerError:
            raise  # another server answered: its results are not this episode's, nothing is graded
        except ToolTransportError as exc:
            # The server stopped answering: no more calls can be made; grade what the state holds.
            transcript.stop, transcript.error = "transport_error", str(exc)
        graded_at = time.perf_counter()
        diff = await session.final_diff()
    grade = task.grade(diff, transcript.answer)
    finished = time.perf_counter()
    return Trajectory(
        task_id=task.id,
        rollout=job.rollout,
        agent=agent.name,
        mode=config.mode,
        seed=job.seed,
        messages=transcript.messages,
        tools=tools,
        answer=transcript.answer,
        criteria=dict(grade.criteria),
        rubric_score=grade.rubric_score,
        passed=grade.passed,
        collateral=list(grade.collateral),
        n_tool_calls=transcript.n_calls,
        n_service_calls=transcript.n_service_calls,
        n_turns=transcript.n_turns,
        stop_reason=transcript.stop,
        error=transcript.error,
        task_info=task_info(task),
        timings={
            "total_s": round(finished - clock.started, 6),
            "setup_s": round(setup_s, 6),
            "agent_s": round(clock.agent, 6),
            "tools_s": round(clock.tools, 6),
            "grade_s": round(finished - graded_at, 6),
        },
    )


async def _call(session: ToolSession, call: ToolCallRequest, timeout: float) -> CallOutcome:
    arguments = decode_arguments(call)
    if isinstance(arguments, ToolResult):
        return CallOutcome(arguments.to_json(), False)
    return await session.call(call.name, arguments, timeout)
