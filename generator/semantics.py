"""Mapping fields of real specifications onto the shared semantic types.

A field's name, JSON type and format decide its semantic type (``customer_email`` -> ``email_address``,
``amount`` as a number -> ``money``). The vocabulary is the kernel's (``mcp_services.kernel.semantic``):
the composer links one service's outputs to another's inputs through these types, so a generated
service that calls a value ``email`` and a hand-written one that calls it ``to`` still connect.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_services.kernel.semantic import VOCABULARY

from generator.naming import words

#: JSON Schema ``format`` values that name a semantic type outright.
_BY_FORMAT = {
    "email": "email_address",
    "idn-email": "email_address",
    "date-time": "datetime",
    "date": "date",
    "uri": "url",
    "url": "url",
    "iri": "url",
    "hostname": "domain_name",
    "phone": "phone_number",
}

#: Standard ``format`` for a semantic type, where JSON Schema has one.
FORMAT_OF = {"email_address": "email", "datetime": "date-time", "date": "date", "url": "uri"}

_PERSON_WORDS = {"user", "person", "contact", "customer", "member", "employee", "author", "owner", "assignee",
                 "recipient", "sender", "attendee", "guest", "candidate", "applicant", "patient", "student",
                 "teacher", "agent", "buyer", "seller", "client", "lead", "subscriber", "reporter", "creator",
                 "requester", "manager", "driver", "passenger", "traveler", "traveller", "speaker", "host",
                 "organizer", "organiser", "reviewer", "approver", "signer", "payee", "payer", "holder",
                 "profile", "account", "admin", "collaborator", "participant", "follower", "friend", "staff"}
_COMPANY_WORDS = {"company", "organization", "organisation", "org", "business", "merchant", "vendor", "supplier",
                  "employer", "firm", "brand", "store", "shop", "partner", "account", "workspace", "team",
                  "tenant", "agency", "enterprise", "corporation", "institution", "school", "bank", "carrier"}
_MONEY_WORDS = {"amount", "price", "cost", "total", "subtotal", "balance", "fee", "fees", "tax", "salary",
                "budget", "revenue", "payment", "discount", "refund", "charge", "wage", "income", "spend",
                "credit", "debit", "deposit", "tip", "fare", "rate_amount", "value_amount", "shipping"}
_TEXT_WORDS = {"description", "body", "text", "message", "content", "note", "notes", "comment", "comments",
               "summary", "bio", "about", "details", "reason", "instructions", "memo", "remarks", "feedback",
               "review", "answer", "question", "reply", "caption", "html", "markdown", "signature"}
_SUBJECT_WORDS = {"subject", "title", "headline", "topic", "heading", "label_text"}
_URL_WORDS = {"url", "uri", "link", "website", "homepage", "href", "webhook", "callback_url", "endpoint",
              "permalink", "avatar_url", "image_url", "site"}
_PHONE_WORDS = {"phone", "mobile", "telephone", "tel", "fax", "cell", "msisdn", "sms_number"}


def infer_semantic(name: str, schema: dict[str, Any], entity: str | None = None) -> str | None:
    """The semantic type of a field called ``name`` with JSON ``schema``, or None.

    ``entity`` (the entity the field belongs to, e.g. ``customer``) tells whether a bare ``name`` is
    a person's or an organisation's.
    """
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt.lower() in _BY_FORMAT and kind in (None, "string"):
        return _BY_FORMAT[fmt.lower()]
    parts = words(name)
    if not parts:
        return None
    last = parts[-1]
    joined = "_".join(parts)
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, dict) and items.get("type") == "string":
            inner = infer_semantic(_singular_last(name), items, entity)
            return inner if inner in ("email_address", "phone_number", "url", "tag", "username") else None
        return None
    if kind in ("integer", "number"):
        if joined in ("quantity", "qty") or last in ("quantity", "qty"):
            return "quantity"
        if last in ("percent", "percentage", "pct"):
            return "percentage"
        if kind == "number" and (last in _MONEY_WORDS or joined in _MONEY_WORDS) and "rate" not in parts:
            return "money"
        return None
    if kind not in (None, "string") or schema.get("enum"):
        return None
    if last == "email" or joined in ("email_address", "mail", "e_mail") or last == "emails":
        return "email_address"
    if last in _PHONE_WORDS or joined in ("phone_number", "mobile_number", "telephone_number"):
        return "phone_number"
    if last == "number" and len(parts) > 1 and parts[-2] in _PHONE_WORDS:
        return "phone_number"
    if last in ("currency", "currency_code") or joined == "currency_code":
        return "currency"
    if joined in ("country_code", "country") and _short_code(schema, 2):
        return "country_code"
    if joined == "country_code":
        return "country_code"
    if joined in ("username", "user_name", "login", "handle", "screen_name", "nickname") or last == "username":
        return "username"
    if joined in ("job_title", "position_title", "occupation") or (joined == "title" and entity in _PERSON_WORDS):
        return "job_title"
    if joined in ("sku", "product_sku", "item_sku") or last == "sku":
        return "product_sku"
    if joined in ("product_name", "item_name"):
        return "product_name"
    if joined in ("company", "company_name", "organization", "organization_name", "organisation_name",
                  "business_name", "org_name", "employer", "merchant_name", "vendor_name"):
        return "company_name"
    if joined in ("full_name", "display_name", "contact_name", "customer_name", "person_name", "real_name",
                  "sender_name", "recipient_name", "author_name", "owner_name", "user_full_name"):
        return "person_name"
    if joined == "name" and entity is not None:
        ent_words = set(words(entity))
        if ent_words & _PERSON_WORDS:
            return "person_name"
        if ent_words & _COMPANY_WORDS:
            return "company_name"
        if ent_words & {"product", "item", "sku", "article"}:
            return "product_name"
    if last in ("domain", "hostname") or joined == "domain_name":
        return "domain_name"
    if last in ("filename", "file_name") or joined in ("file_name", "filename"):
        return "file_name"
    if joined in ("path", "file_path", "filepath", "file_ref"):
        return "file_ref"
    if last == "city" or joined == "town":
        return "city"
    if last == "address" and not (set(parts) & {"email", "ip", "mac", "wallet", "mail", "web", "server"}):
        return "address"
    if joined in ("street_address", "postal_address", "mailing_address", "billing_address", "shipping_address"):
        return "address"
    if last in _URL_WORDS or joined in _URL_WORDS or (last == "url"):
        return "url"
    if last in ("tag", "tags", "label", "labels", "hashtag") and kind in (None, "string"):
        return "tag"
    if joined in ("channel", "channel_name"):
        return "channel_name"
    if last in _SUBJECT_WORDS:
        return "subject"
    if last in _TEXT_WORDS:
        return "text"
    if last == "at" and len(parts) > 1:
        return "datetime"  # created_at, due_at: timestamps by convention
    return None


def _singular_last(name: str) -> str:
    from generator.naming import singular, snake

    return singular(snake(name))


def _short_code(schema: dict[str, Any], length: int) -> bool:
    return schema.get("maxLength") == length or schema.get("minLength") == length


def check_vocabulary(semantic: str) -> bool:
    """Whether ``semantic`` is a type of the shared vocabulary (or an entity id)."""
    return semantic in VOCABULARY or (semantic.startswith("id:") and semantic.count(".") == 1)


#: How API descriptions document alias values of an id (Gmail's "The special value `me`", Calendar's
#: "use the "primary" keyword", Box's "The root folder ... is always represented by the ID `0`").
_ALIASES = (
    re.compile(r"special value [`'\"]?([A-Za-z0-9_@-]{1,16})"),
    re.compile(r"[`'\"]([A-Za-z0-9_@-]{1,16})[`'\"] (?:keyword|alias)"),
    re.compile(r"(?:keyword|alias) [`'\"]([A-Za-z0-9_@-]{1,16})[`'\"]"),
    re.compile(r"root folder[^.]{0,60}?\b(?:ID|id) [`'\"]?(\d{1,3})\b"),
    re.compile(r"\buse [`'\"](me|primary|self|current|default|root)[`'\"]"),
)
_NOT_ALIASES = frozenset({"the", "a", "an", "value", "id", "this"})


def documented_aliases(description: Any) -> list[str]:
    """The alias values a parameter's description documents (``me``, ``primary``, ``0``)."""
    if not isinstance(description, str):
        return []
    found: list[str] = []
    for pattern in _ALIASES:
        for match in pattern.finditer(description):
            value = match.group(1)
            if value not in found and value.lower() not in _NOT_ALIASES:
                found.append(value)
    return found
