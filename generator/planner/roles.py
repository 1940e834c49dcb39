"""The relation a person's or company's field has to its row, read from its name: a field's ``role``.

The composer refers to records through them ("her open ticket": a ticket whose ``requester_email`` is
hers). A person row's own name and email are ``self``, the company it names its ``employer``.
"""

from __future__ import annotations

from generator.naming import words
from generator.spec import FieldDef

#: Words before ``email``/``name`` that name who a field is about, and the relation they are.
_RELATIONS = {"from": "sender", "sender": "sender", "to": "recipient", "recipient": "recipient", "cc": "recipient",
              "bcc": "recipient", "reply": "sender", "created": "author", "creator": "author", "author": "author",
              "owner": "owner", "assignee": "assignee", "assigned": "assignee", "reporter": "reporter",
              "requester": "requester", "customer": "customer", "billing": "billing", "contact": "contact",
              "manager": "manager", "approver": "approver", "signer": "signer", "reviewer": "reviewer",
              "organizer": "organizer", "attendee": "attendee", "user": "user", "member": "member",
              "employee": "employee", "buyer": "buyer", "seller": "seller", "payer": "payer", "payee": "payee",
              "receipt": "customer", "shipping": "recipient", "applicant": "applicant", "candidate": "candidate",
              "company": "company", "vendor": "vendor", "supplier": "supplier", "merchant": "merchant"}


def role_of(f: FieldDef, person: bool) -> str | None:
    """The relation a person's email or name, or a company's name, has to its row (``requester_email`` ->
    requester); a person row's own name and email are ``self``, the company it names its ``employer``."""
    if f.semantic not in ("person_name", "email_address", "company_name", "phone_number"):
        return None
    parts = words(f.name)
    for word in parts[:-1]:
        if word in _RELATIONS:
            return "employer" if person and _RELATIONS[word] == "company" else _RELATIONS[word]
    if f.semantic == "company_name":
        return "employer" if person else "company"
    if person:
        return "self"
    return _RELATIONS.get(parts[-1]) if parts and parts[-1] in ("from", "sender", "to", "recipient") else None
