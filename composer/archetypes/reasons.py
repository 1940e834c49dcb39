"""Why a colleague asks: reasons that live in the data, for the generic requests (``composer.archetypes.requests``).

A request says why ("Dana went through it and emailed that it is ready to go out"), and the why is a message the
agent can read: an email in the user's inbox, or a post in the team's chat, from the colleague who knows (or from
the person the request is about: the colleague who agreed to take a task over, the member who asked to be taken off),
written some hours before the ask. Where the reason is a claim the data can bear out or not (the payment came in,
the report is complete, nobody uses the page any more), the message sometimes says the opposite: then the right work
is to change nothing and tell the asker why (a ``premise`` decision, false). Where no message can carry the reason
(no mailbox, nobody to write it), the candidate is dropped: a request never gives a reason nothing bears out.

A request to set up something new says "we don't have one yet", and the data bears that out or not: sometimes a
record of that kind with that very name exists already (then nothing is made and the asker hears where it is).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.world import Person

from composer.phrasing import spoken_field
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, Step
from composer.stages.lookup import lookup

if TYPE_CHECKING:
    from composer.archetypes.requests import Request


@dataclass(frozen=True)
class Ground:
    """How one intent's reason is said, and what the message that bears it says.

    ``cite``: the asker's sentence ("{who}" is the writer's first name, "{by}" how it reached us: "emailed", "posted");
    ``holds``: the message where it bears the reason out ("{name}" is how the request names the record, "{noun}" its
    kind); ``fails``: the message where it does not ("": a reason the asker only passes on, never a premise);
    ``gist``: what the reply says where it does not hold ("{who}" again); ``writer``: who writes it: ``colleague``
    (a teammate who is neither the asker nor the user) or ``person`` (the one the request names: the assignee, the
    member taken off, the colleague it is shared with); ``role``: a teammate's role that writes it, where one does."""

    cite: str
    holds: str
    fails: str = ""
    gist: str = ""
    writer: str = "colleague"
    role: str = ""
    #: Where the request names nobody who could write (a shared link, a member named by an id): a teammate writes this.
    instead: Ground | None = None


#: Each intent's reason. A claim the data can bear out or not has a ``fails`` message: then it is a premise.
GROUNDS: dict[str, Ground] = {
    "delete": Ground(
        "{who} checked and {by} that nobody uses it any more",
        "I have checked {name}: nobody has opened it since we moved to the new process, so it can be archived.",
        "Please keep {name} for now: my team still works from it every week.",
        "{who} says the team still works from it"),
    "delete_person": Ground(
        "{who} {by} that they have asked to be taken off",
        "{name} asked us to take them off our lists: they no longer work with us.",
        "Please keep {name}: they are still a customer of ours and want to keep hearing from us.",
        "{who} says they are still a customer and want to keep hearing from us"),
    "restore": Ground(
        "{who} {by} that it is still in use",
        "I still work from {name} every week and it has gone from the list. Could it come back?"),
    "restore_person": Ground(
        "{who} {by} that they asked to hear from us again",
        "{name} asked to be back on our list: they want our updates again."),
    "tag": Ground(
        "{who} {by} asking to have it labelled for the quarterly review",
        "For the quarterly review I am pulling records like {name} together: a label on each would make that easy."),
    "update": Ground(
        "{who} {by} asking for the change",
        "{name} is out of date: {change}."),
    "transition": Ground(
        "{who} {by} that it has moved on",
        "{name} has moved on since it was last updated: {change}."),
    "close": Ground(
        "{who} {by} that everything on it is done",
        "Everything on {name} is done: nothing is left open on my side.",
        "Please keep {name} open: I am still waiting on an answer before it is finished.",
        "{who} is still waiting on an answer, so it is not finished"),
    "reopen": Ground(
        "{who} {by} that it is not finished after all",
        "{name} is not finished after all: the problem came back this morning.",
        "Good news on {name}: the problem has not come back since the fix, so it can stay as it is.",
        "{who} says the problem has not come back"),
    "assign": Ground(
        "{who} {by} that they are happy to take it over",
        "Happy to take over {name} from here: send it my way.", writer="person",
        instead=Ground("{who} {by} that it should change hands", "Could you {ask}? I am handing my part of it over.")),
    "invite": Ground(
        "{who} {by} asking to be added",
        "Could I be added to {name}? I would like to follow along.", writer="person",
        instead=Ground("{who} {by} asking for it", "Could you {ask}? They want to follow along.")),
    "remove": Ground(
        "{who} {by} asking to be taken off it",
        "Could I be taken off {name}? I have moved to another team and no longer need it.", writer="person",
        instead=Ground("{who} {by} that they can no longer take part",
                       "Could you {ask}? They let me know they can no longer take part.")),
    "share": Ground(
        "{who} {by} asking for it",
        "Could I get {name}? I need it for tomorrow's meeting.", writer="person",
        instead=Ground("{who} {by} asking for it", "Could I get {name}? I need it for tomorrow's meeting.")),
    "cancel": Ground(
        "{who} {by} that it is not going ahead",
        "{name} is off: it is not going ahead any more.",
        "{name} is still going ahead as planned: I confirmed it again this morning.",
        "{who} confirmed it is still going ahead"),
    "reschedule": Ground(
        "{who} {by} that the current time no longer works",
        "The time set for {name} no longer works for me: {change}, if that suits everyone."),
    "publish": Ground(
        "{who} went through it and {by} that it is ready",
        "I have read {name} through: it is good to go out.",
        "I have read {name} and it is not ready yet: some of the steps are out of date. Please hold it back until I have fixed them.",
        "{who} says some of the steps are out of date and asked to hold it back"),
    "send": Ground(
        "{who} checked it and {by} that it is ready to go",
        "I have checked {name}: everything on it is right, it can go.",
        "Please don't send {name} yet: I found two mistakes in it and am fixing them.",
        "{who} found mistakes in it and asked to hold it back"),
    "link": Ground(
        "{who} {by} that they belong together",
        "{other} belongs with {name}: they cover the same piece of work, so one should point to the other."),
    "note": Ground(
        "{who} {by} this update and it should be on record",
        "A quick update on {name}: {note}"),
    "approve": Ground(
        "{who} went through it and {by} that everything checks out",
        "I have been through {name}: everything on it checks out.",
        "Please hold off on {name}: one of the amounts on it does not match what we were billed.",
        "{who} found an amount that does not match", role="accountant"),
    "reject": Ground(
        "{who} {by} that we decided against it",
        "We decided against {name} in this morning's meeting.",
        "We agreed this morning to go ahead with {name} after all.",
        "{who} says we agreed to go ahead with it"),
    "submit": Ground(
        "{who} {by} that everything on it is in now",
        "Everything for {name} is in now: nothing is missing.",
        "I am still waiting on one receipt for {name}: please don't submit it yet.",
        "{who} is still waiting on a receipt for it"),
    "pay": Ground(
        "{who} {by} that the payment came in",
        "The payment for {name} reached our account this morning.",
        "No payment for {name} has reached our account yet: I will let you know when it does.",
        "{who} says no payment for it has come in yet", role="finance lead"),
    "pay_out": Ground(
        "{who} {by} that it is approved and can be paid out",
        "{name} is approved on my side: it can be paid out.",
        "Please hold off paying out {name}: one of its receipts is still missing.",
        "{who} says one of its receipts is still missing", role="finance lead"),
    "ship": Ground(
        "{who} {by} that the customer is waiting on it",
        "The customer behind {name} is waiting on it: could it go out today?",
        "Please hold {name}: the customer asked us to wait until they confirm their new address.",
        "{who} says the customer asked us to wait until they confirm their address"),
    "untag": Ground(
        "{who} {by} that the label no longer applies",
        "The label on {name} no longer applies: it was put on by mistake."),
}
#: How often a reason the data can bear out or not is one the message contradicts (the asker is wrong).
REASON_FALSE = 0.3
#: How often a request to set up something new asks for what exists already.
DUPLICATE = 0.5


@dataclass(frozen=True)
class Reason:
    """Why the asker asks, and the message in the data that bears it out (or contradicts it: ``holds`` False)."""

    text: str  # the sentence the request gives: "Dana went through it and emailed that it is ready."
    source: Rec  # where it lives: the email or chat post (for a new record that exists already: that record)
    writer: Person | None
    holds: bool
    premise: bool  # a claim the data can bear out or not (the agent checks it); else a reason the agent may read
    gist: str = ""  # where it does not hold: what the reply says instead
    #: What a duplicate of a new record is called (a request to set up what exists already), else "".
    duplicate: str = ""
    known: dict[str, str] = field(default_factory=dict)  # what the agent knows that finds the source


def _writer(s: Scenario, request: Request, asker: Person, ground: Ground) -> Person | None:
    """Who writes the reason: the person the request names, or a teammate (by role where the intent has one)."""
    if ground.writer == "person":
        for planned in request.plan.params.values():
            if planned.person is not None:
                return planned.person
        return request.plan.newcomer
    taken = {asker.email, s.world.user.email} | {p.person.email for p in request.plan.params.values() if p.person}
    names = {asker.first_name, s.world.user.first_name}  # "Hi Robert, ... Robert emailed" would read as one person
    if ground.role:
        try:
            person = s.world.team_member(ground.role)
            if person.email not in taken and person.first_name not in names:
                return person
        except KeyError:
            pass
    others = [p for p in s.world.team if p.email not in taken and p.first_name not in names]
    return s.rng.choice(others) if others else None


def _change(field: str, value: str, old: str) -> str:
    """A change as a colleague writes it: "its priority should be high", "it belongs in the section "Later"", and why
    a name changes where the names say it ("it covers 2025 now", "it is not last year's any more")."""
    if value.startswith("the "):
        return f"it belongs in {value}"
    said = f"its {spoken_field(re.sub(r'_ids?$|Ids?$', '', field))} should be {value}"
    new = value.strip('"')
    if old and new.startswith(f"{old} (") and new.endswith(")"):
        return f"{said}, since it covers {new[len(old) + 2:-1]} now"
    if old and old.startswith(f"{new} (") and old.endswith(")"):
        return f"{said}: it is not only about {old[len(new) + 2:-1]} any more"
    return said


def _fill(text: str, request: Request, writer: Person) -> str:
    label = str(request.rec.get(request.choice.kind.label or "") or "") if request.rec is not None else ""
    change = ", and ".join(_change(k, v, label) for k, v in request.plan.words.items()) or "a change"
    other = next((w for k, w in request.plan.words.items() if w.startswith("the ")), "the other one")
    note = next((w.strip('"') for w in request.plan.words.values() if w.startswith('"') and w.endswith('."')), "")
    out = text.format(name=request.name, noun=request.choice.kind.noun, who=writer.first_name, change=change, other=other,
                      note=note, ask=request.words, by="{by}")
    return out[:1].upper() + out[1:]


def _post(s: Scenario, writer: Person, asker: Person, subject: str, body: str) -> tuple[Rec, str, dict[str, str]]:
    """The message that bears the reason: an email to the user and the asker, or a post in the team's channel where the
    writer is on the team and chat is there (seeded choice); with how the asker says it came and what finds it."""
    hours = round(s.rng.uniform(5.0, 40.0), 2)
    colleague = writer in s.world.team
    if colleague and s.has("chat") and (not s.has("mailbox") or s.rng.random() < 0.4):
        users = s.records("chat", "user", where={"email": writer.email})
        if users and s.records("chat", "channel", where={"name": "general"}):
            post = s.event("chat", "message_posted", "message", channel="general", author_email=writer.email, text=body,
                           hours_ago=hours)
            return post, "posted in #general", {"channel": "general", "query": subject, "from_email": writer.email}
    if not s.has("mailbox"):
        raise Skip("no mailbox or chat carries the reason for the request")
    text = f"Hi {s.world.user.first_name},\n\n{body}\n\nThanks,\n{writer.first_name}"
    email = s.event("mailbox", "email_received", "message", from_email=writer.email, from_name=writer.name, subject=subject,
                    body=text, hours_ago=hours, to=[s.world.user.email, asker.email])
    return email, "emailed", {"query": subject, "subject": subject, "from_email": writer.email}


def ground(s: Scenario, request: Request, asker: Person) -> Reason:
    """The reason for ``request``, planted where it lives (``Skip`` where nothing can carry it): for a new record, the
    premise that none exists yet (sometimes one does); else the message of the intent's ``Ground``, contradicting the
    request (``REASON_FALSE``) where it is a premise and the work is not done already."""
    reason = _nothing_yet(s, request) if request.rec is None else _message(s, request, asker)
    s.reasons.append(f"{reason.source.service}.{reason.source.entity}")
    return reason


def _message(s: Scenario, request: Request, asker: Person) -> Reason:
    """The reason as a message from whoever knows (the intent's ``Ground``), planted some hours before the ask."""
    intent = request.choice.tool.intent or ""
    if intent == "tag" and _untags(request):
        intent = "untag"
    if intent == "pay" and ("reimburse" in request.choice.tool.name or request.choice.kind.service == "expenses"):
        intent = "pay_out"  # we pay a colleague back: nothing comes in
    if intent in ("delete", "restore") and request.choice.kind.is_person:  # a person is taken off, not archived as unused
        intent = f"{intent}_person"
    spec = GROUNDS.get(intent)
    if spec is None:
        raise Skip(f"no reason in the data for a request to {intent}")
    writer = _writer(s, request, asker, spec)
    if (writer is None or writer.email in (asker.email, s.world.user.email)) and spec.instead is not None:
        spec = spec.instead
        writer = _writer(s, request, asker, spec)
    if writer is None or writer.email in (asker.email, s.world.user.email):
        raise Skip(f"nobody to give the reason for a request to {intent}")
    premise = bool(spec.fails)
    # A tool no kept plan calls yet is asked for where the reason holds (the set reaches it), as ``find_request`` does.
    holds = (not premise or request.already is not None or not s.reached(request.choice.tool) or s.rng.random() >= REASON_FALSE)
    body = _fill(spec.holds if holds else spec.fails, request, writer)
    source, by, known = _post(s, writer, asker, _subject(request), body)
    text = _fill(spec.cite, request, writer).replace("{by}", by) + "."
    gist = _fill(spec.gist, request, writer) if spec.gist else ""
    return Reason(text, source, writer, holds, premise, gist, known=known)


def _untags(request: Request) -> bool:
    """Whether a tag request takes a label off (the reason is then that it no longer applies)."""
    tool = request.choice.tool
    return "remove" in tool.name or "untag" in tool.name or any(p.startswith("remove") for p in request.plan.params)


def _subject(request: Request) -> str:
    return str(request.value)[:70]


def check(s: Scenario, request: Request, reason: Reason) -> Step | None:
    """The step that reads the reason where it is a premise (the agent checks it), and the premise decision."""
    if request.rec is None:  # a new record: none of that name exists yet, or one does
        what = f"{request.words}: {reason.text}"
        s.decide("premise", what, default=not reason.duplicate)
        if not reason.duplicate:
            return None
        return lookup(s, reason.source, {"query": reason.duplicate, "name": reason.duplicate, "title": reason.duplicate},
                      say=f'check whether {_a(request.choice.kind.noun)} called "{reason.duplicate}" exists already',
                      stage="consult", guided=True)
    if not reason.premise or reason.writer is None:
        return None
    found = lookup(s, reason.source, reason.known, say=f"read what {reason.writer.first_name} wrote about {request.name}",
                   stage="consult", guided=True)
    s.decide("premise", f"{request.name}: {reason.text}", default=reason.holds)
    return found


def withheld_facts(request: Request, reason: Reason) -> list[Said]:
    """What the reply states where the reason does not hold: the record, and why nothing was done (who said otherwise,
    or that the record exists already)."""
    if reason.duplicate:
        return [Said(f"the {request.choice.kind.noun}", Lit(reason.duplicate), "text"),
                Said("that it exists already", Lit("already"), "premise")]
    assert reason.writer is not None
    return [Said(f"the {request.choice.kind.noun}", Lit(request.value), "text"),
            Said("who said otherwise", Lit(reason.writer.first_name), "text"),
            Said("that it was held back", Lit("not done"), "premise")]


def withheld_words(request: Request, reason: Reason) -> str:
    """The reply's sentence where the reason does not hold."""
    if reason.duplicate:
        return f' There is already {_a(request.choice.kind.noun)} called "{reason.duplicate}", so I did not make another.'
    return f" I left {request.name} as it is: {reason.gist}."


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _nothing_yet(s: Scenario, request: Request) -> Reason:
    """A new record's premise, "we don't have one yet": where the kind has a name a copy can take, sometimes
    (``DUPLICATE``) a record of that kind with that name exists already (planted as a copy of another one)."""
    kind = request.choice.kind
    name = next((p.value for p in request.plan.params.values() if isinstance(p.value, str) and request.plan.new_name
                 and p.value.lower().replace("-", " ") == request.plan.new_name.lower().replace(",", "")), None)
    if name is None:  # a new record with no name of its own (a time-off request, a contact): nothing to duplicate
        who = request.plan.newcomer
        whose = next((w for w in request.plan.words.values() if w.startswith("the ")), "")
        if who is not None:
            text = f"{who.first_name} is not set up as {_a(kind.noun)} yet."
        elif whose:  # a time off request for the employee "Amy Jones": none like it is there yet
            text = f"{whose[:1].upper()}{whose[1:]} has no {kind.noun} like this yet."
        else:
            raise Skip(f"no premise in the data for a new {kind.noun} with no name of its own")
        return Reason(text, Rec(kind.service, kind.entity, "", "", {}), None, True, True)
    text = f'We don\'t have {_a(kind.noun)} called "{name}" yet.'
    label = kind.label
    if label and s.reached(request.choice.tool) and s.rng.random() < DUPLICATE:
        originals = [r for r in s.records(kind.service, kind.entity) if isinstance(r.get(label), str)]
        s.rng.shuffle(originals)
        for original in originals[:3]:
            try:
                copy = s.copy(original, **{label: name})
            except (ToolError, sqlite3.Error, TypeError, ValueError):
                continue
            if copy.get(label) == name:
                return Reason(text, copy, None, False, True, duplicate=name)
    # It holds: the agent's search for the name finds nothing of that kind (the kind's records stand as the source).
    return Reason(text, Rec(kind.service, kind.entity, "", "", {}), None, True, True)


__all__ = ["DUPLICATE", "GROUNDS", "REASON_FALSE", "Ground", "Reason", "check", "ground", "withheld_facts", "withheld_words"]
