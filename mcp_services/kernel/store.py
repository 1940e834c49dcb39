"""The Store: one service's typed state in one episode, on SQLite.

In memory for rollouts (snapshot and restore are a memcpy through SQLite's serialize API), or in a
file for interactive use (WAL journal: a process killed mid-call reopens consistent). Every tool
call runs in one transaction (``Store.transaction``): it commits whole or changes nothing.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from functools import cache

from sqlalchemy import JSON, MetaData, Table, create_engine
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from mcp_services.kernel.errors import ErrorCode, ToolError


#: How long a file store waits for another process's write lock before a call fails with store_busy.
BUSY_TIMEOUT_MS = 10_000

_ID = re.compile(r"^([A-Za-z][A-Za-z0-9]*)_(\d{1,9})$")

#: Tables whose names start with this are the kernel's bookkeeping, never part of dumps or diffs.
KERNEL_TABLE_PREFIX = "_kernel_"

Row = dict[str, Any]
TableDump = dict[str, Row]  # primary key (as text) -> row
StateDump = dict[str, TableDump]  # table name -> rows


class Transaction:
    """One call's unit of work on a store's connection (``Store.transaction`` opens and ends it)."""

    __slots__ = ("conn", "_engine", "session")

    def __init__(self, conn: sqlite3.Connection, engine: Engine) -> None:
        self.conn = conn
        self._engine = engine
        self.session: Session | None = None

    def orm_session(self) -> Session:
        """A SQLAlchemy session inside this same transaction, made on first use (ORM-based code)."""
        if self.session is None:
            self.session = Session(self._engine, expire_on_commit=False, autoflush=True)
            self.session.begin()
        return self.session



class Store:
    """The SQLite state of one service in one episode."""

    def __init__(self, metadata: MetaData, connection: sqlite3.Connection, path: Path | None) -> None:
        self.metadata = metadata
        self.path = path
        self._raw = connection
        # Autocommit at the driver level; ``transaction`` emits BEGIN itself (the documented way
        # to get real SQLite transactions through pysqlite).
        self._raw.isolation_level = None
        self._raw.execute("PRAGMA foreign_keys=ON")
        #: Committed write transactions so far: a store whose count has not moved is unchanged,
        #: which lets grading skip dumping it.
        self.write_count = 0
        self.engine = _engine_for(self._raw)
        self._tables, self._json_columns = _table_info(metadata)
        self._tree_roots: list[tuple[str, str, int]] | None = None

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def in_memory(cls, metadata: MetaData, image: bytes | None = None) -> Store:
        """A private in-memory store, empty (schema only) or loaded from a snapshot image."""
        connection = sqlite3.connect(":memory:", check_same_thread=False)
        store = cls(metadata, connection, None)
        if image is None:
            metadata.create_all(store.engine)
        else:
            store.restore(image)
        return store

    @classmethod
    def open_file(cls, metadata: MetaData, path: Path, image: bytes | None = None) -> tuple[Store, bool]:
        """Open (or create from ``image``) a file-backed store. Returns the store and whether it is new."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        is_new = not path.exists() or path.stat().st_size == 0
        connection = sqlite3.connect(str(path), check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        store = cls(metadata, connection, path)
        if is_new:
            if image is None:
                metadata.create_all(store.engine)
            else:
                store.restore(image)
        else:
            store._check_schema()
        return store, is_new

    def _check_schema(self) -> None:
        present = {r[0] for r in self._raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = sorted(t.name for t in self.metadata.sorted_tables if t.name not in present)
        if missing:
            raise ValueError(
                f"database file {self.path} does not hold this service's state (missing tables: "
                f"{', '.join(missing)}); pass a different --db file or delete this one to start fresh"
            )

    # -- transactions ----------------------------------------------------------------------------

    @contextmanager
    def transaction(self, *, read_only: bool = False) -> Iterator[Transaction]:
        """One unit of work: commits on success, rolls back on any exception (or always, if read-only).

        The transaction is SQLite's own (``BEGIN`` ... ``COMMIT``) on the raw connection, so a call
        costs what its statements cost; an ORM session, if a tool asks for one, joins it.
        """
        conn = self._raw
        tx = Transaction(conn, self.engine)
        before = conn.total_changes
        try:
            # A file store may be shared with other processes: take the write lock up front (waiting
            # up to the busy timeout), so two writers queue instead of failing half-way.
            conn.execute("BEGIN IMMEDIATE" if self.path is not None and not read_only else "BEGIN")
        except sqlite3.OperationalError as exc:
            raise _busy(exc) from exc
        try:
            yield tx
            if tx.session is not None:
                tx.session.flush()
            if read_only:
                conn.execute("ROLLBACK")
            else:
                conn.execute("COMMIT")
                if conn.total_changes != before:
                    self.write_count += 1
        except (IntegrityError, sqlite3.IntegrityError) as exc:
            _rollback(conn)
            raise ToolError.conflict(_integrity_message(exc)) from exc
        except sqlite3.OperationalError as exc:
            _rollback(conn)
            if _is_busy(exc):
                raise _busy(exc) from exc
            raise
        except StatementError as exc:
            _rollback(conn)
            # A value SQLite or a column type refused: the caller's data, not a bug.
            if isinstance(exc.orig, (ValueError, TypeError, sqlite3.InterfaceError)):
                raise ToolError.invalid_argument(f"A value could not be stored: {exc.orig}") from exc
            raise
        except BaseException:
            _rollback(conn)
            raise
        finally:
            if tx.session is not None:
                tx.session.close()

    def insert_rows(self, table_name: str, rows: list[Row]) -> None:
        """Insert raw rows (task setup records), all or nothing, with a clear error on bad input."""
        table = self.table(table_name)
        unknown = sorted({k for row in rows for k in row} - set(table.columns.keys()))
        if unknown:
            raise ValueError(f"table {table_name!r} has no column(s) {', '.join(unknown)}")
        json_columns = self._json_columns[table_name]
        with self.transaction() as tx:
            for columns in sorted({tuple(row) for row in rows}):
                batch = [row for row in rows if tuple(row) == columns]
                statement = (
                    f"INSERT INTO {_quote(table_name)} ({', '.join(_quote(c) for c in columns)}) "
                    f"VALUES ({', '.join('?' for _ in columns)})"
                )
                tx.conn.executemany(
                    statement,
                    [
                        tuple(json.dumps(row[c]) if c in json_columns and row[c] is not None else row[c] for c in columns)
                        for row in batch
                    ],
                )

    def advance_counters(self, tables: Iterable[str] | None = None) -> None:
        """Move each id counter past the ids already stored (``ch_0042`` -> the next ``ch`` is 43 or later).

        Setup records carry ids made in another episode; without this a tool could mint one of them again.
        ``tables`` limits the scan to the tables that received rows.
        """
        wanted = None if tables is None else set(tables)
        highest: dict[str, int] = {}
        for table in self._tables:
            if "id" not in table.columns or (wanted is not None and table.name not in wanted):
                continue
            statement = (
                "SELECT substr(id, 1, instr(id, '_') - 1), max(CAST(substr(id, instr(id, '_') + 1) AS INTEGER)) "
                f"FROM {_quote(table.name)} WHERE CAST(id AS TEXT) GLOB '[A-Za-z]*_[0-9]*' GROUP BY 1"
            )
            for prefix, number in self._raw.execute(statement):
                if prefix and _ID.match(f"{prefix}_{number}"):
                    highest[prefix] = max(highest.get(prefix, 0), int(number))
        if not highest:
            return
        with self.transaction():
            for prefix, number in highest.items():
                self._raw.execute(
                    'INSERT INTO "_kernel_counters" (name, value) VALUES (?, ?) '
                    "ON CONFLICT(name) DO UPDATE SET value = max(value, excluded.value)",
                    (prefix, number),
                )

    def insert_order(self, tables: Iterable[str]) -> list[str]:
        """``tables``, each after the tables its foreign keys point to: setup rows inserted table by table in this
        order never reference a row still to come (a document planted in a folder planted later)."""
        names = list(dict.fromkeys(tables))
        done: list[str] = []

        def visit(name: str, path: frozenset[str]) -> None:
            if name in done or name in path:
                return
            for key in self.table(name).foreign_keys:
                parent = key.column.table.name
                if parent in names and parent != name:
                    visit(parent, path | {name})
            done.append(name)

        for name in names:
            visit(name, frozenset())
        return done

    def table(self, name: str) -> Table:
        table = self.metadata.tables.get(name)
        if table is None or name.startswith(KERNEL_TABLE_PREFIX):
            known = ", ".join(t.name for t in self._tables)
            raise ValueError(f"no table {name!r} in this store; tables: {known}")
        return table

    # -- snapshots ---------------------------------------------------------------------------------

    def snapshot(self) -> bytes:
        """The whole state as an image (bytes) that ``restore`` brings back exactly."""
        return self._raw.serialize()

    def restore(self, image: bytes) -> None:
        """Replace the whole state with a snapshot image."""
        self.write_count += 1
        self._tree_roots = None  # an image of this store has its schema, but read the roots again
        if self.path is None:
            self._raw.deserialize(image)
            return
        source = sqlite3.connect(":memory:")
        try:
            source.deserialize(image)
            source.backup(self._raw)
        finally:
            source.close()

    # -- reading the state ------------------------------------------------------------------------

    def dump_image(self, image: bytes) -> StateDump:
        """The dump of a snapshot image, without touching this store's state."""
        other = Store(self.metadata, sqlite3.connect(":memory:", check_same_thread=False), None)
        try:
            other._raw.deserialize(image)
            return other.dump()
        finally:
            other.close()

    def dump(self) -> StateDump:
        """Every row of every table, keyed by primary key text; JSON columns decoded."""
        state: StateDump = {}
        for table in self._tables:
            columns, pk = _columns(table)
            cursor = self._raw.execute(
                f'SELECT {", ".join(_quote(c) for c in columns)} FROM {_quote(table.name)} '
                f'ORDER BY {", ".join(_quote(c) for c in pk)}'
            )
            state[table.name] = self._rows(table.name, columns, pk, cursor)
        return state

    def changed_rows_since(self, image: bytes) -> tuple[StateDump, StateDump]:
        """The rows that differ between a snapshot ``image`` of this store and now: (rows then, rows now).

        Only the tables whose database pages differ between the two images are read, and of those
        only the rows on the pages that changed (found from the images' b-trees), so the cost follows
        the size of the change, not of the store. ``diff_states`` of the pair is the same as
        ``diff_states`` of two full dumps.
        """
        then: StateDump = {t.name: {} for t in self._tables}
        now: StateDump = {t.name: {} for t in self._tables}
        current = self._raw.serialize()
        if current == image:
            return then, now
        changed = _changed_rows(self._trees(), image, current)
        before: sqlite3.Connection | None = None
        try:
            for table in self._tables:
                rowids = changed.get(table.name, [])
                if table.name not in changed or (rowids is not None and not rowids):
                    continue  # untouched, or only an index page moved (its rows' table pages did not change)
                columns, pk = _columns(table)
                statement = f"SELECT {', '.join(_quote(c) for c in columns)} FROM {_quote(table.name)}"
                params: list[int] = []
                if rowids is not None and len(set(rowids)) <= _MAX_ROWIDS:
                    params = sorted(set(rowids))
                    statement += f" WHERE rowid IN ({', '.join('?' for _ in params)})"
                if before is None:
                    # The image is read on a throwaway connection: attaching it to the live one would
                    # invalidate the live connection's cached statements.
                    before = sqlite3.connect(":memory:")
                    before.deserialize(image)
                rows_now = set(self._raw.execute(statement, params))
                rows_then = set(before.execute(statement, params))
                now[table.name] = self._rows(table.name, columns, pk, rows_now - rows_then)
                then[table.name] = self._rows(table.name, columns, pk, rows_then - rows_now)
        finally:
            if before is not None:
                before.close()
        return then, now

    def _trees(self) -> list[tuple[str, str, int]]:
        """(b-tree name, its table, its root page) of every table and index; fixed once the schema is made."""
        if self._tree_roots is None:
            self._tree_roots = [
                (name, table, int(root))
                for name, table, root in self._raw.execute("SELECT name, tbl_name, rootpage FROM sqlite_schema WHERE rootpage > 0")
            ]
        return self._tree_roots

    def _rows(self, table: str, columns: list[str], pk: list[str], cursor: Iterable[Sequence[Any]]) -> TableDump:
        json_cols = self._json_columns[table]
        rows: TableDump = {}
        for values in cursor:
            row = dict(zip(columns, values, strict=True))
            for col in json_cols:
                if isinstance(row[col], str):
                    row[col] = json.loads(row[col])
            rows["|".join(str(row[k]) for k in pk)] = row
        return dict(sorted(rows.items()))

    def meta(self) -> dict[str, str]:
        """The kernel's facts about this store (which service, which world seed)."""
        try:
            return dict(self._raw.execute('SELECT key, value FROM "_kernel_meta"').fetchall())
        except sqlite3.OperationalError:
            return {}

    def set_meta(self, key: str, value: str) -> None:
        """Record a kernel fact in the store itself (it travels with snapshots and files)."""
        with self.transaction():
            self._raw.execute('INSERT OR REPLACE INTO "_kernel_meta" (key, value) VALUES (?, ?)', (key, value))

    def count_rows(self) -> int:
        return sum(
            self._raw.execute(f"SELECT COUNT(*) FROM {_quote(t.name)}").fetchone()[0] for t in self._tables
        )

    def close(self) -> None:
        self.engine.dispose()
        self._raw.close()


@cache
def _prototype_engine() -> Engine:
    """One SQLite engine whose initialised dialect every store reuses (create_engine costs ms)."""
    engine = create_engine("sqlite://", poolclass=StaticPool)
    with engine.connect():
        pass  # initialises the dialect against a real connection
    return engine


def _engine_for(connection: sqlite3.Connection) -> Engine:
    """A cheap engine over exactly this connection, sharing the prototype's dialect."""
    prototype = _prototype_engine()
    pool = StaticPool(lambda: connection, dialect=prototype.dialect)  # type: ignore[arg-type]  # a DBAPI connection is what the creator returns
    return Engine(pool, prototype.dialect, prototype.url)


_TABLE_INFO: dict[int, tuple[list[Table], dict[str, set[str]]]] = {}


def _table_info(metadata: MetaData) -> tuple[list[Table], dict[str, set[str]]]:
    """A service's own tables (kernel tables excluded) and their JSON columns, computed once."""
    info = _TABLE_INFO.get(id(metadata))
    if info is None:
        tables = [t for t in metadata.sorted_tables if not t.name.startswith(KERNEL_TABLE_PREFIX)]
        info = (tables, {t.name: {c.name for c in t.columns if isinstance(c.type, JSON)} for t in tables})
        _TABLE_INFO[id(metadata)] = info
    return info


def _columns(table: Table) -> tuple[list[str], list[str]]:
    return list(table.columns.keys()), [c.name for c in table.primary_key.columns]


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``at``: (value, the offset after it)."""
    first = data[at]
    if first < 0x80:
        return first, at + 1
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _btree_pages(image: bytes, root: int, size: int, wanted: set[int], spill: bool = False) -> tuple[dict[int, list[int] | None], bool]:
    """The pages of one b-tree (from its root page); for the ``wanted`` table leaves, the rowids they hold.

    With ``spill``, also whether any cell spills onto overflow pages (a change may then live on a page
    no tree lists). Read straight from the image's bytes (the SQLite file format): no query walks the
    database, and only the pages asked about are parsed cell by cell.
    """
    usable = size - image[20]
    pages: dict[int, list[int] | None] = {}
    overflow = False
    stack = [root]
    while stack:
        pageno = stack.pop()
        if pageno in pages or pageno < 1 or pageno * size > len(image):
            continue
        start = (pageno - 1) * size
        header = start + (100 if pageno == 1 else 0)
        kind = image[header]
        cells = int.from_bytes(image[header + 3:header + 5], "big")
        interior = kind in (0x02, 0x05)
        pointers = header + (12 if interior else 8)
        pages[pageno] = None
        if interior:
            for n in range(cells):
                cell = start + int.from_bytes(image[pointers + 2 * n:pointers + 2 * n + 2], "big")
                stack.append(int.from_bytes(image[cell:cell + 4], "big"))
            stack.append(int.from_bytes(image[header + 8:header + 12], "big"))
            continue
        if kind != 0x0D or not (pageno in wanted or spill):
            continue
        rowids = []
        for n in range(cells):
            cell = start + int.from_bytes(image[pointers + 2 * n:pointers + 2 * n + 2], "big")
            payload, at = _varint(image, cell)
            if payload > usable - 35:
                overflow = True
            rowids.append(_varint(image, at)[0])
        if pageno in wanted:
            pages[pageno] = rowids
    return pages, overflow


_MAX_ROWIDS = 500  # more rows than this on changed pages: compare the whole table (one statement, no huge IN list)
Changed = dict[str, list[int] | None]  # table -> rowids that may have changed (None: compare the whole table)


def _changed_rows(roots: list[tuple[str, str, int]], before: bytes, after: bytes) -> Changed:
    """Per table, the rows that may differ between two images of one schema (its b-tree ``roots``), from the pages that differ.

    A page belongs to a table or one of its indexes in either image. A changed leaf page of a table names
    its rows (every row on it, in both images); a changed interior page, or a changed page no tree holds
    (an overflow page) where the table spills onto overflow pages, means the whole table is compared.
    """
    size = int.from_bytes(before[16:18], "big") or 65536
    pages = max(len(before), len(after)) // size
    differing = {
        n + 1 for n in range(1, pages)  # page 1 (the schema and header) changes with every write
        if before[n * size:(n + 1) * size] != after[n * size:(n + 1) * size]
    }
    changed: Changed = {}
    if not differing:
        return changed
    trees = [(image, name, table, root) for image in (after, before) for name, table, root in roots]
    placed: set[int] = set()
    for image, name, table, root in trees:
        tree, _ = _btree_pages(image, root, size, differing if name == table else set())
        placed |= tree.keys()
        for pageno in differing & tree.keys():
            rowids, known = tree[pageno], changed.get(table, [])
            if name != table:  # an index page: the table's own pages say which rows moved
                changed.setdefault(table, [])
            else:
                changed[table] = None if rowids is None or known is None else known + rowids
    if differing - placed:  # overflow pages changed: the tables that spill are compared whole
        for image, name, table, root in trees:
            if name == table and _btree_pages(image, root, size, set(), spill=True)[1]:
                changed[table] = None
    return changed


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _busy(exc: sqlite3.OperationalError) -> Exception:
    if not _is_busy(exc):
        return exc
    return ToolError(
        ErrorCode.STORE_BUSY,
        "Another process is changing this service's state right now and held it past the wait limit; "
        "nothing was changed: retry the call.",
    )


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _integrity_message(exc: Exception) -> str:
    detail = str(exc.orig) if isinstance(exc, IntegrityError) else str(exc)
    if "UNIQUE" in detail:
        return f"That would duplicate an existing record ({detail}). Use the existing one or change the value."
    if "NOT NULL" in detail:
        return f"A required value is missing ({detail})."
    if "FOREIGN KEY" in detail:
        return f"A referenced record does not exist ({detail})."
    return f"The change breaks a rule of the stored data ({detail})."


def rows_of(dump: Mapping[str, TableDump], table: str) -> list[Row]:
    """The rows of one table of a dump, in primary-key order."""
    return list(dump.get(table, {}).values())
