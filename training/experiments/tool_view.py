"""A smaller tool list for small models: a harness ``ToolTransport`` that narrows what the model sees.

In direct mode an episode lists every tool of every mounted service: two services are ~30 tools and
~5k tokens even in the compact model view (``mcp_services.serving.model_view``), past what
SmolLM2-135M can use and minutes per turn on a 2-core CPU. For the offline learning experiment the
model sees only the tools the task's plan uses plus a few others of the same services (chosen by a
seeded hash, so the model still has to pick), each in the harness's model view. Calls, results,
state and grading are the harness's, unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from harness.tools import CallOutcome, InProcessTransport, ToolSession
from mcp_services.kernel.diff import StateDiff
from mcp_services.serving.surface import SEPARATOR, Mode
from mcp_services.tasks.spec import TaskSpec

__all__ = ["FocusedSession", "FocusedTransport"]


def _rank(seed: int, task_id: str, name: str) -> str:
    return hashlib.sha256(f"{seed}:{task_id}:{name}".encode()).hexdigest()


class FocusedSession:
    """The harness session of one episode, with a narrowed tool list."""

    def __init__(self, inner: ToolSession, task: TaskSpec, extra_tools: int, seed: int) -> None:
        self._inner = inner
        self._task = task
        self._extra_tools = extra_tools
        self._seed = seed

    async def list_tools(self) -> list[dict[str, Any]]:
        tools = await self._inner.list_tools()
        needed = {f"{step.service}{SEPARATOR}{step.tool}" for step in self._task.plan}
        others = sorted(
            (t["function"]["name"] for t in tools if t["function"]["name"] not in needed),
            key=lambda name: _rank(self._seed, self._task.id, name),
        )
        shown = needed | set(others[: self._extra_tools])
        return [tool for tool in tools if tool["function"]["name"] in shown]

    async def call(self, name: str, arguments: dict[str, Any], timeout: float | None) -> CallOutcome:
        return await self._inner.call(name, arguments, timeout)

    async def final_diff(self) -> dict[str, StateDiff]:
        return await self._inner.final_diff()


class FocusedTransport:
    """``InProcessTransport`` episodes behind ``FocusedSession`` (direct mode only)."""

    name = "focused"

    def __init__(self, *, extra_tools: int = 2, seed: int = 0) -> None:
        self.extra_tools = extra_tools
        self.seed = seed
        self._inner = InProcessTransport()

    @asynccontextmanager
    async def open(self, task: TaskSpec, mode: Mode) -> AsyncIterator[ToolSession]:
        if mode != "direct":
            raise ValueError("the focused tool view narrows direct mode's tool list; use mode 'direct'")
        async with self._inner.open(task, mode) as session:
            yield FocusedSession(session, task, self.extra_tools, self.seed)

    def close(self) -> None:
        self._inner.close()
