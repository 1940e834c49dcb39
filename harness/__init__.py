"""CompoWorld harness: agents, the episode runner, collection, grading and evaluation.

Library entry points (the ``harness`` command is a thin layer over them):

- ``collect(CollectConfig(...))``: tasks x agent x rollouts -> ``OUT/trajectories.jsonl``, resumable;
- ``run_episode(job, agent, transport, RunnerConfig(...))``: one rollout -> one ``Trajectory``;
- ``regrade(trajectory, task)``: replay a saved trajectory into a fresh episode and grade it;
- ``summarize(trajectories)``: pass@1, pass@k, pass^k, rubric score with bootstrap CIs.

Names load on first use, so a task server process (``harness.task_server``) imports only what it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.agents import AgentConfig, make_agent
    from harness.collect import CollectConfig, CollectReport, collect
    from harness.evaluate import EvalOptions, read_run, summarize
    from harness.grading import regrade
    from harness.runner import RolloutJob, RunnerConfig, run_episode
    from harness.tools import InProcessTransport, make_transport
    from harness.trajectory import SCHEMA_VERSION, Trajectory

_EXPORTS = {
    "SCHEMA_VERSION": "harness.trajectory",
    "AgentConfig": "harness.agents",
    "CollectConfig": "harness.collect",
    "CollectReport": "harness.collect",
    "EvalOptions": "harness.evaluate",
    "InProcessTransport": "harness.tools",
    "RolloutJob": "harness.runner",
    "RunnerConfig": "harness.runner",
    "Trajectory": "harness.trajectory",
    "collect": "harness.collect",
    "make_agent": "harness.agents",
    "make_transport": "harness.tools",
    "read_run": "harness.evaluate",
    "regrade": "harness.grading",
    "run_episode": "harness.runner",
    "summarize": "harness.evaluate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
