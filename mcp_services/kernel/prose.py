"""Texts people write, varied the way people vary them: seeded choices among alternatives.

A template marks where a writer chooses their words: ``"[Hi|Hello|Morning] {first},"`` picks one of
the bracketed alternatives, ``"[Sorry for the wait. |]"`` may leave a phrase out, brackets nest,
and ``{facts}`` are filled in after the choices (``write(rng, template, facts)``). The openings and
sign-offs of each register (an email to a customer, to a colleague, a chat line, a text message)
and each industry's words (where its people work, whom they serve, what a problem holds up) live
here, so the texts of every service sound like the same people. Only people's texts vary:
automated notices (alerts, receipts, reminders a system sends) stay templates, as in real products.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from datetime import date, datetime
from functools import lru_cache
from typing import Literal, Union

__all__ = [
    "INDUSTRY_WORDS",
    "day_name",
    "money",
    "Register",
    "choose",
    "greeting",
    "industry_facts",
    "letter",
    "signoff",
    "write",
]

_Node = Union[str, "tuple[tuple[_Node, ...], ...]"]
Register = Literal["customer", "colleague", "chat", "text"]


@lru_cache(maxsize=4096)
def _parse(template: str) -> tuple[_Node, ...]:
    """A template as a sequence of literal text and choices (each choice: its alternatives, each a sequence)."""
    stack: list[list[list[_Node]]] = [[[]]]  # per open bracket: its alternatives so far
    text: list[str] = []

    def flush() -> None:
        if text:
            stack[-1][-1].append("".join(text))
            text.clear()

    for char in template:
        if char == "[":
            flush()
            stack.append([[]])
        elif char == "|" and len(stack) > 1:
            flush()
            stack[-1].append([])
        elif char == "]" and len(stack) > 1:
            flush()
            alternatives = stack.pop()
            stack[-1][-1].append(tuple(tuple(a) for a in alternatives))
        else:
            text.append(char)
    if len(stack) != 1:
        raise ValueError(f"unbalanced [ in template {template!r}")
    flush()
    return tuple(stack[0][0])


def _expand(rng: random.Random, nodes: tuple[_Node, ...]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        else:
            out.append(_expand(rng, node[rng.randrange(len(node))]))
    return "".join(out)


def choose(rng: random.Random, template: str) -> str:
    """``template`` with one alternative of each ``[a|b|c]`` chosen (the {facts} left as they are)."""
    return _expand(rng, _parse(template))


def write(rng: random.Random, template: str, facts: Mapping[str, object] | None = None) -> str:
    """``template`` with its choices made and its {facts} filled in; spaces tidied where a choice left a gap."""
    text = choose(rng, template).format_map(dict(facts or {}))
    return _tidy(text)


_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")


def _tidy(text: str) -> str:
    """One space between words, no space before a comma or a full stop, a capital at each sentence's start."""
    lines = [" ".join(line.split()).replace(" ,", ",").replace(" .", ".") for line in text.split("\n")]
    lines = [_SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), line) for line in lines]
    return "\n".join(lines).strip()


def money(amount: float, currency: str = "USD") -> str:
    """An amount as texts state it: 1,234.50 USD."""
    return f"{amount:,.2f} {currency}"


def day_name(moment: datetime | date) -> str:
    """A day as people write it: Thursday 14 March."""
    return f"{moment:%A} {moment.day} {moment:%B}"


# -- openings and sign-offs ----------------------------------------------------------------------------

_GREETINGS: Mapping[Register, str] = {
    "customer": "[Hi|Hello|Dear|Good morning|Hi there] {first}[,|,|!]",
    "colleague": "[Hi|Hey|Morning|Hi there|Hello] {first}[,|,| -|!]",
    "chat": "[|{first}, |@{handle} |hey {first}, |]",
    "text": "[Hi {first}, |Hi {first}! |Hello {first}, |{first}, |]",
}
_SIGNOFFS: Mapping[str, str] = {
    "customer": "[Best regards|Kind regards|Best|Thanks|Many thanks|Thank you|Regards|Cheers|All the best|Warm regards]"
                "[,|,|]\n{name}[\n{title}, {company}|\n{company}|]",
    "customer-untitled": "[Best regards|Kind regards|Best|Thanks|Many thanks|Thank you|Regards|Cheers|All the best|"
                         "Warm regards][,|,|]\n{name}[\n{company}|]",
    "colleague": "[Thanks|Cheers|Best|Thanks a lot|Ta|Speak soon|Thanks!|]\n{first}",
    "chat": "",
    "text": "[ - {first}| {first}| Thanks, {first}|]",
}


def greeting(rng: random.Random, register: Register, first: str, handle: str = "") -> str:
    """How one addresses ``first`` in this register."""
    return write(rng, _GREETINGS[register], {"first": first, "handle": handle})


def signoff(rng: random.Random, register: Register, *, first: str, name: str, title: str = "", company: str = "") -> str:
    """How a writer signs off in this register (their name, perhaps their title and company)."""
    key = "customer-untitled" if register == "customer" and not title else register
    return write(rng, _SIGNOFFS[key], {"first": first, "name": name, "title": title, "company": company})


def letter(
    rng: random.Random, register: Register, body: str, facts: Mapping[str, object], *, to_first: str, first: str,
    name: str, title: str = "", company: str = "",
) -> str:
    """An email: a greeting for ``to_first``, the body (a template), and the writer's sign-off."""
    parts = [greeting(rng, register, to_first), write(rng, body, facts),
             signoff(rng, register, first=first, name=name, title=title, company=company)]
    return "\n\n".join(p for p in parts if p)


# -- each industry's words ----------------------------------------------------------------------------

#: Per industry: ``site`` (where its people work), ``clients`` (whom it serves), ``work`` (what a problem
#: holds up) and ``rush`` (its busiest time). ``industry_facts`` picks one of each.
INDUSTRY_WORDS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "food and beverage": {
        "site": ("the kitchen", "our restaurants", "the bakery", "the production line", "the bar"),
        "clients": ("our diners", "guests", "the wholesale buyers", "our regulars"),
        "work": ("the dinner service", "our deliveries to stores", "menu planning", "the weekly stock count"),
        "rush": ("the lunch rush", "the weekend service", "the holiday season", "Friday night"),
    },
    "logistics": {
        "site": ("the warehouse", "our depot", "the cross-dock", "dispatch", "the yard"),
        "clients": ("our shippers", "the drivers", "our carriers", "the consignees"),
        "work": ("route planning", "the morning dispatch", "loading the trucks", "our proof-of-delivery reports"),
        "rush": ("peak season", "the Monday dispatch", "the end of the quarter", "the night shift"),
    },
    "healthcare": {
        "site": ("the clinic", "our ward", "the front desk", "the lab", "the practice"),
        "clients": ("our patients", "the nurses", "the doctors", "the care team"),
        "work": ("patient scheduling", "the morning rounds", "billing for the practice", "our lab results"),
        "rush": ("flu season", "the morning clinic", "the end of the month", "the weekend rota"),
    },
    "retail": {
        "site": ("our stores", "the shop floor", "the stockroom", "the flagship store", "our tills"),
        "clients": ("our shoppers", "the store managers", "our members", "the sales staff"),
        "work": ("restocking", "the weekly promotions", "the stock take", "opening the new store"),
        "rush": ("the holiday season", "Black Friday", "the summer sale", "the weekend"),
    },
    "software": {
        "site": ("our engineering team", "the product team", "the office", "our support desk", "the dev team"),
        "clients": ("our users", "the developers", "our customers' admins", "the beta testers"),
        "work": ("the release", "our sprint", "the customer demos", "the nightly builds"),
        "rush": ("release week", "the end of the sprint", "the quarter close", "launch day"),
    },
    "construction": {
        "site": ("the site office", "our sites", "the yard", "the project trailer", "the site"),
        "clients": ("the site managers", "our crews", "the subcontractors", "the clients' surveyors"),
        "work": ("the site handover", "the concrete pour", "our safety inspections", "the weekly progress report"),
        "rush": ("the summer build season", "the handover week", "the end of the phase", "the inspection deadline"),
    },
    "education": {
        "site": ("the school office", "our campus", "the staff room", "the library", "admissions"),
        "clients": ("the students", "our teachers", "the parents", "the faculty"),
        "work": ("enrolment", "the exam timetable", "our online classes", "the start of term"),
        "rush": ("exam season", "the start of term", "enrolment week", "the open day"),
    },
    "manufacturing": {
        "site": ("the plant", "the factory floor", "our production line", "the quality lab", "the shop floor"),
        "clients": ("the line supervisors", "our operators", "the maintenance crew", "our distributors"),
        "work": ("the production schedule", "the quality checks", "the shift handover", "our supplier orders"),
        "rush": ("the quarter-end build", "the night shift", "the annual shutdown", "peak production"),
    },
    "hospitality": {
        "site": ("the hotel", "the front desk", "reception", "our properties", "the events team"),
        "clients": ("our guests", "the event planners", "the housekeeping team", "our members"),
        "work": ("check-ins", "the conference bookings", "the room allocations", "the wedding season"),
        "rush": ("the summer season", "conference week", "the holiday weekend", "New Year's Eve"),
    },
    "media": {
        "site": ("the newsroom", "the studio", "our editorial team", "the production office", "the edit suite"),
        "clients": ("our readers", "the editors", "the advertisers", "our subscribers"),
        "work": ("the morning edition", "the podcast schedule", "the ad campaigns", "our video uploads"),
        "rush": ("election night", "the awards season", "the launch of the new series", "the morning deadline"),
    },
    "legal services": {
        "site": ("the firm", "our chambers", "the practice", "the records room", "the partners' office"),
        "clients": ("our clients", "the partners", "the paralegals", "the associates"),
        "work": ("the filings", "billing for the matters", "the case files", "the court deadlines"),
        "rush": ("the filing deadline", "the end of the quarter", "trial preparation", "the year-end billing"),
    },
    "energy": {
        "site": ("the control room", "our field teams", "the plant", "the operations centre", "the substations"),
        "clients": ("our field engineers", "the grid operators", "the customers on our network", "the crews"),
        "work": ("the maintenance schedule", "the meter readings", "the outage reports", "our field visits"),
        "rush": ("the winter peak", "the storm season", "the maintenance window", "the night shift"),
    },
}


def industry_facts(rng: random.Random, industry: str) -> dict[str, str]:
    """One of each of an industry's words: {site}, {clients}, {work}, {rush}."""
    words = INDUSTRY_WORDS.get(industry) or INDUSTRY_WORDS["software"]
    return {key: rng.choice(values) for key, values in words.items()}
