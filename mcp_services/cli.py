"""``mcp-services``: list the library, serve services over MCP, print a Claude Desktop entry."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_services.command_line import InputError, Parser, command_parser, configure_logging, run_command
from mcp_services.registry import all_services, get_services, provider_environment

DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")
PROG = "mcp-services"


class CliError(InputError):
    """A user error of this command: printed as one line, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(PROG, "CompoWorld's library of stateful MCP services.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    ls = sub.add_parser("list", help="list the services and their tools")
    ls.add_argument("--json", action="store_true", help="print a JSON array with each service's tools and schemas")

    serve = sub.add_parser("serve", help="serve one or more services as one MCP server")
    _add_episode_args(serve)
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    serve.add_argument(
        "--allow-remote",
        action="append",
        default=[],
        metavar="NAME",
        help="allow a non-loopback --host (e.g. 0.0.0.0); NAME is a host name or address clients use to reach "
        "this server (repeat, or separate with commas); requests naming other hosts are refused. No authentication",
    )

    config = sub.add_parser("claude-config", help="print the Claude Desktop mcpServers entry for these services")
    _add_episode_args(config)
    return parser


def _add_episode_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="service names (see `mcp-services list`)")
    parser.add_argument(
        "--db",
        type=Path,
        help="keep state on disk so it survives restarts: a .sqlite file for one service, or a folder "
        "(one <service>.sqlite each); default: in memory (or ~/.compoworld/... for claude-config)",
    )
    parser.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    parser.add_argument("--mode", choices=("direct", "discover"), default="direct", help="tool exposure mode")


def db_paths_for(names: Sequence[str], db: Path | None) -> dict[str, Path] | None:
    """Where each service keeps its state: one file for one service, else a folder of files."""
    if db is None:
        return None
    db = db.expanduser().resolve()
    if db.suffix in DB_SUFFIXES:
        if len(names) > 1:
            raise CliError(f"--db {db} is one file but {len(names)} services were named; pass a folder instead")
        if db.is_dir():
            raise CliError(f"--db {db} is a folder; pass a file path or a folder without a {db.suffix} suffix")
        return {names[0]: db}
    if db.exists() and not db.is_dir():
        raise CliError(f"--db {db} exists and is not a folder; pass a .sqlite file name or a folder")
    return {name: db / f"{name}.sqlite" for name in names}


def list_payload() -> list[dict[str, Any]]:
    return [
        {
            "name": service.name,
            "title": service.title,
            "description": service.description,
            "tools": [
                {
                    "name": tool.name,
                    "effect": tool.effect,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                    "output_schema": tool.output_schema,
                }
                for tool in service.tools.values()
            ],
        }
        for service in all_services()
    ]


def _print_table(payload: list[dict[str, Any]]) -> None:
    width = max(len(s["name"]) for s in payload)
    total = 0
    for service in payload:
        writes = sum(t["effect"] == "write" for t in service["tools"])
        total += len(service["tools"])
        print(f"{service['name']:<{width}}  {len(service['tools']):>3} tools ({writes:>2} write)  {service['description']}")
    print(f"{len(payload)} services, {total} tools")


def claude_config(names: Sequence[str], db: Path | None, seed: int, mode: str) -> dict[str, Any]:
    """The ``mcpServers`` entry that starts these services over stdio, with absolute paths."""
    if db is None:
        db = Path.home() / ".compoworld" / "-".join(names)
    db_paths_for(names, db)  # validates the path before anything is printed
    db_arg = str(db.expanduser().resolve())
    args = ["-m", "mcp_services", "serve", *names, "--db", db_arg, "--seed", str(seed), "--mode", mode]
    return {
        "mcpServers": {
            f"compoworld-{'-'.join(names)}"[:64]: {
                "command": str(Path(sys.executable).absolute()),
                "args": args,
                # The provider variables let it find generated and imported services as this process did.
                "env": {"PYTHONUNBUFFERED": "1", **provider_environment()},
            }
        }
    }


def _serve(args: argparse.Namespace) -> None:
    from mcp_services.kernel.episode import Episode
    from mcp_services.serving.http import allowed_names, is_loopback, remote_warning
    from mcp_services.serving.server import build_server, serve_http, serve_stdio

    remote: tuple[str, ...] = ()
    if args.transport == "http":
        remote = allowed_names(args.host, args.allow_remote)  # refuse before anything is opened
    services = get_services(args.names)
    paths = db_paths_for(args.names, args.db)
    try:
        episode = Episode(services, args.seed, db_paths=paths)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    server = build_server(episode, args.mode)
    where = "in memory" if paths is None else ", ".join(str(p) for p in paths.values())
    logging.getLogger("mcp_services").info("serving %s (%s mode, state %s)", ", ".join(args.names), args.mode, where)
    try:
        if args.transport == "stdio":
            serve_stdio(server)
        else:
            if not is_loopback(args.host):
                print(remote_warning(args.host, args.port, remote), file=sys.stderr, flush=True)
            print(f"serving on http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
            serve_http(server, args.host, args.port, args.allow_remote)
    finally:
        episode.close()


def _run(args: argparse.Namespace) -> int:
    if args.command == "list":
        payload = list_payload()
        if args.json:
            json.dump(payload, sys.stdout, indent=2, sort_keys=True)
            sys.stdout.write("\n")
        else:
            _print_table(payload)
    elif args.command == "serve":
        _serve(args)
    elif args.command == "claude-config":
        get_services(args.names)
        print(json.dumps(claude_config(args.names, args.db, args.seed, args.mode), indent=2))
    return 0


def _checked(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except ValueError as exc:  # what the serving layer refuses (a host, a port, a store) is the user's input
        if isinstance(exc, InputError):
            raise
        raise CliError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(args.verbose)
    return run_command(PROG, lambda: _checked(args))


if __name__ == "__main__":
    raise SystemExit(main())
