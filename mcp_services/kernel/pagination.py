"""Paged lists: the one shape every list/search tool returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Generic, TypeVar

from pydantic import Field

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


def page_of(items: list[T], limit: int, cursor: str | None) -> Page[T]:
    """One page of a list already filtered and sorted in Python (an order SQL cannot give, e.g. folders first)."""
    offset = decode_cursor(cursor)
    chunk = items[offset : offset + limit]
    end = offset + len(chunk)
    return Page(items=chunk, total=len(items), next_cursor=str(end) if end < len(items) else None)
