"""Generating a task set: N candidates, each an archetype filled on a world, verified, or dropped and counted.

Candidates take the archetypes the catalog can serve in turn (a fresh shuffle every round, each
archetype as often as its weight says), so a set covers every family and service the library holds.
Every candidate has its own random streams (``random.Random(f"{seed}:candidate:{i}:...")``) and runs
on a fresh state of its world, so the same configuration gives the same tasks, byte for byte.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import composer.archetypes  # noqa: F401 - registers the archetype library
from composer.catalog import Catalog, load_catalog
from composer.compose import ComposeSettings, Dropped, compose_task
from composer.errors import ComposerError
from composer.paraphrase import litellm_complete
from composer.runner import Runner
from composer.scenario import ARCHETYPES, FAMILIES, Archetype, Phrasing, channel_key, kept_key, service_key
from mcp_services.kernel.world import WorldShape
from mcp_services.tasks.spec import TaskSpec

#: Sets of this many candidates or more are spread over many worlds by default, this many candidates each.
MANY_WORLDS_FROM = 500
TASKS_PER_WORLD = 20
#: Share of candidates phrased ``guided`` (the rest are ``goal``).
GUIDED_SHARE = 0.35


@dataclass(frozen=True, slots=True)
class GenerateConfig:
    """What ``composer generate`` makes.

    ``n`` candidates are generated; those that fail verification are dropped and counted.
    ``worlds`` world seeds (``seed * 1000 + k``) each take a block of consecutive candidates; each costs one seeding
    of the library. None (the default): one world below ``MANY_WORLDS_FROM`` candidates, else one world per
    ``TASKS_PER_WORLD`` candidates, so that no person or company of a large set is named in more than a few of its
    requests. A set of one world uses the default world shape; a set of many gives each world its own
    (``WorldShape.varied``: every industry in turn, sizes and histories drawn from the world's seed).
    ``archetypes`` / ``families`` narrow the archetype library (default: every archetype the services serve).
    ``catalog``: compose over the generated catalog beside the library (``services`` then narrows both).
    """

    n: int
    seed: int = 0
    services: tuple[str, ...] | None = None
    archetypes: tuple[str, ...] | None = None
    families: tuple[str, ...] | None = None
    distractor_services: int = 5
    worlds: int | None = None
    paraphrase_model: str | None = None
    #: Mount every provider's services (the generated catalog) beside the library.
    catalog: bool = False

    def validate(self) -> None:
        if self.n < 1:
            raise ComposerError(f"--n must be at least 1 (got {self.n})")
        if self.worlds is not None and not 1 <= self.worlds <= self.n:
            raise ComposerError(f"--worlds must be from 1 to --n ({self.n}), not {self.worlds}")
        if self.distractor_services < 0:
            raise ComposerError(f"--distractor-services must not be negative (got {self.distractor_services})")
        unknown = [a for a in self.archetypes or () if a not in ARCHETYPES]
        if unknown:
            raise ComposerError(f"unknown archetype {unknown[0]!r}; known: {', '.join(sorted(ARCHETYPES))}")
        bad = [f for f in self.families or () if f not in FAMILIES]
        if bad:
            raise ComposerError(f"unknown family {bad[0]!r}; families: {', '.join(FAMILIES)}")

    @property
    def world_count(self) -> int:
        if self.worlds is not None:
            return self.worlds
        return 1 if self.n < MANY_WORLDS_FROM else math.ceil(self.n / TASKS_PER_WORLD)

    @property
    def world_seeds(self) -> list[int]:
        return [self.seed * 1000 + k for k in range(self.world_count)]

    def world_of(self, candidate: int) -> int:
        """The world seed of a candidate: consecutive candidates share a world (one world is seeded at a time)."""
        return self.world_seeds[candidate * self.world_count // self.n]

    def shape_of(self, world_seed: int) -> WorldShape:
        """The shape of a world of this set: the default for a one-world set, else varied by the world's seed."""
        return WorldShape() if self.world_count == 1 else WorldShape.varied(world_seed)


@dataclass(slots=True)
class GenerateReport:
    candidates: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    details: Counter[str] = field(default_factory=Counter)  # "reason: archetype" for people reading the summary
    world_seconds: float = 0.0
    generate_seconds: float = 0.0

    @property
    def tasks_per_second(self) -> float:
        return self.kept / self.generate_seconds if self.generate_seconds else 0.0

    def summary(self) -> str:
        drops = ", ".join(f"{k} {v}" for k, v in sorted(self.dropped.items())) or "none"
        return f"kept {self.kept} of {self.candidates} candidates; dropped: {drops}"


Progress = Callable[[int, int, int], None]


def usable_archetypes(catalog: Catalog, config: GenerateConfig) -> list[Archetype]:
    """The archetypes this catalog can serve (every service they need is in it), narrowed by the config."""
    found = [
        a for a in ARCHETYPES.values()
        if a.serves(catalog)
        and (config.archetypes is None or a.id in config.archetypes)
        and (config.families is None or a.family in config.families)
    ]
    if not found:
        wanted = f" among {', '.join(config.archetypes)}" if config.archetypes else ""
        raise ComposerError(
            f"no archetype{wanted} can be built from the services {', '.join(catalog.names)}; "
            "name more services with --services (each archetype lists the services it needs in `composer archetypes`)"
        )
    return sorted(found, key=lambda a: a.id)


def schedule(archetypes: list[Archetype], n: int, seed: int, catalog: Catalog | None = None) -> list[Archetype]:
    """Which archetype each candidate takes: every archetype in turn, as many times per round as its weight for the
    catalog says, shuffled per round."""
    pool = [a for a in archetypes for _ in range(max(1, round(a.weight_for(catalog) if catalog is not None else a.weight)))]
    order: list[Archetype] = []
    rounds = 0
    while len(order) < n:
        batch = list(pool)
        random.Random(f"{seed}:round:{rounds}").shuffle(batch)
        order += batch
        rounds += 1
    return order[:n]


def phrasing_for(i: int, seed: int) -> Phrasing:
    return "guided" if random.Random(f"{seed}:candidate:{i}:phrasing").random() < GUIDED_SHARE else "goal"


def generate(
    config: GenerateConfig,
    catalog: Catalog | None = None,
    progress: Progress | None = None,
) -> tuple[list[TaskSpec], GenerateReport]:
    """Generate ``config.n`` candidates and return the verified tasks with a report."""
    config.validate()
    if catalog is None:
        from mcp_services.registry import catalog_names

        catalog = load_catalog(config.services or (catalog_names() if config.catalog else None))
    order = schedule(usable_archetypes(catalog, config), config.n, config.seed, catalog)
    settings = ComposeSettings(
        catalog=catalog,
        distractor_services=config.distractor_services,
        paraphrase=litellm_complete(config.paraphrase_model) if config.paraphrase_model else None,
    )
    report = GenerateReport()
    runner: Runner | None = None
    tasks: list[TaskSpec] = []
    seen: set[str] = set()
    started = time.perf_counter()
    for i, archetype in enumerate(order):
        world_seed = config.world_of(i)
        if runner is None or runner.world_seed != world_seed:
            t0 = time.perf_counter()
            runner = Runner(catalog, world_seed, config.shape_of(world_seed))  # the last world's runner is dropped: one world in memory at a time
            report.world_seconds += time.perf_counter() - t0
        report.candidates += 1
        try:
            task = compose_task(settings, runner, archetype, phrasing_for(i, config.seed), f"{config.seed}:candidate:{i}")
        except Dropped as exc:
            report.dropped[exc.reason] += 1
            report.details[f"{exc.reason}: {archetype.id}"] += 1
        else:
            if task.id in seen:
                report.dropped["duplicate"] += 1
                report.details[f"duplicate: {archetype.id}"] += 1
            else:
                seen.add(task.id)
                tasks.append(task)
                settings.usage.update(f"{step.service}.{step.tool}" for step in task.plan)
                settings.usage.update(service_key(step.service) for step in task.plan)
                settings.usage.update(kept_key(f"{step.service}.{step.tool}") for step in task.plan)
                if task.scenario is not None and task.scenario.channel is not None:
                    settings.usage[channel_key(task.scenario.channel)] += 1
                report.kept += 1
        if progress is not None:
            progress(i + 1, config.n, report.kept)
    report.generate_seconds = time.perf_counter() - started - report.world_seconds
    return tasks, report


def progress_every(total: int) -> int:
    return max(1, min(50, math.ceil(total / 20)))
