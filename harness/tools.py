"""The one seam through which the harness reaches an episode's tools.

A ``ToolTransport`` opens a ``ToolSession`` for one task's private episode; the runner only ever
lists tools, calls them, and finally asks for the state diff to grade. Implementations:

- ``InProcessTransport`` (here): the episode lives in this process behind a ``ToolSurface``; the
  fast path for rollouts.
- ``McpTransport`` (``harness.mcp_tools``): the episode lives in a task server process reached over
  MCP (stdio or streamable HTTP) with file-backed state that is reopened for grading.

Both give the model byte-identical tool lists and results, so trajectories do not depend on the
transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp_services.kernel.diff import StateDiff
from mcp_services.kernel.episode import Episode, EpisodeSnapshot
from mcp_services.kernel.world import WorldShape
from mcp_services.serving.surface import Mode, ToolSurface
from mcp_services.tasks.episodes import apply_task_setup, episode_for
from mcp_services.tasks.spec import TaskSpec

__all__ = [
    "TRANSPORTS",
    "CallOutcome",
    "EpisodePool",
    "InProcessSession",
    "InProcessTransport",
    "ToolSession",
    "ToolTransport",
    "make_transport",
]

TRANSPORTS = ("inprocess", "stdio", "http")


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One tool call's result: the text the model reads (the envelope as JSON) and what it reached."""

    text: str
    success: bool
    service: str | None = None  # the service whose tool ran; None for meta-tools and failed lookups


class ToolSession(Protocol):
    """One episode's tools, for one rollout."""

    async def list_tools(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` list the model sees."""
        ...

    async def call(self, name: str, arguments: dict[str, Any], timeout: float | None) -> CallOutcome:
        """Call a tool by the name the model sees. Bad calls give error outcomes, not exceptions."""
        ...

    async def final_diff(self) -> dict[str, StateDiff]:
        """End the rollout and return the state diff (initial state -> final state) to grade."""
        ...


class ToolTransport(Protocol):
    name: str

    def open(self, task: TaskSpec, mode: Mode) -> AbstractAsyncContextManager[ToolSession]:
        """A session on a fresh private episode of ``task`` (services, distractors, setup)."""
        ...

    def close(self) -> None:
        """Release what the transport keeps between rollouts."""
        ...


class InProcessSession:
    def __init__(self, episode: Episode, mode: Mode, tools: list[dict[str, Any]] | None = None) -> None:
        self.episode = episode
        self.surface = ToolSurface(episode, mode)
        self._tools = tools

    async def list_tools(self) -> list[dict[str, Any]]:
        if self._tools is None:
            self._tools = self.surface.openai_tools()
        return self._tools

    async def call(self, name: str, arguments: dict[str, Any], timeout: float | None) -> CallOutcome:
        # Service calls are short SQLite transactions; they run inline (a thread per call would
        # cost more than the call) and the episode deadline bounds the rollout as a whole.
        call = self.surface.call(name, arguments)
        return CallOutcome(call.result.to_json(), call.result.success, call.service)

    async def final_diff(self) -> dict[str, StateDiff]:
        return self.episode.diff()


def _pool_key(task: TaskSpec) -> tuple[tuple[str, ...], int, WorldShape]:
    """Episodes of tasks with the same key hold the same seeded world and services."""
    return (tuple(task.mounted_services), task.world_seed, task.world_shape)


@dataclass(slots=True)
class _Pooled:
    episode: Episode
    base: EpisodeSnapshot  # the seeded state before any task's setup
    task_id: str | None = None  # whose setup the episode's initial state holds
    tools: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # per mode; shared, never mutated


class EpisodePool:
    """Idle episodes, reset from a snapshot before each rollout.

    A rollout always starts from a full restore of the task's initial state, exactly like a new
    episode; what is reused is the SQLite connection and SQLAlchemy engine (whose compiled-statement
    cache is per engine, and most of the cost of a short episode) and, for another rollout of the
    same task, the initial state's dump that diffs are computed against.
    """

    def __init__(self, max_idle: int = 64) -> None:
        self.max_idle = max_idle
        self._idle: OrderedDict[int, tuple[tuple[tuple[str, ...], int, WorldShape], _Pooled]] = OrderedDict()
        self._next = 0

    def acquire(self, task: TaskSpec) -> _Pooled:
        key = _pool_key(task)
        match = other = None
        for slot, (slot_key, pooled) in reversed(self._idle.items()):
            if slot_key != key:
                continue
            if pooled.task_id == task.id:
                match = slot
                break
            if other is None:
                other = slot
        slot = match if match is not None else other
        if slot is None:
            episode = Episode.create(task.mounted_services, task.world_seed, shape=task.world_shape)
            pooled = _Pooled(episode, episode.initial_snapshot)
        else:
            pooled = self._idle.pop(slot)[1]
        try:
            if pooled.task_id == task.id:
                pooled.episode.reset()
            else:
                pooled.episode.reset(pooled.base)
                pooled.task_id = None
                apply_task_setup(pooled.episode, task)  # it becomes the initial state, as in episode_for
                pooled.task_id = task.id
        except BaseException:
            pooled.episode.close()
            raise
        return pooled

    def release(self, task: TaskSpec, pooled: _Pooled) -> None:
        self._idle[self._next] = (_pool_key(task), pooled)
        self._next += 1
        while len(self._idle) > self.max_idle:
            _, (_, evicted) = self._idle.popitem(last=False)
            evicted.episode.close()

    def close(self) -> None:
        while self._idle:
            _, (_, pooled) = self._idle.popitem()
            pooled.episode.close()


class InProcessTransport:
    """Episodes in this process: the fast path. ``reuse=False`` builds a new episode per rollout
    (same trajectories, slower)."""

    name = "inprocess"

    def __init__(self, *, reuse: bool = True, max_idle: int = 64) -> None:
        self.pool = EpisodePool(max_idle) if reuse else None

    @asynccontextmanager
    async def open(self, task: TaskSpec, mode: Mode) -> AsyncIterator[ToolSession]:
        if self.pool is None:
            episode = episode_for(task)
            try:
                yield InProcessSession(episode, mode)
            finally:
                episode.close()
            return
        pooled = self.pool.acquire(task)
        healthy = False
        try:
            session = InProcessSession(pooled.episode, mode, pooled.tools.get(mode))
            pooled.tools[mode] = await session.list_tools()
            yield session
            healthy = True
        finally:
            if healthy:
                self.pool.release(task, pooled)
            else:
                pooled.episode.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


def make_transport(name: str, *, startup_timeout: float = 60.0) -> ToolTransport:
    """``inprocess``, ``stdio`` or ``http``."""
    if name == "inprocess":
        return InProcessTransport()
    if name in ("stdio", "http"):
        from harness.mcp_tools import McpTransport

        return McpTransport(name, startup_timeout=startup_timeout)  # type: ignore[arg-type]
    raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {name!r}")
