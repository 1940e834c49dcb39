"""What a tool (or a seed function) sees while it runs: one transaction, the world, the clock, ids."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from sqlalchemy import Column, Integer, MetaData, String, Table, select, text
from sqlalchemy.orm import Session

from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.world import World

COUNTERS_TABLE = "_kernel_counters"
META_TABLE = "_kernel_meta"

M = TypeVar("M")


def add_kernel_tables(metadata: MetaData) -> None:
    """The per-store bookkeeping tables (id counters); excluded from dumps and diffs."""
    if COUNTERS_TABLE not in metadata.tables:
        Table(
            COUNTERS_TABLE,
            metadata,
            Column("name", String, primary_key=True),
            Column("value", Integer, nullable=False),
        )
    if META_TABLE not in metadata.tables:
        Table(META_TABLE, metadata, Column("key", String, primary_key=True), Column("value", String, nullable=False))


@dataclass(slots=True)
class ToolContext:
    """One tool call's view: ``db`` is a session inside the call's transaction."""

    db: Session
    world: World
    service: str

    @property
    def now(self) -> datetime:
        """The world's frozen clock (timezone-aware UTC)."""
        return self.world.now_dt

    @property
    def now_iso(self) -> str:
        return self.world.now

    def iso(self, moment: datetime) -> str:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    def days_from_now(self, days: float) -> str:
        return self.iso(self.now + timedelta(days=days))

    def new_id(self, prefix: str, width: int = 4) -> str:
        """The next id of a sequence, e.g. ``new_id("ch")`` -> ``"ch_0043"``; part of the state."""
        updated = self.db.execute(
            text(f"UPDATE {COUNTERS_TABLE} SET value = value + 1 WHERE name = :n RETURNING value"),
            {"n": prefix},
        ).scalar()
        if updated is None:
            updated = 1
            self.db.execute(text(f"INSERT INTO {COUNTERS_TABLE} (name, value) VALUES (:n, 1)"), {"n": prefix})
        return f"{prefix}_{updated:0{width}d}"

    def get(self, model: type[M], key: object, entity: str, hint: str = "") -> M:
        """The row of ``model`` with primary key ``key``, or a not-found ``ToolError``."""
        row = self.db.get(model, key)
        if row is None:
            raise ToolError.not_found(entity, key, hint)
        return row

    def rng(self, purpose: str) -> random.Random:
        """A private random stream (seeding only: tools must stay deterministic from state)."""
        return self.world.rng(f"{self.service}:{purpose}")

    def scalar_count(self, statement: object) -> int:
        from sqlalchemy import func

        return int(self.db.execute(select(func.count()).select_from(statement.subquery())).scalar_one())  # type: ignore[attr-defined]
