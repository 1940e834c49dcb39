"""The values a field's documentation gives it, so seeded rows hold what the product documents.

A column's values are documented where its parameters are: their ``enum``, ``examples`` and ``default``, and
the values their descriptions list (Lufthansa's cabin_class: 'Acceptable values are: "economy", "premium economy",
"business", "first"'; Adyen's payoutSchedule: 'Permitted values: `DEFAULT`, `HOLD`, `DAILY`'; 'byday' or
'bymonth'; e.g. '7'; such as basic, smart, best; ClickSend's match_type '0=All reports'). Without them a string
whose name says nothing got the name of the row's company (a cabin class 'Simpson LLC', a state 'Collins Ltd').
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from generator.naming import words
from generator.shapes import filler_shape
from generator.spec import EntityDef, ServiceSpec
from generator.values import implied_format, is_flag_name

#: Names of columns whose values identify something: one documented example would make every row the same.
_IDENTIFYING = frozenset({"id", "ids", "sid", "uuid", "guid", "key", "token", "code", "reference", "ref", "number",
                          "name", "title", "label", "email", "url", "uri", "phone"})

_QUOTED = re.compile(r"""(?<![A-Za-z])(["'`])([^"'`\n]{0,40})\1|[\u2018\u201c]([^\u2019\u201d\n]{1,40})[\u2019\u201d]""")
#: Sentences that list the values a field takes; the first that lists any wins, in this order.
_LISTS = (
    re.compile(r"(?i)\b(?:acceptable|permitted|possible|allowed|valid|supported|available)\s+values?\b[^:.]*[:.]?\s*([^\n]*)"),
    re.compile(r"(?i)\b(?:one|any) of(?: the following)?[:\s]\s*([^\n]*)"),
    re.compile(r"(?i)\b(?:e\.\s?g\.?|for example|for instance|example)[,:]?\s*([^\n]*)"),
    re.compile(r"(?i)\bsuch as\s+([^\n]*)"),
)
_OR = re.compile(r"""(?:["'`])([^"'`\n]{1,40})(?:["'`])\s+or\s+(?:["'`])([^"'`\n]{1,40})(?:["'`])""")
_CODES = re.compile(r"(?<![\w.-])(-?\d+)\s*=\s*[A-Za-z]")  # "0=All reports, 1=Delivered"
_ARTICLES = frozenset({"a", "an", "the", "this", "that", "your", "its", "their", "any", "all"})
_BARE = re.compile(r"^[A-Za-z0-9][\w .:/+-]{0,30}$")


def listed_values(description: str) -> list[str]:
    """The values ``description`` lists for its field, as written (empty when it lists none)."""
    for pattern in _LISTS:
        for match in pattern.finditer(description):
            values = _values_in(_clause(match.group(1)))
            if values:
                return values
    pairs = _OR.findall(description)
    if pairs:
        return _dedupe([v for pair in pairs for v in pair])
    return _dedupe(_CODES.findall(description))


def _clause(text: str) -> str:
    """The list a sentence starts: up to the end of its parenthesis or sentence."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return text[:i]
            depth -= 1
        elif ch == "." and depth == 0 and (i + 1 == len(text) or text[i + 1] == " ") and not text[:i].lower().endswith("etc"):
            return text[:i]
    return text


def _values_in(clause: str) -> list[str]:
    quoted = [(m.group(2) if m.group(2) is not None else m.group(3) or "").strip() for m in _QUOTED.finditer(clause)]
    if any(quoted):
        return _dedupe([v for v in quoted if v])
    parts = [p.strip(" ()[]") for p in re.split(r",|\bor\b|\band\b|;", re.sub(r"(?i)\betc\.?", "", clause))]
    return _dedupe([p for p in parts if p and _BARE.match(p) and len(p.split()) <= 2
                    and p.split()[0].lower() not in _ARTICLES])


def _dedupe(values: list[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def documented_values(spec: ServiceSpec, entity: str, *, listed: bool = True) -> dict[str, list[Any]]:
    """Column -> the values the parameters writing or filtering it document (enums first, then examples, the
    values their descriptions list, their default; ``listed=False``: enums and examples only, which are values
    whatever the description's prose); only columns some parameter documents values for."""
    found: dict[str, list[Any]] = {}
    for tool in spec.tools:
        if tool.behaviour.entity != entity:
            continue
        properties = tool.parameters.get("properties", {})
        for param, schema in properties.items():
            binding = tool.bindings.get(param)
            if binding is not None and binding.role not in ("field", "filter"):
                continue
            column = (binding.column if binding is not None else None) or param
            values = _schema_values(schema if isinstance(schema, dict) else {}, listed)
            if values:
                found.setdefault(column, [])
                found[column] += [v for v in values if v not in found[column]]
    return found


def _schema_values(schema: dict[str, Any], listed_too: bool = True) -> list[Any]:
    kind = schema.get("type")
    if isinstance(schema.get("enum"), list):
        return [v for v in schema["enum"] if v not in (None, "")]
    examples = [e.strip('"\'') if isinstance(e, str) else e for e in schema.get("examples") or []
                if isinstance(e, (str, int, float)) and not isinstance(e, bool) and e != ""]
    if examples or not listed_too:
        return examples
    description = str(schema.get("description") or "")
    listed: list[Any] = [v for v in listed_values(description) if v]
    if kind in ("number", "integer"):
        listed = [_number(v, kind) for v in listed if _number(v, kind) is not None]
    if listed:
        return listed
    default = schema.get("default")
    return [default] if isinstance(default, (str, int, float)) and not isinstance(default, bool) and default != "" else []


def _number(value: str, kind: str) -> int | float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if kind == "integer" or number.is_integer() else number


@dataclass(frozen=True)
class Documented:
    values: list[Any]
    certain: bool  # an enum or examples: values whatever else the World could put there


def seed_values(spec: ServiceSpec, entity: EntityDef, natural_keys: set[str]) -> dict[str, Documented]:
    """Column -> the values seeded rows take in turn: the documented values of a column the World has nothing
    for (no enum, format, pattern, meaning or reference; not a name, an identifier, a date or a key), and
    0 or 1 for a number named as a yes-or-no (ClickSend's ``enabled``). Values a description lists are less
    certain than an enum or examples (its prose may name things that are no values): the seeder takes them
    only where the field's name gave it nothing to go on."""
    documented = documented_values(spec, entity.name)
    certain = documented_values(spec, entity.name, listed=False)
    out: dict[str, Documented] = {}
    for f in entity.fields:
        if (f.enum or f.pattern or f.format or f.semantic or f.ref or f.name in natural_keys or f.name == entity.label
                or f.type not in ("string", "number", "integer", "any") or implied_format(f.name)
                or (words(f.name) or [""])[-1] in _IDENTIFYING):
            continue
        values = documented.get(f.name, [])
        if f.type in ("string", "any"):  # a documented example may read as filler here ('Room 201' in room)
            values = [str(v) for v in values if filler_shape(str(v), f.name, entity.name) is None]
        else:
            values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if not values and is_flag_name(f.name):
                values = [0, 1]
        if values:
            out[f.name] = Documented(values, bool(certain.get(f.name)) or f.type in ("number", "integer"))
    return out
