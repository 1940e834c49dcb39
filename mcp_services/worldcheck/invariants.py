"""The invariants a seeded world holds, checked over the seeded state of every library service.

A world holds together as a real company's data does:

- ``timeline``: every past event is at or before now; only what is scheduled lies ahead, and what
  a record's state says is done is not ahead;
- ``replies``: a reply comes after what it answers (a record after the one it belongs to), and every
  "Re:" has its thread;
- ``mentions``: every id, number and amount a text mentions exists, with that value, in the service
  that owns it, and belongs to the customer the text names;
- ``complaints``: a complaint agrees with the facts it complains about (a late delivery was late, a
  declined card was declined, an overdue invoice is overdue);
- ``audiences``: the people a meeting names are its attendees, who asks to move a meeting attends
  it, and what is written to the team goes to the team;
- ``shared``: records two services share agree (linked values exist, in one record; a person's
  name, email and phone, and their company, are the same everywhere);
- ``news`` and ``durations`` (``story``): what a text announces as just signed was won that day, and a
  record ends after it starts, a meeting within a day.

``check`` runs them all and returns each invariant with its violations; the checks read the stores'
declarations (semantic types, links, roles), so a new service is checked without being named here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from mcp_services.kernel.world import Person, World
from mcp_services.worldcheck.seeded import Row, SeededWorld, Table

__all__ = ["INVARIANTS", "Invariant", "Violation", "check"]


@dataclass(frozen=True)
class Violation:
    """One record that breaks an invariant, and how."""

    where: str  # "mailbox.messages msg_0042"
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass(frozen=True)
class Invariant:
    name: str
    description: str
    check: Callable[[Facts], Iterator[Violation]]


def _at(table: Table, key: str) -> str:
    return f"{table.label} {key}"


# -- what the checks read ------------------------------------------------------------------------------

#: Fields that say when a record came to be, most telling first.
_CREATED = (
    "created_at", "created", "date_created", "posted_at", "sent_at", "submitted_at", "added_at", "registered_at",
    "requested_at", "applied_at", "uploaded_at", "occurred_at", "opened_at", "started_at", "joined_at", "join_time",
    "recording_start", "opted_in_at", "opted_out_at",
)
_TEXT = ("text", "subject")
_MONEY_KEYS = ("amount", "total", "price", "unit_price", "unit_amount", "subtotal", "cost", "fee", "annual_fee")
_QUANTITY_KEYS = ("quantity", "qty", "seats")

ID_PATTERN = re.compile(
    r"(?<![\w#&/@.-])(?:"
    r"#\d{3,6}"  # an order name
    r"|[A-Z]{1,6}(?:-[A-Z0-9]+)*-\d+[A-Z0-9]*(?:-[A-Z0-9]+)*"  # INV-0042, PO-12345, MSA-2025-001, ENG-12
    r"|[a-z]{2,6}_\d{3,}"  # ch_0042, tk_0007
    r"|1Z[0-9A-Z]{10,}|\d{12,34}|[A-Z]{3}\d{6,}"  # tracking numbers, bank references
    r")(?![\w-])"
)
AMOUNT_PATTERN = re.compile(
    r"(?:(?<![\w.])(?P<pre>USD|\$) ?(?P<a>\d{1,3}(?:,\d{3})+(?:\.\d{2})?|\d+(?:\.\d{2})?))"
    r"|(?:(?<![\w.,])(?P<b>\d{1,3}(?:,\d{3})+(?:\.\d{2})?|\d+\.\d{2}) ?USD\b)"
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DOMAIN = re.compile(r"@([\w-]+(?:\.[\w-]+)+)")
_PHONE = re.compile(r"\+\d{7,15}")
#: A sentence of a text (a full stop inside an amount or a version does not end it).
SENTENCE = re.compile(r"[^.!?\n]+(?:\.\d[^.!?\n]*)*")


def amounts_in(text: str) -> list[tuple[int, float]]:
    """(position, value) of every amount of money a text states."""
    found = []
    for m in AMOUNT_PATTERN.finditer(text):
        raw = m.group("a") or m.group("b")
        found.append((m.start(), round(float(raw.replace(",", "")), 2)))
    return found


class Facts:
    """A seeded world with the indexes the checks share (built lazily, once)."""

    def __init__(self, seeded: SeededWorld) -> None:
        self.seeded = seeded
        self.world: World = seeded.world
        self.now = self.world.now
        self.today = self.now[:10]
        self._money_of: dict[str, set[float]] = {}
        self._owners: dict[str, set[str]] = {}
        self._created_fields: dict[str, tuple[str, ...]] = {}

    # people and organisations
    @cached_property
    def people_by_email(self) -> dict[str, Person]:
        return {p.email: p for p in self.world.people}

    @cached_property
    def team_emails(self) -> frozenset[str]:
        return frozenset(p.email for p in self.world.team)

    @cached_property
    def org_by_name(self) -> dict[str, str]:
        return {o.name: o.id for o in self.world.organisations}

    @cached_property
    def _org_names(self) -> tuple[re.Pattern[str], dict[str, str]]:
        """One pattern for every customer organisation's name, and what each name, domain and phone points to."""
        pointers: dict[str, str] = {}
        for org in self.world.organisations[1:]:
            pointers[org.name] = pointers[org.domain] = pointers[org.phone] = org.id
        for person in self.world.customers:
            pointers[person.phone] = person.organisation_id
        names = sorted((o.name for o in self.world.organisations[1:]), key=len, reverse=True)
        return re.compile("|".join(map(re.escape, names)) or r"(?!)"), pointers

    def organisations_named(self, text: str) -> set[str]:
        """The customer organisations a text names: by name, an email at their domain, a phone of theirs."""
        pattern, pointers = self._org_names
        found = {m.group() for m in pattern.finditer(text)}
        found |= {m.group(1) for m in _DOMAIN.finditer(text)} | set(_PHONE.findall(text))
        return {pointers[f] for f in found if f in pointers}

    @cached_property
    def by_entity(self) -> dict[tuple[str, str], Table]:
        """(service, entity) -> the table of its records (by the semantic type of their id)."""
        found = {}
        for table in self.seeded:
            key_field = table.fields.get("id")
            if key_field is not None and key_field.semantic and key_field.semantic.startswith("id:"):
                service, entity = key_field.semantic[3:].split(".", 1)
                found[(service, entity)] = table
        return found

    @cached_property
    def succeeded_charges(self) -> dict[str, list[float]]:
        """Customer email -> the amounts of their succeeded card charges."""
        customers = self.seeded.rows("payments", "customers")
        found: dict[str, list[float]] = defaultdict(list)
        for charge in self.seeded.rows("payments", "charges").values():
            customer = customers.get(charge.get("customer_id") or "")
            if customer and charge.get("status") == "succeeded":
                found[customer["email"]].append(round(float(charge["amount"]), 2))
        return found

    @cached_property
    def emails_of_org(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = defaultdict(list)
        for person in self.world.people:
            found[person.organisation_id].append(person.email)
        return found

    @cached_property
    def customer_names(self) -> dict[str, str]:
        return {p.name: p.email for p in self.world.customers}

    # the structured values of every table
    def structured(self, table: Table) -> list[str]:
        """The fields of a table that hold data, not text people wrote."""
        return [name for name, f in table.fields.items() if f.semantic not in _TEXT]

    @cached_property
    def records(self) -> dict[str, list[tuple[Table, Row]]]:
        """Each identifier a structured field holds (or a name, such as a file's, contains) -> the rows that hold it."""
        index: dict[str, list[tuple[Table, Row]]] = defaultdict(list)
        for table in self.seeded:
            columns = self.structured(table)
            for row in table.rows.values():
                held = {m.group() for column in columns for value in _scalars(row.get(column))
                        if isinstance(value, str) for m in ID_PATTERN.finditer(value)}
                for identifier in held:
                    index[identifier].append((table, row))
        for identifier, table, row in self.documents:
            index[identifier].append((table, row))
        return index

    @cached_property
    def documents(self) -> list[tuple[str, Table, Row]]:
        """(the record it is, table, row) of every document whose header names one: a document is its record."""
        found = []
        for table in self.seeded:
            if "content" not in table.fields_of(*_TEXT):
                continue
            for row in table.rows.values():
                head = "\n".join(str(row.get("content") or "").splitlines()[:5])
                first = ID_PATTERN.search(head)
                if first is not None:
                    found.append((first.group(), table, row))
        return found

    @cached_property
    def catalogue(self) -> frozenset[str]:
        """Identifiers of things anyone may name (products' SKUs): they belong to no one customer."""
        return frozenset(v for table in self.seeded for name in table.fields_of("product_sku")
                         for row in table.rows.values() for v in _scalars(row.get(name)) if isinstance(v, str))

    def money_of(self, identifier: str) -> set[float]:
        """The amounts the records holding ``identifier`` hold (once per identifier)."""
        found = self._money_of.get(identifier)
        if found is None:
            found = set()
            for table, row in self.records.get(identifier, ()):
                found |= _money_values(table, row)
            self._money_of[identifier] = found
        return found

    @cached_property
    def rule_amounts(self) -> frozenset[float]:
        """Amounts the company's written rules set (limits, thresholds): a policy page may state them."""
        from mcp_services.kernel.plans import policies, staff

        rules = [value for module in (policies, staff) for value in vars(module).values() if hasattr(value, "__dataclass_fields__")]
        return frozenset(_floats(policies.policy_plan(self.world)) | _floats(staff.staff_plan(self.world)) | _floats(rules))

    @cached_property
    def all_money(self) -> set[float]:
        values: set[float] = set()
        for table in self.seeded:
            for row in table.rows.values():
                values |= _money_values(table, row)
        return values

    def owners(self, identifier: str) -> set[str]:
        """The customer organisations the records holding ``identifier`` belong to (by their emails and company names)."""
        if identifier not in self._owners:
            self._owners[identifier] = self._find_owners(identifier)
        return self._owners[identifier]

    def _find_owners(self, identifier: str) -> set[str]:
        found: set[str] = set()
        home = self.world.home_organisation_id
        if identifier in self.catalogue:
            return set()
        for table, row in self.records.get(identifier, ()):
            for column in self.structured(table):
                semantic = table.fields[column].semantic
                for value in _scalars(row.get(column)):
                    if not isinstance(value, str):
                        continue
                    if semantic == "email_address" and value in self.people_by_email:
                        found.add(self.people_by_email[value].organisation_id)
                    elif semantic == "company_name" and value in self.org_by_name:
                        found.add(self.org_by_name[value])
        return found - {home}

    def written_at(self, table: Table, row: Row) -> str | None:
        """When a row was written: a document when last modified, anything else when created."""
        modified = row.get("modified_at")
        if "modified_at" in table.fields and isinstance(modified, str):
            return modified
        return self.created_at(table, row)

    # texts
    def texts(self) -> Iterator[tuple[Table, str, Row, str]]:
        """(table, key, row, text) of every text field of every row (a file's content included)."""
        for table in self.seeded:
            columns = [name for name, f in table.fields.items() if f.semantic in _TEXT]
            if not columns:
                continue
            for key, row in table.rows.items():
                for column in columns:
                    value = row.get(column)
                    if isinstance(value, str) and value:
                        yield table, key, row, value

    def created_at(self, table: Table, row: Row) -> str | None:
        """When a row came to be: its first field of ``_CREATED`` that holds a time."""
        fields = self._created_fields.get(table.label)
        if fields is None:
            fields = self._created_fields[table.label] = tuple(n for n in _CREATED if n in table.fields)
        for name in fields:
            value = row.get(name)
            if isinstance(value, str):
                return value
        return None


def _floats(value: Any) -> set[float]:
    """Every float inside a plan's frozen dataclasses (its tuples and mappings included)."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, float):
        return {round(value, 2)}
    if isinstance(value, (list, tuple, frozenset, set)):
        return set().union(*(_floats(v) for v in value)) if value else set()
    if isinstance(value, Mapping):
        return set().union(*(_floats(v) for v in value.values())) if value else set()
    if hasattr(value, "__dataclass_fields__"):
        return set().union(*(_floats(getattr(value, f)) for f in value.__dataclass_fields__)) or set()
    return set()


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    else:
        yield value


def _money_values(table: Table, row: Row) -> set[float]:
    """The amounts of money a row holds: its money fields, the amounts of the lines inside it, a document's figures."""
    if "content" in table.fields and isinstance(row.get("content"), str):
        return {value for _, value in amounts_in(row["content"])}
    values = {round(float(row[name]), 2) for name, f in table.fields.items()
              if f.semantic == "money" and isinstance(row.get(name), (int, float))}
    for name, f in table.fields.items():
        if isinstance(row.get(name), (list, dict)):
            values |= _nested_money(row[name])
    values |= _nested_money({k: v for k, v in row.items() if k in _MONEY_KEYS or k in _QUANTITY_KEYS})
    return values


def _nested_money(value: Any) -> set[float]:
    found: set[float] = set()
    if isinstance(value, list):
        for item in value:
            found |= _nested_money(item)
    elif isinstance(value, dict):
        money = [float(v) for k, v in value.items() if k in _MONEY_KEYS and isinstance(v, (int, float))]
        found |= {round(m, 2) for m in money}
        quantity = next((v for k, v in value.items() if k in _QUANTITY_KEYS and isinstance(v, int)), None)
        if quantity:
            found |= {round(m * quantity, 2) for m in money}
        for item in value.values():
            if isinstance(item, (list, dict)):
                found |= _nested_money(item)
    return found


# -- timeline ----------------------------------------------------------------------------------------------

Predicate = Callable[[Row], bool]


def _always(_: Row) -> bool:
    return True


def _status(field: str, *values: str) -> Predicate:
    return lambda row: row.get(field) in values


#: What may lie ahead of now, per table: field -> when (a predicate on the row). Every other date and time
#: of a record is a past event.
AHEAD: Mapping[str, Mapping[str, Predicate]] = {
    "crm.deals": {"close_date": _status("stage", "qualification", "proposal", "negotiation")},
    "calendar.events": {"start": _always, "end": _always},
    "payments.disputes": {"evidence_due_by": _status("status", "needs_response", "warning_needs_response")},
    "accounting.invoices": {"due_date": _always},
    "accounting.bills": {"due_date": _always},
    "projects.issues": {"due_date": _always},
    "files.files": {"shared_link_expires_on": _always},
    "files.folders": {"shared_link_expires_on": _always},
    "sms.messages": {"send_at": _status("status", "scheduled", "canceled")},
    "hr.employees": {"hire_date": _always},  # a new hire who has not started yet
    "hr.onboarding_tasks": {"due_date": _always},
    "hr.time_off_requests": {"start_date": _always, "end_date": _always},
    "recruiting.interviews": {"start_at": _status("status", "scheduled"), "end_at": _status("status", "scheduled")},
    "recruiting.offers": {"start_date": _always},
    "marketing.campaigns": {"schedule_time": _status("status", "scheduled", "paused")},
    "meetings.meetings": {"start_time": _status("status", "scheduled", "waiting", "cancelled")},
    "tasks.tasks": {"due_on": _always},
    "voice.callbacks": {"due_at": _always},
    "commerce.discount_codes": {"starts_at": _always, "ends_at": _always},
    "commerce.fulfillments": {"estimated_delivery_at": _always},
    "esign.envelopes": {"expires_at": _always},
}
#: What must lie ahead: a record whose state says it has not happened yet (field -> when). (A recruiting interview
#: stays "scheduled" after it took place until its scorecards are in: that one may lie behind.)
SCHEDULED: Mapping[str, Mapping[str, Predicate]] = {
    "sms.messages": {"send_at": _status("status", "scheduled")},
    "marketing.campaigns": {"schedule_time": _status("status", "scheduled")},
    "meetings.meetings": {"start_time": _status("status", "scheduled")},
}


def _timeline(facts: Facts) -> Iterator[Violation]:
    now, today = facts.now, facts.today
    for table in facts.seeded:
        ahead = AHEAD.get(table.label, {})
        scheduled = SCHEDULED.get(table.label, {})
        columns = table.fields_of("datetime", "date")
        for key, row in table.rows.items():
            for column in columns:
                value = row.get(column)
                if not isinstance(value, str):
                    continue
                limit = now if "T" in value else today
                may = ahead.get(column)
                if value > limit and not (may and may(row)):
                    yield Violation(_at(table, key), f"{column} {value} is after now ({now}) though it already happened")
                must = scheduled.get(column)
                if must and must(row) and value <= limit:
                    yield Violation(_at(table, key), f"{column} {value} is not ahead of now ({now}) though it is still to come")
            created = facts.created_at(table, row)
            if created is None:
                continue
            for column in columns:
                value = row.get(column)
                if (column in ahead or column in _CREATED or not isinstance(value, str) or "T" not in value
                        or column in ("start", "end", "start_at", "end_at", "start_time", "due_at", "send_at")):
                    continue
                if value < created:
                    yield Violation(_at(table, key), f"{column} {value} is before the record was created ({created})")


# -- replies ---------------------------------------------------------------------------------------------


def _replies(facts: Facts) -> Iterator[Violation]:
    """A child record is written after its parent; a reply after what it answers; a "Re:" has its thread."""
    by_entity = facts.by_entity
    for table in facts.seeded:
        refs = [(name, f.semantic[3:]) for name, f in table.fields.items()
                if name != "id" and f.semantic and f.semantic.startswith("id:") and f.semantic[3:].startswith(f"{table.service}.")]
        if not refs:
            continue
        for key, row in table.rows.items():
            when = facts.created_at(table, row)
            if when is None:
                continue
            for name, target in refs:
                if (table.label, name) in _CONTAINERS:
                    continue
                parent_table = by_entity.get(tuple(target.split(".", 1)))  # type: ignore[arg-type]
                parent_key = row.get(name)
                if parent_table is None or not isinstance(parent_key, str) or parent_table is table and parent_key == key:
                    continue
                parent = parent_table.rows.get(parent_key)
                parent_when = facts.created_at(parent_table, parent) if parent else None
                if parent_when is not None and when < parent_when:
                    yield Violation(_at(table, key), f"written at {when}, before {parent_table.label} {parent_key} "
                                                     f"({parent_when}) it belongs to")
    yield from _re_subjects(facts)


#: References to a container a record can be moved into after it was made (a file into a newer folder).
_CONTAINERS = frozenset({("files.files", "parent_id"), ("files.folders", "parent_id")})
#: Well-known names that look like ids but name no record (tax forms).
_COMMON_TERMS = frozenset({"I-9", "W-4", "W-2", "W-9", "SOC-2"})


def _base_subject(subject: str) -> str:
    return re.sub(r"^(?:(?:re|fwd?):\s*)+", "", subject, flags=re.IGNORECASE).strip()


def _re_subjects(facts: Facts) -> Iterator[Violation]:
    messages = facts.seeded.rows("mailbox", "messages")
    threads = facts.seeded.rows("mailbox", "threads")
    subjects = {_base_subject(str(t.get("subject", ""))).lower() for t in threads.values()}
    for table in facts.seeded:
        columns = [n for n, f in table.fields.items() if f.semantic == "subject"]
        for key, row in table.rows.items():
            for column in columns:
                value = row.get(column)
                if not isinstance(value, str) or not re.match(r"^re:", value, re.IGNORECASE):
                    continue
                if table.label in ("mailbox.messages", "mailbox.drafts"):
                    original = messages.get(row.get("in_reply_to") or "")
                    if original is None:
                        yield Violation(_at(table, key), f"{value!r} answers no message (no in_reply_to)")
                    elif original.get("thread_id") != row.get("thread_id"):
                        yield Violation(_at(table, key), f"{value!r} is not in the thread of {original['id']}")
                    elif _base_subject(original["subject"]) != _base_subject(value):
                        yield Violation(_at(table, key), f"{value!r} answers {original['subject']!r}")
                elif _base_subject(value).lower() not in subjects:
                    yield Violation(_at(table, key), f"{value!r} has no thread with that subject in the mailbox")


# -- mentions ---------------------------------------------------------------------------------------------


def _mentions(facts: Facts) -> Iterator[Violation]:
    for table, key, row, text in facts.texts():
        ids = [m for m in ID_PATTERN.finditer(text)]
        for m in ids:
            if m.group() not in facts.records and m.group() not in _COMMON_TERMS:
                yield Violation(_at(table, key), f"mentions {m.group()}, which no service holds")
        known = [m for m in ids if m.group() in facts.records]
        # An amount beside one record is that record's.
        for sentence in SENTENCE.finditer(text):
            inside = [m for m in known if sentence.start() <= m.start() < sentence.end()]
            named = {m.group() for m in inside}
            amounts = amounts_in(sentence.group()) if "USD" in sentence.group() or "$" in sentence.group() else []
            if not amounts:
                continue
            if len(named) == 1:
                identifier = inside[0].group()
                money = facts.money_of(identifier)
                if money:
                    at = inside[0].start() - sentence.start()
                    position, value = min(amounts, key=lambda a: abs(a[0] - at))
                    if value not in money:
                        yield Violation(_at(table, key), f"states {value:,.2f} beside {identifier}, which holds "
                                                         f"{', '.join(f'{v:,.2f}' for v in sorted(money)[:6])}")
                    continue
            for _, value in amounts:
                if value not in facts.all_money and value not in facts.rule_amounts:
                    yield Violation(_at(table, key), f"states {value:,.2f}, an amount no record holds")
        # A record a text names belongs to the customer it names.
        named_orgs = facts.organisations_named(text) if known and table.label not in _SUMMARIES else set()
        if named_orgs:
            for identifier in {m.group() for m in known}:
                owners = facts.owners(identifier)
                if owners and not owners & named_orgs and table.label not in _SUMMARIES:
                    yield Violation(_at(table, key), f"names {identifier} of another customer than the one it names")


#: Tables whose texts sum up many customers at once (a report, a list): no one customer owns their ids.
_SUMMARIES = frozenset({"files.file_texts", "sheets.sheet_rows", "docs.pages", "docs.page_versions"})


# -- complaints ------------------------------------------------------------------------------------------

_LATE = re.compile(r"\b(?:late|delayed|later than (?:promised|planned|expected)|overdue delivery|behind schedule)\b",
                   re.IGNORECASE)
_NOT_ARRIVED = re.compile(
    r"\b(?:(?:has|have|hasn't|haven't|has not|have not|still not|never|not yet)\s+(?:\w+\s+)?(?:arrived|turned up|"
    r"been delivered|come)|not arrived|where is (?:my|our) order)\b",
    re.IGNORECASE,
)
_OVERDUE = re.compile(r"\b(?:overdue|past due|still unpaid|is unpaid|remains unpaid)\b", re.IGNORECASE)
_DECLINED = re.compile(r"\bdeclined\b", re.IGNORECASE)
_TWICE = re.compile(r"\b(?:charged twice|double[- ]charged|duplicate charge|two charges|charged two times)\b",
                    re.IGNORECASE)


def _complaints(facts: Facts) -> Iterator[Violation]:
    deliveries = _deliveries(facts)
    invoices = facts.seeded.rows("accounting", "invoices")
    charges = facts.seeded.rows("payments", "charges").values()
    declined = {c.get("invoice_number") for c in charges if c.get("status") == "failed"}
    for table, key, row, text in facts.texts():
        written = facts.written_at(table, row) or facts.now
        for sentence in SENTENCE.findall(text):
            for name in re.findall(r"(?<![\w&])#\d{3,6}\b", sentence) if "#" in sentence else ():
                if name not in deliveries:
                    continue
                promised, delivered = deliveries[name]
                if _LATE.search(sentence) and not re.search(r"\b(?:not late|on time)\b", sentence, re.IGNORECASE):
                    arrived_late = delivered is not None and delivered > promised
                    overdue_now = delivered is None and written > promised
                    if not (arrived_late or overdue_now):
                        yield Violation(_at(table, key), f"says order {name} was late, but it was due {promised} and "
                                                         f"{'arrived ' + delivered if delivered else 'is not due yet'}")
                if _NOT_ARRIVED.search(sentence) and delivered is not None and delivered <= written:
                    yield Violation(_at(table, key), f"says order {name} has not arrived; it was delivered {delivered}")
            for number in re.findall(r"\bINV-\d+\b", sentence) if "INV-" in sentence else ():
                invoice = invoices.get(number)
                if invoice is None:
                    continue
                unpaid_then = invoice["status"] == "AUTHORISED" or (invoice["fully_paid_on"] or "9999") > written[:10]
                if _OVERDUE.search(sentence) and not (invoice["due_date"] < written[:10] and unpaid_then
                                                      and invoice["status"] != "VOIDED"):
                    yield Violation(_at(table, key), f"says {number} is overdue; it is due {invoice['due_date']} "
                                                     f"({invoice['status']})")
                if _DECLINED.search(sentence) and number not in declined:
                    yield Violation(_at(table, key), f"says a payment for {number} was declined; none was")
            if _TWICE.search(sentence) and not re.search(r"\b(?:if|whether|never|not)\b", sentence, re.IGNORECASE):
                yield from _duplicate_claim(facts, table, key, row, sentence)


def _deliveries(facts: Facts) -> dict[str, tuple[str, str | None]]:
    """Order name -> (when the store promised it, when the carrier delivered it) of its first parcel."""
    orders = facts.seeded.rows("commerce", "orders")
    scans: dict[str, list[Row]] = defaultdict(list)
    labels = {label["tracking_number"]: label for label in facts.seeded.rows("shipping", "labels").values()}
    for event in facts.seeded.rows("shipping", "tracking_events").values():
        scans[event["label_id"]].append(event)
    found: dict[str, tuple[str, str | None]] = {}
    for fulfillment in sorted(facts.seeded.rows("commerce", "fulfillments").values(), key=lambda f: f["created_at"]):
        order = orders.get(fulfillment["order_id"])
        promised = fulfillment.get("estimated_delivery_at")
        label = labels.get(fulfillment.get("tracking_number") or "")
        if order is None or promised is None or label is None or order["name"] in found:
            continue
        delivered = next((e["occurred_at"] for e in sorted(scans[label["id"]], key=lambda e: e["occurred_at"])
                          if e["status"] == "delivered"), None)
        found[order["name"]] = (promised, delivered)
    return found


def _duplicate_claim(facts: Facts, table: Table, key: str, row: Row, sentence: str) -> Iterator[Violation]:
    """Someone who says they were charged twice has two succeeded charges of one amount (the amount they state)."""
    by_customer = facts.succeeded_charges
    # Who the claim is about: a customer on the row (the sender), named in the sentence, or their company named.
    customers = {p.email for p in facts.world.customers}
    emails = {m.group() for m in _EMAIL.finditer(str(row.values())) if m.group() in customers}
    emails |= {e for name, e in facts.customer_names.items() if name in sentence}
    emails |= {email for org in facts.organisations_named(sentence) for email in facts.emails_of_org[org]}
    doubled = {amount for email in emails for amount in by_customer.get(email, []) if by_customer[email].count(amount) > 1}
    stated = {value for _, value in amounts_in(sentence)}
    if emails and not doubled:
        yield Violation(_at(table, key), "says a customer was charged twice; payments holds no duplicate charge of theirs")
    elif emails and stated and not stated & doubled:
        yield Violation(_at(table, key), f"says {', '.join(f'{v:,.2f}' for v in sorted(stated))} was charged twice; "
                                         f"the duplicates are {', '.join(f'{v:,.2f}' for v in sorted(doubled))}")


# -- audiences -----------------------------------------------------------------------------------------------

_TO_GROUP = re.compile(r"^\s*(?:hi|hello|hey|morning|good morning|dear|all|team)[ ,]*(?:all|team|everyone|everybody|folks)\b"
                       r"|\bto the (?:whole )?team\b", re.IGNORECASE)
_MEETING_WORDS = r"\b(?:meeting|call|sync|demo|review|session|catch-up|check-in)\b"
_MOVE = re.compile(r"\b(?:move|reschedule|push (?:back|out)|postpone|bring forward)\b", re.IGNORECASE)


def _audiences(facts: Facts) -> Iterator[Violation]:
    people = facts.people_by_email
    names: dict[str, set[str]] = defaultdict(set)  # two people may share a name
    for person in facts.world.people:
        names[person.name].add(person.email)
    events = facts.seeded.rows("calendar", "events")
    attendees: dict[str, set[str]] = defaultdict(set)
    for attendee in facts.seeded.rows("calendar", "attendees").values():
        attendees[attendee["event_id"]].add(attendee["email"])
    for key, event in events.items():
        present = attendees[key] | {event.get("organizer_email")}
        text = f"{event.get('title') or ''}\n{event.get('description') or ''}"
        for name, emails in names.items():
            named = {e for e in emails if e in text} or (emails if name in text else set())
            if named and not named & present:
                yield Violation(f"calendar.events {key}", f"names {name}, who is not one of its attendees")
    meetings = facts.seeded.rows("meetings", "meetings")
    registrants: dict[str, set[str]] = defaultdict(set)
    for registrant in facts.seeded.rows("meetings", "registrants").values():
        registrants[registrant["meeting_id"]].add(registrant["email"])
    for key, participant in facts.seeded.rows("meetings", "participants").items():
        meeting = meetings.get(participant.get("meeting_id") or "")
        email = participant.get("email")
        if meeting is None or email is None:
            continue
        invited = {meeting["host_email"], *(meeting.get("invitees") or []), *registrants[meeting["id"]]}
        if email not in invited and meeting.get("kind") != "webinar":
            yield Violation(f"meetings.participants {key}", f"{email} joined {meeting['id']} without being invited")
    for key, meeting in meetings.items():
        invited = {meeting["host_email"], *(meeting.get("invitees") or [])}
        text = f"{meeting.get('topic') or ''}\n{meeting.get('agenda') or ''}"
        for name, emails in names.items():
            named = {e for e in emails if e in text} or (emails if name in text else set())
            if named and not named & invited and meeting.get("kind") != "webinar":
                yield Violation(f"meetings.meetings {key}", f"names {name}, who is not invited")
    # Who asks to move a meeting attends it; what is written to the team goes to the team.
    attending: dict[str, set[str]] = defaultdict(set)  # email -> titles of the meetings they attend
    for key, event in events.items():
        for email in attendees[key] | {event.get("organizer_email")}:
            attending[str(email)].add(str(event.get("title")))
    for key, meeting in meetings.items():
        for email in {meeting["host_email"], *(meeting.get("invitees") or []), *registrants[key]}:
            attending[str(email)].add(str(meeting.get("topic")))
    titles = set().union(*attending.values()) if attending else set()
    team = facts.team_emails
    for key, message in facts.seeded.rows("mailbox", "messages").items():
        sender = str(message.get("from_email"))
        body = str(message.get("body") or "")
        subject = _base_subject(str(message.get("subject") or ""))
        asks_to_move = _MOVE.search(body) and re.search(_MEETING_WORDS, body, re.IGNORECASE)
        if sender in people and sender != facts.world.user.email and asks_to_move:
            if subject in titles and subject not in attending[sender]:
                yield Violation(f"mailbox.messages {key}", f"{sender} asks to move {subject!r}, which they do not attend")
            elif subject not in titles and not attending[sender]:
                yield Violation(f"mailbox.messages {key}", f"{sender} asks to move a meeting, but attends none")
        if _TO_GROUP.search(body) and sender in team:
            recipients = set(message.get("to") or []) | set(message.get("cc") or [])
            colleagues = recipients & team
            if len(colleagues) < max(2, (len(team) - 1) // 2) or recipients - team:
                yield Violation(f"mailbox.messages {key}", f"is written to the team but goes to {len(recipients)} "
                                                           f"people ({len(colleagues)} of {len(team) - 1} colleagues)")


# -- shared records ----------------------------------------------------------------------------------------


def _shared(facts: Facts) -> Iterator[Violation]:
    yield from _links(facts)
    yield from _people_agree(facts)
    deliveries = _deliveries(facts)
    orders = facts.seeded.rows("commerce", "orders")
    for key, fulfillment in facts.seeded.rows("commerce", "fulfillments").items():
        order = orders.get(fulfillment["order_id"])
        if order is not None and order["name"] in deliveries and fulfillment.get("estimated_delivery_at"):
            scanned = deliveries[order["name"]][1]
            if fulfillment.get("delivered_at") != scanned:
                yield Violation(f"commerce.fulfillments {key}", f"delivered_at {fulfillment.get('delivered_at')} is not "
                                                                f"the carrier's delivery scan ({scanned})")
    owners = facts.world.plan.account_owners
    for key, company in facts.seeded.rows("crm", "companies").items():
        org = facts.org_by_name.get(company["name"])
        if org is not None and org in owners and company.get("owner_email") != owners[org].email:
            yield Violation(f"crm.companies {key}", f"owner {company.get('owner_email')} is not the account owner "
                                                    f"{owners[org].email} the other services name")


def _links(facts: Facts) -> Iterator[Violation]:
    """A linked value is a value of that field in the other service; links of one row to one entity name one record."""
    by_entity = facts.by_entity
    home = facts.team_emails | {facts.world.home.name}
    values: dict[tuple[str, str, str], dict[Any, set[str]]] = {}
    for table in facts.seeded:
        links = [(name, f.link) for name, f in table.fields.items() if f.link]
        if not links:
            continue
        grouped: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for name, link in links:
            service, entity, target_field = str(link).split(".")
            grouped[(service, entity)].append((name, target_field))
        for (service, entity), pairs in grouped.items():
            target = by_entity.get((service, entity))
            if target is None:
                continue
            for _, target_field in pairs:
                if (service, entity, target_field) not in values:
                    index: dict[Any, set[str]] = defaultdict(set)
                    for target_key, target_row in target.rows.items():
                        index[target_row.get(target_field)].add(target_key)
                    values[(service, entity, target_field)] = index
            stored = [(name, target_field) for name, target_field in pairs if target_field in target.fields]
            for key, row in table.rows.items():
                matches: set[str] | None = None
                for name, target_field in stored:
                    value = row.get(name)
                    if value is None or value in home:
                        continue  # the team and the home company are in no customer list
                    found = values[(service, entity, target_field)].get(value, set())
                    if not found:
                        yield Violation(_at(table, key), f"{name} {value!r} is no {service} {entity}'s {target_field}")
                    matches = found if matches is None else matches & found
                if matches is not None and not matches and len(stored) > 1:
                    yield Violation(_at(table, key), f"its links to {service} {entity} name different records")


_NAME_FIELDS = ("name", "real_name", "full_name", "contact_person", "customer_name", "billing_name")


def _people_agree(facts: Facts) -> Iterator[Violation]:
    """A world person's email beside a name, a phone or a company says the same person everywhere."""
    people = facts.people_by_email
    for table in facts.seeded:
        groups: dict[str | None, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for name, f in table.fields.items():
            if f.semantic in ("email_address", "person_name", "phone_number", "company_name"):
                groups[f.role][str(f.semantic)].append(name)
        if not any(g.get("email_address") for g in groups.values()):
            continue
        for key, row in table.rows.items():
            for role, fields in groups.items():
                emails = [row.get(n) for n in fields.get("email_address", []) if isinstance(row.get(n), str)]
                persons = [people[e] for e in emails if e in people]
                if len(persons) != 1 or len(emails) != 1:
                    continue
                person = persons[0]
                for column in fields.get("person_name", []):
                    value = row.get(column)
                    if isinstance(value, str) and value not in (person.name, person.first_name):
                        yield Violation(_at(table, key), f"{column} {value!r} beside {person.email} (who is {person.name})")
                for column in fields.get("phone_number", []):
                    value = row.get(column)
                    org_phone = facts.world.organisation(person.organisation_id).phone
                    if isinstance(value, str) and value not in (person.phone, org_phone) and role is not None:
                        yield Violation(_at(table, key), f"{column} {value} beside {person.email} (whose phone is "
                                                         f"{person.phone})")
                for column in fields.get("company_name", []):
                    value = row.get(column)
                    org = facts.world.organisation(person.organisation_id)
                    if isinstance(value, str) and value != org.name and value in facts.org_by_name and role is not None:
                        yield Violation(_at(table, key), f"{column} {value!r} beside {person.email}, who works at {org.name}")
            if {"first_name", "last_name"} <= set(table.fields):
                for column in _fields_of_role_self(table):
                    email = row.get(column)
                    holder = people.get(email) if isinstance(email, str) else None
                    if holder and (row.get("first_name"), row.get("last_name")) != (holder.first_name, holder.last_name):
                        yield Violation(_at(table, key), f"{row.get('first_name')} {row.get('last_name')} is not "
                                                         f"{holder.name}, whose email {email} it holds")


def _fields_of_role_self(table: Table) -> list[str]:
    return [n for n, f in table.fields.items() if f.semantic == "email_address" and f.role == "self"]


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("timeline", "every past event is at or before now; only what is scheduled lies ahead", _timeline),
    Invariant("replies", "a reply comes after what it answers, and every \"Re:\" has its thread", _replies),
    Invariant("mentions", "every id, number and amount a text mentions exists with that value, of that customer",
              _mentions),
    Invariant("complaints", "a complaint agrees with the facts it complains about", _complaints),
    Invariant("audiences", "the people of a meeting are its attendees, and what goes to the team goes to the team",
              _audiences),
    Invariant("shared", "records two services share agree", _shared),
    Invariant("news", "what a text announces as just signed was won that day, and a kickoff follows a won deal",
              lambda facts: _story("news", facts)),
    Invariant("durations", "a record ends after it starts, a meeting lasts a day at most, nothing falls due before "
              "it exists",
              lambda facts: _story("durations", facts)),
)


def _story(name: str, facts: Facts) -> Iterator[Violation]:
    """An invariant of ``story`` (imported here, as it reads ``Facts`` and ``Violation`` of this module)."""
    from mcp_services.worldcheck import story

    check: Callable[[Facts], Iterator[Violation]] = getattr(story, name)
    return check(facts)


def check(seeded: SeededWorld, invariants: Iterable[Invariant] = INVARIANTS) -> dict[str, list[Violation]]:
    """Each invariant's name -> the violations of the seeded world (empty lists when it holds)."""
    facts = Facts(seeded)
    return {inv.name: list(inv.check(facts)) for inv in invariants}
