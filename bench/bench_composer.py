"""Composer throughput: verified tasks per second per core, and the time to build the graph.

Run: ``python bench/bench_composer.py [--n 200] [--seed 0] [--services a,b,...]``. One process, one
core. Reports wall and CPU time; on a shared machine the CPU figure (tasks per CPU-second) is the
per-core rate. World seeding (once per world, reused by every task of it) is reported apart.
"""

from __future__ import annotations

import argparse
import json
import time

from composer.catalog import load_catalog
from composer.generate import GenerateConfig, generate
from composer.graph import build_graph
from composer.runner import Runner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--services", default=None)
    parser.add_argument("--graph-repeats", type=int, default=5)
    args = parser.parse_args()
    services = tuple(args.services.split(",")) if args.services else None

    catalog = load_catalog(services)
    graph_times = []
    for _ in range(args.graph_repeats):
        t0 = time.perf_counter()
        graph = build_graph(catalog)
        graph_times.append(time.perf_counter() - t0)

    config = GenerateConfig(n=args.n, seed=args.seed, services=services)
    t0, c0 = time.perf_counter(), time.process_time()
    for world_seed in config.world_seeds:
        Runner(catalog, world_seed)  # seeds the world's stores once (cached per process)
    seed_wall, seed_cpu = time.perf_counter() - t0, time.process_time() - c0

    t0, c0 = time.perf_counter(), time.process_time()
    tasks, report = generate(config, catalog)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    result = {
        "library": {"services": len(catalog.names), "tools": len(catalog.tools), "edges": graph.number_of_edges()},
        "graph_build_seconds_median": sorted(graph_times)[len(graph_times) // 2],
        "world_seeding_seconds": {"wall": round(seed_wall, 2), "cpu": round(seed_cpu, 2)},
        "candidates": report.candidates,
        "kept": report.kept,
        "dropped": dict(report.dropped),
        "generate_seconds": {"wall": round(wall, 2), "cpu": round(cpu, 2)},
        "verified_tasks_per_second": {"wall": round(report.kept / wall, 2), "per_cpu_second": round(report.kept / cpu, 2)},
        "mean_services": round(sum(len(t.services) for t in tasks) / max(1, len(tasks)), 2),
        "mean_calls": round(sum(len(t.plan) for t in tasks) / max(1, len(tasks)), 2),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
