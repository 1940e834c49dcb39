"""Harness at scale (issue 7): prints figures, asserts nothing.

    python bench/bench_scale.py [--episodes 1000] [--latency 0.2] [--no-ray] [--quick]

A scripted model replays each task's reference plan with a model's latency (mean ``--latency``
seconds per turn, +-25% from a seeded draw, so turns do not fire in lockstep). Every episode
mounts 5 services (the task's own plus distractors). Each scenario runs in a fresh process, so its
memory peak is its own:

1. share:  40 episodes, one at a time, local: the environment's share of a rollout's wall time
   (everything but waiting for the model: building the episode, tool calls, grading);
2. local:  ``--episodes`` episodes all at once in one process: episodes/s, peak memory;
3. ray:    the same on a local Ray instance (2 CPUs, 2 episode-hosting actors).

Figures: episodes/s (wall time of the whole collection, writing included), peak RSS (the driver, and
for Ray the actors), and the environment's share of each rollout's wall time: 1 - the scripted
model's latency / the rollout's wall time (so event-loop lag under load counts against the
environment), median and p95; plus CPU seconds per episode (driver and actors, writing included).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.agents import (  # noqa: E402
    AgentConfig,
    AgentTurn,
    Message,
    ReferenceAgent,
    TaskBook,
    ToolSchema,
    TurnContext,
)
from harness.collect import CollectConfig, collect  # noqa: E402
from harness.evaluate import read_run  # noqa: E402
from mcp_services.tasks.spec import TaskSpec  # noqa: E402
from tests.harness.harness_fixtures import crm_tasks  # noqa: E402

DISTRACTORS = ["mailbox", "calendar", "helpdesk", "payments"]


def turn_latency(latency: float, seed: int, turn: int) -> float:
    """The scripted model's latency for one turn: ``latency`` x U(0.75, 1.25), drawn from the seed."""
    draw = hashlib.sha256(f"{seed}:{turn}".encode()).digest()[0] / 255
    return latency * (0.75 + 0.5 * draw)


class LatencyModel(ReferenceAgent):
    """The reference plan at a model's pace (``turn_latency`` per turn)."""

    name = "reference-latency"

    def __init__(self, latency: float, tasks: TaskBook | Iterable[TaskSpec]) -> None:
        super().__init__(tasks)
        self.latency = latency

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        import asyncio

        await asyncio.sleep(turn_latency(self.latency, context.seed, context.turn))
        return await super().respond(messages, tools, context)


def bench_tasks() -> list[TaskSpec]:
    tasks = []
    for task in crm_tasks():
        fields = task.model_dump(exclude={"id"})
        tasks.append(TaskSpec.build(**{**fields, "distractor_services": DISTRACTORS}))
    return tasks


class Sampler:
    """Peak RSS of this process and of its descendants (Ray's actors among them), every 0.2 s."""

    def __init__(self) -> None:
        import psutil

        self._psutil = psutil
        self.me = psutil.Process()
        self.peak_self = 0
        self.peak_actors = 0
        self.actor_cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(0.2)

    def sample(self) -> None:
        psutil = self._psutil
        try:
            self.peak_self = max(self.peak_self, self.me.memory_info().rss)
            actors = 0
            for child in self.me.children(recursive=True):
                try:
                    if "EpisodeHost" in " ".join(child.cmdline()) or "EpisodeHost" in child.name():
                        actors += child.memory_info().rss
                        times = child.cpu_times()
                        self.actor_cpu[child.pid] = max(self.actor_cpu.get(child.pid, 0.0), times.user + times.system)
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
            self.peak_actors = max(self.peak_actors, actors)
        except psutil.NoSuchProcess:
            pass

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def scenario(name: str, episodes: int, concurrency: int, latency: float) -> dict[str, Any]:
    tasks = bench_tasks()
    rollouts = -(-episodes // len(tasks))
    out = Path(tempfile.mkdtemp(prefix=f"bench-scale-{name}-"))
    try:
        config = CollectConfig(
            out=out / "run", agent=AgentConfig("reference"), rollouts=rollouts, concurrency=concurrency, progress=False
        )
        backend = None
        if name == "ray":
            os.environ.setdefault("RAY_AUTH_MODE", "disabled")
            from harness.ray_backend import RayBackend, RayOptions, connect

            options = RayOptions(num_cpus=2, actors=2)
            connect(options)  # the instance's start-up (~15 s here) is not part of the figures; actor start-up is
            backend = RayBackend(functools.partial(LatencyModel, latency), config.runner, concurrency=concurrency, options=options)
        agent = None if backend is not None else LatencyModel(latency, tasks)
        # Warm the process (service images, imports) so that one-off costs do not count per episode.
        warm = CollectConfig(out=out / "warm-up", agent=config.agent, rollouts=1, concurrency=3, progress=False)
        collect(warm, tasks=tasks, agent=LatencyModel(0.0, tasks), log=lambda m: None)
        cpu_before = time.process_time()
        with Sampler() as sampler:
            started = time.perf_counter()
            collect(config, tasks=tasks, agent=agent, backend=backend, log=lambda m: None)
            wall = time.perf_counter() - started
            sampler.sample()
        cpu = time.process_time() - cpu_before + sum(sampler.actor_cpu.values())
        trajectories = read_run(config.out)
        # Whatever is not the model's own latency is the environment's (and the harness's): building
        # the episode, tool calls, grading, and the event loop's lag when the CPU is saturated.
        model_s = [sum(turn_latency(latency, t.seed, i) for i in range(t.n_turns)) for t in trajectories]
        env_s = [t.timings["total_s"] - m for t, m in zip(trajectories, model_s, strict=True)]
        shares = sorted(e / t.timings["total_s"] for t, e in zip(trajectories, env_s, strict=True))
        env_ms = sorted(e * 1e3 for e in env_s)
        return {
            "scenario": name,
            "episodes": len(trajectories),
            "concurrency": concurrency,
            "passed": sum(t.passed for t in trajectories),
            "wall_s": wall,
            "episodes_per_s": len(trajectories) / wall,
            "peak_rss_mb": sampler.peak_self / 2**20,
            "peak_actors_rss_mb": sampler.peak_actors / 2**20,
            "share_median": statistics.median(shares),
            "share_p95": shares[int(0.95 * (len(shares) - 1))],
            "env_ms_median": statistics.median(env_ms),
            "rollout_s_median": statistics.median(t.timings["total_s"] for t in trajectories),
            "cpu_s_per_rollout": cpu / len(trajectories),
        }
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _run_child(name: str, episodes: int, concurrency: int, latency: float) -> dict[str, Any]:
    args = [
        sys.executable,
        __file__,
        "--scenario",
        name,
        "--episodes",
        str(episodes),
        "--concurrency",
        str(concurrency),
        "--latency",
        str(latency),
    ]
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=REPO)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"scenario {name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2, help="mean model latency per turn, seconds")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--quick", action="store_true", help="100 episodes at scale (a smoke run)")
    parser.add_argument("--scenario", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario is not None:
        print(json.dumps(scenario(args.scenario, args.episodes, args.concurrency, args.latency)))
        return
    episodes = 100 if args.quick else args.episodes
    plan = [("share", 40, 1), ("local", episodes, episodes)]
    if not args.no_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("ray is not installed: skipping the Ray scenario (pip install 'compoworld[ray]')")
        else:
            plan.append(("ray", episodes, episodes))
    print(
        f"scripted model: reference plans, {args.latency * 1e3:.0f} ms +-25% per turn; 5 services per episode; "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"{'scenario':<8}{'episodes':>9}{'at once':>8}{'passed':>8}{'wall s':>8}{'ep/s':>8}{'rollout s':>10}"
        f"{'env ms':>8}{'env share':>10}{'p95':>7}{'cpu ms/ep':>10}{'RSS MB':>8}{'actors MB':>10}"
    )
    for name, n, concurrency in plan:
        r = _run_child(name, n, concurrency, args.latency)
        actors = f"{r['peak_actors_rss_mb']:>10.0f}" if name == "ray" else f"{'-':>10}"
        print(
            f"{r['scenario']:<8}{r['episodes']:>9}{r['concurrency']:>8}{r['passed']:>8}{r['wall_s']:>8.1f}"
            f"{r['episodes_per_s']:>8.1f}{r['rollout_s_median']:>10.2f}{r['env_ms_median']:>8.1f}"
            f"{r['share_median'] * 100:>9.1f}%{r['share_p95'] * 100:>6.1f}%{r['cpu_s_per_rollout'] * 1e3:>10.1f}"
            f"{r['peak_rss_mb']:>8.0f}{actors}",
            flush=True,
        )
    print(
        "env share: 1 - model latency / rollout wall time, per rollout (median; p95); env ms: the same in ms; "
        "cpu ms/ep: CPU time of the whole run (driver and actors, writing included) per episode"
    )


if __name__ == "__main__":
    main()
