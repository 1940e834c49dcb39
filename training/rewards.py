"""CFRR and its baselines: they live with the task contract (``mcp_services.tasks.rewards``), where
the harness's adapters can reach them too; this name stays for training code and its users."""

from __future__ import annotations

from mcp_services.tasks.rewards import (
    RewardKind,
    binary_reward,
    completion_focused_rubric_reward,
    group_rewards,
    rubric_reward,
)

__all__ = ["RewardKind", "binary_reward", "completion_focused_rubric_reward", "group_rewards", "rubric_reward"]
