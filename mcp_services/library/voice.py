"""Voice: our business phone line's calls, missed calls and voicemails with their transcripts, call notes,
tags, and callbacks owed to callers (modelled on the Aircall API, with Twilio Voice's transcriptions).

The main line is the home organisation's phone number (``world.home.phone``; the SMS service lists it as
voice only). Callers ring it and the IVR routes them to a team (Support, Sales or Billing); the team's
agents are colleagues of ``world.team``. The phone book holds the World's customers (synced from the
CRM: name, company, phone, email), so a known caller's call shows who they are.

A call is ``answered``, ``missed`` (with Aircall's reason) or ``voicemail`` (missed, and the caller left
a message: its recording and transcript). Missed calls and voicemails wait in the team's inbox until
someone archives them (marks them done); an archived call cannot be assigned or get a callback until it
is unarchived. A callback is a call we owe the caller: assigned to an agent, due at a time, then
completed or cancelled. Only inbound missed calls and voicemails get callbacks, one open callback per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal, get_args

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    URL,
    CompanyName,
    DateTime,
    EmailAddress,
    EntityId,
    PersonName,
    PhoneNumber,
    ShortText,
    Tag,
    Text,
    moment,
)
from mcp_services.kernel.prose import industry_facts, write
from mcp_services.kernel.world import Person

UserId = EntityId("voice.user")
NumberId = EntityId("voice.number")
ContactId = EntityId("voice.contact")
CallId = EntityId("voice.call")
NoteId = EntityId("voice.note")
CallbackId = EntityId("voice.callback")

Direction = Literal["inbound", "outbound"]
Outcome = Literal["answered", "missed", "voicemail"]
Team = Literal["Support", "Sales", "Billing"]
MissedReason = Literal["out_of_opening_hours", "short_abandoned", "abandoned_in_ivr", "no_available_agent", "agents_did_not_answer"]
Availability = Literal["available", "unavailable", "offline"]
CallbackStatus = Literal["scheduled", "completed", "cancelled"]

CALLBACK_STATUS = StateDef(
    field="status", values=["scheduled", "completed", "cancelled"], initial="scheduled", terminal=["completed", "cancelled"],
    transitions={"scheduled": ["completed", "cancelled"], "completed": [], "cancelled": []},
)
#: Which teammates answer each team's calls.
TEAM_ROLES: dict[str, tuple[str, ...]] = {
    "Support": ("support lead", "support agent"),
    "Sales": ("sales lead", "account executive"),
    "Billing": ("finance lead", "accountant"),
}

service = Service(
    "voice",
    "Our business phone line: calls in and out, missed calls and voicemails with transcripts, call notes and tags, "
    "assigning calls to teammates, callbacks owed to callers, and the phone book of who calls us.",
    title="Voice",
)


# -- entities --------------------------------------------------------------------------------------


@service.entity(table="users", prefix="agt", label="name", search=("name", "email"))
class User:
    """A colleague who takes calls, in one of the teams the IVR routes to."""

    id: UserId
    name: PersonName = field(role="self")
    email: EmailAddress = field(unique=True, role="self")
    team: Team | None = None
    availability: Availability = "available"


@service.entity(table="numbers", prefix="num", label="name")
class Number:
    """One of our phone lines."""

    id: NumberId
    name: str
    digits: PhoneNumber = field(unique=True)
    ivr: bool
    opening_hours: str


@service.entity(table="contacts", prefix="ctc", label="name", search=("name", "company_name", "email", "phone_number"))
class Contact:
    """A person in the phone book (synced from the CRM), so that their calls show who is calling."""

    id: ContactId
    name: PersonName = field(role="self")
    first_name: str
    last_name: str
    company_name: CompanyName | None = field(None, role="employer")
    phone_number: PhoneNumber = field(unique=True, role="self")
    email: EmailAddress | None = field(None, role="self")


def _note_counts(db: RecordAccess, calls: Sequence[Call]) -> list[int]:
    ids = [c.id for c in calls]
    marks = ", ".join("?" for _ in ids)
    found = dict(db.sql(f"SELECT call_id, COUNT(*) FROM notes WHERE call_id IN ({marks}) GROUP BY 1", *ids))
    return [int(found.get(i, 0)) for i in ids]


@service.entity(table="calls", prefix="call", label="from_number", search=("transcript",))
class Call:
    """One call on our line: who called whom, when, how it ended, and for voicemails the message and its transcript."""

    id: CallId
    direction: Direction
    outcome: Outcome = field(index=True)
    missed_call_reason: MissedReason | None = None
    from_number: PhoneNumber = field(index=True, role="caller")
    to_number: PhoneNumber = field(role="callee")
    contact_id: ContactId | None = field(None, index=True, role="caller")
    number_id: NumberId
    team: Team | None = None
    user_email: EmailAddress | None = field(None, role="agent")
    started_at: DateTime = field(index=True, mention="the time of the call")
    answered_at: DateTime | None = None
    ended_at: DateTime
    duration: int  # seconds on the line
    voicemail_url: URL | None = None
    recording_url: URL | None = None
    transcript: Text | None = field(None, mention="the voicemail transcript")
    tags: list[Tag] = field(default_factory=list, incidental=True)
    assigned_to: EmailAddress | None = field(None, role="assignee")
    archived: bool = False

    contact_name = joined(PersonName | None, via="contact_id", field="name")
    company_name = joined(CompanyName | None, via="contact_id", field="company_name")
    note_count = derived(int, batch=_note_counts)


@service.entity(table="notes", prefix="cnote", search=("content",))
class Note:
    """A note a colleague wrote on a call."""

    id: NoteId
    call_id: CallId = field(index=True)
    content: Text
    author_email: EmailAddress = field(role="author")
    posted_at: DateTime


@service.entity(table="callbacks", prefix="cb", label="phone_number", state=CALLBACK_STATUS)
class Callback:
    """A call we owe someone who rang: who returns it, and by when."""

    id: CallbackId
    call_id: CallId = field(index=True)
    phone_number: PhoneNumber = field(role="caller")
    contact_id: ContactId | None = field(None, role="caller")
    assignee_email: EmailAddress = field(index=True, role="assignee")
    due_at: DateTime = field(mention="the callback time")
    status: CallbackStatus = field(index=True)
    note: Text | None = None
    created_at: DateTime
    closed_at: DateTime | None = None

    contact_name = joined(PersonName | None, via="contact_id", field="name")


# -- rules -----------------------------------------------------------------------------------------

_CALL_HINT = "Use list_calls to find call ids."


def _call(ctx: ToolContext, call_id: str) -> Call:
    return ctx.get(Call, call_id, hint=_CALL_HINT)


def _teammate(ctx: ToolContext, email: str) -> User:
    user = ctx.find(User, email=email.strip().lower())
    if user is None:
        raise ToolError.invalid_argument(f"{email} is not one of our phone users; see list_users.")
    return user


def _open_inbox_call(ctx: ToolContext, call_id: str, action: str) -> Call:
    """A missed inbound call or voicemail still in the inbox (not archived)."""
    call = _call(ctx, call_id)
    if call.direction != "inbound" or call.outcome == "answered":
        raise ToolError.invalid_state(f"Call {call_id} is an {call.direction} {call.outcome} call; only missed calls and voicemails can be {action}.")
    if call.archived:
        raise ToolError.invalid_state(f"Call {call_id} is archived (done); unarchive_call it before it can be {action}.")
    return call


def _main_line(ctx: ToolContext) -> Number:
    number = ctx.find(Number, digits=ctx.world.home.phone)
    assert number is not None
    return number


def _inbound(
    ctx: ToolContext, from_number: str, outcome: str, at: datetime, *, team: str, seconds: int, transcript: str | None = None,
    reason: str | None = None, agent: str | None = None,
) -> Call:
    line = _main_line(ctx)
    contact = ctx.find(Contact, phone_number=from_number)
    call_id = ctx.new_id("call")
    answered = outcome == "answered"
    voicemail = outcome == "voicemail"
    return ctx.insert(Call(
        id=call_id, direction="inbound", outcome=outcome, missed_call_reason=None if answered else reason or "agents_did_not_answer",
        from_number=from_number, to_number=line.digits, contact_id=contact.id if contact else None, number_id=line.id, team=team,
        user_email=agent if answered else None, started_at=ctx.iso(at),
        answered_at=ctx.iso(at + timedelta(seconds=12)) if answered else None, ended_at=ctx.iso(at + timedelta(seconds=seconds)),
        duration=seconds, voicemail_url=f"https://voicemail.aircall.io/{call_id.replace('_', '-')}.mp3" if voicemail else None,
        recording_url=f"https://recordings.aircall.io/{call_id.replace('_', '-')}.mp3" if answered and transcript else None,
        transcript=transcript,
    ))


# -- seed ------------------------------------------------------------------------------------------

_HELLO = "[Hi, this is|Hello, this is|Hi, it's|Hey, it's|Good morning, this is|Hello, {first} here,] {first} [from|at|with] {company}."
_BYE = "[Thanks.|Thank you.|Thanks, bye.|Speak soon.|Cheers.|Thanks a lot.|]"
#: Voicemails callers leave: (team, text); {first}, {company}, {product} and their industry's words are filled in.
_VOICEMAILS = (
    ("Support", _HELLO + " [Our exports have been failing|The reports won't load|Nobody can log in] [since this "
     "morning|since lunch|since yesterday] and [I need the numbers for a board meeting|it's holding up {work}|{clients} "
     "are waiting on us]. [Could someone call me back as soon as you can?|Please call me back.|Can someone ring me?] "
     + _BYE),
    ("Sales", _HELLO + " We'd like to [add about ten seats to|expand|upgrade] our {product} [and I have a couple of "
     "questions on pricing|before {rush}|for {site}]. [Please give me a ring back when you get a chance.|Call me back "
     "when you can.|I'm around all afternoon.] " + _BYE),
    ("Billing", _HELLO + " I'm looking at [this month's invoice|the latest invoice|our last invoice] and [the total looks "
     "higher than what we agreed|there's a line I don't recognise|the billing address is wrong]. [Can someone from "
     "billing call me back?|Please call me.|Could finance give me a ring?] " + _BYE),
    ("Support", _HELLO + " [Following up on|Calling about|Chasing] [the login issue|the sync problem|the slow "
     "dashboard] [we reported|I emailed about|from last week], it's still happening for [two of our users|the team at "
     "{site}|a few people]. [Call me back when you can.|Please call back.|] " + _BYE),
    ("Sales", _HELLO + " I saw a missed call from this number [this morning|yesterday|earlier]; I'm free [most of the "
     "afternoon|after three|tomorrow morning] if you want to try again. " + _BYE),
)
#: Answered calls: (team, what the agent wrote down, or None).
_ANSWERED = (
    ("Support", "[Customer asked how to reset a user's password|Caller needed a password reset for a colleague|Helped "
     "reset an admin password]; [walked them through the admin page|sent the help article|done on the call][; they "
     "use it for {work}|]."),
    ("Sales", "[Discussed the renewal|Talked about next year's plan|Went through the renewal] and the number of seats[ "
     "for {site}|]; [they will confirm by email|decision after {rush}|they want a proposal]."),
    ("Billing", "[Customer asked for a copy of last month's invoice|They needed an invoice copy for their "
     "auditors|Caller wanted last quarter's invoices]; [sent by email during the call|emailed while we talked|sent "
     "the PDFs]."),
    ("Support", None),
    ("Sales", None),
)
_NOTES = (
    "[Called back, left a message|Rang back, voicemail|Tried them back, no answer][.| - will try again {when}.]",
    "[Sorted on the call|Fixed while we talked|Resolved on the call]; [nothing else needed|no follow-up|closing it].",
    "[Passed on to|Handed over to|Forwarded to] [the account owner|{colleague}|billing][.|, who will call them {when}.]",
    "[Customer will email the details|They'll send details by email|Waiting for their email][.| - check {when}.]",
    "[Logged in the CRM|Added a CRM note|Noted on their record][.|; follow-up {when}.]",
)
_NOTE_TAILS = ("", "", "- {colleague}", "Ticket updated.", "CRM updated.", "They sounded happy.", "It matters for {site}.")
_CALLBACK_NOTES = ("[Return the call|Call them back|Ring back][.| about their voicemail.| {when}.]",
                   "[Call back re:|Follow up on] [the voicemail|their question|the missed call][.| - {colleague} knows the account.]")
_WHEN = ("tomorrow", "this afternoon", "on Monday", "later today", "after lunch")


@service.seeder
def seed(ctx: ToolContext) -> None:
    """Our main line, the teams' agents, the phone book of customers, six weeks of calls with notes and open callbacks."""
    world, rng, now = ctx.world, ctx.rng("seed"), ctx.now
    team_of = {role: team for team, roles in TEAM_ROLES.items() for role in roles}
    users = [User(id=ctx.new_id("agt"), name=p.name, email=p.email, team=team_of.get(p.job_title),
                  availability=rng.choice(("available", "available", "unavailable")) if p.job_title in team_of else "offline")
             for p in world.team]
    ctx.insert_many(users)
    ctx.insert(Number(id=ctx.new_id("num"), name="Main line", digits=world.home.phone, ivr=True,
                      opening_hours="Monday to Friday, 13:00-22:00 UTC"))
    customers = list(world.customers)
    synced = sorted(rng.sample(customers, int(len(customers) * 0.85)), key=lambda p: p.id)
    numbers: set[str] = {world.home.phone}
    for p in synced:
        if p.phone not in numbers:  # a phone book holds each number once
            numbers.add(p.phone)
            ctx.insert(Contact(id=ctx.new_id("ctc"), name=p.name, first_name=p.first_name, last_name=p.last_name,
                               company_name=world.organisation(p.organisation_id).name, phone_number=p.phone, email=p.email))
    agents = {team: [u.email for u in users if u.team == team] for team in TEAM_ROLES}

    words = ctx.rng("words")  # what is said and noted, apart from who called when

    def facts(person: Person | None, product: str | None = None) -> dict[str, str]:
        org = world.organisation(person.organisation_id) if person else world.home
        return {"first": person.first_name if person else "", "company": org.name,
                "product": product or words.choice(world.products[:3]).name, "when": words.choice(_WHEN),
                "colleague": words.choice(world.team).first_name, **industry_facts(words, org.industry)}

    def ago(days_ago: float) -> datetime:
        at = now - timedelta(days=days_ago)
        return at.replace(hour=rng.randint(13, 21), minute=rng.randint(0, 59), second=rng.randint(0, 59), microsecond=0)

    calls: list[tuple[Call, Person]] = []
    for _ in range(70):
        person = rng.choice(customers)
        at = ago(rng.uniform(1, 42))
        if at >= now:
            continue
        roll = rng.random()
        if roll < 0.62:
            team, text = rng.choice(_ANSWERED)
            call = _inbound(ctx, person.phone, "answered", at, team=team, seconds=rng.randint(90, 1500),
                            transcript=write(words, text, facts(person)) if text else None, agent=rng.choice(agents[team]))
        elif roll < 0.8:
            team = rng.choice(list(TEAM_ROLES))
            call = _inbound(ctx, person.phone, "missed", at, team=team, seconds=rng.randint(15, 70),
                            reason=rng.choice(("agents_did_not_answer", "no_available_agent", "short_abandoned")))
        else:
            team, text = rng.choice(_VOICEMAILS)
            call = _inbound(ctx, person.phone, "voicemail", at, team=team, seconds=rng.randint(40, 110),
                            transcript=write(words, text, facts(person, rng.choice(world.products[:3]).name)))
        calls.append((call, person))
    for _ in range(25):  # calls we made
        person = rng.choice(customers)
        at = ago(rng.uniform(1, 42))
        user = rng.choice([u for u in users if u.team])
        line = _main_line(ctx)
        contact = ctx.find(Contact, phone_number=person.phone)
        picked = rng.random() < 0.7
        seconds = rng.randint(60, 900) if picked else rng.randint(20, 40)
        call = ctx.insert(Call(
            id=ctx.new_id("call"), direction="outbound", outcome="answered" if picked else "missed",
            missed_call_reason=None if picked else "agents_did_not_answer", from_number=line.digits, to_number=person.phone,
            contact_id=contact.id if contact else None, number_id=line.id, team=user.team, user_email=user.email,
            started_at=ctx.iso(at), answered_at=ctx.iso(at + timedelta(seconds=8)) if picked else None,
            ended_at=ctx.iso(at + timedelta(seconds=seconds)), duration=seconds,
        ))
        calls.append((call, person))
    # Older missed calls and voicemails were dealt with (archived); the last few days' may still wait.
    for call, _person in calls:
        if call.direction == "inbound" and call.outcome != "answered":
            age = (now - moment(call.started_at)).days
            if age > 4 or rng.random() < 0.4:
                ctx.update(call, archived=True)
        if rng.random() < 0.25:
            author = call.user_email or rng.choice(agents[call.team or "Support"])
            note = rng.choice(_NOTES[:4]) if words.random() < 0.8 else _NOTES[4]
            content = write(words, f"{note} {words.choice(_NOTE_TAILS)}", facts(_person))
            ctx.insert(Note(id=ctx.new_id("cnote"), call_id=call.id, content=content, author_email=author,
                            posted_at=ctx.iso(moment(call.ended_at) + timedelta(minutes=rng.randint(2, 90)))))
    waiting = [c for c, _ in calls if c.direction == "inbound" and c.outcome != "answered"
               and not ctx.get(Call, c.id).archived]
    for call in waiting[:3]:
        ctx.insert(Callback(
            id=ctx.new_id("cb"), call_id=call.id, phone_number=call.from_number, contact_id=call.contact_id,
            assignee_email=rng.choice(agents[call.team or "Support"]), due_at=ctx.iso(now + timedelta(hours=rng.randint(2, 30))),
            status="scheduled", note=write(words, words.choice(_CALLBACK_NOTES), facts(None)), created_at=call.ended_at,
        ))


# -- people, lines and the phone book --------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check who takes calls", "see who is on the {team} team"))
def list_users(ctx: ToolContext, team: Team | None = None, query: str | None = None) -> list[User]:
    """The colleagues on our phone system, with their team (Support, Sales or Billing) and availability.

    Args:
        team: Only this team's agents.
        query: Words to match in the name or email.
    """
    return ctx.query(User).filter(team=team).search(query).order_by("name").all()


@service.tool("read", intent="find", phrases=("check our phone lines",))
def list_numbers(ctx: ToolContext) -> list[Number]:
    """Our phone lines with their opening hours."""
    return ctx.query(Number).order_by("name").all()


@service.tool(
    "read", intent="find",
    phrases=("look {query} up in the phone book", "find whose number {query} is"),
)
def search_contacts(ctx: ToolContext, query: str | None = None, limit: Limit = 20, cursor: Cursor = None) -> Page[Contact]:
    """Search the phone book by name, company, email or phone number.

    Args:
        query: Words or digits to match (a phone number in E.164 form, e.g. +14155550123, or part of it).
        limit: Maximum number of contacts to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Contact).search(query).order_by("last_name", "first_name").page(limit, cursor)


@service.tool("write", intent="create", phrases=("add {first_name} {last_name} to the phone book",))
def create_contact(
    ctx: ToolContext, first_name: str, last_name: str, phone_number: PhoneNumber, company_name: CompanyName | None = None,
    email: EmailAddress | None = None,
) -> Contact:
    """Add someone to the phone book so that their calls show who they are (their earlier calls are linked too).

    Args:
        first_name: Given name.
        last_name: Family name.
        phone_number: Their number in E.164 form, e.g. +14155550123.
        company_name: Their company.
        email: Their email address.
    """
    if not first_name.strip() or not last_name.strip():
        raise ToolError.invalid_argument("first_name and last_name must not be empty.")
    existing = ctx.find(Contact, phone_number=phone_number)
    if existing is not None:
        raise ToolError.conflict(f"{phone_number} is already in the phone book as {existing.name} ({existing.id}).")
    if phone_number == ctx.world.home.phone:
        raise ToolError.invalid_argument(f"{phone_number} is our own main line.")
    contact = ctx.insert(Contact(id=ctx.new_id("ctc"), name=f"{first_name.strip()} {last_name.strip()}",
                                 first_name=first_name.strip(), last_name=last_name.strip(),
                                 company_name=company_name, phone_number=phone_number, email=email.lower() if email else None))
    for call in ctx.query(Call).where(contact_id=None).where_sql("from_number = ? OR to_number = ?", phone_number, phone_number).all():
        ctx.update(call, contact_id=contact.id)
    return contact


# -- calls -----------------------------------------------------------------------------------------


@service.tool(
    "read", intent="find",
    phrases=("check the voicemails", "look at the missed calls from {from_number}", "find the calls with {contact_id}"),
)
def list_calls(
    ctx: ToolContext,
    outcome: Outcome | None = None,
    direction: Direction | None = None,
    from_number: PhoneNumber | None = None,
    contact_id: ContactId | None = None,
    team: Team | None = None,
    archived: bool | None = None,
    query: str | None = None,
    since: DateTime | None = None,
    until: DateTime | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Call]:
    """List calls, newest first: by outcome (answered, missed, voicemail), direction, caller's number or phone-book
    contact, team, whether they are archived (done), words in a transcript, and time.

    Args:
        outcome: answered, missed or voicemail.
        direction: inbound or outbound.
        from_number: Only calls from this number (E.164).
        contact_id: Only calls with this phone-book contact, either way.
        team: Only calls routed to this team.
        archived: Only archived (true) or still open (false) calls; missed calls and voicemails wait open until done.
        query: Words to match in the transcript.
        since: Only calls that started at or after this time (ISO 8601 UTC).
        until: Only calls that started before this time.
        limit: Maximum number of calls to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Call).filter(outcome=outcome, direction=direction, from_number=from_number, contact_id=contact_id, team=team,
                               archived=archived).search(query)
    q.compare("started_at", ">=", since).compare("started_at", "<", until)
    return q.order_by("-started_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the call {call_id}", "listen to the voicemail {call_id}"))
def get_call(ctx: ToolContext, call_id: CallId) -> Call:
    """Get one call: caller and their phone-book entry, team, who answered, times, and for voicemails the recording
    and its transcript.

    Args:
        call_id: The call's id, e.g. call_0042 (see list_calls).
    """
    return _call(ctx, call_id)


@service.tool("write", intent="note", phrases=("note on the call {call_id}: {content}", "add a note to {call_id} saying {content}"))
def add_call_note(ctx: ToolContext, call_id: CallId, content: Text) -> Note:
    """Write a note on a call (what was said, what happens next, a ticket number).

    Args:
        call_id: The call.
        content: The note.
    """
    call = _call(ctx, call_id)
    if not content.strip():
        raise ToolError.invalid_argument("content must not be empty.")
    return ctx.insert(Note(id=ctx.new_id("cnote"), call_id=call.id, content=content.strip(), author_email=ctx.world.user.email,
                           posted_at=ctx.now_iso))


@service.tool("read", intent="find", phrases=("read the notes on the call {call_id}",))
def list_call_notes(ctx: ToolContext, call_id: CallId) -> list[Note]:
    """The notes on a call, oldest first.

    Args:
        call_id: The call.
    """
    call = _call(ctx, call_id)
    return ctx.query(Note).where(call_id=call.id).order_by("posted_at").all()


@service.tool("write", intent="tag", phrases=("tag the call {call_id} with {tags}",))
def tag_call(ctx: ToolContext, call_id: CallId, tags: list[Tag]) -> Call:
    """Add tags to a call (e.g. billing, urgent); tags already on it are kept.

    Args:
        call_id: The call.
        tags: Tags to add.
    """
    call = _call(ctx, call_id)
    new = [t for t in dict.fromkeys(" ".join(t.split()) for t in tags) if t and t.lower() not in {x.lower() for x in call.tags}]
    if not new:
        raise ToolError.invalid_argument(f"Call {call_id} already has every tag given; its tags: {', '.join(call.tags) or 'none'}.")
    return ctx.update(call, tags=[*call.tags, *new])


@service.tool("write", intent="assign", phrases=("give the call {call_id} to {assignee_email}", "assign {call_id} to {assignee_email}"))
def assign_call(ctx: ToolContext, call_id: CallId, assignee_email: EmailAddress) -> Call:
    """Assign a missed call or voicemail in the inbox to a teammate to deal with.

    Args:
        call_id: The missed call or voicemail.
        assignee_email: The teammate's email (see list_users).
    """
    call = _open_inbox_call(ctx, call_id, "assigned")
    user = _teammate(ctx, assignee_email)
    if call.assigned_to == user.email:
        raise ToolError.invalid_state(f"Call {call_id} is already assigned to {user.name}.")
    return ctx.update(call, assigned_to=user.email)


@service.tool("write", intent="close", phrases=("archive the call {call_id}", "mark the voicemail {call_id} as done"))
def archive_call(ctx: ToolContext, call_id: CallId) -> Call:
    """Archive a call: mark it done so it leaves the team's inbox.

    Args:
        call_id: The call.
    """
    call = _call(ctx, call_id)
    if call.archived:
        raise ToolError.invalid_state(f"Call {call_id} is already archived.")
    return ctx.update(call, archived=True)


@service.tool("write", intent="reopen", phrases=("unarchive the call {call_id}", "put {call_id} back in the inbox"))
def unarchive_call(ctx: ToolContext, call_id: CallId) -> Call:
    """Put an archived call back in the team's inbox.

    Args:
        call_id: The archived call.
    """
    call = _call(ctx, call_id)
    if not call.archived:
        raise ToolError.invalid_state(f"Call {call_id} is not archived.")
    return ctx.update(call, archived=False)


# -- callbacks -------------------------------------------------------------------------------------


@service.tool(
    "write", intent="schedule",
    phrases=("schedule a callback for {call_id} at {due_at}", "have {assignee_email} call back {call_id} by {due_at}"),
)
def schedule_callback(
    ctx: ToolContext, call_id: CallId, assignee_email: EmailAddress, due_at: DateTime, note: Text | None = None,
) -> Callback:
    """Schedule a callback for a missed call or voicemail: a teammate returns the call by a time (in the future).
    One open callback per call.

    Args:
        call_id: The missed call or voicemail to return.
        assignee_email: Who calls back (see list_users).
        due_at: By when (ISO 8601 UTC, in the future).
        note: What the call back is about.
    """
    call = _open_inbox_call(ctx, call_id, "called back")
    user = _teammate(ctx, assignee_email)
    due = moment(due_at)
    if due <= ctx.now:
        raise ToolError.invalid_argument(f"due_at {due_at} is not in the future (it is now {ctx.now_iso}).")
    open_one = ctx.find(Callback, call_id=call.id, status="scheduled")
    if open_one is not None:
        raise ToolError.conflict(f"Call {call_id} already has callback {open_one.id} for {open_one.assignee_email} due {open_one.due_at}.")
    return ctx.insert(Callback(
        id=ctx.new_id("cb"), call_id=call.id, phone_number=call.from_number, contact_id=call.contact_id, assignee_email=user.email,
        due_at=ctx.iso(due), status="scheduled", note=note.strip() if note and note.strip() else None, created_at=ctx.now_iso,
    ))


@service.tool("read", intent="find", phrases=("check the callbacks owed by {assignee_email}", "see which callbacks are due"))
def list_callbacks(
    ctx: ToolContext, assignee_email: EmailAddress | None = None, status: CallbackStatus | None = None,
    due_before: DateTime | None = None, limit: Limit = 20, cursor: Cursor = None,
) -> Page[Callback]:
    """List callbacks, soonest due first, by assignee, status and due time.

    Args:
        assignee_email: Only callbacks this teammate owes.
        status: scheduled, completed or cancelled.
        due_before: Only callbacks due before this time (ISO 8601 UTC).
        limit: Maximum number of callbacks to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Callback).filter(status=status).compare("due_at", "<", due_before)
    if assignee_email:
        q.where(assignee_email=assignee_email.strip().lower())
    return q.order_by("due_at").page(limit, cursor)


@service.tool("write", intent="close", phrases=("mark the callback {callback_id} as done",))
def complete_callback(ctx: ToolContext, callback_id: CallbackId, note: Text | None = None) -> Callback:
    """Mark a scheduled callback as done (the caller was reached).

    Args:
        callback_id: The callback.
        note: How it went.
    """
    callback = ctx.get(Callback, callback_id, hint="Use list_callbacks to find callback ids.")
    if callback.status != "scheduled":
        raise ToolError.invalid_state(f"Callback {callback_id} is already {callback.status}.")
    return ctx.update(callback, status="completed", closed_at=ctx.now_iso, note=note.strip() if note and note.strip() else callback.note)


@service.tool("write", intent="cancel", phrases=("cancel the callback {callback_id}",))
def cancel_callback(ctx: ToolContext, callback_id: CallbackId, reason: ShortText | None = None) -> Callback:
    """Cancel a scheduled callback (no longer needed).

    Args:
        callback_id: The callback.
        reason: Why.
    """
    callback = ctx.get(Callback, callback_id, hint="Use list_callbacks to find callback ids.")
    if callback.status != "scheduled":
        raise ToolError.invalid_state(f"Callback {callback_id} is already {callback.status}.")
    return ctx.update(callback, status="cancelled", closed_at=ctx.now_iso, note=reason.strip() if reason and reason.strip() else callback.note)


# -- world events ----------------------------------------------------------------------------------


def _arrival(ctx: ToolContext, hours_ago: float) -> datetime:
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    return (ctx.now - timedelta(hours=hours_ago)).replace(microsecond=0)


@service.event("voicemail_left")
def voicemail_left(ctx: ToolContext, from_number: str, transcript: str, team: str = "Support", hours_ago: float = 1.0) -> str:
    """Someone calls our main line ``hours_ago``, nobody answers, and they leave a voicemail; returns the call's id."""
    if team not in TEAM_ROLES:
        raise ToolError.invalid_argument(f"team must be one of {', '.join(TEAM_ROLES)}, not {team!r}.")
    if not transcript.strip():
        raise ToolError.invalid_argument("A voicemail needs its transcript.")
    seconds = max(20, min(180, len(transcript.split()) // 2 + 12))
    return _inbound(ctx, from_number, "voicemail", _arrival(ctx, hours_ago), team=team, seconds=seconds,
                    transcript=transcript.strip()).id


@service.event("call_missed")
def call_missed(ctx: ToolContext, from_number: str, team: str = "Support", hours_ago: float = 1.0,
                reason: str = "agents_did_not_answer") -> str:
    """Someone calls our main line ``hours_ago`` and hangs up unanswered, leaving no message; returns the call's id."""
    if team not in TEAM_ROLES:
        raise ToolError.invalid_argument(f"team must be one of {', '.join(TEAM_ROLES)}, not {team!r}.")
    reasons = [r for r in get_args(MissedReason) if r != "short_abandoned"]  # a caller who left a trace rang long enough
    if reason not in reasons:
        raise ToolError.invalid_argument(f"reason must be one of {', '.join(reasons)}, not {reason!r}.")
    return _inbound(ctx, from_number, "missed", _arrival(ctx, hours_ago), team=team, seconds=25, reason=reason).id
