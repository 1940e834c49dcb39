"""Harness benchmarks: figures printed, nothing asserted (docs/design.md: bench/ never holds timed asserts).

    python bench/harness_bench.py [--set composed|crm | --tasks FILE] [--rollouts N] [--workers 2] [--mcp]

1. Reference episodes per second through the whole ``collect`` pipeline (episode, grading, durable
   write), in this process and with ``--workers`` processes (one per core); "steady" counts from
   the first trajectory to the last (no start-up), "overall" is the whole call.
2. Environment overhead per model turn: a scripted model that answers instantly, so everything
   measured is the harness and the services, in process and, with ``--mcp``, over stdio and HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.agents import (  # noqa: E402
    AgentConfig,
    AgentTurn,
    Message,
    ScriptedAgent,
    ToolCallRequest,
    ToolSchema,
    TurnContext,
    make_agent,
)
from harness.backends import Backend, LocalBackend  # noqa: E402
from harness.collect import CollectConfig, collect  # noqa: E402
from harness.runner import RolloutJob, RunnerConfig, run_episode  # noqa: E402
from harness.tools import make_transport  # noqa: E402
from harness.trajectory import Trajectory  # noqa: E402
from harness.workers import ProcessBackend  # noqa: E402
from mcp_services.tasks.spec import TaskSpec, load_tasks  # noqa: E402


def bench_tasks(path: Path | None, kind: str) -> list[TaskSpec]:
    """``--tasks FILE``; the composed default set; or the small hand-made crm tasks of the tests."""
    if path is not None:
        return load_tasks(path)
    if kind == "composed":
        from harness.defaults import default_tasks

        return default_tasks()
    sys.path.insert(0, str(REPO / "tests" / "harness"))
    from harness_fixtures import crm_tasks

    return crm_tasks()


class _Timed:
    """A backend wrapper that notes when each trajectory arrives."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.stamps: list[float] = []

    async def run(self, jobs: Iterable[RolloutJob]) -> AsyncIterator[Trajectory]:
        async for trajectory in self.inner.run(jobs):
            self.stamps.append(time.perf_counter())
            yield trajectory


def reference_rate(tasks: list[TaskSpec], rollouts: int, workers: int) -> tuple[float, float, int, float]:
    """Steady and overall episodes per second of ``collect`` with the reference agent, the number
    of episodes, and bytes per trajectory line."""
    agent_config, runner = AgentConfig("reference"), RunnerConfig()
    if workers > 1:
        inner: Backend = ProcessBackend(agent_config, runner, "inprocess", 8, workers)
    else:
        inner = LocalBackend(make_agent(agent_config, {t.id: t for t in tasks}), make_transport("inprocess"), runner, 8)
    timed = _Timed(inner)
    with tempfile.TemporaryDirectory() as tmp:
        config = CollectConfig(out=Path(tmp) / "run", rollouts=rollouts, progress=False)
        report = collect(config, tasks=tasks, backend=timed, log=lambda _: None)
        size = (Path(tmp) / "run" / "trajectories.jsonl").stat().st_size
    stamps = timed.stamps
    steady = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else 0.0
    return steady, report.n_new / report.elapsed_s, report.n_new, size / max(report.n_new, 1)


def overhead(tasks: list[TaskSpec], transport: str, episodes: int) -> dict[str, float]:
    """Medians over episodes with an instant scripted model: per model turn (grading and set-up
    excluded), per tool call, and per episode for set-up (a server start, for MCP) and grading."""

    plans = {task.id: task.plan for task in tasks}

    def replay(messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        done = sum(1 for m in messages if m["role"] == "tool")
        plan = plans[context.task_id]
        if done >= len(plan):
            return AgentTurn(content="Done.")
        step = plan[done]
        return AgentTurn(tool_calls=(ToolCallRequest(f"{step.service}__{step.tool}", json.dumps(step.arguments)),))

    agent = ScriptedAgent(replay)
    runner = RunnerConfig()
    tr = make_transport(transport)

    async def run() -> list[dict[str, float]]:
        out = []
        for i in range(episodes):
            t = await run_episode(RolloutJob(tasks[i % len(tasks)], i, i), agent, tr, runner)
            s = t.timings
            turns = s["total_s"] - s["agent_s"] - s["setup_s"] - s["grade_s"]
            out.append({
                "turn": turns / t.n_turns,
                "call": s["tools_s"] / max(t.n_tool_calls, 1),
                "setup": s["setup_s"],
                "grade": s["grade_s"],
            })
        return out

    results = asyncio.run(run())
    tr.close()
    if transport != "inprocess":
        results = results[1:] or results  # the first server start pays for cold disk caches
    return {key: statistics.median(r[key] for r in results) for key in results[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=None, help="a tasks.jsonl (default: see --set)")
    parser.add_argument("--set", choices=("composed", "crm"), default="composed",
                        help="without --tasks: the composed default set, or the hand-made crm tasks")
    parser.add_argument("--rollouts", type=int, default=20, help="rollouts per task")
    parser.add_argument("--workers", type=int, default=2, help="processes for the multi-core figure")
    parser.add_argument("--mcp", action="store_true", help="also measure stdio and HTTP (a server per episode)")
    args = parser.parse_args()
    tasks = bench_tasks(args.tasks, args.set)
    plan = statistics.mean(len(t.plan) for t in tasks)
    mounted = statistics.mean(len(t.mounted_services) for t in tasks)
    print(f"tasks: {len(tasks)} (mean plan {plan:.1f} calls, {mounted:.1f} mounted services); cores: {os.cpu_count()}; "
          f"load average {os.getloadavg()[0]:.2f}")
    for workers in sorted({1, args.workers}):
        steady, overall, n, line = reference_rate(tasks, args.rollouts, workers)
        where = "in this process" if workers == 1 else f"--workers {workers}"
        print(f"reference episodes/s, collect {where:<15}: {steady:7.1f} steady, {overall:7.1f} overall "
              f"({n} episodes, {line / 1024:.1f} KiB per line)")
    for transport in ("inprocess", "stdio", "http") if args.mcp else ("inprocess",):
        episodes = 200 if transport == "inprocess" else 5
        m = overhead(tasks, transport, episodes)
        print(f"environment overhead ({transport:9}, instant scripted model, {episodes} episodes): "
              f"{m['turn'] * 1000:7.2f} ms per model turn, {m['call'] * 1000:6.2f} ms per tool call; "
              f"per episode {m['setup'] * 1000:7.1f} ms set-up, {m['grade'] * 1000:6.1f} ms grading")


if __name__ == "__main__":
    main()
