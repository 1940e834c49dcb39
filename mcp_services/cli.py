"""``mcp-services``: list the library, serve services over MCP, print a Claude Desktop entry, check the world."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_services.registry import UnknownServiceError, all_services, get_services

DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")


class CliError(Exception):
    """A user error: printed as one line, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-services", description="CompoWorld's library of stateful MCP services.")
    sub = parser.add_subparsers(dest="command", required=True)

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

    world = sub.add_parser("world", help="the seeded world every service shares")
    world_sub = world.add_subparsers(dest="world_command", required=True)
    check = world_sub.add_parser(
        "check", help="seed every library service on one world and check its invariants; exit 1 when any breaks"
    )
    check.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    check.add_argument("--size", default="default", help="the world's size: small, default or large (500 organisations)")
    check.add_argument("--organisations", type=int, help="override the size's number of organisations (the home one included)")
    check.add_argument("--people", type=int, help="override the size's number of people (the team included)")
    check.add_argument("--months", type=int, help="override the size's months of history")
    check.add_argument("--industry", help="the home company's industry (default: drawn from the seed)")
    check.add_argument("--limit", type=int, default=20, help="violations shown per invariant (default 20)")
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
                "env": {"PYTHONUNBUFFERED": "1"},
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


def _world_check(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from mcp_services.kernel.world import TEAM_ROLES, WorldShape, WorldShapeError
    from mcp_services.worldcheck.report import world_report

    try:
        shape = WorldShape.sized(args.size)
        knobs = {k: getattr(args, k) for k in ("organisations", "people", "months", "industry") if getattr(args, k) is not None}
        if knobs:
            people = knobs.get("people")
            if people is None and "organisations" in knobs:  # keep the size's people per organisation
                per = (shape.people - len(TEAM_ROLES)) / max(1, shape.organisations - 1)
                knobs["people"] = len(TEAM_ROLES) + round(per * (knobs["organisations"] - 1))
            shape = replace(shape, **knobs)
    except WorldShapeError as exc:
        raise CliError(str(exc).replace("world shape: ", "--").replace("world size", "--size")) from exc
    if args.limit < 0:
        raise CliError(f"--limit must be 0 or more, not {args.limit}")
    report = world_report(args.seed, shape)
    for line in report.lines(args.limit):
        print(line)
    return 0 if report.holds else 1


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    try:
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
        elif args.command == "world":
            return _world_check(args)
    except (CliError, UnknownServiceError) as exc:
        print(f"mcp-services: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"mcp-services: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
