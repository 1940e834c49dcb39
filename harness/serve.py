"""``harness serve``: one task's episode as one MCP server, for Claude Desktop and any MCP client.

It builds on the task server the MCP transport uses (``harness.task_server``): the task's services
and distractor services behind one server, setup applied, in ``direct`` or ``discover`` mode. On top
of that, the task's instruction reaches the client twice: in the server's ``instructions`` and as
an MCP prompt named ``task``, which clients such as Claude Desktop offer to the person. With
``--db DIR`` the state lives in SQLite files, so work survives a restart and ``harness grade``
can grade it. Over HTTP, ``--port 0`` takes any free port; the URL is printed on stderr (stdout
belongs to the protocol over stdio) once the port is bound. Only loopback unless ``--allow-remote``
names the host names clients use, and beyond loopback a token (``--auth-token-env``,
``--auth-issuer``) or an explicit ``--no-auth`` (``mcp_services.serving.http``). Over stdio the
server ends when its client closes the pipe, as with any stdio MCP server.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver.prompts.base import Prompt

from harness.episode_db import claim_db
from harness.errors import HarnessInputError
from harness.task_ref import load_task
from harness.task_server import TaskEpisodeServer, build_task_server
from mcp_services.kernel.episode import Episode
from mcp_services.serving.http import HttpServing, ListenError, bound_url, listen, remote_warning
from mcp_services.serving.server import serve_http, serve_stdio
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
    """One task served. ``db_dir=None`` keeps the state in memory (gone when the server stops);
    ``http`` says where and for whom (``--transport http`` only)."""

    tasks_file: Path
    task_id: str
    transport: ServeTransport = "stdio"
    mode: Mode = "direct"
    db_dir: Path | None = None
    http: HttpServing | None = None

    def __post_init__(self) -> None:
        if self.transport not in ("stdio", "http"):
            raise HarnessInputError(f"--transport must be stdio or http, not {self.transport!r}")
        if self.mode not in MODES:
            raise HarnessInputError(f"--mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.transport == "stdio" and self.http is not None:
            raise HarnessInputError("HTTP options (--host, --port, --allow-remote, --auth-...) are for --transport http")
        if self.transport == "http" and self.http is None:
            object.__setattr__(self, "http", HttpServing())


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


def serve(config: ServeConfig, log: Log = _stderr) -> int:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    task = load_task(config.tasks_file, config.task_id)
    http = config.http
    try:
        sock = listen(http.host, http.port) if http is not None else None
    except ListenError as exc:
        raise HarnessInputError(exc.strerror) from None
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
    reach = "over stdio" if sock is None else f"at {bound_url(sock)}"
    if http is not None and http.auth is not None:
        reach += " (bearer token required)"
    try:
        log(f"harness: serving task {task.id} ({services}{distractors}) in {config.mode} mode {reach}; {where}")
        if sock is not None and http is not None and http.exposed:
            exposed = f"the tools of task {task.id} ({services})"
            log(f"harness: {remote_warning(http.host, sock.getsockname()[1], http.names(), exposed)}")
        if config.db_dir is not None:
            grade = f"harness grade --tasks {config.tasks_file} --task {task.id} --db {config.db_dir}"
            log(f"harness: grade it with: {grade}")
        if sock is None:
            serve_stdio(server)
        else:
            assert http is not None
            serve_http(server, sock, http)
    finally:
        episode.close()
        if sock is not None:
            sock.close()
    return 0
