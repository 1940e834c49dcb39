"""One task's episode (services, distractor services, setup) served as one MCP server.

    python -m harness.task_server --tasks FILE --task ID --db DIR [--transport stdio|http]
                                  [--mode direct|discover] [--host H] [--port P] [--parent-pid PID]

The state lives in SQLite files under ``--db`` (reopened if they exist), so whoever started the
server can reopen them afterwards and grade exactly as in process. Each result also names, in its
``_meta``, the service tool the call reached, so a client can count service calls like the
in-process path does. ``McpTransport`` uses this entry point, with ``--parent-pid`` so that the
server ends when the harness does, however it ends; ``harness serve`` builds on it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, TextContent

from harness.lifeline import PARENT_PID_FLAG, die_with_parent
from harness.prompt import system_prompt
from mcp_services.kernel.episode import Episode
from mcp_services.serving.http import allowed_names
from mcp_services.serving.server import DEFAULT_HOST, DEFAULT_PORT, EpisodeServer, serve_http, serve_stdio
from mcp_services.serving.surface import MODES, Mode, ToolSurface
from mcp_services.tasks.episodes import episode_for
from mcp_services.tasks.spec import TaskFileError, TaskSpec, find_task, load_tasks

__all__ = ["META_SERVICE", "META_TOOL", "TaskEpisodeServer", "build_task_server", "main"]

META_SERVICE = "compoworld/service"
META_TOOL = "compoworld/tool"


class TaskEpisodeServer(EpisodeServer):
    """The episode server, plus which service tool each call reached (in ``_meta``)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        call = self.surface.call(name, arguments)
        meta = {META_SERVICE: call.service, META_TOOL: call.tool} if call.service else None
        return CallToolResult(
            content=[TextContent(type="text", text=call.result.to_json())],
            structured_content=call.result.envelope(),
            is_error=not call.result.success,
            _meta=meta,
        )


def build_task_server(task: TaskSpec, mode: Mode, db_dir: Path | None) -> tuple[TaskEpisodeServer, Episode]:
    """The server and the episode behind it (close the episode when the server is done)."""
    episode = episode_for(task, db_dir=db_dir)
    instructions = f"{system_prompt(task, mode)}\n\nThe request:\n{task.instruction}"
    server = TaskEpisodeServer(
        ToolSurface(episode, mode), name=f"compoworld-task-{task.id}", instructions=instructions
    )
    return server, episode


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness.task_server", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", required=True, type=Path, help="a tasks.jsonl file")
    parser.add_argument("--task", required=True, help="the task id (or a unique prefix)")
    parser.add_argument("--db", type=Path, default=None, help="folder for the state files (default: in memory)")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--mode", choices=MODES, default="direct")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(PARENT_PID_FLAG, type=int, default=None, help="exit when this process ends")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.parent_pid is not None:
        die_with_parent(args.parent_pid)
    try:
        if args.transport == "http":
            allowed_names(args.host)  # loopback only: it serves the harness on this machine
        task = find_task(load_tasks(args.tasks), args.task)
        server, episode = build_task_server(task, args.mode, args.db)
    except (TaskFileError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"task_server: error: {message}", file=sys.stderr)
        return 2
    try:
        if args.transport == "stdio":
            serve_stdio(server)
        else:
            serve_http(server, args.host, args.port)
    finally:
        episode.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
