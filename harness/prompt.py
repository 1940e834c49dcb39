"""The system prompt of an episode: the date, who the agent acts for, the result envelope, the mode.

Built from the task alone (its world seed gives the frozen clock), so every transport, and a
trajectory re-graded later, shows the model the same text.
"""

from __future__ import annotations

from functools import lru_cache

from mcp_services.kernel.world import World, WorldShape
from mcp_services.serving.surface import Mode
from mcp_services.tasks.spec import TaskSpec

__all__ = ["system_prompt", "user_prompt"]

_ENVELOPE = (
    'Every tool returns JSON: {"success": true, "data": ...} when it worked, or '
    '{"success": false, "error": {"code": ..., "message": ...}} when it did not. '
    "Read error messages: they say what was wrong and how to fix the call."
)

_DISCOVER = (
    "The services' tools are reached through four tools: list_services, list_tools (one service's tools), "
    "describe_tool (a tool's arguments) and call_tool (call a service's tool with its arguments)."
)


def system_prompt(task: TaskSpec, mode: Mode) -> str:
    return _system_prompt(task.world_seed, task.world_shape, mode)


@lru_cache(maxsize=256)
def _system_prompt(world_seed: int, shape: WorldShape, mode: Mode) -> str:
    world = World.from_seed(world_seed, shape)
    now = world.now_dt
    user = world.user
    lines = [
        "You are an assistant that gets work done for a person by calling tools.",
        f"It is {now:%A} {now.day} {now:%B %Y}, {now:%H:%M} UTC. You act for {user.name} <{user.email}>, "
        f"{user.job_title} at {world.home.name}.",
        _ENVELOPE,
    ]
    if mode == "discover":
        lines.append(_DISCOVER)
    lines.append(
        "Look values up with the tools instead of guessing them, change only what the request needs, and when "
        "you are done reply without a tool call: say what you did and answer any question you were asked."
    )
    return "\n".join(lines)


def user_prompt(task: TaskSpec) -> str:
    return task.instruction
