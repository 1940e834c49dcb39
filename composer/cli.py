"""``composer generate | stats | verify | audit | archetypes | graph``: a thin command line over the composer library.

Bad input (unknown services, impossible constraints, a missing, empty or corrupt task file) prints
one ``composer: error: ...`` line and exits with status 2; nothing is half written. ``verify``
exits with 1 when some task fails verification.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from composer.errors import ComposerError
from mcp_services.command_line import Parser, command_parser, configure_logging, run_command

if TYPE_CHECKING:
    from composer.catalog import Catalog
    from mcp_services.tasks.spec import TaskSpec

PROG = "composer"


def _services(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise ComposerError("--services names no service; pass a comma-separated list such as crm,mailbox,helpdesk")
    return names


def _names(text: str | None, option: str) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise ComposerError(f"{option} names nothing; pass a comma-separated list")
    return names


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser(PROG, "Compose verified multi-service tasks from the service library.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    gen = sub.add_parser("generate", help="generate verified tasks into a JSON Lines file")
    gen.add_argument("--n", type=int, required=True, help="how many candidate tasks to generate")
    gen.add_argument("--seed", type=int, default=0, help="random seed (same arguments, same bytes)")
    gen.add_argument("--out", type=Path, default=Path("tasks.jsonl"), help="output file (default tasks.jsonl)")
    gen.add_argument("--services", help="comma-separated services to compose (default: the whole library)")
    gen.add_argument("--archetypes", help="comma-separated archetype ids to use (default: all; see `composer archetypes`)")
    gen.add_argument("--families", help="comma-separated families: support, sales, finance, operations, hr, marketing")
    gen.add_argument("--distractor-services", type=int, default=5, help="extra services mounted per task (default 5)")
    gen.add_argument("--worlds", type=int, default=None,
                     help="worlds to spread tasks over (default: 1 below 500 candidates, else one per 20)")
    gen.add_argument("--catalog", action="store_true",
                     help="mount the generated catalog's services beside the library (see `generator catalog`)")
    gen.add_argument("--paraphrase-model", help="litellm model that rewrites instructions (optional, needs the llm extra)")
    gen.add_argument("--quiet", action="store_true", help="no progress on stderr")

    stats = sub.add_parser("stats", help="statistics of a task file")
    stats.add_argument("tasks", type=Path)
    stats.add_argument("--json", action="store_true", help="print JSON")

    ver = sub.add_parser("verify", help="re-run the verification of every task in a file")
    ver.add_argument("tasks", type=Path)
    ver.add_argument("--exact", action="store_true", help="grade with Episode.diff() on episode_for(task) (slow)")
    ver.add_argument("--json", action="store_true", help="print a JSON report")
    ver.add_argument("--quiet", action="store_true", help="no progress on stderr")

    aud = sub.add_parser("audit", help="a task file as reviewers read it: scenario, trigger, references re-proved, flows, traps, rubric")
    aud.add_argument("tasks", type=Path)
    aud.add_argument("--id", help="only the task with this id (or id prefix)")
    aud.add_argument("--json", action="store_true", help="one JSON object per task")

    arch = sub.add_parser("archetypes", help="list the workflow archetypes and the services each needs")
    arch.add_argument("--json", action="store_true", help="print JSON")

    graph = sub.add_parser("graph", help="write the dependency graph (JSON, GraphML, pictures)")
    graph.add_argument("--out", type=Path, required=True, help="output directory")
    graph.add_argument("--services", help="comma-separated services (default: the whole library)")
    graph.add_argument("--no-picture", action="store_true", help="skip the PNG pictures")
    return parser


def cmd_generate(args: argparse.Namespace) -> int:
    from composer.generate import GenerateConfig, generate, progress_every
    from mcp_services.tasks.spec import write_tasks

    config = GenerateConfig(
        n=args.n,
        seed=args.seed,
        services=_services(args.services),
        archetypes=_names(args.archetypes, "--archetypes"),
        families=_names(args.families, "--families"),
        distractor_services=args.distractor_services,
        worlds=args.worlds,
        paraphrase_model=args.paraphrase_model,
        catalog=args.catalog,
    )
    if args.out.exists() and args.out.is_dir():
        raise ComposerError(f"--out {args.out} is a directory; name a file such as {args.out / 'tasks.jsonl'}")
    every = progress_every(config.n)
    started = time.perf_counter()

    def progress(done: int, total: int, kept: int) -> None:
        if not args.quiet and (done % every == 0 or done == total):
            rate = kept / max(1e-9, time.perf_counter() - started)
            _say(f"{done}/{total} candidates, {kept} kept ({rate:.1f} tasks/s)")

    tasks, report = generate(config, progress=progress)
    if not args.quiet and report.details:
        for detail, count in sorted(report.details.items(), key=lambda kv: -kv[1])[:8]:
            _say(f"  dropped {count} x {detail}")
    if not tasks:
        _say(f"no task passed verification ({report.summary()}); nothing written")
        return 1
    write_tasks(args.out, tasks)
    _say(f"{report.summary()}; wrote {args.out}")
    if config.services:
        unused = [name for name in config.services if not any(name in t.services for t in tasks)]
        if unused:
            _say(f"warning: {len(unused)} of the {len(config.services)} services named with --services fit no kept "
                 f"task: {', '.join(unused)} (see `composer archetypes` for what each workflow needs)")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from composer.stats import format_stats, named_shares, task_stats
    from mcp_services.tasks.spec import load_tasks

    from composer.phrases import phrase_figures

    tasks = load_tasks(args.tasks)
    catalog = _catalog_of(tasks)
    stats = task_stats(tasks, {service: [t.name for t in catalog.tools_of(service)] for service in catalog.services})
    stats["most_named"] = named_shares(tasks)
    stats["phrases"] = phrases = phrase_figures(t for s in catalog.services for t in catalog.tools_of(s))
    print(json.dumps(stats, indent=1, sort_keys=True) if args.json else format_stats(stats) + "\n" + (
        f"phrases                {phrases['tools_left_out']} of {phrases['phrased_tools']} phrased tools left out of "
        f"requests (no phrase reads whole), {phrases['phrases_repaired']} phrases repaired"))
    return 0


def _catalog_of(tasks: Sequence[object]) -> Catalog:
    """The library and any other service the tasks mount: what coverage and phrases are measured against."""
    from composer.catalog import load_catalog
    from mcp_services.registry import LIBRARY

    return load_catalog(sorted(set(LIBRARY) | {s for t in tasks for s in getattr(t, "services", [])}))


def cmd_verify(args: argparse.Namespace) -> int:
    from mcp_services.kernel.world import WorldShape

    from composer.runner import Runner, runner_for
    from composer.verify import verify_task, verify_task_exact
    from mcp_services.tasks.spec import load_tasks

    tasks = load_tasks(args.tasks)
    catalog = _catalog_for(tasks)
    runners: dict[tuple[int, WorldShape], Runner] = {}
    failures: dict[str, list[str]] = {}
    for n, task in enumerate(tasks, 1):
        if args.exact:
            problems = verify_task_exact(task)
        else:
            problems = verify_task(task, runner_for(runners, catalog, task))
        if problems:
            failures[task.id] = problems
        if not args.quiet and not args.json and (n % 25 == 0 or n == len(tasks)):
            _say(f"verified {n}/{len(tasks)}, {len(failures)} failing")
    if args.json:
        print(json.dumps({"tasks": len(tasks), "failed": len(failures), "failures": failures}, indent=1, sort_keys=True))
    else:
        for task_id, problems in failures.items():
            for problem in problems:
                print(f"{task_id}: {problem}")
        print(f"{len(tasks) - len(failures)} of {len(tasks)} tasks pass verification")
    return 1 if failures else 0


def _catalog_for(tasks: Sequence[TaskSpec]) -> Catalog:
    from composer.catalog import load_catalog
    from mcp_services.registry import LIBRARY

    names = sorted({s for t in tasks for s in t.mounted_services})
    return load_catalog([n for n in LIBRARY if n in names] + [n for n in names if n not in LIBRARY])


def cmd_audit(args: argparse.Namespace) -> int:
    from composer.audit import audit_json, audit_records, format_audit
    from mcp_services.tasks.spec import find_task, load_tasks

    tasks = load_tasks(args.tasks)
    if args.id:
        tasks = [find_task(tasks, args.id, str(args.tasks))]
    unresolved = 0
    for record in audit_records(tasks, _catalog_for(tasks)):
        unresolved += sum(not r["resolved"] for r in record["references"])
        print(audit_json(record) if args.json else format_audit(record) + "\n")
    if not args.json:
        print(f"{len(tasks)} task(s); {unresolved} referring expression(s) that do not pick out their own record")
    return 1 if unresolved else 0


def cmd_archetypes(args: argparse.Namespace) -> int:
    import composer.archetypes  # noqa: F401 - registers the library
    from composer.scenario import ARCHETYPES

    rows = [
        {"id": a.id, "family": a.family, "services": list(a.services), "title": a.title}
        for a in sorted(ARCHETYPES.values(), key=lambda a: (a.family, a.id))
    ]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        for row in rows:
            print(f"{row['family']:<11} {row['id']:<32} {', '.join(row['services']):<34} {row['title']}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from composer.catalog import load_catalog
    from composer.graph import build_graph, graph_summary, stage_graph, write_graph

    catalog = load_catalog(_services(args.services))
    started = time.perf_counter()
    graph = build_graph(catalog)
    seconds = time.perf_counter() - started
    if args.out.exists() and not args.out.is_dir():
        raise ComposerError(f"--out {args.out} is a file; name a directory")
    written = write_graph(graph, args.out, picture=not args.no_picture, stages=stage_graph(catalog))
    summary = graph_summary(graph)
    print(
        f"{summary['tools']} tools, {summary['edges']} edges ({summary['cross_service_edges']} across services), "
        f"{summary['anchor_tools']} anchor tools; built in {seconds:.2f}s"
    )
    for path in written:
        print(path)
    return 0


COMMANDS = {
    "generate": cmd_generate,
    "stats": cmd_stats,
    "verify": cmd_verify,
    "audit": cmd_audit,
    "archetypes": cmd_archetypes,
    "graph": cmd_graph,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    return run_command(PROG, lambda: COMMANDS[args.command](args), interrupted="interrupted; nothing was written")
