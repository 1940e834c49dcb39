"""The ``harness`` subcommands for people and clusters: ``serve``, ``claude-config``, ``grade``,
``report``, and the ``--backend ray`` options of ``collect`` and ``eval``.

    harness serve         --tasks FILE --task ID [--transport stdio|http] [--mode direct|discover] [--db DIR]
                          [--host H [--allow-remote NAME]] [--port P] [--auth-token-env NAME | --no-auth] ...
    harness claude-config --tasks FILE --task ID [--db DIR] [--mode M] [--write [--config-file PATH]]
    harness grade         --tasks FILE --task ID --db DIR [--answer TEXT] [--json]
    harness report        RUN_DIR [RUN_DIR2] --out report.html [--max-trajectories N]
    harness collect|eval  ... --backend ray [--address auto|HOST:PORT|ray://HOST:PORT] [--ray-actors N]

Each parses its options into a config and calls one library function; ``harness.cli`` owns the
parser and turns errors into one line and an exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.errors import HarnessInputError
from mcp_services.serving.options import add_http_options

__all__ = ["BACKENDS", "add_backend_options", "make_backend", "register"]

BACKENDS = ("local", "ray")
_MODES = ("direct", "discover")  # as the tool surface names them (not imported: the CLI starts light)


def _task_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", type=Path, required=True, help="a tasks.jsonl file (e.g. a run's RUN/tasks.jsonl)")
    parser.add_argument("--task", required=True, help="the task id (or a unique prefix of it)")


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("backend")
    group.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local: asyncio in this process (default); ray: async actors on a Ray cluster",
    )
    group.add_argument(
        "--address",
        default=None,
        help="ray: auto (this machine's cluster), HOST:PORT or ray://HOST:PORT (default: a local instance)",
    )
    group.add_argument(
        "--ray-actors",
        type=int,
        default=None,
        help="ray: episode-hosting actors (default: one per cluster CPU); --concurrency is split among them",
    )


def make_backend(args: argparse.Namespace, config: Any) -> Any | None:
    """The backend ``args`` ask for (None: collect's own local backend) for a ``CollectConfig``."""
    if args.backend == "local":
        if args.address is not None or args.ray_actors is not None:
            raise HarnessInputError("--address and --ray-actors need --backend ray")
        return None
    if getattr(args, "workers", 1) > 1:
        raise HarnessInputError("--workers is for the local backend; with --backend ray, size it with --ray-actors")
    from harness.ray_backend import RayBackend, RayOptions

    options = RayOptions(address=args.address, actors=args.ray_actors)
    return RayBackend(
        config.agent, config.runner, concurrency=config.concurrency, transport=config.transport, options=options
    )


def _serve(args: argparse.Namespace) -> int:
    from harness.serve import ServeConfig, serve
    from mcp_services.serving.options import http_flags_given, http_serving

    try:
        http = http_serving(args) if args.transport == "http" else None
    except ValueError as exc:  # a bad host, token variable or limit
        raise HarnessInputError(str(exc)) from None
    if http is None and (given := http_flags_given(args)):
        raise HarnessInputError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for --transport http")
    config = ServeConfig(args.tasks, args.task, transport=args.transport, mode=args.mode, db_dir=args.db, http=http)
    return serve(config)


def _claude_config(args: argparse.Namespace) -> int:
    from harness.desktop import claude_config_path, claude_desktop_entry, merge_entry, server_name
    from harness.task_ref import load_task

    task = load_task(args.tasks, args.task)
    entry = claude_desktop_entry(args.tasks, task, mode=args.mode, db_dir=args.db)
    name = server_name(task)
    print(json.dumps({"mcpServers": {name: entry}}, indent=2))

    def arg(flag: str) -> str:
        return str(entry["args"][entry["args"].index(flag) + 1])

    if args.write:
        path = args.config_file or claude_config_path()
        merge_entry(path, name, entry)
        print(f"harness: wrote {name} into {path}; restart Claude Desktop to see it", file=sys.stderr)
    else:
        print(
            f"harness: add this to {args.config_file or claude_config_path()} (or rerun with --write)", file=sys.stderr
        )
    print(
        f"harness: grade the work with: harness grade --tasks {arg('--tasks')} --task {task.id} --db {arg('--db')}",
        file=sys.stderr,
    )
    return 0


def _grade(args: argparse.Namespace) -> int:
    from harness.db_grade import grade_db, grade_record, render_grade
    from harness.task_ref import load_task

    task = load_task(args.tasks, args.task)
    grade = grade_db(task, args.db, args.answer)
    print(grade_record(task, grade) if args.json else render_grade(task, grade, args.answer))
    return 0 if grade.passed else 1


def _report(args: argparse.Namespace) -> int:
    from harness.report import ReportConfig, build_report

    limit = {} if args.max_trajectories is None else {"max_trajectories": args.max_trajectories}
    result = build_report(ReportConfig(tuple(args.runs), args.out, **limit), lambda m: print(m, file=sys.stderr))
    counts = " and ".join(str(n) for n in result.n_trajectories)
    print(
        f"harness: report of {counts} trajectories ({result.n_in_viewer} rollouts in the viewer) in "
        f"{result.out} ({result.size_bytes / 1e6:.1f} MB)"
    )
    return 0


def register(commands: Any) -> None:
    """Add the subcommands to ``commands`` (the ``harness`` parser's subparsers)."""
    serve = commands.add_parser("serve", help="serve one task's episode as an MCP server (stdio or streamable HTTP)")
    _task_options(serve)
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default stdio")
    serve.add_argument("--mode", choices=_MODES, default="direct", help="tool mode (default direct)")
    serve.add_argument(
        "--db",
        type=Path,
        default=None,
        help="folder for the task's state files, kept across restarts (default: in memory)",
    )
    add_http_options(serve, prefix="http: ")
    serve.set_defaults(func=_serve)

    claude = commands.add_parser("claude-config", help="print (or --write) the Claude Desktop entry that serves a task")
    _task_options(claude)
    claude.add_argument("--mode", choices=_MODES, default="direct", help="tool mode (default direct)")
    claude.add_argument("--db", type=Path, default=None, help="state folder (default ~/.compoworld/episodes/TASK_ID)")
    claude.add_argument("--write", action="store_true", help="add the entry to Claude Desktop's config file")
    claude.add_argument(
        "--config-file",
        type=Path,
        default=None,
        help="the config file to write (default: Claude Desktop's, for this platform)",
    )
    claude.set_defaults(func=_claude_config)

    grade = commands.add_parser("grade", help="grade what was done in a served task (exit 0: passed, 1: not passed)")
    _task_options(grade)
    grade.add_argument("--db", type=Path, required=True, help="the folder given to `harness serve --db`")
    grade.add_argument("--answer", default=None, help="the final answer given, for tasks that ask a question")
    grade.add_argument("--json", action="store_true", help="print the grade as JSON")
    grade.set_defaults(func=_grade)

    report = commands.add_parser("report", help="one self-contained HTML report of one run, or two side by side")
    report.add_argument("runs", type=Path, nargs="+", metavar="RUN_DIR", help="one or two run folders")
    report.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    report.add_argument(
        "--max-trajectories",
        type=int,
        default=None,
        help="rollouts in the trajectory viewer, failures first (default 500)",
    )
    report.set_defaults(func=_report)
