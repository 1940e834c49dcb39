"""``harness collect``: tasks x agent x rollouts -> ``OUT/trajectories.jsonl``, resumable.

The output folder holds ``trajectories.jsonl`` (one line per rollout), ``tasks.jsonl`` (the task
set, so a run can be evaluated and re-graded on its own) and ``manifest.json``. Started again with
the same arguments, a run picks up where it stopped, however it stopped: every (task, rollout)
ends up in the file exactly once.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents import Agent, AgentConfig, check_agent, make_agent
from harness.backends import Backend, LocalBackend
from harness.bounds import DEFAULT_MAX_RESULT_CHARS
from harness.defaults import DEFAULT_N_TASKS, DEFAULT_TASK_SEED, load_task_set
from harness.errors import HarnessInputError, RunFileError
from harness.manifest import check_resumable, now_utc, read_manifest, tasks_digest, versions, write_manifest
from harness.progress import Progress
from harness.runfile import GroupCommit, RunScan, TrajectoryWriter, drop_lines, scan_run, truncate
from harness.runlock import hold_run_folder
from harness.runner import RolloutJob, RunnerConfig, rollout_seed
from harness.metrics import token_figures
from harness.tokens import count_trajectory, counts_by, token_counter
from harness.tools import TRANSPORTS, make_transport
from harness.trajectory import Trajectory
from harness.workers import ProcessBackend
from mcp_services.tasks.spec import TaskSpec, write_tasks

__all__ = [
    "CORRUPT_FILE",
    "TASKS_FILE",
    "TRAJECTORIES_FILE",
    "CollectConfig",
    "CollectReport",
    "collect",
    "collect_async",
]

TRAJECTORIES_FILE = "trajectories.jsonl"
TASKS_FILE = "tasks.jsonl"
CORRUPT_FILE = "trajectories.corrupt.jsonl"

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class CollectConfig:
    """One collection run. ``tasks_file=None`` composes the default task set."""

    out: Path
    agent: AgentConfig = field(default_factory=lambda: AgentConfig("reference"))
    tasks_file: Path | None = None
    rollouts: int = 1
    concurrency: int = 8
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    transport: str = "inprocess"
    seed: int = 0
    progress: bool = True
    repair: bool = False  # move corrupt lines aside and collect those rollouts again
    workers: int = 1  # processes running episodes (one per core); 1 = in this process
    default_tasks: int = DEFAULT_N_TASKS

    def __post_init__(self) -> None:
        if self.rollouts < 1:
            raise HarnessInputError(f"--rollouts must be at least 1, not {self.rollouts}")
        if self.concurrency < 1:
            raise HarnessInputError(f"--concurrency must be at least 1, not {self.concurrency}")
        if self.workers < 1:
            raise HarnessInputError(f"--workers must be at least 1, not {self.workers}")
        if self.transport not in TRANSPORTS:
            raise HarnessInputError(f"--transport must be one of {', '.join(TRANSPORTS)}, not {self.transport!r}")

    def identity(self) -> dict[str, Any]:
        """The manifest's ``config``: everything that shapes the trajectories, plus the knobs."""
        # The result bound is named only when it is not the default, so runs recorded before the
        # bound existed (whose results were all below it) still resume.
        bound = self.runner.max_result_chars
        return {
            **({"max_result_chars": bound} if bound != DEFAULT_MAX_RESULT_CHARS else {}),
            "agent": self.agent.to_dict(),
            "mode": self.runner.mode,
            "max_turns": self.runner.max_turns,
            "call_timeout": self.runner.call_timeout,
            "episode_timeout": self.runner.episode_timeout,
            "rollouts": self.rollouts,
            "concurrency": self.concurrency,
            "transport": self.transport,
            "workers": self.workers,
            "seed": self.seed,
            # Which default set: only meaningful when no task file is given.
            "default_tasks": self.default_tasks if self.tasks_file is None else None,
        }


@dataclass(frozen=True)
class CollectReport:
    out: Path
    n_tasks: int
    rollouts: int
    n_existing: int  # already in the file when this run started
    n_new: int
    n_passed_new: int
    torn_bytes: int  # size of a torn final line that was dropped (0: none)
    n_repaired: int
    elapsed_s: float

    @property
    def n_total(self) -> int:
        return self.n_existing + self.n_new


def _check_services(tasks: list[TaskSpec]) -> None:
    """Fail before the first episode, not in the middle of a run, on a service that cannot load."""
    from mcp_services.registry import get_services

    for names in sorted({tuple(t.mounted_services) for t in tasks}):
        try:
            get_services(names)
        except (ValueError, ImportError) as exc:
            raise HarnessInputError(f"tasks mount services that cannot be loaded ({', '.join(names)}): {exc}") from None


def _holds_trajectories(out: Path) -> bool:
    """Whether ``out`` has collected anything; a folder without a trajectory (a run that failed before its
    first episode) is fresh: the next run starts over there, whatever its arguments."""
    path = out / TRAJECTORIES_FILE
    return path.exists() and path.stat().st_size > 0


def _prepare(config: CollectConfig, tasks: list[TaskSpec], source: str, log: Log) -> RunScan:
    """Check the output folder, record the run, and read what is already done."""
    _check_services(tasks)
    out = config.out
    if out.exists() and not out.is_dir():
        raise HarnessInputError(f"--out {out} exists and is not a folder", "name a folder")
    out.mkdir(parents=True, exist_ok=True)
    path = out / TRAJECTORIES_FILE
    digest = tasks_digest(tasks)
    identity = config.identity()
    stored = read_manifest(out)
    fresh = not _holds_trajectories(out)
    if stored is None and not fresh:
        raise RunFileError(f"{path} exists but {out} has no manifest.json", "use another --out")
    if fresh:
        stored = None  # what a run that never got going recorded does not bind this one
    else:
        assert stored is not None
        check_resumable(stored, identity, digest, out)
    if fresh or not (out / TASKS_FILE).exists():
        write_tasks(out / TASKS_FILE, tasks)

    scan = scan_run(path)
    if scan.torn_offset is not None:
        log(f"harness: {path}: dropped a torn final line ({scan.torn_bytes} bytes, an interrupted write); "
            "that rollout runs again")
        truncate(path, scan.torn_offset)
    if scan.problems:
        listed = "; ".join(p.describe(path) for p in scan.problems[:5])
        more = f" (and {len(scan.problems) - 5} more)" if len(scan.problems) > 5 else ""
        if not config.repair:
            raise RunFileError(
                f"{len(scan.problems)} bad line(s) in {path}: {listed}{more}. Rerun with --repair to move them to "
                f"{CORRUPT_FILE} and collect those rollouts again"
            )
        drop_lines(path, [p.number for p in scan.problems], out / CORRUPT_FILE)
        log(f"harness: moved {len(scan.problems)} bad line(s) to {out / CORRUPT_FILE}: {listed}{more}")
    expected = {(t.id, r) for t in tasks for r in range(config.rollouts)}
    stray = sorted(scan.keys - expected)
    if stray:
        task_id, rollout = stray[0]
        raise RunFileError(
            f"{path} holds {len(stray)} rollout(s) that are not part of this run (e.g. task {task_id} rollout "
            f"{rollout}); use another --out"
        )
    manifest = {
        "kind": "compoworld-harness-run",
        "config": identity,
        "tasks": {
            "source": source,
            "file": TASKS_FILE,
            "n_tasks": len(tasks),
            "sha256": digest,
        },
        "seeds": {
            "run_seed": config.seed,
            "rollout_seed": "sha256(f'{run_seed}:{task_id}:{rollout}')[:4] as int & 0x7fffffff",
            "default_task_seed": DEFAULT_TASK_SEED if source.startswith("default") else None,
        },
        "versions": versions(),
        "status": {"state": "running", "n_trajectories": len(scan.trajectories), "n_expected": len(expected)},
    }
    manifest["started_at"] = stored.get("started_at") if stored is not None else now_utc()
    write_manifest(out, manifest)
    return scan


async def collect_async(
    config: CollectConfig,
    *,
    agent: Agent | None = None,
    tasks: list[TaskSpec] | None = None,
    backend: Backend | None = None,
    log: Log = _stderr,
) -> CollectReport:
    """Run (or finish) a collection.

    ``agent`` replaces the one the config names (tests, benchmarks); ``tasks`` replaces the task
    file; ``backend`` replaces the local one (e.g. Ray). ``log`` receives the one-line notices
    (resuming, a torn line dropped, corrupt lines moved). The run folder is this call's alone while
    it runs (``harness.runlock``): another collect on it is refused.
    """
    with hold_run_folder(config.out):
        return await _collect(config, agent=agent, tasks=tasks, backend=backend, log=log)


async def _collect(
    config: CollectConfig, *, agent: Agent | None, tasks: list[TaskSpec] | None, backend: Backend | None, log: Log
) -> CollectReport:
    started = time.perf_counter()
    if agent is None:
        check_agent(config.agent)  # before anything is written to --out
    if tasks is not None:
        source = "given in code"
    elif config.tasks_file is not None:
        source = str(config.tasks_file)
    else:
        source = f"default: composed from the library ({config.default_tasks} candidates, seed {DEFAULT_TASK_SEED})"
    if tasks is None:
        # A restarted default run reads its own copy of the task set instead of composing it again.
        stored = read_manifest(config.out) if config.out.is_dir() and _holds_trajectories(config.out) else None
        was_default = stored is not None and str(stored.get("tasks", {}).get("source", "")).startswith("default")
        own_copy = config.out / TASKS_FILE if was_default else None
        tasks = load_task_set(config.tasks_file, n_tasks=config.default_tasks, composed=own_copy, log=log)
    scan = _prepare(config, tasks, source, log)
    done = scan.keys
    if done:
        log(f"harness: resuming {config.out}: {len(done)} of {len(tasks) * config.rollouts} rollouts already done")
    jobs = [
        RolloutJob(task, r, rollout_seed(config.seed, task.id, r))
        for task in tasks
        for r in range(config.rollouts)
        if (task.id, r) not in done
    ]
    own_agent = agent is None
    if backend is None and config.workers > 1:
        if agent is not None:
            raise HarnessInputError(
                "workers build their own agent from the config: pass no agent object with workers > 1"
            )
        backend = ProcessBackend(config.agent, config.runner, config.transport, config.concurrency, config.workers)
    if agent is None and backend is None:
        agent = make_agent(config.agent, {task.id: task for task in tasks})
    transport = None
    if backend is None:
        assert agent is not None
        transport = make_transport(config.transport)
        backend = LocalBackend(agent, transport, config.runner, config.concurrency)
    note = getattr(agent, "start_note", None)
    if config.progress and note is not None and (line := note()):
        log(f"harness: {line}")
    progress = Progress(len(tasks) * config.rollouts, done=len(done), enabled=config.progress,
                        warn=(lambda line: log(f"harness: {line}")) if config.progress else None)
    manifest = read_manifest(config.out) or {}
    counts = {"new": 0, "passed": 0}
    counter = token_counter()
    tokens = counts_by(counter, scan.trajectories)  # a resumed run's earlier lines, by this run's counter

    def durable(batch: list[Trajectory]) -> None:
        for trajectory in batch:
            counts["new"] += 1
            counts["passed"] += trajectory.passed
            progress.update(trajectory.passed)

    state = "complete"
    try:
        with TrajectoryWriter(config.out / TRAJECTORIES_FILE) as writer:
            lines = GroupCommit(writer, durable)
            try:
                async for trajectory in backend.run(jobs):
                    count_trajectory(trajectory, counter)  # the context it takes, in its line
                    tokens += counts_by(counter, [trajectory])
                    lines.add(trajectory)
            finally:
                await lines.close()
    except BaseException as exc:
        state = f"stopped: {type(exc).__name__}"
        raise
    finally:
        progress.close()
        if transport is not None:
            transport.close()
        if own_agent and agent is not None:
            await agent.aclose()
        manifest["status"] = {
            "state": state,
            "n_trajectories": len(done) + counts["new"],
            "n_expected": len(tasks) * config.rollouts,
        }
        write_manifest(config.out, manifest)
    figures = token_figures(tokens)
    if figures is not None:
        log(f"harness: {figures.describe()}")
    return CollectReport(
        out=config.out,
        n_tasks=len(tasks),
        rollouts=config.rollouts,
        n_existing=len(done),
        n_new=counts["new"],
        n_passed_new=counts["passed"],
        torn_bytes=scan.torn_bytes,
        n_repaired=len(scan.problems) if config.repair else 0,
        elapsed_s=time.perf_counter() - started,
    )


def collect(
    config: CollectConfig,
    *,
    agent: Agent | None = None,
    tasks: list[TaskSpec] | None = None,
    backend: Backend | None = None,
    log: Log = _stderr,
) -> CollectReport:
    """Run (or finish) a collection; see ``collect_async``."""
    return asyncio.run(collect_async(config, agent=agent, tasks=tasks, backend=backend, log=log))
