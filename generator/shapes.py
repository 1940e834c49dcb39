"""Shapes of values that are filler, not data: a field's name and a counter (``desc-1``), "Quarterly city",
"Pilot Audit 1", "TRA84846". The audit counts them in seeded rows; the seeder never seeds one."""

from __future__ import annotations

import re
from typing import Any

from generator.naming import words

_PLACEHOLDER = re.compile(r"^([A-Za-z][A-Za-z0-9]*)-(\d{1,3})$")  # a row counter, not a document number
_WORD_WORD_N = re.compile(r"^[A-Z][a-z]+ [A-Z][a-z]+ \d{1,3}$")
_LETTERS_DIGITS = re.compile(r"^([A-Z]{2,4})\d{4,6}$")


def filler_shape(value: Any, column: str, entity: str) -> str | None:
    """The filler shape ``value`` has in ``entity.column`` (None for a value that reads as data):

    - ``<field>-<n>``: a field's name and a counter (``desc-1``);
    - ``<Adjective> <field>``: one word before the field's own name ("Quarterly city", "Customer line1");
    - ``<Word> <Word> <n>``: two capitalised words and a counter ("Pilot Audit 1");
    - ``<FIELD><digits>``: the field's or entity's first letters and digits ("TRA84846" in a tracking number);
    - ``<field> <n>``: the field's own name and a counter ("city 3").
    """
    if not isinstance(value, str):
        return None
    if is_placeholder(value, column, entity):
        return "<field>-<n>"
    field = [w.lower() for w in words(column)]
    parts = value.split()
    if field and len(parts) == len(field) + 1:
        if [p.lower() for p in parts[1:]] == field and parts[0][:1].isupper():
            return "<Adjective> <field>"
        if [p.lower() for p in parts[:-1]] == field and parts[-1].isdigit():
            return "<field> <n>"
    if _WORD_WORD_N.match(value):
        return "<Word> <Word> <n>"
    code = _LETTERS_DIGITS.match(value)
    if code is not None:
        letters = code.group(1)
        if any(w[: len(letters)].upper() == letters for w in field + words(entity)):
            return "<FIELD><digits>"
    return None


def is_placeholder(value: Any, column: str, entity: str) -> bool:
    """``desc-1`` in ``description``, ``customer-3`` in ``customer``: a field's name and a counter, no value."""
    if not isinstance(value, str):
        return False
    match = _PLACEHOLDER.match(value)
    if match is None:
        return False
    word = match.group(1).lower()
    parts = [p.lower() for p in words(column) + words(entity)]
    return any(word == p or p.startswith(word) or word.startswith(p) for p in parts if p)
