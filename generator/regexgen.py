"""Strings that match a regular expression: for seeding and example calls of fields with a ``pattern``.

Walks the parse tree of Python's own regex parser; gives up (returns None) on what it cannot
build, and every result is checked against the pattern before it is returned.
"""

from __future__ import annotations

import random
import re
import string
from typing import Any

try:  # Python 3.11+
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older interpreters
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

_PREFERRED = string.ascii_lowercase + string.digits
_CATEGORY_CHARS = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_NOT_DIGIT: string.ascii_letters,
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: _PREFERRED,
    C.CATEGORY_WORD: _PREFERRED,
    C.CATEGORY_NOT_WORD: "-.",
}
_PRINTABLE = [chr(c) for c in range(32, 127)]


class _GiveUp(Exception):
    pass


def string_matching(pattern: str, rng: random.Random, *, min_length: int = 0, max_length: int | None = None) -> str | None:
    """A string that ``re.search(pattern, s)`` accepts (and within the length bounds), or None."""
    try:
        compiled = re.compile(pattern)
        parsed = P.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    for attempt in range(8):
        try:
            text = "".join(_emit(parsed, rng, {}, depth=0, spread=attempt))
        except (_GiveUp, RecursionError):
            return None
        if compiled.search(text) and len(text) >= min_length and (max_length is None or len(text) <= max_length):
            return text
    return None


def _emit(items: Any, rng: random.Random, groups: dict[int, str], depth: int, spread: int) -> list[str]:
    if depth > 40:
        raise _GiveUp
    out: list[str] = []
    for op, arg in items:
        if op is C.LITERAL:
            out.append(chr(arg))
        elif op is C.NOT_LITERAL:
            out.append(next(c for c in _PREFERRED if ord(c) != arg))
        elif op is C.ANY:
            out.append(rng.choice(string.ascii_lowercase))
        elif op is C.IN:
            out.append(_pick_in(arg, rng))
        elif op is C.BRANCH:
            branches = arg[1]
            out.extend(_emit(rng.choice(branches), rng, groups, depth + 1, spread))
        elif op is C.SUBPATTERN:
            group, _, _, sub = arg
            text = "".join(_emit(sub, rng, groups, depth + 1, spread))
            if group is not None:
                groups[group] = text
            out.append(text)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", object())):
            low, high, sub = arg
            top = low + 2 + spread if high is C.MAXREPEAT else min(high, low + 2 + spread)
            count = rng.randint(low, max(low, top))
            if count == 0 and low == 0 and high != 0 and rng.random() < 0.5:
                count = 1
            for _ in range(count):
                out.extend(_emit(sub, rng, groups, depth + 1, spread))
        elif op is C.AT:
            continue  # anchors emit nothing
        elif op is C.GROUPREF:
            out.append(groups.get(arg, ""))
        elif op in (C.ASSERT, C.ASSERT_NOT):
            continue  # lookarounds: hope the rest satisfies them; the final check decides
        elif op is C.CATEGORY:
            out.append(rng.choice(_CATEGORY_CHARS.get(arg, _PREFERRED)))
        else:
            raise _GiveUp
    return out


def _pick_in(items: list[tuple[Any, Any]], rng: random.Random) -> str:
    negate = bool(items) and items[0][0] is C.NEGATE
    allowed: list[str] = []
    for op, arg in items:
        if op is C.LITERAL:
            allowed.append(chr(arg))
        elif op is C.RANGE:
            low, high = arg
            span = [chr(c) for c in range(low, min(high, low + 200) + 1)]
            preferred = [c for c in span if c in _PREFERRED]
            allowed.extend(preferred or span)
        elif op is C.CATEGORY:
            allowed.extend(_CATEGORY_CHARS.get(arg, _PREFERRED))
    if negate:
        excluded = set(allowed)
        choices = [c for c in _PREFERRED + "-_." if c not in excluded] or [c for c in _PRINTABLE if c not in excluded]
        if not choices:
            raise _GiveUp
        return rng.choice(choices)
    if not allowed:
        raise _GiveUp
    return rng.choice(allowed)
