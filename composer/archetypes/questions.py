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
from typing import Any

from mcp_services.kernel.schema import FieldDef

from composer.archetypes.generic import catalog_weight
from composer.archetypes.requests import SERVICE_FAMILY, asker_for, by_condition, identify, same_name_trap, team_channel
from composer.catalog import Catalog
from composer.kinds import Kind, kinds_of, system_name
from composer.phrasing import spoken_field
from composer.content import guessable
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, reply, reply_clause
from composer.stages.lookup import lookup

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


def _pick(s: Scenario) -> tuple[Kind, Rec, FieldDef, tuple[dict[str, Any], str, str]]:
    kinds = [k for k in s.kinds if k.readers and _askable(k)]
    s.rng.shuffle(kinds)
    kinds = s.less_used_first(kinds, lambda kind: kind.readers)
    for kind in kinds[:8]:
        fields = _askable(kind)
        for rec in by_condition(s, kind, s.records(kind.service, kind.entity))[:_TRIES]:
            f = s.rng.choices([f for f, _ in fields], weights=[w for _, w in fields])[0]
            value = rec.get(f.name)
            if value in (None, "", []) or isinstance(value, (bool, list, dict)):
                continue
            named = identify(s, kind, rec)
            if named is not None and guessable(value, [named[1], named[2], *map(str, named[0].values())]):
                continue  # the carrier "USPS" whose code is usps: the answer is in the question's own words
            if named is not None and _findable(s, kind, rec, named[0], named[2]):
                s.intended.extend(kind.readers)
                return kind, rec, f, named
        s.tried_in_vain(*kind.readers)  # the next question tries another kind first, not this one again
    raise Skip("no record with a field a colleague would ask about that a read shows")


@archetype("request-question", family="operations", title="A colleague asks what a record shows: its status, an amount, a date",
           services=(), weight=5.0, fits=_fits, weigh=lambda catalog: 4.0 * catalog_weight(catalog))
def request_question(s: Scenario) -> None:
    """A colleague asks about one field of one record; the agent looks it up and answers with its value."""
    kind, rec, f, (where, name, label) = _pick(s)
    family = SERVICE_FAMILY.get(kind.service, "operations")
    asker = asker_for(s, family)
    if asker.name in name:  # nobody asks a colleague about "the recipient Donna Peters" when they are Donna Peters
        others = [a for a in (asker_for(s, o) for o in ("operations", "support", "sales", "finance")) if a.name not in name]
        if not others:
            raise Skip("only the person the record names could ask about it")
        asker = others[0]
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
    fact = Said(q.noun, found.ref(f.name), _fact_kind(f), exact=True)
    replied = reply(s, trigger, [*q.answer, found.ref(f.name), "."], say=reply_clause(trigger, q.noun), facts=[fact],
                    subject=f"Re: {kind.noun.capitalize()}: {label}")
    s.notes[replied.index].unsaid = [Said(f"another {q.noun.removeprefix('the ')}", Lit(v)) for v in _others(s, kind, f, rec, rec[f.name])]
    s.brief.intro = f"{trigger.intro} with a question about {name} in {system}"
    s.brief.goal = f"Find out {q.asked}, then {reply_clause(trigger, 'what you find')}"  # the intro named the record
    s.brief.anchors += [asker.name]


__all__ = ["request_question"]
