"""Fast state diffs for generation: the rows a run touched, read back instead of dumping whole stores.

``Episode.diff()`` dumps every table of every mounted service twice (tens of milliseconds per
service); generation needs a diff per candidate task, several times. A ``ChangeTracker`` puts
temporary triggers on each store's connection that log the primary key (and the old row) of every
row inserted, updated or deleted. The diff is then built from those rows only, and equals
``Episode.diff()`` (tests check this): untouched rows cannot differ. The log table and triggers live
in the store's own database (temporary triggers stop firing after a snapshot is restored), so a
snapshot carries the log as it was and a restore brings it back with the rows; a rolled-back tool
call rolls its log entries back too. Dumps and diffs read only the service's declared tables, so the
log never shows up in them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, Table

from mcp_services.kernel.diff import RowChange, StateDiff, TableDiff
from mcp_services.kernel.episode import Episode
from mcp_services.kernel.store import KERNEL_TABLE_PREFIX, Row, Store

LOG_TABLE = "_composer_changes"

RowKey = tuple[str, str, str]  # service, table, primary key text


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True, slots=True)
class _TableInfo:
    name: str
    columns: tuple[str, ...]
    pk: tuple[str, ...]
    json_columns: frozenset[str]


def _tables(store: Store) -> list[_TableInfo]:
    out = []
    for table in store.metadata.sorted_tables:
        if table.name.startswith(KERNEL_TABLE_PREFIX):
            continue
        out.append(_table_info(table))
    return out


def _table_info(table: Table) -> _TableInfo:
    return _TableInfo(
        name=table.name,
        columns=tuple(table.columns.keys()),
        pk=tuple(c.name for c in table.primary_key.columns),
        json_columns=frozenset(c.name for c in table.columns if isinstance(c.type, JSON)),
    )


def raw_connection(store: Store) -> sqlite3.Connection:
    """The store's sqlite3 connection (the engine's single pooled connection)."""
    connection = store.engine.raw_connection().driver_connection
    assert isinstance(connection, sqlite3.Connection)
    return connection


class _StoreTracker:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn = raw_connection(store)
        self.tables = {t.name: t for t in _tables(store)}
        statements = [f"CREATE TABLE IF NOT EXISTS {LOG_TABLE} (seq INTEGER PRIMARY KEY, tbl TEXT, pk TEXT, old TEXT)"]
        for t in self.tables.values():
            new_pk = "json_array(" + ", ".join(f"new.{_q(c)}" for c in t.pk) + ")"
            old_pk = "json_array(" + ", ".join(f"old.{_q(c)}" for c in t.pk) + ")"
            old_row = "json_array(" + ", ".join(f"old.{_q(c)}" for c in t.columns) + ")"
            target = _q(t.name)
            statements += [
                f"CREATE TRIGGER IF NOT EXISTS {_q('_cmp_i_' + t.name)} AFTER INSERT ON {target} BEGIN "
                f"INSERT INTO {LOG_TABLE} (tbl, pk, old) VALUES ('{t.name}', {new_pk}, NULL); END",
                f"CREATE TRIGGER IF NOT EXISTS {_q('_cmp_u_' + t.name)} AFTER UPDATE ON {target} BEGIN "
                f"INSERT INTO {LOG_TABLE} (tbl, pk, old) VALUES ('{t.name}', {old_pk}, {old_row}); "
                f"INSERT INTO {LOG_TABLE} (tbl, pk, old) VALUES ('{t.name}', {new_pk}, NULL); END",
                f"CREATE TRIGGER IF NOT EXISTS {_q('_cmp_d_' + t.name)} AFTER DELETE ON {target} BEGIN "
                f"INSERT INTO {LOG_TABLE} (tbl, pk, old) VALUES ('{t.name}', {old_pk}, {old_row}); END",
            ]
        for statement in statements:
            self.conn.execute(statement)
        self.clear()

    def clear(self) -> None:
        self.conn.execute(f"DELETE FROM {LOG_TABLE}")

    def position(self) -> int:
        row = self.conn.execute(f"SELECT COALESCE(MAX(seq), 0) FROM {LOG_TABLE}").fetchone()
        return int(row[0])

    def touched(self, since: int = 0) -> dict[tuple[str, str], Row | None]:
        """(table, pk json) -> the row before its first change since ``since`` (None: it did not exist)."""
        first: dict[tuple[str, str], Row | None] = {}
        for table, pk, old in self.conn.execute(
            f"SELECT tbl, pk, old FROM {LOG_TABLE} WHERE seq > ? ORDER BY seq", (since,)
        ):
            key = (table, pk)
            if key in first:
                continue
            if old is None:
                first[key] = None
            else:
                info = self.tables[table]
                first[key] = self._decode(info, dict(zip(info.columns, json.loads(old), strict=True)))
        return first

    def current(self, table: str, pk_json: str) -> Row | None:
        info = self.tables[table]
        values = json.loads(pk_json)
        where = " AND ".join(f"{_q(c)} IS ?" for c in info.pk)
        cursor = self.conn.execute(
            f"SELECT {', '.join(_q(c) for c in info.columns)} FROM {_q(table)} WHERE {where}", values
        )
        found = cursor.fetchone()
        if found is None:
            return None
        return self._decode(info, dict(zip(info.columns, found, strict=True)))

    @staticmethod
    def _decode(info: _TableInfo, row: Row) -> Row:
        for col in info.json_columns:
            if isinstance(row.get(col), str):
                row[col] = json.loads(row[col])
        return row

    def key_text(self, table: str, row: Row) -> str:
        return "|".join(str(row[k]) for k in self.tables[table].pk)

    def diff(self, since: int = 0) -> StateDiff:
        tables: dict[str, dict[str, Any]] = {}
        for (table, pk_json), before in self.touched(since).items():
            after = self.current(table, pk_json)
            if before is not None and after is not None:
                before = _align_floats(before, after)
            entry = tables.setdefault(table, {"added": {}, "changed": {}, "deleted": {}})
            if before is None and after is not None:
                entry["added"][self.key_text(table, after)] = after
            elif before is not None and after is None:
                entry["deleted"][self.key_text(table, before)] = before
            elif before is not None and after is not None and before != after:
                entry["changed"][self.key_text(table, after)] = RowChange(before, after)
        return StateDiff(
            {
                name: TableDiff(
                    dict(sorted(t["added"].items())), dict(sorted(t["changed"].items())), dict(sorted(t["deleted"].items()))
                )
                for name, t in sorted(tables.items())
            }
        )


def _align_floats(before: Row, after: Row) -> Row:
    """Old rows pass through SQLite's JSON (15 significant digits): equal floats must compare equal."""
    aligned = dict(before)
    for col, old in before.items():
        new = after.get(col)
        if isinstance(old, float) and isinstance(new, float) and abs(old - new) <= 1e-9 * max(1.0, abs(new)):
            aligned[col] = new
    return aligned


class ChangeTracker:
    """Tracks the row changes of an episode's stores from the moment it is created (or ``reset``)."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self._trackers = {name: _StoreTracker(store) for name, store in episode.stores.items()}

    def reset(self, services: Iterable[str] | None = None) -> None:
        """Forget what was logged (in ``services``, or all): the current state becomes the baseline."""
        for name in self._trackers if services is None else services:
            self._trackers[name].clear()

    def positions(self) -> dict[str, int]:
        return {name: t.position() for name, t in self._trackers.items()}

    def diff(self, since: Mapping[str, int] | None = None) -> dict[str, StateDiff]:
        """Per service, the changes since the baseline (or since ``positions()`` were taken)."""
        since = since or {}
        return {name: t.diff(since.get(name, 0)) for name, t in self._trackers.items()}

    def service_diff(self, service: str, since: int = 0) -> StateDiff:
        return self._trackers[service].diff(since)

    def position(self, service: str) -> int:
        return self._trackers[service].position()

    def table_info(self, service: str, table: str) -> _TableInfo:
        return self._trackers[service].tables[table]

    def tables(self, service: str) -> list[str]:
        return list(self._trackers[service].tables)

    def row(self, service: str, table: str, pk_values: list[Any]) -> Row | None:
        return self._trackers[service].current(table, json.dumps(pk_values))

    def connection(self, service: str) -> sqlite3.Connection:
        return self._trackers[service].conn
