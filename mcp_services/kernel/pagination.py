"""Paged lists: the one shape every list/search tool returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from pydantic import Field
from sqlalchemy import Select, func, select

from mcp_services.kernel.errors import ToolError

T = TypeVar("T")

Limit = Annotated[int, Field(ge=1, le=100, description="Maximum number of items to return (1-100).")]
Cursor = Annotated[
    str | None,
    Field(
        max_length=12,
        description="Pass the next_cursor of a previous page to get the following page; omit for the first.",
    ),
]

#: The largest offset a cursor may hold.
MAX_OFFSET = 10_000_000


@dataclass(slots=True)  # not frozen: ``Page[X](...)`` sets __orig_class__ (ignored without a __dict__)
class Page(Generic[T]):
    """One page of results; ``next_cursor`` is null on the last page."""

    items: list[T]
    total: int
    next_cursor: str | None


def decode_cursor(cursor: str | None) -> int:
    """The offset a cursor stands for; a cursor no page handed out is a clear invalid-argument error."""
    if cursor is None:
        return 0
    if not (cursor.isascii() and cursor.isdigit()) or int(cursor) > MAX_OFFSET:
        shown = cursor if len(cursor) <= 20 else cursor[:17] + "..."
        raise ToolError.invalid_argument(
            f"cursor {shown!r} is not valid; pass the next_cursor value from a previous page, or omit it."
        )
    return int(cursor)


def paginate(ctx: Any, statement: Select[Any], limit: int, cursor: str | None) -> tuple[list[Any], int, str | None]:
    """Run an ORM ``statement`` for one page. Returns (rows, total, next_cursor). (Services not yet on records.)"""
    offset = decode_cursor(cursor)
    total = int(ctx.db.execute(select(func.count()).select_from(statement.order_by(None).subquery())).scalar_one())
    rows = list(ctx.db.scalars(statement.limit(limit).offset(offset)))
    next_offset = offset + len(rows)
    return rows, total, (str(next_offset) if next_offset < total else None)
