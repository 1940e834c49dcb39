"""``generator``: import tool specifications into verified services, re-run the gate, show the catalog.

    generator import FILE [--format auto|mcp|openapi|specs-jsonl|spec] [--only NAME,...] --out DIR
    generator verify [NAME ... | --all] [--catalog DIR]
    generator catalog [--list | --reasons [NAME ...]] [--json] [--catalog DIR]
    generator show NAME [--catalog DIR]

User errors are one line on stderr with exit status 2; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator.importers import FORMATS, SourceError
from mcp_services.command_line import InputError, Parser, command_parser, configure_logging, run_command

PROG = "generator"


class CliError(InputError):
    """A user error: printed as one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(PROG, "Tool specifications -> verified CompoWorld services.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    imp = sub.add_parser("import", help="import a spec file, gate every tool, write services and gate_report.json")
    imp.add_argument("file", type=Path, metavar="FILE")
    imp.add_argument("--format", choices=FORMATS, default="auto", help="source format (default: guess)")
    imp.add_argument("--only", default="", metavar="NAME,...",
                     help="only these services (source names like slack.com, or service names); @FILE reads names from a file")
    imp.add_argument("--out", type=Path, required=True, metavar="DIR", help="catalog folder to write (merged if it exists)")
    imp.add_argument("--workers", type=int, default=2, help="gate subprocesses at a time (default 2)")
    imp.add_argument("--time-limit", type=float, default=30.0, metavar="S",
                     help="gate CPU seconds per service, plus 0.5 s per tool (default 30)")
    imp.add_argument("--code-model", default=None, metavar="MODEL",
                     help="litellm model for the coding loop on tools the compiler cannot express (default: off)")
    imp.add_argument("--code-api-base", default=None, metavar="URL", help="OpenAI-compatible server for --code-model")
    imp.add_argument("--code-rounds", type=int, default=3, help="coding-loop rounds per tool (default 3)")
    imp.add_argument("--quiet", action="store_true", help="no progress on stderr")

    ver = sub.add_parser("verify", help="re-run the gate on catalog services")
    ver.add_argument("names", nargs="*", metavar="NAME")
    ver.add_argument("--all", action="store_true", help="every service of the catalog")
    ver.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalog folder (default: the package's)")
    ver.add_argument("--workers", type=int, default=2)
    ver.add_argument("--json", action="store_true", help="print the gate report as JSON")

    cat = sub.add_parser("catalog", help="counts of services and tools by status and by source; --list: every service")
    cat.add_argument("--list", action="store_true", help="one line per generated service: name, title, tool counts")
    cat.add_argument("--reasons", nargs="*", metavar="NAME", default=None,
                     help="every tool not implemented, and why (the gate's report), of every service or of these")
    cat.add_argument("--json", action="store_true")
    cat.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="one catalog folder (default: all configured)")

    show = sub.add_parser("show", help="print one generated service's spec (JSON)")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--catalog", type=Path, default=None, metavar="DIR")
    return parser


def _run(args: argparse.Namespace) -> int:
    commands = {"import": cmd_import, "verify": cmd_verify, "catalog": cmd_catalog, "show": cmd_show}
    try:
        return commands[args.command](args)
    except SourceError as exc:
        raise CliError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    configure_logging(args.verbose)
    raise SystemExit(run_command(PROG, lambda: _run(args)))


# -- commands ------------------------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    from generator.gate import TimeLimit
    from generator.pipeline import ImportConfig, import_file

    if not args.file.exists():
        raise CliError(f"no such file: {args.file}")
    _check_json(args.file)
    if args.workers < 1:
        raise CliError("--workers must be at least 1")
    if args.out.exists() and not args.out.is_dir():
        raise CliError(f"--out {args.out} exists and is not a folder")
    coder = None
    if args.code_model:
        from generator.codeloop import CodingLoop

        coder = CodingLoop(args.code_model, api_base=args.code_api_base, rounds=args.code_rounds)
    config = ImportConfig(
        out=args.out,
        fmt=args.format,
        only=frozenset(_names(args.only)),
        workers=args.workers,
        limit=TimeLimit(base=args.time_limit),
        coder=coder,
    )
    progress = None if args.quiet else (lambda message: print(message, file=sys.stderr, flush=True))
    result = import_file(args.file, config, progress)
    counts = result.report.counts()
    if not result.report.services:
        raise CliError(f"no services imported from {args.file}" + (f" matching --only {args.only}" if args.only else ""))
    print(
        f"{len(result.written)} services written to {args.out}: {counts.get('implemented', 0)} tools implemented, "
        f"{counts.get('simulated', 0)} simulated, {counts.get('rejected', 0)} rejected "
        f"(report: {result.report_path or args.out / 'gate_report.json'})"
    )
    if result.written:
        # Where the servers look: without the variable, only the package's own catalog is found.
        print(f"serve one with: COMPOWORLD_CATALOG={args.out.resolve()} mcp-services serve {result.written[0]}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from generator.catalog import PACKAGE_CATALOG, Catalog
    from generator.pipeline import verify

    catalog = Catalog(args.catalog or PACKAGE_CATALOG)
    if not catalog.names():
        raise CliError(f"the catalog at {catalog.root} is empty")
    if args.all == bool(args.names):
        raise CliError("name services to verify, or pass --all")
    names = catalog.names() if args.all else args.names
    unknown = [n for n in names if n not in catalog]
    if unknown:
        raise CliError(f"not in the catalog: {', '.join(unknown)} (see `generator catalog`)")
    report, changed = verify(catalog, names, workers=args.workers,
                             progress=lambda message: print(message, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    counts = report.counts()
    print(f"{len(names)} services re-gated: {counts.get('implemented', 0)} implemented, "
          f"{counts.get('simulated', 0)} simulated, {counts.get('rejected', 0)} rejected; "
          f"{len(changed)} tools changed status")
    for line in changed[:50]:
        print(f"  {line}")
    return 1 if changed else 0


def cmd_catalog(args: argparse.Namespace) -> int:
    if args.reasons is not None:
        reasons = catalog_reasons(args.catalog, args.reasons)
        if args.json:
            print(json.dumps(reasons, indent=1))
            return 0
        for row in reasons:
            print(f"{row['service']}.{row['tool']}  {row['status']}: {row['reason']}")
        print(f"{len(reasons)} tools not implemented, in {len({row['service'] for row in reasons})} services")
        return 0
    if args.list:
        rows = catalog_rows(args.catalog)
        if args.json:
            print(json.dumps(rows, indent=1))
        else:
            width = max((len(row["name"]) for row in rows), default=4)
            for row in rows:
                print(f"{row['name']:<{width}}  {row['tools']:>4} tools ({row['implemented']} implemented, "
                      f"{row['simulated']} simulated)  {row['title']}")
            print(f"{len(rows)} generated services")
        return 0
    payload = catalog_counts(args.catalog)
    if args.json:
        print(json.dumps(payload, indent=1))
        return 0
    generated = payload["generated"]
    print(f"generated: {generated['services']} services, {generated['tools']} tools "
          f"({_status_line(generated['by_status'])})")
    because = generated.get("simulated_because", {})
    if because:
        print("  simulated: " + ", ".join(f"{because[k]} {label}" for k, label in (
            ("planner", "as planned (no behaviour the planner can express)"),
            ("outside core", "outside a large API's core resources"),
            ("consistency gate", "failed the consistency gate"), ("behavioural gate", "failed the behavioural gate"),
            ("product invariants", "failed a product invariant")) if because.get(k)))
    checks = generated.get("failed_checks", {})
    if checks:  # which check, so that a reason is never hidden in the report alone
        print("  failed checks: " + ", ".join(f"{check} {n}" for check, n in sorted(checks.items(), key=lambda x: -x[1])))
    kinds = generated.get("kinds", {})
    if kinds:
        total = max(1, sum(kinds.values()))
        print("  " + ", ".join(f"{n} {kind} ({n / total:.0%})" for kind, n in sorted(kinds.items(), key=lambda x: -x[1])))
    for source, counts in generated["by_source"].items():
        print(f"  {source:12} {counts['services']:5} services {counts['tools']:6} tools ({_status_line(counts)})")
    hand = payload["hand_written"]
    print(f"hand-written: {hand['services']} services, {hand['tools']} tools (implemented)")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from generator.catalog import PACKAGE_CATALOG, Catalog, catalogs

    pool = [Catalog(args.catalog)] if args.catalog else list(reversed(catalogs())) or [Catalog(PACKAGE_CATALOG)]
    for catalog in pool:
        if args.name in catalog:
            print(catalog.spec(args.name).model_dump_json(indent=1, exclude_none=True, exclude_defaults=True))
            return 0
    raise CliError(*_not_generated(args.name, [name for catalog in pool for name in catalog.names()]))


# -- helpers -------------------------------------------------------------------------------------------


def _not_generated(name: str, generated: list[str]) -> tuple[str, str]:
    """What ``generator show NAME`` says when no catalog holds NAME: the closest names of every provider."""
    from mcp_services.registry import LIBRARY, closest_names

    if name in LIBRARY:
        return (f"{name!r} is a hand-written service, not a generated one",
                f"`mcp-services list --json` shows its tools; its code is mcp_services/library/{name}.py")
    close = closest_names(name, [*generated, *LIBRARY])
    guess = f"; did you mean {' or '.join(close)}?" if close else ""
    return (f"no generated service {name!r}{guess}",
            "`generator catalog --list` lists them; a catalog of `generator import --out DIR` is searched when "
            "COMPOWORLD_CATALOG names DIR")


def _check_json(path: Path) -> None:
    """A ``.json`` file must be JSON: say where it breaks before anything is gated or written."""
    if path.suffix.lower() != ".json":
        return
    from generator.importers.text import read_text

    try:
        json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise CliError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); nothing "
                       "was written", "fix the file, or export the tool list again") from None


def catalog_rows(root: Path | None) -> list[dict[str, Any]]:
    """Every generated service of the catalogs (``root``, or all configured): name, title, tool counts, folder."""
    from generator.catalog import Catalog, catalogs

    if root is not None and not (root / "index.json").exists():
        raise CliError(f"{root} is not a catalog folder (no index.json)", "give a folder written by `generator import`")
    rows: dict[str, dict[str, Any]] = {}
    for catalog in [Catalog(root)] if root is not None else list(catalogs()):
        for name, entry in catalog.index.items():  # a later catalog wins on a name, as when serving
            statuses = [tool.status for tool in entry.tools]
            rows[name] = {"name": name, "title": entry.title, "tools": len(statuses),
                          "implemented": statuses.count("implemented"), "simulated": statuses.count("simulated"),
                          "catalog": str(catalog.root)}
    return [rows[name] for name in sorted(rows)]


def catalog_reasons(root: Path | None, names: list[str]) -> list[dict[str, str]]:
    """Every tool of the catalogs (``root``, or all configured) that is not implemented, with the gate's reason,
    from each catalog's gate report; only the services ``names`` when given."""
    from generator.catalog import REPORT, Catalog, catalogs
    from generator.pipeline import read_report

    if root is not None and not (root / "index.json").exists():
        raise CliError(f"{root} is not a catalog folder (no index.json)", "give a folder written by `generator import`")
    services: dict[str, dict[str, Any]] = {}
    for catalog in [Catalog(root)] if root is not None else list(catalogs()):
        services.update(read_report(catalog.root / REPORT))  # a later catalog wins on a name, as when serving
    unknown = [name for name in names if name not in services]
    if unknown:
        raise CliError(f"not in the catalog: {', '.join(unknown)}", "see `generator catalog --list`")
    return [
        {"service": name, "tool": tool["name"], "status": tool["status"], "reason": tool["reason"]}
        for name in sorted(names or services)
        for tool in services[name].get("tools", [])
        if tool["status"] != "implemented"
    ]


def catalog_counts(root: Path | None) -> dict[str, Any]:
    from collections import Counter

    from generator.catalog import Catalog, catalogs
    from mcp_services.registry import LIBRARY, get_service

    pool = [Catalog(root)] if root is not None else list(catalogs())
    if root is not None and not (root / "index.json").exists():
        raise CliError(f"{root} is not a catalog folder (no index.json)")
    from generator.audit import service_kind

    merged: dict[str, Any] = {"services": 0, "tools": 0, "by_status": Counter(), "by_source": {},
                              "simulated_because": Counter(), "failed_checks": Counter(), "kinds": Counter()}
    for catalog in pool:
        counts = catalog.counts()
        merged["services"] += counts["services"]
        merged["tools"] += counts["tools"]
        merged["by_status"].update(counts["by_status"])
        merged["simulated_because"].update(counts["simulated_because"])
        merged["failed_checks"].update(counts["failed_checks"])
        for entry in catalog.index.values():
            kind = service_kind(entry.source_name, len(entry.tools), entry.categories)
            merged["kinds"][_KIND_LABELS[kind]] += 1
        for source, c in counts["by_source"].items():
            slot = merged["by_source"].setdefault(source, Counter())
            slot.update(c)
    merged["by_status"] = dict(merged["by_status"])
    merged["simulated_because"] = dict(merged["simulated_because"])
    merged["failed_checks"] = dict(merged["failed_checks"])
    merged["kinds"] = dict(merged["kinds"])
    merged["by_source"] = {k: dict(v) for k, v in sorted(merged["by_source"].items())}
    tools = 0
    for name in LIBRARY:
        try:
            tools += len(get_service(name).tools)
        except Exception:  # noqa: BLE001 - a hand-written service still being written is not counted
            continue
    return {"generated": merged, "hand_written": {"services": len(LIBRARY), "tools": tools}}


_KIND_LABELS = {"business": "business or consumer products", "reference": "reference data",
                "infrastructure": "cloud infrastructure", "other": "other APIs"}


def _status_line(counts: dict[str, Any]) -> str:
    line = ", ".join(f"{counts.get(s, 0)} {s}" for s in ("implemented", "simulated") if s in counts or s == "implemented")
    return f"{line}; {counts['rejected']} more rejected by the gate" if counts.get("rejected") else line


def _names(option: str) -> list[str]:
    if option.startswith("@"):
        path = Path(option[1:])
        if not path.exists():
            raise CliError(f"--only {option}: no such file")
        return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return [name.strip() for name in option.split(",") if name.strip()]
