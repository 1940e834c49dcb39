"""``mcp-services world check``: a world's invariants, each with its violations, as a person reads them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mcp_services.kernel.world import WorldShape
from mcp_services.worldcheck.invariants import INVARIANTS, Violation, check
from mcp_services.worldcheck.seeded import seeded_world

__all__ = ["WorldReport", "describe_shape", "world_report"]


def describe_shape(shape: WorldShape) -> str:
    industry = shape.industry or "an industry drawn from the seed"
    return f"{shape.organisations} organisations, {shape.people} people, {shape.months} months of history, {industry}"


@dataclass(frozen=True)
class WorldReport:
    """The invariants of one world and what breaks each (nothing, when the world holds)."""

    seed: int
    shape: WorldShape
    tables: int
    rows: int
    violations: dict[str, list[Violation]]

    @property
    def holds(self) -> bool:
        return not any(self.violations.values())

    @property
    def total(self) -> int:
        return sum(len(v) for v in self.violations.values())

    def lines(self, limit: int = 20) -> Iterator[str]:
        """The report: a headline, each invariant with its violations (``limit`` of each shown), a verdict."""
        yield f"world {self.seed} ({describe_shape(self.shape)}): {self.rows} rows in {self.tables} tables"
        width = max(len(inv.name) for inv in INVARIANTS)
        for inv in INVARIANTS:
            found = self.violations.get(inv.name, [])
            verdict = "ok" if not found else f"{len(found)} violation{'s' if len(found) != 1 else ''}"
            yield f"  {inv.name:<{width}}  {verdict:<14} {inv.description}"
            for violation in found[:limit]:
                yield f"      {violation}"
            if len(found) > limit:
                yield f"      ... and {len(found) - limit} more"
        yield "every invariant holds" if self.holds else f"{self.total} violations: the world does not hold together"


def world_report(seed: int, shape: WorldShape | None = None) -> WorldReport:
    """Seed every library service on the world of ``seed`` and ``shape`` and check its invariants."""
    seeded = seeded_world(seed, shape)
    return WorldReport(
        seed=seed,
        shape=seeded.world.shape,
        tables=len(seeded.tables),
        rows=sum(len(t.rows) for t in seeded),
        violations=check(seeded),
    )
