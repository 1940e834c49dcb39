"""A smaller tool list for small models: a harness ``ToolTransport`` that narrows and compacts what the model sees.

In direct mode an episode lists every tool of every mounted service: two services are ~30 tools and
~10k tokens of JSON schema, more than SmolLM2-135M's context and minutes per turn on a 2-core CPU.
For the offline learning experiment the model sees only the tools the task's plan uses plus a few
others of the same services (chosen by a seeded hash, so the model still has to pick), with
schemas stripped of what a small model cannot use (titles, regex patterns, length bounds, semantic
type tags, ``anyOf`` with null). Calls, results, state and grading are the harness's, unchanged.
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

__all__ = ["FocusedSession", "FocusedTransport", "compact_schema"]

_DROPPED_KEYS = frozenset(
    {"title", "x-semantic-type", "pattern", "maxLength", "minLength", "maxItems", "minItems", "format",
     "additionalProperties", "maximum", "minimum"}
)


def compact_schema(node: Any) -> Any:
    """A JSON schema without the keys a small model cannot use; ``anyOf: [X, null]`` becomes X."""
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list):
        real = [option for option in options if option != {"type": "null"}]
        if len(real) == 1:  # an optional value: the surrounding keys (description, default) stay
            merged = {key: value for key, value in node.items() if key != "anyOf"} | real[0]
            return compact_schema(merged)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS or (key == "default" and value is None):
            continue
        # "properties" maps parameter names to schemas: its keys are names, never schema keywords.
        out[key] = {k: compact_schema(v) for k, v in value.items()} if key == "properties" else compact_schema(value)
    return out


def _compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    description = str(function.get("description") or "").split("\n\n")[0].replace("\n", " ")
    return {
        "type": "function",
        "function": {
            "name": function["name"],
            "description": description,
            "parameters": compact_schema(function.get("parameters") or {"type": "object", "properties": {}}),
        },
    }


def _rank(seed: int, task_id: str, name: str) -> str:
    return hashlib.sha256(f"{seed}:{task_id}:{name}".encode()).hexdigest()


class FocusedSession:
    """The harness session of one episode, with a narrowed, compacted tool list."""

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
        return [_compact_tool(tool) for tool in tools if tool["function"]["name"] in shown]

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
