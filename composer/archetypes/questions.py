"""Questions colleagues ask about a record: what it shows now, in any service of the catalog.

"Quick question: what status is the envelope "Statement of Work - Ruiz Group" in? The customer is
asking." "When is invoice INV-0119 due?" The record is any record of any kind that a read reaches,
named the way a colleague names it (``requests.identify``); the field is one people ask about: its
state, an amount, a date, a number they pass on. The agent finds the record through any read that
shows it and answers on the channel. The answer is checked for the value, and for not stating the
values that a careless look would give instead: the other states the field can take, or the same
field of the other records of the same person or company.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from mcp_services.kernel.schema import FieldDef

from composer.archetypes.generic import catalog_weight
from composer.archetypes.requests import SERVICE_FAMILY, asker_for, by_condition, identify, same_name_trap, team_channel
from composer.catalog import Catalog
from composer.kinds import Kind, kinds_of, system_name
from composer.phrasing import spoken_field
from composer.archetypes.common import short_date
from composer.catalog import ToolInfo
from composer.content import guessable, other_figures, text_param
from composer.plan import Composed, Lit, Ref, field_value, resolve
from composer.resolve import value_at
from composer.runner import result_items
from composer.scenario import Rec, Said, Scenario, Skip, Step, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, reply, reply_clause
from composer.stages.lookup import candidate_reads, listed_under_parent, lookup
from mcp_services.kernel.world import Person

#: Why a colleague asks (the purpose the request states).
_PURPOSES = (
    "The customer is asking and I'd like to answer today.",
    "I need it for the weekly report.",
    "I want to get my notes right before the call.",
    "It came up in the team meeting and nobody was sure.",
)
#: How a question opens, with ``{question}`` asked indirectly ("what the status of the envelope ... is",
#: "when the folder ... was trashed") and ``{system}``.
_OPENERS = (
    "Quick question: could you check {question} in {system}?",
    "Can you find out {question}? It should be in {system}.",
    "Do you know {question}? You can see it in {system}.",
)
#: Timestamps nobody asks about: they change with any edit.
_BORING = frozenset({"updated_at", "modified_at", "last_modified", "last_modified_at", "last_activity_at"})
#: Timestamps whose verb is not "was <stem>" ("when the message goes out", not "was send").
_TIMED_VERBS = {"due": "is due", "start": "starts", "end": "ends", "send": "goes out"}
#: Past participles that do not end in -ed ("when the invoice was paid").
_PARTICIPLES = frozenset({"sent", "paid", "sold", "held", "won", "lost", "built", "made", "done", "set", "spent", "bought", "left",
                          "met", "begun", "written", "taken", "given", "seen", "shut", "cut", "put", "read", "hidden", "chosen"})
#: Verbs of a past moment that take no "was" ("when the most recent event occurred").
_INTRANSITIVE = frozenset({"occurred", "happened", "arrived"})
#: Amounts that add up to something people ask for (what is due, what was refunded), and those that do not (a salary
#: range's bottom, a price, a rate).
_SUMMED = re.compile(r"(?:amount|total|due|paid|balance|refunded|spent|cost|value)$")
_NOT_SUMMED = re.compile(r"min|max|salary|price|rate|limit|budget|threshold")
#: The most records of a kind a question counts over all of them ("how many of the payment links in Payments are active").
_WHOLE = 30
#: Records of a kind tried per question (each is one read of the world).
_TRIES = 6


#: Enumerated fields that say where a record stands (asked about most).
_STANDING = ("status", "state", "stage", "priority")


def _askable(kind: Kind) -> list[tuple[FieldDef, float]]:
    """Fields of a kind that people ask about, with how often: where it stands (its state, a status, a stage),
    an amount, a date, another enumerated detail (a role, a plan), a number people quote; when it was made."""
    mentions = kind.mentions()
    out: list[tuple[FieldDef, float]] = []
    for f in kind.fields():
        if not f.stored or f.incidental or f.ref or f.name in ("id", kind.label) or f.role or f.name in _BORING:
            continue
        timed = f.semantic in ("date", "datetime") or f.type in ("date", "datetime")
        if f.name == kind.state_field or (f.enum and f.type == "string" and f.name.endswith(_STANDING)):
            out.append((f, 3.0))
        elif f.enum and f.type == "string" and len(f.enum) >= 3:
            out.append((f, 1.0))
        elif f.semantic == "money":
            out.append((f, 3.0))
        elif timed and _Question.timed_noun(f) is not None:
            out.append((f, 0.15 if f.name.startswith("created") else 2.0))
        elif f.name in mentions and f.type == "string":
            out.append((f, 1.0))
    return out


def _fits(catalog: Catalog) -> bool:
    return any(k.readers and _askable(k) for k in kinds_of(catalog))


def _field_noun(f: FieldDef) -> str:
    if f.mention and f.mention.startswith("the "):  # "the invoice total"; not "when the order shipped"
        return f.mention.removeprefix("the ")
    return spoken_field(f.name)


class _Question:
    """How the question and its answer read for one field of one record."""

    @staticmethod
    def timed_noun(f: FieldDef) -> str | None:
        """How a question names a date field: "due date" (due_date), "created" (created_at: "when ... was created"),
        or None for one with no plain question (last_paid_at, announcement_at)."""
        if f.name.endswith("_date"):
            return spoken_field(f.name)
        stem = f.name.removesuffix("_at")
        if "_" in stem or not (f.name.endswith("_at") or stem.endswith("ed")):
            return None
        return stem if _Question.timed_verb(stem) else None

    @staticmethod
    def timed_verb(stem: str) -> str | None:
        """The verb of "when ... <verb>": "was created", "starts", "is due"; None for a stem that is no verb."""
        if stem in _TIMED_VERBS:
            return _TIMED_VERBS[stem]
        if stem.endswith("s"):  # starts, expires
            return stem
        return f"was {stem}" if stem.endswith("ed") or stem in _PARTICIPLES else None

    def __init__(self, f: FieldDef, name: str) -> None:
        timed = f.semantic in ("date", "datetime") or f.type in ("date", "datetime")
        stem = self.timed_noun(f) if timed else None
        self.when = stem is not None and not stem.endswith(" date")
        if stem is not None and self.when:  # created_at -> "when ... was created"; starts_at -> "when ... starts"
            verb = self.timed_verb(stem)
            self.question = f"when {name} {verb}"
            self.noun = self.asked = f"when it {verb}"
            self.answer = [f"{name[:1].upper()}{name[1:]} {verb} on "]
        else:
            noun = _field_noun(f)
            self.question = f"what the {noun} of {name} is"
            self.asked = f"what its {noun} is"  # once the request has named the record
            self.noun = f"the {noun}"
            self.answer = [f"The {noun} of {name} is "]


def _fact_kind(f: FieldDef) -> Any:
    if f.semantic == "money":
        return "money"
    if f.semantic in ("date", "datetime") or f.type in ("date", "datetime"):
        return "datetime" if "datetime" in (f.semantic, f.type) else "date"
    return "text"


def _others(s: Scenario, kind: Kind, f: FieldDef, rec: Rec, value: Any) -> list[Any]:
    """What a careless answer would say instead: the field's other states, or the same field of the other records
    of the same person or company (their other invoices, their other tickets)."""
    text = str(value).lower()
    if f.enum:
        return [v for v in f.enum if isinstance(v, str) and v.lower() not in text and text not in v.lower()]
    siblings: list[Any] = []
    for path in kind.people:
        if "." in path.path or rec.get(path.path) in (None, ""):
            continue
        for other in s.records(kind.service, kind.entity, where={path.path: rec[path.path]}):
            other_value = other.get(f.name)
            if other.key != rec.key and other_value not in (None, "", value) and str(other_value) not in str(value):
                siblings.append(other_value)
    return list(dict.fromkeys(siblings))[:3]


def _known(kind: Kind, where: dict[str, Any], label: str) -> dict[str, Any]:
    """What the agent knows of the record from the question: its label, and how the colleague named it."""
    refs = {d.name for d in kind.fields() if d.ref}
    return {"query": label, "name": label, "title": label, "subject": label, **{k: v for k, v in where.items() if k not in refs}}


class _Found(Skip):
    """The probe's way out of ``Scenario.attempt``: the lookup worked, and is undone."""


def _findable(s: Scenario, kind: Kind, rec: Rec, where: dict[str, Any], label: str) -> bool:
    """Whether the lookup the question needs finds the record (a generated service's list may take no filter its
    label could drive): tried, on a random stream of its own and undone, before the question is asked."""
    own, s.rng = s.rng, random.Random(f"{rec.service}:{rec.key}:findable")
    try:
        with s.attempt():
            lookup(s, rec, _known(kind, where, label), say="")
            raise _Found("found")
    except _Found:
        return True
    except Skip:
        return False
    finally:
        s.rng = own


def _pick(s: Scenario) -> tuple[Kind, Rec, FieldDef, tuple[dict[str, Any], str, str], Rec]:
    """A record named by its label and a clue (its person), beside a look-alike of the same label whose asked field
    differs: answering from the look-alike, the first match, gives the wrong value."""
    kinds = [k for k in s.kinds if k.readers and k.label and _askable(k)]
    s.rng.shuffle(kinds)
    kinds = s.less_used_first(kinds, lambda kind: kind.readers)
    for kind in kinds[:8]:
        fields = _askable(kind)
        label = str(kind.label)
        records = s.records(kind.service, kind.entity)
        labels = Counter(str(r.get(label)) for r in records)
        alike = [r for r in records if labels[str(r.get(label))] > 1]
        for rec in by_condition(s, kind, alike)[:_TRIES]:
            f = s.rng.choices([f for f, _ in fields], weights=[w for _, w in fields])[0]
            value = rec.get(f.name)
            if value in (None, "", []) or isinstance(value, (bool, list, dict)):
                continue
            named = identify(s, kind, rec)
            if named is None or len(named[0]) < 2:
                continue  # named by its label alone: nothing to tell apart
            twin = next((r for r in alike if r.key != rec.key and r.get(label) == rec.get(label)
                         and r.get(f.name) not in (None, "", value)), None)
            if twin is None or guessable(value, [named[1], named[2], *map(str, named[0].values())]):
                continue  # the carrier "USPS" whose code is usps: the answer is in the question's own words
            if _findable(s, kind, rec, named[0], named[2]):
                s.intended.extend(kind.readers)
                return kind, rec, f, named, twin
        s.tried_in_vain(*kind.readers)  # the next question tries another kind first, not this one again
    raise Skip("no look-alike records that a clue in the request tells apart")


def _asker(s: Scenario, family: str, about: str) -> Person:
    """A colleague who asks about ``about`` (never the person it names)."""
    asker = asker_for(s, family)
    if asker.name in about:  # nobody asks a colleague about "the recipient Donna Peters" when they are Donna Peters
        others = [a for a in (asker_for(s, o) for o in ("operations", "support", "sales", "finance")) if a.name not in about]
        if not others:
            raise Skip("only the person the record names could ask about it")
        asker = others[0]
    return asker


def _look_alike_question(s: Scenario) -> None:
    """A colleague asks about one field of one record that has a look-alike; the clue they give picks it."""
    kind, rec, f, (where, name, label), twin = _pick(s)
    family = SERVICE_FAMILY.get(kind.service, "operations")
    asker = _asker(s, family, name)
    system = system_name(s.catalog, kind.service)
    q = _Question(f, name)
    text = s.rng.choice(_OPENERS).format(question=q.question, system=system) + " " + s.rng.choice(_PURPOSES)
    trigger = arrive(s, asker, Ask(subject=f"{kind.noun.capitalize()}: {label}", text=text, team=team_channel(s, family)),
                     channels=COLLEAGUE)
    s.refer(rec, name, relation=" and ".join(where), where=where)
    known = _known(kind, where, label)
    # Any read of the kind may answer: one drawn first, so that every read of every kind gets asked through.
    found = lookup(s, rec, known, say=f"find {name}", name=name, prefer=[s.rng.choice(kind.readers).name])
    if found.value(f.name) != rec[f.name]:
        raise Skip(f"the read of {kind.key} does not show its {f.name}")
    same_name_trap(s, kind, rec, where, found)
    s.decide("pick", f"which {kind.noun} \"{label}\" {name} means: the clue picks it, not its look-alike")
    fact = Said(q.noun, found.ref(f.name), _fact_kind(f), exact=True)
    replied = reply(s, trigger, [*q.answer, found.ref(f.name), "."], say=reply_clause(trigger, q.noun), facts=[fact],
                    subject=f"Re: {kind.noun.capitalize()}: {label}")
    others = [twin[f.name], *_others(s, kind, f, rec, rec[f.name])]
    s.notes[replied.index].unsaid = [Said(f"another {q.noun.removeprefix('the ')}", Lit(v)) for v in dict.fromkeys(others)]
    _literal_reply(s, replied.index, [*q.answer, str(twin[f.name]), "."])
    s.brief.intro = f"{trigger.intro} with a question about {name} in {system}"
    s.brief.goal = f"Find out {q.asked}, then {reply_clause(trigger, 'what you find')}"  # the intro named the record
    s.brief.anchors += [asker.name]


def _literal_reply(s: Scenario, index: int, parts: list[str | Ref]) -> None:
    """What the literal agent answers instead (the look-alike's value, the first record's figure): its reply."""
    spec = s.specs[index]
    param = text_param(spec)
    if param is not None:
        s.literal_steps[index] = spec.with_arg(param, Composed(tuple(parts)))


# -- figures: a value worked out from several records of one person, company or parent ---------------------------


def _plural(noun: str) -> str:
    if noun.endswith(("feedback", "information", "data", "equipment", "time off")):
        return noun + " entries"  # no plural of their own
    if re.search(r"(?:s|x|ch|sh)$", noun):
        return noun + "es"
    if re.search(r"[^aeiou]y$", noun):
        return noun[:-1] + "ies"
    return noun + "s"


def _spoken(value: Any) -> str:
    """A state as people say it: "in_progress" -> "in progress", "AUTHORISED" -> "authorised"."""
    return str(value).replace("_", " ").lower()


@dataclass
class _Group:
    """Records of one kind that belong together: one person's, one company's, or one parent's."""

    kind: Kind
    records: list[Rec]
    owner: str  # how people name whose they are: "Acme Corp", "the form "Request a demo""
    known: dict[str, Any]  # what the agent knows to list them (the owner's name, or the parent's id once found)
    path: str  # the field (or path) that says whose a record is
    parent: tuple[Rec, Kind, str] | None = None  # the parent to find first, its kind, and its label
    whole: bool = False  # every record of the kind (the payment links in Payments): ``owner`` names the system


def _groups(s: Scenario, kind: Kind) -> list[_Group]:
    """The kind's records grouped by their person or company (named), or by their labelled parent."""
    records = s.records(kind.service, kind.entity)
    found: list[_Group] = []
    if not listed_under_parent(kind):
        for path in kind.people:
            if path.role == "self" or path.value not in ("name", "company"):
                continue
            by: dict[str, list[Rec]] = {}
            for rec in records:
                who = value_at(s.view, rec, path.path)
                if isinstance(who, str) and who.strip():
                    by.setdefault(who, []).append(rec)
            for who, group in by.items():
                if len(group) < 2:
                    continue
                # What the agent knows of them: their name, and how the same person is reached otherwise (an email
                # filter of a list), as a colleague would find it on any of their records.
                same = {p.path: value_at(s.view, group[0], p.path) for p in kind.people if p.role == path.role}
                known = {k: v for k, v in same.items() if isinstance(v, str) and v}
                found.append(_Group(kind, group, who, {**known, path.path: who, "query": who}, path.path))
    if not listed_under_parent(kind) and 2 <= len(records) <= _WHOLE:
        found.append(_Group(kind, records, system_name(s.catalog, kind.service), {}, "", whole=True))
    for f in kind.fields():
        parent_kind = s.kinds.get(kind.service, f.ref) if f.ref else None
        if parent_kind is None or not parent_kind.label or not parent_kind.readers:
            continue
        by_parent: dict[Any, list[Rec]] = {}
        for rec in records:
            if rec.get(f.name) is not None:
                by_parent.setdefault(rec[f.name], []).append(rec)
        for key, group in by_parent.items():
            parents = s.records(kind.service, parent_kind.entity, where={"id": key})
            label = parents[0].get(parent_kind.label) if parents else None
            if len(group) >= 2 and isinstance(label, str) and 3 <= len(label) <= 80:
                found.append(_Group(kind, group, f'the {parent_kind.noun} "{label}"', {f.name: None}, f.name,
                                    (parents[0], parent_kind, label)))
    return found


@dataclass
class _Figure:
    """A question whose answer is worked out from a group's records, and what a careless look answers instead."""

    question: str  # asked indirectly: "how many of Acme's tickets are open"
    asked: str  # in the goal: "how many are open"
    noun: str  # the fact: "the number of open tickets"
    value: Any
    kind: Any  # how the value reads: "number", "money", "date"
    counted: list[Rec]  # the records the figure is worked out from
    shown: list[str]  # fields the read must show of each counted record
    condition: tuple[str, Any] | None  # the field and value that pick the counted records out of the group
    careless: Any  # the figure a careless look gives (every record counted, the first one's date)
    answer: list[str]  # the reply, with the figure
    wrong: list[str]  # the reply with the careless figure (the literal agent's)
    forbidden: list[Any] = field(default_factory=list)
    weight: float = 1.0  # how often it is asked, against the group's other figures
    dated: bool = False  # worked out from today's date too: the request states it


def _conditions(kind: Kind) -> list[str]:
    """Fields that split a group the way people count it: where a record stands (its status, stage, priority), or a
    flag that reads as an adjective ("active", "required", "archived")."""
    return [f.name for f in kind.fields() if f.stored and not f.incidental and (
        (f.enum and f.type == "string" and (f.name == kind.state_field or f.name.endswith(_STANDING)))
        or (f.type == "boolean" and _adjective(f.name) is not None))]


def _adjective(flag: str) -> str | None:
    """How a flag reads after "are": is_archived -> "archived", required -> "required"; None for one that does not."""
    word = flag.removeprefix("is_")
    return word if "_" not in word and (word.endswith(("ed", "ive", "ble")) or word in ("open", "private", "public")) else None


def _state_words(cond: str, state: str) -> str:
    """A condition's value as people say it after "are": "open", "active", "not required"."""
    if state in ("True", "False"):
        adjective = str(_adjective(cond))
        return adjective if state == "True" else f"not {adjective}"
    return _spoken(state)


def _theirs(group: _Group) -> str:
    """How the question names the group's records: "Acme's tickets", "the questions of the form "Demo"", "the
    payment links in Payments"."""
    plural = _plural(group.kind.noun)
    if group.whole:
        return f"the {plural} in {group.owner}"
    if group.parent is not None and not group.parent[1].is_person:
        return f"the {plural} of {group.owner}"  # the questions of the form "Demo"
    return f"{group.parent[2] if group.parent is not None else group.owner}'s {plural}"  # Kathy Newman's time off requests


def _figures(s: Scenario, group: _Group) -> list[_Figure]:
    """Every figure a colleague could ask of the group: how many are in a state, what the amounts in a state come to,
    when the most recent one happened."""
    kind, recs, owner = group.kind, group.records, group.owner
    plural = _plural(kind.noun)
    mine = _theirs(group)
    summed = [f for f in kind.fields() if f.semantic == "money" and f.stored and not f.incidental and _SUMMED.search(f.name)
              and not _NOT_SUMMED.search(f.name)]
    found: list[_Figure] = []
    for cond in _conditions(kind):
        values = Counter(str(r.get(cond)) for r in recs if r.get(cond) is not None)
        for state, n in values.items():
            if n == len(recs) or state in ("", "None"):
                continue  # all in one state: the condition decides nothing
            counted = [r for r in recs if str(r.get(cond)) == state]
            # "are open" for where a record stands; "have priority high" for another detail.
            standing = cond in ("status", "state") or cond == kind.state_field or state in ("True", "False")
            are = _state_words(cond, state) if standing else f"{spoken_field(cond)} {_spoken(state)}"
            verb = ("is" if n == 1 else "are") if standing else ("has" if n == 1 else "have")
            other_counts = sorted({c for v, c in values.items() if v != state and c != n} | {len(recs)} - {n})
            found.append(_Figure(
                f"how many of {mine} {'are' if standing else 'have'} {are}", f"how many {'are' if standing else 'have'} {are}",
                f"the number of {plural} that {'are' if standing else 'have'} {are}", n, "number", counted, [cond],
                (cond, counted[0][cond]), len(recs),
                [f"{n} of {mine} {verb} {are}."], [f"{len(recs)} of {mine} {'are' if standing else 'have'} {are}."], other_counts, 3.0))
            for m in summed[:1]:
                amounts = [r.get(m.name) for r in counted]
                if len(counted) < 2 or not all(isinstance(a, (int, float)) and not isinstance(a, bool) and a > 0 for a in amounts):
                    continue
                total = round(sum(float(a) for a in amounts), 2)
                every = round(sum(float(r.get(m.name) or 0) for r in recs), 2)
                noun = _field_noun(m)
                those = f"{mine} that {'are' if standing else 'have'} {are}"
                found.append(_Figure(
                    f"what the {noun} of {those} comes to in total", f"what the {noun} of {those} comes to",
                    f"the total {noun} of {those}", total, "money", counted, [cond, m.name], (cond, counted[0][cond]), float(amounts[0]),
                    [f"The {noun} of {those} comes to {total:,.2f} in total."],
                    [f"The {noun} of {those} comes to {float(amounts[0]):,.2f} in total."],
                    sorted({every, *map(float, amounts)} - {total}), 3.0))
    for m in summed[:1] if not group.whole else ():
        amounts = [r.get(m.name) for r in recs]
        if all(isinstance(a, (int, float)) and not isinstance(a, bool) and a > 0 for a in amounts):
            total, noun = round(sum(float(a) for a in amounts), 2), _field_noun(m)
            found.append(_Figure(
                f"what the {noun} of {mine} comes to in total", f"what the {noun} of {mine} comes to", f"the total {noun} of {mine}",
                total, "money", recs, [m.name], None, float(amounts[0]),
                [f"The {noun} of {mine} comes to {total:,.2f} in total."], [f"The {noun} of {mine} comes to {float(amounts[0]):,.2f}."],
                sorted({*map(float, amounts)} - {total}), 2.0))
    for f in kind.fields():
        timed = f.semantic in ("date", "datetime") or f.type in ("date", "datetime")
        stem = _Question.timed_noun(f) if timed and f.stored and f.name not in _BORING else None
        days = [str(r.get(f.name))[:10] for r in recs if isinstance(r.get(f.name), str) and len(str(r.get(f.name))) >= 10]
        if stem is None or len(days) != len(recs) or len(set(days)) < 2 or max(days) > s.world.now[:10]:
            continue  # only what has happened: "the most recent" of past days
        latest = max(days)
        said = stem if stem in _INTRANSITIVE else _Question.timed_verb(stem) if not stem.endswith(" date") else None
        if said is None or not (said.startswith("was ") or stem in _INTRANSITIVE):
            continue  # only what has happened: "was created", "was submitted", "occurred"
        first = str(recs[0][f.name])[:10]
        latest_one = f"the most recent of {mine}"
        found.append(_Figure(
            f"when {latest_one} {said}", f"when {latest_one} {said}", f"when {latest_one} {said}",
            latest, "date", recs, [f.name], None, first if first != latest else sorted(days)[0],
            [f"{latest_one[:1].upper()}{latest_one[1:]} {said} on {short_date(latest)}."],
            [f"{latest_one[:1].upper()}{latest_one[1:]} {said} on {short_date(first)}."],
            sorted(set(days) - {latest}), 1.0))
        # How long ago, in days: the most recent day, then today's date (the request states it) taken from it.
        today = date.fromisoformat(s.world.now[:10])
        ago = {day: (today - date.fromisoformat(day)).days for day in days}
        if ago[latest] >= 2:
            found.append(_Figure(
                f"how many days ago {latest_one} {said}", f"how many days ago {latest_one} {said}",
                f"how many days ago {latest_one} {said}", ago[latest], "number", recs, [f.name], None, ago[first],
                [f"{latest_one[:1].upper()}{latest_one[1:]} {said} {ago[latest]} days ago, on {short_date(latest)}."],
                [f"{latest_one[:1].upper()}{latest_one[1:]} {said} {ago[first]} days ago."],
                sorted(set(ago.values()) - {ago[latest]}), 1.0, dated=True))
    return [x for x in found if not isinstance(x.value, int) or x.value >= 1]


def _read_covering(s: Scenario, group: _Group, fig: _Figure, known: dict[str, Any]) -> tuple[ToolInfo, dict[str, Any], list[dict[str, Any]]] | None:
    """A read whose one page shows every counted record with what the figure needs, and shows why each other record it
    lists is not counted (another owner, another state): from it alone the figure can be worked out."""
    kind = group.kind
    every = {r.key: r for r in s.records(kind.service, kind.entity)}
    counted = {r.key for r in fig.counted}
    mine = {r.key for r in group.records}
    values = {k: (v if isinstance(v, (Lit, Ref)) else Lit(v)) for k, v in known.items()}
    if fig.condition is not None:
        values.setdefault(fig.condition[0], Lit(fig.condition[1]))
    options = s.less_used_first(candidate_reads(s, fig.counted[0], values), lambda option: (option[0],))
    for tool, args in options[:8]:
        try:
            arguments = {name: resolve(expr, s.items) for name, expr in args.items()}
        except LookupError:
            continue
        result = s.runner.episode.call(tool.service, tool.name, arguments)
        if not result.success:
            continue
        items = {str(i.get("id")): i for i in result_items(tool, result.data)}
        if not counted <= set(items):
            continue
        ok = True
        for key, item in items.items():
            rec = every.get(key)
            if rec is None:
                continue
            if key in counted:
                ok = all(field_value(item, name) == rec.get(name) for name in fig.shown if name not in args)
            elif key in mine:  # theirs, not counted: the read must show the state that leaves it out
                cond = fig.condition
                ok = cond is not None and cond[0] not in args and field_value(item, cond[0]) == rec.get(cond[0])
            elif group.whole:
                ok = False
            else:  # someone else's: the read must show whose it is
                ok = "." not in group.path and group.path not in args and field_value(item, group.path) == rec.get(group.path) \
                    and rec.get(group.path) != group.records[0].get(group.path)
            if not ok:
                break
        if ok:
            return tool, args, list(items.values())
    return None


def _figure_question(s: Scenario) -> None:
    """A colleague asks for a figure worked out from several records: a count, a total, the most recent date."""
    kinds = [k for k in s.kinds if k.readers]
    s.rng.shuffle(kinds)
    # By the use of the reads that list a kind (a read by id never shows a group), so a kind whose get nobody calls
    # is not tried first every time.
    kinds = s.less_used_first(kinds, lambda kind: [t for t in kind.readers if t.intent != "get"] or kind.readers)
    for kind in kinds[:10]:
        groups = _groups(s, kind)
        s.rng.shuffle(groups)
        for group in groups[:4]:
            figures = _figures(s, group)
            ordered: list[_Figure] = []
            while figures and len(ordered) < 3:  # the totals and counts first, more often than the dates
                ordered.append(figures.pop(s.rng.choices(range(len(figures)), weights=[x.weight for x in figures])[0]))
            for fig in ordered:
                if guessable(str(fig.value), [group.owner]):
                    continue
                try:
                    with s.attempt():
                        _ask_figure(s, group, fig)
                        return
                except Skip:
                    continue
        s.tried_in_vain(*kind.readers)
    raise Skip("no figure a colleague would ask that one read of the world shows")


def _ask_figure(s: Scenario, group: _Group, fig: _Figure) -> None:
    kind = group.kind
    # Which read answers is settled first, on the world as it is; the plan then reads the question, finds the parent
    # (the form, the project) where the records are listed under it, and makes that read.
    known = dict(group.known) if group.parent is None else {group.path: group.parent[0].key}
    covering = _read_covering(s, group, fig, known)
    if covering is None:
        raise Skip(f"no read of {kind.key} shows every record the figure needs")
    tool, args, items = covering
    family = SERVICE_FAMILY.get(kind.service, "operations")
    asker = _asker(s, family, group.owner)
    system = system_name(s.catalog, kind.service)
    trigger = _arrive(s, asker, kind, group, fig, system, family)
    if group.parent is not None:
        parent_rec, parent_kind, label = group.parent
        parent = lookup(s, parent_rec, {"query": label, str(parent_kind.label): label}, say=f"find {group.owner}", name=group.owner,
                        prefer=[s.rng.choice(parent_kind.readers).name])
        s.refer(parent_rec, group.owner, relation=str(parent_kind.label), where={str(parent_kind.label): label})
        args = {name: parent.ref("id") if isinstance(expr, Lit) and expr.value == parent_rec.key else expr for name, expr in args.items()}
    listed = s.call(tool.service, tool.name, args, say=f"go through the {_plural(kind.noun)} of {group.owner}", select=fig.counted[0])
    s.notes[listed.index].stage = "consult"
    s.decide("figure", fig.question)
    fact = Said(fig.noun, Lit(fig.value), fig.kind, exact=True)
    replied = reply(s, trigger, fig.answer, say=reply_clause(trigger, fig.noun), facts=[fact],
                    subject=f"Re: {kind.noun.capitalize()}: {group.owner}")
    others = [o for o in dict.fromkeys([*fig.forbidden, fig.careless, *other_figures(fig.value, items)]) if o != fig.value]
    s.notes[replied.index].unsaid = [Said(f"another {fig.noun.removeprefix('the ')}", Lit(v), fig.kind) for v in others]
    _literal_reply(s, replied.index, list(fig.wrong))
    about = _theirs(group) if group.whole else f"{group.owner} in {system}"
    s.brief.intro = f"{trigger.intro} with a question about {about}"
    s.brief.goal = f"Work out {fig.question}, then {reply_clause(trigger, 'the figure')}"
    s.brief.anchors += [asker.name]
    s.brief.needs_date = s.brief.needs_date or fig.dated


#: Why a colleague asks for a figure (the purpose the request states); ``{owner}`` is whose records they are.
_FIGURE_PURPOSES = (
    "I'm putting the account review together and want the number right.",
    "I want to get my notes right before the call.",
    "It came up in the team meeting and nobody was sure.",
    "I need it for the weekly report.",
)


def _arrive(s: Scenario, asker: Person, kind: Kind, group: _Group, fig: _Figure, system: str, family: str) -> Any:
    purposes = [p for p in _FIGURE_PURPOSES if family in ("sales", "finance") or "account" not in p]
    text = s.rng.choice(_OPENERS).format(question=fig.question, system=system) + " " + s.rng.choice(purposes)
    return arrive(s, asker, Ask(subject=f"{_plural(kind.noun).capitalize()}: {group.owner}", text=text,
                                team=team_channel(s, family)), channels=COLLEAGUE)


#: The kinds of question, with how often each is tried first: most are figures; a look-alike to tell apart now and then.
_FORMS = ((_figure_question, 3.0), (_look_alike_question, 1.0))


@archetype("request-question", family="operations",
           title="A colleague asks for a figure from several records (a count, a total, the latest date) or about one of two look-alikes",
           services=(), weight=5.0, fits=_fits, weigh=lambda catalog: 4.0 * catalog_weight(catalog))
def request_question(s: Scenario) -> None:
    """A colleague asks a question the data decides: a figure worked out from several records of one person, company
    or parent, or a field of the one record their clue picks among look-alikes. A world that gives neither drops it."""
    forms = list(_FORMS)
    first = s.rng.choices(range(len(forms)), weights=[w for _, w in forms])[0]
    order = [forms[first][0], *(f for n, (f, _) in enumerate(forms) if n != first)]
    reasons: list[str] = []
    for form in order:
        try:
            with s.attempt():
                form(s)
                return
        except Skip as skip:
            reasons.append(str(skip))
    raise Skip("no question the data decides: " + "; ".join(reasons))


__all__ = ["request_question"]
