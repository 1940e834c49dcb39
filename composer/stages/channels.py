"""Trigger and reply: how work arrives, on which channel, and how the answer goes back on it.

A workflow says what a person asks, in their own words (``Ask``), and who asks; ``arrive`` picks one
of the channels the workflow allows that the mounted services and the person can use, plants the
message through that service's world event, adds the step that finds it, and returns a ``Trigger``:
the record, how the request points at it ("the text Ana sent this morning"), how the work came up
(the request's intro) and ``reply``, which answers on the same channel (an email reply, a text back,
a public reply on the ticket, an answer in the chat thread; a voicemail or a form response is
answered by text or email).

Channels:
- ``email``: an email to the user's inbox; the reply is in its thread.
- ``chat``: a colleague posts in a channel; for a customer's request, the colleague passes on what
  the customer told them, and the answer goes to the colleague in the thread.
- ``sms``: a text to our number; the answer is a text back.
- ``voice``: a voicemail on our main line (its transcript); the answer is a text, or an email.
- ``ticket``: a ticket the person opens in the helpdesk; the answer is a public reply on it.
- ``form``: a response to the website's contact form; the answer is an email to the address given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from mcp_services.kernel.world import Organisation, Person

from composer.catalog import Catalog
from composer.plan import Composed, Expr, ListOf, Lit, Ref
from composer.scenario import Rec, Said, Scenario, Skip, Step, channel_key, detail
from composer.stages.lookup import lookup

Channel = Literal["email", "chat", "sms", "voice", "ticket", "form"]
CHANNELS: tuple[Channel, ...] = ("email", "chat", "sms", "voice", "ticket", "form")
#: The channels a customer uses to reach us (chat: a colleague they called passes it on).
CUSTOMER: tuple[Channel, ...] = ("email", "sms", "voice", "ticket", "form", "chat")
#: The channels a colleague uses.
COLLEAGUE: tuple[Channel, ...] = ("email", "chat")

#: What each channel needs mounted (the reply of voice and form needs one more: sms or mailbox).
_NEEDS: dict[Channel, tuple[str, ...]] = {
    "email": ("mailbox",),
    "chat": ("chat",),
    "sms": ("sms",),
    "voice": ("voice",),
    "ticket": ("helpdesk",),
    "form": ("forms", "mailbox"),
}
_FORM = "Contact us"
_FORM_TOPICS = ("Billing", "Technical problem", "Account and users", "Orders and shipping", "Something else")


@dataclass(frozen=True)
class Ask:
    """What a person asks, in their own words, whatever the channel carries it.

    ``text`` is one to three sentences in the first person; ``short`` a shorter form for a text message
    (empty: the text itself); ``topic`` the contact form's topic; ``relay`` how a colleague who took the
    call sums it up for the team, in the third person ("she was charged twice for INV-1027").
    """

    subject: str
    text: str
    short: str = ""
    topic: str = "Something else"
    relay: str = ""
    team: str = "support"  # the chat channel a colleague passes it on in


@dataclass
class Trigger:
    """The message that started the work, found by the plan's first step."""

    channel: Channel
    rec: Rec
    sender: Person  # who wrote it (for a relayed request, the colleague)
    person: Person  # whose request it is
    step: Step  # the step that found it
    reference: str  # how the request points at it
    when: str
    intro: str  # how the work came up, for the request's first sentence

    @property
    def relayed(self) -> bool:
        return self.sender != self.person


def org_of(s: Scenario, person: Person) -> Organisation:
    return s.world.organisation(person.organisation_id)


# -- when things arrive ----------------------------------------------------------------------------


def recent_hours(s: Scenario) -> float:
    """A plausible time since a message arrived today (never before midnight)."""
    hour = s.world.now_dt.hour + s.world.now_dt.minute / 60
    return round(min(hour - 0.2, s.rng.uniform(0.5, 3.5)), 2) if hour > 1 else 0.3


def hours_after(s: Scenario, times: Sequence[object]) -> float:
    """When the trigger arrived: a plausible time today (``recent_hours``), and later than every one of ``times`` (the
    person's earlier messages there), so "their latest message" is this one."""
    hours = recent_hours(s)
    now = s.world.now_dt
    latest = max((str(t) for t in times if isinstance(t, str) and t[:4].isdigit()), default="")
    if latest and (now - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ") <= latest:
        gap = (now - datetime.strptime(latest[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=now.tzinfo)).total_seconds() / 3600
        if gap <= 0.02:
            raise Skip("the person's last message there is from just now")
        hours = round(gap / 2, 3)
    return hours


def when_phrase(s: Scenario, hours_ago: float) -> str:
    """How a person says when something arrived: "this morning", "an hour ago", "yesterday"."""
    from composer.phrasing import long_date

    now = s.world.now_dt
    moment = now - timedelta(hours=hours_ago)
    if moment.date() != now.date():
        return "yesterday" if (now.date() - moment.date()).days == 1 else f"on {long_date(moment.strftime('%Y-%m-%dT%H:%M:%SZ'))}"
    if hours_ago <= 1.5:
        return "an hour ago" if hours_ago > 0.75 else "a few minutes ago"
    return "this morning" if moment.hour < 12 else "earlier today"


# -- who can use which channel ------------------------------------------------------------------------


def _mobile(s: Scenario, person: Person) -> bool:
    """Whether texts reach this person's number (a mobile the sms service knows)."""
    if not s.has("sms"):
        return False
    found = s.records("sms", "phone", where={"phone_number": person.phone})
    return bool(found) and found[0]["line_type"] != "landline" and not s.records(
        "sms", "opt_out", where={"phone_number": person.phone}
    )


def usable(s: Scenario, channel: Channel, sender: Person, *, customer: bool) -> bool:
    """Whether ``sender`` can reach us on ``channel`` and we can answer there, with what is mounted."""
    if not all(s.has(service) for service in _NEEDS[channel]):
        return False
    if channel == "sms":
        return _mobile(s, sender)
    if channel == "voice":
        return bool(sender.phone) and (_mobile(s, sender) or s.has("mailbox"))
    if channel in ("ticket", "form"):
        return customer
    if channel == "chat":
        return bool(s.world.team[1:])
    return True


def can_arrive(channels: Sequence[Channel] = CUSTOMER) -> Callable[[Catalog], bool]:
    """For ``@archetype(fits=...)``: whether a catalog mounts what one of ``channels`` needs (a workflow that starts
    from a message cannot be built without any)."""
    return lambda catalog: any(all(service in catalog.services for service in _NEEDS[c]) for c in channels)


def channels_for(s: Scenario, sender: Person, allowed: Sequence[Channel], *, customer: bool) -> list[Channel]:
    return [c for c in allowed if usable(s, c, sender, customer=customer)]


# -- how each channel carries the words ------------------------------------------------------------------

_GREETINGS = ("Hi {first},", "Hello {first},", "Hi there,", "Good morning,", "Dear {first},", "Hi team,")
_CLOSINGS = ("Thanks,", "Many thanks,", "Best regards,", "Kind regards,", "Thank you,", "Cheers,", "Best,")
_SMS_OPENERS = ("Hi, it's {first} from {org}. ", "Hello, {name} here ({org}). ", "Hi this is {first} at {org}. ", "")
_VOICE_OPENERS = (
    "Hi, this is {name} from {org}. ",
    "Hello, it's {first} {last} calling from {org}. ",
    "Hi there, {name} here, from {org}. ",
)
_VOICE_CLOSERS = (
    " You can call me back on this number. Thanks, bye.",
    " Thanks a lot, bye.",
    " Give me a call back when you can. Thank you.",
    " Thanks.",
)
_RELAY = (
    "{name} from {org} just called me: {relay} Can someone pick this up?",
    "Had {name} ({org}) on the phone {when}: {relay} Could somebody take it?",
    "Passing this on from a call with {name} at {org}: {relay}",
    "{name} from {org} rang about this {when}: {relay} Who can handle it?",
)


def _email_body(s: Scenario, sender: Person, org: Organisation, text: str) -> str:
    greeting = s.rng.choice(_GREETINGS).format(first=s.world.user.first_name)
    closing = s.rng.choice(_CLOSINGS)
    signature = sender.name if org.id == s.world.home_organisation_id else f"{sender.name}\n{org.name}"
    return f"{greeting}\n\n{text}\n\n{closing}\n{signature}"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def _third_person(ask: Ask) -> str:
    return _sentence(ask.relay) if ask.relay else f"“{ask.text.strip()}”"


# -- arriving ------------------------------------------------------------------------------------------


#: Kept tasks after which a request comes in more often on the channels fewer kept tasks used (a customer writes on
#: any of them): the set's shares stay broad, and a small set draws as if uniform.
BALANCE_AFTER = 100


def arrive(
    s: Scenario,
    sender: Person,
    ask: Ask,
    *,
    channels: Sequence[Channel] = CUSTOMER,
    relay_by: Person | None = None,
) -> Trigger:
    """Plant ``ask`` from ``sender`` on one of ``channels`` (seeded choice among the usable ones) and find it.

    A customer's request may come in on every channel of ``CUSTOMER``; a colleague's on ``COLLEAGUE``. On
    ``chat`` a customer's request is passed on by ``relay_by`` (default: an account executive or the
    support lead).
    """
    customer = sender.organisation_id != s.world.home_organisation_id
    options = channels_for(s, sender, channels, customer=customer)
    if not options:
        raise Skip(f"no channel of {', '.join(channels)} reaches us from {sender.name} with what is mounted")
    channel = s.rng.choice(options) if sum(s.used.get(channel_key(c), 0) for c in CUSTOMER) < BALANCE_AFTER else \
        s.rng.choices(options, weights=[(1 + s.used.get(channel_key(c), 0)) ** -0.5 for c in options])[0]
    trigger = _ARRIVE[channel](s, sender, ask, relay_by)
    s.trigger, s.arrival, s.topic = trigger.rec, trigger, ask.subject
    s.names[trigger.step.index] = trigger.reference
    return trigger


def _email(s: Scenario, sender: Person, ask: Ask, relay_by: Person | None) -> Trigger:
    org = org_of(s, sender)
    hours = hours_after(s, [m["sent_at"] for m in s.records("mailbox", "message", where={"from_email": sender.email})])
    message = s.event(
        "mailbox", "email_received", "message", from_email=sender.email, from_name=sender.name, subject=ask.subject,
        body=_email_body(s, sender, org, ask.text), hours_ago=hours,
    )
    when = when_phrase(s, hours)
    reference = s.refer(message, f"{sender.first_name}'s email", relation="sender", where={"from_email": sender.email},
                        latest="sent_at")
    step = lookup(s, message, {"from_name": sender.name, "query": sender.name, "from_email": sender.email},
                  say=f"find {reference}", stage="trigger")
    where = f" ({org.name})" if org.id != s.world.home_organisation_id else ""
    return Trigger("email", message, sender, sender, step, reference, when, f"{sender.name}{where} emailed {when}")


def _sms(s: Scenario, sender: Person, ask: Ask, relay_by: Person | None) -> Trigger:
    org = org_of(s, sender)
    hours = hours_after(s, [m["date_created"] for m in s.records("sms", "message", where={"from_number": sender.phone})])
    opener = s.rng.choice(_SMS_OPENERS).format(first=sender.first_name, name=sender.name, org=org.name)
    message = s.event("sms", "message_received", "message", from_number=sender.phone,
                      body=opener + (ask.short or ask.text), hours_ago=hours)
    when = when_phrase(s, hours)
    reference = s.refer(message, f"the text {sender.first_name} sent", relation="sender",
                        where={"from_number": sender.phone}, latest="date_created")
    step = lookup(s, message, {"from_number": sender.phone}, say=f"read {reference}", stage="trigger")
    return Trigger("sms", message, sender, sender, step, reference, when, f"{sender.name} from {org.name} texted our number {when}")


def _voice(s: Scenario, sender: Person, ask: Ask, relay_by: Person | None) -> Trigger:
    org = org_of(s, sender)
    hours = hours_after(s, [c["started_at"] for c in s.records("voice", "call", where={"from_number": sender.phone})])
    opener = s.rng.choice(_VOICE_OPENERS).format(name=sender.name, first=sender.first_name, last=sender.last_name, org=org.name)
    call = s.event("voice", "voicemail_left", "call", from_number=sender.phone, transcript=opener + ask.text + s.rng.choice(_VOICE_CLOSERS),
                   team="Billing" if ask.topic == "Billing" else "Support", hours_ago=hours)
    when = when_phrase(s, hours)
    reference = s.refer(call, f"{sender.first_name}'s voicemail", relation="caller",
                        where={"from_number": sender.phone, "outcome": "voicemail"}, latest="started_at")
    step = lookup(s, call, {"from_number": sender.phone, "outcome": "voicemail", "query": sender.name},
                  say=f"listen to {reference}", stage="trigger")
    return Trigger("voice", call, sender, sender, step, reference, when,
                   f"{sender.name} from {org.name} left a voicemail on our main line {when}")


def _ticket(s: Scenario, sender: Person, ask: Ask, relay_by: Person | None) -> Trigger:
    org = org_of(s, sender)
    users = [u.key for u in s.records("helpdesk", "user", where={"email": sender.email})]
    hours = hours_after(s, [t["created_at"] for t in s.records("helpdesk", "ticket", where={"requester_id": tuple(users)})] if users else [])
    sign = s.rng.choice(("", f"\n\n{sender.first_name}", f"\n\nThanks,\n{sender.name}"))
    ticket = s.event(
        "helpdesk", "ticket_received", "ticket", requester_email=sender.email, requester_name=sender.name,
        subject=ask.subject, description=ask.text + sign, channel="web", hours_ago=hours,
    )
    when = when_phrase(s, hours)
    reference = s.refer(ticket, f"the ticket {sender.first_name} opened", relation="requester",
                        where={"requester_id.email": sender.email, "status": "new"}, latest="created_at")
    step = lookup(s, ticket, {"requester_id.email": sender.email, "status": "new", "query": ask.subject},
                  say=f"open {reference}", stage="trigger")
    return Trigger("ticket", ticket, sender, sender, step, reference, when,
                   f"{sender.name} from {org.name} opened a ticket {when}, \"{ask.subject}\"")


def _form(s: Scenario, sender: Person, ask: Ask, relay_by: Person | None) -> Trigger:
    org = org_of(s, sender)
    hours = hours_after(s, [r["submitted_at"] for r in s.records("forms", "response", where={"respondent_email": sender.email})])
    topic = ask.topic if ask.topic in _FORM_TOPICS else "Something else"
    response = s.event(
        "forms", "response_submitted", "response", form_title=_FORM,
        answers={"full_name": sender.name, "email": sender.email, "company": org.name, "topic": topic, "message": ask.text},
        hours_ago=hours,
    )
    when = when_phrase(s, hours)
    forms = s.records("forms", "form", where={"title": _FORM})
    if len(forms) != 1:
        raise Skip(f"no single form titled {_FORM!r}")
    reference = s.refer(response, f"{sender.first_name}'s message through the contact form", relation="respondent",
                        where={"form_id": forms[0].key, "respondent_email": sender.email}, latest="submitted_at")
    step = lookup(s, response, {"respondent_email": sender.email, "query": sender.name, "form_id": forms[0].key},
                  say=f"read {reference}", stage="trigger")
    return Trigger("form", response, sender, sender, step, reference, when,
                   f"{sender.name} from {org.name} wrote in through our website's contact form {when}")


def _chat(s: Scenario, sender: Person, ask: Ask, relay_by: Person | None) -> Trigger:
    customer = sender.organisation_id != s.world.home_organisation_id
    author = (relay_by or _relayer(s)) if customer else sender
    users = [u.key for u in s.records("chat", "user", where={"email": author.email})]
    hours = hours_after(s, [m["posted_at"] for m in s.records("chat", "message", where={"user_id": tuple(users)})] if users else [])
    when = when_phrase(s, hours)
    if customer:
        org = org_of(s, sender)
        text = s.rng.choice(_RELAY).format(name=sender.name, org=org.name, relay=_third_person(ask), when=when)
        intro = f"{author.name} posted in #{ask.team} {when} about a call from {sender.name}"  # the post says from where
    else:
        text = ask.short or ask.text
        intro = f"{author.name} asked in #{ask.team} {when}"
    if author.email == s.world.user.email:
        raise Skip("the user does not relay requests to themselves")
    post = s.event("chat", "message_posted", "message", channel=ask.team, author_email=author.email, text=text, hours_ago=hours)
    reference = s.refer(post, f"{author.first_name}'s message in #{ask.team}", relation="author",
                        where={"user_id.email": author.email, "channel_id": post["channel_id"]}, latest="posted_at")
    step = lookup(s, post, {"channel": ask.team, "query": sender.name, "from_email": author.email},
                  say=f"read {reference}", stage="trigger")
    return Trigger("chat", post, author, sender, step, reference, when, intro)


def _relayer(s: Scenario) -> Person:
    for role in ("account executive", "support lead", "sales lead", "customer success manager"):
        try:
            person = s.world.team_member(role)
        except KeyError:
            continue
        if person.email != s.world.user.email:
            return person
    others = [p for p in s.world.team if p.email != s.world.user.email]
    if not others:
        raise Skip("nobody on the team passes calls on")
    return others[0]


_ARRIVE = {"email": _email, "sms": _sms, "voice": _voice, "ticket": _ticket, "form": _form, "chat": _chat}


# -- replying on the channel ---------------------------------------------------------------------------


def reply(
    s: Scenario,
    trigger: Trigger,
    parts: Sequence[str | Ref],
    *,
    say: str,
    facts: Sequence[Said] = (),
    subject: str = "",
    mentions: Sequence[tuple[Ref, str]] = (),
    relay_parts: Sequence[str | Ref] | None = None,
    accept: Mapping[str, Sequence[Any]] | None = None,
) -> Step:
    """Answer the trigger on its channel with a text of ``parts`` (looked-up values inside) stating ``facts``.

    For a request a colleague passed on, the answer goes to the colleague: ``relay_parts``, or by default a
    line for them with each fact ("Done for Ana: the refund id re_0007; the refunded amount 120.00 USD.")."""
    if trigger.relayed:
        parts = relay_parts or _relay_parts(trigger, facts)
    body = Composed(tuple(parts))
    common = {"say": say, "facts": facts, "stage": "report", "mentions": mentions, "guided": True, "accept": accept}
    found = trigger.step
    if trigger.channel == "email":
        return s.call("mailbox", "reply_to_message", {"message_id": found.ref("id"), "body": body}, **common)  # type: ignore[arg-type]
    if trigger.channel == "sms":
        return s.call("sms", "reply_to_message", {"message_sid": found.ref("id"), "body": body}, **common)  # type: ignore[arg-type]
    if trigger.channel == "ticket":
        return s.call("helpdesk", "add_ticket_reply", {"ticket_id": found.ref("id"), "body": body}, **common)  # type: ignore[arg-type]
    if trigger.channel == "chat":
        return s.call("chat", "reply_in_thread", {"message_id": found.ref("id"), "text": body}, **common)  # type: ignore[arg-type]
    if trigger.channel == "voice" and _mobile(s, trigger.person):
        return s.call("sms", "send_message", {"to": found.ref("from_number"), "body": body}, **common)  # type: ignore[arg-type]
    if trigger.channel == "form":
        return s.call(
            "mailbox", "send_email",
            {"to": ListOf((found.ref("respondent_email"),)), "subject": detail(subject or "Your message"), "body": body},
            **common,  # type: ignore[arg-type]
        )
    if trigger.channel == "voice" and s.has("mailbox"):
        return s.call(
            "mailbox", "send_email",
            {"to": ListOf((Lit(trigger.person.email, stated=False),)), "subject": detail(subject or "Your call"), "body": body},
            **common,  # type: ignore[arg-type]
        )
    raise Skip(f"no way to answer on {trigger.channel}")


def _relay_parts(trigger: Trigger, facts: Sequence[Said]) -> list[str | Ref]:
    parts: list[str | Ref] = [f"Done for {trigger.person.first_name}"]
    for n, fact in enumerate(facts):
        parts.append(": " if n == 0 else "; ")
        parts.append(f"{fact.noun} ")
        if isinstance(fact.value, Ref):
            parts.append(fact.value)
        elif isinstance(fact.value, Lit):
            value = fact.value.value
            parts.append(_DECIDED.get(str(value), str(value)) if fact.kind == "decision" else _spoken(value))
    parts.append(". I'll leave it to you to let them know." if facts else ".")
    return parts


#: A decision as a line to a colleague says it ("the decision: approved").
_DECIDED = {"approve": "approved", "deny": "declined", "pending": "passed on for review"}


def _spoken(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


#: Where a trigger's record states its sender's email address, per channel.
_SENDER_EMAIL: dict[Channel, str] = {"email": "from_email", "ticket": "requester_email", "form": "respondent_email"}


def email_of(s: Scenario, trigger: Trigger) -> Expr:
    """The requester's email address as the agent finds it: on the message itself (an email's sender, a ticket's
    requester, a form's answer), else on their own record in a mounted system (a CRM contact, a store customer),
    looked up by their name."""
    person = trigger.person
    column = _SENDER_EMAIL.get(trigger.channel)
    if column is not None and not trigger.relayed and trigger.step.value(column) == person.email:
        return trigger.step.ref(column)
    from composer.walk import address_book

    kinds = [k for k in s.kinds if k.is_person]
    s.rng.shuffle(kinds)
    kinds.sort(key=lambda k: k.service != "crm")  # where a team keeps its customers' addresses first
    found = address_book(s, person, kinds, {"query": person.name, "name": person.name, "phone": person.phone},
                         say=f"look up {person.first_name}'s email address", stage="identify", name=True)
    if found is None:
        raise Skip(f"no mounted system finds {person.name}'s email address by their name")
    return found


def asking(trigger: Trigger, what: str) -> str:
    """The request's first sentence, how the work came up and what was asked: "Ana asked in #sales to ..." (a post
    asks already), "Ana emailed this morning asking to ..." (``what``: "to ...", "for ...", "whether ...")."""
    asked = trigger.channel == "chat" and not trigger.relayed
    return f"{trigger.intro} {what}" if asked else f"{trigger.intro} asking {what}"


def reply_clause(trigger: Trigger, what: str) -> str:
    """How a request asks for the answer on the trigger's channel: "reply to Ana with the refund id"."""
    first = trigger.sender.first_name
    if trigger.channel == "chat":
        return f"answer {first} in the thread with {what}"
    if trigger.channel in ("sms",) or (trigger.channel == "voice"):
        return f"get back to {trigger.person.first_name} with {what}"
    if trigger.channel == "ticket":
        return f"reply on the ticket with {what}"
    return f"reply to {trigger.person.first_name} with {what}"


__all__ = [
    "CHANNELS", "COLLEAGUE", "CUSTOMER", "Ask", "Channel", "Trigger", "arrive", "asking", "can_arrive", "channels_for", "email_of", "org_of",
    "recent_hours", "reply", "reply_clause", "usable", "when_phrase",
]
