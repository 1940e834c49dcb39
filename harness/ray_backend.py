"""The Ray backend: rollouts fan out over async Ray actors, each hosting many episodes in process.

Each actor (``EpisodeHost``) builds its own agent, from the agent config or a picklable factory,
and its own in-process tool transport, then runs episodes as asyncio tasks on its event loop, so
one actor hosts hundreds of concurrent episodes at the cost of one process. The driver keeps at
most ``concurrency`` rollouts in flight (a task's rollouts go to one actor while it has room, so its
episode pool reuses that task's state; otherwise to the least busy actor) and yields each
trajectory as it arrives: ``collect`` writes them exactly as it writes the local backend's, with
the same resume guarantees. The episode code is the same function (``run_episode``), so the
trajectories are the same for the same seeds.

Ray is an optional extra, imported only when a Ray backend runs.
"""

from __future__ import annotations

import asyncio
import math
import logging
import socket
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from harness.agents import Agent, AgentConfig, TaskBook, make_agent
from harness.errors import HarnessInputError, ToolTransportError
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import ToolTransport, make_transport
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskSpec

__all__ = [
    "AgentFactory",
    "EpisodeHost",
    "RayBackend",
    "RayBackendError",
    "RayOptions",
    "RayUnavailableError",
    "check_address",
    "connect",
]

AgentFactory = Callable[[TaskBook], Agent]
"""Builds an agent inside an actor from the tasks that actor runs, by id (filled as their jobs
arrive; only agents that replay plans read it). It is pickled, so a module-level function or
class, or a ``functools.partial`` of one."""

_CONNECT_TIMEOUT_S = 5.0


class RayUnavailableError(HarnessInputError):
    """Ray is not installed, or no cluster answers at the address given (exit code 2)."""


class RayBackendError(ToolTransportError):
    """The cluster failed under a running collection (an actor, and the episodes it hosted, died):
    the run stops (exit code 1, like a task server that stopped answering) and resumes when rerun."""


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide to run.

    ``address``: None starts a private local Ray instance; ``"auto"`` joins the cluster this machine
    belongs to; ``"HOST:PORT"`` a cluster's GCS; ``"ray://HOST:PORT"`` a cluster through Ray Client.
    ``actors``: how many episode hosts (default: one per ``actor_cpus`` CPUs of the cluster, no
    more than ``concurrency``). ``num_cpus`` sizes a local instance (default: all CPUs).
    """

    address: str | None = None
    actors: int | None = None
    actor_cpus: float = 1.0
    num_cpus: int | None = None

    def __post_init__(self) -> None:
        if self.actors is not None and self.actors < 1:
            raise HarnessInputError(f"--ray-actors must be at least 1, not {self.actors}")
        if self.actor_cpus <= 0:
            raise HarnessInputError(f"CPUs per actor must be positive, not {self.actor_cpus}")


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "the Ray backend needs Ray: pip install 'compoworld[ray]' (or run with --backend local)"
        ) from None
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an explicit address; None for ``auto``."""
    if address == "auto":
        return None
    parts = urlsplit(address if "://" in address else f"//{address}")
    if parts.scheme not in ("", "ray") or not parts.hostname:
        raise RayUnavailableError(f"--address {address!r} is not auto, HOST:PORT or ray://HOST:PORT")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        raise RayUnavailableError(f"--address {address!r} has no valid port (e.g. ray://head:10001 or head:6379)")
    return parts.hostname, port


def check_address(address: str) -> None:
    """Fail fast on an address where nothing listens: Ray itself retries for a minute or more."""
    target = _host_port(address)
    if target is None:
        return
    host, port = target
    try:
        with socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RayUnavailableError(
            f"no Ray cluster answers at {address} ({reason})",
            "start one with `ray start --head`, fix --address, or leave --address out to run a local Ray instance",
        ) from None


def connect(options: RayOptions) -> bool:
    """Join (or start) the cluster; True when this call started Ray (and must shut it down).

    An already initialised Ray (a notebook, a test fixture) is used as it is.
    """
    ray = _import_ray()
    if options.address is not None:
        check_address(options.address)
    if ray.is_initialized():
        return False
    # Importing ray sets its logger to INFO: keep it at errors unless --verbose set the root logger to INFO
    # (``configure_logging``), so a run prints its own lines only.
    quiet = not logging.getLogger().isEnabledFor(logging.INFO)
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "logging_level": logging.ERROR if quiet else logging.INFO}
    if options.address is None:
        kwargs["num_cpus"] = options.num_cpus
    else:
        kwargs["address"] = options.address
    try:
        ray.init(**kwargs)
    except (ConnectionError, ValueError, TimeoutError) as exc:
        if options.address == "auto":
            # Ray's own text asks for --address, which was given: say what auto means instead.
            raise RayUnavailableError(
                "--address auto found no Ray cluster running on this machine",
                "start one with `ray start --head`, name a cluster with --address HOST:PORT or ray://HOST:PORT, "
                "or leave --address out to run a local Ray instance",
            ) from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RayUnavailableError(
            f"cannot join the Ray cluster at {options.address or 'a local instance'}: {first}",
            "check that the cluster is up and --address names it",
        ) from None
    return True


class EpisodeHost:
    """The actor: one agent, one in-process transport, many concurrent episodes on one event loop."""

    def __init__(self, agent: AgentConfig | AgentFactory, runner: RunnerConfig, transport: str) -> None:
        self._runner = runner
        self._agent: Agent | None = None
        self._transport: ToolTransport | None = None
        self._failed: Exception | None = None
        self._tasks: dict[str, TaskSpec] = {}  # the tasks of the jobs this actor has been given
        try:
            self._agent = make_agent(agent, self._tasks) if isinstance(agent, AgentConfig) else agent(self._tasks)
            self._transport = make_transport(transport)
        except Exception as exc:
            # Kept and raised by ``run``: the driver then gets this error itself (a missing model, a
            # key not set on this node), not just "the actor died".
            self._failed = exc

    async def run(self, job: RolloutJob) -> Trajectory:
        if self._failed is not None:
            raise self._failed
        assert self._agent is not None and self._transport is not None
        self._tasks.setdefault(job.task.id, job.task)
        return await run_episode(job, self._agent, self._transport, self._runner)

    async def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        if self._agent is not None:
            await self._agent.aclose()


def _cause(exc: BaseException) -> BaseException:
    """The exception the actor raised, unwrapped from Ray's envelope; actor deaths as ``RayBackendError``."""
    import ray.exceptions

    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = getattr(exc, "cause", None)
        return cause if isinstance(cause, BaseException) else RayBackendError(str(exc).splitlines()[0])
    if isinstance(exc, ray.exceptions.RayActorError):
        return RayBackendError(f"a Ray actor hosting episodes died ({type(exc).__name__}); run again to resume")
    if isinstance(exc, ray.exceptions.RayError):
        return RayBackendError(f"Ray failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    return exc


class RayBackend:
    """``Backend`` over Ray actors. ``agent`` is an ``AgentConfig`` (built in each actor with
    ``make_agent``) or an ``AgentFactory``; ``transport`` is a tool transport name."""

    def __init__(
        self,
        agent: AgentConfig | AgentFactory,
        runner: RunnerConfig,
        *,
        concurrency: int = 8,
        transport: str = "inprocess",
        options: RayOptions = RayOptions(),
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.agent = agent
        self.runner = runner
        self.concurrency = concurrency
        self.transport = transport
        self.options = options

    def _layout(self, ray: Any) -> tuple[int, float]:
        """How many actors, and the CPUs each reserves (never more than the cluster has: they would wait forever)."""
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        if self.options.actors is not None:
            n_actors = min(self.options.actors, self.concurrency)
        else:
            n_actors = max(1, min(int(cpus // self.options.actor_cpus), self.concurrency))
        return n_actors, min(self.options.actor_cpus, cpus / n_actors)

    async def run(self, jobs: Iterable[RolloutJob]) -> AsyncIterator[Trajectory]:
        ray = _import_ray()
        started = connect(self.options)
        n_actors, actor_cpus = self._layout(ray)
        per_actor = math.ceil(self.concurrency / n_actors)
        remote_host = ray.remote(EpisodeHost).options(num_cpus=actor_cpus, max_concurrency=per_actor)
        actors = [remote_host.remote(self.agent, self.runner, self.transport) for _ in range(n_actors)]
        load = [0] * n_actors
        in_flight: dict[asyncio.Future[Trajectory], int] = {}
        pending = iter(jobs)  # pulled lazily: never more than `concurrency` jobs or results held here

        home: dict[str, int] = {}  # task id -> its actor: the actor's episode pool reuses that task's state

        def submit() -> bool:
            job = next(pending, None)
            if job is None:
                return False
            index = home.setdefault(job.task.id, len(home) % n_actors)
            if load[index] >= per_actor:
                index = min(range(n_actors), key=load.__getitem__)
            load[index] += 1
            in_flight[asyncio.ensure_future(actors[index].run.remote(job))] = index
            return True

        try:
            while len(in_flight) < self.concurrency and submit():
                pass
            while in_flight:
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    load[in_flight.pop(future)] -= 1
                    try:
                        trajectory = future.result()
                    except Exception as exc:
                        raise _cause(exc) from None
                    submit()
                    yield trajectory
            await asyncio.gather(*(actor.close.remote() for actor in actors))
        finally:
            for future in in_flight:
                future.cancel()
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)
            for actor in actors:
                ray.kill(actor)  # also stops whatever an actor was still running after a failure
            if started:
                ray.shutdown()
