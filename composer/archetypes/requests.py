"""Requests colleagues make of one another, over any record of any service: one workflow per intent.

"Could you archive the Q3 launch page? It is out of date." "Please add Ben to the ENG-42 issue."
"Can you move the Acme kickoff to Thursday at 10:00?" Each workflow here is an intent with the
reasons people give for it; the record, the service and the tool are whatever the catalog holds
that does that intent on a record of some kind (``composer.kinds``), hand-written or generated. A
colleague asks on a channel (an email or a chat post), the agent finds the record through any read
that reaches it, does what was asked and confirms on the channel; the walk adds the follow-ups.

The record is named the way a colleague names it: its label in quotes with its kind and system
("the wiki page "Q3 launch plan""), or the number people quote for it, and the name is proved to pick
it out alone. The other values the tool needs are stated in the request (a new status, a time, a
colleague by name) or looked up (a section, a folder, a parent page, by its name).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from mcp_services.kernel.world import Person

from composer.catalog import HEADER_PARAM, Catalog, Param, ToolInfo
from composer.content import text_param
from composer.archetypes.generic import catalog_weight
from composer.archetypes.reasons import Reason, check, ground, withheld_facts, withheld_words
from composer.archetypes.premises import (HELD_ALREADY, NOT_THEIRS, SAME, Held, held_already, members_of, not_theirs,
                                          states_roles)
from composer.kinds import Kind, system_name
from composer.resolve import resolve, value_at
from composer.phrasing import gerund, spoken_field
from composer.plan import Expr, ListOf, Lit, Ref
from composer.scenario import Family, Rec, Reference, Said, Scenario, Skip, Step, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, reply, reply_clause
from composer.stages.lookup import listed_under_parent, lookup, shows
from composer.phrases import phrase
from composer.walk import directory

#: How an asker opens a request to a colleague, per channel kind.
_OPENERS = ("Could you {do}?", "Can you please {do}?", "Would you mind {doing}?", "When you get a moment, please {do}.")
#: Words that name the end of a time range in a parameter ("end_date", "validTo", "expires_at").
_ENDS = frozenset({"end", "ends", "to", "until", "till", "finish", "stop", "expires", "expiry", "expiration"})
#: The chat channel each family of work asks in.
_CHANNEL_OF: dict[str, str] = {
    "support": "support", "sales": "sales", "finance": "finance", "operations": "general", "hr": "hiring",
    "marketing": "general",
}
#: Which family of work a library service's records belong to (generated services: operations).
SERVICE_FAMILY: dict[str, Family] = {
    "crm": "sales", "esign": "sales", "helpdesk": "support", "kb": "support", "voice": "support", "sms": "support",
    "payments": "finance", "accounting": "finance", "expenses": "finance", "hr": "hr", "recruiting": "hr",
    "marketing": "marketing", "meetings": "marketing", "forms": "marketing", "commerce": "operations",
    "shipping": "operations", "files": "operations", "docs": "operations", "sheets": "operations", "tasks": "operations",
    "projects": "support", "calendar": "operations", "chat": "operations", "mailbox": "operations",
}
_ASKERS: dict[str, tuple[str, ...]] = {
    "support": ("support lead", "support agent"), "sales": ("account executive", "sales lead"),
    "finance": ("finance lead", "accountant"), "operations": ("office manager", "product manager"),
    "hr": ("office manager", "finance lead"), "marketing": ("product manager", "sales lead"),
}
#: Parameters an asker never mentions (paging, dry runs, the agent's own notes).
_PLUMBING = frozenset({"limit", "cursor", "notify", "send_notification", "dry_run", "comment", "note", "reason", "notes"})
_TEXTS = ("body", "text", "content", "message", "description")
#: What of a newcomer each semantic type takes (a person added to a service: a candidate, a registrant, a contact).
_NEWCOMER_TYPES = {"email_address": "email", "person_name": "name", "phone_number": "phone"}
#: Address parameters a colleague's request fills with a colleague (never a customer's address).
_STAFF_EMAILS = frozenset({"assignee_email", "owner_email", "host_email", "interviewer_emails", "attendee_emails", "submitter_email"})
#: What a colleague asks to have written on a record: the text is theirs, stated in quotes.
NOTES = (
    "Customer asked for a call back next week.", "Waiting on legal before we go further.", "Budget approved for next quarter.",
    "Moved to the new account manager.", "Agreed on the phone to revisit this in April.", "Needs a second pair of eyes.",
)
#: A reason the reference plan gives where a tool demands one (the agent may give any).
STATED_REASONS = ("Customer changed their mind.", "Duplicate of another one.", "Agreed with the customer on the phone.",
           "No longer needed after the review.", "Entered by mistake.")
#: Names of new things colleagues ask to have set up.
NEW_NAMES = (
    "Q3 board pack", "Partner onboarding checklist", "Pricing update 2025", "Customer advisory board", "Security review",
    "Office move", "Renewals pipeline", "Support playbook", "Quarterly business reviews", "Holiday cover plan",
)
#: Records tried per tool: most records take most actions; few are in the state a restore or reopen needs.
_TRIES = {"restore": 14, "reopen": 14, "publish": 12, "send": 10, "transition": 10, "cancel": 10, "pay": 10, "approve": 10, "reject": 10}
#: Ids a system makes for itself (tor_0100, cmp_0011): nobody quotes them in a request.
_INTERNAL_ID = re.compile(r"^[a-z]+_[0-9a-z]+$")
#: Verbs of the tools' phrases, as a confirmation says them ("Done: I archived ...").
_PAST = {"send": "sent", "make": "made", "take": "took", "give": "gave", "set": "set", "put": "put", "bring": "brought",
         "label": "labelled", "cancel": "cancelled", "tag": "tagged", "have": "had", "let": "let", "get": "got"}


@dataclass(frozen=True)
class Choice:
    tool: ToolInfo
    kind: Kind
    named: dict[str, Expr]  # fixed arguments beside the record's (the type of a polymorphic pair)
    param: str = ""  # the parameter that names the record ("" for a new record)
    field: str = "id"  # the record's field it takes: its id, or a natural key (a chat channel's name)

    def fixed(self) -> set[str]:
        """The parameters the choice fills itself (the request never states them)."""
        return set(self.named) | ({self.param} if self.param else set())


def _spoken_param(name: str) -> str:
    """A parameter as people name the field ("department_id" -> "department")."""
    return spoken_field(re.sub(r"_ids?$|Ids?$", "", name))


def _choices(s: Scenario, intent: str) -> list[Choice]:
    """Every (tool, kind) where a tool of this intent acts on one record of that kind, in a seeded order."""
    found = []
    for kind in s.kinds:
        for tool in kind.acting(intent):
            naming = s.kinds.naming(tool, kind.service, kind.entity)
            if naming is None:
                continue
            named: dict[str, Expr] = {}
            if naming.type_param is not None:
                named[naming.type_param] = Lit(kind.entity)
            found.append(Choice(tool, kind, named, naming.param, naming.field))
    s.rng.shuffle(found)
    return s.less_used_first(found, lambda choice: (choice.tool,))


def _future(s: Scenario, days: int, hour: int) -> str:
    moment = (s.world.now_dt + timedelta(days=days)).replace(hour=hour, minute=0, second=0)
    while moment.weekday() >= 5:
        moment += timedelta(days=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _spoken_time(iso: str) -> str:
    from composer.phrasing import long_date

    return f"{long_date(iso)} at {iso[11:16]}"


@dataclass
class _Planned:
    """What a request asks to set one parameter to: a stated value, another record (by its name), or a colleague."""

    value: Any = None  # the concrete value (for records and people: the id or the address)
    record: Rec | None = None
    kind: Kind | None = None
    person: Person | None = None
    is_list: bool = False
    stated: bool = True  # False: a value the request leaves to the agent (a header, a field the API wants back)


class _Plan:
    """The values a request asks for, chosen before anything is planted; then turned into steps."""

    def __init__(self, s: Scenario, choice: Choice, rec: Rec | None, colleague: Person, *, new_name: str = "") -> None:
        self.s, self.choice, self.colleague = s, choice, colleague
        self.rec: Rec = rec if rec is not None else Rec(choice.kind.service, choice.kind.entity, "", "", {})
        self.new_name = new_name
        self.params: dict[str, _Planned] = {}
        self.words: dict[str, str] = {}  # how the request states each value
        self.facts: list[Said] = []
        self.details: list[str] = []  # stated values the tool's phrase has no place for: said after it, in brackets
        self._newcomer: Person | None = None

    @property
    def newcomer(self) -> Person | None:
        """The person new to the service whom the request adds, once chosen."""
        return self._newcomer

    def choose(self) -> None:
        tool = self.choice.tool
        for param in tool.params:
            if param.name in self.choice.fixed() or (param.name in _PLUMBING and not param.required):
                continue
            if not param.required and not self._worth_setting(param):
                continue
            planned = self._choose(param)
            if planned is None:
                if param.required:
                    raise Skip(f"{tool.key}: cannot state a value for {param.name}")
                continue
            self.params[param.name] = planned
        if tool.intent == "update" and not any(p.stated for p in self.params.values()):
            raise Skip(f"{tool.key}: nothing to change")

    def complete(self, words: str) -> str:
        """The request's words with the details its phrase leaves out (a new contact's address) after them."""
        missing = [d for d in self.details if d not in words]
        text = f"{words} ({', '.join(missing)})" if missing else words
        # A value the phrase has no place for (a reason among fixed ones, the field an update changes), as people say it:
        # "..., with its sharing set to anyone with link", never "(sharing: anyone with link)".
        unsaid = [(name, value) for name, value in self.words.items() if value not in text]
        if unsaid:
            text += ", with its " + " and its ".join(f"{_spoken_param(name)} set to {value}" for name, value in unsaid)
        return text

    def said_in(self, words: str) -> bool:
        """Whether the request's words state every value it asks for (a value left unsaid is one the agent cannot know)."""
        return all(said in words for said in self.words.values())

    def keep_facts_in(self, words: str) -> None:
        """Keep only the facts the request states (a value the phrase leaves out is the agent's, not a fact)."""
        from composer.plan import text_of

        self.facts = [f for f in self.facts if not isinstance(f.value, Lit) or text_of(f.value.value).lower() in words.lower()
                      or str(f.value.value).lower() in words.lower()]

    def concrete(self) -> dict[str, Any]:
        """The arguments as values, to try the call before anything is planted."""
        out: dict[str, Any] = {}
        for name, planned in self.params.items():
            out[name] = [planned.value] if planned.is_list else planned.value
        return out

    def steps(self) -> dict[str, Expr]:
        """The arguments as expressions; records and colleagues are looked up as the agent would."""
        s = self.s
        out: dict[str, Expr] = {}
        for name, planned in self.params.items():
            expr: Expr
            if planned.person is not None:
                expr, _ = directory(s, planned.person)
            elif planned.record is not None and planned.kind is not None:
                label = planned.record[planned.kind.label or "id"]
                found = lookup(s, planned.record, {planned.kind.label or "id": label, "query": label, "name": label, "title": label},
                               say=f"find the {planned.kind.noun} {label}")
                expr = found.ref("id")
            else:
                expr = Lit(planned.value, stated=planned.stated)
            out[name] = ListOf((expr,)) if planned.is_list else expr
        return out

    def params_given_back(self, param: Param, current: Any) -> bool:
        """A required field of the record the request does not change: an update that replaces the whole record needs it."""
        return (
            self.choice.tool.intent in ("update", "transition", "close", "reopen", "tag")
            and param.name in self.rec.row and current not in (None, "", [])
            and not param.enum and param.semtype not in ("datetime", "date")
            and any(p.name != param.name and not p.required for p in self.choice.tool.params)
        )

    def _worth_setting(self, param: Param) -> bool:
        # An update names the one field it changes: the first optional field the record has, of a kind a person states.
        if self.choice.tool.intent not in ("update", "reschedule", "transition") or any(p.stated for p in self.params.values()):
            return False
        moves = bool(param.semtype and param.semtype.startswith("id:")) and param.name in self.rec.row  # under another parent
        return (param.name in self.rec.row and (bool(param.enum) or param.semtype in ("subject", "datetime", "date"))) or moves or (
            self.choice.tool.intent == "reschedule" and param.semtype in ("datetime", "date")
        )

    def _choose(self, param: Param) -> _Planned | None:
        s, rec = self.s, self.rec
        current = rec.get(param.name)
        said = spoken_field(param.name)
        if param.required and HEADER_PARAM.match(param.name) and param.json_type == "string":
            return _Planned(value="default", stated=False)  # an HTTP API's plumbing: any value works, nobody says it
        if param.required and self.params_given_back(param, current):
            return _Planned(value=current, stated=False)  # the API wants the record's own value back (a full update)
        if param.enum:
            options = [v for v in param.enum if v != current and isinstance(v, str)]
            if not options:
                return None
            value = s.rng.choice(options)
            self.words[param.name] = str(value).replace("_", " ")
            self.facts.append(Said(f"the new {said}", Lit(str(value).replace("_", " ")), "text"))
            return _Planned(value=value, is_list=param.is_list)
        if self._adds_person() and (param.name in ("first_name", "last_name") or param.semtype in _NEWCOMER_TYPES):
            person = self._newcomer_person()
            if person is None:
                return None
            value = {"first_name": person.first_name, "last_name": person.last_name}.get(param.name) or getattr(
                person, _NEWCOMER_TYPES.get(param.semtype or "", "name"))
            self.words[param.name] = value
            if param.semtype in ("email_address", "phone_number"):
                self.details.append(value)
            self.facts.append(Said("who", Lit(person.first_name), "text"))
            return _Planned(value=value, is_list=param.is_list)
        if param.semtype == "email_address" and self.choice.tool.intent == "remove":
            member = self._member()
            if member is None:
                return None
            self.words[param.name] = member.name
            self.facts.append(Said("who", Lit(member.first_name), "text"))
            return _Planned(value=member.email, person=member, is_list=param.is_list)
        if param.semtype == "email_address":
            self.words[param.name] = self.colleague.name
            self.facts.append(Said("who", Lit(self.colleague.first_name), "text"))
            return _Planned(value=self.colleague.email, person=self.colleague, is_list=param.is_list)
        if param.semtype in ("datetime", "date"):
            # The end of a range ("end", "to", "until") always after its start: starts are 2-8 days out, ends 9-14.
            ends = bool(_ENDS.intersection(spoken_field(param.name).split()))
            iso = _future(s, s.rng.randint(9, 14) if ends else s.rng.randint(2, 8), s.rng.choice((9, 10, 14, 15)))
            value = iso if param.semtype == "datetime" else iso[:10]
            self.words[param.name] = _spoken_time(iso) if param.semtype == "datetime" else _spoken_time(iso)[:-9]
            self.facts.append(Said(f"the new {said}", Lit(value), "datetime" if param.semtype == "datetime" else "date"))
            return _Planned(value=value)
        if self.new_name and param.required and (param.semtype in ("subject", "channel_name", "file_name", "tag")
                                                 or param.name in ("name", "title", "summary", "topic")):
            value = _as_name(self.new_name, param.semtype)
            self.words[param.name] = f'"{value}"'
            self.facts.append(Said(f"the {said}", Lit(value), "text"))
            return _Planned(value=value)
        if param.semtype == "file_name" and self.choice.tool.intent == "link":
            return self._real_file(param)
        if param.semtype == "subject" or param.name in ("name", "title", "summary", "topic", "new_name", "new_title"):
            base = str(current or rec.get(self.choice.kind.label or "") or "").strip()
            if not base or param.semtype in ("person_name", "company_name"):
                return None
            value = _renamed(base, param.semtype, s.world.now[:4])
            self.words[param.name] = f'"{value}"'
            self.facts.append(Said(f"the new {said}", Lit(value), "text"))
            return _Planned(value=value)
        if param.semtype and param.semtype.startswith("id:"):
            return self._other_record(param)
        if param.required and param.name in ("reason", "comment") and not param.enum:
            return _Planned(value=s.rng.choice(STATED_REASONS), stated=False)  # any reason will do: the agent writes its own
        if param.required and (param.semtype == "text" or param.name in _TEXTS + ("note", "notes")):
            text = s.rng.choice(NOTES)
            self.words[param.name] = f'"{text}"'
            return _Planned(value=text)
        if param.semtype == "money" and param.required:
            amount = float(s.rng.choice((1200, 2500, 4800, 9900, 15000)))
            self.words[param.name] = f"{amount:,.2f} {s.world.currency}"
            self.facts.append(Said(f"the {said}", Lit(amount), "money"))
            return _Planned(value=amount)
        if param.semtype == "tag" or param.name in ("tags", "labels", "tag", "label", "add", "add_labels", "remove_labels"):
            removing = "remove" in self.choice.tool.name or param.name.startswith("remove")
            if removing:  # what comes off is on the record now
                present = [t for t in _record_tags(rec) if isinstance(t, str) and t.islower()]
                if not present:
                    return None
                label = s.rng.choice(present)
                self.words[param.name] = f'"{label}"'
                self.facts.append(Said("the label", Lit(label), "text"))
                return _Planned(value=label, is_list=param.is_list)
            label = s.rng.choice(("q3-review", "needs-follow-up", "customer-facing", "archive-candidate"))
            self.words[param.name] = f'"{label}"'
            self.facts.append(Said("the label", Lit(label), "text"))
            return _Planned(value=label, is_list=param.is_list)
        return None

    def _real_file(self, param: Param) -> _Planned | None:
        """A document added to a record (an envelope) is one that exists: a file of the shared drive about the same
        company, named as it is there."""
        s, rec = self.s, self.rec
        if not s.has("files"):
            return None
        label = str(rec.get(self.choice.kind.label or "") or "")
        company = str(rec.get("company_name") or "") or (label.rsplit(" - ", 1)[-1] if " - " in label else "")
        files = [str(f["name"]) for f in s.records("files", "file") if company and company in str(f.get("name") or "")
                 and not f.get("trashed")]
        if not files:
            return None
        # The papers of that kind of agreement first ("Mutual NDA" for an NDA's envelope), then its other documents;
        # never its invoices or call notes where a document is there.
        papers = label.split(":", 1)[-1].rsplit(" - ", 1)[0].strip()
        files = ([f for f in files if papers and papers in f] or [f for f in files if f.endswith((".pdf", ".docx"))
                                                                   and not f.startswith("Invoice ")] or files)
        name = s.rng.choice(sorted(files))
        self.words[param.name] = f'the file "{name}" from the shared drive'
        self.facts.append(Said("the document", Lit(name), "text"))
        return _Planned(value=name)

    def _adds_person(self) -> bool:
        return adds_person(self.choice.tool)

    def _newcomer_person(self) -> Person | None:
        """Someone of a customer's company whom no record of the tool's service knows by their address yet."""
        if self._newcomer is None:
            s, service = self.s, self.choice.tool.service
            known: set[str] = set()
            for kind in s.kinds:
                if kind.service == service:
                    for path in kind.person_paths(value="email"):
                        if "." not in path.path:
                            known |= {str(r.get(path.path) or "").lower() for r in s.records(service, kind.entity)}
            team = {p.email for p in s.world.team}
            options = [p for p in s.world.people if p.email not in team and p.email.lower() not in known]
            self._newcomer = s.rng.choice(options) if options else _new_person(s)
        return self._newcomer

    def _member(self) -> Person | None:
        """Someone now on the record (an attendee, a watcher, a member): see ``premises.members_of``."""
        found = members_of(self.s, self.choice.kind, self.rec)
        return self.s.rng.choice(found) if found else None

    def _other_record(self, param: Param) -> _Planned | None:
        """Another record the tool needs (a section, a folder, a parent page), named by its label."""
        s = self.s
        service, entity = str(param.semtype)[3:].split(".", 1)
        kind = s.kinds.get(service, entity)
        if kind is None or not kind.label or (service, entity) == (self.choice.kind.service, self.choice.kind.entity):
            return None
        current = self.rec.get(param.name)
        options = [r for r in s.records(service, entity) if r.key != current and isinstance(r.get(kind.label), str)]
        if self.choice.tool.intent == "link":  # what is linked belongs together: the same company's papers
            options = _belonging(self.rec, self.choice.kind.label, options, kind.label)
        s.rng.shuffle(options)
        for other in options[:4]:
            label = other[kind.label]
            if _count(s, kind, kind.label, label) == 1:
                self.words[param.name] = f'the {kind.noun} "{label}"'
                self.facts.append(Said(f"the {kind.noun}", Lit(label), "text"))
                return _Planned(value=other.key, record=other, kind=kind)
        return None


def _belonging(rec: Rec, label: str | None, options: list[Rec], other_label: str) -> list[Rec]:
    """Of ``options``, those that belong with ``rec`` where its name says whose it is ("Smith LLC - Order Form.pdf" goes
    with "Please DocuSign: Order Form - Smith LLC", never with another company's envelope); all where it does not say."""
    name = str(rec.get(label or "") or "")
    owners = {str(rec.get("company_name") or "")} | (set(name.split(" - ")) if " - " in name else set())
    owners = {o for o in owners if len(o) > 3}
    if not owners:
        return options
    return [r for r in options if any(o in str(r.get(other_label)) for o in owners)]


def adds_person(tool: ToolInfo) -> bool:
    """Whether the tool adds a person who is new to its service (a candidate, a registrant, a contact)."""
    return tool.intent in ("create", "invite") and (tool.param("first_name") is not None or any(
        p.required and p.semtype == "person_name" for p in tool.params))


def _new_person(s: Scenario) -> Person:
    """Someone new to the world at one of its customers (a new contact there), named and numbered from the scenario's seed."""
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(s.rng.randrange(2**32))
    taken = {p.name for p in s.world.people}
    org = s.rng.choice(s.world.organisations[1:])
    first, last = fake.first_name(), fake.last_name()
    while f"{first} {last}" in taken:
        first, last = fake.first_name(), fake.last_name()
    username = f"{first}.{last}".lower().replace("'", "")
    return Person(id="per_new", first_name=first, last_name=last, name=f"{first} {last}", email=f"{username}@{org.domain}",
                  phone=f"+1{s.rng.randint(201, 989)}555{s.rng.randint(1000, 9999)}", username=username,
                  organisation_id=org.id, job_title=fake.job()[:80], city=org.city, address=org.address)


def _record_tags(rec: Rec) -> list[Any]:
    """The tags or labels a record carries now."""
    for name in ("tags", "labels", "label_ids"):
        value = rec.get(name)
        if isinstance(value, list):
            return value
    return []


def _count(s: Scenario, kind: Kind, field: str, value: Any) -> int:
    """How many records of ``kind`` have ``value`` in ``field`` (a stored column, or a value derived for results).

    Counted once per seeded store (the seeded state never changes), then read from the runner's cache."""
    key = ("label-count", kind.key, field)
    counts = s.runner.seeded_reads.get(key) if s.runner.is_seeded(kind.service) else None
    if counts is None:
        counts = Counter(r.get(field) for r in s.records(kind.service, kind.entity) if isinstance(r.get(field), (str, int)))
        if s.runner.is_seeded(kind.service):
            s.runner.seeded_reads[key] = counts
    return int(counts.get(value, 0))


def _renamed(base: str, semtype: str | None, year: str) -> str:
    """A record's label as a colleague renames it: a year added or taken off; a file keeps its extension."""
    if base.endswith(")"):
        return base.rsplit(" (", 1)[0]
    stem, dot, extension = base.rpartition(".")
    if semtype == "file_name" and dot and 1 <= len(extension) <= 5 and stem:
        return f"{stem} - final.{extension}"
    return f"{base} ({year})"


def _as_name(name: str, semtype: str | None) -> str:
    """A new thing's name as its system writes it: a chat channel in lowercase with hyphens, a document as a file."""
    if semtype == "channel_name":
        return "-".join(name.lower().replace(",", "").split())
    if semtype == "tag":
        return name.lower()
    return name


def asker_for(s: Scenario, family: str) -> Person:
    for role in s.rng.sample(_ASKERS[family], len(_ASKERS[family])):
        try:
            person = s.world.team_member(role)
        except KeyError:
            continue
        if person.email != s.world.user.email:
            return person
    raise Skip(f"no colleague asks for {family} work")


def _someone_else(s: Scenario, asker: Person) -> Person:
    others = [p for p in s.world.team if p.email not in (asker.email, s.world.user.email)]
    if not others:
        raise Skip("the team is too small")
    return s.rng.choice(others)


@dataclass
class Request:
    """One thing a colleague asks for: the tool, the record (or, for a new record, its container), the values."""

    choice: Choice
    rec: Rec | None  # None: the request makes a new record
    where: dict[str, Any]  # what picks the record out (its label, and the person it is for where that is needed)
    name: str  # how the request names it
    value: str  # its label (or, for a new record, its name): what the confirmation says
    plan: _Plan
    words: str  # what is asked, in the tool's phrase with the record's name inside
    #: Where the asker's premise is false (the work is done already): the record's state that shows it, else None.
    already: str | None = None
    #: Why the asker asks, where it lives in the data (``composer.archetypes.reasons``): set before the ask is written.
    reason: Reason | None = None
    #: Where the value the request names is held already (the person on it, the tag, the time): why, else None.
    held: Held | None = None

    @property
    def withheld(self) -> bool:
        """Whether the right work is to change nothing: the work is done already, the value is held already, or the
        reason the asker gives is not so."""
        return self.already is not None or self.held is not None or (self.reason is not None and not self.reason.holds)


#: Intents whose premise the record's state can make false (closing what is closed already, paying what is paid).
ALREADY = frozenset({"close", "reopen", "restore", "cancel", "publish", "approve", "reject", "submit", "pay", "ship", "send", "delete"})
#: How often a request of those intents finds its work done already (the agent changes nothing and says why).
FALSE_PREMISE = 0.35


def find_request(s: Scenario, intent: str, asker: Person, *, avoid: set[str] = frozenset(),  # type: ignore[assignment]
                 premise: bool = True) -> Request:
    """A request for ``intent`` that some record of some mounted service can take, tried on the world as it is; now and
    then (``FALSE_PREMISE``) one whose work is done already, where some record is so (never with ``premise`` False: the
    second of two requests in one message, so that most pairs still teach an act)."""
    colleague = _someone_else(s, asker)
    if not premise:
        return _find_request(s, intent, asker, colleague, avoid, false_premise=False)
    if intent in _ROLES_DECIDE and s.rng.random() < NOT_THEIRS:
        try:
            return _find_request(s, intent, asker, colleague, avoid, false_premise=True, not_ours=True)
        except Skip:
            pass  # every record the request could take is ours to change
    if (intent in ALREADY and s.rng.random() < FALSE_PREMISE) or (intent in SAME and s.rng.random() < HELD_ALREADY):
        try:
            return _find_request(s, intent, asker, colleague, avoid, false_premise=True)
        except Skip:
            pass  # no record is done already: the request finds one that still needs it
    return _find_request(s, intent, asker, colleague, avoid, false_premise=False)


def _hold(s: Scenario, plan: _Plan, intent: str) -> Held | None:
    """The plan asking for a value the record holds already (``premises.held_already``), or None where it holds none."""
    held = held_already(s, plan.choice.tool, plan.choice.kind, plan.rec, plan.words)
    if held is None:
        return None
    for name, value in held.values.items():
        is_list = isinstance(value, list)
        person = held.person if name == held.person_param else None
        plan.params[name] = _Planned(value=value[0] if is_list else value, person=person, is_list=is_list)
    plan.words.update(held.words)
    plan.facts = list(held.facts)
    return held


def _done_first(intent: str, kind: Kind, records: list[Rec]) -> list[Rec]:
    """Records whose state reads as the work done already (closed for a close) first."""
    words = _DONE_STATES.get(intent, ())
    field = kind.state_field
    if not field or not words:
        return records
    return sorted(records, key=lambda r: not any(w in str(r.get(field, "")).lower() for w in words))


#: What a record's state reads like once the work an intent asks for is done.
_DONE_STATES: dict[str, tuple[str, ...]] = {
    "close": ("closed", "solved", "resolved", "done", "completed"), "reopen": ("open",),
    "restore": ("active", "subscribed"),
    "cancel": ("cancel", "void"), "publish": ("publish", "live"), "approve": ("approv",), "reject": ("reject", "denied", "declined"),
    "submit": ("submit",), "pay": ("paid", "reimbursed"), "ship": ("shipped", "fulfilled", "transit", "delivered"), "send": ("sent", "delivered"),
    "delete": ("archived", "deleted", "trashed", "inactive"),
}


def _done_already(intent: str, state: str, refused: str | None) -> bool:
    """Whether a request's work is done already: the call would change nothing, or the service refuses it naming the
    record's state, and that state is the work done ("already", or a state the intent leads to: cancelled for a cancel)."""
    if not state or refused is None:
        return False
    if refused == "":
        return True
    said = refused.replace("_", " ").lower()
    return state in said and f"not {state}" not in said and (
        "already" in said or any(word in state for word in _DONE_STATES.get(intent, ())))


#: Intents a request asks of records whose service states who may change them (a spreadsheet's writers): there the
#: record may not be ours to change (``premises.not_theirs``).
_ROLES_DECIDE = frozenset({"update", "delete", "share"})


def _find_request(
    s: Scenario, intent: str, asker: Person, colleague: Person, avoid: set[str], *, false_premise: bool, not_ours: bool = False
) -> Request:
    for choice in [c for c in _choices(s, intent) if c.tool.key not in avoid][:16]:
        if false_premise and not s.used.get(choice.tool.key):
            continue  # a tool no kept plan calls yet is asked for where the work is still to do: the set reaches it
        if false_premise and (intent in SAME or not_ours) and not s.reached(choice.tool):
            continue  # (the least used tools come first: their requests stay ones that do the act, so the set reaches them)
        kind = choice.kind
        records = by_condition(s, kind, s.records(kind.service, kind.entity))
        if kind.label and s.rng.random() < 0.5:  # a record whose name another one shares: named with its person
            records.sort(key=lambda r: _count(s, kind, str(kind.label), r.get(str(kind.label))) < 2)
        if intent == "restore" and not false_premise:  # what comes back was archived, trashed or deleted first
            records.sort(key=lambda r: not _looks_removed(r))
        if false_premise:
            records = _done_first(intent, kind, records)
        if not_ours:  # (only records whose service states who may change them; those we may only read first)
            if not states_roles(s, kind):
                continue
            records.sort(key=lambda r: not_theirs(s, kind, r, asker) is None)
        for rec in records[: _TRIES.get(intent, 5)]:
            named_as = identify(s, kind, rec)
            if named_as is None:
                continue
            where, name, value = named_as
            for _ in range(3 if any(p.enum for p in choice.tool.params) else 1):  # another allowed value, if one fails
                plan = _Plan(s, choice, rec, colleague)
                try:
                    plan.choose()
                except Skip:
                    break
                named = {**{k: _plain(v) for k, v in choice.named.items()}, choice.param: rec[choice.field]}
                state = rec.get(kind.state_field) if kind.state_field else None
                held = _hold(s, plan, intent) if false_premise and intent in SAME and not not_ours else None
                if not_ours:
                    held = not_theirs(s, kind, rec, asker)
                    if held is None or not s.already(choice.tool.service, choice.tool.name, {**named, **plan.concrete()}):
                        break  # ours to change (or the call would change nothing): another record
                elif held is not None:
                    if s.already(choice.tool.service, choice.tool.name, {**named, **plan.concrete()}) is None \
                            or held.said.lower() in name.lower():
                        continue  # acting would still change something, or the record's name gives the value away
                elif false_premise and intent in SAME:
                    break
                elif false_premise:
                    refused = s.already(choice.tool.service, choice.tool.name, {**named, **plan.concrete()})
                    spoken = str(state).replace("_", " ").lower() if isinstance(state, str) else ""
                    if not _done_already(intent, spoken, refused) or spoken in name.lower():
                        continue  # "the denied time off request" would say the premise is false in its name
                elif not s.would_succeed(choice.tool.service, choice.tool.name, {**named, **plan.concrete()}):
                    continue
                words = phrase(choice.tool, {**{k: name for k in choice.fixed()}, **plan.words})
                if words is None and intent == "update":  # no phrase says this field: the change follows the record
                    words = f"update {name}"
                if words is None or "{" in words or not plan.said_in(words := plan.complete(words)):
                    break  # "{" : a placeholder the fills left open ("update the group {GroupId}")
                plan.keep_facts_in(words)
                s.intended.append(choice.tool)
                return Request(choice, rec, where, name, value, plan, words,
                               already=str(state).replace("_", " ") if false_premise and held is None else None, held=held)
        if not false_premise:
            s.tried_in_vain(choice.tool)
    raise Skip(f"no record any tool can do {intent!r} on" + (" that is done already" if false_premise else ""))


#: How a record relates to the person it is named through ("the onboarding task "Laptop" for Karl Matthews").
_FOR_ROLES = frozenset({"new hire", "employee", "requester", "candidate", "customer", "spender", "submitter", "caller"})


def identify(s: Scenario, kind: Kind, rec: Rec) -> tuple[dict[str, Any], str, str] | None:
    """How a colleague names a record so that it is the only one: (the conditions, the words, its label).

    Its label, when no other record of its kind has it; else its label and the person it is for or of (a role of
    the record: "the onboarding task "Laptop setup" for Karl Matthews"); else a number people quote (INV-1027)."""
    label = kind.label
    value = rec.get(label) if label else None
    parent = _parent_name(s, kind, rec) if listed_under_parent(kind) else None
    if parent is not None:  # found only under its parent (a meeting's registrant): named with it
        if not isinstance(value, str):
            return None
        where = {str(label): value, parent[0]: parent[1]}
        if resolve(s.view, Reference("", rec, "parent", where)) != [rec.key]:
            return None
        return where, f'the {kind.noun} "{value}" of {parent[2]}', value
    if isinstance(value, str) and 3 <= len(value) <= 80 and _reads_as_name(value):
        if _count(s, kind, str(label), value) == 1:
            return {str(label): value}, f'the {kind.noun} "{value}"', value
        for path in kind.people:
            if path.role == "self" or path.value not in ("name", "company"):
                continue
            who = value_at(s.view, rec, path.path)
            if not isinstance(who, str) or not who.strip():
                continue
            where = {str(label): value, path.path: who}
            if resolve(s.view, Reference("", rec, path.role, where)) == [rec.key]:
                joiner = "for" if path.role in _FOR_ROLES else "of"
                return where, f'the {kind.noun} "{value}" {joiner} {who}', value
    if kind.mentions().get("id") and not _INTERNAL_ID.match(rec.key):  # INV-1027, ENG-12: ids people quote
        return {"id": rec.key}, f"{kind.noun} {rec.key}", rec.key
    return _by_person(s, kind, rec)


def _reads_as_name(label: str) -> bool:
    """Whether a label is a name a colleague would quote ("Vendor comparison"), not a sentence stored where a name
    would be (a generated payout labelled "Customer asked for an updated quote.")."""
    if re.fullmatch(r"[+\d\s().-]{6,}", label):  # a phone number is no title: a call is named by its caller and time
        return False
    return not label.rstrip().endswith((".", "!")) and not set(label) & set(";{}") and len(label.split()) <= 12


def _by_person(s: Scenario, kind: Kind, rec: Rec) -> tuple[dict[str, Any], str, str] | None:
    """A record named by the one person or company it is for or of, where it is their only one of its kind
    ("the time-off request of Karl Matthews", "the charge for Acme Ltd")."""
    if kind.is_person:
        return None
    for path in kind.people:
        if path.value not in ("name", "company"):
            continue
        who = value_at(s.view, rec, path.path)
        if not isinstance(who, str) or not who.strip() or who == s.world.user.name:
            continue
        where = {path.path: who}
        if resolve(s.view, Reference("", rec, path.role, where)) == [rec.key]:
            joiner = "for" if path.role in _FOR_ROLES else "of"
            return where, f"the {kind.noun} {joiner} {who}", who
    return _by_state_and_person(s, kind, rec)


#: How a message-like record relates to the number or address it names ("the scheduled text to +15550100").
_JOINERS = {"recipient": "to", "sender": "from"}


def _by_state_and_person(s: Scenario, kind: Kind, rec: Rec) -> tuple[dict[str, Any], str, str] | None:
    """A record with no name of its own, named by its state and the person, number or address it is to or from,
    where no other record of its kind shares both ("the scheduled text to +15550100")."""
    state = kind.state_field
    condition = rec.get(state) if state else None
    if not isinstance(condition, str) or not condition or kind.is_person:
        return None
    for path in sorted(kind.people, key=lambda p: p.role != "recipient"):  # a text is named by whom it went to
        who = value_at(s.view, rec, path.path)
        if not isinstance(who, str) or not who.strip() or who in (s.world.user.name, s.world.user.email):
            continue
        where = {str(state): condition, path.path: who}
        if resolve(s.view, Reference("", rec, path.role, where)) == [rec.key]:
            joiner = _JOINERS.get(path.role, "for" if path.role in _FOR_ROLES else "of")
            state_word = condition.replace("_", " ")
            if state_word.rstrip("ed") in kind.noun:  # not "the requested time off request"
                state_word = "pending"
            return where, f"the {state_word} {kind.noun} {joiner} {who}", who
    return None


def same_name_trap(s: Scenario, kind: Kind, rec: Rec, where: dict[str, Any], found: Step) -> None:
    """Where a record is named by its label and its person (another record has the same label), the other one
    that the read showed beside it is a trap: taking it acts on someone else's record."""
    label = kind.label
    if label is None or len(where) < 2 or label not in where:
        return
    for other in s.records(kind.service, kind.entity, where={label: rec[label]}):
        if other.key != rec.key and shows(s, found, other):
            s.trap("same-name", other, f'the other {kind.noun} "{rec[label]}", not the one the request names', step=found)
            return


def _parent_name(s: Scenario, kind: Kind, rec: Rec) -> tuple[str, Any, str] | None:
    """(the ref field, the parent's id, how people name the parent) for a record listed under its parent."""
    for f in kind.runtime.definition.fields:
        parent_kind = s.kinds.get(kind.service, f.ref) if f.ref else None
        if parent_kind is None or not parent_kind.label or rec.get(f.name) is None:
            continue
        parents = s.records(kind.service, parent_kind.entity, where={"id": rec[f.name]})
        label = parents[0].get(parent_kind.label) if parents else None
        if isinstance(label, str) and _count(s, parent_kind, parent_kind.label, label) == 1:
            return f.name, rec[f.name], f'the {parent_kind.noun} "{label}"'
    return None


#: Fields whose values say what a record can still go through (a paid invoice cannot be voided, a sent campaign
#: not sent again), beside a kind's declared state field.
_CONDITIONS = ("status", "state", "archived", "is_archived", "trashed", "in_trash", "deleted", "draft")


def by_condition(s: Scenario, kind: Kind, records: list[Rec]) -> list[Rec]:
    """Records in a seeded order that meets every condition early: one of each (state, flags) first, then the rest.

    Most records of a world are in the commonest state (paid, sent, open); an action that needs another state
    finds a record in it among the first tries instead of after dozens of failed ones."""
    declared = tuple(f.name for f in kind.runtime.definition.fields if f.name.endswith("_status"))  # payment, fulfilment
    fields = [f for f in ((kind.state_field,) if kind.state_field else ()) + _CONDITIONS + declared if f]
    groups: dict[tuple[str, ...], list[Rec]] = {}
    for rec in records:
        groups.setdefault(tuple(str(rec.get(f)) for f in fields), []).append(rec)
    queues = list(groups.values())
    for queue in queues:
        s.rng.shuffle(queue)
    s.rng.shuffle(queues)
    ordered: list[Rec] = []
    for i in range(max((len(q) for q in queues), default=0)):
        ordered += [q[i] for q in queues if i < len(q)]
    return ordered


def _looks_removed(rec: Rec) -> bool:
    """Whether a record looks archived, trashed or deleted (what a restore brings back)."""
    if any(rec.get(flag) is True for flag in ("archived", "is_archived", "trashed", "deleted", "in_trash")):
        return True
    labels = rec.get("label_ids")
    if isinstance(labels, list) and "TRASH" in labels:
        return True
    return any(str(rec.get(f, "")).lower() in ("archived", "deleted", "trashed", "inactive", "unsubscribed") for f in ("status", "state"))


def find_creation(s: Scenario, asker: Person, *, avoid: set[str] = frozenset()) -> Request:  # type: ignore[assignment]
    """A request to set up something new (a folder, a channel, a task in a project, a draft), named by the asker."""
    colleague = _someone_else(s, asker)
    options = [(kind, tool) for kind in s.kinds for tool in s.kinds.creators(kind.service, kind.entity)
               if tool.intent in ("create", "schedule", "draft") and tool.key not in avoid and not _needs_lists(tool)]
    s.rng.shuffle(options)
    options = s.less_used_first(options, lambda option: (option[1],))
    for kind, tool in options[:8]:
        name = s.rng.choice(NEW_NAMES)
        choice = Choice(tool, kind, {})
        plan = _Plan(s, choice, None, colleague, new_name=name)
        try:
            plan.choose()
        except Skip:
            s.tried_in_vain(tool)
            continue
        if not s.would_succeed(tool.service, tool.name, plan.concrete()):
            s.tried_in_vain(tool)
            continue
        shown = plan.words.get(next(iter(plan.words), ""), f'"{name}"')
        words = phrase(tool, plan.words)
        if words is None or "{" in words or not plan.said_in(words := plan.complete(words)):
            s.tried_in_vain(tool)
            continue
        plan.keep_facts_in(words)
        s.intended.append(tool)
        return Request(choice, None, {}, shown.strip('"'), shown.strip('"'), plan, words)
    raise Skip("nothing to set up that the mounted services can make")


def _needs_lists(tool: ToolInfo) -> bool:
    """Whether the tool needs what a colleague's quick ask does not give: a list of structured things (line items,
    columns, signers), or a customer's address (a ticket is opened for a customer, not a colleague) unless the
    tool adds that person (a new contact, whose address the request gives)."""
    return any(
        p.required and ((p.is_list and p.semtype != "email_address") or p.json_type == "object"
                        or (p.semtype == "email_address" and p.name not in _STAFF_EMAILS and not adds_person(tool)))
        for p in tool.params
    )


def ask_text(s: Scenario, request: Request) -> str:
    """The ask, with the reason that lives in the data (``request.reason``)."""
    reason = request.reason.text if request.reason is not None else ""
    verb, _, rest = request.words.partition(" ")
    ask = s.rng.choice(_OPENERS).format(do=request.words, doing=f"{gerund(verb)} {rest}".strip())
    return f"{ask[0].upper()}{ask[1:]} {reason}".strip()


def do_request(s: Scenario, request: Request) -> list[Said]:
    """The steps that do the request (find the record, check why it is asked, act), after the trigger; returns what the
    reply must state."""
    choice, rec = request.choice, request.rec
    if rec is None:  # something new: made in its container, and the reply says its number where it has one
        if request.reason is not None:
            checked = check(s, request, request.reason)
            if not request.reason.holds:  # one of that name exists already
                _ask_said(s, checked, request.words)
                return _withheld(s, request, request.reason, {})
        made = s.call(choice.tool.service, choice.tool.name, request.plan.steps(), say=request.words, require_change=True)
        mention = choice.kind.mentions().get("id")
        facts = request.plan.facts or [Said(f"the new {choice.kind.noun}", Lit(request.value), "text")]
        return facts + ([Said(mention, made.ref("id"))] if mention else [])
    s.refer(rec, request.name, relation=" and ".join(request.where), where=request.where)
    value = request.value
    refs = {f.name for f in choice.kind.runtime.definition.fields if f.ref}
    # The agent knows the record by its name (and its parent's, whose id it looks up first), not by an id.
    known = {"query": value, "name": value, "title": value, "subject": value,
             **{k: v for k, v in request.where.items() if k not in refs}}
    found = lookup(s, rec, known, say=f"find {request.name}", name=request.name)
    named = {**choice.named, **({choice.param: found.ref(choice.field)} if choice.param else {})}
    checked = check(s, request, request.reason) if request.reason is not None else None
    if request.already is not None or request.held is not None:  # done already: nothing to change, the asker hears why
        if checked is not None:
            _ask_said(s, checked, f"{s.notes[checked.index].say}, then {request.words}")
        else:
            _ask_said(s, found, request.words)
        s.decide("premise", f"{request.name} still needs {gerund(request.words.split()[0])}", default=False)
        # (a value held already is the one the record has: a literal agent names it as the request does, no lookup)
        asked = request.plan.concrete() if request.held is not None else request.plan.steps()
        s.literal_writes.append(s.spec(choice.tool.service, choice.tool.name, {**named, **asked}))
        if request.held is not None:
            named_too = [Said(f"the {choice.kind.noun}", Lit(value), "text")] if request.held.names_record else []
            return [*named_too, *request.held.facts]
        return [Said(f"the {choice.kind.noun}", Lit(value), "text"), Said("that it was so already", Lit("already"), "premise"),
                Said("where it stands", Lit(request.already), "text")]
    if request.reason is not None and not request.reason.holds:
        if checked is not None:
            _ask_said(s, checked, f"{s.notes[checked.index].say}, then {request.words}")
        return _withheld(s, request, request.reason, named)
    same_name_trap(s, choice.kind, rec, request.where, found)  # (a record left as it is cannot be confused by writing it)
    if choice.tool.intent in ALREADY or choice.tool.intent in SAME:
        s.decide("premise", f"{request.name} still needs {gerund(request.words.split()[0])}", default=True)
    s.call(choice.tool.service, choice.tool.name, {**named, **request.plan.steps()}, say=request.words, require_change=True)
    return request.plan.facts or [Said(f"the {choice.kind.noun}", Lit(value), "text")]


def _ask_said(s: Scenario, step: Step | None, words: str) -> None:
    """A guided request says the ask where the work turns out not to be needed, on the step that finds that out, as
    it does where the work is done: the steps it lists never give the branch away."""
    if step is not None:
        s.notes[step.index].say, s.notes[step.index].guided = words, True


def _withheld(s: Scenario, request: Request, reason: Reason, named: dict[str, Expr]) -> list[Said]:
    """The reason the asker gives is not so: nothing is changed (a literal agent does it anyway), and the reply says why."""
    choice = request.choice
    s.literal_writes.append(s.spec(choice.tool.service, choice.tool.name, {**choice.named, **named, **request.plan.steps()}))
    return withheld_facts(request, reason)


def colleague_request(s: Scenario, intent: str, *, then: str | None = None) -> None:
    """A colleague asks for ``intent`` on a record (and, with ``then``, for a second thing in the same message);
    the agent finds each record, does what is asked and confirms on the channel (see the module)."""
    asker = asker_for(s, s.rng.choice(("operations", "support", "sales", "finance", "marketing")))
    first = _find(s, intent, asker, set())
    requests = [first]
    if then is not None:
        options = [then] + [i for i in s.rng.sample(REQUESTED, len(REQUESTED)) if i not in (intent, then)][:3]
        for second in options:
            try:
                found = _find(s, second, asker, {first.choice.tool.key}, premise=False)
            except Skip:
                continue
            if found.rec is None or first.rec is None or found.rec.key != first.rec.key:
                requests.append(found)
                break
        else:
            raise Skip("no second request fits beside the first")
    for request in requests:  # why they ask, planted where it lives before the ask arrives
        request.reason = ground(s, request, asker)
    family = SERVICE_FAMILY.get(first.choice.kind.service, "operations")
    kind = first.choice.kind
    subject = f"{kind.noun.capitalize()}: {first.value}" if "id" not in first.where else f"{kind.noun.capitalize()} {first.value}"
    text = ask_text(s, first)
    if len(requests) == 2:
        text += " " + s.rng.choice(("Also, while you're in there: ", "And one more thing: ", "Separately, ")) + ask_text(s, requests[1])
    trigger = arrive(s, asker, Ask(subject=subject, text=text, team=team_channel(s, family)), channels=COLLEAGUE)
    facts: list[Said] = []
    for request in requests:
        facts += do_request(s, request)
    done = " and ".join(_past(r.words) for r in requests if not r.withheld)
    parts: list[Any] = [f"Done: I {done}." if done else "I have not changed anything."]
    parts += [f" {_cap(r.name)} is already {r.already}, so there was nothing to do." for r in requests
              if r.already is not None]
    parts += [" " + r.held.reason.format(name=r.name, Name=_cap(r.name)) for r in requests if r.held is not None]
    parts += [withheld_words(r, r.reason) for r in requests
              if r.reason is not None and r.withheld and r.already is None and r.held is None]
    for fact in facts:
        if isinstance(fact.value, Ref):  # what the plan made: its number goes in the reply
            parts += [f" {fact.noun[:1].upper()}{fact.noun[1:]}: ", fact.value, "."]
    said = reply(s, trigger, parts, say=reply_clause(trigger, "a word saying what you did"), facts=facts, subject=f"Re: {subject}")
    param = text_param(s.specs[said.index])
    if param is not None and any(r.withheld for r in requests):  # a literal agent did it, and says so
        done_all = " and ".join(_past(r.words) for r in requests)
        s.literal_steps[said.index] = s.specs[said.index].with_arg(param, Lit(f"Done: I {done_all}."))
    # The work is named by what it is about (the record, in the system that holds it), never "a change in Expenses".
    about = " and ".join(_about(s, r) for r in requests)
    s.brief.intro = f"{trigger.intro} about {about}"
    s.brief.goal = wanted(asker, requests) + f". Handle the request and {reply_clause(trigger, 'a word on what you did')}"
    s.brief.anchors += [asker.name]


def wanted(asker: Person, requests: list[Request]) -> str:
    """The outcome the asker wants and why, as the goal says it: 'Mark wants you to publish the article "How refunds
    work", since Dana went through it and posted in #general that it is ready'."""
    def why(request: Request) -> str:
        text = request.reason.text.rstrip(".") if request.reason is not None else ""
        return f", since {text[:1].lower() + text[1:] if text.startswith(('We ', 'It ', 'The ')) else text}" if text else ""

    return f"{asker.first_name} wants you to " + ", and to ".join(f"{r.words}{why(r)}" for r in requests)


def _find(s: Scenario, intent: str, asker: Person, avoid: set[str], *, premise: bool = True) -> Request:
    return find_creation(s, asker, avoid=avoid) if intent == "create" else find_request(s, intent, asker, avoid=avoid,
                                                                                         premise=premise)


def _about(s: Scenario, request: Request) -> str:
    """What a request is about, as the person who hands it on says it: "the form "Refund request" in Forms", or "a new
    folder in Files"."""
    system = system_name(s.catalog, request.choice.kind.service)
    if request.rec is None:
        return f"a new {request.choice.kind.noun} in {system}"
    if request.name not in request.words:  # the record the tool takes is not the one the ask names (a new signer's)
        return f"{'an' if request.choice.kind.noun[:1] in 'aeiou' else 'a'} {request.choice.kind.noun} in {system}"
    return f"{request.name} in {system}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _plain(value: Any) -> Any:
    if isinstance(value, Lit):
        return value.value
    if isinstance(value, ListOf):
        return [_plain(i) for i in value.items]
    return value


def _past(words: str) -> str:
    """The request's own words as something done: "archive the page" -> "archived the page"."""
    verb, _, rest = words.partition(" ")
    past = _PAST.get(verb) or (verb + "d" if verb.endswith("e") else verb[:-1] + "ied" if verb.endswith("y") else verb + "ed")
    return f"{past} {rest}".strip()


def team_channel(s: Scenario, family: str) -> str:
    name = _CHANNEL_OF.get(family, "general")
    if s.has("chat") and s.records("chat", "channel", where={"name": name}):
        return name
    return "general"


def _has_intent(intent: str, catalog: Catalog) -> bool:
    """Whether some tool of the catalog does ``intent`` (a request for it can fit)."""
    return any(t.intent == intent for t in catalog.tools.values())


def _register(intent: str, title: str) -> None:
    def build(s: Scenario) -> None:
        colleague_request(s, intent)

    build.__name__ = f"request_{intent}"
    archetype(f"request-{intent}", family="operations", title=title, services=(),
              fits=partial(_has_intent, intent), weigh=catalog_weight)(build)


@archetype("request-pair", family="operations", title="A colleague asks for two things in one message", services=(), weight=3.0,
           weigh=lambda catalog: 2.0 * catalog_weight(catalog) + 1.0)
def request_pair(s: Scenario) -> None:
    """Two things in one message: two intents drawn from those the catalog serves, each on its own record."""
    intents = [i for i in REQUESTED if any(t.intent == i for t in s.catalog.tools.values())]
    first, then = s.rng.sample(intents, 2)
    colleague_request(s, first, then=then)


REQUESTED = ("create", "note", "delete", "restore", "tag", "update", "transition", "close", "reopen", "assign", "invite", "remove",
             "share", "cancel", "reschedule", "publish", "send", "approve", "reject", "submit", "pay", "ship", "link")

for _intent, _title in (
    ("create", "A colleague asks to set up something new: a folder, a channel, a task, a draft"),
    ("note", "A colleague asks to put a note on a record"),
    ("delete", "A colleague asks to archive or remove a record that is out of date"),
    ("restore", "A colleague asks to bring back a record removed by mistake"),
    ("tag", "A colleague asks to label a record"),
    ("update", "A colleague asks to change a detail of a record"),
    ("transition", "A colleague asks to move a record on in its workflow"),
    ("close", "A colleague asks to close a record that is done"),
    ("reopen", "A colleague asks to reopen a record"),
    ("assign", "A colleague asks to hand a record to someone"),
    ("invite", "A colleague asks to add someone to a record"),
    ("remove", "A colleague asks to take someone off a record"),
    ("share", "A colleague asks to share a record with someone"),
    ("cancel", "A colleague asks to cancel something that is not going ahead"),
    ("reschedule", "A colleague asks to move something to another time"),
    ("publish", "A colleague asks to publish a reviewed draft"),
    ("send", "A colleague asks to send something that is ready"),
    ("approve", "A colleague asks to approve something they have signed off"),
    ("reject", "A colleague asks to turn something down"),
    ("submit", "A colleague asks to submit something that is complete"),
    ("pay", "A colleague asks to mark something as paid"),
    ("ship", "A colleague asks to ship an order or a parcel that is ready"),
    ("link", "A colleague asks to link one record to another"),
):
    _register(_intent, _title)
