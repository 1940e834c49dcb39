"""What a tool (or a seed function) sees while it runs: one transaction, the world, the clock, ids."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import Column, Integer, MetaData, String, Table
from sqlalchemy.orm import Session

from mcp_services.kernel.entity import is_entity, runtime_of
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.store import Transaction
from mcp_services.kernel.world import World, WorldShape

COUNTERS_TABLE = "_kernel_counters"
META_TABLE = "_kernel_meta"

M = TypeVar("M")

_NEXT_ID = f'UPDATE "{COUNTERS_TABLE}" SET value = value + 1 WHERE name = ? RETURNING value'
_FIRST_ID = f'INSERT INTO "{COUNTERS_TABLE}" (name, value) VALUES (?, 1)'


def add_kernel_tables(metadata: MetaData) -> None:
    """The per-store bookkeeping tables (id counters, facts); excluded from dumps and diffs."""
    if COUNTERS_TABLE not in metadata.tables:
        Table(
            COUNTERS_TABLE,
            metadata,
            Column("name", String, primary_key=True),
            Column("value", Integer, nullable=False),
        )
    if META_TABLE not in metadata.tables:
        Table(META_TABLE, metadata, Column("key", String, primary_key=True), Column("value", String, nullable=False))


def stored_world(db: RecordAccess) -> World:
    """The world a store was seeded from, as its bookkeeping records it (for code that sees only the store)."""
    meta = dict(db.sql(f"SELECT key, value FROM {META_TABLE} WHERE key IN ('world_seed', 'world_shape')"))
    shape = WorldShape.from_dict(json.loads(meta["world_shape"])) if "world_shape" in meta else None
    return World.from_seed(int(meta["world_seed"]), shape)


class ToolContext(RecordAccess):
    """One tool call's view: its records (``get``, ``query``, ``insert``...), the world, the clock, ids."""

    __slots__ = ("conn", "tx", "world", "service")

    def __init__(self, tx: Transaction, world: World, service: str) -> None:
        self.tx = tx
        self.conn = tx.conn
        self.world = world
        self.service = service

    @property
    def db(self) -> Session:
        """An ORM session in this call's transaction, for code written against SQLAlchemy models."""
        return self.tx.orm_session()

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
        if self.tx.session is not None:
            self.tx.session.flush()  # ORM code relies on pending rows reaching SQLite before the next statement
        row = self.conn.execute(_NEXT_ID, (prefix,)).fetchone()
        if row is None:
            self.conn.execute(_FIRST_ID, (prefix,))
            value = 1
        else:
            value = int(row[0])
        return f"{prefix}_{value:0{width}d}"

    def get(self, model: type[M], key: object, entity: str | None = None, hint: str | None = None) -> M:
        """The record of ``model`` with id ``key``, or a not-found ``ToolError`` that says where to look."""
        if is_entity(model):
            record = self.fetch(model, key)
            if record is None:
                runtime = runtime_of(model)
                raise ToolError.not_found(entity or runtime.noun, key, runtime.not_found_hint() if hint is None else hint)
            return record
        row = self.db.get(model, key)
        if row is None:
            raise ToolError.not_found(entity or model.__name__.lower(), key, hint or "")
        return row

    def rng(self, purpose: str) -> random.Random:
        """A private random stream (seeding only: tools must stay deterministic from state)."""
        return self.world.rng(f"{self.service}:{purpose}")

    def scalar_count(self, statement: Any) -> int:
        from sqlalchemy import func, select

        return int(self.db.execute(select(func.count()).select_from(statement.subquery())).scalar_one())
