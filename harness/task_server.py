"""One task's episode (services, distractor services, setup) served as one MCP server.

    python -m harness.task_server --tasks FILE --task ID --db DIR [--transport stdio|http]
                                  [--mode direct|discover] [--port P] [--auth-token-env NAME]
                                  [--ready-fd FD] [--parent-pid PID]

The state lives in SQLite files under ``--db`` (reopened if they exist), so whoever started the
server can reopen them afterwards and grade exactly as in process. Each result also names, in its
``_meta``, the service tool the call reached, so a client can count service calls like the
in-process path does. ``McpTransport`` uses this entry point, with ``--parent-pid`` so that the
server ends when the harness does, however it ends; ``harness serve`` builds on it.

Over HTTP (loopback only) the server binds the port itself (``--port 0``: a free one) and, once it
listens, writes the port as one line to ``--ready-fd`` (a pipe from whoever started it): no other
process can take the port in between. With ``--auth-token-env NAME`` it requires that bearer token
and shows, in ``serverInfo.description`` and in every result's ``_meta``, a proof that it holds it
(``server_proof``): the client knows it reached this episode's server before its first call, and
that every answer came from it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness.lifeline import PARENT_PID_FLAG, die_with_parent, die_with_parent_named_in

if __name__ == "__main__":  # before the imports below: a parent killed while they load ends this process now
    die_with_parent_named_in(sys.argv)

from mcp.types import CallToolResult, TextContent

from harness.prompt import system_prompt
from mcp_services.kernel.episode import Episode
from mcp_services.serving.auth import AuthConfig, server_proof, token_from_env
from mcp_services.serving.http import DEFAULT_HOST, HttpServing, ListenError, listen
from mcp_services.serving.limits import NO_LIMITS
from mcp_services.serving.server import EpisodeServer, serve_http, serve_stdio
from mcp_services.serving.surface import MODES, Mode, SurfaceCall, ToolSurface
from mcp_services.tasks.episodes import episode_for
from mcp_services.tasks.spec import TaskFileError, TaskSpec, find_task, load_tasks

__all__ = ["META_PROOF", "META_SERVICE", "META_TOOL", "TaskEpisodeServer", "build_task_server", "main",
           "proof_description"]

META_SERVICE = "compoworld/service"
META_TOOL = "compoworld/tool"
META_PROOF = "compoworld/proof"


class TaskEpisodeServer(EpisodeServer):
    """The episode server, plus which service tool each call reached (in ``_meta``) and, when it
    holds an episode's token, the proof of it on every result."""

    proof: str | None = None

    def _result(self, call: SurfaceCall) -> CallToolResult:
        meta: dict[str, str | None] = {META_SERVICE: call.service, META_TOOL: call.tool} if call.service else {}
        if self.proof is not None:
            meta[META_PROOF] = self.proof
        return CallToolResult(
            content=[TextContent(type="text", text=call.result.to_json())],
            structured_content=call.result.envelope(),
            is_error=not call.result.success,
            _meta=meta or None,
        )


def proof_description(task: TaskSpec, token: str) -> str:
    """``serverInfo.description`` of a task server that holds ``token`` (what its client checks)."""
    return f"CompoWorld task {task.id}; proof {server_proof(token)}"


def build_task_server(
    task: TaskSpec, mode: Mode, db_dir: Path | None, *, token: str | None = None
) -> tuple[TaskEpisodeServer, Episode]:
    """The server and the episode behind it (close the episode when the server is done); with the
    episode's ``token``, the server shows the proof of it in ``serverInfo`` and on every result."""
    episode = episode_for(task, db_dir=db_dir)
    instructions = f"{system_prompt(task, mode)}\n\nThe request:\n{task.instruction}"
    server = TaskEpisodeServer(
        ToolSurface(episode, mode), name=f"compoworld-task-{task.id}", instructions=instructions,
        description=proof_description(task, token) if token else None,
    )
    server.proof = server_proof(token) if token else None
    return server, episode


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness.task_server", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", required=True, type=Path, help="a tasks.jsonl file")
    parser.add_argument("--task", required=True, help="the task id (or a unique prefix)")
    parser.add_argument("--db", type=Path, default=None, help="folder for the state files (default: in memory)")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--mode", choices=MODES, default="direct")
    parser.add_argument("--port", type=int, default=0, help="http: port on 127.0.0.1 (default 0: a free one)")
    parser.add_argument("--auth-token-env", metavar="NAME", default=None, help="http: require the token in $NAME")
    parser.add_argument("--ready-fd", type=int, default=None, help="http: write the port to this fd once listening")
    parser.add_argument(PARENT_PID_FLAG, type=int, default=None, help="exit when this process ends")
    return parser


def _report_port(fd: int | None, port: int) -> None:
    if fd is None:
        print(f"task_server: listening on http://{DEFAULT_HOST}:{port}/mcp", file=sys.stderr, flush=True)
        return
    with os.fdopen(fd, "w") as pipe:
        pipe.write(f"{port}\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.parent_pid is not None:
        die_with_parent(args.parent_pid)
    try:
        task = find_task(load_tasks(args.tasks), args.task)
        token = token_from_env(args.auth_token_env) if args.auth_token_env else None
        # Loopback only (it serves the harness on this machine); the harness is its one client: no limits.
        serving = HttpServing(DEFAULT_HOST, args.port, auth=AuthConfig(token=token) if token else None,
                              limits=NO_LIMITS)
        sock = listen(serving.host, serving.port) if args.transport == "http" else None
        server, episode = build_task_server(task, args.mode, args.db, token=token)
    except (TaskFileError, KeyError, ValueError, ListenError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else getattr(exc, "strerror", None) or exc
        print(f"task_server: error: {message}", file=sys.stderr)
        return 2
    try:
        if sock is None:
            serve_stdio(server)
        else:
            _report_port(args.ready_fd, sock.getsockname()[1])
            serve_http(server, sock, serving)
    finally:
        episode.close()
        if sock is not None:
            sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
