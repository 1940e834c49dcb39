"""Meetings: video meetings and webinars with their join links, registrants, attendance and cloud recordings
(modelled on the Zoom API).

Hosts are the home team (``world.team``); guests are the World's customers. The webinars marketing runs
come from the marketing plan (``mcp_services.kernel.plans.marketing``), so their registrants are the
newsletter members the invitation campaign reached and their registration link is the one in that
campaign.

A meeting is ``scheduled`` until it has taken place (``ended``: it then has its participants and perhaps a
cloud recording) or is ``cancelled``. Only scheduled meetings can be rescheduled, invited to, registered for
or cancelled, and a new time must lie in the future. Basic (unlicensed) hosts can schedule at most 40
minutes; webinars need a host with a webinar licence and always take registration. A recording is private
until its sharing is turned on; its share link only opens for others after that.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import json_text
from mcp_services.kernel.plans.marketing import marketing_plan
from mcp_services.kernel.records import RecordAccess, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.prose import industry_facts, write
from mcp_services.kernel.semantic import (
    URL,
    CompanyName,
    DateTime,
    EmailAddress,
    EntityId,
    PersonName,
    ShortText,
    Subject,
    Text,
    moment,
)

UserId = EntityId("meetings.user")
MeetingId = EntityId("meetings.meeting")
RegistrantId = EntityId("meetings.registrant")
ParticipantId = EntityId("meetings.participant")
RecordingId = EntityId("meetings.recording")

Kind = Literal["meeting", "webinar"]
MeetingStatus = Literal["scheduled", "ended", "cancelled"]
RegistrantStatus = Literal["approved", "pending", "cancelled"]
Sharing = Literal["off", "anyone_with_link"]
UserType = Literal["Licensed", "Basic"]

#: A Basic (free) host's meetings last at most this long.
BASIC_LIMIT_MINUTES = 40
MAX_MINUTES = 24 * 60

MEETING_STATUS = StateDef(
    field="status", values=["scheduled", "ended", "cancelled"], initial="scheduled", terminal=["ended", "cancelled"],
    transitions={"scheduled": ["ended", "cancelled"], "ended": [], "cancelled": []},
)

service = Service(
    "meetings",
    "Video meetings and webinars: schedule, reschedule and cancel meetings with join links, invite guests, "
    "registrants and their approval, who attended, and cloud recordings with share links.",
    title="Meetings",
)


# -- entities --------------------------------------------------------------------------------------


@service.entity(table="users", prefix="zu", label="email", search=("first_name", "last_name", "email"))
class User:
    """A colleague with a Zoom account: who can host, for how long, and whether they can run webinars."""

    id: UserId
    email: EmailAddress = field(unique=True, role="self")
    first_name: str
    last_name: str
    type: UserType
    webinar_license: bool = False
    timezone: str = "UTC"

    name = derived(PersonName, lambda u: f"{u.first_name} {u.last_name}")


def _registrant_counts(db: RecordAccess, meetings: Sequence[Meeting]) -> list[int]:
    ids = [m.id for m in meetings]
    marks = ", ".join("?" for _ in ids)
    found = dict(db.sql(f"SELECT meeting_id, COUNT(*) FROM registrants WHERE status != 'cancelled' AND meeting_id IN ({marks}) "
                        "GROUP BY meeting_id", *ids))
    return [int(found.get(i, 0)) for i in ids]


def _host_names(db: RecordAccess, meetings: Sequence[Meeting]) -> list[str | None]:
    users = {u.email: f"{u.first_name} {u.last_name}" for u in db.query(User).where_in("email", {m.host_email for m in meetings}).all()}
    return [users.get(m.host_email) for m in meetings]


def _end(start: str, minutes: int) -> str:
    return (datetime.fromisoformat(start.replace("Z", "+00:00")) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


@service.entity(
    table="meetings", prefix="mtg", label="topic", search=("topic", "agenda"), state=MEETING_STATUS,
)
class Meeting:
    """A scheduled meeting or webinar, with its Zoom number, passcode and join link."""

    id: MeetingId
    kind: Kind
    topic: Subject
    agenda: Text | None = None
    host_email: EmailAddress = field(index=True, role="host")
    start_time: DateTime = field(index=True, mention="the meeting time")
    duration: int
    timezone: str = "UTC"
    meeting_number: str = field(unique=True, mention="the meeting ID")
    passcode: str = field(mention="the passcode")
    join_url: URL = field(mention="the meeting link")
    registration_required: bool = False
    registration_url: URL | None = field(None, mention="the registration link")
    invitees: list[EmailAddress] = field(default_factory=list, role="invitee")
    status: MeetingStatus = field(index=True)
    cancel_reason: str | None = None
    created_at: DateTime
    updated_at: DateTime

    end_time = derived(DateTime, lambda m: _end(m.start_time, m.duration))
    host_name = derived(PersonName | None, batch=_host_names)
    registrant_count = derived(int, batch=_registrant_counts, description="Registrants not cancelled")


def _attended(db: RecordAccess, registrants: Sequence[Registrant]) -> list[bool]:
    pairs = {(p.meeting_id, p.email) for p in db.query(Participant).where_in("meeting_id", {r.meeting_id for r in registrants}).all()
             if p.email}
    return [(r.meeting_id, r.email) in pairs for r in registrants]


@service.entity(table="registrants", prefix="reg", label="email", search=("email", "first_name", "last_name", "org"))
class Registrant:
    """Someone registered for a meeting or webinar that takes registration, with their personal join link."""

    id: RegistrantId
    meeting_id: MeetingId = field(index=True)
    email: EmailAddress = field(index=True, role="registrant", link="marketing.member.email_address")
    first_name: str
    last_name: str
    org: CompanyName | None = field(None, role="employer")
    status: RegistrantStatus
    join_url: URL
    registered_at: DateTime

    name = derived(PersonName, lambda r: f"{r.first_name} {r.last_name}")
    attended = derived(bool, batch=_attended, description="Joined the meeting (once it has ended)")
    topic = joined(str, via="meeting_id", field="topic")


@service.entity(table="participants", prefix="prt", label="name", search=("name", "email"))
class Participant:
    """Someone who joined a meeting that has ended: when they joined and left."""

    id: ParticipantId
    meeting_id: MeetingId = field(index=True)
    name: PersonName = field(role="participant")
    email: EmailAddress | None = field(None, index=True, role="participant")
    join_time: DateTime
    leave_time: DateTime
    duration: int  # minutes


@service.entity(table="recordings", prefix="rec", label="topic")
class Recording:
    """The cloud recording of a meeting that has ended."""

    id: RecordingId
    meeting_id: MeetingId = field(index=True)
    topic: Subject
    recording_start: DateTime
    recording_end: DateTime
    file_types: list[str]
    total_size_mb: float
    share_url: URL = field(mention="the recording link")
    recording_passcode: str = field(mention="the recording passcode")
    sharing: Sharing
    trashed: bool = False

    host_email = joined(EmailAddress, via="meeting_id", field="host_email")


# -- rules -----------------------------------------------------------------------------------------

_MEETING_HINT = "Use list_meetings to find meeting ids."
_DIGITS = string.digits
_TOKEN = string.ascii_letters + string.digits


def _host(ctx: ToolContext, email: str | None) -> User:
    wanted = (email or ctx.world.user.email).strip().lower()
    user = ctx.find(User, email=wanted)
    if user is None:
        raise ToolError.invalid_argument(f"{wanted} has no Zoom account on our plan; see list_users for who can host.")
    return user


def _scheduled(ctx: ToolContext, meeting_id: str, action: str) -> Meeting:
    meeting = ctx.get(Meeting, meeting_id, hint=_MEETING_HINT)
    if meeting.status != "scheduled":
        raise ToolError.invalid_state(
            f"{meeting.kind.capitalize()} {meeting_id} ({meeting.topic}) is {meeting.status}; only scheduled ones can be {action}."
        )
    return meeting


def _check_slot(ctx: ToolContext, host: User, start: datetime, duration: int, kind: str) -> None:
    if start <= ctx.now:
        raise ToolError.invalid_argument(f"{ctx.iso(start)} is not in the future (it is now {ctx.now_iso}); pick a later time.")
    if not 15 <= duration <= MAX_MINUTES:
        raise ToolError.invalid_argument(f"duration must be between 15 and {MAX_MINUTES} minutes, not {duration}.")
    if host.type == "Basic" and duration > BASIC_LIMIT_MINUTES:
        raise ToolError.permission_denied(
            f"{host.email} has a Basic account: meetings last at most {BASIC_LIMIT_MINUTES} minutes. Shorten it or "
            "let a licensed colleague host."
        )
    if kind == "webinar" and not host.webinar_license:
        raise ToolError.permission_denied(f"{host.email} has no webinar licence; a colleague with one must host webinars.")


def _number(ctx: ToolContext) -> str:
    """A fresh 11-digit meeting number, derived from the new meeting's id so that it is deterministic."""
    seed = int(ctx.new_id("zoomnumber").split("_")[1])
    rng = ctx.world.rng(f"meetings.number.{seed}")
    while True:
        number = "8" + "".join(rng.choice(_DIGITS) for _ in range(10))
        if not ctx.exists(Meeting, meeting_number=number):
            return number


def _code(ctx: ToolContext, purpose: str, length: int, alphabet: str = _TOKEN) -> str:
    rng = ctx.world.rng(f"meetings.{purpose}.{ctx.new_id('zoomcode')}")
    return "".join(rng.choice(alphabet) for _ in range(length))


def _emails(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(v.strip().lower() for v in values if v.strip()))


def _new_registrant(
    ctx: ToolContext, meeting: Meeting, email: str, first_name: str, last_name: str, org: str | None, at: str,
) -> Registrant:
    if not meeting.registration_required:
        raise ToolError.invalid_state(f"{meeting.topic} ({meeting.id}) takes no registration; add_invitees to invite people.")
    address = email.strip().lower()
    existing = ctx.find(Registrant, meeting_id=meeting.id, email=address)
    if existing is not None and existing.status != "cancelled":
        raise ToolError.conflict(f"{address} is already registered for {meeting.topic} ({existing.id}, {existing.status}).")
    if not first_name.strip() or not last_name.strip():
        raise ToolError.invalid_argument("first_name and last_name must not be empty.")
    token = _code(ctx, "registrant", 20)
    record = Registrant(
        id=existing.id if existing else ctx.new_id("reg"), meeting_id=meeting.id, email=address,
        first_name=first_name.strip(), last_name=last_name.strip(), org=org.strip() if org else None, status="approved",
        join_url=f"https://zoom.us/w/{meeting.meeting_number}?tk={token}", registered_at=at,
    )
    if existing is not None:
        return ctx.update(existing, first_name=record.first_name, last_name=record.last_name, org=record.org,
                          status="approved", join_url=record.join_url, registered_at=at)
    return ctx.insert(record)


# -- seed ------------------------------------------------------------------------------------------

#: (topic, agenda, minutes) of meetings with a customer company; {org} and {product} are filled in.
_CUSTOMER_MEETINGS = (
    ("{org} quarterly business review", "[Usage over the quarter|How the quarter went], open support issues and "
     "[plans for next quarter|what they need before {rush}|their goals for {work}].", 60),
    ("Onboarding session: {org}", "[Account setup|Getting set up], user roles and the first reports, with their "
     "admins[ at {site}|].", 45),
    ("{product} demo for {org}", "[A walkthrough of|A live look at|A tour of] {product} for their team[ at {site}|], then "
     "[questions|Q&A|next steps].", 30),
    ("{org} renewal call", "Contract renewal, seats for next year and pricing[; they mentioned budgets are tight|; "
     "decision before {rush}|].", 30),
    ("Implementation check-in with {org}", "Progress on the rollout[ at {site}|], blockers and next steps[ for "
     "{work}|].", 30),
)
_AGENDA_OPENERS = ("", "", "Agenda:", "Goals:", "Plan:", "To cover:")
_AGENDA_CLOSERS = ("", "", "Slides to follow.", "{host} leads.", "Notes to the account team after.", "Bring the latest numbers.",
                   "Invite their admins.")
_INTERNAL_MEETINGS = (
    ("Weekly pipeline review", ("sales lead", "account executive", "operations manager"), 45),
    ("Support escalations sync", ("support lead", "support agent", "engineering lead"), 30),
    ("Product roadmap review", ("product manager", "engineering lead", "sales lead", "support lead"), 60),
)
_HOSTS = ("operations manager", "sales lead", "account executive", "support lead", "product manager")
_BASIC = ("office manager", "accountant")


def _not_under_way(start: datetime, minutes: int, now: datetime) -> datetime:
    """``start``, or two hours later when the meeting would be under way at the World's moment (it has no such state)."""
    return start + timedelta(hours=2) if start <= now < start + timedelta(minutes=minutes) else start


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The team's Zoom accounts; marketing's webinars with their registrants, attendance and recording; a month of
    customer and internal meetings around now (some ended with attendance and recordings, a few cancelled)."""
    world, rng, now = ctx.world, ctx.rng("seed"), ctx.now
    words = ctx.rng("words")  # how the agendas are worded, apart from who meets when
    ctx.insert_many([
        User(id=ctx.new_id("zu"), email=p.email, first_name=p.first_name, last_name=p.last_name,
             type="Basic" if p.job_title in _BASIC else "Licensed",
             webinar_license=p.job_title in ("product manager", "sales lead", "engineering lead"))
        for p in world.team
    ])
    names = {p.email: p for p in world.people}
    used_numbers: set[str] = set()

    def number() -> str:
        while True:
            n = "8" + "".join(rng.choice(_DIGITS) for _ in range(10))
            if n not in used_numbers:
                used_numbers.add(n)
                return n

    def code(length: int, alphabet: str = _TOKEN) -> str:
        return "".join(rng.choice(alphabet) for _ in range(length))

    def attend(meeting: Meeting, people: Sequence[tuple[str, str | None]]) -> None:
        start = moment(meeting.start_time)
        rows = []
        for name, email in people:
            joined_at = start + timedelta(minutes=rng.randint(0, 4))
            left = start + timedelta(minutes=meeting.duration - rng.randint(0, 6))
            rows.append(Participant(id=ctx.new_id("prt"), meeting_id=meeting.id, name=name, email=email,
                                    join_time=ctx.iso(joined_at), leave_time=ctx.iso(left),
                                    duration=int((left - joined_at).total_seconds() // 60)))
        ctx.insert_many(rows)

    def record(meeting: Meeting, sharing: str) -> None:
        start = moment(meeting.start_time)
        ctx.insert(Recording(
            id=ctx.new_id("rec"), meeting_id=meeting.id, topic=meeting.topic, recording_start=ctx.iso(start + timedelta(minutes=1)),
            recording_end=ctx.iso(start + timedelta(minutes=meeting.duration - 2)), file_types=["MP4", "M4A", "TRANSCRIPT"],
            total_size_mb=round(meeting.duration * rng.uniform(9, 14), 1),
            share_url=f"https://zoom.us/rec/share/{code(32)}", recording_passcode=code(8), sharing=sharing,
        ))

    plan = marketing_plan(world)
    for webinar in plan.webinars:
        created = moment(webinar.invitation_sent_at) - timedelta(days=2)
        meeting = Meeting(
            id=ctx.new_id("mtg"), kind="webinar", topic=webinar.topic, agenda=webinar.agenda, host_email=webinar.host_email,
            start_time=webinar.start_time, duration=webinar.duration, meeting_number=webinar.webinar_number,
            passcode=webinar.passcode, join_url=webinar.join_url, registration_required=True,
            registration_url=webinar.registration_url, status="ended" if webinar.ended else "scheduled",
            created_at=ctx.iso(created), updated_at=ctx.iso(created),
        )
        used_numbers.add(webinar.webinar_number)
        ctx.insert(meeting)
        ctx.insert_many([
            Registrant(id=ctx.new_id("reg"), meeting_id=meeting.id, email=r.email, first_name=r.first_name,
                       last_name=r.last_name, org=r.company, status="approved",
                       join_url=f"https://zoom.us/w/{webinar.webinar_number}?tk={code(20)}", registered_at=r.registered_at)
            for r in webinar.registrations
        ])
        if webinar.ended:
            host = names[webinar.host_email]
            rows = [Participant(id=ctx.new_id("prt"), meeting_id=meeting.id, name=host.name, email=host.email,
                                join_time=webinar.start_time, leave_time=_end(webinar.start_time, webinar.duration),
                                duration=webinar.duration)]
            for r in webinar.registrations:
                if r.join_time and r.leave_time:
                    minutes = int((moment(r.leave_time) - moment(r.join_time)).total_seconds() // 60)
                    rows.append(Participant(id=ctx.new_id("prt"), meeting_id=meeting.id, name=r.name, email=r.email,
                                            join_time=r.join_time, leave_time=r.leave_time, duration=minutes))
            ctx.insert_many(rows)
            record(meeting, "off")

    customers = list(world.customers)
    orgs = {o.id: o for o in world.organisations}
    by_org: dict[str, list] = {}
    for person in customers:
        by_org.setdefault(person.organisation_id, []).append(person)
    day0 = now.replace(hour=0, minute=0, second=0, microsecond=0)
    for role in _HOSTS:
        host = world.team_member(role)
        for _ in range(rng.randint(5, 7)):
            org_id = rng.choice(sorted(by_org))
            org = orgs[org_id]
            guests = rng.sample(by_org[org_id], min(len(by_org[org_id]), rng.choice((1, 1, 2))))
            topic, agenda, minutes = rng.choice(_CUSTOMER_MEETINGS)
            product = rng.choice(world.products[:6]).name
            offset = rng.randint(-25, 14)
            day = day0 + timedelta(days=offset)
            if day.weekday() >= 5:
                day += timedelta(days=7 - day.weekday())
            start = _not_under_way(day.replace(hour=rng.choice((14, 15, 16, 17, 18)), minute=rng.choice((0, 30))), minutes, now)
            ended = start + timedelta(minutes=minutes) < now
            status = "ended" if ended else "scheduled"
            if rng.random() < 0.08:
                status = "cancelled"
            n = number()
            created = min(start, now) - timedelta(days=rng.randint(2, 20))
            meeting = Meeting(
                id=ctx.new_id("mtg"), kind="meeting", topic=topic.format(org=org.name, product=product),
                agenda=write(words, f"{words.choice(_AGENDA_OPENERS)} {agenda} {words.choice(_AGENDA_CLOSERS)}",
                             {"product": product, "host": host.first_name, **industry_facts(words, org.industry)}), host_email=host.email, start_time=ctx.iso(start), duration=minutes,
                meeting_number=n, passcode=code(6, _DIGITS), join_url=f"https://zoom.us/j/{n}",
                invitees=[g.email for g in guests], status=status,
                cancel_reason="The customer asked to postpone." if status == "cancelled" else None,
                created_at=ctx.iso(created), updated_at=ctx.iso(created + timedelta(hours=rng.randint(1, 30))),
            )
            ctx.insert(meeting)
            if status == "ended":
                came = [g for g in guests if rng.random() < 0.9] or guests[:1]
                attend(meeting, [(host.name, host.email)] + [(g.name, g.email) for g in came])
                if rng.random() < 0.45:
                    record(meeting, rng.choice(("off", "off", "anyone_with_link")))
    for topic, roles, minutes in _INTERNAL_MEETINGS:
        host = world.team_member(roles[0])
        first = day0 + timedelta(days=-day0.weekday() + rng.randint(0, 3))
        for week in (-2, -1, 0, 1):
            start = _not_under_way((first + timedelta(weeks=week)).replace(hour=rng.choice((13, 15)), minute=0), minutes, now)
            n = number()
            status = "ended" if start + timedelta(minutes=minutes) < now else "scheduled"
            meeting = Meeting(
                id=ctx.new_id("mtg"), kind="meeting", topic=topic, agenda=None, host_email=host.email, start_time=ctx.iso(start),
                duration=minutes, meeting_number=n, passcode=code(6, _DIGITS), join_url=f"https://zoom.us/j/{n}",
                invitees=[world.team_member(r).email for r in roles[1:]], status=status,
                created_at=ctx.iso(first - timedelta(days=30)), updated_at=ctx.iso(first - timedelta(days=30)),
            )
            ctx.insert(meeting)
            if status == "ended":
                attend(meeting, [(names[e].name, e) for e in (host.email, *meeting.invitees)])


# -- users -----------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check who has a Zoom account", "look {query} up in Zoom"))
def list_users(ctx: ToolContext, query: str | None = None, limit: Limit = 50, cursor: Cursor = None) -> Page[User]:
    """List the colleagues with a Zoom account: licence type (Basic meetings last at most 40 minutes) and webinar licence.

    Args:
        query: Words to match in the name or email.
        limit: Maximum number of users to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(User).search(query).order_by("last_name", "first_name").page(limit, cursor)


# -- meetings --------------------------------------------------------------------------------------


@service.tool(
    "read", intent="find",
    phrases=("find the Zoom meetings with {invitee_email}", "check the upcoming Zoom meetings", "look for the webinar {query}"),
)
def list_meetings(
    ctx: ToolContext,
    query: str | None = None,
    kind: Kind | None = None,
    status: MeetingStatus | None = None,
    host_email: EmailAddress | None = None,
    invitee_email: EmailAddress | None = None,
    from_time: DateTime | None = None,
    to_time: DateTime | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Meeting]:
    """List meetings and webinars, soonest first, by words in the topic or agenda, kind, status, host, an invited
    guest or registrant, and start time.

    Args:
        query: Words to match in the topic or agenda.
        kind: meeting or webinar.
        status: scheduled (still to come), ended or cancelled.
        host_email: Only meetings this colleague hosts.
        invitee_email: Only meetings this person is invited to or registered for.
        from_time: Only meetings starting at or after this time (ISO 8601 UTC).
        to_time: Only meetings starting before this time.
        limit: Maximum number of meetings to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Meeting).search(query).filter(kind=kind, status=status)
    if host_email:
        q.where(host_email=host_email.strip().lower())
    if invitee_email:
        email = invitee_email.strip().lower()
        # Invitees are JSON text: the address is found with LIKE (json_each crashes SQLite 3.40 after a restore).
        q.where_sql(
            "invitees LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM registrants r "
            "WHERE r.meeting_id = meetings.id AND r.email = ? AND r.status != 'cancelled')", like_pattern(json_text(email)), email,
        )
    q.compare("start_time", ">=", from_time).compare("start_time", "<", to_time)
    return q.order_by("start_time").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the Zoom meeting {meeting_id}",))
def get_meeting(ctx: ToolContext, meeting_id: MeetingId) -> Meeting:
    """Get one meeting or webinar: topic, host, time, duration, join link, passcode, guests and status.

    Args:
        meeting_id: The meeting's id, e.g. mtg_0007 (see list_meetings).
    """
    return ctx.get(Meeting, meeting_id, hint=_MEETING_HINT)


@service.tool(
    "write", intent="schedule",
    phrases=("set up a Zoom call {topic} at {start_time}", "book a Zoom meeting with {invitees} at {start_time}"),
)
def create_meeting(
    ctx: ToolContext,
    topic: Subject,
    start_time: DateTime,
    duration: int = 30,
    host_email: EmailAddress | None = None,
    agenda: Text | None = None,
    invitees: list[EmailAddress] | None = None,
    kind: Kind = "meeting",
    registration_required: bool = False,
) -> Meeting:
    """Schedule a Zoom meeting (or a webinar) and get its join link and passcode. Invitees get the invitation.

    The start must be in the future; Basic hosts are limited to 40 minutes; webinars need a host with a webinar
    licence and always take registration.

    Args:
        topic: The meeting's title, e.g. Callback: invoice question.
        start_time: When it starts (ISO 8601 UTC), e.g. 2025-03-18T15:00:00Z.
        duration: Length in minutes (15-1440, default 30).
        host_email: Who hosts it (default: you).
        agenda: What it is about.
        invitees: Email addresses to invite.
        kind: meeting (default) or webinar.
        registration_required: Guests must register first (always true for webinars).
    """
    host = _host(ctx, host_email)
    start = moment(start_time)
    _check_slot(ctx, host, start, duration, kind)
    if not topic.strip():
        raise ToolError.invalid_argument("topic must not be empty.")
    number = _number(ctx)
    registration = registration_required or kind == "webinar"
    return ctx.insert(Meeting(
        id=ctx.new_id("mtg"), kind=kind, topic=topic.strip(), agenda=agenda.strip() if agenda else None, host_email=host.email,
        start_time=ctx.iso(start), duration=duration, meeting_number=number, passcode=_code(ctx, "passcode", 6, _DIGITS),
        join_url=f"https://zoom.us/j/{number}", registration_required=registration,
        registration_url=f"https://zoom.us/{'webinar' if kind == 'webinar' else 'meeting'}/register/WN_{_code(ctx, 'form', 22)}"
        if registration else None,
        invitees=_emails(invitees or []), status="scheduled", created_at=ctx.now_iso, updated_at=ctx.now_iso,
    ))


@service.tool(
    "write", intent="reschedule",
    phrases=("move the Zoom meeting {meeting_id} to {start_time}", "reschedule {meeting_id} for {start_time}"),
)
def update_meeting(
    ctx: ToolContext,
    meeting_id: MeetingId,
    start_time: DateTime | None = None,
    duration: int | None = None,
    topic: Subject | None = None,
    agenda: Text | None = None,
) -> Meeting:
    """Reschedule or edit a scheduled meeting; the join link and passcode stay the same and guests get the update.

    Args:
        meeting_id: The scheduled meeting.
        start_time: The new start (ISO 8601 UTC, in the future).
        duration: The new length in minutes.
        topic: A new title.
        agenda: A new agenda.
    """
    meeting = _scheduled(ctx, meeting_id, "changed")
    changes: dict[str, object] = {}
    if start_time is not None or duration is not None:
        start = moment(start_time) if start_time is not None else moment(meeting.start_time)
        minutes = duration if duration is not None else meeting.duration
        _check_slot(ctx, _host(ctx, meeting.host_email), start, minutes, meeting.kind)
        changes |= {"start_time": ctx.iso(start), "duration": minutes}
    if topic is not None:
        if not topic.strip():
            raise ToolError.invalid_argument("topic must not be empty.")
        changes["topic"] = topic.strip()
    if agenda is not None:
        changes["agenda"] = agenda.strip()
    changes = {k: v for k, v in changes.items() if getattr(meeting, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field with a new value (start_time, duration, topic or agenda).")
    return ctx.update(meeting, **changes, updated_at=ctx.now_iso)


@service.tool("write", intent="cancel", phrases=("cancel the Zoom meeting {meeting_id}", "call off {meeting_id}"))
def cancel_meeting(ctx: ToolContext, meeting_id: MeetingId, reason: ShortText | None = None) -> Meeting:
    """Cancel a scheduled meeting or webinar; invitees and registrants get a cancellation email. It cannot be undone.

    Args:
        meeting_id: The scheduled meeting.
        reason: Why, for the cancellation email.
    """
    meeting = _scheduled(ctx, meeting_id, "cancelled")
    return ctx.update(meeting, status="cancelled", cancel_reason=reason.strip() if reason and reason.strip() else None,
                      updated_at=ctx.now_iso)


@service.tool("write", intent="invite", phrases=("invite {invitees} to {meeting_id}", "add {invitees} to the Zoom call {meeting_id}"))
def add_invitees(ctx: ToolContext, meeting_id: MeetingId, invitees: list[EmailAddress]) -> Meeting:
    """Invite more people to a scheduled meeting (they get the join link). For meetings that take registration,
    use add_registrant instead.

    Args:
        meeting_id: The scheduled meeting.
        invitees: Email addresses to invite.
    """
    meeting = _scheduled(ctx, meeting_id, "invited to")
    new = [e for e in _emails(invitees) if e not in meeting.invitees]
    if not new:
        raise ToolError.invalid_argument(f"Everyone listed is already invited to {meeting.topic}; pass new addresses.")
    return ctx.update(meeting, invitees=[*meeting.invitees, *new], updated_at=ctx.now_iso)


# -- registrants -----------------------------------------------------------------------------------


@service.tool(
    "read", intent="find",
    phrases=("check who registered for {meeting_id}", "see who attended {meeting_id}"),
)
def list_registrants(
    ctx: ToolContext, meeting_id: MeetingId, status: RegistrantStatus | None = None, attended: bool | None = None,
    limit: Limit = 50, cursor: Cursor = None,
) -> Page[Registrant]:
    """The registrants of a meeting or webinar with their company and status, and (once it ended) whether they attended.

    Args:
        meeting_id: The meeting or webinar.
        status: approved, pending or cancelled.
        attended: Only those who attended (true) or did not (false); meaningful once it has ended.
        limit: Maximum number of registrants to return (1-100).
        cursor: next_cursor from a previous page.
    """
    meeting = ctx.get(Meeting, meeting_id, hint=_MEETING_HINT)
    q = ctx.query(Registrant).where(meeting_id=meeting.id).filter(status=status)
    if attended is not None:
        joined_sql = "EXISTS (SELECT 1 FROM participants p WHERE p.meeting_id = registrants.meeting_id AND p.email = registrants.email)"
        q.where_sql(joined_sql if attended else f"NOT {joined_sql}")
    return q.order_by("last_name", "first_name").page(limit, cursor)


@service.tool("write", intent="invite", phrases=("register {email} for {meeting_id}", "sign {first_name} {last_name} up for {meeting_id}"))
def add_registrant(
    ctx: ToolContext, meeting_id: MeetingId, email: EmailAddress, first_name: str, last_name: str,
    org: CompanyName | None = None,
) -> Registrant:
    """Register someone for a scheduled meeting or webinar that takes registration; they get their own join link.

    Args:
        meeting_id: The meeting or webinar.
        email: Their email address.
        first_name: Given name.
        last_name: Family name.
        org: Their company.
    """
    meeting = _scheduled(ctx, meeting_id, "registered for")
    return _new_registrant(ctx, meeting, email, first_name, last_name, org, ctx.now_iso)


@service.tool("write", intent="approve", phrases=("approve the registration {registrant_id}",))
def approve_registrant(ctx: ToolContext, registrant_id: RegistrantId) -> Registrant:
    """Approve a pending registration: the registrant gets their join link.

    Args:
        registrant_id: The pending registrant (see list_registrants with status pending).
    """
    registrant = ctx.get(Registrant, registrant_id)
    _scheduled(ctx, registrant.meeting_id, "approved for")
    if registrant.status != "pending":
        raise ToolError.invalid_state(f"Registrant {registrant_id} is {registrant.status}, not pending.")
    return ctx.update(registrant, status="approved")


@service.tool("write", intent="remove", phrases=("cancel the registration {registrant_id}", "take {registrant_id} off the list"))
def cancel_registrant(ctx: ToolContext, registrant_id: RegistrantId) -> Registrant:
    """Cancel someone's registration for a scheduled meeting or webinar; their join link stops working.

    Args:
        registrant_id: The registrant.
    """
    registrant = ctx.get(Registrant, registrant_id)
    _scheduled(ctx, registrant.meeting_id, "changed")
    if registrant.status == "cancelled":
        raise ToolError.invalid_state(f"Registrant {registrant_id} is already cancelled.")
    return ctx.update(registrant, status="cancelled")


@service.tool("read", intent="check", phrases=("check who joined {meeting_id}", "look at the attendance of {meeting_id}"))
def list_participants(ctx: ToolContext, meeting_id: MeetingId, limit: Limit = 50, cursor: Cursor = None) -> Page[Participant]:
    """Who joined a meeting or webinar that has ended, with join and leave times and minutes attended.

    Args:
        meeting_id: An ended meeting or webinar.
        limit: Maximum number of participants to return (1-100).
        cursor: next_cursor from a previous page.
    """
    meeting = ctx.get(Meeting, meeting_id, hint=_MEETING_HINT)
    if meeting.status != "ended":
        raise ToolError.invalid_state(f"{meeting.topic} ({meeting_id}) is {meeting.status}; attendance exists once it has ended.")
    return ctx.query(Participant).where(meeting_id=meeting.id).order_by("join_time").page(limit, cursor)


# -- recordings ------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("find the recording of {meeting_id}", "check our Zoom recordings"))
def list_recordings(
    ctx: ToolContext, meeting_id: MeetingId | None = None, query: str | None = None, host_email: EmailAddress | None = None,
    include_trashed: bool = False, limit: Limit = 20, cursor: Cursor = None,
) -> Page[Recording]:
    """List cloud recordings, newest first, by meeting, words in the topic, or host.

    Args:
        meeting_id: Only the recording of this meeting.
        query: Words to match in the recorded meeting's topic.
        host_email: Only recordings of meetings this colleague hosted.
        include_trashed: Also recordings in the trash.
        limit: Maximum number of recordings to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Recording).filter(meeting_id=meeting_id).search(query, "topic")
    if not include_trashed:
        q.where(trashed=False)
    if host_email:
        q.where_sql("meeting_id IN (SELECT id FROM meetings WHERE host_email = ?)", host_email.strip().lower())
    return q.order_by("-recording_start").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the recording {recording_id}",))
def get_recording(ctx: ToolContext, recording_id: RecordingId) -> Recording:
    """Get one cloud recording: its share link, passcode, files and whether sharing is on.

    Args:
        recording_id: The recording's id, e.g. rec_0002 (see list_recordings).
    """
    return ctx.get(Recording, recording_id, hint="Use list_recordings to find recording ids.")


@service.tool(
    "write", intent="share",
    phrases=("turn on sharing for the recording {recording_id}", "make {recording_id} viewable by link"),
)
def update_recording_sharing(ctx: ToolContext, recording_id: RecordingId, sharing: Sharing) -> Recording:
    """Turn a recording's sharing on (anyone_with_link: whoever has the share link and passcode can watch) or off.

    Args:
        recording_id: The recording.
        sharing: anyone_with_link or off.
    """
    recording = ctx.get(Recording, recording_id, hint="Use list_recordings to find recording ids.")
    if recording.trashed:
        raise ToolError.invalid_state(f"Recording {recording_id} is in the trash; it cannot be shared.")
    if recording.sharing == sharing:
        raise ToolError.invalid_state(f"Sharing of recording {recording_id} is already {sharing}.")
    return ctx.update(recording, sharing=sharing)


@service.tool("write", intent="delete", phrases=("delete the recording {recording_id}",))
def delete_recording(ctx: ToolContext, recording_id: RecordingId) -> Recording:
    """Move a recording to the trash (its share link stops working).

    Args:
        recording_id: The recording.
    """
    recording = ctx.get(Recording, recording_id, hint="Use list_recordings to find recording ids.")
    if recording.trashed:
        raise ToolError.invalid_state(f"Recording {recording_id} is already in the trash.")
    return ctx.update(recording, trashed=True, sharing="off")


# -- world events ----------------------------------------------------------------------------------


@service.event("registration_received")
def registration_received(
    ctx: ToolContext, meeting_id: str, email: str, first_name: str, last_name: str, org: str | None = None,
    hours_ago: float = 1.0,
) -> str:
    """Someone registers on the registration page of a scheduled meeting or webinar ``hours_ago``; returns the registrant's id."""
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    meeting = _scheduled(ctx, meeting_id, "registered for")
    if ctx.exists(Registrant, meeting_id=meeting.id, email=email.strip().lower()):
        raise ToolError.conflict(f"{email} is already registered for {meeting.topic}.")
    return _new_registrant(ctx, meeting, email, first_name, last_name, org, ctx.days_from_now(-hours_ago / 24)).id
