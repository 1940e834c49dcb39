"""The shared vocabulary of semantic types.

Every value that can flow from one service into another carries a semantic type. It appears in
the tool's JSON schema as ``x-semantic-type`` (plus a standard ``format`` where JSON Schema has
one), and it is how the composer knows that the output of one tool can feed the input of another.

Use the ready-made aliases (``EmailAddress``, ``Money``...) in tool parameters and result models,
and ``EntityId("payments.charge")`` for identifiers of a service's own entities.
"""

from __future__ import annotations

from datetime import date, datetime
from functools import cache
from typing import Annotated, Any

from pydantic import AfterValidator, Field

SEMANTIC_KEY = "x-semantic-type"

#: Every semantic type a tool may use, with what it means. Ids are ``id:<service>.<entity>``.
VOCABULARY: dict[str, str] = {
    "email_address": "An email address, e.g. ana.ruiz@brightline.example",
    "phone_number": "A phone number in E.164 form, e.g. +14155550123",
    "person_name": "A person's full name",
    "company_name": "An organisation's name",
    "money": "An amount of money in major units (e.g. 12.50)",
    "currency": "An ISO 4217 currency code, e.g. USD",
    "datetime": "An ISO 8601 date-time in UTC, e.g. 2025-01-14T09:30:00Z",
    "date": "An ISO 8601 date, e.g. 2025-01-14",
    "url": "An absolute http(s) URL",
    "address": "A postal address on one line",
    "product_sku": "A product's stock keeping unit",
    "product_name": "A product's name",
    "domain_name": "An internet domain, e.g. brightline.example",
    "job_title": "A person's job title",
    "file_name": "A file's name, e.g. q1-report.pdf",
    "file_ref": "A path or reference to a stored file",
    "city": "A city name",
    "country_code": "An ISO 3166-1 alpha-2 country code",
    "text": "Free text written by a person",
    "subject": "A short subject line or title",
    "tag": "A label or tag",
    "username": "A user handle in a product (no @)",
    "channel_name": "A chat channel's name (no #)",
    "percentage": "A percentage between 0 and 100",
    "quantity": "A count of items",
}

_FORMATS = {
    "email_address": "email",
    "datetime": "date-time",
    "date": "date",
    "url": "uri",
}


def semantic_field(semantic_type: str, **field_kwargs: Any) -> Any:
    """A pydantic ``Field`` that tags a value with a semantic type in its JSON schema."""
    if not (semantic_type in VOCABULARY or semantic_type.startswith("id:")):
        raise ValueError(f"unknown semantic type {semantic_type!r}; add it to VOCABULARY first")
    extra: dict[str, Any] = {SEMANTIC_KEY: semantic_type}
    if semantic_type in _FORMATS:
        extra["format"] = _FORMATS[semantic_type]
    return Field(json_schema_extra=extra, **field_kwargs)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _real_date(value: str) -> str:
    try:
        date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a real calendar date (YYYY-MM-DD)") from None
    return value


def moment(value: str) -> datetime:
    """A ``DateTime`` value (UTC text ending in Z, already validated) as an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _real_datetime(value: str) -> str:
    try:
        moment(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a real date and time (YYYY-MM-DDTHH:MM:SSZ)") from None
    return value


NotBlank = AfterValidator(_not_blank)

EmailAddress = Annotated[
    str, semantic_field("email_address", pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254)
]
PhoneNumber = Annotated[str, semantic_field("phone_number", pattern=r"^\+[1-9][0-9]{6,14}$")]
PersonName = Annotated[str, semantic_field("person_name", min_length=1, max_length=200), NotBlank]
CompanyName = Annotated[str, semantic_field("company_name", min_length=1, max_length=200), NotBlank]
Money = Annotated[float, semantic_field("money", ge=0, le=1_000_000_000)]
Currency = Annotated[str, semantic_field("currency", pattern=r"^[A-Z]{3}$")]
DateTime = Annotated[
    str,
    semantic_field("datetime", pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$"),
    AfterValidator(_real_datetime),
]
Date = Annotated[str, semantic_field("date", pattern=r"^\d{4}-\d{2}-\d{2}$"), AfterValidator(_real_date)]
URL = Annotated[str, semantic_field("url", pattern=r"^https?://\S+$", max_length=2000)]
Address = Annotated[str, semantic_field("address", min_length=1, max_length=500), NotBlank]
ProductSKU = Annotated[str, semantic_field("product_sku", min_length=1, max_length=64), NotBlank]
ProductName = Annotated[str, semantic_field("product_name", min_length=1, max_length=200), NotBlank]
DomainName = Annotated[str, semantic_field("domain_name", min_length=1, max_length=253), NotBlank]
JobTitle = Annotated[str, semantic_field("job_title", max_length=200)]
FileName = Annotated[str, semantic_field("file_name", min_length=1, max_length=255), NotBlank]
FileRef = Annotated[str, semantic_field("file_ref", min_length=1, max_length=1000), NotBlank]
City = Annotated[str, semantic_field("city", min_length=1, max_length=100), NotBlank]
CountryCode = Annotated[str, semantic_field("country_code", pattern=r"^[A-Z]{2}$")]
Text = Annotated[str, semantic_field("text", max_length=20_000)]
#: A short piece of plain text (a name, a reason, a label) where no semantic type applies.
ShortText = Annotated[str, Field(max_length=500)]
Subject = Annotated[str, semantic_field("subject", min_length=1, max_length=300), NotBlank]
Tag = Annotated[str, semantic_field("tag", min_length=1, max_length=60), NotBlank]
Username = Annotated[str, semantic_field("username", min_length=1, max_length=80), NotBlank]
ChannelName = Annotated[str, semantic_field("channel_name", min_length=1, max_length=80), NotBlank]
Percentage = Annotated[float, semantic_field("percentage", ge=0, le=100)]
Quantity = Annotated[int, semantic_field("quantity", ge=0, le=1_000_000)]


@cache
def EntityId(entity: str) -> Any:  # noqa: N802 - reads like a type at the use site
    """The type of an identifier of one entity, e.g. ``EntityId("payments.charge")``."""
    if entity.count(".") != 1:
        raise ValueError(f"entity {entity!r} must be '<service>.<entity>'")
    return Annotated[str, semantic_field(f"id:{entity}", min_length=1, max_length=100)]


def semantic_type_of(schema: dict[str, Any]) -> str | None:
    """The semantic type a JSON schema fragment carries, looking through ``anyOf`` and arrays."""
    if SEMANTIC_KEY in schema:
        return str(schema[SEMANTIC_KEY])
    for option in schema.get("anyOf", ()):
        found = semantic_type_of(option)
        if found:
            return found
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return semantic_type_of(schema["items"])
    return None
