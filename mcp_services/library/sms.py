"""SMS: text messages to and from our business phone numbers (modelled on Twilio Messaging and Lookup).

We own a few sender numbers (the main office line is voice only). Outbound messages go to a phone
number from one of them, now or scheduled for later (a scheduled message can be canceled until it is
sent). Delivery is simulated at once and deterministically: a mobile number gets ``delivered``, a
landline gets ``undelivered`` with Twilio error 30006. A number that replied STOP is opted out and
cannot be messaged (error 21610, ``permission_denied``) until it texts START itself.

Correspondents are the world's people, so the number a customer texts from is their CRM phone, and
``lookup_phone_number`` gives the name behind a number (Twilio Lookup's caller name): people, their
companies' main lines (landlines) and our own numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy import String, case, func, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
from mcp_services.kernel.semantic import (
    CompanyName,
    CountryCode,
    Date,
    DateTime,
    EntityId,
    PersonName,
    PhoneNumber,
    Quantity,
    Text,
)
from mcp_services.kernel.world import Person, World

MessageSid = EntityId("sms.message")
NumberSid = EntityId("sms.sender_number")

Direction = Literal["inbound", "outbound-api", "outbound-reply"]
Status = Literal["scheduled", "canceled", "queued", "sent", "delivered", "undelivered", "failed", "received"]
LineType = Literal["mobile", "landline", "voip", "unknown"]

MAX_BODY = 1600  # Twilio's limit for one message body
MIN_SCHEDULE = timedelta(minutes=15)  # Twilio: SendAt must be 15 minutes to 35 days ahead
MAX_SCHEDULE = timedelta(days=35)
STOP_KEYWORDS = ("STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT")
#: Statuses after which a message's body may be redacted (Twilio only redacts "post-flight" messages).
FINAL_STATUSES = ("sent", "delivered", "undelivered", "failed", "received", "canceled")

ERROR_TEXT = {
    30003: "Unreachable destination handset: the phone is off or out of coverage.",
    30006: "Landline or unreachable carrier: the destination number cannot receive SMS.",
}


class Base(DeclarativeBase):
    pass


class SenderNumber(Base):
    __tablename__ = "sender_numbers"
    sid: Mapped[str] = mapped_column(primary_key=True)
    phone_number: Mapped[str] = mapped_column(String(16), unique=True)
    friendly_name: Mapped[str]
    sms_enabled: Mapped[bool]
    is_default: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[str]


class Message(Base):
    __tablename__ = "messages"
    sid: Mapped[str] = mapped_column(primary_key=True)
    direction: Mapped[str]
    from_number: Mapped[str] = mapped_column(index=True)
    to: Mapped[str] = mapped_column(index=True)
    body: Mapped[str]
    status: Mapped[str] = mapped_column(index=True)
    error_code: Mapped[int | None]
    num_segments: Mapped[int]
    date_created: Mapped[str]
    date_sent: Mapped[str | None] = mapped_column(index=True)
    send_at: Mapped[str | None]
    date_updated: Mapped[str]
    redacted: Mapped[bool] = mapped_column(default=False)


class OptOut(Base):
    __tablename__ = "opt_outs"
    phone_number: Mapped[str] = mapped_column(primary_key=True)
    source: Mapped[str]  # keyword (the person texted STOP) | manual (we recorded their request)
    keyword: Mapped[str | None]
    message_sid: Mapped[str | None]  # the inbound STOP message, for keyword opt-outs
    note: Mapped[str | None]
    opted_out_at: Mapped[str]


service = Service(
    "sms",
    "Text messaging from our business phone numbers: send and schedule SMS, read conversations and delivery "
    "status, opt-outs, and look up who a phone number belongs to.",
    Base,
    title="SMS",
)


# -- results -------------------------------------------------------------------------------------


class MessageOut(BaseModel):
    sid: MessageSid
    direction: Direction
    from_number: PhoneNumber
    to: PhoneNumber
    contact_number: PhoneNumber
    contact_name: PersonName | None
    body: Text
    status: Status
    error_code: int | None
    error_message: str | None
    num_segments: Quantity
    date_created: DateTime
    date_sent: DateTime | None
    send_at: DateTime | None
    date_updated: DateTime
    redacted: bool


class ConversationSummaryOut(BaseModel):
    contact_number: PhoneNumber
    contact_name: PersonName | None
    company_name: CompanyName | None
    opted_out: bool
    message_count: int
    inbound_count: int
    our_numbers: list[PhoneNumber]
    last_message_at: DateTime
    last_direction: Direction
    last_body: Text


class ConversationOut(BaseModel):
    contact_number: PhoneNumber
    contact_name: PersonName | None
    company_name: CompanyName | None
    opted_out: bool
    messages: list[MessageOut]
    total: int
    next_cursor: str | None


class SenderNumberOut(BaseModel):
    sid: NumberSid
    phone_number: PhoneNumber
    friendly_name: str
    sms_enabled: bool
    is_default: bool
    messages_sent: int
    created_at: DateTime


class OptOutOut(BaseModel):
    phone_number: PhoneNumber
    contact_name: PersonName | None
    source: Literal["keyword", "manual"]
    keyword: str | None
    message_sid: MessageSid | None
    note: Text | None
    opted_out_at: DateTime


class OptOutAddedOut(BaseModel):
    opt_out: OptOutOut
    canceled_message_sids: list[MessageSid]


class OptOutRemovedOut(BaseModel):
    phone_number: PhoneNumber
    removed: bool


class PhoneLookupOut(BaseModel):
    phone_number: PhoneNumber
    valid: bool
    country_code: CountryCode | None
    line_type: LineType
    caller_name: PersonName | None
    caller_type: Literal["CONSUMER", "BUSINESS"] | None
    company_name: CompanyName | None
    is_ours: bool
    opted_out: bool
    can_receive_sms: bool


class DeletedOut(BaseModel):
    sid: MessageSid
    deleted: bool


# -- the phone directory (Twilio Lookup's caller-name data) -------------------------------------


@dataclass(frozen=True, slots=True)
class _Listing:
    name: str  # caller name: a person's full name or a business name
    company: str | None
    line_type: str
    caller_type: str  # CONSUMER | BUSINESS


_DIRECTORIES: dict[int, dict[str, _Listing]] = {}


def _directory(world: World) -> dict[str, _Listing]:
    """Who is behind each world phone number: people on mobiles, organisations on landlines (cached per seed)."""
    found = _DIRECTORIES.get(world.seed)
    if found is None:
        found = {}
        for org in world.organisations:
            found[org.phone] = _Listing(org.name, org.name, "landline", "BUSINESS")
        for person in world.people:
            company = world.organisation(person.organisation_id).name
            found[person.phone] = _Listing(person.name, company, "mobile", "CONSUMER")
        if len(_DIRECTORIES) >= 32:
            _DIRECTORIES.pop(next(iter(_DIRECTORIES)))
        _DIRECTORIES[world.seed] = found
    return found


def _name_of(ctx: ToolContext, number: str) -> str | None:
    listing = _directory(ctx.world).get(number)
    return listing.name if listing else None


# -- helpers -------------------------------------------------------------------------------------


def _counterpart() -> Any:
    """The other party of a message: the sender of an inbound one, the recipient of an outbound one."""
    return case((Message.direction == "inbound", Message.from_number), else_=Message.to)


def _our_side(m: Message) -> str:
    return m.to if m.direction == "inbound" else m.from_number


def _their_side(m: Message) -> str:
    return m.from_number if m.direction == "inbound" else m.to


def _message_out(ctx: ToolContext, m: Message) -> MessageOut:
    contact = _their_side(m)
    return MessageOut(
        sid=m.sid,
        direction=m.direction,  # type: ignore[arg-type]
        from_number=m.from_number,
        to=m.to,
        contact_number=contact,
        contact_name=_name_of(ctx, contact),
        body=m.body,
        status=m.status,  # type: ignore[arg-type]
        error_code=m.error_code,
        error_message=ERROR_TEXT.get(m.error_code) if m.error_code else None,
        num_segments=m.num_segments,
        date_created=m.date_created,
        date_sent=m.date_sent,
        send_at=m.send_at,
        date_updated=m.date_updated,
        redacted=m.redacted,
    )


def _opt_out_out(ctx: ToolContext, o: OptOut) -> OptOutOut:
    return OptOutOut(
        phone_number=o.phone_number,
        contact_name=_name_of(ctx, o.phone_number),
        source=o.source,  # type: ignore[arg-type]
        keyword=o.keyword,
        message_sid=o.message_sid,
        note=o.note,
        opted_out_at=o.opted_out_at,
    )


def _sender_out(ctx: ToolContext, n: SenderNumber) -> SenderNumberOut:
    return _sender_outs(ctx, [n])[0]


def _sender_outs(ctx: ToolContext, numbers: list[SenderNumber]) -> list[SenderNumberOut]:
    """Sender numbers as results, with how many messages each sent counted in one query."""
    if not numbers:
        return []
    sent = dict(
        ctx.db.execute(
            select(Message.from_number, func.count())
            .where(Message.from_number.in_({n.phone_number for n in numbers}))
            .group_by(Message.from_number)
        ).all()
    )
    return [
        SenderNumberOut(
            sid=n.sid,
            phone_number=n.phone_number,
            friendly_name=n.friendly_name,
            sms_enabled=n.sms_enabled,
            is_default=n.is_default,
            messages_sent=sent.get(n.phone_number, 0),
            created_at=n.created_at,
        )
        for n in numbers
    ]


def _segments(body: str) -> int:
    """SMS segments: one up to 160 characters, else 153 per segment (concatenated SMS headers)."""
    return 1 if len(body) <= 160 else math.ceil(len(body) / 153)


def _parse_time(value: str, what: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ToolError.invalid_argument(
            f"{what} {value!r} is not an ISO 8601 UTC time like 2025-03-14T09:00:00Z."
        ) from exc
    return parsed


def _get_message(ctx: ToolContext, sid: str) -> Message:
    return ctx.get(Message, sid, "message", "Use list_messages or get_conversation to find message sids.")


def _sender(ctx: ToolContext, from_number: str | None) -> SenderNumber:
    """The sender number to use: the one named (it must be ours and SMS-capable), else the default."""
    if from_number is None:
        number = ctx.db.scalar(select(SenderNumber).where(SenderNumber.is_default.is_(True)))
        if number is None:
            raise ToolError.invalid_state(
                "No default sender number is set; pass from_number (see list_sender_numbers)."
            )
    else:
        number = ctx.db.scalar(select(SenderNumber).where(SenderNumber.phone_number == from_number))
        if number is None:
            ours = ", ".join(ctx.db.scalars(select(SenderNumber.phone_number).where(SenderNumber.sms_enabled)))
            raise ToolError.permission_denied(
                f"{from_number} is not one of our numbers, so we cannot send from it. Our SMS numbers: {ours}."
            )
    if not number.sms_enabled:
        raise ToolError.permission_denied(
            f"{number.phone_number} ({number.friendly_name}) is voice only and cannot send SMS; "
            "pick an SMS-capable number from list_sender_numbers."
        )
    return number


def _check_recipient(ctx: ToolContext, to: str) -> None:
    if ctx.db.scalar(select(SenderNumber.sid).where(SenderNumber.phone_number == to)):
        raise ToolError.invalid_argument(f"{to} is one of our own numbers; send to the customer's number instead.")
    opt_out = ctx.db.get(OptOut, to)
    if opt_out is not None:
        how = "texted " + (opt_out.keyword or "STOP") if opt_out.source == "keyword" else "asked not to be texted"
        raise ToolError.permission_denied(
            f"{to} has opted out of our messages ({how} on {opt_out.opted_out_at[:10]}); Twilio error 21610. "
            "Reach this person another way, e.g. by email."
        )


def _check_body(body: str) -> str:
    body = body.strip()
    if not body:
        raise ToolError.invalid_argument("The message body is empty; write the text to send.")
    if len(body) > MAX_BODY:
        raise ToolError.invalid_argument(f"The body has {len(body)} characters; the limit is {MAX_BODY}. Shorten it.")
    return body


def _outcome(ctx: ToolContext, to: str) -> tuple[str, int | None]:
    """Simulated delivery: landlines cannot receive SMS (30006); everything else is delivered."""
    listing = _directory(ctx.world).get(to)
    if listing is not None and listing.line_type == "landline":
        return "undelivered", 30006
    return "delivered", None


def _create_message(
    ctx: ToolContext, sender: SenderNumber, to: str, body: str, direction: str, send_at: str | None = None
) -> Message:
    if send_at is not None:
        status, error, sent = "scheduled", None, None
    else:
        (status, error), sent = _outcome(ctx, to), ctx.now_iso
    message = Message(
        sid=ctx.new_id("SM"),
        direction=direction,
        from_number=sender.phone_number,
        to=to,
        body=body,
        status=status,
        error_code=error,
        num_segments=_segments(body),
        date_created=ctx.now_iso,
        date_sent=sent,
        send_at=send_at,
        date_updated=ctx.now_iso,
        redacted=False,
    )
    ctx.db.add(message)
    ctx.db.flush()
    return message


# -- seed ----------------------------------------------------------------------------------------

# Conversation scripts: (who, sender line, text). who: "out" (we text them) or "in" (they text us).
_SCRIPTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "shipping": (
        ("out", "sales", "{home}: your order {order} ({qty} x {product}) has shipped. Tracking: {tracking}. "
         "Reply STOP to opt out."),
        ("in", "sales", "Great, thanks!"),
    ),
    "appointment": (
        ("out", "appointments", "Reminder: your {service} with {agent} is on {date} at {time}, {place}. Reply C to "
         "confirm or R to reschedule."),
        ("in", "appointments", "C"),
        ("out", "appointments", "Thanks {first}, you're confirmed for {date} at {time}."),
    ),
    "reschedule": (
        ("out", "appointments", "Reminder: your {service} with {agent} is on {date} at {time}, {place}. Reply C to "
         "confirm or R to reschedule."),
        ("in", "appointments", "R - could we do {alt_time} instead?"),
        ("out", "appointments", "No problem {first}, you're now booked for {date} at {alt_time}."),
    ),
    "invoice": (
        ("out", "billing", "{home} Billing: invoice {inv} for {amount} is due on {date}. Questions? Just reply "
         "to this message."),
        ("in", "billing", "Paid this morning, bank reference {ref}."),
        ("out", "billing", "Thanks {first}, we've received your payment for {inv}."),
    ),
    "declined": (
        ("out", "billing", "{home} Billing: the card payment of {amount} for invoice {inv} was declined. Please "
         "update your card at https://pay.{domain}/{inv}"),
        ("in", "billing", "Sorry about that, I've updated the card. Can you retry the charge?"),
    ),
    "support": (
        ("in", "support", "Hi, this is {first} from {company}. {product} stopped working for us this morning, "
         "can someone call me?"),
        ("out", "support", "Hi {first}, this is {agent} from {home} support. I've opened ticket {ticket}; we'll "
         "call you within the hour."),
        ("in", "support", "Thanks, talk soon."),
    ),
    "code": (
        ("out", "support", "Your {home} verification code is {code}. It expires in 10 minutes."),
    ),
    "delivery": (
        ("out", "sales", "{home}: the delivery for order {order} is planned for {date} between 09:00 and 12:00. "
         "Reply 1 to confirm or call us to change it."),
        ("in", "sales", "1"),
    ),
}
_STOP_SCRIPT = (
    ("out", "sales", "{home}: 20% off {product} until {date} with code SAVE20. Reply STOP to opt out."),
    ("in", "sales", "STOP"),
    ("out", "sales", "You have successfully been unsubscribed. You will not receive any more messages from this "
     "number. Reply START to resubscribe."),
)
_SCHEDULED = (
    ("appointments", "Reminder: your {service} with {agent} is tomorrow at {time}, {place}. Reply C to confirm."),
    ("billing", "{home} Billing: invoice {inv} for {amount} is due in 3 days. Thank you!"),
    ("sales", "{home}: your {product} subscription renews on {date}. Reply with any questions."),
)
_STRANGERS = (
    "Hi, is this {home}? I'd like a quote for {qty} x {product}.",
    "Who is this? I got a missed call from this number.",
    "Wrong number, sorry!",
    "Do you deliver to {city}?",
)
_ALERTS = (
    "On-call alert: ticket {ticket} ({company}) escalated to P1. Please check the support queue.",
    "Reminder: ops sync moved to {date} at {time}.",
)
_SERVICES = ("onboarding workshop", "training session", "account review", "product demo", "data migration call")


@dataclass
class _SeedMessage:
    direction: str
    ours: str  # our number
    theirs: str  # their number
    body: str
    at: datetime
    status: str
    error: int | None = None
    send_at: datetime | None = None


def _facts(rng: Any, world: World, person: Person | None, category: str | None = None) -> dict[str, str]:
    product = rng.choice([p for p in world.products if category in (None, p.category)] or list(world.products))
    qty = rng.randint(1, 4) if product.unit_price >= 500 else rng.randint(2, 30)
    future = world.now_dt + timedelta(days=rng.randint(1, 12))
    agent = rng.choice(world.team[1:])
    org = world.organisation(person.organisation_id) if person else world.home
    hour = rng.choice((9, 10, 11, 14, 15, 16))
    return {
        "home": world.home.name,
        "domain": world.home.domain,
        "first": person.first_name if person else "there",
        "company": org.name,
        "city": org.city,
        "product": product.name,
        "qty": str(qty),
        "amount": f"{product.unit_price * qty:,.2f} {world.currency}",
        "order": f"ORD-{rng.randint(10000, 99999)}",
        "inv": f"INV-{world.now_dt.year}-{rng.randint(1000, 9999)}",
        "ref": f"TRF{rng.randint(100000, 999999)}",
        "ticket": f"T-{rng.randint(1000, 1999)}",
        "tracking": f"1Z{rng.randint(10**9, 10**10 - 1)}",
        "code": f"{rng.randint(0, 999999):06d}",
        "service": rng.choice(_SERVICES),
        "agent": agent.first_name,
        "date": f"{future:%a} {future.day} {future:%b}",
        "time": f"{hour}:00",
        "alt_time": f"{hour + 1}:30",
        "place": rng.choice(world.places).name,
    }


def _delivery(rng: Any, directory: dict[str, _Listing], to: str) -> tuple[str, int | None]:
    if directory.get(to, _Listing("", None, "mobile", "CONSUMER")).line_type == "landline":
        return "undelivered", 30006
    roll = rng.random()
    if roll < 0.04:
        return "undelivered", 30003
    if roll < 0.09:
        return "sent", None  # no delivery receipt from the carrier yet
    return "delivered", None


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    now = world.now_dt
    directory = _directory(world)

    taken = set(directory)

    def fresh_number() -> str:
        while True:
            number = f"+1{rng.randint(201, 989)}555{rng.randint(1000, 9999)}"
            if number not in taken:
                taken.add(number)
                return number

    lines = {
        "main": ("Main office line", world.home.phone, False),
        "support": ("Support line", fresh_number(), True),
        "sales": ("Sales", fresh_number(), True),
        "billing": ("Billing", fresh_number(), True),
        "appointments": ("Appointments", fresh_number(), True),
    }
    ours: dict[str, str] = {}
    for key, (friendly, number, sms) in lines.items():
        ctx.db.add(
            SenderNumber(
                sid=ctx.new_id("PN"),
                phone_number=number,
                friendly_name=friendly,
                sms_enabled=sms,
                is_default=key == "support",
                created_at=ctx.days_from_now(-rng.randint(200, 800)),
            )
        )
        ours[key] = number

    messages: list[_SeedMessage] = []

    def play(script: tuple[tuple[str, str, str], ...], theirs: str, facts: dict[str, str], start: datetime,
             n_steps: int) -> list[_SeedMessage]:
        at, played = start, []
        for i, (who, line, text) in enumerate(script[:n_steps]):
            if i:
                at = at + timedelta(minutes=rng.randint(2, 300))
            if at >= now - timedelta(minutes=5):
                break
            if who == "out":
                status, error = _delivery(rng, directory, theirs)
                msg = _SeedMessage("outbound-api", ours[line], theirs, text.format(**facts), at, status, error)
            else:
                msg = _SeedMessage("inbound", ours[line], theirs, text.format(**facts), at, "received")
            played.append(msg)
        messages.extend(played)
        return played

    def start_time(max_days: float = 60.0, min_days: float = 0.1) -> datetime:
        return (now - timedelta(days=rng.uniform(min_days, max_days))).replace(microsecond=0)

    customers = list(world.customers)
    rng.shuffle(customers)
    regulars, stoppers, manual = customers[:44], customers[44:48], customers[48:50]
    names = list(_SCRIPTS)
    for person in regulars:
        for _ in range(rng.choice((1, 2, 2, 3, 3))):
            script = _SCRIPTS[rng.choice(names)]
            play(script, person.phone, _facts(rng, world, person), start_time(), rng.randint(1, len(script)))

    opt_outs: list[tuple[str, _SeedMessage | None, str]] = []
    for person in stoppers:
        first = _SCRIPTS[rng.choice(("shipping", "invoice", "delivery"))]
        play(first, person.phone, _facts(rng, world, person), start_time(60.0) - timedelta(days=30), len(first))
        # Started a day or more ago, so the STOP reply always lands before the frozen clock.
        played = play(_STOP_SCRIPT, person.phone, _facts(rng, world, person), start_time(25.0, 1.0), 3)
        stop = next((m for m in played if m.body == "STOP"), None)
        if stop is not None:
            opt_outs.append((person.phone, stop, "keyword"))
    for person in manual:
        # Texted once, before they asked (by email, 3-40 days ago) not to be texted again.
        play(_SCRIPTS["shipping"], person.phone, _facts(rng, world, person), start_time(60.0, 41.0), 1)
        opt_outs.append((person.phone, None, "manual"))

    # Texts to companies' main lines bounce: they are landlines (lookup_phone_number shows it).
    for org in rng.sample(list(world.organisations[1:]), 4):
        facts = _facts(rng, world, None)
        text = "{home} Billing: please call us back about invoice {inv} ({amount}).".format(**facts)
        messages.append(
            _SeedMessage("outbound-api", ours["billing"], org.phone, text, start_time(), "undelivered", 30006)
        )
    for template in _STRANGERS:
        stranger = fresh_number()
        facts = _facts(rng, world, None)
        messages.append(_SeedMessage("inbound", ours["support"], stranger, template.format(**facts), start_time(20.0),
                                     "received"))
    for colleague in world.team[1:]:
        if colleague.job_title in ("support lead", "support agent", "engineering lead"):
            for template in _ALERTS:
                facts = _facts(rng, world, rng.choice(world.customers))
                messages.append(_SeedMessage("outbound-api", ours["support"], colleague.phone,
                                             template.format(**facts), start_time(30.0), "delivered"))
    # Scheduled reminders (some already canceled), never to opted-out people.
    for i, person in enumerate(rng.sample(regulars, 10)):
        line, template = rng.choice(_SCHEDULED)
        created = start_time(5.0)
        day = now + timedelta(days=rng.randint(1, 10))
        send_at = day.replace(hour=rng.choice((8, 9, 10, 14, 16)), minute=0, second=0, microsecond=0)
        facts = _facts(rng, world, person, "subscriptions" if line == "sales" else None)
        due = send_at + timedelta(days=3)
        facts["date"] = f"{due:%a} {due.day} {due:%b}"  # the text speaks of 3 days after it is sent
        status = "canceled" if i < 2 else "scheduled"
        messages.append(
            _SeedMessage("outbound-api", ours[line], person.phone, template.format(**facts), created, status,
                         send_at=send_at)
        )

    # Sids follow creation time, as they would in a real account.
    messages.sort(key=lambda m: m.at)
    sid_of: dict[int, str] = {}
    for msg in messages:
        sid = ctx.new_id("SM")
        sid_of[id(msg)] = sid
        at = ctx.iso(msg.at)
        sent = None if msg.send_at is not None else at
        ctx.db.add(
            Message(
                sid=sid,
                direction=msg.direction,
                from_number=msg.theirs if msg.direction == "inbound" else msg.ours,
                to=msg.ours if msg.direction == "inbound" else msg.theirs,
                body=msg.body,
                status=msg.status,
                error_code=msg.error,
                num_segments=_segments(msg.body),
                date_created=at,
                date_sent=sent,
                send_at=ctx.iso(msg.send_at) if msg.send_at else None,
                date_updated=at,
                redacted=False,
            )
        )
    for number, stop, source in opt_outs:
        when = ctx.iso(stop.at) if stop else ctx.days_from_now(-rng.uniform(3, 40))
        ctx.db.add(
            OptOut(
                phone_number=number,
                source=source,
                keyword="STOP" if stop else None,
                message_sid=sid_of[id(stop)] if stop else None,
                note=None if stop else "Asked by email not to receive text messages.",
                opted_out_at=when,
            )
        )


# -- messages ------------------------------------------------------------------------------------


@service.tool("write")
def send_message(
    ctx: ToolContext,
    to: PhoneNumber,
    body: Text,
    from_number: PhoneNumber | None = None,
    send_at: DateTime | None = None,
) -> MessageOut:
    """Send an SMS to a phone number from one of our numbers, now or scheduled for later.

    Without send_at the message goes out at once and its delivery status is final in the result
    (delivered, or undelivered when the number is a landline). With send_at it is scheduled and can be
    canceled with cancel_message until then. A number that opted out (texted STOP) cannot be messaged.

    Args:
        to: The recipient's phone number in E.164 form, e.g. +14155550123.
        body: The text, up to 1600 characters (long texts are split into 153-character segments).
        from_number: Which of our numbers to send from (see list_sender_numbers); default: the default sender.
        send_at: Schedule for this UTC time (ISO 8601), at least 15 minutes and at most 35 days from now.
    """
    sender = _sender(ctx, from_number)
    _check_recipient(ctx, to)
    text = _check_body(body)
    when = None
    if send_at is not None:
        moment = _parse_time(send_at, "send_at")
        if not ctx.now + MIN_SCHEDULE <= moment <= ctx.now + MAX_SCHEDULE:
            raise ToolError.invalid_argument(
                f"send_at must be between 15 minutes and 35 days after now ({ctx.now_iso}); got {send_at}. "
                "Omit send_at to send immediately."
            )
        when = ctx.iso(moment)
    message = _create_message(ctx, sender, to, text, "outbound-api", when)
    return _message_out(ctx, message)


@service.tool("write")
def reply_to_message(ctx: ToolContext, message_sid: MessageSid, body: Text) -> MessageOut:
    """Reply to a text someone sent us: the reply goes back to them from the number they wrote to.

    Args:
        message_sid: The inbound message to answer, e.g. SM_0042.
        body: The reply text, up to 1600 characters.
    """
    original = _get_message(ctx, message_sid)
    if original.direction != "inbound":
        raise ToolError.invalid_argument(
            f"{message_sid} is a message we sent, not one we received; use send_message to text {original.to} again."
        )
    sender = _sender(ctx, original.to)
    _check_recipient(ctx, original.from_number)
    message = _create_message(ctx, sender, original.from_number, _check_body(body), "outbound-reply")
    return _message_out(ctx, message)


@service.tool("read")
def list_messages(
    ctx: ToolContext,
    to: PhoneNumber | None = None,
    from_number: PhoneNumber | None = None,
    status: Status | None = None,
    direction: Literal["inbound", "outbound"] | None = None,
    date_sent: Date | None = None,
    date_sent_after: Date | None = None,
    date_sent_before: Date | None = None,
    query: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[MessageOut]:
    """List messages, newest first, filtered like Twilio's message log. Every filter you pass must match.

    Scheduled and canceled messages have no date_sent, so the date filters leave them out; find them with
    status=scheduled.

    Args:
        to: Only messages sent to this number.
        from_number: Only messages sent from this number.
        status: Only messages in this status: scheduled, canceled, queued, sent, delivered, undelivered, failed or
            received.
        direction: inbound (texts we received) or outbound (texts we sent, replies included).
        date_sent: Only messages sent on this day (YYYY-MM-DD, UTC).
        date_sent_after: Only messages sent on or after this day.
        date_sent_before: Only messages sent on or before this day.
        query: Text the message body must contain (case-insensitive).
        limit: Maximum number of messages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Message).order_by(func.coalesce(Message.date_sent, Message.date_created).desc(), Message.sid.desc())
    if to:
        stmt = stmt.where(Message.to == to)
    if from_number:
        stmt = stmt.where(Message.from_number == from_number)
    if status:
        stmt = stmt.where(Message.status == status)
    if direction == "inbound":
        stmt = stmt.where(Message.direction == "inbound")
    elif direction == "outbound":
        stmt = stmt.where(Message.direction != "inbound")
    if date_sent:
        stmt = stmt.where(Message.date_sent.like(f"{date_sent}%"))
    if date_sent_after:
        stmt = stmt.where(Message.date_sent >= date_sent_after)
    if date_sent_before:
        stmt = stmt.where(Message.date_sent <= f"{date_sent_before}T23:59:59Z")
    if query and query.strip():
        needle = query.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        stmt = stmt.where(Message.body.ilike(f"%{needle}%", escape="\\"))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[MessageOut](items=[_message_out(ctx, m) for m in rows], total=total, next_cursor=next_cursor)


@service.tool("read")
def get_message(ctx: ToolContext, message_sid: MessageSid) -> MessageOut:
    """Get one message with its delivery status (and the error when it was not delivered).

    Args:
        message_sid: The message's sid, e.g. SM_0042.
    """
    return _message_out(ctx, _get_message(ctx, message_sid))


@service.tool("write")
def cancel_message(ctx: ToolContext, message_sid: MessageSid) -> MessageOut:
    """Cancel a scheduled message before it is sent. Messages already sent cannot be canceled.

    Args:
        message_sid: The scheduled message to cancel (list_messages with status=scheduled lists them).
    """
    message = _get_message(ctx, message_sid)
    if message.status == "canceled":
        raise ToolError.invalid_state(f"Message {message_sid} is already canceled.")
    if message.status != "scheduled":
        raise ToolError.invalid_state(
            f"Message {message_sid} is not scheduled (status {message.status}); only scheduled messages can be "
            "canceled."
        )
    message.status = "canceled"
    message.date_updated = ctx.now_iso
    return _message_out(ctx, message)


@service.tool("write")
def redact_message(ctx: ToolContext, message_sid: MessageSid) -> MessageOut:
    """Erase the text of a message from our records (e.g. it held personal data); the log entry stays.

    Only messages that are no longer in flight can be redacted: cancel a scheduled message instead.

    Args:
        message_sid: The message whose body to erase.
    """
    message = _get_message(ctx, message_sid)
    if message.redacted:
        raise ToolError.invalid_state(f"Message {message_sid} is already redacted.")
    if message.status not in FINAL_STATUSES:
        raise ToolError.invalid_state(
            f"Message {message_sid} is still {message.status}; cancel_message it instead of redacting it."
        )
    message.body = ""
    message.redacted = True
    message.date_updated = ctx.now_iso
    return _message_out(ctx, message)


@service.tool("write")
def delete_message(ctx: ToolContext, message_sid: MessageSid) -> DeletedOut:
    """Delete a message from our log for good. A scheduled message must be canceled first.

    Args:
        message_sid: The message to delete.
    """
    message = _get_message(ctx, message_sid)
    if message.status == "scheduled":
        raise ToolError.invalid_state(f"Message {message_sid} is scheduled; cancel_message it before deleting it.")
    ctx.db.delete(message)
    return DeletedOut(sid=message_sid, deleted=True)


# -- conversations -------------------------------------------------------------------------------


@service.tool("read")
def list_conversations(
    ctx: ToolContext,
    name: PersonName | None = None,
    our_number: PhoneNumber | None = None,
    opted_out: bool | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[ConversationSummaryOut]:
    """List the people and numbers we have texted with, most recent conversation first.

    Args:
        name: Only conversations with someone whose name (or company) contains this text, e.g. a person's name.
        our_number: Only messages to or from this one of our numbers.
        opted_out: true: only numbers that opted out; false: only those we may still text.
        limit: Maximum number of conversations to return (1-100).
        cursor: next_cursor from a previous page.
    """
    contact = _counterpart()
    last = func.max(func.coalesce(Message.date_sent, Message.date_created))
    stmt = select(contact).group_by(contact).order_by(last.desc(), contact)
    if our_number:
        stmt = stmt.where(or_(Message.from_number == our_number, Message.to == our_number))
    if name and name.strip():
        needle = name.strip().lower()
        numbers = [
            n for n, listing in _directory(ctx.world).items()
            if needle in listing.name.lower() or needle in (listing.company or "").lower()
        ]
        stmt = stmt.where(contact.in_(numbers))
    if opted_out is not None:
        stopped = select(OptOut.phone_number)
        stmt = stmt.where(contact.in_(stopped) if opted_out else contact.not_in(stopped))
    numbers_page, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    # Every message of the page's conversations in one query, oldest first, grouped by contact here.
    mine = select(Message).where(_counterpart().in_(numbers_page))
    if our_number:
        mine = mine.where(or_(Message.from_number == our_number, Message.to == our_number))
    by_number: dict[str, list[Message]] = {}
    for m in ctx.db.scalars(mine.order_by(func.coalesce(Message.date_sent, Message.date_created), Message.sid)):
        by_number.setdefault(_their_side(m), []).append(m)
    stopped = set(ctx.db.scalars(select(OptOut.phone_number).where(OptOut.phone_number.in_(numbers_page))))
    items = []
    for number in numbers_page:
        rows = by_number[number]
        last_msg = rows[-1]
        listing = _directory(ctx.world).get(number)
        items.append(
            ConversationSummaryOut(
                contact_number=number,
                contact_name=listing.name if listing else None,
                company_name=listing.company if listing else None,
                opted_out=number in stopped,
                message_count=len(rows),
                inbound_count=sum(m.direction == "inbound" for m in rows),
                our_numbers=list(dict.fromkeys(_our_side(m) for m in rows)),
                last_message_at=last_msg.date_sent or last_msg.date_created,
                last_direction=last_msg.direction,  # type: ignore[arg-type]
                last_body=last_msg.body,
            )
        )
    return Page[ConversationSummaryOut](items=items, total=total, next_cursor=next_cursor)


@service.tool("read")
def get_conversation(
    ctx: ToolContext, phone_number: PhoneNumber, limit: Limit = 20, cursor: Cursor = None
) -> ConversationOut:
    """Get the text conversation with one phone number (both directions, all our numbers), newest first.

    Args:
        phone_number: The other party's number in E.164 form.
        limit: Maximum number of messages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = (
        select(Message)
        .where(_counterpart() == phone_number)
        .order_by(func.coalesce(Message.date_sent, Message.date_created).desc(), Message.sid.desc())
    )
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    if total == 0:
        raise ToolError.not_found(
            "conversation", phone_number, "We have no messages with that number; send_message starts a conversation."
        )
    listing = _directory(ctx.world).get(phone_number)
    return ConversationOut(
        contact_number=phone_number,
        contact_name=listing.name if listing else None,
        company_name=listing.company if listing else None,
        opted_out=ctx.db.get(OptOut, phone_number) is not None,
        messages=[_message_out(ctx, m) for m in rows],
        total=total,
        next_cursor=next_cursor,
    )


# -- lookup --------------------------------------------------------------------------------------


@service.tool("read")
def lookup_phone_number(ctx: ToolContext, phone_number: PhoneNumber) -> PhoneLookupOut:
    """Look up a phone number: who it belongs to (caller name and company, when known), its line type, and
    whether we can text it (landlines cannot receive SMS; opted-out numbers may not be texted).

    Args:
        phone_number: The number to look up, in E.164 form, e.g. +14155550123.
    """
    ours = ctx.db.scalar(select(SenderNumber).where(SenderNumber.phone_number == phone_number))
    opted_out = ctx.db.get(OptOut, phone_number) is not None
    home = ctx.world.home.name
    if ours is not None:
        line_type = "voip" if ours.sms_enabled else "landline"
        return PhoneLookupOut(
            phone_number=phone_number, valid=True, country_code="US", line_type=line_type, caller_name=home,
            caller_type="BUSINESS", company_name=home, is_ours=True, opted_out=False, can_receive_sms=False,
        )
    listing = _directory(ctx.world).get(phone_number)
    line_type = listing.line_type if listing else ("mobile" if phone_number.startswith("+1") else "unknown")
    return PhoneLookupOut(
        phone_number=phone_number,
        valid=True,
        country_code="US" if phone_number.startswith("+1") else None,
        line_type=line_type,  # type: ignore[arg-type]
        caller_name=listing.name if listing else None,
        caller_type=listing.caller_type if listing else None,  # type: ignore[arg-type]
        company_name=listing.company if listing else None,
        is_ours=False,
        opted_out=opted_out,
        can_receive_sms=line_type != "landline" and not opted_out,
    )


# -- opt-outs ------------------------------------------------------------------------------------


@service.tool("read")
def list_opt_outs(
    ctx: ToolContext, phone_number: PhoneNumber | None = None, limit: Limit = 20, cursor: Cursor = None
) -> Page[OptOutOut]:
    """List the numbers that opted out of our texts, most recent first.

    Args:
        phone_number: Only this number (an empty page means it has not opted out).
        limit: Maximum number of opt-outs to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(OptOut).order_by(OptOut.opted_out_at.desc(), OptOut.phone_number)
    if phone_number:
        stmt = stmt.where(OptOut.phone_number == phone_number)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[OptOutOut](items=[_opt_out_out(ctx, o) for o in rows], total=total, next_cursor=next_cursor)


@service.tool("write")
def add_opt_out(ctx: ToolContext, phone_number: PhoneNumber, note: Text | None = None) -> OptOutAddedOut:
    """Record that a person asked not to be texted (e.g. by email or on the phone). From now on no message
    can be sent to the number, and its scheduled messages are canceled.

    Args:
        phone_number: The number to stop texting, in E.164 form.
        note: Why, e.g. "Asked by email on 12 March".
    """
    if ctx.db.scalar(select(SenderNumber.sid).where(SenderNumber.phone_number == phone_number)):
        raise ToolError.invalid_argument(f"{phone_number} is one of our own numbers; it cannot opt out.")
    if ctx.db.get(OptOut, phone_number) is not None:
        raise ToolError.conflict(f"{phone_number} has already opted out; list_opt_outs shows since when.")
    opt_out = OptOut(
        phone_number=phone_number,
        source="manual",
        keyword=None,
        message_sid=None,
        note=note.strip() if note and note.strip() else None,
        opted_out_at=ctx.now_iso,
    )
    ctx.db.add(opt_out)
    canceled = []
    for message in ctx.db.scalars(
        select(Message).where(Message.to == phone_number, Message.status == "scheduled").order_by(Message.sid)
    ):
        message.status = "canceled"
        message.date_updated = ctx.now_iso
        canceled.append(message.sid)
    ctx.db.flush()
    return OptOutAddedOut(opt_out=_opt_out_out(ctx, opt_out), canceled_message_sids=canceled)


@service.tool("write")
def remove_opt_out(ctx: ToolContext, phone_number: PhoneNumber) -> OptOutRemovedOut:
    """Take a number off the opt-out list after the person asked to receive texts again.

    Only opt-outs we recorded ourselves (add_opt_out) can be removed. A number that texted STOP can only opt
    back in by texting START itself: carriers do not let a sender override it.

    Args:
        phone_number: The opted-out number.
    """
    opt_out = ctx.get(OptOut, phone_number, "opt-out", "That number has not opted out; list_opt_outs lists them.")
    if opt_out.source == "keyword":
        raise ToolError.permission_denied(
            f"{phone_number} opted out by texting {opt_out.keyword or 'STOP'}; only the person can opt back in, by "
            "texting START to our number."
        )
    ctx.db.delete(opt_out)
    return OptOutRemovedOut(phone_number=phone_number, removed=True)


# -- our numbers ---------------------------------------------------------------------------------


@service.tool("read")
def list_sender_numbers(ctx: ToolContext, sms_enabled: bool | None = None) -> list[SenderNumberOut]:
    """List our own phone numbers: which can send SMS, which one is the default sender, and how much each sent.

    Args:
        sms_enabled: true: only numbers that can send SMS; false: only voice-only numbers.
    """
    stmt = select(SenderNumber).order_by(SenderNumber.sid)
    if sms_enabled is not None:
        stmt = stmt.where(SenderNumber.sms_enabled.is_(sms_enabled))
    return _sender_outs(ctx, list(ctx.db.scalars(stmt)))


@service.tool("write")
def update_sender_number(
    ctx: ToolContext, number_sid: NumberSid, friendly_name: str | None = None, make_default: bool = False
) -> SenderNumberOut:
    """Rename one of our numbers, or make it the default sender for send_message.

    Args:
        number_sid: The number's sid, e.g. PN_0002 (see list_sender_numbers).
        friendly_name: A new display name, e.g. Support line.
        make_default: Make this number the default sender (it must be able to send SMS).
    """
    number = ctx.get(SenderNumber, number_sid, "sender number", "Use list_sender_numbers to find number sids.")
    if friendly_name is None and not make_default:
        raise ToolError.invalid_argument("Pass friendly_name or make_default=true.")
    if friendly_name is not None:
        if not friendly_name.strip():
            raise ToolError.invalid_argument("friendly_name must not be empty.")
        number.friendly_name = friendly_name.strip()
    if make_default:
        if not number.sms_enabled:
            raise ToolError.invalid_state(
                f"{number.phone_number} ({number.friendly_name}) is voice only and cannot be the default SMS sender."
            )
        if number.is_default and friendly_name is None:
            raise ToolError.invalid_state(f"{number.phone_number} is already the default sender.")
        for other in ctx.db.scalars(select(SenderNumber).where(SenderNumber.is_default.is_(True))):
            other.is_default = False
        number.is_default = True
    ctx.db.flush()
    return _sender_out(ctx, number)
