"""Bounds on what a call may carry and what an error may echo: nothing a caller sends can blow up a reply.

Arguments are checked before validation (``argument_problem``): nesting depth, string length, NUL
characters, key counts. Error messages show offending values abridged (``abridge``) and are cut at
``MAX_ERROR_LENGTH`` characters, so a 1 MB id is never echoed back into a model's context.
"""

from __future__ import annotations

import reprlib
from typing import Any

#: Longest error message a tool result carries.
MAX_ERROR_LENGTH = 800
#: Deepest nesting of lists and objects an argument may have.
MAX_DEPTH = 12
#: Longest string an argument may hold (fields with their own, lower limits say so in their schema).
MAX_STRING = 20_000
#: Most keys or items one object or list may hold.
MAX_ITEMS = 1_000

_repr = reprlib.Repr()
_repr.maxlevel = 3
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 5


def abridge(value: Any) -> str:
    """A short, safe rendering of any value (never recursion, never megabytes)."""
    try:
        return _repr.repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still shown as something
        return f"<{type(value).__name__}>"


def bound_message(message: str) -> str:
    if len(message) <= MAX_ERROR_LENGTH:
        return message
    return message[: MAX_ERROR_LENGTH - 40].rstrip() + f" ... ({len(message)} characters, cut)"


def argument_problem(arguments: dict[str, Any]) -> str | None:
    """What makes these arguments unacceptable before any validation, or None. Iterative: no recursion."""
    stack: list[tuple[Any, str, int]] = [(arguments, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, str):
            if len(value) > MAX_STRING:
                return f"'{where}' is {len(value):,} characters long; at most {MAX_STRING:,} are accepted"
            if "\x00" in value:
                return f"'{where}' contains a NUL character (\\u0000), which no field accepts"
            continue
        if isinstance(value, dict):
            items: list[tuple[Any, Any]] = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            continue
        if depth >= MAX_DEPTH:
            return f"'{where or '(arguments)'}' is nested more than {MAX_DEPTH} levels deep"
        if len(items) > MAX_ITEMS:
            return f"'{where or '(arguments)'}' holds {len(items):,} entries; at most {MAX_ITEMS:,} are accepted"
        for key, item in items:
            if isinstance(key, str) and (len(key) > 200 or "\x00" in key):
                return f"an argument name in '{where or '(arguments)'}' is not a valid name ({abridge(key)})"
            stack.append((item, f"{where}.{key}" if where else str(key), depth + 1))
    return None
