"""What the model reads of a tool result: at most a fixed number of characters, the cut stated.

An error that echoes a megabyte of input, or a listing of every row, would otherwise land in the
model's context whole. ``bound_result`` keeps the start of the text and ends it with a note that
says how much was cut and how to ask for less; the trajectory records exactly that text.
``shows`` tells whether a recorded text is a given result as the model saw it (for re-grading).
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "MIN_MAX_RESULT_CHARS", "bound_result", "shows"]

#: About 16K tokens: more than twice the largest result a reference rollout of the default task set
#: has had (28,047 characters, a calendar listing; ``bench/result_sizes.py`` prints today's), so a
#: solvable task stays solvable, while a runaway result (a megabyte echoed back, every row) is cut.
DEFAULT_MAX_RESULT_CHARS = 64_000
MIN_MAX_RESULT_CHARS = 1_000  # room for the note and a useful start of the result

_NOTE = (
    "\n[harness: this result is {total:,} characters long; only the first {kept:,} are shown. "
    "Ask for less: a narrower query, a filter, or a smaller page.]"
)
_NOTE_AT_END = re.compile(r"\n\[harness: this result is ([\d,]+) characters long; only the first ([\d,]+) are shown\. "
                          r"Ask for less: a narrower query, a filter, or a smaller page\.\]\Z")


def bound_result(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else its start and the note, ``limit`` in all."""
    if len(text) <= limit:
        return text
    kept = limit - len(_NOTE.format(total=len(text), kept=limit))  # the note only gets shorter below
    return text[:kept] + _NOTE.format(total=len(text), kept=kept)


def shows(shown: str, full: str) -> bool:
    """Whether ``shown`` is ``full`` as the model saw it (whole, or cut by ``bound_result``)."""
    if shown == full:
        return True
    match = _NOTE_AT_END.search(shown)
    if match is None:
        return False
    total, kept = (int(group.replace(",", "")) for group in match.groups())
    return total == len(full) and match.start() == kept and shown.startswith(full[:kept])
