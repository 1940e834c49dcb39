"""How varied a world's human-written texts are: the share of distinct texts per table, names and numbers masked.

People write every email, ticket and note in their own words; only automated notices (alerts,
receipts, reminders a system sends) may be templates. A text is masked before texts are compared:
people's, companies', products' and places' names, emails, links, ids, numbers, dates, weekdays and
months become placeholders, so "Hi Ana, order #1042 arrived" and "Hi Lee, order #1077 arrived" count
as the same text. ``distinctness`` gives, per table, how many of its texts are distinct that way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce

from mcp_services.kernel.world import WorldShape
from mcp_services.worldcheck.seeded import Row, SeededWorld, seeded_world

__all__ = ["HUMAN_TEXTS", "Distinctness", "TextTable", "distinctness", "human_texts", "masker"]


@dataclass(frozen=True)
class TextTable:
    """A table of texts people write: ``field`` of its rows, and ``automated`` for the rows a system wrote.

    ``text`` reads the written part of a row where it is not one field (a form response's free-text answers).
    """

    service: str
    table: str
    field: str
    automated: Callable[[Row, SeededWorld], bool] | None = None
    text: Callable[[Row, SeededWorld], str | None] | None = None

    @property
    def label(self) -> str:
        return f"{self.service}.{self.table}.{self.field}"


def _spam(row: Row, _: SeededWorld) -> bool:
    return "SPAM" in (row.get("label_ids") or [])


def _bot_post(row: Row, seeded: SeededWorld) -> bool:
    user = seeded.rows("chat", "users").get(row.get("user_id") or "")
    return bool(user and user.get("is_bot"))


_KEYWORD = re.compile(r"^[A-Z0-9]{1,5}$")


def _notification(row: Row, seeded: SeededWorld) -> bool:
    """A text our notification lines send (reminders, codes, receipts), automated as Twilio's API sends them, or a
    bare keyword a customer answers one with (C, 1, STOP): a protocol answer, not prose."""
    return row.get("direction") == "outbound-api" or bool(_KEYWORD.match(str(row.get("body") or "").strip()))


def _free_text_answers(row: Row, seeded: SeededWorld) -> str | None:
    """A form response's answers to its long-text questions (the rest are names, emails and choices)."""
    free = {q["ref"] for q in seeded.rows("forms", "questions").values()
            if q["form_id"] == row.get("form_id") and q["type"] == "long_text"}
    answers = row.get("answers") or {}
    written = [str(answers[ref]) for ref in sorted(free) if answers.get(ref)]
    return "\n".join(written) or None


#: Every table of human-written text in the library, with the field people write in. (Labels are not prose: an
#: expense's or an invoice line's description names an item, as "Hotel to airport" does on every trip.)
HUMAN_TEXTS: tuple[TextTable, ...] = (
    TextTable("crm", "notes", "body"),
    TextTable("mailbox", "messages", "body", _spam),
    TextTable("mailbox", "drafts", "body"),
    TextTable("chat", "messages", "text", _bot_post),
    TextTable("helpdesk", "tickets", "description"),
    TextTable("helpdesk", "comments", "body"),
    TextTable("projects", "issues", "description"),
    TextTable("projects", "comments", "body"),
    TextTable("sms", "messages", "body", _notification),
    TextTable("voice", "calls", "transcript"),
    TextTable("voice", "notes", "content"),
    TextTable("voice", "callbacks", "note"),
    TextTable("recruiting", "scorecards", "notes"),
    TextTable("recruiting", "applications", "cover_letter"),
    TextTable("recruiting", "notes", "body"),
    TextTable("hr", "time_off_requests", "note"),
    TextTable("tasks", "comments", "text"),
    TextTable("tasks", "tasks", "notes"),
    TextTable("docs", "comments", "body"),
    TextTable("kb", "feedback", "comment"),
    TextTable("expenses", "report_comments", "body"),
    TextTable("marketing", "member_notes", "note"),
    TextTable("commerce", "returns", "customer_note"),
    TextTable("commerce", "orders", "note"),
    TextTable("payments", "disputes", "evidence"),
    TextTable("esign", "envelopes", "email_message"),
    TextTable("meetings", "meetings", "agenda"),
    TextTable("calendar", "events", "description"),
    TextTable("forms", "responses", "answers_text", text=_free_text_answers),
    TextTable("helpdesk", "tickets", "satisfaction_comment"),
    TextTable("accounting", "credit_notes", "reason"),
    TextTable("hr", "time_off_requests", "decision_note"),
    TextTable("recruiting", "applications", "rejection_notes"),
)

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://\S+")
_ID = re.compile(r"#?\b[\w-]*\d(?:[\w./:-]|,(?=\d))*")
_WHEN = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:mon|tue|wed|thu|fri|sat|sun)\b|"
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b|"
    r"\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b",
    re.IGNORECASE,
)
_NAME_FIELDS = ("person_name", "company_name", "product_name", "city", "username")


def _names(seeded: SeededWorld) -> set[str]:
    """Every name a text may carry: the world's and the seeded tables' (candidates, subscribers...)."""
    world = seeded.world
    names: set[str] = set()
    for person in world.people:
        names.update((person.name, person.first_name, person.last_name, person.username, person.city))
    for org in world.organisations:
        names.update((org.name, org.city))
    names.update(p.name for p in world.products)
    for place in world.places:
        names.update((place.name, place.city))
    for table in seeded:
        columns = table.fields_of(*_NAME_FIELDS) + [f for f in ("first_name", "last_name") if f in table.fields]
        for row in table.rows.values():
            names.update(str(row[c]) for c in columns if isinstance(row.get(c), str))
    # A full name also appears as its parts ("Thanks, Ana").
    parts = {part for name in names for part in name.split() if len(part) > 2 and part[0].isupper()}
    return {n for n in names | parts if n and len(n) > 1}


def masker(seeded: SeededWorld) -> Callable[[str], str]:
    """A function that masks a text of this world: names, emails, links, ids, numbers and dates become tokens."""
    names = sorted(_names(seeded), key=len, reverse=True)
    chunks = [names[i:i + 500] for i in range(0, len(names), 500)]
    patterns = [re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, chunk)) + r")(?!\w)") for chunk in chunks]

    def mask(text: str) -> str:
        text = _URL.sub("<url>", text)
        text = _EMAIL.sub("<email>", text)
        text = reduce(lambda t, p: p.sub("<name>", t), patterns, text)
        text = _ID.sub("<n>", text)
        text = _WHEN.sub("<date>", text)
        return " ".join(text.lower().split())

    return mask


def human_texts(seeded: SeededWorld, table: TextTable) -> list[str]:
    """The texts people wrote in one table (automated rows and empty values left out)."""
    found = []
    for row in seeded.rows(table.service, table.table).values():
        if table.automated and table.automated(row, seeded):
            continue
        value = table.text(row, seeded) if table.text else row.get(table.field)
        if isinstance(value, str) and value.strip():
            found.append(value)
    return found


@dataclass(frozen=True)
class Distinctness:
    """How many of a table's texts are distinct once masked, over the worlds measured."""

    table: str
    distinct: int
    total: int

    @property
    def share(self) -> float:
        return self.distinct / self.total if self.total else 1.0


def distinctness(
    seeds: Iterable[int], shape: WorldShape | None = None, tables: Sequence[TextTable] = HUMAN_TEXTS
) -> list[Distinctness]:
    """Per table of human-written text: distinct masked texts over every text of the worlds of ``seeds``."""
    masked: dict[str, list[str]] = {t.label: [] for t in tables}
    for seed in seeds:
        seeded = seeded_world(seed, shape)
        mask = masker(seeded)
        for table in tables:
            masked[table.label] += [mask(text) for text in human_texts(seeded, table)]
    return [Distinctness(label, len(set(texts)), len(texts)) for label, texts in masked.items()]


def figures(results: Iterable[Distinctness]) -> Mapping[str, float]:
    return {r.table: r.share for r in results}
