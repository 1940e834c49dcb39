"""Generator benchmarks (issue 5): prints figures, asserts nothing.

    python bench/bench_generator.py [--quick] [--specs ../shared/specs/tool_specs.jsonl.gz] [--catalog DIR]

1. import + gate throughput (tools per second, wall clock, with the default two gate workers), on a
   slice of the shared specs file (or the test fixtures with --quick);
2. time to load the whole catalog: reading its index, and compiling every service in it;
3. memory of an episode that mounts 15 generated services (RSS growth), and the time to build it;
4. the catalog's honesty figures (issues 13, 23): services, tools, implemented share, business share,
   entities with a display name, filler-shaped values in the seeds (every service seeded, nested values
   included), list tools marked implemented that ignore a declared filter;
5. with ``--causes``: the compiler's root causes (issue 32, ``generator.measures``), each a count over
   every service: tools that filter on or write a credential, updates that drop unspecified nested fields,
   simulated writes that insert on update/delete/action, actions that leave their row unchanged,
   placeholder- or parameter-shaped seeded values, seeded time ranges that end before they start;
6. with ``--roundtrip``: the round-trip suite over every service (the share of implemented tools whose
   trips pass, per service and in all) and the share of simulated reads that answer from state.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator.audit import audit_catalog  # noqa: E402
from generator.catalog import PACKAGE_CATALOG, Catalog  # noqa: E402
from generator.measures import CAUSES, measure_catalog  # noqa: E402
from generator.pipeline import ImportConfig, import_file  # noqa: E402
from generator.roundtrip import round_trips, simulated_reads  # noqa: E402
from harness.progress import Progress  # noqa: E402
from mcp_services.kernel import Episode  # noqa: E402

DEFAULT_SPECS = REPO.parent / "shared" / "specs" / "tool_specs.jsonl.gz"
SLICE = ("trello.com", "slack.com", "twilio.com:twilio_fax_v1", "hubapi.com:crm", "medium.com", "giphy.com",
         "pims.io", "composio:googledrive", "1password.local:connect", "royalmail.com:click-and-drop")


def rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def bench_import(specs: Path, quick: bool) -> None:
    source = REPO / "tests" / "fixtures" / "generator_specs_sample.jsonl" if quick or not specs.exists() else specs
    only = frozenset() if source != specs else frozenset(SLICE)
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        result = import_file(source, ImportConfig(out=Path(out), fmt="specs-jsonl", only=only))
        seconds = time.perf_counter() - started
    counts = result.report.counts()
    tools = sum(counts.values())
    gate_seconds = sum(s.seconds for s in result.report.services)
    print(f"import + gate: {len(result.report.services)} services, {tools} tools in {seconds:.1f} s wall "
          f"= {tools / seconds:.1f} tools/s ({counts.get('implemented', 0)} implemented, "
          f"{counts.get('simulated', 0)} simulated, {counts.get('rejected', 0)} rejected); "
          f"gate CPU-side {gate_seconds:.1f} s = {tools / max(gate_seconds, 1e-9):.1f} tools/s per worker")


def bench_catalog(root: Path) -> list[str]:
    catalog = Catalog(root)
    started = time.perf_counter()
    names = catalog.names()
    index_seconds = time.perf_counter() - started
    if not names:
        print(f"catalog at {root} is empty: skipping the catalog and episode figures")
        return []
    tools = sum(len(catalog.index[n].tools) for n in names)
    print(f"catalog index: {len(names)} services, {tools} tools, read in {index_seconds * 1000:.0f} ms")
    started = time.perf_counter()
    before = rss_mb()
    for name in names:
        catalog.service(name)
    seconds = time.perf_counter() - started
    print(f"compile the whole catalog: {seconds:.1f} s ({seconds / len(names) * 1000:.1f} ms per service), "
          f"+{rss_mb() - before:.0f} MB RSS")
    return names


def bench_episode(root: Path, names: list[str]) -> None:
    catalog = Catalog(root)
    chosen = sorted(names, key=lambda n: len(catalog.index[n].tools))[len(names) // 2 :][:15]
    services = [catalog.service(n) for n in chosen]
    for service in services:  # seeded images are cached per service: build them outside the measurement
        service.image(0)
    gc.collect()
    before = rss_mb()
    started = time.perf_counter()
    episode = Episode(services, world_seed=0)
    seconds = time.perf_counter() - started
    gc.collect()
    grown = rss_mb() - before
    tools = sum(len(s.tools) for s in services)
    rows = sum(store.count_rows() for store in episode.stores.values())
    print(f"episode of 15 generated services ({tools} tools, {rows} rows): built in {seconds * 1000:.1f} ms, "
          f"+{grown:.1f} MB RSS")
    many = [Episode(services, world_seed=0) for _ in range(20)]
    gc.collect()
    print(f"  20 more such episodes: +{rss_mb() - before - grown:.1f} MB RSS "
          f"({(rss_mb() - before - grown) / 20:.2f} MB each)")
    for ep in [episode, *many]:
        ep.close()


def bench_figures(root: Path) -> None:
    started = time.perf_counter()
    figures = audit_catalog(Catalog(root))
    summary = figures.summary()
    print(f"figures ({time.perf_counter() - started:.0f} s, every service seeded):")
    for key, value in summary.items():
        print(f"  {key:44} {value:.1%}" if isinstance(value, float) else f"  {key:44} {value}")
    for cell in figures.placeholder_cells[:5]:
        print(f"  placeholder: {cell}")
    for cell in figures.filler_values[:5]:
        print(f"  filler: {cell}")
    for tool in figures.ignored_filters[:5]:
        print(f"  ignores a filter: {tool}")


def bench_causes(root: Path, only: list[str]) -> None:
    started = time.perf_counter()
    catalog = Catalog(root)
    causes = measure_catalog(catalog, only or None)
    print(f"root causes ({time.perf_counter() - started:.0f} s, {len(causes.services)} services; "
          f"items found, services touched):")
    for cause, (items, services) in causes.summary().items():
        print(f"  {cause:24} {items:6} in {services:4} services")
    for cause in CAUSES:
        for item in causes.items(cause)[:4]:
            print(f"  {cause}: {item[:140]}")


def bench_roundtrip(root: Path, only: list[str]) -> None:
    catalog = Catalog(root)
    names = only or catalog.names()
    print(f"round trips over {len(names)} services: a progress line every 5 s (on stderr), figures at the end",
          flush=True)
    # "passed" in the progress line: services whose implemented tools pass at least 95% of their trips.
    progress = Progress(len(names), label="services")
    started = time.perf_counter()
    shares: list[tuple[float, str, int, dict[str, str]]] = []
    passing = covered = reads = from_state = from_spec = 0
    for name in names:
        service = catalog.service(name)
        implemented = [t.name for t in catalog.index[name].tools if t.status == "implemented"]
        trips = round_trips(service, implemented)
        failing = trips.failing()
        covered += len(trips.tools)
        passing += sum(1 for t in trips.tools if t not in failing)
        shares.append((trips.share, name, len(trips.tools), failing))
        found = simulated_reads(service)
        reads += len(found.reads)
        from_state += len(found.from_state)
        from_spec += len(found.from_spec)
        progress.update(trips.share >= 0.95)
    progress.close()
    seconds = time.perf_counter() - started
    below = [s for s in shares if s[0] < 0.95]
    print(f"round trips ({seconds:.0f} s, {len(names)} services): {passing}/{covered} implemented tools pass "
          f"({passing / max(1, covered):.1%}); {len(shares) - len(below)}/{len(shares)} services at >= 95%; "
          f"lowest {min(s[0] for s in shares):.1%}" if shares else "round trips: no services")
    for share, name, tools, failing in sorted(shares)[:max(5, len(below))]:
        first = next(iter(failing.items()), ("", ""))
        print(f"  {name:40} {share:6.1%} of {tools:4} tools  e.g. {first[0]}: {first[1][:100]}")
    print(f"simulated reads of an entity answering from state: {from_state}/{reads} ({from_state / max(1, reads):.1%});"
          f" {from_spec} reads of no entity answered from their specification")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="import the small test fixtures only")
    parser.add_argument("--specs", type=Path, default=DEFAULT_SPECS)
    parser.add_argument("--catalog", type=Path, default=PACKAGE_CATALOG)
    parser.add_argument("--figures-only", action="store_true", help="only the catalog's honesty figures")
    parser.add_argument("--roundtrip", nargs="*", metavar="NAME", default=None,
                        help="only the round-trip suite and simulated reads (every service, or these)")
    parser.add_argument("--causes", nargs="*", metavar="NAME", default=None,
                        help="only the root-cause figures (every service, or these)")
    args = parser.parse_args()
    if args.causes is not None:
        bench_causes(args.catalog, args.causes)
        return
    if args.roundtrip is not None:
        bench_roundtrip(args.catalog, args.roundtrip)
        return
    if args.figures_only:
        bench_figures(args.catalog)
        return
    bench_import(args.specs, args.quick)
    names = bench_catalog(args.catalog)
    if len(names) >= 15:
        bench_episode(args.catalog, names)
    if names:
        bench_figures(args.catalog)


if __name__ == "__main__":
    main()
