"""Sheets' A1 notation (developers.google.com/sheets/api/guides/concepts#cell): ``Sheet1!A1:B2``, ``'My Sheet'!A:A``,
``Sheet1!1:2``, ``A5:A`` (open to the end), ``B3`` (one cell), ``Sheet1`` (the whole tab). Rows and columns count
from 1; an open end is None."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.query.ast import QueryError

SUPPORTED = ("Sheet1!A1:B2, 'My Sheet'!A1:B2, A1:B2 (the first tab), Sheet1!A:B (whole columns), Sheet1!2:5 "
             "(whole rows), Sheet1!A5:C (to the end), Sheet1!B3 (one cell), Sheet1 (the whole tab)")
_CELL = re.compile(r"^\$?([A-Za-z]{0,3})\$?(\d*)$")


@dataclass(frozen=True)
class A1:
    """A rectangle of one tab: ``sheet`` (None: the first tab), first and last row and column (None: open)."""

    sheet: str | None
    row1: int | None = None
    col1: int | None = None
    row2: int | None = None
    col2: int | None = None

    def rows(self, last: int) -> range:
        return range(self.row1 or 1, (self.row2 or last) + 1)

    def cols(self, last: int) -> range:
        return range(self.col1 or 1, (self.col2 or last) + 1)


def column_number(letters: str) -> int:
    number = 0
    for ch in letters.upper():
        number = number * 26 + ord(ch) - 64
    return number


def column_letters(number: int) -> str:
    out = ""
    while number > 0:
        number, rest = divmod(number - 1, 26)
        out = chr(65 + rest) + out
    return out


def _error(text: str, problem: str) -> QueryError:
    return QueryError("A1 range", text, problem, SUPPORTED)


def _corner(text: str, whole: str) -> tuple[int | None, int | None]:
    m = _CELL.match(text.strip())
    if m is None or not (m.group(1) or m.group(2)):
        raise _error(whole, f"{text!r} is not a cell, a column or a row")
    row = int(m.group(2)) if m.group(2) else None
    if row == 0:
        raise _error(whole, "rows count from 1")
    return row, column_number(m.group(1)) if m.group(1) else None


def parse_a1(text: str) -> A1:
    """``text`` as an ``A1`` range; ``QueryError`` when it is not one."""
    raw = text.strip()
    if not raw:
        raise _error(text, "the range is empty")
    sheet: str | None = None
    cells = raw
    if raw.startswith("'"):
        m = re.match(r"^'((?:[^']|'')+)'(?:!(.*))?$", raw)
        if m is None:
            raise _error(text, "a quoted tab name needs its closing quote")
        sheet, cells = m.group(1).replace("''", "'"), m.group(2) or ""
    elif "!" in raw:
        sheet, cells = raw.split("!", 1)
    elif not re.match(r"^\$?[A-Za-z]{0,3}\$?\d*(?::\$?[A-Za-z]{0,3}\$?\d*)?$", raw):
        return A1(raw)  # a tab's name alone: the whole tab
    if not cells:
        return A1(sheet)
    first, colon, second = cells.partition(":")
    r1, c1 = _corner(first, text)
    if colon and not second:
        raise _error(text, "the range ends with ':' and no second corner")
    if not second:
        if r1 is None or c1 is None:
            raise _error(text, "one cell needs a column and a row (B3)")
        return A1(sheet, r1, c1, r1, c1)
    r2, c2 = _corner(second, text)
    if c1 is None and (c2 is not None or r2 is None):
        raise _error(text, "a range of whole rows names rows at both ends (2:5)")
    if r1 is None and r2 is not None:
        raise _error(text, "a range of whole columns names columns at both ends (A:C)")
    if r1 is not None and r2 is not None and r2 < r1 or c1 is not None and c2 is not None and c2 < c1:
        raise _error(text, "a range ends before it starts")
    return A1(sheet, r1, c1, r2, c2)


def a1_text(sheet: str, row1: int, col1: int, row2: int, col2: int) -> str:
    """``Summary!A1:B2`` (a quoted name where it needs quotes)."""
    name = sheet if re.fullmatch(r"[A-Za-z0-9_]+", sheet) else "'" + sheet.replace("'", "''") + "'"
    first = f"{column_letters(col1)}{row1}"
    last = f"{column_letters(col2)}{row2}"
    return f"{name}!{first}" if first == last else f"{name}!{first}:{last}"
