"""CompoWorld as an OpenEnv environment server, and its typed client (extra ``openenv``).

``create_app(tasks="tasks.jsonl")`` is an OpenEnv (FastAPI) application: serve it with
``uvicorn.run(app, host="127.0.0.1", port=8000)``. Each WebSocket session (``CompoWorldClient``)
gets its own ``CompoWorldEnvironment``, and many sessions run concurrently in one server:

- ``reset(task_id=...)`` opens a fresh private episode of that task (setup applied); the
  observation carries the conversation's start (``prompt``: the harness's system prompt and the
  request) and the ``tools`` the model may call;
- ``step(CompoWorldAction(tool=..., arguments=...))`` runs one tool call as the model wrote it; the
  observation's ``result`` is the tool result the model reads (a malformed or unknown call gets an
  error result, as in the harness);
- ``step(CompoWorldAction(answer=...))`` ends the episode: it is graded by the task's checks, the
  observation is ``done`` with the ``reward`` (``rubric``: mean of criteria, or ``binary``) and the
  whole ``grade``, whose ``criterion_scores`` feed a group reward such as CFRR in the trainer.

A step after the episode ended, or before any reset, is refused with a clear error; a session that
is closed or dropped mid-episode closes its episode. ``GET /tasks`` lists the task ids,
``GET /status`` counts the open episodes.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient
    from openenv.core.env_server.http_server import create_app as create_openenv_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
    from starlette.websockets import WebSocketDisconnect
    from websockets.asyncio.client import connect as ws_connect
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f"harness.adapters.openenv needs the openenv extra ({exc.name} is missing): pip install 'compoworld[openenv]'"
    ) from exc

from harness.adapters.episodes import (
    AdapterEpisode,
    EpisodeClosedError,
    EpisodeResult,
    TaskCatalog,
    TaskSource,
    check_mode,
    episode_prompt,
)
from harness.errors import HarnessInputError
from harness.tools import CallOutcome, InProcessTransport
from mcp_services.serving.auth import (
    MIN_TOKEN_CHARS,
    AuthConfigError,
    BearerGate,
    bearer_header,
    refuse_url_credentials,
)
from mcp_services.serving.http import is_loopback, listen
from mcp_services.serving.surface import Mode

__all__ = [
    "REWARDS",
    "CompoWorldAction",
    "CompoWorldClient",
    "CompoWorldEnvironment",
    "CompoWorldObservation",
    "CompoWorldState",
    "create_app",
    "serving",
]

#: Per-episode rewards. CFRR needs the whole group of a task's rollouts: the trainer computes it
#: from each final observation's ``grade["criterion_scores"]`` (``mcp_services.tasks.rewards.group_rewards``).
REWARDS = ("rubric", "binary")


class CompoWorldAction(Action):
    """One step: a tool call (``tool`` and its ``arguments``, JSON text as the model wrote it or an
    object), or the final ``answer`` that ends the episode."""

    tool: str | None = Field(default=None, description="A tool name from the reset observation's tools")
    arguments: str | dict[str, Any] = Field(default="{}", description="The call's arguments")
    answer: str | None = Field(default=None, description="The model's final reply; ends the episode")

    @model_validator(mode="after")
    def _tool_call_or_answer(self) -> CompoWorldAction:
        if (self.tool is None) == (self.answer is None):
            # A custom error keeps the server's JSON error report serializable (a ValueError does not).
            raise PydanticCustomError(
                "tool_call_or_answer",
                "an action is either a tool call (tool=..., arguments=...) or the final answer (answer=...)",
            )
        return self


class CompoWorldObservation(Observation):
    task_id: str = ""
    prompt: list[dict[str, Any]] = Field(default_factory=list, description="After reset: system and user messages")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="After reset: the OpenAI tools list")
    result: str | None = Field(default=None, description="The tool result as the model reads it (JSON envelope)")
    success: bool | None = None
    grade: dict[str, Any] | None = Field(default=None, description="When done: the task's grade of the episode")


class CompoWorldState(State):
    task_id: str | None = None
    mode: str = "direct"
    done: bool = False
    n_tool_calls: int = 0


@dataclass
class _Served:
    """What every session of one app shares: the settings, the transport, a count of open episodes.

    The transport's pool of idle episodes is what makes a reset cheap (a snapshot restore instead
    of building a world); it is not thread-safe, so every episode is opened, called and closed on
    one event loop, the first one that opens an episode (the server's).
    """

    catalog: TaskCatalog
    mode: Mode
    reward: str
    max_steps: int
    transport: InProcessTransport = field(default_factory=InProcessTransport)
    loop: asyncio.AbstractEventLoop | None = None
    closing: set[asyncio.Task[None]] = field(default_factory=set)  # closes scheduled on the loop itself
    _open: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)  # sessions close in worker threads

    def own_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self.loop is None or self.loop.is_closed():
            self.loop = loop
        elif loop is not self.loop:
            raise RuntimeError("CompoWorld episodes of one app run on one event loop; this call came from another")

    def count(self, delta: int) -> None:
        with self._lock:
            self._open += delta

    @property
    def open_episodes(self) -> int:
        with self._lock:
            return self._open


class CompoWorldEnvironment(Environment[CompoWorldAction, CompoWorldObservation, CompoWorldState]):
    """One session's environment: at most one open episode, private to the session."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, served: _Served) -> None:
        """Made by the server for each session (``create_app``); in process use ``from_tasks``."""
        super().__init__()
        self._served = served
        self._episode: AdapterEpisode | None = None
        self._state = CompoWorldState(mode=served.mode)
        self._resets = 0
        self._runner: asyncio.Runner | None = None  # the event loop of the sync API, kept across calls

    @classmethod
    def from_tasks(
        cls, tasks: TaskSource = None, mode: str = "direct", reward: str = "rubric", max_steps: int = 64
    ) -> CompoWorldEnvironment:
        """One environment without a server, driven in process with ``reset``/``step`` (or their
        async forms); ``close()`` it when done."""
        return cls(_serve(tasks, mode, reward, max_steps))

    # -- OpenEnv's API -----------------------------------------------------------------------------

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None, **kwargs: Any
    ) -> CompoWorldObservation:
        # ``seed`` is accepted as OpenEnv passes it, but a task's world is fixed by the task.
        if kwargs:
            unexpected = ", ".join(sorted(kwargs))
            raise HarnessInputError(f"reset takes task_id (and seed, episode_id); unexpected: {unexpected}")
        if task_id is None:
            raise HarnessInputError("reset needs task_id=...: one of the ids that GET /tasks lists")
        task = self._served.catalog.get(task_id)
        self._served.own_loop()
        await self._close_episode("abandoned by a new reset")
        self._episode = await AdapterEpisode.open(self._served.transport, task, self._served.mode)
        self._served.count(+1)
        self._resets += 1
        self._state = CompoWorldState(
            episode_id=episode_id or f"{task.id}/{self._resets}", task_id=task.id, mode=self._served.mode
        )
        return CompoWorldObservation(
            task_id=task.id, prompt=episode_prompt(task, self._served.mode), tools=self._episode.tools
        )

    async def step_async(
        self, action: CompoWorldAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CompoWorldObservation:
        episode = self._episode
        if episode is None:
            raise EpisodeClosedError("no episode is running in this session: call reset(task_id=...) first")
        episode.check_open("step" if action.answer is None else "answer")
        self._served.own_loop()
        self._state.step_count += 1
        if action.answer is not None:
            return await self._finish(episode, action.answer, "answer", None)
        assert action.tool is not None
        outcome = await episode.call(action.tool, action.arguments)
        self._state.n_tool_calls = episode.n_tool_calls
        if episode.n_tool_calls >= self._served.max_steps:
            return await self._finish(episode, None, "max_steps", outcome)
        return CompoWorldObservation(task_id=episode.task.id, result=outcome.text, success=outcome.success)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> CompoWorldObservation:
        return self._run(self.reset_async(seed=seed, episode_id=episode_id, **kwargs))

    def step(self, action: CompoWorldAction, timeout_s: float | None = None, **kwargs: Any) -> CompoWorldObservation:
        return self._run(self.step_async(action, timeout_s=timeout_s, **kwargs))

    def _run(self, coroutine: Any) -> Any:
        """The sync API runs on one private event loop for the environment's life: an episode's
        session must outlive the call that opened it (a loop per call would close it on exit)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coroutine.close()
            raise RuntimeError("inside an event loop, await reset_async/step_async instead of reset/step")
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(coroutine)

    @property
    def state(self) -> CompoWorldState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="compoworld",
            description=(
                f"CompoWorld: {len(self._served.catalog)} stateful multi-service tasks ({self._served.mode} tools); "
                "reset(task_id=...), then step tool calls and the final answer"
            ),
        )

    def close(self) -> None:
        """The session ended (closed or dropped): close its episode, on the loop that owns it."""
        if self._episode is not None and not self._episode.closed:
            closing = self._close_episode("abandoned: the session closed")
            loop = self._served.loop
            try:
                here = asyncio.get_running_loop()
            except RuntimeError:
                here = None
            if self._runner is not None:  # driven through the sync API
                self._runner.run(closing)
            elif loop is not None and here is loop:  # OpenEnv's HTTP routes close on the loop: no waiting
                task = loop.create_task(closing)
                self._served.closing.add(task)
                task.add_done_callback(self._served.closing.discard)
            elif loop is not None and loop.is_running():  # the server closes sessions from a worker thread
                asyncio.run_coroutine_threadsafe(closing, loop).result(timeout=60)
            else:  # the loop is gone (the server stopped): nothing else can touch the episode now
                asyncio.run(closing)
        if self._runner is not None:  # an environment of its own (from_tasks): nobody else uses the pool
            self._runner.close()
            self._runner = None
            self._served.transport.close()

    # -- internals ---------------------------------------------------------------------------------

    async def _finish(
        self, episode: AdapterEpisode, answer: str | None, stop: str, last: CallOutcome | None
    ) -> CompoWorldObservation:
        try:  # the ended episode stays, so that a later step is told why it is refused
            result = await episode.finish(answer, stop)
        finally:
            self._served.count(-1)
        self._state.done = True
        return CompoWorldObservation(
            task_id=result.task_id,
            result=last.text if last is not None else None,
            success=last.success if last is not None else None,
            done=True,
            reward=_reward(result, self._served.reward),
            grade=result.to_dict(),
        )

    async def _close_episode(self, reason: str) -> None:
        episode, self._episode = self._episode, None
        if episode is not None and not episode.closed:
            try:
                await episode.close(reason)
            finally:
                self._served.count(-1)


def _reward(result: EpisodeResult, kind: str) -> float:
    return result.rubric_score if kind == "rubric" else float(result.passed)


def _serve(tasks: TaskSource, mode: str, reward: str, max_steps: int) -> _Served:
    if reward not in REWARDS:
        hint = " (CFRR is a group reward: compute it from the grades' criterion_scores)" if reward == "cfrr" else ""
        raise HarnessInputError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}{hint}")
    _check_count("max_steps", max_steps)
    return _Served(TaskCatalog(tasks), check_mode(mode), reward, max_steps)


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HarnessInputError(f"{name} must be a whole number of at least 1, not {value!r}")


class _QuietSessionEnd:
    """ASGI middleware: a WebSocket session that ends because the client hung up is a normal end.

    OpenEnv 0.3.0 closes the socket when a session ends and catches only ``RuntimeError`` around that
    close; when the client has gone first, starlette raises ``WebSocketDisconnect`` there instead, and
    uvicorn logged a 60-line traceback for every session a client closed.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            return


def create_app(
    tasks: TaskSource = None,
    mode: str = "direct",
    reward: str = "rubric",
    max_steps: int = 64,
    max_concurrent_envs: int = 256,
    auth_token: str | None = None,
) -> FastAPI:
    """The OpenEnv server application for a task set (``tasks.jsonl``, a list of tasks, or None for
    the harness's default set). ``max_steps``: tool calls per episode before it ends and is graded;
    ``max_concurrent_envs``: sessions open at once; ``auth_token``: a bearer token every request and
    session must carry (``CompoWorldClient(url, token=...)``; read it from the environment, e.g.
    ``os.environ["OPENENV_TOKEN"]``), required when the app serves other machines."""
    _check_count("max_concurrent_envs", max_concurrent_envs)
    if auth_token is not None and (len(auth_token) < MIN_TOKEN_CHARS or any(c.isspace() for c in auth_token)):
        raise HarnessInputError(f"auth_token must be at least {MIN_TOKEN_CHARS} characters without spaces")
    served = _serve(tasks, mode, reward, max_steps)
    app = create_openenv_app(
        functools.partial(CompoWorldEnvironment, served),
        CompoWorldAction,
        CompoWorldObservation,
        env_name="compoworld",
        max_concurrent_envs=max_concurrent_envs,
    )

    @app.get("/tasks", tags=["Environment Info"])
    def list_tasks() -> list[dict[str, Any]]:
        return [{"id": t.id, "services": list(t.services), "instruction": t.instruction} for t in served.catalog]

    @app.get("/status", tags=["Health"])
    def status() -> dict[str, Any]:
        return {"tasks": len(served.catalog), "open_episodes": served.open_episodes, "mode": served.mode}

    # OpenEnv's stateless HTTP /reset and /step would answer these with a bare 500.
    async def refused(request: Request, exc: Exception) -> JSONResponse:
        code = 409 if isinstance(exc, EpisodeClosedError) else 422
        return JSONResponse({"detail": str(exc)}, status_code=code)

    app.add_exception_handler(EpisodeClosedError, refused)
    app.add_exception_handler(HarnessInputError, refused)
    app.add_middleware(_QuietSessionEnd)
    app.router.on_shutdown.append(served.transport.close)
    if auth_token is not None:
        app.add_middleware(BearerGate, token=auth_token)
    return app


@contextmanager
def serving(app: FastAPI, host: str = "127.0.0.1", port: int = 0, *, startup_timeout: float = 30.0) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread for the ``with`` block; yields its base URL
    (``port=0``: a free port). For a trainer that keeps the environments in its own process, and tests."""
    import uvicorn

    sock = listen(host, port)  # a TCP socket whose connections send without Nagle's delay
    # Loopback: compressing every message (a reset carries every tool's schema) would only cost CPU;
    # and the plain asyncio loop: under uvloop (when installed) bench/bench_adapters.py ran ~4x slower.
    config = uvicorn.Config(
        app, log_level="warning", ws_max_size=64 * 1024 * 1024, ws_per_message_deflate=False, loop="asyncio"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="openenv-server", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the OpenEnv server did not start on {host}:{port} within {startup_timeout:g} s")
            time.sleep(0.01)
        bound_host, bound_port = sock.getsockname()[:2]
        yield f"http://{bound_host if ':' not in bound_host else f'[{bound_host}]'}:{bound_port}"
    finally:
        server.should_exit = True
        thread.join(timeout=startup_timeout)
        sock.close()


class CompoWorldClient(EnvClient[CompoWorldAction, CompoWorldObservation, CompoWorldState]):
    """The typed client: ``async with CompoWorldClient("http://127.0.0.1:8000") as env:`` then
    ``await env.reset(task_id=...)``, ``await env.call(tool, arguments)``, ``await env.answer(text)``.
    A refused request raises ``RuntimeError`` with the server's message. ``token``: the server's
    bearer token (``create_app(auth_token=...)``), sent on the WebSocket handshake and every request."""

    def __init__(self, base_url: str, *, token: str | None = None, **kwargs: Any) -> None:
        try:
            refuse_url_credentials(base_url, "the server URL")
        except AuthConfigError as exc:
            raise HarnessInputError(str(exc).replace("--auth-token-env NAME", "token=...")) from None
        super().__init__(base_url, **kwargs)
        self._http_url = base_url.rstrip("/").replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        self._headers = bearer_header(token) if token is not None else {}

    async def connect(self) -> CompoWorldClient:
        """As OpenEnv's ``connect``, plus the bearer token on the handshake (OpenEnv 0.3 sends no headers)."""
        if self._ws is not None or not self._headers:
            await super().connect()
            return self
        direct = is_loopback(urlsplit(self._ws_url).hostname or "")  # as OpenEnv: no proxy to this machine
        try:
            self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size,
                                        additional_headers=self._headers, proxy=None if direct else True)
        except Exception as exc:
            raise ConnectionError(f"Failed to connect to {self._ws_url}: {exc}") from exc
        return self

    async def call(self, tool: str, arguments: str | dict[str, Any] = "{}") -> StepResult[CompoWorldObservation]:
        return await self.step(CompoWorldAction(tool=tool, arguments=arguments))

    async def answer(self, text: str) -> StepResult[CompoWorldObservation]:
        return await self.step(CompoWorldAction(answer=text))

    async def list_tasks(self) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=self._http_url, timeout=self._connect_timeout, headers=self._headers) as http:
            response = await http.get("/tasks")
            response.raise_for_status()
            return list(response.json())

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        """As OpenEnv's, but a refusal says why: the server's validation details join its message."""
        await self._send(message)
        response = await self._receive()
        if response.get("type") == "error":
            data = response.get("data", {})
            details = "; ".join(str(e.get("msg")) for e in data.get("errors", ()) if isinstance(e, dict))
            reason = f"{data.get('message', 'unknown error')}{f': {details}' if details else ''}"
            raise RuntimeError(f"Server error: {reason} (code: {data.get('code', 'UNKNOWN')})")
        return response

    def _step_payload(self, action: CompoWorldAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CompoWorldObservation]:
        observation = CompoWorldObservation.model_validate(
            {**payload.get("observation", {}), "done": payload.get("done", False), "reward": payload.get("reward")}
        )
        return StepResult(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> CompoWorldState:
        return CompoWorldState.model_validate(payload)
