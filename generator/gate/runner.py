"""Running the gate in subprocesses, with a time limit, a few at a time.

Services are batched (one interpreter start serves several), each batch gets a time budget that
grows with its tools; a batch that times out or crashes is re-run one service at a time, and a
single service that still times out or crashes is rejected with that reason. Nothing generated runs
in the calling process before the gate has passed it.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.gate.report import Check, ServiceVerdict, ToolVerdict
from generator.spec import ServiceSpec, load_spec

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class TimeLimit:
    """CPU seconds a service may take in the gate: ``base`` plus ``per_tool`` for each of its tools.

    The limit is on CPU time (``RLIMIT_CPU`` in the worker), so a loaded machine does not reject
    sound services; ``wall_factor`` times the budget in wall-clock time is the backstop for code that
    sleeps or blocks instead of computing.
    """

    base: float = 30.0
    per_tool: float = 0.5
    wall_factor: float = 4.0

    def for_tools(self, tools: int) -> float:
        return self.base + self.per_tool * tools


@dataclass
class GateJob:
    spec: ServiceSpec
    custom_code: str | None = None


@dataclass
class GateOutcome:
    verdict: ServiceVerdict
    spec: ServiceSpec | None  # what to keep (rejected tools removed; failing ones simulated)


Progress = Callable[[GateOutcome], None]


def run_gate(
    jobs: Iterable[GateJob],
    *,
    workers: int = 2,
    world_seed: int = 0,
    demote: bool = True,
    limit: TimeLimit = TimeLimit(),
    batch_tools: int = 300,
    progress: Progress | None = None,
) -> list[GateOutcome]:
    """Gate every job in worker subprocesses; outcomes come back in the jobs' order."""
    jobs = list(jobs)
    batches = _batches(jobs, batch_tools)
    results: dict[int, GateOutcome] = {}

    def run(batch: list[int]) -> None:
        for index, outcome in _run_batch([jobs[i] for i in batch], batch, world_seed, demote, limit):
            results[index] = outcome
            if progress is not None:
                progress(outcome)

    if workers <= 1 or len(batches) <= 1:
        for batch in batches:
            run(batch)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, batches))
    return [results[i] for i in range(len(jobs))]


def _batches(jobs: list[GateJob], batch_tools: int) -> list[list[int]]:
    batches: list[list[int]] = []
    current: list[int] = []
    tools = 0
    for index, job in enumerate(jobs):
        size = len(job.spec.tools)
        if current and tools + size > batch_tools:
            batches.append(current)
            current, tools = [], 0
        current.append(index)
        tools += size
    if current:
        batches.append(current)
    return batches


def _run_batch(
    jobs: list[GateJob], indices: list[int], world_seed: int, demote: bool, limit: TimeLimit
) -> list[tuple[int, GateOutcome]]:
    budget = sum(limit.for_tools(len(j.spec.tools)) for j in jobs)
    lines, problem = _spawn(jobs, world_seed, demote, budget, limit.wall_factor)
    done: list[tuple[int, GateOutcome]] = []
    for index, (job, line) in enumerate(zip(jobs, lines, strict=False)):
        done.append((indices[index], _outcome(line, job)))
    rest = list(range(len(lines), len(jobs)))
    if not rest:
        return done
    if len(jobs) > 1:  # find the culprit: the remaining services one at a time
        for position in rest:
            done.extend(_run_batch([jobs[position]], [indices[position]], world_seed, demote, limit))
        return done
    job = jobs[0]
    reason = problem or "the gate worker gave no verdict"
    verdict = ServiceVerdict(name=job.spec.name, reason=reason, source=job.spec.source,
                             tools=[ToolVerdict(t.name, "rejected", reason) for t in job.spec.tools])
    return done + [(indices[0], GateOutcome(verdict, None))]


def _limit_cpu(seconds: int) -> None:
    """In the worker, before it runs anything: the kernel stops it after ``seconds`` of CPU time."""
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 2))


def _spawn(jobs: list[GateJob], world_seed: int, demote: bool, budget: float,
           wall_factor: float) -> tuple[list[dict[str, Any]], str | None]:
    request = json.dumps({
        "jobs": [{"spec": j.spec.model_dump(mode="json", exclude_none=True), "custom_code": j.custom_code} for j in jobs],
        "world_seed": world_seed,
        "demote": demote,
    })
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    cpu = max(1, int(budget))
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator.gate.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(REPO_ROOT),
        preexec_fn=lambda: _limit_cpu(cpu),
    )
    problem = None
    try:
        out, err = proc.communicate(request, timeout=budget * wall_factor)
        if proc.returncode == -signal.SIGXCPU or proc.returncode == -signal.SIGKILL:
            problem = f"the gate timed out after {budget:.0f} s of CPU time"
        elif proc.returncode != 0:
            tail = (err or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            problem = f"the gate crashed: {tail[0][:200]}"
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        problem = f"the gate timed out after {budget * wall_factor:.0f} s"
    lines = []
    for raw in (out or "").splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            break  # a line cut by a kill: that service is re-run
    return lines, problem


def _outcome(line: dict[str, Any], job: GateJob) -> GateOutcome:
    data = line["verdict"]
    verdict = ServiceVerdict(
        name=data["name"],
        reason=data.get("reason", ""),
        source=data.get("source", ""),
        seconds=float(data.get("seconds", 0.0)),
        tools=[
            ToolVerdict(t["name"], t["status"], t.get("reason", ""), [Check(c[0], bool(c[1]), c[2]) for c in t.get("checks", [])])
            for t in data["tools"]
        ],
    )
    spec = load_spec(line["spec"]) if line.get("spec") else None
    return GateOutcome(verdict, spec)
