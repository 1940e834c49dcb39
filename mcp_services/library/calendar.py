"""Calendar: the team's calendars, events, invitations and bookable rooms (modelled on Google Calendar).

Every colleague of the home team has a primary calendar; an office-wide "Company events" calendar
holds all-hands meetings. Events carry attendees by email (colleagues and the CRM's customer
contacts, so the same person has the same address in every service) with a response status, an
organiser (the owner of the calendar the event lives on), a location (an address from the world's
places or a customer's office) and optionally a bookable room. The agent acts for ``world.user``
with delegate access to every team calendar, as an operations manager would.

Rules: an event ends after it starts and lasts at most a day; new or moved events start in the
future; a cancelled event cannot be cancelled again or edited; a room cannot be double booked nor
hold more attendees than its capacity; only team members' responses can be set (guests answer
their own invitations) and an organiser cannot decline their own event.

All times are ISO 8601 UTC; working hours for free-slot searches are 09:00-17:00 UTC.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from sqlalchemy import JSON, ForeignKey, String, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
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
    Subject,
    Text,
)

CalendarId = EntityId("calendar.calendar")
EventId = EntityId("calendar.event")
RoomId = EntityId("calendar.room")

EventStatus = Literal["confirmed", "cancelled"]
ResponseStatus = Literal["needs_action", "accepted", "declined", "tentative"]
Reply = Literal["accepted", "declined", "tentative"]

WORKDAY_START_HOUR = 9
WORKDAY_END_HOUR = 17
MAX_EVENT_HOURS = 24
Minutes = Annotated[int, Field(ge=5, le=480, description="A duration in minutes (5-480).")]


class Base(DeclarativeBase):
    pass


class Calendar(Base):
    __tablename__ = "calendars"
    id: Mapped[str] = mapped_column(primary_key=True)
    summary: Mapped[str]
    description: Mapped[str | None]
    owner_email: Mapped[str] = mapped_column(index=True)
    owner_name: Mapped[str]
    is_primary: Mapped[bool]
    time_zone: Mapped[str]


class Room(Base):
    __tablename__ = "rooms"
    id: Mapped[str] = mapped_column(primary_key=True)
    place_id: Mapped[str]  # the world's place this room is
    name: Mapped[str]
    kind: Mapped[str]
    address: Mapped[str]
    city: Mapped[str]
    capacity: Mapped[int]
    features: Mapped[list[str]] = mapped_column(JSON)


class Event(Base):
    __tablename__ = "events"
    id: Mapped[str] = mapped_column(primary_key=True)
    calendar_id: Mapped[str] = mapped_column(ForeignKey("calendars.id"), index=True)
    title: Mapped[str] = mapped_column(String(300))
    description: Mapped[str | None]
    start: Mapped[str] = mapped_column(index=True)
    end: Mapped[str]
    location: Mapped[str | None]
    room_id: Mapped[str | None] = mapped_column(ForeignKey("rooms.id"))
    meeting_url: Mapped[str | None]
    organizer_email: Mapped[str]
    status: Mapped[str] = mapped_column(default="confirmed")
    cancellation_reason: Mapped[str | None]
    created_at: Mapped[str]
    updated_at: Mapped[str]


class Attendee(Base):
    __tablename__ = "attendees"
    # Composite key: one row per guest per event, which also reads well in state diffs.
    event_id: Mapped[str] = mapped_column(ForeignKey("events.id"), primary_key=True)
    email: Mapped[str] = mapped_column(primary_key=True, index=True)
    name: Mapped[str | None]
    response_status: Mapped[str]
    organizer: Mapped[bool] = mapped_column(default=False)
    optional: Mapped[bool] = mapped_column(default=False)
    comment: Mapped[str | None]


service = Service(
    "calendar",
    "Team calendars: meetings and events with attendees and their responses, free/busy and free-slot "
    "search, and bookable meeting rooms.",
    Base,
    title="Calendar",
)


# -- results -------------------------------------------------------------------------------------


class CalendarOut(BaseModel):
    id: CalendarId
    summary: str
    description: str | None
    owner_email: EmailAddress
    owner_name: PersonName
    is_primary: bool
    time_zone: str


class RoomOut(BaseModel):
    id: RoomId
    name: str
    kind: str
    address: Address
    city: City
    capacity: Quantity
    features: list[str]
    available: bool | None = Field(
        default=None, description="Whether the room is free for the asked time range; null if none was asked"
    )


class AttendeeOut(BaseModel):
    email: EmailAddress
    name: PersonName | None
    response_status: ResponseStatus
    organizer: bool
    optional: bool
    comment: str | None


class EventOut(BaseModel):
    id: EventId
    calendar_id: CalendarId
    title: Subject
    description: Text | None
    start: DateTime
    end: DateTime
    duration_minutes: int
    location: Address | None
    room_id: RoomId | None
    room_name: str | None
    meeting_url: URL | None
    organizer_email: EmailAddress
    organizer_name: PersonName | None
    status: EventStatus
    cancellation_reason: str | None
    attendees: list[AttendeeOut]
    created_at: DateTime
    updated_at: DateTime


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
    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%MZ"):
        try:
            return datetime.strptime(value, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise ToolError.invalid_argument(f"{field} {value!r} is not an ISO 8601 UTC time like 2025-01-14T09:30:00Z.")


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _minutes(start: str, end: str) -> int:
    return int((_parse(end, "end") - _parse(start, "start")).total_seconds() // 60)


def _events_out(ctx: ToolContext, rows: list[Event]) -> list[EventOut]:
    """Result rows for many events with a fixed number of queries (a page is up to 100 events)."""
    if not rows:
        return []
    rooms = {r.id: r for r in ctx.db.scalars(select(Room))}
    guests: dict[str, list[Attendee]] = {}
    for a in ctx.db.scalars(
        select(Attendee)
        .where(Attendee.event_id.in_([e.id for e in rows]))
        .order_by(Attendee.organizer.desc(), Attendee.email)
    ):
        guests.setdefault(a.event_id, []).append(a)
    out = []
    for e in rows:
        attendees = guests.get(e.id, [])
        room = rooms.get(e.room_id) if e.room_id else None
        organizer = next((a for a in attendees if a.email == e.organizer_email), None)
        out.append(
            EventOut(
                id=e.id,
                calendar_id=e.calendar_id,
                title=e.title,
                description=e.description,
                start=e.start,
                end=e.end,
                duration_minutes=_minutes(e.start, e.end),
                location=e.location,
                room_id=e.room_id,
                room_name=room.name if room else None,
                meeting_url=e.meeting_url,
                organizer_email=e.organizer_email,
                organizer_name=organizer.name if organizer else None,
                status=e.status,  # type: ignore[arg-type]
                cancellation_reason=e.cancellation_reason,
                attendees=[AttendeeOut.model_validate(a, from_attributes=True) for a in attendees],
                created_at=e.created_at,
                updated_at=e.updated_at,
            )
        )
    return out


def _event_out(ctx: ToolContext, e: Event) -> EventOut:
    return _events_out(ctx, [e])[0]


def _room_out(r: Room, available: bool | None = None) -> RoomOut:
    return RoomOut(
        id=r.id,
        name=r.name,
        kind=r.kind,
        address=r.address,
        city=r.city,
        capacity=r.capacity,
        features=list(r.features),
        available=available,
    )


def _get_event(ctx: ToolContext, event_id: str) -> Event:
    return ctx.get(Event, event_id, "event", "Use list_events to find event ids.")


def _editable(ctx: ToolContext, event_id: str) -> Event:
    """The event, refused if it is cancelled: cancelled events are final."""
    event = _get_event(ctx, event_id)
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


def _team_emails(ctx: ToolContext) -> set[str]:
    return {p.email for p in ctx.world.team}


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
    clash = ctx.db.scalar(
        select(Event)
        .where(
            Event.room_id == room.id,
            Event.status != "cancelled",
            Event.start < end,
            Event.end > start,
            Event.id != (ignore_event or ""),
        )
        .order_by(Event.start)
    )
    if clash is not None:
        raise ToolError.conflict(
            f"{room.name} ({room.id}) is already booked from {clash.start} to {clash.end} by event {clash.id} "
            f"({clash.title!r}); pick another time or room (list_rooms with start/end shows free rooms)."
        )


def _attendee_count(ctx: ToolContext, event_id: str) -> int:
    return len(list(ctx.db.scalars(select(Attendee.email).where(Attendee.event_id == event_id))))


def _busy(ctx: ToolContext, emails: list[str], start: str, end: str) -> dict[str, list[tuple[str, str]]]:
    """Per email: the intervals in [start, end) when they attend a live event they have not declined (one query)."""
    busy: dict[str, list[tuple[str, str]]] = {email: [] for email in emails}
    rows = ctx.db.execute(
        select(Attendee.email, Event.start, Event.end)
        .join(Attendee, Attendee.event_id == Event.id)
        .where(
            Attendee.email.in_(emails),
            Attendee.response_status != "declined",
            Event.status != "cancelled",
            Event.start < end,
            Event.end > start,
        )
        .order_by(Attendee.email, Event.start, Event.end)
    ).all()
    for email, s, e in rows:
        busy[email].append((max(s, start), min(e, end)))
    return busy


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


# -- seed ----------------------------------------------------------------------------------------

_INTERNAL_TITLES = (
    ("Budget review", "Go through spend against plan and flag overruns."),
    ("Hiring sync", "Pipeline for open roles and interview loops."),
    ("Roadmap planning", "Agree priorities for next quarter."),
    ("Support escalations review", "Walk through open escalations and owners."),
    ("Month-end close", "Reconcile accounts and close the books."),
    ("Pipeline review", "Deal-by-deal review of the sales pipeline."),
    ("Office move planning", "Logistics for the new floor."),
    ("Incident retrospective", "What happened, why, and what we change."),
    ("Vendor evaluation", "Compare shortlisted vendors."),
    ("Design review", "Review mock-ups for the next release."),
)
_CUSTOMER_TITLES = (
    "{product} demo with {org}",
    "Quarterly business review: {org}",
    "Onboarding kickoff - {org}",
    "Renewal call with {person}",
    "Pricing discussion with {org}",
    "Support check-in: {org}",
)
_ROOM_FEATURES = (["video", "whiteboard"], ["video", "screen"], ["whiteboard"], ["video", "screen", "whiteboard"])


def _meet_url(ctx: ToolContext, rng_value: int) -> str:
    code = f"{rng_value:09d}"
    return f"https://meet.{ctx.world.home.domain}/{code[:3]}-{code[3:6]}-{code[6:]}"


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    team = list(world.team)
    names = {p.email: p.name for p in world.people}

    calendars: dict[str, Calendar] = {}
    for person in team:
        cal = Calendar(
            id=ctx.new_id("cal"),
            summary=person.name,
            description=f"{person.name}, {person.job_title} at {world.home.name}",
            owner_email=person.email,
            owner_name=person.name,
            is_primary=True,
            time_zone="UTC",
        )
        ctx.db.add(cal)
        calendars[person.email] = cal
    office_manager = world.team_member("office manager")
    company_cal = Calendar(
        id=ctx.new_id("cal"),
        summary="Company events",
        description=f"All-hands and office-wide events at {world.home.name}",
        owner_email=office_manager.email,
        owner_name=office_manager.name,
        is_primary=False,
        time_zone="UTC",
    )
    ctx.db.add(company_cal)

    rooms: list[Room] = []
    for place in world.places:
        if place.kind not in ("meeting room", "conference venue"):
            continue
        small = place.kind == "meeting room"
        room = Room(
            id=ctx.new_id("room"),
            place_id=place.id,
            name=place.name,
            kind=place.kind,
            address=place.address,
            city=place.city,
            capacity=rng.choice((4, 6, 8, 12)) if small else rng.choice((60, 120, 200)),
            features=list(rng.choice(_ROOM_FEATURES)),
        )
        ctx.db.add(room)
        rooms.append(room)
    meeting_rooms = [r for r in rooms if r.kind == "meeting room"]
    ctx.db.flush()

    booked: dict[str, list[tuple[str, str]]] = {r.id: [] for r in rooms}
    # Guests are inserted after all events: no ORM relationship orders the inserts, and every
    # new_id() autoflushes, so a guest added earlier could reach SQLite before its event.
    guest_rows: list[Attendee] = []
    today = ctx.now.replace(hour=0, minute=0, second=0, microsecond=0)

    def add_event(
        cal: Calendar,
        title: str,
        start: datetime,
        minutes: int,
        guests: list[str],
        *,
        description: str | None = None,
        location: str | None = None,
        room: Room | None = None,
        online: bool = False,
    ) -> None:
        s, e = _iso(start), _iso(start + timedelta(minutes=minutes))
        everyone = [cal.owner_email] + [g for g in dict.fromkeys(guests) if g != cal.owner_email]
        if room is not None:
            # Seeded bookings obey the same rules as tools: drop the room rather than double book.
            if len(everyone) > room.capacity or any(bs < e and be > s for bs, be in booked[room.id]):
                room = None
            else:
                booked[room.id].append((s, e))
                location = f"{room.name}, {room.address}"
        past = start < ctx.now
        cancelled = rng.random() < 0.07
        event = Event(
            id=ctx.new_id("evt"),
            calendar_id=cal.id,
            title=title,
            description=description,
            start=s,
            end=e,
            location=location,
            room_id=room.id if room else None,
            # Online meetings, and meetings with nowhere to be, get a video link.
            meeting_url=_meet_url(ctx, rng.randint(0, 999_999_999)) if online or not location else None,
            organizer_email=cal.owner_email,
            status="cancelled" if cancelled else "confirmed",
            cancellation_reason=rng.choice(("Organiser unavailable", "No longer needed", "Rescheduled"))
            if cancelled
            else None,
            created_at=_iso(min(start, ctx.now) - timedelta(days=rng.randint(2, 30))),
            updated_at=_iso(min(start, ctx.now) - timedelta(days=rng.randint(0, 1))),
        )
        ctx.db.add(event)
        for email in everyone:
            organizer = email == cal.owner_email
            if organizer:
                response = "accepted"
            elif past:
                response = rng.choices(("accepted", "declined", "tentative", "needs_action"), (75, 10, 5, 10))[0]
            else:
                response = rng.choices(("accepted", "declined", "tentative", "needs_action"), (45, 5, 10, 40))[0]
            guest_rows.append(
                Attendee(
                    event_id=event.id,
                    email=email,
                    name=names.get(email),
                    response_status=response,
                    organizer=organizer,
                    optional=not organizer and rng.random() < 0.08,
                    comment=None,
                )
            )

    def weekday(offset: int) -> datetime | None:
        day = today + timedelta(days=offset)
        return day if day.weekday() < 5 else None

    def at(day: datetime) -> datetime:
        return day.replace(hour=rng.randint(WORKDAY_START_HOUR, WORKDAY_END_HOUR - 2), minute=rng.choice((0, 30)))

    user = world.user
    emails = [p.email for p in team]
    # Weekly team sync and monthly all-hands: the recurring backbone of everyone's week.
    for offset in range(-28, 29):
        day = weekday(offset)
        if day is None:
            continue
        if day.weekday() == 0:
            add_event(
                calendars[user.email], "Weekly team sync", day.replace(hour=10), 30, emails,
                description="Priorities for the week, blockers, announcements.",
                room=rng.choice(meeting_rooms) if meeting_rooms else None, online=True,
            )
        if day.weekday() == 4 and day.day <= 7:
            add_event(
                company_cal, f"All-hands: {day.strftime('%B')}", day.replace(hour=15), 60, emails,
                description="Company update, wins of the month, Q&A.", online=True,
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
    facing = [p for p in team if p.job_title in ("sales lead", "account executive", "support lead", "product manager")]
    for _ in range(70):
        day = weekday(rng.randint(-30, 30))
        if day is None:
            continue
        owner = rng.choice(facing)
        customer = rng.choice(world.customers)
        org = world.organisation(customer.organisation_id)
        colleagues = [c for c in world.customers if c.organisation_id == org.id and c.email != customer.email]
        guests = [customer.email] + ([rng.choice(colleagues).email] if colleagues and rng.random() < 0.4 else [])
        if rng.random() < 0.5:
            guests.append(rng.choice([p for p in team if p.email != owner.email]).email)
        product = rng.choice(world.products)
        title = rng.choice(_CUSTOMER_TITLES).format(product=product.name, org=org.name, person=customer.name)
        onsite = rng.random() < 0.25
        add_event(
            calendars[owner.email], title, at(day), rng.choice((30, 45, 60)), guests,
            description=f"With {customer.name} ({customer.job_title}) of {org.name}. "
            f"Contact: {customer.email}, {customer.phone}.",
            location=org.address if onsite else None,
            room=rng.choice(meeting_rooms) if meeting_rooms and not onsite and rng.random() < 0.3 else None,
            online=not onsite,
        )
    # Internal meetings, often in a meeting room.
    for _ in range(80):
        day = weekday(rng.randint(-30, 30))
        if day is None:
            continue
        owner = rng.choice(team)
        title, description = rng.choice(_INTERNAL_TITLES)
        guests = rng.sample([p.email for p in team if p.email != owner.email], rng.randint(1, 4))
        add_event(
            calendars[owner.email], title, at(day), rng.choice((30, 45, 60, 90)), guests,
            description=description,
            room=rng.choice(meeting_rooms) if meeting_rooms and rng.random() < 0.6 else None,
        )
    # Lunches at cafes and days at conference venues: locations drawn from the world's places.
    cafes = [p for p in world.places if p.kind == "cafe"]
    venues = [r for r in rooms if r.kind == "conference venue"]
    for _ in range(14):
        day = weekday(rng.randint(-30, 30))
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
        day = weekday(rng.randint(-30, 30))
        if day is None or not venues:
            continue
        owner = rng.choice(team)
        guests = rng.sample([p.email for p in team if p.email != owner.email], 2)
        add_event(
            calendars[owner.email], rng.choice(("Industry summit", "Partner conference", "Trade fair")),
            day.replace(hour=9), 8 * 60, guests, room=rng.choice(venues),
            description="Full-day event; travel booked separately.",
        )
    ctx.db.flush()
    ctx.db.add_all(guest_rows)


# -- calendars and rooms -------------------------------------------------------------------------


@service.tool("read")
def list_calendars(
    ctx: ToolContext,
    owner_email: EmailAddress | None = None,
    query: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[CalendarOut]:
    """List the team's calendars (each colleague's primary calendar plus shared ones like Company events).

    Args:
        owner_email: Only the calendar(s) owned by this email, e.g. to find a colleague's calendar id.
        query: Text to match against the calendar name or owner's name (case-insensitive).
        limit: Maximum number of calendars to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Calendar).order_by(Calendar.is_primary.desc(), Calendar.summary, Calendar.id)
    if owner_email:
        stmt = stmt.where(Calendar.owner_email == owner_email.lower())
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(Calendar.summary.ilike(like), Calendar.owner_name.ilike(like)))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[CalendarOut](
        items=[CalendarOut.model_validate(c, from_attributes=True) for c in rows], total=total, next_cursor=next_cursor
    )


@service.tool("read")
def list_rooms(
    ctx: ToolContext,
    min_capacity: Quantity | None = None,
    start: DateTime | None = None,
    end: DateTime | None = None,
    only_available: bool = False,
) -> list[RoomOut]:
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
    stmt = select(Room).order_by(Room.capacity, Room.id)
    if min_capacity is not None:
        stmt = stmt.where(Room.capacity >= min_capacity)
    rooms = list(ctx.db.scalars(stmt))
    booked: set[str] = set()
    if window is not None and rooms:
        # The rooms with a live event overlapping the window, in one query.
        booked = set(
            ctx.db.scalars(
                select(Event.room_id).where(
                    Event.room_id.in_([room.id for room in rooms]),
                    Event.status != "cancelled",
                    Event.start < window[1],
                    Event.end > window[0],
                )
            )
        )
    out = []
    for room in rooms:
        available = None if window is None else room.id not in booked
        if only_available and not available:
            continue
        out.append(_room_out(room, available))
    return out


# -- events --------------------------------------------------------------------------------------


@service.tool("read")
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
) -> Page[EventOut]:
    """List events in start-time order, filtered by calendar, attendee, time range, text or room.

    A calendar shows the events organised on it and the events its owner is invited to, like a
    person's calendar does. Cancelled events are hidden unless include_cancelled is true.

    Args:
        calendar_id: Only events on this calendar (see list_calendars), e.g. cal_0001.
        attendee_email: Only events this person (colleague or customer) is invited to or organises.
        time_min: Only events that end after this time (ISO 8601 UTC).
        time_max: Only events that start before this time (ISO 8601 UTC).
        query: Text to match against the title, description or location (case-insensitive).
        room_id: Only events booked in this room (see list_rooms).
        include_cancelled: Also return cancelled events.
        limit: Maximum number of events to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Event).order_by(Event.start, Event.id)
    if calendar_id:
        cal = ctx.get(Calendar, calendar_id, "calendar", "Use list_calendars to find calendar ids.")
        invited = select(Attendee.event_id).where(Attendee.email == cal.owner_email)
        stmt = stmt.where(or_(Event.calendar_id == cal.id, Event.id.in_(invited)))
    if attendee_email:
        stmt = stmt.where(Event.id.in_(select(Attendee.event_id).where(Attendee.email == attendee_email.lower())))
    if time_min:
        stmt = stmt.where(Event.end > _iso(_parse(time_min, "time_min")))
    if time_max:
        stmt = stmt.where(Event.start < _iso(_parse(time_max, "time_max")))
    if time_min and time_max and _parse(time_max, "time_max") <= _parse(time_min, "time_min"):
        raise ToolError.invalid_argument("time_max must be after time_min.")
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(Event.title.ilike(like), Event.description.ilike(like), Event.location.ilike(like)))
    if room_id:
        ctx.get(Room, room_id, "room", "Use list_rooms to find room ids.")
        stmt = stmt.where(Event.room_id == room_id)
    if not include_cancelled:
        stmt = stmt.where(Event.status != "cancelled")
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[EventOut](items=_events_out(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_event(ctx: ToolContext, event_id: EventId) -> EventOut:
    """Get one event by id, with its attendees and their responses.

    Args:
        event_id: The event's id, e.g. evt_0042.
    """
    return _event_out(ctx, _get_event(ctx, event_id))


@service.tool("write")
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
) -> EventOut:
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
        cal = ctx.get(Calendar, calendar_id, "calendar", "Use list_calendars to find calendar ids.")
    else:
        cal = ctx.db.scalar(select(Calendar).where(Calendar.owner_email == ctx.world.user.email, Calendar.is_primary))
        assert cal is not None  # seeded for every team member
    guests = [g for g in _normalise_emails(attendee_emails or [], "attendee_emails") if g != cal.owner_email]
    room = ctx.get(Room, room_id, "room", "Use list_rooms to find room ids.") if room_id else None
    if room is not None:
        _check_room(ctx, room, s, e, len(guests) + 1, None)
        location = f"{room.name}, {room.address}"
    event = Event(
        id=ctx.new_id("evt"),
        calendar_id=cal.id,
        title=title.strip(),
        description=description,
        start=s,
        end=e,
        location=location,
        room_id=room.id if room else None,
        meeting_url=None,
        organizer_email=cal.owner_email,
        status="confirmed",
        cancellation_reason=None,
        created_at=ctx.now_iso,
        updated_at=ctx.now_iso,
    )
    if add_video_link:  # derived from the id, so the same call always gives the same link
        event.meeting_url = f"https://meet.{ctx.world.home.domain}/{event.id.replace('_', '-')}"
    ctx.db.add(event)
    ctx.db.flush()  # the event row must exist before its attendees reference it
    ctx.db.add(
        Attendee(
            event_id=event.id, email=cal.owner_email, name=cal.owner_name, response_status="accepted",
            organizer=True, optional=False, comment=None,
        )
    )
    for email in guests:
        ctx.db.add(
            Attendee(
                event_id=event.id, email=email, name=_person_name(ctx, email), response_status="needs_action",
                organizer=False, optional=False, comment=None,
            )
        )
    ctx.db.flush()
    return _event_out(ctx, event)


@service.tool("write")
def update_event(
    ctx: ToolContext,
    event_id: EventId,
    title: Subject | None = None,
    description: Text | None = None,
    location: Address | None = None,
    meeting_url: URL | None = None,
) -> EventOut:
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
    if title is not None:
        if not title.strip():
            raise ToolError.invalid_argument("title must not be empty.")
        event.title = title.strip()
    if description is not None:
        event.description = description
    if location is not None:
        if event.room_id:
            raise ToolError.invalid_state(
                f"Event {event_id} is booked in room {event.room_id}; release_room it before setting another location."
            )
        event.location = location
    if meeting_url is not None:
        event.meeting_url = meeting_url
    event.updated_at = ctx.now_iso
    return _event_out(ctx, event)


@service.tool("write")
def move_event(
    ctx: ToolContext,
    event_id: EventId,
    new_start: DateTime,
    new_end: DateTime | None = None,
    reset_responses: bool = True,
) -> EventOut:
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
        room = ctx.get(Room, event.room_id, "room")
        _check_room(ctx, room, s, e, _attendee_count(ctx, event.id), event.id)
    event.start, event.end = s, e
    event.updated_at = ctx.now_iso
    if reset_responses:
        for attendee in ctx.db.scalars(select(Attendee).where(Attendee.event_id == event.id)):
            if not attendee.organizer:
                attendee.response_status = "needs_action"
    return _event_out(ctx, event)


@service.tool("write")
def cancel_event(ctx: ToolContext, event_id: EventId, reason: str | None = None) -> EventOut:
    """Cancel an event: it stays visible as cancelled, frees its room, and can no longer be changed.

    Args:
        event_id: The event to cancel.
        reason: Why it is cancelled, shown to the guests.
    """
    event = _get_event(ctx, event_id)
    if event.status == "cancelled":
        raise ToolError.invalid_state(f"Event {event_id} is already cancelled.")
    event.status = "cancelled"
    event.cancellation_reason = reason.strip() if reason and reason.strip() else None
    event.updated_at = ctx.now_iso
    return _event_out(ctx, event)


@service.tool("write")
def respond_to_event(
    ctx: ToolContext,
    event_id: EventId,
    response: Reply,
    attendee_email: EmailAddress | None = None,
    comment: str | None = None,
) -> EventOut:
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
    if email not in _team_emails(ctx):
        raise ToolError.permission_denied(
            f"{email} is not on the team; guests answer their own invitations. "
            "You can set responses only for colleagues."
        )
    attendee = ctx.db.get(Attendee, (event.id, email))
    if attendee is None:
        raise ToolError.not_found(
            "attendee", email, f"{email} is not invited to event {event_id}; add_attendees first."
        )
    if attendee.organizer and response == "declined":
        raise ToolError.invalid_state(
            f"{email} organises event {event_id} and cannot decline it; use cancel_event or move_event instead."
        )
    attendee.response_status = response
    attendee.comment = comment.strip() if comment and comment.strip() else None
    event.updated_at = ctx.now_iso
    return _event_out(ctx, event)


@service.tool("write")
def add_attendees(
    ctx: ToolContext, event_id: EventId, emails: list[EmailAddress], optional: bool = False
) -> EventOut:
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
        if ctx.db.get(Attendee, (event.id, email)) is not None:
            raise ToolError.conflict(f"{email} is already invited to event {event_id}; leave them out and retry.")
    if event.room_id:
        room = ctx.get(Room, event.room_id, "room")
        count = _attendee_count(ctx, event.id) + len(new)
        if count > room.capacity:
            raise ToolError.conflict(
                f"{room.name} seats {room.capacity}; with these guests event {event_id} would have {count}. "
                "Book a larger room first (release_room, then book_room)."
            )
    for email in new:
        ctx.db.add(
            Attendee(
                event_id=event.id, email=email, name=_person_name(ctx, email), response_status="needs_action",
                organizer=False, optional=optional, comment=None,
            )
        )
    event.updated_at = ctx.now_iso
    ctx.db.flush()
    return _event_out(ctx, event)


@service.tool("write")
def remove_attendee(ctx: ToolContext, event_id: EventId, email: EmailAddress) -> EventOut:
    """Remove one person from an event's guest list. The organiser cannot be removed.

    Args:
        event_id: The event.
        email: The email of the attendee to remove.
    """
    event = _editable(ctx, event_id)
    attendee = ctx.db.get(Attendee, (event.id, email.lower()))
    if attendee is None:
        raise ToolError.not_found("attendee", email, f"{email} is not invited to event {event_id}; see get_event.")
    if attendee.organizer:
        raise ToolError.invalid_state(
            f"{email} organises event {event_id} and cannot be removed; cancel_event it instead."
        )
    ctx.db.delete(attendee)
    event.updated_at = ctx.now_iso
    return _event_out(ctx, event)


@service.tool("write")
def book_room(ctx: ToolContext, event_id: EventId, room_id: RoomId) -> EventOut:
    """Book a room for an existing event; the event's location becomes the room.

    Fails if the room is booked by another event at that time, seats fewer than the attendees, or
    the event already has a room (release_room first).

    Args:
        event_id: The event that needs a room.
        room_id: The room to book (see list_rooms).
    """
    event = _editable(ctx, event_id)
    room = ctx.get(Room, room_id, "room", "Use list_rooms to find room ids.")
    if event.room_id == room.id:
        raise ToolError.invalid_state(f"Event {event_id} already has {room.name} booked.")
    if event.room_id:
        raise ToolError.invalid_state(
            f"Event {event_id} already has room {event.room_id}; release_room it first to switch rooms."
        )
    _check_room(ctx, room, event.start, event.end, _attendee_count(ctx, event.id), event.id)
    event.room_id = room.id
    event.location = f"{room.name}, {room.address}"
    event.updated_at = ctx.now_iso
    return _event_out(ctx, event)


@service.tool("write")
def release_room(ctx: ToolContext, event_id: EventId) -> EventOut:
    """Give up the room booked for an event; the event keeps its time and guests, without a location.

    Args:
        event_id: The event whose room to release.
    """
    event = _editable(ctx, event_id)
    if not event.room_id:
        raise ToolError.invalid_state(f"Event {event_id} has no room booked.")
    event.room_id = None
    event.location = None
    event.updated_at = ctx.now_iso
    return _event_out(ctx, event)


# -- availability --------------------------------------------------------------------------------


@service.tool("read")
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


@service.tool("read")
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
        day = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    except ValueError:
        raise ToolError.invalid_argument(f"date {date!r} is not a valid YYYY-MM-DD date.") from None
    if day.date() < ctx.now.date():
        raise ToolError.invalid_argument(f"date {date} is in the past (today is {ctx.now_iso[:10]}).")
    lo = max(day.replace(hour=WORKDAY_START_HOUR), ctx.now)
    hi = day.replace(hour=WORKDAY_END_HOUR)
    slots: list[TimeSlot] = []
    room = ctx.get(Room, room_id, "room", "Use list_rooms to find room ids.") if room_id else None
    if lo < hi:
        s, e = _iso(lo), _iso(hi)
        busy = [interval for intervals in _busy(ctx, people, s, e).values() for interval in intervals]
        if room is not None:
            busy += [
                (max(a, s), min(b, e))
                for a, b in ctx.db.execute(
                    select(Event.start, Event.end).where(
                        Event.room_id == room.id, Event.status != "cancelled", Event.start < e, Event.end > s
                    )
                ).all()
            ]
        free_from = s
        for a, b in _merge(busy) + [(e, e)]:
            if a > free_from and _minutes(free_from, a) >= duration_minutes:
                slots.append(_slot(free_from, a))
            free_from = max(free_from, b)
    return FreeSlotsOut(
        date=date, attendee_emails=people, room_id=room.id if room else None,
        duration_minutes=duration_minutes, slots=slots,
    )
