"""``harness serve``: one task's episode as one MCP server, for Claude Desktop and any MCP client.

It builds on the task server the MCP transport uses (``harness.task_server``): the task's services
and distractor services behind one server, setup applied, in ``direct`` or ``discover`` mode. On top
of that, the task's instruction reaches the client twice: in the server's ``instructions`` and as
an MCP prompt named ``task``, which clients such as Claude Desktop offer to the person. With
``--db DIR`` the state lives in SQLite files, so work survives a restart and ``harness grade``
can grade it. Over HTTP, ``--port 0`` takes any free port; the URL is printed on stderr (stdout
belongs to the protocol over stdio). Only loopback unless ``--allow-remote`` names the host names
clients use (``mcp_services.serving.http``). Over stdio the server ends when its client closes
the pipe, as with any stdio MCP server.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
from mcp.server.mcpserver.prompts.base import Prompt

from harness.episode_db import claim_db
from harness.errors import HarnessInputError
from harness.task_ref import load_task
from harness.task_server import TaskEpisodeServer, build_task_server
from mcp_services.kernel.episode import Episode
from mcp_services.serving.http import RemoteHostError, allowed_names, http_app, is_loopback, remote_warning
from mcp_services.serving.server import DEFAULT_HOST, DEFAULT_PORT, serve_stdio
from mcp_services.serving.surface import MODES, Mode
from mcp_services.tasks.spec import TaskSpec

__all__ = ["PROMPT_NAME", "ServeConfig", "build_served_task", "serve"]

PROMPT_NAME = "task"
ServeTransport = Literal["stdio", "http"]
Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class ServeConfig:
    """One task served. ``db_dir=None`` keeps the state in memory (gone when the server stops)."""

    tasks_file: Path
    task_id: str
    transport: ServeTransport = "stdio"
    mode: Mode = "direct"
    db_dir: Path | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT  # 0: any free port
    allow_remote: tuple[str, ...] = ()  # host names clients use; needed for a non-loopback host

    def __post_init__(self) -> None:
        if self.transport not in ("stdio", "http"):
            raise HarnessInputError(f"--transport must be stdio or http, not {self.transport!r}")
        if self.mode not in MODES:
            raise HarnessInputError(f"--mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if not 0 <= self.port <= 65535:
            raise HarnessInputError(f"--port must be in 0..65535, not {self.port}")
        if self.transport == "http":
            self.remote_names()
        elif self.allow_remote:
            raise HarnessInputError("--allow-remote is for --transport http")

    def remote_names(self) -> tuple[str, ...]:
        """The host names remote clients may use (see ``mcp_services.serving.http``)."""
        try:
            return allowed_names(self.host, self.allow_remote)
        except RemoteHostError as exc:
            raise HarnessInputError(str(exc)) from None


def build_served_task(task: TaskSpec, mode: Mode, db_dir: Path | None) -> tuple[TaskEpisodeServer, Episode]:
    """The task server with the instruction as the ``task`` prompt (close the episode when done)."""
    if db_dir is not None:
        claim_db(db_dir, task)
    server, episode = build_task_server(task, mode, db_dir)
    brief = server.instructions or task.instruction

    def task_prompt() -> str:
        return brief

    server.add_prompt(
        Prompt.from_function(
            task_prompt,
            name=PROMPT_NAME,
            title="The task",
            description=f"CompoWorld task {task.id}: the request to carry out with these tools, and its context",
        )
    )
    return server, episode


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)  # listening before the URL is printed: an early client waits, it is not refused
    except OSError as exc:
        sock.close()
        raise HarnessInputError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    return sock


async def _serve_http(server: TaskEpisodeServer, sock: socket.socket, names: tuple[str, ...]) -> None:
    import uvicorn

    config = uvicorn.Config(http_app(server, names), log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def serve(config: ServeConfig, log: Log = _stderr) -> int:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    task = load_task(config.tasks_file, config.task_id)
    sock = _listen(config.host, config.port) if config.transport == "http" else None
    try:
        server, episode = build_served_task(task, config.mode, config.db_dir)
    except BaseException as exc:
        if sock is not None:
            sock.close()
        if isinstance(exc, ValueError) and not isinstance(exc, HarnessInputError):
            # The kernel's own one-line messages: a state file of another service or seed, an unknown service.
            raise HarnessInputError(str(exc)) from None
        raise
    services = ", ".join(task.services)
    distractors = f" (distractors: {', '.join(task.distractor_services)})" if task.distractor_services else ""
    where = f"state in {config.db_dir}" if config.db_dir else "state in memory (lost when the server stops)"
    if sock is None:
        reach = "over stdio"
    else:
        bound_host, bound_port = sock.getsockname()[:2]
        reach = f"at http://{bound_host if ':' not in bound_host else f'[{bound_host}]'}:{bound_port}/mcp"
    try:
        log(f"harness: serving task {task.id} ({services}{distractors}) in {config.mode} mode {reach}; {where}")
        if sock is not None and not is_loopback(config.host):
            log(f"harness: {remote_warning(config.host, sock.getsockname()[1], config.remote_names())}")
        if config.db_dir is not None:
            grade = f"harness grade --tasks {config.tasks_file} --task {task.id} --db {config.db_dir}"
            log(f"harness: grade it with: {grade}")
        if sock is None:
            serve_stdio(server)
        else:
            anyio.run(_serve_http, server, sock, config.remote_names())
    finally:
        episode.close()
        if sock is not None:
            sock.close()
    return 0
