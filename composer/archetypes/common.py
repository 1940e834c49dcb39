"""What many archetypes share: how work arrives (an email, a chat message, a text, a ticket), policies
kept in documents, and the small facts people use to name things ("this morning", "Brightline").

Each helper plants through a service's world event (``@service.event``) and records the trigger or
the policy document on the scenario, so the request can point at it ("the email Ana sent this
morning") and the audit can show where it lives.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from mcp_services.kernel.world import Organisation, Person

from composer.plan import Ref
from composer.scenario import Rec, Scenario, Skip
from composer.phrasing import long_date


def org_of(s: Scenario, person: Person) -> Organisation:
    return s.world.organisation(person.organisation_id)


def money(amount: float, currency: str = "USD") -> str:
    return f"{amount:,.2f} {currency}"


def day_name(iso: str) -> str:
    return datetime.strptime(iso[:10], "%Y-%m-%d").strftime("%A")


def short_date(iso: str) -> str:
    moment = datetime.strptime(iso[:10], "%Y-%m-%d")
    return f"{moment.day} {moment.strftime('%B')}"


def clock(iso: str) -> str:
    return iso[11:16]


def when_phrase(s: Scenario, hours_ago: float) -> str:
    """How a person says when something arrived: "this morning", "an hour ago", "yesterday"."""
    now = s.world.now_dt
    moment = now - timedelta(hours=hours_ago)
    if moment.date() != now.date():
        return "yesterday" if (now.date() - moment.date()).days == 1 else f"on {long_date(moment.strftime('%Y-%m-%dT%H:%M:%SZ'))}"
    if hours_ago <= 1.5:
        return "an hour ago" if hours_ago > 0.75 else "a few minutes ago"
    return "this morning" if moment.hour < 12 else "earlier today"


def recent_hours(s: Scenario) -> float:
    """A plausible time since a message arrived today (never before midnight)."""
    hour = s.world.now_dt.hour + s.world.now_dt.minute / 60
    return round(min(hour - 0.2, s.rng.uniform(0.5, 3.5)), 2) if hour > 1 else 0.3


def signature(person: Person, organisation: Organisation) -> str:
    return f"{person.name}\n{organisation.name}"


def colleague(s: Scenario, role: str) -> Person:
    """The teammate with this role (never the user the agent works for: they do not write to themselves)."""
    try:
        person = s.world.team_member(role)
    except KeyError:
        raise Skip(f"the team has no {role}") from None
    if person.email == s.world.user.email:
        raise Skip(f"the {role} is the user")
    return person


def teammate(s: Scenario) -> Person:
    """Any colleague of the user, by seeded choice (who happened to notice, count or ask)."""
    return s.pick([p for p in s.world.team if p.email != s.world.user.email], "no colleague")


def rule_author(s: Scenario, *preferred: str) -> str:
    """The role of a manager who writes the team's rules, ``preferred`` first (never the user: they would not
    email themselves)."""
    for role in (*preferred, "operations manager", "support lead", "sales lead"):
        try:
            if s.world.team_member(role).email != s.world.user.email:
                return role
        except KeyError:
            continue
    raise Skip("no manager besides the user")


def inbound_email(s: Scenario, sender: Person, subject: str, body: str, *, hours_ago: float | None = None) -> tuple[Rec, str]:
    """An email from ``sender`` to the user; returns the message and when it came ("this morning")."""
    hours = recent_hours(s) if hours_ago is None else hours_ago
    message = s.event(
        "mailbox", "email_received", "message", from_email=sender.email, from_name=sender.name, subject=subject, body=body,
        hours_ago=hours,
    )
    s.trigger = message
    return message, when_phrase(s, hours)


def chat_post(s: Scenario, author: Person, channel: str, text: str, *, hours_ago: float | None = None) -> tuple[Rec, str]:
    """A message a colleague posts in a chat channel; returns it and when it came."""
    hours = recent_hours(s) if hours_ago is None else hours_ago
    message = s.event("chat", "message_posted", "message", channel=channel, author_email=author.email, text=text, hours_ago=hours)
    s.trigger = message
    return message, when_phrase(s, hours)


def inbound_text(s: Scenario, sender: Person, body: str, *, hours_ago: float | None = None) -> tuple[Rec, str]:
    """A text message from ``sender``'s phone to our number; returns it and when it came."""
    hours = recent_hours(s) if hours_ago is None else hours_ago
    message = s.event("sms", "message_received", "message", from_number=sender.phone, body=body, hours_ago=hours)
    s.trigger = message
    return message, when_phrase(s, hours)


def inbound_ticket(
    s: Scenario, requester: Person, subject: str, description: str, *, channel: str = "email", priority: str = "normal",
    hours_ago: float | None = None,
) -> tuple[Rec, str]:
    """A ticket a customer opens; returns it and when it came."""
    hours = recent_hours(s) if hours_ago is None else hours_ago
    ticket = s.event(
        "helpdesk", "ticket_received", "ticket", requester_email=requester.email, requester_name=requester.name,
        subject=subject, description=description, channel=channel, priority=priority, hours_ago=hours,
    )  # the helpdesk event takes hours_ago (when the customer wrote in)
    s.trigger = ticket
    return ticket, when_phrase(s, hours)


def policy_document(s: Scenario, title: str, text: str) -> Rec:
    """A policy written down in the shared drive (the Policies folder), owned by the operations manager."""
    owner = s.world.team_member("operations manager")
    return s.event(
        "files", "document_added", "file", name=f"{title}.md", content=f"# {title}\n\n{text}\n", folder="Policies",
        owner_email=owner.email, days_ago=s.rng.randint(20, 200),
    )


def policy_email(s: Scenario, sender: Person, subject: str, text: str) -> Rec:
    """A rule a manager sent the team by email some days ago (to every colleague: it says "Hi all")."""
    team = [p.email for p in s.world.team if p.email != sender.email]
    return s.event(
        "mailbox", "email_received", "message", from_email=sender.email, from_name=sender.name, subject=subject, body=text,
        hours_ago=24.0 * s.rng.randint(3, 40), to=team,
    )


def rule_source(s: Scenario, title: str, text: str, *, author_role: str = "operations manager") -> tuple[Rec, str]:
    """Where a rule the task must follow lives: a document in the shared drive, or an email a manager sent
    the team. Returns the record and how the request points at it (never what the rule says)."""
    if s.has("files") and (not s.has("mailbox") or s.rng.random() < 0.6):
        return policy_document(s, title, text), f"Follow our {title.lower()} (in the Policies folder of the shared drive)"
    if not s.has("mailbox"):
        raise Skip("no place for a written rule")
    manager = s.world.team_member(author_role)
    message = policy_email(s, manager, title, f"Hi all,\n\nA reminder of our {title.lower()}:\n\n{text}\n\nThanks,\n{manager.name}")
    return message, f"Stick to the {title.lower()} {manager.first_name} emailed the team"


def maybe_log_in_crm(s: Scenario, person: Person, what: str, value: Ref | None, noun: str, *, p: float = 0.5) -> bool:
    """Now and then, the step a careful colleague adds: a note on the person's CRM record saying what was done.

    ``what`` says it in words ("Refunded the duplicate charge"); ``value`` (an id, a number) goes in with it.
    Returns whether the step was added; the caller adds "and note it in the CRM" to the goal when it was.
    """
    if not s.has("crm") or s.rng.random() >= p:
        return False
    contacts = s.records("crm", "contact", where={"email": person.email, "archived": False})
    if len(contacts) != 1:
        return False
    parts: tuple[str | Ref, ...] = (f"{what}: ", value, ".") if value is not None else (f"{what}.",)
    found = s.call("crm", "find_contact_by_email", {"email": person.email}, say=f"find {person.first_name} in the CRM")
    s.call(
        "crm", "add_note", {"entity_type": "contact", "entity_id": found.ref("id"), "body": s.text(*parts)},
        say="note on their CRM contact what you did" + (f", with {noun}" if value is not None else ""),
        mentions=[(value, noun)] if value is not None else [],
    )
    return True
