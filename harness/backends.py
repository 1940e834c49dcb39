"""Backends run rollout jobs and stream trajectories back as they finish.

``LocalBackend`` runs episodes as asyncio tasks in this process, at most ``concurrency`` at a time.
A Ray backend (later) implements the same ``Backend`` protocol with actors that build their own
agent and transport from plain configs; ``collect`` writes whatever a backend yields, so both
share the resume guarantees and produce the same trajectories.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Protocol

from harness.agents.base import Agent
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import ToolTransport
from harness.trajectory import Trajectory

__all__ = ["Backend", "LocalBackend"]


class Backend(Protocol):
    def run(self, jobs: Iterable[RolloutJob]) -> AsyncIterator[Trajectory]:
        """Trajectories in completion order. A run-level failure is raised after in-flight work stops."""
        ...


class LocalBackend:
    def __init__(self, agent: Agent, transport: ToolTransport, runner: RunnerConfig, concurrency: int = 8) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.agent = agent
        self.transport = transport
        self.runner = runner
        self.concurrency = concurrency

    async def run(self, jobs: Iterable[RolloutJob]) -> AsyncIterator[Trajectory]:
        # Bounded: a slow writer holds the workers back instead of piling trajectories up in memory.
        queue: asyncio.Queue[Trajectory] = asyncio.Queue(maxsize=2 * self.concurrency)
        pending = iter(jobs)  # shared by the workers: pulled lazily, never all in memory at once

        async def worker() -> None:
            for job in pending:
                await queue.put(await run_episode(job, self.agent, self.transport, self.runner))

        async def produce() -> None:
            async with asyncio.TaskGroup() as group:
                for _ in range(self.concurrency):
                    group.create_task(worker())

        producer = asyncio.create_task(produce())
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter, producer}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield getter.result()
                    continue
                getter.cancel()
                while not queue.empty():
                    yield queue.get_nowait()
                break
            error = producer.exception()
            if isinstance(error, BaseExceptionGroup):
                # One worker's failure (e.g. the endpoint is down) cancelled the rest: raise it plainly.
                error = error.exceptions[0]
            if error is not None:
                raise error
        finally:
            if not producer.done():
                producer.cancel()
                await asyncio.gather(producer, return_exceptions=True)
