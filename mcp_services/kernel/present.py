"""Tool results: how a tool's return value becomes JSON data, and the JSON schema of that data.

A tool annotated to return an entity (``-> Contact``), a page of them (``-> Page[Contact]``) or a
list (``-> list[Contact]``) returns record objects; they are turned into dicts by the entity's
compiled dumper, with derived values added (joins in one query per result), and described by the
entity's record schema. Any other return type (a pydantic model, a dict, a number) goes through
pydantic, as a typed function's result does anywhere.
"""

from __future__ import annotations

import sqlite3
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from mcp_services.kernel.entity import EntityRuntime, is_entity, quote, runtime_of
from mcp_services.kernel.pagination import Page
from mcp_services.kernel.records import RecordAccess

Row = dict[str, Any]
Shape = typing.Literal["record", "page", "list", "other"]

PAGE_FIELDS: dict[str, Any] = {
    "total": {"type": "integer", "description": "How many items match in all pages"},
    "next_cursor": {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": "Cursor for the next page, or null if this is the last",
    },
}


def present_records(conn: sqlite3.Connection, runtime: EntityRuntime, records: Sequence[Any]) -> list[Row]:
    """Records as JSON-ready dicts, derived values included."""
    dump = runtime.dump
    rows = [dump(r) for r in records]
    for name, extra in runtime.extras.items():
        if extra.compute is not None:
            compute = extra.compute
            for row, record in zip(rows, records, strict=True):
                row[name] = compute(record)
            continue
        if extra.batch is not None:
            values = extra.batch(_Reader(conn), records) if records else []
            if len(values) != len(records):
                raise ValueError(f"{runtime.name}.{name}: the batch gave {len(values)} values for {len(records)} records")
            for row, value in zip(rows, values, strict=True):
                row[name] = value
            continue
        via = extra.via or ""
        target = runtime.target_of(via)
        keys = sorted({row[via] for row in rows if row[via] is not None}, key=str)
        found: dict[Any, Any] = {}
        if keys:
            statement = (
                f"SELECT id, {quote(extra.target_field or 'id')} FROM {quote(target.table.name)} "
                f"WHERE id IN ({', '.join('?' for _ in keys)})"
            )
            found = dict(conn.execute(statement, keys).fetchall())
        for row in rows:
            row[name] = found.get(row[via])
    return rows


class _Reader(RecordAccess):
    """Read access to a connection, for derived values computed over a whole result."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


@dataclass(frozen=True, slots=True)
class ResultCodec:
    """How one tool's results are presented and described."""

    shape: Shape
    entity: EntityRuntime | None
    present: Callable[[sqlite3.Connection, Any], Any]
    schema: Callable[[], dict[str, Any]]


def result_codec(result_type: Any) -> ResultCodec:
    """The codec for a tool's return annotation."""
    origin = typing.get_origin(result_type)
    args = typing.get_args(result_type)
    if is_entity(result_type):
        runtime = runtime_of(result_type)
        return ResultCodec(
            "record", runtime, lambda conn, value: present_records(conn, runtime, [value])[0], lambda: runtime.schema
        )
    if origin is Page and args and is_entity(args[0]):
        runtime = runtime_of(args[0])

        def present_page(conn: sqlite3.Connection, page: Page[Any]) -> Row:
            items = present_records(conn, runtime, page.items)
            return {"items": items, "total": page.total, "next_cursor": page.next_cursor}

        def page_schema() -> dict[str, Any]:
            return {
                "type": "object",
                "properties": {"items": {"type": "array", "items": runtime.schema}, **PAGE_FIELDS},
                "required": ["items", "total", "next_cursor"],
            }

        return ResultCodec("page", runtime, present_page, page_schema)
    if origin is list and args and is_entity(args[0]):
        runtime = runtime_of(args[0])
        return ResultCodec(
            "list",
            runtime,
            lambda conn, values: present_records(conn, runtime, values),
            lambda: {"type": "array", "items": runtime.schema},
        )
    adapter: TypeAdapter[Any] = TypeAdapter(result_type)
    return ResultCodec(
        "other", None, lambda conn, value: adapter.dump_python(value, mode="json"), lambda: adapter.json_schema()
    )
