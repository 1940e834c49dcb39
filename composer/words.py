"""Names for things, derived from schema names: entity nouns, field labels, value formatting."""

from __future__ import annotations

from datetime import datetime
from typing import Any

_PLURAL_EXCEPTIONS = {"person": "people", "company": "companies", "reply": "replies", "entry": "entries"}

#: Field-name endings that only repeat the type ("owner_email" is the owner).
_TYPE_SUFFIXES = ("_email", "_name", "_id", "_number", "_phone", "_key", "_sid", "_url", "_username")


def entity_noun(entity: str | None, fallback: str = "item") -> str:
    """``"helpdesk.ticket"`` -> ``"ticket"``; ``"payments.payment_link"`` -> ``"payment link"``."""
    if not entity:
        return fallback
    return entity.split(".", 1)[-1].replace("_", " ")


def plural(noun: str) -> str:
    last = noun.split(" ")[-1]
    if last in _PLURAL_EXCEPTIONS:
        return noun[: -len(last)] + _PLURAL_EXCEPTIONS[last]
    if last.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def article(noun: str) -> str:
    word = noun.split(" ")[0].lower()
    if word.startswith(("user", "uni", "url", "usage", "use")):
        return "a"
    return "an" if word[:1] in "aeiou" else "a"


_LEAF_LABELS = {
    "email": "email address",
    "phone": "phone number",
    "to": "recipient",
    "from": "sender",
    "contact_number": "phone number",
    "url": "link",
    "meeting_url": "meeting link",
    "shared_link_url": "shared link",
    "name": "name",
}
_SUFFIX_LABELS = (("_email", "email address"), ("_phone", "phone number"), ("_number", "number"), ("_name", "name"), ("_url", "link"))


def field_label(path: str, noun: str | None = None) -> str:
    """``"owner_email"`` -> ``"owner's email address"``; ``"id"`` of a ticket -> ``"ticket id"``."""
    leaf = path.rsplit(".", 1)[-1]
    if leaf in ("id", "key", "sid", "number") and noun:
        return f"{noun} {'number' if leaf in ('number', 'sid') else 'id' if leaf == 'id' else 'key'}"
    if leaf in _LEAF_LABELS:
        return _LEAF_LABELS[leaf]
    for suffix, label in _SUFFIX_LABELS:
        if leaf.endswith(suffix) and len(leaf) > len(suffix):
            who = role_word(leaf[: -len(suffix)].replace("_", " "))
            if who in PERSON_ROLES:
                return f"{who}'s {label}"
            return f"{who} {label}"
    return leaf.replace("_", " ")


#: Roles that name a person (their email is "the owner's email address").
PERSON_ROLES = frozenset(
    {"owner", "assignee", "requester", "author", "organizer", "sender", "recipient", "lead", "reporter", "creator",
     "last editor", "customer", "caller", "sharer", "last sender", "receipt recipient", "contact person", "member"}
)

_ROLE_WORDS = {
    "from": "sender",
    "to": "recipient",
    "modified by": "last editor",
    "shared by": "sharer",
    "created by": "creator",
    "last sender": "last sender",
    "requester": "requester",
    "caller": "caller",
    "receipt": "receipt recipient",
}


def role_word(role: str) -> str:
    """A role as a person says it: ``"from"`` -> ``"sender"``."""
    return _ROLE_WORDS.get(role, role)


def role_of(path: str) -> str:
    """The person a contact field names: ``"assignee_email"`` -> ``"assignee"`` (``""`` for the item itself)."""
    leaf = path.rsplit(".", 1)[-1]
    for suffix in _TYPE_SUFFIXES:
        if leaf.endswith(suffix) and len(leaf) > len(suffix):
            return leaf[: -len(suffix)].replace("_", " ")
    if leaf in ("email", "phone", "name", "username", "real_name", "contact_number", "phone_number"):
        return ""
    return leaf.replace("_", " ")


def param_label(name: str) -> str:
    return name.replace("_", " ")


def money(value: Any, currency: str = "USD") -> str:
    try:
        return f"{float(value):,.2f} {currency}"
    except (TypeError, ValueError):
        return str(value)


def long_date(iso: str) -> str:
    """``"2025-01-14T09:30:00Z"`` -> ``"Tuesday 14 January 2025"``."""
    moment = datetime.strptime(iso[:10], "%Y-%m-%d")
    return f"{moment.strftime('%A')} {moment.day} {moment.strftime('%B %Y')}"


def when(iso: str) -> str:
    """A date-time as a person writes it: ``"16 January 2025 at 10:00 UTC"``."""
    moment = datetime.strptime(iso[:16], "%Y-%m-%dT%H:%M")
    return f"{moment.day} {moment.strftime('%B %Y')} at {moment.strftime('%H:%M')} UTC"


def describe_value(value: Any, semtype: str | None, currency: str = "USD") -> str:
    if semtype == "money" and isinstance(value, (int, float)):
        return money(value, currency)
    if semtype == "datetime" and isinstance(value, str) and len(value) >= 16:
        return when(value)
    return str(value)
