"""Showing a caller's value inside a message without echoing all of it.

A name, id or query written by a model or a client can be a megabyte long; a message quotes at
most ``limit`` characters of it and says how long it was, so errors stay short and still point at
the value that was wrong.
"""

from __future__ import annotations

__all__ = ["abridge"]


def abridge(value: object, limit: int = 80) -> str:
    """``repr`` of a string, cut to about ``limit`` characters; only the type name of anything else."""
    if not isinstance(value, str):
        return f"a {type(value).__name__}"  # repr of a nested value can itself recurse too deep
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value):,} characters)"
