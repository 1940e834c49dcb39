"""Import: source file -> planned specs -> the gate (in subprocesses) -> a catalog folder and its report.

This is the library function behind ``generator import``; ``generator verify`` re-gates a catalog.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from generator.catalog import REPORT, Catalog, ServiceEntry, ToolEntry
from generator.gate import GateJob, GateOutcome, GateReport, ServiceVerdict, TimeLimit, ToolVerdict, run_gate
from generator.importers import Format, SourceError, read_source
from generator.naming import service_name
from generator.planner import plan_service
from generator.spec import ServiceSpec

if TYPE_CHECKING:
    from generator.codeloop import CodingLoop

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ImportConfig:
    """How to import a file: its format, which of its services, where to write, how to gate."""

    out: Path
    fmt: Format = "auto"
    only: frozenset[str] = frozenset()  # source or service names; empty: all
    workers: int = 2
    limit: TimeLimit = TimeLimit()
    world_seed: int = 0
    coder: CodingLoop | None = None  # the LLM coding loop for tools the compiler cannot express


@dataclass
class ImportResult:
    report: GateReport
    written: list[str] = field(default_factory=list)
    report_path: Path | None = None  # where the merged report was written


def reserved_names() -> set[str]:
    """Names generated services may not take: the hand-written library's."""
    from mcp_services.registry import LIBRARY

    return set(LIBRARY)


def import_file(path: Path, config: ImportConfig, progress: Progress | None = None) -> ImportResult:
    say = progress or (lambda message: None)
    wanted = {name.strip() for name in config.only if name.strip()}
    taken = reserved_names()
    keep = _matcher(wanted, taken, Catalog(config.out)) if wanted else None
    read_report(config.out / REPORT)  # a report that cannot be merged into stops the import before the gate
    report = GateReport()
    jobs: list[GateJob] = []
    planner_rejections: dict[str, dict[str, str]] = {}
    sources: dict[str, str] = {}
    for item in read_source(path, config.fmt, keep):
        if isinstance(item, ServiceSpec):
            spec = item
            if spec.name in taken:
                report.services.append(ServiceVerdict(spec.name, reason=f"the name {spec.name!r} is taken"))
                continue
            taken.add(spec.name)
            jobs.append(GateJob(spec))
            sources[spec.name] = spec.name
            continue
        name = _free_name(service_name(item.name), taken)
        plan = plan_service(item, name)
        if plan.spec is None:
            reason = plan.problem or "the service could not be planned"
            report.services.append(ServiceVerdict(
                name, reason=reason, source=item.source or item.name,
                tools=[ToolVerdict(t.name, "rejected", reason) for t in item.tools[:2000]],
            ))
            say(f"{item.name}: rejected ({reason})")
            continue
        taken.add(name)
        jobs.append(GateJob(plan.spec))
        planner_rejections[name] = plan.rejected
        sources[name] = item.name
    if not jobs and not report.services:
        matching = f" matching --only {','.join(sorted(wanted))}" if wanted else ""
        raise SourceError(f"no services imported from {path}{matching}")
    say(f"gating {len(jobs)} services ({sum(len(j.spec.tools) for j in jobs)} tools)")
    done = [0]

    def gated(outcome: GateOutcome) -> None:
        done[0] += 1
        counts = outcome.verdict.counts()
        say(f"[{done[0]}/{len(jobs)}] {outcome.verdict.name}: {counts.get('implemented', 0)} implemented, "
            f"{counts.get('simulated', 0)} simulated, {counts.get('rejected', 0)} rejected ({outcome.verdict.seconds:.1f} s)")

    outcomes = run_gate(jobs, workers=config.workers, world_seed=config.world_seed, limit=config.limit, progress=gated)
    del jobs  # the planned specs live on in the outcomes; free the rest before writing
    custom: dict[str, str] = {}
    if config.coder is not None:
        outcomes, custom = _code_missing(outcomes, config, say)
    specs: dict[str, ServiceSpec] = {}
    entries: dict[str, ServiceEntry] = {}
    for outcome in outcomes:
        verdict = outcome.verdict
        for source_name, reason in planner_rejections.get(verdict.name, {}).items():
            verdict.tools.append(ToolVerdict(source_name, "rejected", reason))
        report.services.append(verdict)
        if outcome.spec is not None:
            specs[verdict.name] = outcome.spec
            entries[verdict.name] = entry_for(outcome.spec, verdict, sources.get(verdict.name, verdict.name))
    catalog = Catalog(config.out)
    catalog.write(specs, entries, {k: v for k, v in custom.items() if k in specs}, remove={s.name for s in report.services if s.name not in specs})
    written_report = write_report(config.out / REPORT, report)
    return ImportResult(report, sorted(specs), written_report)


def _matcher(wanted: set[str], reserved: set[str], existing: Catalog) -> Callable[[str], bool]:
    """Whether a source is wanted: by its source name (``files.com``) or by the service name it gets
    (``files_api``, as ``files`` is the library's), also as the folder being imported into names it."""
    sources = set(wanted) | {entry.source_name for name, entry in existing.index.items() if name in wanted}

    def keep(source: str) -> bool:
        name = service_name(source)
        return source in sources or name in wanted or _free_name(name, reserved) in wanted

    return keep


def _free_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    base = f"{name}_api" if not name.endswith("_api") else name
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}_{n}"
        n += 1
    return candidate


def entry_for(spec: ServiceSpec, verdict: ServiceVerdict, source_name: str) -> ServiceEntry:
    statuses = {t.name: t for t in verdict.tools}
    tools = []
    for tool in spec.tools:
        found = statuses.get(tool.name)
        status = found.status if found else ("simulated" if tool.behaviour.kind == "simulated" else "implemented")
        tools.append(ToolEntry(tool.name, status, (found.reason if found else "") if status == "simulated" else ""))
    return ServiceEntry(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        source=spec.source,
        source_name=source_name,
        format=spec.format,
        license=spec.license,
        upstream_license=spec.upstream_license,
        categories=tuple(spec.categories),
        tools=tuple(tools),
    )


def read_report(path: Path) -> dict[str, dict[str, object]]:
    """The services of a folder's report by name: ``gate_report.json`` and the compressed
    ``gate_report.json.gz`` (the package catalog's form) both, the plain one's entries winning where both
    exist. A report that cannot be read is a ``SourceError``, never an empty report to overwrite it with."""
    merged: dict[str, dict[str, object]] = {}
    for existing, opener in ((_compressed(path), gzip.open), (path, open)):
        if not existing.exists():
            continue
        try:
            with opener(existing, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
                services = json.load(handle).get("services", [])
            merged.update({service["name"]: service for service in services})
        except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as error:
            raise SourceError(f"cannot merge into {existing}: {error}") from error
    return merged


def write_report(path: Path, report: GateReport) -> Path:
    """Write ``report``, merging into the folder's report (services of the same name are replaced), in the
    form the folder keeps: compressed when it has ``gate_report.json.gz`` (then the plain one, merged into
    it, goes). Returns the path written."""
    merged = read_report(path)
    for service in report.services:
        merged[service.name] = service.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(json.dumps(merged[n], ensure_ascii=False) for n in sorted(merged))
    text = f'{{"services": [\n{lines}\n]}}\n'  # one service per line: compact and diffable
    compressed = _compressed(path)
    if compressed.exists():
        # as ``gzip -n`` writes it: no name, no timestamp, so the same report gives the same bytes
        compressed.write_bytes(gzip.compress(text.encode(), mtime=0))
        path.unlink(missing_ok=True)
        return compressed
    path.write_text(text)
    return path


def _compressed(path: Path) -> Path:
    return path.with_name(path.name + ".gz")


def verify(catalog: Catalog, names: list[str], *, workers: int = 2, limit: TimeLimit = TimeLimit(),
           progress: Progress | None = None) -> tuple[GateReport, list[str]]:
    """Re-gate catalog services as stored (no demotion); returns the report and the tools whose status changed."""
    say = progress or (lambda message: None)
    jobs = [GateJob(catalog.spec(n), catalog.custom_code(n)) for n in names]
    outcomes = run_gate(jobs, workers=workers, limit=limit, demote=False,
                        progress=lambda o: say(f"{o.verdict.name}: {dict(o.verdict.counts())}"))
    report = GateReport([o.verdict for o in outcomes])
    changed: list[str] = []
    for outcome in outcomes:
        before = {t.name: t.status for t in catalog.index[outcome.verdict.name].tools}
        for tool in outcome.verdict.tools:
            if before.get(tool.name) != tool.status:
                changed.append(f"{outcome.verdict.name}.{tool.name}: {before.get(tool.name)} -> {tool.status} ({tool.reason})")
    return report, changed


def _code_missing(
    outcomes: list[GateOutcome], config: ImportConfig, say: Progress
) -> tuple[list[GateOutcome], dict[str, str]]:
    """Ask the coding loop for the tools that ended simulated; keep what the gate then passes."""
    assert config.coder is not None
    improved: list[GateOutcome] = []
    custom: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.spec is None:
            improved.append(outcome)
            continue
        targets = [t.name for t in outcome.verdict.tools if t.status == "simulated"]
        if not targets:
            improved.append(outcome)
            continue
        result = config.coder.implement(outcome.spec, targets, progress=say)
        if result.code and result.spec is not None:
            again = run_gate([GateJob(result.spec, result.code)], workers=1, limit=config.limit)[0]
            gained = again.verdict.counts().get("implemented", 0) - outcome.verdict.counts().get("implemented", 0)
            if again.spec is not None and gained > 0:
                say(f"{outcome.verdict.name}: the coding loop implemented {gained} more tools")
                improved.append(again)
                custom[again.verdict.name] = result.code
                continue
        improved.append(outcome)
    return improved, custom
