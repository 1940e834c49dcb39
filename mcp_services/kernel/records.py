"""Reading and writing entity records on a store's SQLite connection, with no ORM in the way.

Every tool reaches its state through these calls on its ``ToolContext``: ``get``, ``find``,
``query(...).filter(...).search(...).order_by(...).page(limit, cursor)``, ``insert``, ``update``,
``delete``. SQL is built from declared column names only (values are always bound parameters), so
the statements are safe and cheap; rows come back as the entity's record objects.

Text search has one meaning everywhere: each word of the query must appear (case-insensitive,
``%`` and ``_`` taken literally) in at least one of the entity's search fields.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

from mcp_services.kernel.entity import EntityRuntime, json_text, quote, replace_record, runtime_of
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.pagination import Page, decode_cursor

E = TypeVar("E")

#: Longest free-text search a tool accepts (SQLite refuses LIKE patterns over 50,000 bytes).
MAX_SEARCH_LENGTH = 500
_OPERATORS = frozenset({"=", "!=", "<", "<=", ">", ">="})


def like_pattern(text: str) -> str:
    """``text`` as a LIKE pattern that matches it anywhere, wildcards escaped (use with ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def check_search_text(text: str, name: str = "query") -> str:
    text = " ".join(text.split())
    if len(text) > MAX_SEARCH_LENGTH:
        raise ToolError.invalid_argument(
            f"{name} is {len(text)} characters long; search with at most {MAX_SEARCH_LENGTH} characters (a few words)."
        )
    return text


class Query(Generic[E]):
    """A SELECT over one entity, built up by chained calls (each returns the same query)."""

    __slots__ = ("_conn", "_rt", "_where", "_params", "_order")

    def __init__(self, conn: sqlite3.Connection, runtime: EntityRuntime) -> None:
        self._conn = conn
        self._rt = runtime
        self._where: list[str] = []
        self._params: list[Any] = []
        self._order: str = "id"

    def _column(self, name: str) -> str:
        if name not in self._rt.column_set:
            raise ValueError(f"{self._rt.name} has no column {name!r}")
        return quote(name)

    def where(self, /, **equal: Any) -> Query[E]:
        """Rows whose columns equal these values (None means the column is null)."""
        for name, value in equal.items():
            column = self._column(name)
            if value is None:
                self._where.append(f"{column} IS NULL")
            else:
                self._where.append(f"{column} = ?")
                self._params.append(value)
        return self

    def filter(self, /, **equal: Any) -> Query[E]:
        """Like ``where``, but a None value adds no condition: for a tool's optional filter parameters."""
        return self.where(**{k: v for k, v in equal.items() if v is not None})

    def compare(self, name: str, operator: str, value: Any) -> Query[E]:
        """Rows whose column compares to ``value`` (``>=``, ``<``...); a None value adds no condition."""
        if operator not in _OPERATORS:
            raise ValueError(f"unknown operator {operator!r}")
        if value is not None:
            self._where.append(f"{self._column(name)} {operator} ?")
            self._params.append(value)
        return self

    def where_in(self, name: str, values: Iterable[Any]) -> Query[E]:
        """Rows whose column is one of ``values`` (none: no row)."""
        items = list(values)
        if not items:
            self._where.append("0")
        else:
            self._where.append(f"{self._column(name)} IN ({', '.join('?' for _ in items)})")
            self._params.extend(items)
        return self

    def contains(self, name: str, text: str | None) -> Query[E]:
        """Rows whose text column contains ``text`` (case-insensitive, wildcards literal)."""
        if text is not None and text.strip():
            self._where.append(f"{self._column(name)} LIKE ? ESCAPE '\\'")
            self._params.append(like_pattern(check_search_text(text, name)))
        return self

    def search(self, text: str | None, *columns: str) -> Query[E]:
        """Rows where every word of ``text`` is in one of ``columns`` (default: the entity's search fields)."""
        if text is None or not text.strip():
            return self
        fields = columns or self._rt.search_columns
        if not fields:
            raise ValueError(f"{self._rt.name} declares no search fields")
        quoted = [self._column(c) for c in fields]
        for word in check_search_text(text).split(" "):
            self._where.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in quoted) + ")")
            self._params.extend([like_pattern(word)] * len(quoted))
        return self

    def where_sql(self, condition: str, *params: Any) -> Query[E]:
        """A condition in SQL over this entity's columns, with ``?`` parameters (for the rare rule the others miss)."""
        self._where.append(f"({condition})")
        self._params.extend(params)
        return self

    def order_by(self, *names: str) -> Query[E]:
        """Sort by these columns; ``-name`` sorts descending. The id always breaks ties."""
        parts = [f"{self._column(n[1:])} DESC" if n.startswith("-") else self._column(n) for n in names]
        if "id" not in names and "-id" not in names:
            parts.append('"id"')
        self._order = ", ".join(parts)
        return self

    def in_insertion_order(self, newest_first: bool = False) -> Query[E]:
        """Sort by when rows were inserted (SQLite's rowid): for keys that do not sort like their age (uuids)."""
        self._order = "rowid DESC" if newest_first else "rowid"
        return self

    def _sql(self) -> str:
        where = f" WHERE {' AND '.join(self._where)}" if self._where else ""
        return f"{self._rt.select_sql}{where} ORDER BY {self._order}"

    def all(self, limit: int | None = None) -> list[E]:
        """The matching records (the first ``limit`` of them, if given)."""
        load = self._rt.load
        if limit is None:
            return [load(row) for row in self._conn.execute(self._sql(), self._params)]
        return [load(row) for row in self._conn.execute(self._sql() + " LIMIT ?", [*self._params, limit])]

    def first(self) -> E | None:
        row = self._conn.execute(self._sql() + " LIMIT 1", self._params).fetchone()
        return None if row is None else self._rt.load(row)

    def count(self) -> int:
        where = f" WHERE {' AND '.join(self._where)}" if self._where else ""
        return int(self._conn.execute(f"SELECT COUNT(*) FROM {quote(self._rt.table.name)}{where}", self._params).fetchone()[0])

    def exists(self) -> bool:
        return self.first() is not None

    def page(self, limit: int, cursor: str | None) -> Page[E]:
        """One page of results; ``next_cursor`` continues where it ends."""
        return self.page_at(limit, decode_cursor(cursor))

    def page_at(self, limit: int, offset: int) -> Page[E]:
        """The page of ``limit`` results from ``offset`` on (for tools whose paging is by offset or page number)."""
        load = self._rt.load
        rows = [load(row) for row in self._conn.execute(self._sql() + " LIMIT ? OFFSET ?", [*self._params, limit, offset])]
        total = self.count() if rows or offset else 0
        end = offset + len(rows)
        return Page(items=rows, total=total, next_cursor=str(end) if end < total else None)


class RecordAccess:
    """The record API of a tool's context: ``conn`` is the call's SQLite connection, inside its transaction."""

    __slots__ = ()
    conn: sqlite3.Connection

    def query(self, cls: type[E]) -> Query[E]:
        return Query(self.conn, runtime_of(cls))

    def find(self, cls: type[E], /, **equal: Any) -> E | None:
        """The first record (in id order) whose columns equal these values, or None."""
        return Query[E](self.conn, runtime_of(cls)).where(**equal).first()

    def exists(self, cls: type[Any], /, **equal: Any) -> bool:
        return self.find(cls, **equal) is not None

    def fetch(self, cls: type[E], key: object) -> E | None:
        """The record with this id, or None."""
        runtime = runtime_of(cls)
        row = self.conn.execute(runtime.by_id_sql, (key,)).fetchone()
        return None if row is None else runtime.load(row)

    def fetch_many(self, cls: type[E], keys: Iterable[object]) -> dict[Any, E]:
        """The records with these ids, by id, in one query (missing ids are absent)."""
        wanted = sorted({k for k in keys if k is not None}, key=str)
        if not wanted:
            return {}
        records = Query[E](self.conn, runtime_of(cls)).where_in("id", wanted).all()
        return {getattr(r, "id"): r for r in records}

    def insert(self, record: E) -> E:
        runtime = runtime_of(type(record))
        self.conn.execute(runtime.insert_sql, runtime.encode(record))
        return record

    def insert_many(self, records: Sequence[Any]) -> None:
        if not records:
            return
        runtime = runtime_of(type(records[0]))
        self.conn.executemany(runtime.insert_sql, [runtime.encode(r) for r in records])

    def update(self, record: E, /, **changes: Any) -> E:
        """Write ``changes`` to the record's row; returns the record as it now is."""
        if not changes:
            return record
        runtime = runtime_of(type(record))
        sets = []
        params: list[Any] = []
        for name, value in changes.items():
            if name == "id" or name not in runtime.column_set:
                raise ValueError(f"{runtime.name} has no updatable column {name!r}")
            sets.append(f"{quote(name)} = ?")
            params.append(json_text(value) if name in runtime.json_columns and value is not None else value)
        params.append(getattr(record, "id"))
        self.conn.execute(f"UPDATE {quote(runtime.table.name)} SET {', '.join(sets)} WHERE id = ?", params)
        attributes = runtime.attributes
        return replace_record(record, {attributes[c]: v for c, v in changes.items()})  # type: ignore[no-any-return]

    def delete(self, record: Any) -> None:
        runtime = runtime_of(type(record))
        self.conn.execute(runtime.delete_sql, (record.id,))

    def sql(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of a read-only SQL statement (aggregates: sums, counts by group)."""
        return list(self.conn.execute(statement, params))
