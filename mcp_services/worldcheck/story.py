"""The story agrees with the data: news is told when it happens, and a record lasts what its kind lasts.

Two invariants of ``mcp-services world check`` (see ``invariants``):

- ``news``: a text that announces a deal as just signed ("Ruiz Group signed!", "We won Ruiz Group",
  "Signed yesterday: Ruiz Group") is written on the day a won deal of that company closed (the day after,
  where it says "yesterday"); a closed deal was last changed on or after the day it closed; and a
  customer's kickoff takes place within two months after a deal it won.
- ``durations``: a record with a start and an end ends after it starts, and a meeting of any kind (a
  kickoff, a call, a review, an interview: by its table or its title) lasts at most a day, so a "kickoff"
  that runs seven weeks is a violation; a record with a due date was created before it fell due.

The checks read field names and titles, not services, so a generated service's records are checked by
the same rules when its seeded world is.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_services.worldcheck.invariants import Facts, Violation

__all__ = ["KICKOFF_AFTER", "MEETING_KINDS", "MEETING_MAX", "SPANS", "durations", "news"]

#: A sentence that may announce a signed deal (the company's name is checked next to the words).
_MAY_ANNOUNCE = re.compile(r"\bsigned\b|\bwe won\b|\bis in!", re.IGNORECASE)
_YESTERDAY = re.compile(r"\byesterday\b", re.IGNORECASE)


def _announces(sentence: str, company: str) -> bool:
    """Whether ``sentence`` tells as news that ``company`` signed."""
    name = re.escape(company)
    forms = (rf"{name} (?:has )?(?:just )?signed(?: today| yesterday| this morning)?\b(?! for)",
             rf"\bsigned(?: yesterday| today)?: {name}\b", rf"\bwe won {name}\b", rf"{name} is in!")
    return any(re.search(form, sentence, re.IGNORECASE) for form in forms)


def news(facts: Facts) -> Iterator[Violation]:
    from mcp_services.worldcheck.invariants import SENTENCE, Violation

    companies = {k: r.get("name") for k, r in facts.seeded.rows("crm", "companies").items()}
    deals = facts.seeded.rows("crm", "deals")
    if not companies or not deals:
        return  # without the CRM there is nothing to hold the news against
    closed: dict[str, set[str]] = defaultdict(set)  # company name -> the days its won deals closed
    for key, deal in deals.items():
        day = deal.get("close_date")
        if deal.get("stage") in ("won", "lost") and isinstance(day, str):
            touched = deal.get("updated_at")
            if isinstance(touched, str) and touched[:10] < day:
                yield Violation(f"crm.deals {key}", f"closed ({deal['stage']}) on {day} but last changed before, {touched}")
            if deal.get("stage") == "won":
                closed[str(companies.get(deal.get("company_id") or ""))].add(day)
    names = {o.id: o.name for o in facts.world.organisations}
    yield from _kickoffs(facts, closed, names)
    for table, key, row, text in facts.texts():
        if not _MAY_ANNOUNCE.search(text):
            continue
        written = facts.written_at(table, row)
        if written is None:
            continue
        for sentence in (m.group() for m in SENTENCE.finditer(text)):
            if not _MAY_ANNOUNCE.search(sentence):
                continue
            for org in facts.organisations_named(sentence):
                company = names[org]
                if not _announces(sentence, company):
                    continue
                day = date.fromisoformat(written[:10])
                meant = day - timedelta(days=1) if _YESTERDAY.search(sentence) else day
                if meant.isoformat() not in closed.get(company, set()):
                    won = ", ".join(sorted(closed.get(company, set()))) or "never"
                    yield Violation(f"{table.label} {key}", f"announces {company} signed on {meant} (written {written}), "
                                                            f"but its deals were won: {won}")


#: How long after a deal is won its kickoff may take place.
KICKOFF_AFTER = timedelta(days=60)
_KICKOFF = re.compile(r"\bkick-?off\b", re.IGNORECASE)


def _kickoffs(facts: Facts, closed: dict[str, set[str]], names: dict[str, str]) -> Iterator[Violation]:
    """A customer's kickoff (an event, or a task or message about it) comes within ``KICKOFF_AFTER`` of a deal the
    customer won: that deal is why there is a kickoff. An event counts from its start, anything else from when it
    was written."""
    from mcp_services.worldcheck.invariants import SENTENCE, Violation

    for table in facts.seeded:
        starts = [a for a, _ in SPANS if a in table.fields]
        titles = [t for t in _TITLES if t in table.fields]
        texts = [n for n, f in table.fields.items() if f.semantic in ("text", "subject")]
        for key, row in table.rows.items():
            if starts:
                begin = row.get(starts[0])
                said = [str(row[t]) for t in titles[:1] if isinstance(row.get(t), str)]
            else:
                begin = facts.written_at(table, row)
                said = [str(row[t]) for t in dict.fromkeys(titles[:1] + texts) if isinstance(row.get(t), str)]
            if not isinstance(begin, str):
                continue
            start = date.fromisoformat(begin[:10])
            for sentence in (s for text in said if _KICKOFF.search(text) for s in SENTENCE.findall(text)):
                if not _KICKOFF.search(sentence):
                    continue
                for org in facts.organisations_named(sentence):
                    won = closed.get(names[org], set())
                    if not any(timedelta(0) <= start - date.fromisoformat(day) <= KICKOFF_AFTER for day in won):
                        yield Violation(f"{table.label} {key}", f"{sentence.strip()!r} ({begin[:10]}), but {names[org]} "
                                                                f"won no deal in the {KICKOFF_AFTER.days} days before")


#: Pairs of fields that bound a record in time, (start, end).
SPANS = (("start", "end"), ("start_at", "end_at"), ("starts_at", "ends_at"), ("start_time", "end_time"),
         ("start_date", "end_date"), ("started_at", "ended_at"), ("start_datetime", "end_datetime"))
#: What names a meeting, in a table's name or a record's title: those last at most ``MEETING_MAX``.
MEETING_KINDS = re.compile(
    r"(?<![a-z])(?:meeting|call|kick-?off|sync|stand-?up|1:1|one-on-one|interview|demo|review|check-in|catch-up|"
    r"webinar|appointment|huddle|retro|retrospective|all-hands|briefing|walkthrough)s?(?![a-z])",
    re.IGNORECASE,
)
MEETING_MAX = timedelta(days=1)
_TITLES = ("title", "topic", "name", "summary", "subject")
#: A title that names a document about a meeting (its minutes, its recording), not a meeting.
_ABOUT_A_MEETING = re.compile(r"\b(?:minutes|notes|report|recording|transcript|agenda|summary)\b", re.IGNORECASE)


def _moment(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) if "T" in value else datetime.fromisoformat(value[:10])
    except ValueError:
        return None


#: Fields that say when a record falls due.
_DUE = ("due_on", "due_date", "due_at", "due_by")


def durations(facts: Facts) -> Iterator[Violation]:
    from mcp_services.worldcheck.invariants import Violation

    for table in facts.seeded:
        for due_field in (d for d in _DUE if d in table.fields):
            for key, row in table.rows.items():
                due, made = row.get(due_field), facts.created_at(table, row)
                if isinstance(due, str) and made is not None and due[:10] < made[:10]:
                    yield Violation(f"{table.label} {key}", f"{due_field} {due[:10]} is before it was created ({made})")
        spans = [(a, b) for a, b in SPANS if a in table.fields and b in table.fields]
        if not spans:
            continue
        meeting_table = bool(MEETING_KINDS.search(table.name.replace("_", " ")))
        for key, row in table.rows.items():
            title = next((str(row[t]) for t in _TITLES if isinstance(row.get(t), str)), "")
            meeting = meeting_table or bool(MEETING_KINDS.search(title)) and not _ABOUT_A_MEETING.search(title)
            for first, last in spans:
                begin, end = row.get(first), row.get(last)
                if not isinstance(begin, str) or not isinstance(end, str):
                    continue
                start, finish = _moment(begin), _moment(end)
                if start is None or finish is None or (start.tzinfo is None) != (finish.tzinfo is None):
                    continue
                if finish < start:
                    yield Violation(f"{table.label} {key}", f"{last} {end} is before {first} {begin}")
                elif meeting and finish - start > MEETING_MAX:
                    what = f"{title!r}" if title else "a meeting"
                    yield Violation(f"{table.label} {key}", f"{what} runs from {begin} to {end} ({finish - start}); "
                                                            "a meeting lasts at most a day")
