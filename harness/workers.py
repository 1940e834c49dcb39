"""Rollouts in worker processes, one per core: ``harness collect --workers N``.

Each worker (``python -m harness.worker``) receives plain data on stdin (the agent, runner and
transport configs, the tasks, its share of the jobs), builds its own agent and transport, runs a
``LocalBackend``, and writes one trajectory line per finished rollout on stdout. The parent only
merges lines, so the durable writing and the resume guarantees stay in one place (``collect``).
A Ray backend follows the same pattern with actors instead of processes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

from harness.agents import AgentConfig
from harness.errors import AgentUnavailableError, HarnessInputError, ToolTransportError
from harness.lifeline import PARENT_PID_FLAG
from harness.runner import RolloutJob, RunnerConfig
from harness.trajectory import Trajectory

__all__ = ["ProcessBackend", "WorkerError"]

_LINE_LIMIT = 1 << 28  # a trajectory line can hold hundreds of tool schemas
_ERRORS: dict[str, type[Exception]] = {
    "AgentUnavailableError": AgentUnavailableError,
    "HarnessInputError": HarnessInputError,
    "ToolTransportError": ToolTransportError,
}
_REPO_ROOT = Path(__file__).resolve().parent.parent


class WorkerError(RuntimeError):
    """A worker process died without saying why."""


def error_line(exc: BaseException) -> str:
    """How a worker reports the failure that stopped it (the parent re-raises the same type)."""
    return json.dumps({"error": {"type": type(exc).__name__, "message": str(exc)}})


class ProcessBackend:
    def __init__(
        self, agent: AgentConfig, runner: RunnerConfig, transport: str, concurrency: int, workers: int
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.agent = agent
        self.runner = runner
        self.transport = transport
        self.concurrency = concurrency
        self.workers = workers

    def _shares(self, jobs: Iterable[RolloutJob]) -> list[list[RolloutJob]]:
        # All rollouts of a task go to one worker: its episode pool then reuses that task's state.
        shares: list[list[RolloutJob]] = [[] for _ in range(self.workers)]
        owner: dict[str, int] = {}
        for job in jobs:
            index = owner.setdefault(job.task.id, len(owner) % self.workers)
            shares[index].append(job)
        return [share for share in shares if share]

    def _payload(self, share: list[RolloutJob]) -> bytes:
        header = {
            "agent": dataclasses.asdict(self.agent),
            "runner": dataclasses.asdict(self.runner),
            "transport": self.transport,
            "concurrency": max(1, self.concurrency // self.workers),
        }
        lines = [json.dumps(header)]
        sent: set[str] = set()
        for job in share:
            if job.task.id not in sent:
                sent.add(job.task.id)
                lines.append(json.dumps({"task": job.task.model_dump(mode="json")}))
            lines.append(json.dumps({"job": [job.task.id, job.rollout, job.seed]}))
        return ("\n".join(lines) + "\n").encode()

    async def run(self, jobs: Iterable[RolloutJob]) -> AsyncIterator[Trajectory]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        queue: asyncio.Queue[Trajectory | BaseException | None] = asyncio.Queue()
        processes: list[asyncio.subprocess.Process] = []

        async def pump(share: list[RolloutJob]) -> None:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "harness.worker", PARENT_PID_FLAG, str(os.getpid()),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=_LINE_LIMIT,
            )
            processes.append(process)
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(self._payload(share))
            await process.stdin.drain()
            process.stdin.close()
            reported = False
            async for raw in process.stdout:
                if raw.startswith(b'{"error":'):
                    error = json.loads(raw)["error"]
                    await queue.put(_ERRORS.get(error["type"], WorkerError)(error["message"]))
                    reported = True
                    continue
                await queue.put(Trajectory.from_line(raw))
            code = await process.wait()
            if code != 0 and not reported:
                await queue.put(WorkerError(f"a worker process exited with code {code}"))
            await queue.put(None)

        shares = self._shares(jobs)
        pumps = [asyncio.create_task(pump(share)) for share in shares]
        try:
            running = len(pumps)
            while running:
                item = await queue.get()
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    yield item
        finally:
            for process in processes:
                if process.returncode is None:
                    process.kill()
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            for process in processes:
                await process.wait()

    @staticmethod
    def parse_header(header: dict[str, Any]) -> tuple[AgentConfig, RunnerConfig, str, int]:
        return (
            AgentConfig(**header["agent"]),
            RunnerConfig(**header["runner"]),
            str(header["transport"]),
            int(header["concurrency"]),
        )
