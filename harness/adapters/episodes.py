"""One rollout's private episode, held open while an outside framework drives it call by call.

The harness's runner owns a whole rollout in one function; RL frameworks instead call back once per
turn (verifiers) or once per step (OpenEnv). ``AdapterEpisode`` is the runner's episode cut at
those seams and nothing more: it opens a session on the harness's tool transport (a fresh or reset
private world with the task's setup applied), answers tool calls exactly as the runner does
(``decode_arguments`` then the session), and at the end takes the state diff and grades it with
``task.grade``. The same actions therefore get the same grade as ``harness collect``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.agents.base import Message, ToolCallRequest, ToolSchema
from harness.defaults import load_task_set
from harness.errors import HarnessInputError
from harness.prompt import system_prompt, user_prompt
from harness.runner import RunnerConfig, decode_arguments
from harness.tools import CallOutcome, ToolSession, ToolTransport
from mcp_services.kernel.results import ToolResult
from mcp_services.serving.surface import MODES, Mode
from mcp_services.tasks.spec import TaskLookupError, TaskSpec, find_task

__all__ = [
    "AdapterEpisode",
    "EpisodeClosedError",
    "EpisodeResult",
    "TaskCatalog",
    "TaskSource",
    "check_mode",
    "episode_prompt",
]

#: A task file (``tasks.jsonl``), the tasks themselves, or None for the harness's default set.
TaskSource = str | os.PathLike[str] | Sequence[TaskSpec] | None

_CALL_TIMEOUT = RunnerConfig().call_timeout


class EpisodeClosedError(RuntimeError):
    """A call on an episode that has already ended: nothing ran, nothing changed."""


class _Abandoned(Exception):
    """Thrown into the transport's session so that it closes the episode instead of reusing it."""


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise HarnessInputError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    return mode  # type: ignore[return-value]


def episode_prompt(task: TaskSpec, mode: Mode) -> list[Message]:
    """The system prompt and the request, exactly as the harness's runner starts a conversation."""
    return [{"role": "system", "content": system_prompt(task, mode)}, {"role": "user", "content": user_prompt(task)}]


class TaskCatalog:
    """The tasks an adapter serves, by id: from a task file, a list, or the harness's default set."""

    def __init__(self, tasks: TaskSource) -> None:
        if tasks is None:
            loaded = load_task_set(None)
        elif isinstance(tasks, (str, os.PathLike)):
            loaded = load_task_set(Path(tasks))
        else:
            loaded = list(tasks)
            wrong = next((t for t in loaded if not isinstance(t, TaskSpec)), None)
            if wrong is not None:
                kind = type(wrong).__name__
                raise HarnessInputError(f"tasks must be TaskSpec objects or a task file path, not {kind}")
        if not loaded:
            raise HarnessInputError("the task set is empty: pass a tasks.jsonl from `composer generate`")
        self.tasks: list[TaskSpec] = loaded
        self._by_id: dict[str, TaskSpec] = {}
        for task in loaded:
            if task.id in self._by_id:
                raise HarnessInputError(f"task {task.id} appears twice in the task set")
            self._by_id[task.id] = task

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[TaskSpec]:
        return iter(self.tasks)

    def get(self, task_id: object) -> TaskSpec:
        """The task with this id or, as every harness command takes it, the one whose id starts with it."""
        if isinstance(task_id, str) and task_id in self._by_id:
            return self._by_id[task_id]
        examples = ", ".join(t.id for t in self.tasks[:3])
        if not isinstance(task_id, str) or not task_id:
            raise HarnessInputError(f"no task {task_id!r} in this task set ({len(self.tasks)} tasks; ids look like "
                                    f"{examples})")
        try:
            return find_task(self.tasks, task_id, where="this task set")
        except TaskLookupError as exc:
            raise HarnessInputError(f"{exc.what}; ids look like {examples}") from None


@dataclass(frozen=True, slots=True)
class EpisodeResult:
    """How a rollout ended and its grade; ``criterion_scores`` follow the task's rubric order (for CFRR)."""

    task_id: str
    stop: str
    answer: str | None
    criteria: dict[str, bool]
    criterion_scores: list[float]
    rubric_score: float
    passed: bool
    collateral: list[str]
    n_tool_calls: int
    n_service_calls: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AdapterEpisode:
    """A private episode of one task for one rollout. Open with ``await AdapterEpisode.open(...)``;
    end with ``finish`` (graded) or ``close`` (abandoned: closed, never reused)."""

    def __init__(
        self, task: TaskSpec, mode: Mode, session: ToolSession, stack: AsyncExitStack, tools: list[ToolSchema]
    ) -> None:
        self.task = task
        self.mode = mode
        self.tools = tools
        self._session = session
        self._stack = stack
        self._ended: str | None = None  # why the episode can take no more calls
        self.n_tool_calls = 0
        self.n_service_calls = 0

    @classmethod
    async def open(cls, transport: ToolTransport, task: TaskSpec, mode: Mode) -> AdapterEpisode:
        stack = AsyncExitStack()
        session = await stack.enter_async_context(transport.open(task, mode))
        try:
            tools = await session.list_tools()
        except BaseException as exc:
            await stack.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return cls(task, mode, session, stack, tools)

    @property
    def closed(self) -> bool:
        return self._ended is not None

    def check_open(self, what: str) -> None:
        """Raise ``EpisodeClosedError`` (saying why) if the episode can take no more calls."""
        if self._ended is not None:
            raise EpisodeClosedError(
                f"cannot {what}: the episode of task {self.task.id} has ended ({self._ended}); start a new episode"
            )

    async def call(self, name: str, arguments: str | Mapping[str, Any] | None) -> CallOutcome:
        """One tool call as the model wrote it (arguments as JSON text, or an object). A malformed call
        gets the error result the model reads, as in the harness; only a call after the end raises."""
        self.check_open(f"call {name!r}")
        if arguments is None or isinstance(arguments, str):
            decoded = decode_arguments(ToolCallRequest(name, arguments or "{}"))
        else:
            decoded = dict(arguments)
        if isinstance(decoded, ToolResult):
            outcome = CallOutcome(decoded.to_json(), False)
        else:
            outcome = await self._session.call(name, decoded, _CALL_TIMEOUT)
        self.n_tool_calls += 1
        self.n_service_calls += outcome.service is not None
        return outcome

    async def finish(self, answer: str | None, stop: str) -> EpisodeResult:
        """End the rollout: take the state diff, close the episode, grade it."""
        self.check_open("finish")
        self._ended = f"finished: {stop}"
        try:
            diff = await self._session.final_diff()
        except BaseException as exc:
            await self._stack.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        await self._stack.aclose()
        grade = self.task.grade(diff, answer)
        return EpisodeResult(
            task_id=self.task.id,
            stop=stop,
            answer=answer,
            criteria=dict(grade.criteria),
            criterion_scores=[1.0 if grade.criteria[item.id] else 0.0 for item in self.task.rubric],
            rubric_score=grade.rubric_score,
            passed=grade.passed,
            collateral=list(grade.collateral),
            n_tool_calls=self.n_tool_calls,
            n_service_calls=self.n_service_calls,
        )

    async def close(self, reason: str = "abandoned") -> None:
        """End without a grade (the rollout was abandoned). Idempotent."""
        if self._ended is not None:
            return
        self._ended = reason
        error = _Abandoned(reason)
        await self._stack.__aexit__(_Abandoned, error, None)
