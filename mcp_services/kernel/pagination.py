"""Paged lists: the one shape every list/search tool returns."""

from __future__ import annotations

from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, Field
from sqlalchemy import Select, func, select

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.errors import ToolError

T = TypeVar("T")

Limit = Annotated[int, Field(ge=1, le=100, description="Maximum number of items to return (1-100).")]
Cursor = Annotated[
    str | None,
    Field(description="Pass the next_cursor of a previous page to get the following page; omit for the first."),
]


class Page(BaseModel, Generic[T]):
    """One page of results; ``next_cursor`` is null on the last page."""

    items: list[T]
    total: int = Field(description="How many items match in all pages")
    next_cursor: str | None = Field(description="Cursor for the next page, or null if this is the last")


def paginate(ctx: ToolContext, statement: Select[Any], limit: int, cursor: str | None) -> tuple[list[Any], int, str | None]:
    """Run ``statement`` for one page. Returns (rows, total, next_cursor)."""
    offset = 0
    if cursor is not None:
        if not cursor.isdigit():
            raise ToolError.invalid_argument(
                f"cursor {cursor!r} is not valid; pass the next_cursor value from a previous page, or omit it."
            )
        offset = int(cursor)
    total = int(ctx.db.execute(select(func.count()).select_from(statement.order_by(None).subquery())).scalar_one())
    rows = list(ctx.db.scalars(statement.limit(limit).offset(offset)))
    next_offset = offset + len(rows)
    return rows, total, (str(next_offset) if next_offset < total else None)
