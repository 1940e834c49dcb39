"""``mcp-services``: list the library, serve services over MCP, print a Claude Desktop entry, check the world."""

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
from mcp_services.serving.options import add_http_options, http_flags_given, http_serving

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
    add_http_options(serve)

    config = sub.add_parser("claude-config", help="print the Claude Desktop mcpServers entry for these services")
    _add_episode_args(config)
    remote = config.add_argument_group("a server already serving over HTTP (an entry for Claude Code)")
    remote.add_argument("--url", default=None, help="its URL, e.g. https://box.lan/mcp (no token in it)")
    remote.add_argument("--auth-token-env", metavar="NAME", default=None,
                        help="the environment variable that holds its token, on the machine that runs the client")

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
                # The provider variables let it find generated and imported services as this process did.
                "env": {"PYTHONUNBUFFERED": "1", **provider_environment()},
            }
        }
    }


def claude_code_entry(names: Sequence[str], url: str, token_env: str | None) -> dict[str, Any]:
    """The ``mcpServers`` entry of Claude Code (``.mcp.json``) for a server that serves over HTTP:
    the token is not written, Claude Code reads it from ``token_env`` (``${NAME}``) when it starts."""
    from mcp_services.serving.auth import AuthConfigError, refuse_url_credentials

    try:
        refuse_url_credentials(url, "--url")
    except AuthConfigError as exc:
        raise CliError(str(exc)) from None
    if not url.startswith(("http://", "https://")):
        raise CliError(f"--url must be an http(s) URL such as https://box.lan/mcp, not {url!r}")
    entry: dict[str, Any] = {"type": "http", "url": url}
    if token_env is not None:
        if not token_env.isidentifier():
            raise CliError("--auth-token-env takes the NAME of an environment variable, not the token itself")
        entry["headers"] = {"Authorization": f"Bearer ${{{token_env}}}"}
    return {"mcpServers": {f"compoworld-{'-'.join(names)}"[:64]: entry}}


def claude_desktop_note(url: str, token_env: str | None) -> str:
    """Where Claude Desktop cannot use the entry, and the stdio bridge (mcp-remote) it can use instead."""
    from urllib.parse import urlsplit

    from mcp_services.serving.http import is_loopback

    args = ["mcp-remote", url, "--header", "Authorization:${AUTH_HEADER}"]
    if urlsplit(url).scheme == "http" and not is_loopback(urlsplit(url).hostname or ""):
        args.append("--allow-http")  # mcp-remote refuses plain HTTP beyond loopback without it
    bridge = {"command": "npx", "args": args, "env": {"AUTH_HEADER": "Bearer <the token>"}}
    return (
        f"mcp-services: this entry is for Claude Code (.mcp.json, or `claude mcp add-json NAME '<the entry>'`), which "
        f"reads ${{{token_env or 'TOKEN'}}} from its environment. Claude Desktop's config file starts only local "
        "(stdio) servers and cannot send a header: run claude-config without --url on the machine that has the "
        f"services, or bridge with mcp-remote (npm): {json.dumps(bridge)}"
    )


def _serve(args: argparse.Namespace) -> None:
    from mcp_services.kernel.episode import Episode
    from mcp_services.serving.server import build_server, serve_stdio

    http = http_serving(args) if args.transport == "http" else None  # refuse bad options before opening anything
    if http is None and (given := http_flags_given(args)):
        raise CliError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for --transport http")
    services = get_services(args.names)
    paths = db_paths_for(args.names, args.db)
    try:
        episode = Episode(services, args.seed, db_paths=paths)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    try:
        server = build_server(episode, args.mode)
        where = "in memory" if paths is None else ", ".join(str(p) for p in paths.values())
        logging.getLogger("mcp_services").info("serving %s (%s mode, state %s)", ", ".join(args.names), args.mode,
                                               where)
        if http is None:
            serve_stdio(server)
        else:
            n_tools = sum(len(service.tools) for service in services)
            _serve_http(server, http, f"all {n_tools} tools of {', '.join(args.names)}")
    finally:
        episode.close()


def _serve_http(server: Any, http: Any, exposed: str) -> None:
    """Bind, then say where (and what an unauthenticated remote server exposes), then serve."""
    from mcp_services.serving.http import ListenError, bound_url, listen, remote_warning
    from mcp_services.serving.server import serve_http

    try:
        sock = listen(http.host, http.port)
    except ListenError as exc:
        raise CliError(exc.strerror) from None
    with sock:
        if http.exposed:
            print(remote_warning(http.host, sock.getsockname()[1], http.names(), exposed), file=sys.stderr, flush=True)
        guard = "; requires a bearer token" if http.auth is not None else ""
        print(f"serving on {bound_url(sock)}{guard}", file=sys.stderr, flush=True)
        serve_http(server, sock, http)


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
        if args.url is not None:
            print(json.dumps(claude_code_entry(args.names, args.url, args.auth_token_env), indent=2))
            print(claude_desktop_note(args.url, args.auth_token_env), file=sys.stderr)
        elif args.auth_token_env is not None:
            raise CliError("--auth-token-env is for --url (a stdio entry needs no token: the client starts "
                           "the server itself)")
        else:
            print(json.dumps(claude_config(args.names, args.db, args.seed, args.mode), indent=2))
    elif args.command == "world":
        return _world_check(args)
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
