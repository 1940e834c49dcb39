"""Calendar: the team's calendars, events, invitations and bookable rooms (modelled on Google Calendar).

Every colleague of the home team has a primary calendar; an office-wide "Company events" calendar
holds all-hands meetings. Events carry attendees by email (colleagues and the CRM's customer
contacts, so the same person has the same address in every service) with a response status, an
organiser (the owner of the calendar the event lives on), a location (an address from the world's
places or a customer's office) and optionally a bookable room. The agent acts for ``world.user``
with delegate access to every team calendar, as an operations manager would.

Rules: an event ends after it starts and lasts at most a day; new or moved events start in the
future; a cancelled event cannot be cancelled again or edited (``EVENT_STATUS``); a room cannot be
double booked nor hold more attendees than its capacity; only team members' responses can be set
(guests answer their own invitations) and an organiser cannot decline their own event.

All times are ISO 8601 UTC; working hours for free-slot searches are 09:00-17:00 UTC.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, WithJsonSchema

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import runtime_of
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.plans.commerce import commerce_plan
from mcp_services.kernel.prose import write
from mcp_services.kernel.semantic import (
    URL,
    Address,
    City,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    PersonName,
    Quantity,
    ShortText,
    Subject,
    Text,
)

CalendarId = EntityId("calendar.calendar")
EventId = EntityId("calendar.event")
RoomId = EntityId("calendar.room")
AttendeeId = EntityId("calendar.attendee")

EventStatus = Literal["confirmed", "cancelled"]
ResponseStatus = Literal["needs_action", "accepted", "declined", "tentative"]
Reply = Literal["accepted", "declined", "tentative"]

WORKDAY_START_HOUR = 9
WORKDAY_END_HOUR = 17
MAX_EVENT_HOURS = 24
Minutes = Annotated[int, Field(ge=5, le=480, description="A duration in minutes (5-480).")]

#: A cancelled event is final: it stays visible but nothing about it can change.
EVENT_STATUS = StateDef(
    field="status",
    values=["confirmed", "cancelled"],
    initial="confirmed",
    terminal=["cancelled"],
    transitions={"confirmed": ["cancelled"], "cancelled": []},
)

service = Service(
    "calendar",
    "Team calendars: meetings and events with attendees and their responses, free/busy and free-slot "
    "search, and bookable meeting rooms.",
    title="Calendar",
)


@service.entity(table="calendars", prefix="cal", label="summary", search=("summary", "owner_name"))
class Calendar:
    """A colleague's primary calendar, or a shared one such as Company events."""

    id: CalendarId
    summary: str
    description: str | None = None
    owner_email: EmailAddress = field(index=True, role="owner")
    owner_name: PersonName = field(role="owner")
    is_primary: bool
    time_zone: str


@service.entity(table="rooms", prefix="room", label="name")
class Room:
    """A bookable meeting room or conference venue (one of the world's places)."""

    id: RoomId
    place_id: str
    name: str
    kind: str
    address: Address
    city: City
    capacity: Quantity
    features: list[str]

    available = derived(
        bool | None,
        lambda r: getattr(r, "available", None),  # only a listing for a time range knows (_ShownRoom)
        description="Whether the room is free for the asked time range; null if none was asked",
    )


@service.entity(table="attendees", prefix="att")
class Attendee:
    """One person invited to one event; the id is '<event id>|<email>' (one row per guest per event)."""

    id: AttendeeId
    event_id: EventId = field(index=True)
    email: EmailAddress = field(index=True, role="attendee")
    name: PersonName | None = field(None, role="attendee")
    response_status: ResponseStatus
    organizer: bool = False
    optional: bool = False
    comment: str | None = None


#: What an event shows of each guest.
_GUEST_FIELDS = ("email", "name", "response_status", "organizer", "optional", "comment")
_GUEST_SCHEMA = {
    "type": "object",
    "properties": {f: runtime_of(Attendee).schema["properties"][f] for f in _GUEST_FIELDS},
    "required": list(_GUEST_FIELDS),
}
Guests = Annotated[list[dict[str, Any]], WithJsonSchema({"type": "array", "items": _GUEST_SCHEMA})]


def _guest_lists(db: RecordAccess, events: Sequence[Any]) -> list[list[dict[str, Any]]]:
    """Each event's guests, organiser first, then by email: one query for a whole result."""
    guests: dict[str, list[dict[str, Any]]] = {e.id: [] for e in events}
    for a in db.query(Attendee).where_in("event_id", list(guests)).order_by("-organizer", "email").all():
        guests[a.event_id].append({f: getattr(a, f) for f in _GUEST_FIELDS})
    return [guests[e.id] for e in events]


def _organizer_names(db: RecordAccess, events: Sequence[Any]) -> list[str | None]:
    """The name each event's organiser has on its guest list."""
    q = db.query(Attendee).where_in("event_id", [e.id for e in events]).where(organizer=True)
    names = {(a.event_id, a.email): a.name for a in q.all()}
    return [names.get((e.id, e.organizer_email)) for e in events]


@service.entity(
    table="events", prefix="evt", label="title", search=("title", "description", "location"), state=EVENT_STATUS
)
class Event:
    """A meeting or event on a calendar, organised by the calendar's owner."""

    id: EventId
    calendar_id: CalendarId
    title: Subject
    description: Text | None = None
    start: DateTime = field(index=True, mention="the meeting time")
    end: DateTime
    location: Address | None = field(None, mention="the meeting place")
    room_id: RoomId | None = None
    meeting_url: URL | None = field(None, mention="the meeting link")
    organizer_email: EmailAddress = field(role="organizer")
    status: EventStatus = "confirmed"
    cancellation_reason: str | None = None
    created_at: DateTime
    updated_at: DateTime

    duration_minutes = derived(int, lambda e: _minutes(e.start, e.end))
    room_name = joined(str | None, via="room_id", field="name")
    organizer_name = derived(PersonName | None, batch=_organizer_names)
    attendees = derived(Guests, batch=_guest_lists, description="The organiser first, then guests by email")


@dataclass(frozen=True, slots=True, kw_only=True)
class _ShownRoom(Room):
    """A room as list_rooms returns it: free or not for the time range the call asked about."""

    available: bool | None


# -- summaries -----------------------------------------------------------------------------------


class TimeSlot(BaseModel):
    start: DateTime
    end: DateTime
    duration_minutes: int


class FreeSlotsOut(BaseModel):
    date: Date
    attendee_emails: list[EmailAddress]
    room_id: RoomId | None
    duration_minutes: int
    slots: list[TimeSlot] = Field(description="Free windows at least duration_minutes long, earliest first")


class BusyOut(BaseModel):
    email: EmailAddress
    busy: list[TimeSlot]


class FreeBusyOut(BaseModel):
    time_min: DateTime
    time_max: DateTime
    calendars: list[BusyOut]


# -- helpers -------------------------------------------------------------------------------------


def _parse(value: str, field: str) -> datetime:
    """A UTC datetime from ISO text with or without seconds (the DateTime type allows both)."""
    try:
        moment = datetime.fromisoformat(value[:-1]) if value.endswith("Z") and "T" in value else None
    except ValueError:
        moment = None
    if moment is not None and moment.tzinfo is None:  # "...+02:00Z" is not UTC text
        return moment.replace(tzinfo=UTC)
    raise ToolError.invalid_argument(f"{field} {value!r} is not an ISO 8601 UTC time like 2025-01-14T09:30:00Z.")


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _minutes(start: str, end: str) -> int:
    return int((_parse(end, "end") - _parse(start, "start")).total_seconds() // 60)


def _guest_id(event_id: str, email: str) -> str:
    return f"{event_id}|{email}"


def _editable(ctx: ToolContext, event_id: str) -> Event:
    """The event, refused if it is cancelled: cancelled events are final."""
    event = ctx.get(Event, event_id)
    if event.status == "cancelled":
        raise ToolError.invalid_state(
            f"Event {event_id} is cancelled and cannot be changed; create_event a new one instead."
        )
    return event


def _person_name(ctx: ToolContext, email: str) -> str | None:
    for person in ctx.world.people:
        if person.email == email:
            return person.name
    return None


def _check_times(ctx: ToolContext, start: str, end: str | None, *, future: bool = True) -> tuple[str, str]:
    """Validated, normalised (start, end); ``future`` refuses a start before the frozen clock."""
    begin = _parse(start, "start")
    finish = _parse(end, "end") if end else begin + timedelta(minutes=30)
    if finish <= begin:
        raise ToolError.invalid_argument(f"end ({_iso(finish)}) must be after start ({_iso(begin)}).")
    if finish - begin > timedelta(hours=MAX_EVENT_HOURS):
        raise ToolError.invalid_argument(f"An event can last at most {MAX_EVENT_HOURS} hours; shorten it.")
    if future and begin < ctx.now:
        raise ToolError.invalid_argument(
            f"start {_iso(begin)} is in the past (it is now {ctx.now_iso}); pick a later time."
        )
    return _iso(begin), _iso(finish)


def _check_room(ctx: ToolContext, room: Room, start: str, end: str, attendees: int, ignore_event: str | None) -> None:
    """Refuse a booking that overlaps another live booking of the room, or overfills it."""
    if attendees > room.capacity:
        raise ToolError.conflict(
            f"{room.name} ({room.id}) seats {room.capacity} but the event has {attendees} attendees; "
            "pick a larger room with list_rooms(min_capacity=...)."
        )
    q = ctx.query(Event).where(room_id=room.id).compare("status", "!=", "cancelled")
    q.compare("start", "<", end).compare("end", ">", start).compare("id", "!=", ignore_event or "")
    clash = q.order_by("start").first()
    if clash is not None:
        raise ToolError.conflict(
            f"{room.name} ({room.id}) is already booked from {clash.start} to {clash.end} by event {clash.id} "
            f"({clash.title!r}); pick another time or room (list_rooms with start/end shows free rooms)."
        )


def _attendee_count(ctx: ToolContext, event_id: str) -> int:
    return ctx.query(Attendee).where(event_id=event_id).count()


def _busy(ctx: ToolContext, emails: list[str], start: str, end: str) -> dict[str, list[tuple[str, str]]]:
    """Per email: the intervals in [start, end) when they attend a live event they have not declined (one query)."""
    busy: dict[str, list[tuple[str, str]]] = {email: [] for email in emails}
    rows = ctx.sql(
        "SELECT a.email, e.start, e.\"end\" FROM attendees a JOIN events e ON e.id = a.event_id "
        f"WHERE a.email IN ({', '.join('?' for _ in emails)}) AND a.response_status != 'declined' "
        "AND e.status != 'cancelled' AND e.start < ? AND e.\"end\" > ? ORDER BY a.email, e.start, e.\"end\"",
        *emails, end, start,
    )
    for email, s, e in rows:
        busy[email].append((max(s, start), min(e, end)))
    return busy


def _booked(ctx: ToolContext, room_ids: list[str], start: str, end: str) -> list[tuple[str, str, str]]:
    """(room id, start, end) of the live bookings of these rooms that overlap [start, end)."""
    if not room_ids:
        return []
    return [
        (str(r), str(s), str(e))
        for r, s, e in ctx.sql(
            f"SELECT room_id, start, \"end\" FROM events WHERE room_id IN ({', '.join('?' for _ in room_ids)}) "
            "AND status != 'cancelled' AND start < ? AND \"end\" > ?",
            *room_ids, end, start,
        )
    ]


def _merge(intervals: list[tuple[str, str]]) -> list[tuple[str, str]]:
    merged: list[tuple[str, str]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def _slot(start: str, end: str) -> TimeSlot:
    return TimeSlot(start=start, end=end, duration_minutes=_minutes(start, end))


def _normalise_emails(emails: list[str], field: str) -> list[str]:
    cleaned = [e.strip().lower() for e in emails]
    if len(set(cleaned)) != len(cleaned):
        raise ToolError.invalid_argument(f"{field} lists the same email twice; list each person once.")
    return cleaned


def _guest(ctx: ToolContext, event_id: str, email: str, *, optional: bool = False) -> Attendee:
    return Attendee(
        id=_guest_id(event_id, email), event_id=event_id, email=email, name=_person_name(ctx, email),
        response_status="needs_action", optional=optional,
    )


# -- seed ----------------------------------------------------------------------------------------

_INTERNAL_TITLES = (
    ("Budget review", "[Go through|Review|Walk through] spend against plan and flag overruns[ before the close|]."),
    ("Hiring sync", "[Pipeline for open roles|Where each open role stands] and interview loops[; bring your "
     "scorecards|]."),
    ("Roadmap planning", "[Agree priorities for next quarter|Decide what goes into next quarter|Rank the roadmap "
     "candidates][; customer asks first|]."),
    ("Support escalations review", "[Walk through open escalations and owners|Every open escalation, its owner and "
     "the next step]."),
    ("Month-end close", "[Reconcile accounts and close the books|Reconciliations, accruals and sign-off][; finance "
     "leads|]."),
    ("Pipeline review", "[Deal-by-deal review of the sales pipeline|Go through every open deal][, biggest first|]."),
    ("Office move planning", "[Logistics for the new floor|Desks, boxes and the network for the new floor]."),
    ("Incident retrospective", "[What happened, why, and what we change|Timeline, root cause and follow-ups][; no "
     "blame|]."),
    ("Vendor evaluation", "[Compare shortlisted vendors|Score the shortlisted vendors][ on price and support|]."),
    ("Design review", "[Review mock-ups for the next release|Walk through the new designs][; bring feedback|]."),
)
#: Openings and closings people add to an event's description, so the same meeting reads as its organiser writes.
_DESCRIPTION_OPENERS = ("", "", "", "Agenda:", "Goal:", "Quick one:", "Plan:")
_DESCRIPTION_CLOSERS = ("", "", "", "Notes in the shared doc.", "{first} to lead.", "Please come prepared.",
                        "Camera on if remote.", "Ten minutes at the end for questions.")
_CUSTOMER_NOTES = ("", "", "Agenda shared by email.", "They asked about {topic}.", "Prep: check their open tickets.",
                   "Bring the latest usage numbers.", "Follow up on {topic}.")
_TOPICS = ("pricing", "the renewal", "seat counts", "the rollout", "SSO", "reporting", "their open invoices")
_SYNC_AGENDAS = (
    "[Priorities for the week|This week's priorities|What's on this week], blockers, announcements[; {first} "
    "presents {topic}|; quick round of updates|].",
)
_ALL_HANDS = "[Company update|Update from leadership], wins of the month[, {month} numbers|], Q&A[; drinks after|]."
_CUSTOMER_TITLES = (
    "{product} demo with {org}",
    "Quarterly business review: {org}",
    "Onboarding kickoff - {org}",
    "Renewal call with {person}",
    "Pricing discussion with {org}",
    "Support check-in: {org}",
)
_ROOM_FEATURES = (["video", "whiteboard"], ["video", "screen"], ["whiteboard"], ["video", "screen", "whiteboard"])
_CANCEL_REASONS = ("Organiser unavailable", "No longer needed", "Rescheduled")
_RESPONSES = ("accepted", "declined", "tentative", "needs_action")
#: How guests have answered: most past invitations are settled, many future ones still open.
_PAST_WEIGHTS, _FUTURE_WEIGHTS = (75, 10, 5, 10), (45, 5, 10, 40)
#: What a customer demo shows: our plans (a service or a cable is not demoed).
_DEMOED = ("subscriptions",)
#: A kickoff takes place within this long after the deal is won.
KICKOFF_WITHIN = timedelta(weeks=6)
_CUSTOMER_FACING = ("sales lead", "account executive", "support lead", "product manager")


@service.seeder
def seed(ctx: ToolContext) -> None:
    """Every colleague's calendar and Company events; the world's rooms; two months of meetings around now."""
    world = ctx.world
    rng = ctx.rng("seed")
    words = ctx.rng("words")  # how descriptions are worded, apart from who meets when
    team = list(world.team)
    names = {p.email: p.name for p in world.people}
    calendars = {
        p.email: Calendar(
            id=ctx.new_id("cal"), summary=p.name, description=f"{p.name}, {p.job_title} at {world.home.name}",
            owner_email=p.email, owner_name=p.name, is_primary=True, time_zone="UTC",
        )
        for p in team
    }
    manager = world.team_member("office manager")
    company = Calendar(
        id=ctx.new_id("cal"), summary="Company events",
        description=f"All-hands and office-wide events at {world.home.name}",
        owner_email=manager.email, owner_name=manager.name, is_primary=False, time_zone="UTC",
    )
    rooms = [
        Room(
            id=ctx.new_id("room"), place_id=place.id, name=place.name, kind=place.kind, address=place.address,
            city=place.city,
            capacity=rng.choice((4, 6, 8, 12)) if place.kind == "meeting room" else rng.choice((60, 120, 200)),
            features=list(rng.choice(_ROOM_FEATURES)),
        )
        for place in world.places
        if place.kind in ("meeting room", "conference venue")
    ]
    meeting_rooms = [r for r in rooms if r.kind == "meeting room"]
    booked: dict[str, list[tuple[str, str]]] = {r.id: [] for r in rooms}
    events: list[Event] = []
    guests: list[Attendee] = []
    today = ctx.now.replace(hour=0, minute=0, second=0, microsecond=0)

    def add_event(
        cal: Calendar, title: str, start: datetime, minutes: int, invited: list[str], *, description: str | None = None,
        location: str | None = None, room: Room | None = None, online: bool = False,
    ) -> None:
        s, e = _iso(start), _iso(start + timedelta(minutes=minutes))
        everyone = [cal.owner_email] + [g for g in dict.fromkeys(invited) if g != cal.owner_email]
        if room is not None:
            # Seeded bookings obey the same rules as tools: drop the room rather than double book.
            if len(everyone) > room.capacity or any(bs < e and be > s for bs, be in booked[room.id]):
                room = None
            else:
                booked[room.id].append((s, e))
                location = f"{room.name}, {room.address}"
        event_id = ctx.new_id("evt")
        cancelled = rng.random() < 0.07
        # Online meetings, and meetings with nowhere to be, get a video link.
        code = f"{rng.randint(0, 999_999_999):09d}" if online or not location else None
        reason = rng.choice(_CANCEL_REASONS) if cancelled else None
        created = _iso(min(start, ctx.now) - timedelta(days=rng.randint(2, 30)))
        updated = _iso(min(start, ctx.now) - timedelta(days=rng.randint(0, 1)))
        events.append(
            Event(
                id=event_id, calendar_id=cal.id, title=title, description=description, start=s, end=e,
                location=location, room_id=room.id if room else None,
                meeting_url=f"https://meet.{world.home.domain}/{code[:3]}-{code[3:6]}-{code[6:]}" if code else None,
                organizer_email=cal.owner_email, status="cancelled" if cancelled else "confirmed",
                cancellation_reason=reason, created_at=created, updated_at=updated,
            )
        )
        weights = _PAST_WEIGHTS if start < ctx.now else _FUTURE_WEIGHTS
        for email in everyone:
            organizer = email == cal.owner_email
            response = "accepted" if organizer else rng.choices(_RESPONSES, weights)[0]
            guests.append(
                Attendee(
                    id=_guest_id(event_id, email), event_id=event_id, email=email, name=names.get(email),
                    response_status=response, organizer=organizer,
                    optional=not organizer and rng.random() < 0.08,
                )
            )

    def weekday(offset: int) -> datetime | None:
        day = today + timedelta(days=offset)
        return day if day.weekday() < 5 else None

    def at(day: datetime) -> datetime:
        return day.replace(hour=rng.randint(WORKDAY_START_HOUR, WORKDAY_END_HOUR - 2), minute=rng.choice((0, 30)))

    def random_day() -> datetime | None:
        return weekday(rng.randint(-30, 30))

    user = world.user
    emails = [p.email for p in team]
    # Weekly team sync and monthly all-hands: the recurring backbone of everyone's week.
    for offset in range(-28, 29):
        day = weekday(offset)
        if day is not None and day.weekday() == 0:
            add_event(
                calendars[user.email], "Weekly team sync", day.replace(hour=10), 30, emails,
                description=write(words, _SYNC_AGENDAS[0], {"first": words.choice(team).first_name,
                                                            "topic": words.choice(_TOPICS)}),
                room=rng.choice(meeting_rooms) if meeting_rooms else None, online=True,
            )
        if day is not None and day.weekday() == 4 and day.day <= 7:
            add_event(
                company, f"All-hands: {day.strftime('%B')}", day.replace(hour=15), 60, emails,
                description=write(words, _ALL_HANDS, {"month": f"{day:%B}"}), online=True,
            )
    # One-to-ones between the operations manager and each colleague, every other week.
    for i, person in enumerate(team[1:]):
        for week in range(-4, 5, 2):
            day = weekday(week * 7 + (i % 5) - ctx.now.weekday())
            if day is not None:
                add_event(
                    calendars[user.email], f"1:1 {user.first_name} / {person.first_name}",
                    day.replace(hour=13 + i % 4, minute=30 if i % 2 else 0), 30, [person.email], online=True,
                )
    # Customer meetings, owned by customer-facing colleagues, with the CRM's contacts as guests.
    facing = [p for p in team if p.job_title in _CUSTOMER_FACING]
    demoed = [p for p in world.products if p.category in _DEMOED] or list(world.products)
    won = [(d.organisation_id, datetime.fromisoformat(d.close_date).replace(tzinfo=UTC))
           for d in commerce_plan(world).deals if d.stage == "won"]

    def newly_won(day: datetime) -> set[str]:
        """The organisations with a deal won in the six weeks before ``day``."""
        return {org for org, closed in won if timedelta(days=1) <= day - closed <= KICKOFF_WITHIN}

    for _ in range(70):
        day = random_day()
        if day is None:
            continue
        owner = rng.choice(facing)
        template = rng.choice(_CUSTOMER_TITLES)
        people = world.customers
        if template.startswith("Onboarding kickoff"):
            # A kickoff follows a deal the customer signed in the weeks before it (the CRM holds the plan's deals).
            people = tuple(c for c in world.customers if c.organisation_id in newly_won(day))
            if not people:
                template, people = "Support check-in: {org}", world.customers
        customer = rng.choice(people)
        org = world.organisation(customer.organisation_id)
        colleagues = [c for c in world.customers if c.organisation_id == org.id and c.email != customer.email]
        invited = [customer.email] + ([rng.choice(colleagues).email] if colleagues and rng.random() < 0.4 else [])
        if rng.random() < 0.5:
            invited.append(rng.choice([p for p in team if p.email != owner.email]).email)
        product = rng.choice(demoed)  # a demo shows a plan or a service, never a cable
        title = template.format(product=product.name, org=org.name, person=customer.name)
        onsite = rng.random() < 0.25
        add_event(
            calendars[owner.email], title, at(day), rng.choice((30, 45, 60)), invited,
            description=f"With {customer.name} ({customer.job_title}) of {org.name}. "
            f"Contact: {customer.email}, {customer.phone}. "
            + write(words, words.choice(_CUSTOMER_NOTES), {"topic": words.choice(_TOPICS)}),
            location=org.address if onsite else None,
            room=rng.choice(meeting_rooms) if meeting_rooms and not onsite and rng.random() < 0.3 else None,
            online=not onsite,
        )
    # Internal meetings, often in a meeting room.
    for _ in range(80):
        day = random_day()
        if day is None:
            continue
        owner = rng.choice(team)
        title, description = rng.choice(_INTERNAL_TITLES)
        if title == "Month-end close" and 4 <= day.day <= 24:  # the close sits at the turn of the month
            title, description = rng.choice([t for t in _INTERNAL_TITLES if t[0] != "Month-end close"])
        invited = rng.sample([p.email for p in team if p.email != owner.email], rng.randint(1, 4))
        add_event(
            calendars[owner.email], title, at(day), rng.choice((30, 45, 60, 90)), invited,
            description=write(words, " ".join((words.choice(_DESCRIPTION_OPENERS), description,
                                               words.choice(_DESCRIPTION_CLOSERS))), {"first": owner.first_name}),
            room=rng.choice(meeting_rooms) if meeting_rooms and rng.random() < 0.6 else None,
        )
    # Lunches at cafes and days at conference venues: locations drawn from the world's places.
    cafes = [p for p in world.places if p.kind == "cafe"]
    venues = [r for r in rooms if r.kind == "conference venue"]
    for _ in range(14):
        day = random_day()
        if day is None or not cafes:
            continue
        owner = rng.choice(team)
        cafe = rng.choice(cafes)
        guest = rng.choice(world.customers + tuple(p for p in team if p.email != owner.email))
        add_event(
            calendars[owner.email], f"Lunch with {guest.first_name}", day.replace(hour=12), 60, [guest.email],
            location=f"{cafe.name}, {cafe.address}",
        )
    for _ in range(5):
        day = random_day()
        if day is None or not venues:
            continue
        owner = rng.choice(team)
        invited = rng.sample([p.email for p in team if p.email != owner.email], 2)
        add_event(
            calendars[owner.email], rng.choice(("Industry summit", "Partner conference", "Trade fair")),
            day.replace(hour=9), 8 * 60, invited, room=rng.choice(venues),
            description=write(words, "[Full-day event|All day][; travel booked separately|, travel on your own "
                                     "booking|; expenses through the usual report][.| - badges at the door.]"),
        )
    ctx.insert_many([*calendars.values(), company])
    ctx.insert_many(rooms)
    ctx.insert_many(events)
    ctx.insert_many(guests)


# -- calendars and rooms -------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("find {owner_email}'s calendar", "look up the {query} calendar"))
def list_calendars(
    ctx: ToolContext,
    owner_email: EmailAddress | None = None,
    query: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Calendar]:
    """List the team's calendars (each colleague's primary calendar plus shared ones like Company events).

    Args:
        owner_email: Only the calendar(s) owned by this email, e.g. to find a colleague's calendar id.
        query: Words to match against the calendar name or owner's name (case-insensitive; every word must match).
        limit: Maximum number of calendars to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Calendar).search(query).filter(owner_email=owner_email.lower() if owner_email else None)
    return q.order_by("-is_primary", "summary").page(limit, cursor)


@service.tool(
    "read",
    intent="find",
    phrases=(
        "check which meeting rooms are free from {start} to {end}",
        "find a room for at least {min_capacity} people",
    ),
)
def list_rooms(
    ctx: ToolContext,
    min_capacity: Quantity | None = None,
    start: DateTime | None = None,
    end: DateTime | None = None,
    only_available: bool = False,
) -> list[Room]:
    """List bookable rooms (meeting rooms and conference venues), optionally with their availability.

    Pass start and end to see whether each room is free for that time; with only_available=true only
    free rooms are returned. Book one with create_event(room_id=...) or book_room.

    Args:
        min_capacity: Only rooms that seat at least this many people.
        start: Start of the time range to check availability for (ISO 8601 UTC).
        end: End of that time range (ISO 8601 UTC); required with start.
        only_available: Return only rooms free for the whole range (needs start and end).
    """
    if (start is None) != (end is None):
        raise ToolError.invalid_argument("Pass both start and end to check availability, or neither.")
    if only_available and start is None:
        raise ToolError.invalid_argument("only_available needs start and end.")
    window = _check_times(ctx, start, end, future=False) if start and end else None
    rooms = ctx.query(Room).compare("capacity", ">=", min_capacity).order_by("capacity").all()
    taken = {room_id for room_id, _, _ in _booked(ctx, [r.id for r in rooms], *window)} if window else set()
    dump = runtime_of(Room).dump
    shown = [_ShownRoom(**dump(r), available=None if window is None else r.id not in taken) for r in rooms]
    return [r for r in shown if r.available or not only_available]


# -- events --------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("check the calendar for meetings with {attendee_email}", "look for {query} in the calendar"),
)
def list_events(
    ctx: ToolContext,
    calendar_id: CalendarId | None = None,
    attendee_email: EmailAddress | None = None,
    time_min: DateTime | None = None,
    time_max: DateTime | None = None,
    query: str | None = None,
    room_id: RoomId | None = None,
    include_cancelled: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Event]:
    """List events in start-time order, filtered by calendar, attendee, time range, text or room.

    A calendar shows the events organised on it and the events its owner is invited to, like a
    person's calendar does. Cancelled events are hidden unless include_cancelled is true.

    Args:
        calendar_id: Only events on this calendar (see list_calendars), e.g. cal_0001.
        attendee_email: Only events this person (colleague or customer) is invited to or organises.
        time_min: Only events that end after this time (ISO 8601 UTC).
        time_max: Only events that start before this time (ISO 8601 UTC).
        query: Words to match against the title, description or location (case-insensitive; every word must match).
        room_id: Only events booked in this room (see list_rooms).
        include_cancelled: Also return cancelled events.
        limit: Maximum number of events to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Event)
    if calendar_id:
        cal = ctx.get(Calendar, calendar_id)
        invited = "id IN (SELECT event_id FROM attendees WHERE email = ?)"
        q.where_sql(f"calendar_id = ? OR {invited}", cal.id, cal.owner_email)
    if attendee_email:
        q.where_sql("id IN (SELECT event_id FROM attendees WHERE email = ?)", attendee_email.lower())
    lo = _parse(time_min, "time_min") if time_min else None
    hi = _parse(time_max, "time_max") if time_max else None
    if lo and hi and hi <= lo:
        raise ToolError.invalid_argument("time_max must be after time_min.")
    q.compare("end", ">", _iso(lo) if lo else None).compare("start", "<", _iso(hi) if hi else None)
    q.search(query)
    if room_id:
        q.where(room_id=ctx.get(Room, room_id).id)
    if not include_cancelled:
        q.compare("status", "!=", "cancelled")
    return q.order_by("start").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the meeting {event_id}", "look at {event_id} in the calendar"))
def get_event(ctx: ToolContext, event_id: EventId) -> Event:
    """Get one event by id, with its attendees and their responses.

    Args:
        event_id: The event's id, e.g. evt_0042.
    """
    return ctx.get(Event, event_id)


@service.tool(
    "write",
    intent="schedule",
    phrases=(
        "set up a meeting called {title} at {start}",
        "put {title} in the calendar for {start} with {attendee_emails}",
    ),
)
def create_event(
    ctx: ToolContext,
    title: Subject,
    start: DateTime,
    end: DateTime,
    attendee_emails: list[EmailAddress] | None = None,
    calendar_id: CalendarId | None = None,
    description: Text | None = None,
    location: Address | None = None,
    room_id: RoomId | None = None,
    add_video_link: bool = True,
) -> Event:
    """Create an event and invite attendees; the calendar's owner is the organiser.

    Guests start with response needs_action. Booking a room sets the location to the room and fails
    if the room is taken or too small.

    Args:
        title: The event's title, e.g. "Renewal call with Brightline Foods".
        start: Start time (ISO 8601 UTC); must be in the future.
        end: End time (ISO 8601 UTC); after start, at most 24 hours later.
        attendee_emails: Emails of the people to invite (colleagues or customers); the organiser is added automatically.
        calendar_id: The calendar to put it on (its owner organises it); defaults to your own primary calendar.
        description: Agenda or notes.
        location: A postal address or place, e.g. a customer's office address.
        room_id: A room to book (see list_rooms); overrides location.
        add_video_link: Attach a video meeting link (default true).
    """
    if not title.strip():
        raise ToolError.invalid_argument("title must not be empty.")
    s, e = _check_times(ctx, start, end)
    if calendar_id:
        cal = ctx.get(Calendar, calendar_id)
    else:
        own = ctx.find(Calendar, owner_email=ctx.world.user.email, is_primary=True)
        assert own is not None, "every team member has a seeded primary calendar"
        cal = own
    invited = [g for g in _normalise_emails(attendee_emails or [], "attendee_emails") if g != cal.owner_email]
    room = ctx.get(Room, room_id) if room_id else None
    if room is not None:
        _check_room(ctx, room, s, e, len(invited) + 1, None)
        location = f"{room.name}, {room.address}"
    event_id = ctx.new_id("evt")
    # Derived from the id, so the same call always gives the same link.
    link = f"https://meet.{ctx.world.home.domain}/{event_id.replace('_', '-')}" if add_video_link else None
    event = ctx.insert(
        Event(
            id=event_id, calendar_id=cal.id, title=title.strip(), description=description, start=s, end=e,
            location=location, room_id=room.id if room else None, meeting_url=link, organizer_email=cal.owner_email,
            created_at=ctx.now_iso, updated_at=ctx.now_iso,
        )
    )
    organizer = Attendee(
        id=_guest_id(event_id, cal.owner_email), event_id=event_id, email=cal.owner_email, name=cal.owner_name,
        response_status="accepted", organizer=True,
    )
    ctx.insert_many([organizer, *(_guest(ctx, event_id, email) for email in invited)])
    return event


@service.tool("write", intent="update", phrases=("update the details of {event_id}", "rename {event_id} to {title}"))
def update_event(
    ctx: ToolContext,
    event_id: EventId,
    title: Subject | None = None,
    description: Text | None = None,
    location: Address | None = None,
    meeting_url: URL | None = None,
) -> Event:
    """Change an event's title, description, location or video link. Only the fields you pass change.

    To change the time use move_event; for guests use add_attendees / remove_attendee; for rooms
    use book_room / release_room. Cancelled events cannot be edited.

    Args:
        event_id: The event to update.
        title: New title.
        description: New description or agenda.
        location: New location (postal address or place); not allowed while a room is booked.
        meeting_url: New video meeting link.
    """
    event = _editable(ctx, event_id)
    if title is None and description is None and location is None and meeting_url is None:
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if title is not None and not title.strip():
        raise ToolError.invalid_argument("title must not be empty.")
    if location is not None and event.room_id:
        raise ToolError.invalid_state(
            f"Event {event_id} is booked in room {event.room_id}; release_room it before setting another location."
        )
    changes = {
        "title": title.strip() if title is not None else None,
        "description": description,
        "location": location,
        "meeting_url": meeting_url,
    }
    changes = {k: v for k, v in changes.items() if v is not None}
    return ctx.update(event, **changes, updated_at=ctx.now_iso)


@service.tool(
    "write", intent="reschedule", phrases=("move {event_id} to {new_start}", "reschedule {event_id} for {new_start}")
)
def move_event(
    ctx: ToolContext,
    event_id: EventId,
    new_start: DateTime,
    new_end: DateTime | None = None,
    reset_responses: bool = True,
) -> Event:
    """Reschedule an event to a new time; by default it keeps its duration and guests must respond again.

    A booked room moves with the event, so the call fails if the room is taken at the new time.

    Args:
        event_id: The event to move.
        new_start: The new start time (ISO 8601 UTC); must be in the future.
        new_end: The new end time; defaults to new_start plus the current duration.
        reset_responses: Set guests' responses back to needs_action (default true), as a time change needs new answers.
    """
    event = _editable(ctx, event_id)
    duration = _parse(event.end, "end") - _parse(event.start, "start")
    end_text = new_end or _iso(_parse(new_start, "new_start") + duration)
    s, e = _check_times(ctx, new_start, end_text)
    if s == event.start and e == event.end:
        raise ToolError.invalid_argument(f"Event {event_id} already runs {s} to {e}; pass a different time.")
    if event.room_id:
        _check_room(ctx, ctx.get(Room, event.room_id), s, e, _attendee_count(ctx, event.id), event.id)
    if reset_responses:
        for guest in ctx.query(Attendee).where(event_id=event.id, organizer=False).all():
            if guest.response_status != "needs_action":
                ctx.update(guest, response_status="needs_action")
    return ctx.update(event, start=s, end=e, updated_at=ctx.now_iso)


@service.tool("write", intent="cancel", phrases=("cancel {event_id}", "call off {event_id} because {reason}"))
def cancel_event(ctx: ToolContext, event_id: EventId, reason: ShortText | None = None) -> Event:
    """Cancel an event: it stays visible as cancelled, frees its room, and can no longer be changed.

    Args:
        event_id: The event to cancel.
        reason: Why it is cancelled, shown to the guests.
    """
    event = ctx.get(Event, event_id)
    if event.status == "cancelled":
        raise ToolError.invalid_state(f"Event {event_id} is already cancelled.")
    why = reason.strip() if reason and reason.strip() else None
    return ctx.update(event, status="cancelled", cancellation_reason=why, updated_at=ctx.now_iso)


@service.tool(
    "write",
    intent="reply",
    phrases=(
        "answer the invitation to {event_id} with {response}",
        "mark {attendee_email} as {response} for {event_id}",
    ),
)
def respond_to_event(
    ctx: ToolContext,
    event_id: EventId,
    response: Reply,
    attendee_email: EmailAddress | None = None,
    comment: ShortText | None = None,
) -> Event:
    """Accept, decline or tentatively accept an invitation, for yourself or a colleague you assist.

    Only team members' responses can be set here (guests from other companies answer their own
    invitations). The organiser cannot decline their own event: cancel_event it instead.

    Args:
        event_id: The event invited to.
        response: accepted, declined or tentative.
        attendee_email: Whose response to set; defaults to you. Must be a colleague invited to the event.
        comment: An optional note to the organiser, e.g. "Running 5 minutes late".
    """
    event = _editable(ctx, event_id)
    email = (attendee_email or ctx.world.user.email).lower()
    if email not in {p.email for p in ctx.world.team}:
        raise ToolError.permission_denied(
            f"{email} is not on the team; guests answer their own invitations. "
            "You can set responses only for colleagues."
        )
    attendee = ctx.fetch(Attendee, _guest_id(event.id, email))
    if attendee is None:
        raise ToolError.not_found(
            "attendee", email, f"{email} is not invited to event {event_id}; add_attendees first."
        )
    if attendee.organizer and response == "declined":
        raise ToolError.invalid_state(
            f"{email} organises event {event_id} and cannot decline it; use cancel_event or move_event instead."
        )
    note = comment.strip() if comment and comment.strip() else None
    ctx.update(attendee, response_status=response, comment=note)
    return ctx.update(event, updated_at=ctx.now_iso)


@service.tool(
    "write", intent="invite",
    phrases=("invite {emails} to {event_id}", "add {emails} to the meeting {event_id}"),
)
def add_attendees(
    ctx: ToolContext, event_id: EventId, emails: list[EmailAddress], optional: bool = False
) -> Event:
    """Invite more people to an event; they start with response needs_action.

    Fails, inviting nobody, if anyone listed is already invited or the booked room would be overfilled.

    Args:
        event_id: The event to invite them to.
        emails: Emails of the people to invite (colleagues or customers).
        optional: Mark them as optional attendees.
    """
    event = _editable(ctx, event_id)
    if not emails:
        raise ToolError.invalid_argument("emails must list at least one person to invite.")
    new = _normalise_emails(emails, "emails")
    for email in new:
        if ctx.fetch(Attendee, _guest_id(event.id, email)) is not None:
            raise ToolError.conflict(f"{email} is already invited to event {event_id}; leave them out and retry.")
    if event.room_id:
        room = ctx.get(Room, event.room_id)
        count = _attendee_count(ctx, event.id) + len(new)
        if count > room.capacity:
            raise ToolError.conflict(
                f"{room.name} seats {room.capacity}; with these guests event {event_id} would have {count}. "
                "Book a larger room first (release_room, then book_room)."
            )
    ctx.insert_many([_guest(ctx, event.id, email, optional=optional) for email in new])
    return ctx.update(event, updated_at=ctx.now_iso)


@service.tool(
    "write", intent="remove",
    phrases=("take {email} off {event_id}", "remove {email} from the meeting {event_id}"),
)
def remove_attendee(ctx: ToolContext, event_id: EventId, email: EmailAddress) -> Event:
    """Remove one person from an event's guest list. The organiser cannot be removed.

    Args:
        event_id: The event.
        email: The email of the attendee to remove.
    """
    event = _editable(ctx, event_id)
    attendee = ctx.fetch(Attendee, _guest_id(event.id, email.lower()))
    if attendee is None:
        raise ToolError.not_found("attendee", email, f"{email} is not invited to event {event_id}; see get_event.")
    if attendee.organizer:
        raise ToolError.invalid_state(
            f"{email} organises event {event_id} and cannot be removed; cancel_event it instead."
        )
    ctx.delete(attendee)
    return ctx.update(event, updated_at=ctx.now_iso)


@service.tool(
    "write", intent="book",
    phrases=("book {room_id} for {event_id}", "reserve {room_id} for the meeting {event_id}"),
)
def book_room(ctx: ToolContext, event_id: EventId, room_id: RoomId) -> Event:
    """Book a room for an existing event; the event's location becomes the room.

    Fails if the room is booked by another event at that time, seats fewer than the attendees, or
    the event already has a room (release_room first).

    Args:
        event_id: The event that needs a room.
        room_id: The room to book (see list_rooms).
    """
    event = _editable(ctx, event_id)
    room = ctx.get(Room, room_id)
    if event.room_id == room.id:
        raise ToolError.invalid_state(f"Event {event_id} already has {room.name} booked.")
    if event.room_id:
        raise ToolError.invalid_state(
            f"Event {event_id} already has room {event.room_id}; release_room it first to switch rooms."
        )
    _check_room(ctx, room, event.start, event.end, _attendee_count(ctx, event.id), event.id)
    booked = ctx.update(event, room_id=room.id, location=f"{room.name}, {room.address}", updated_at=ctx.now_iso)
    return booked


@service.tool(
    "write", intent="cancel",
    phrases=("release the room booked for {event_id}", "give up the room of {event_id}"),
)
def release_room(ctx: ToolContext, event_id: EventId) -> Event:
    """Give up the room booked for an event; the event keeps its time and guests, without a location.

    Args:
        event_id: The event whose room to release.
    """
    event = _editable(ctx, event_id)
    if not event.room_id:
        raise ToolError.invalid_state(f"Event {event_id} has no room booked.")
    return ctx.update(event, room_id=None, location=None, updated_at=ctx.now_iso)


# -- availability --------------------------------------------------------------------------------


@service.tool("read", intent="check", phrases=("check when {emails} are busy between {time_min} and {time_max}",))
def query_free_busy(
    ctx: ToolContext, emails: list[EmailAddress], time_min: DateTime, time_max: DateTime
) -> FreeBusyOut:
    """When each person is busy between two times (events they attend and have not declined).

    Only busy intervals are returned, not the events themselves. People outside the team are busy
    only with the events in these calendars that they are invited to.

    Args:
        emails: The people to check (1-20 emails).
        time_min: Start of the range (ISO 8601 UTC).
        time_max: End of the range (ISO 8601 UTC); at most 31 days after time_min.
    """
    if not 1 <= len(emails) <= 20:
        raise ToolError.invalid_argument("emails must list between 1 and 20 people.")
    people = _normalise_emails(emails, "emails")
    lo, hi = _parse(time_min, "time_min"), _parse(time_max, "time_max")
    if hi <= lo:
        raise ToolError.invalid_argument("time_max must be after time_min.")
    if hi - lo > timedelta(days=31):
        raise ToolError.invalid_argument("The range can span at most 31 days; narrow time_min/time_max.")
    s, e = _iso(lo), _iso(hi)
    busy = _busy(ctx, people, s, e)
    return FreeBusyOut(
        time_min=s,
        time_max=e,
        calendars=[BusyOut(email=p, busy=[_slot(a, b) for a, b in _merge(busy[p])]) for p in people],
    )


@service.tool(
    "read",
    intent="check",
    phrases=(
        "find a time on {date} when {attendee_emails} are all free",
        "check when {attendee_emails} can meet on {date}",
    ),
)
def find_free_slots(
    ctx: ToolContext,
    attendee_emails: list[EmailAddress],
    date: Date,
    duration_minutes: Minutes = 30,
    room_id: RoomId | None = None,
) -> FreeSlotsOut:
    """Find the windows on a date when all the given people (and optionally a room) are free.

    Searches working hours, 09:00-17:00 UTC, and never before the current time. Each slot is a free
    window at least duration_minutes long; create_event with a start inside it.

    Args:
        attendee_emails: Everyone who must be free (1-20 emails, colleagues or customers).
        date: The day to search (YYYY-MM-DD); today or later.
        duration_minutes: How long the meeting lasts (5-480 minutes, default 30).
        room_id: Also require this room to be free (see list_rooms).
    """
    if not 1 <= len(attendee_emails) <= 20:
        raise ToolError.invalid_argument("attendee_emails must list between 1 and 20 people.")
    people = _normalise_emails(attendee_emails, "attendee_emails")
    try:
        day = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise ToolError.invalid_argument(f"date {date!r} is not a valid YYYY-MM-DD date.") from None
    if day.date() < ctx.now.date():
        raise ToolError.invalid_argument(f"date {date} is in the past (today is {ctx.now_iso[:10]}).")
    lo = max(day.replace(hour=WORKDAY_START_HOUR), ctx.now)
    hi = day.replace(hour=WORKDAY_END_HOUR)
    slots: list[TimeSlot] = []
    room = ctx.get(Room, room_id) if room_id else None
    if lo < hi:
        s, e = _iso(lo), _iso(hi)
        busy = [interval for intervals in _busy(ctx, people, s, e).values() for interval in intervals]
        if room is not None:
            busy += [(max(a, s), min(b, e)) for _, a, b in _booked(ctx, [room.id], s, e)]
        free_from = s
        for a, b in _merge(busy) + [(e, e)]:
            if a > free_from and _minutes(free_from, a) >= duration_minutes:
                slots.append(_slot(free_from, a))
            free_from = max(free_from, b)
    return FreeSlotsOut(
        date=date, attendee_emails=people, room_id=room.id if room else None,
        duration_minutes=duration_minutes, slots=slots,
    )
