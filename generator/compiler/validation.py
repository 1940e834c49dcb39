"""Argument validation for compiled tools: JSON Schema with formats, and errors a model can act on."""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

_FORMATS = FormatChecker(formats=())
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$")
_HINTS = {"date": "YYYY-MM-DD", "date-time": "an ISO 8601 date-time such as 2025-01-14T09:30:00Z",
          "email": "an email address", "uri": "an absolute URL such as https://example.com/x"}


@_FORMATS.checks("date")
def _is_date(value: object) -> bool:
    return not isinstance(value, str) or bool(_DATE.match(value))


@_FORMATS.checks("date-time")
def _is_datetime(value: object) -> bool:
    return not isinstance(value, str) or bool(_DATETIME.match(value))


@_FORMATS.checks("email")
def _is_email(value: object) -> bool:
    return not isinstance(value, str) or bool(_EMAIL.match(value))


@_FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or bool(_URI.match(value))


_DIGITS = re.compile(r"^-?[0-9]{1,18}$")
_PATH_PARAM = re.compile(r"\{([^{}]+)\}")


def path_params(path: str, properties: dict[str, Any]) -> frozenset[str]:
    """The parameters ``path`` carries (``/recipients/{recipient_id}``), by their names in ``properties``."""
    squashed = {re.sub(r"[^a-z0-9]", "", name.lower()): name for name in properties}
    return frozenset(squashed[key] for raw in _PATH_PARAM.findall(path)
                     if (key := re.sub(r"[^a-z0-9]", "", raw.lower())) in squashed)


def as_sent(arguments: dict[str, Any], in_path: frozenset[str], properties: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as the API receives them: a path parameter travels as text in the URL, so a number
    where its schema says string (a recipient id 1) is its digits, and digits where it says integer are the
    number. Other parameters are left as given."""
    out = dict(arguments)
    for name in in_path & out.keys():
        value, kind = out[name], properties.get(name, {}).get("type")
        if kind == "string" and isinstance(value, int) and not isinstance(value, bool):
            out[name] = str(value)
        elif kind == "integer" and isinstance(value, str) and _DIGITS.match(value):
            out[name] = int(value)
    return out


def make_validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=_FORMATS)


def problems(validator: Draft202012Validator, arguments: dict[str, Any], limit: int = 5) -> list[str]:
    """Readable problems with ``arguments``: what is wrong with which parameter."""
    out: list[str] = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: (len(e.path), list(map(str, e.path)))):
        out.append(_describe(error))
        if len(out) >= limit:
            break
    return out


def _describe(error: ValidationError) -> str:
    where = ".".join(str(p) for p in error.path)
    shown = repr(error.instance)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        name = ".".join(filter(None, [where, missing[0] if missing else ""]))
        return f"'{name}' is required but missing"
    if error.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)'", error.message.split("(")[-1])
        names = ", ".join(f"'{'.'.join(filter(None, [where, e]))}'" for e in extra) or "an argument"
        return f"{names} {'is' if len(extra) <= 1 else 'are'} not a parameter of this tool"
    if error.validator == "format":
        return f"'{where}' must be {_HINTS.get(str(error.validator_value), error.validator_value)} (got {shown})"
    if error.validator == "enum":
        options = ", ".join(repr(v) for v in list(error.validator_value)[:12])
        return f"'{where}' must be one of {options} (got {shown})"
    if error.validator == "type":
        return f"'{where}' must be of type {error.validator_value} (got {shown})"
    return f"'{where or '(arguments)'}': {error.message[:160]}"


def message(tool: str, found: list[str]) -> str:
    return f"Invalid arguments for {tool}: " + "; ".join(found) + ". Check the tool's input schema and retry."
