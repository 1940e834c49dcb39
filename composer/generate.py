"""Generating a task set: N candidates, each walked, instantiated and verified; the failures counted.

Every candidate has its own random streams (``random.Random(f"{seed}:candidate:{i}:...")``) and
runs on a fresh state of its world, so the same configuration gives the same tasks, byte for byte.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from composer.build import BuildContext, Dropped, Shape, build_task
from composer.catalog import Catalog, load_catalog
from composer.errors import ComposerError
from composer.graph import build_graph, max_reachable_services
from composer.paraphrase import litellm_complete
from composer.runner import Runner
from composer.walk import WalkIndex
from mcp_services.tasks.spec import TaskSpec

#: Shares of candidates asked to have each optional shape (kept sets land near these).
MEMO = True  # memoise tool calls by state (see Runner)
ASK_SHARE = 0.3
DISTRACTOR_SHARE = 0.55
POLICY_SHARE = 0.4


@dataclass(frozen=True, slots=True)
class GenerateConfig:
    """What ``composer generate`` makes.

    ``n`` candidates are generated; those that fail verification are dropped and counted.
    ``worlds`` world seeds are used in turn (``seed * 1000 + k``); each costs one seeding of the library.
    """

    n: int
    seed: int = 0
    services: tuple[str, ...] | None = None
    min_services: int = 3
    max_calls: int = 10
    distractor_services: int = 5
    worlds: int = 1
    paraphrase_model: str | None = None

    def validate(self, catalog: Catalog, reachable: int) -> None:
        if self.n < 1:
            raise ComposerError(f"--n must be at least 1 (got {self.n})")
        if self.worlds < 1:
            raise ComposerError(f"--worlds must be at least 1 (got {self.worlds})")
        if self.min_services < 1:
            raise ComposerError(f"--min-services must be at least 1 (got {self.min_services})")
        if self.distractor_services < 0:
            raise ComposerError(f"--distractor-services must not be negative (got {self.distractor_services})")
        if self.min_services > len(catalog.names):
            raise ComposerError(
                f"--min-services {self.min_services} is impossible: only {len(catalog.names)} service(s) are available "
                f"({', '.join(catalog.names)})"
            )
        if self.min_services > reachable:
            raise ComposerError(
                f"--min-services {self.min_services} is impossible: a walk from any anchor reaches at most "
                f"{reachable} of these services"
            )
        if self.max_calls < max(2, self.min_services):
            raise ComposerError(
                f"--max-calls {self.max_calls} is impossible: a task over {self.min_services} service(s) needs at least "
                f"{max(2, self.min_services)} calls"
            )

    @property
    def world_seeds(self) -> list[int]:
        return [self.seed * 1000 + k for k in range(self.worlds)]


@dataclass(slots=True)
class GenerateReport:
    candidates: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    walk_failures: Counter[str] = field(default_factory=Counter)
    graph_seconds: float = 0.0
    world_seconds: float = 0.0
    generate_seconds: float = 0.0

    @property
    def tasks_per_second(self) -> float:
        return self.kept / self.generate_seconds if self.generate_seconds else 0.0

    def summary(self) -> str:
        drops = ", ".join(f"{k} {v}" for k, v in sorted(self.dropped.items())) or "none"
        return f"kept {self.kept} of {self.candidates} candidates; dropped: {drops}"


Progress = Callable[[int, int, int], None]


def shape_for(i: int, seed: int, config: GenerateConfig) -> Shape:
    rng = random.Random(f"{seed}:candidate:{i}:shape")
    low = max(config.min_services + 2, 5)
    high = max(low, min(9, config.max_calls))
    return Shape(
        kind="ask" if rng.random() < ASK_SHARE else "act",
        distractor=rng.random() < DISTRACTOR_SHARE,
        policy=rng.random() < POLICY_SHARE,
        target_len=min(config.max_calls, rng.randint(low, high)),
    )


def generate(
    config: GenerateConfig,
    catalog: Catalog | None = None,
    progress: Progress | None = None,
) -> tuple[list[TaskSpec], GenerateReport]:
    """Generate ``config.n`` candidates and return the verified tasks with a report."""
    catalog = catalog or load_catalog(config.services)
    report = GenerateReport()
    started = time.perf_counter()
    graph = build_graph(catalog)
    report.graph_seconds = time.perf_counter() - started
    config.validate(catalog, max_reachable_services(graph))
    index = WalkIndex(catalog, graph)
    ctx = BuildContext(
        catalog=catalog,
        index=index,
        min_services=config.min_services,
        max_calls=config.max_calls,
        distractor_services=config.distractor_services,
        paraphrase=litellm_complete(config.paraphrase_model) if config.paraphrase_model else None,
    )
    runners: dict[int, Runner] = {}
    tasks: list[TaskSpec] = []
    seen: set[str] = set()
    walk_failures: dict[str, int] = {}
    for i in range(config.n):
        world_seed = config.world_seeds[i % config.worlds]
        if world_seed not in runners:
            t0 = time.perf_counter()
            runners[world_seed] = Runner(catalog, world_seed, memo=MEMO)
            report.world_seconds += time.perf_counter() - t0
        t0 = time.perf_counter()
        report.candidates += 1
        try:
            task = build_task(ctx, runners[world_seed], shape_for(i, config.seed, config), f"{config.seed}:candidate:{i}", walk_failures)
        except Dropped as exc:
            report.dropped[exc.reason] += 1
        else:
            if task.id in seen:
                report.dropped["duplicate"] += 1
            else:
                seen.add(task.id)
                tasks.append(task)
                report.kept += 1
        report.generate_seconds += time.perf_counter() - t0
        if progress is not None:
            progress(i + 1, config.n, report.kept)
    report.walk_failures.update(walk_failures)
    return tasks, report


def progress_every(total: int) -> int:
    return max(1, min(50, math.ceil(total / 20)))
