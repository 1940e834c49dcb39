"""SMS: text messages to and from our business phone numbers (modelled on Twilio Messaging and Lookup).

We own a few sender numbers (the main office line is voice only). Outbound messages go to a phone
number from one of them, now or scheduled for later (a scheduled message can be canceled until it is
sent). Delivery is simulated at once and deterministically: a mobile number gets ``delivered``, a
landline gets ``undelivered`` with Twilio error 30006. A number that replied STOP is opted out and
cannot be messaged (error 21610, ``permission_denied``) until it texts START itself.

Who can receive a text is data, not a hidden rule: the phone directory (Twilio Lookup's data, the
``phone_directory`` table) holds every known number's line type (people's mobiles, companies' main
lines, which are landlines) and owner; every message names its contact's ``contact_line_type``, and
``lookup_phone_number`` says ``can_receive_sms``. Correspondents are the world's people, so the
number a customer texts from is their CRM phone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, WithJsonSchema

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field
from mcp_services.kernel.entity import runtime_of
from mcp_services.kernel.pagination import decode_cursor
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.schema import StateDef
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
    moment,
)
from mcp_services.kernel.plans.commerce import PlannedOrder, commerce_plan
from mcp_services.kernel.prose import industry_facts, write
from mcp_services.kernel.world import Person, PlannedInvoice, World

MessageSid = EntityId("sms.message")
NumberSid = EntityId("sms.sender_number")
OptOutId = EntityId("sms.opt_out")
PhoneId = EntityId("sms.phone")

Direction = Literal["inbound", "outbound-api", "outbound-reply"]
Status = Literal["scheduled", "canceled", "queued", "sent", "delivered", "undelivered", "failed", "received"]
LineType = Literal["mobile", "landline", "voip", "unknown"]
CallerType = Literal["CONSUMER", "BUSINESS"]

MAX_BODY = 1600  # Twilio's limit for one message body
MIN_SCHEDULE = timedelta(minutes=15)  # Twilio: SendAt must be 15 minutes to 35 days ahead
MAX_SCHEDULE = timedelta(days=35)
#: Statuses after which a message's body may be redacted (Twilio only redacts "post-flight" messages).
FINAL_STATUSES = ("sent", "delivered", "undelivered", "failed", "received", "canceled")
#: Twilio's sid prefixes (KeyDef prefixes are lowercase only, so the entities declare none).
MESSAGE_PREFIX, NUMBER_PREFIX = "SM", "PN"

ERROR_TEXT = {
    30003: "Unreachable destination handset: the phone is off or out of coverage.",
    30006: "Landline or unreachable carrier: the destination number cannot receive SMS.",
}
#: The other party of a message, in SQL: the sender of an inbound one, the recipient of an outbound one.
_CONTACT_SQL = "CASE WHEN direction = 'inbound' THEN from_number ELSE \"to\" END"

service = Service(
    "sms",
    "Text messaging from our business phone numbers: send and schedule SMS, read conversations and delivery "
    "status, opt-outs, and look up who a phone number belongs to.",
    title="SMS",
)


# -- entities ------------------------------------------------------------------------------------


@service.entity(table="phone_directory", prefix="ph", label="caller_name", search=("caller_name", "company_name"))
class Phone:
    """What Twilio Lookup knows about a phone number: who it belongs to and what kind of line it is."""

    id: PhoneId
    phone_number: PhoneNumber = field(unique=True, role="self")
    line_type: LineType
    caller_name: PersonName | None = field(None, role="self")
    caller_type: CallerType | None = None
    company_name: CompanyName | None = field(None, role="company")

    can_receive_sms = derived(bool, lambda p: p.line_type != "landline")


# -- values of returned records that other rows hold ---------------------------------------------


def _their_side(m: Message) -> str:
    return m.from_number if m.direction == "inbound" else m.to


def _our_side(m: Message) -> str:
    return m.to if m.direction == "inbound" else m.from_number


def _line_type(number: str, phone: Phone | None) -> LineType:
    """The directory's line type; a number it does not know is a mobile if it is North American."""
    if phone is not None:
        return phone.line_type
    return "mobile" if number.startswith("+1") else "unknown"


def _phones(db: RecordAccess, numbers: Iterable[str]) -> dict[str, Phone]:
    """The directory entries of these numbers (those it knows), in one query."""
    return {p.phone_number: p for p in db.query(Phone).where_in("phone_number", set(numbers)).all()}


def _caller_names(db: RecordAccess, numbers: Sequence[str]) -> list[str | None]:
    phones = _phones(db, numbers)
    return [phones[n].caller_name if n in phones else None for n in numbers]


def _contact_names(db: RecordAccess, messages: Sequence[Message]) -> list[str | None]:
    return _caller_names(db, [_their_side(m) for m in messages])


def _contact_line_types(db: RecordAccess, messages: Sequence[Message]) -> list[LineType]:
    numbers = [_their_side(m) for m in messages]
    phones = _phones(db, numbers)
    return [_line_type(n, phones.get(n)) for n in numbers]


def _opt_out_names(db: RecordAccess, opt_outs: Sequence[OptOut]) -> list[str | None]:
    return _caller_names(db, [o.phone_number for o in opt_outs])


def _messages_sent(db: RecordAccess, numbers: Sequence[SenderNumber]) -> list[int]:
    ours = [n.phone_number for n in numbers]
    marks = ", ".join("?" for _ in ours)
    counts = f"SELECT from_number, COUNT(*) FROM messages WHERE from_number IN ({marks}) GROUP BY from_number"
    sent = dict(db.sql(counts, *ours))
    return [sent.get(number, 0) for number in ours]



@service.entity(table="sender_numbers", prefix="", label="friendly_name")
class SenderNumber:
    """One of our own phone numbers."""

    id: NumberSid
    phone_number: PhoneNumber = field(unique=True)
    friendly_name: str
    sms_enabled: bool
    is_default: bool = False
    created_at: DateTime

    sid = derived(NumberSid, lambda n: n.id)
    messages_sent = derived(Quantity, batch=_messages_sent)


@service.entity(
    table="messages",
    prefix="",
    search=("body",),
    state=StateDef(
        field="status",
        values=list(get_args(Status)),
        initial="queued",
        terminal=["canceled", "delivered", "undelivered", "failed", "received"],
        transitions={"scheduled": ["canceled", "queued"], "queued": ["sent"], "sent": ["delivered", "undelivered"]},
    ),
)
class Message:
    """One text message, sent or received by one of our numbers."""

    id: MessageSid
    direction: Direction
    from_number: PhoneNumber = field(index=True, role="sender")
    to: PhoneNumber = field(index=True, role="recipient")
    body: Text
    status: Status = field(index=True)
    error_code: int | None = None
    num_segments: Quantity
    date_created: DateTime = field(index=True)
    date_sent: DateTime | None = field(None, index=True)
    send_at: DateTime | None = field(None, mention="the scheduled send time")
    date_updated: DateTime
    redacted: bool = False

    sid = derived(MessageSid, lambda m: m.id)
    contact_number = derived(PhoneNumber, _their_side)
    contact_name = derived(PersonName | None, batch=_contact_names)
    contact_line_type = derived(LineType, batch=_contact_line_types)
    error_message = derived(str | None, lambda m: ERROR_TEXT.get(m.error_code) if m.error_code else None)


@service.entity(table="opt_outs", prefix="oo")
class OptOut:
    """A number that must not be texted: it replied STOP (keyword) or asked us another way (manual)."""

    id: OptOutId
    phone_number: PhoneNumber = field(unique=True, role="self")
    source: Literal["keyword", "manual"]
    keyword: str | None = None
    message_sid: MessageSid | None = None  # the inbound STOP message, for keyword opt-outs
    note: Text | None = None
    opted_out_at: DateTime

    contact_name = derived(PersonName | None, batch=_opt_out_names)


def _records(ctx: ToolContext, cls: type[Any], records: list[Any]) -> list[dict[str, Any]]:
    """Records as a tool returns them, for results that hold records inside a summary."""
    return present_records(ctx.conn, runtime_of(cls), records)


def _record_schema(cls: type[Any]) -> Any:
    """The JSON schema of an entity's records, for a summary's field that holds them."""
    return WithJsonSchema(runtime_of(cls).schema)


# -- results that are not records ----------------------------------------------------------------


class ContactOut(BaseModel):
    """Who is behind a number we text with, and whether it can receive our texts."""

    contact_number: PhoneNumber
    contact_name: PersonName | None
    company_name: CompanyName | None
    line_type: LineType
    opted_out: bool
    can_receive_sms: bool


class ConversationSummaryOut(ContactOut):
    message_count: int
    inbound_count: int
    our_numbers: list[PhoneNumber]
    last_message_at: DateTime
    last_direction: Direction
    last_body: Text


class ConversationOut(ContactOut):
    messages: list[Annotated[dict[str, Any], _record_schema(Message)]]
    total: int
    next_cursor: str | None


class OptOutAddedOut(BaseModel):
    opt_out: Annotated[dict[str, Any], _record_schema(OptOut)]
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
    caller_type: CallerType | None
    company_name: CompanyName | None
    is_ours: bool
    opted_out: bool
    can_receive_sms: bool


class DeletedOut(BaseModel):
    sid: MessageSid
    deleted: bool


# -- rules ---------------------------------------------------------------------------------------


def _segments(body: str) -> int:
    """SMS segments: one up to 160 characters, else 153 per segment (concatenated SMS headers)."""
    return 1 if len(body) <= 160 else math.ceil(len(body) / 153)


def _get_message(ctx: ToolContext, sid: str) -> Message:
    return ctx.get(Message, sid, hint="Use list_messages or get_conversation to find message sids.")


def _sender(ctx: ToolContext, from_number: str | None) -> SenderNumber:
    """The sender number to use: the one named (it must be ours and SMS-capable), else the default."""
    if from_number is None:
        number = ctx.find(SenderNumber, is_default=True)
        if number is None:
            raise ToolError.invalid_state(
                "No default sender number is set; pass from_number (see list_sender_numbers)."
            )
    else:
        number = ctx.find(SenderNumber, phone_number=from_number)
        if number is None:
            ours = ", ".join(n.phone_number for n in ctx.query(SenderNumber).where(sms_enabled=True).all())
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
    if ctx.exists(SenderNumber, phone_number=to):
        raise ToolError.invalid_argument(f"{to} is one of our own numbers; send to the customer's number instead.")
    opt_out = ctx.find(OptOut, phone_number=to)
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


def _delivery(line_type: LineType) -> tuple[Status, int | None]:
    """Simulated delivery: landlines cannot receive SMS (30006); everything else is delivered."""
    return ("undelivered", 30006) if line_type == "landline" else ("delivered", None)


def _send(
    ctx: ToolContext, sender: SenderNumber, to: str, body: str, direction: Direction, send_at: str | None = None
) -> Message:
    if send_at is not None:
        (status, error), sent = ("scheduled", None), None
    else:
        (status, error), sent = _delivery(_line_type(to, ctx.find(Phone, phone_number=to))), ctx.now_iso
    message = Message(
        id=ctx.new_id(MESSAGE_PREFIX), direction=direction, from_number=sender.phone_number, to=to, body=body,
        status=status, error_code=error, num_segments=_segments(body), date_created=ctx.now_iso, date_sent=sent,
        send_at=send_at, date_updated=ctx.now_iso,
    )
    return ctx.insert(message)


# -- seed: conversation scripts ------------------------------------------------------------------

#: (who, our line, text). who: "out" (we text them: our notification line's template when it opens the
#: exchange, a colleague's reply after they wrote), "auto" (the line's automatic answer to a keyword) or "in"
#: (they text us). Texts name {facts} and make [choices].
Script = tuple[tuple[str, str, str], ...]
_THANKS = ("[Great, thanks!|Thanks!|Perfect, thank you.|Brilliant, thanks.|Got it, cheers.|Thanks for the update.|👍 thanks|"
           "Lovely, thank you.|Noted, thanks.|Super, thanks for letting me know.|Ah good, thanks.|Excellent news, thank "
           "you.|Thanks a lot!|Cheers for that.|Good to know, thanks.|Much appreciated.]")
_SIGN = "[| - {first}| {first}| Thanks, {first}| Cheers, {first}| - {first}, {company}| ({first} at {company})|]"
#: How one of us signs a text to a customer.
_OUR_SIGN = ("[- {agent}|{agent}, {home}|{agent} at {home}|- {agent} ({home})|Thanks, {agent}|Best, {agent}|"
             "{agent}|]")
#: An aside people add to a text; the company's world shows through (its site, its work, its busy time).
_ASIDE = ("[| {rush} is close, so good timing.| We're swamped with {work} this week.| Busy days at {site}.| It's "
          "all hands on deck for {work} here.| Things are hectic before {rush}.| The team at {site} was asking.]")
_SCRIPTS: dict[str, Script] = {
    "shipping": (
        ("out", "sales", "{home}: your order {order} ({qty} x {product}) has shipped. Tracking: {tracking}. "
         "Reply STOP to opt out."),
        ("in", "sales", _THANKS + " [We'll keep an eye out for it.|Is it signed for?|Can it be left at reception?|"
         "Will it come before {rush}?|The team at {site} will be happy.|Does the driver call ahead?|Can it go to "
         "the side entrance?|Someone is at {site} all day.|Just in time for {work}.|Which carrier is it with?|]"
         + _ASIDE + _SIGN),
        ("out", "sales", "[Hi {first}, |{first}, |Hello {first}! |Thanks {first}. |Good question {first}: |]it "
         "[can be left at reception|doesn't need a signature|will be left at the front desk|can go to your loading "
         "bay|goes to the address on the order|will be handed to whoever is at {site}][, the carrier has your "
         "note|, I've added a note|, the driver will see the note|, it's on the delivery notes|]. [Any questions, "
         "just text back.|Text me if anything changes.|Shout if it doesn't show up.|Let me know when it's in.|"
         "Hope it helps with {work}.|] " + _OUR_SIGN),
    ),
    "appointment": (
        ("out", "appointments", "Reminder: your {service} with {agent} is on {date} at {time}, {place}. Reply C to "
         "confirm or R to reschedule."),
        ("in", "appointments", "[C|Yes, C|Confirmed, C|C 👍|C!|C - confirmed|C, all good|Yes please, C|C. Confirmed "
         "from our side][|, thanks|, see you then|, thank you {agent}|. See you at {place}|. We'll be there|. Might "
         "be 5 min behind|. {first} from {company}|. Is parking available?|. Two of us will come|. Looking forward "
         "to it|. Can I bring a colleague from {site}?|. Should we prepare anything?|. Is there a dial-in too?]"
         "[|.| 🙂|!]"),
        ("auto", "appointments", "Thanks {first}, you're confirmed for {date} at {time}."),
    ),
    "reschedule": (
        ("out", "appointments", "Reminder: your {service} with {agent} is on {date} at {time}, {place}. Reply C to "
         "confirm or R to reschedule."),
        ("in", "appointments", "R - [could we do {alt_time} instead|is {alt_time} possible|can we move it to "
         "{alt_time}|would {alt_time} work|any chance of {alt_time}|{alt_time} would suit us better|could it be "
         "{alt_time}]? [Something came up at {site}.|Sorry for the change.|{rush} is keeping us busy.|Clash with "
         "{work}, sorry.|Our team at {site} needs the morning.|Apologies for the short notice.|My colleague can't "
         "make the earlier slot.|]" + _SIGN),
        ("out", "appointments", "[No problem {first}, you're now booked for {date} at {alt_time}.|Done: {date} at "
         "{alt_time}. See you then!|Moved to {alt_time} on {date}, {first}.|Sure thing {first}, {alt_time} it is.|"
         "All set {first}: {alt_time} on {date}.|Of course. I've moved you to {alt_time}, {date}.|That works, "
         "{first}. New time: {date} at {alt_time}.] [{agent} will meet you there.|See you at {place}.|Good luck "
         "with {work}.|Thanks for letting us know.|] " + _OUR_SIGN),
    ),
    "invoice": (
        ("out", "billing", "{home} Billing: invoice {inv} for {amount} is due on {date}. Questions? Just reply "
         "to this message."),
        ("in", "billing", "[Paid this morning|We paid it today|Payment went out today|Sent the transfer today|Our AP "
         "team paid it today|Transfer done this morning|It's paid as of today|Finance released it today][, by bank "
         "transfer|, by card|, via our bank|]. [Reference {inv}.|Please confirm.|Let me know if it doesn't arrive.|"
         "Should land in a day or two.|Can you send a receipt?|Shout if anything's missing.|]" + _ASIDE + _SIGN),
        ("out", "billing", "[Thanks {first}, we've received your payment for {inv}.|Got it, thanks {first}: {inv} is "
         "paid.|Payment for {inv} received, thank you {first}!|{inv} is marked paid on our side, thanks {first}.|"
         "All received for {inv}, {first}. Thank you!|Confirmed: {inv} is settled. Thanks {first}.] [Have a good "
         "day.|Receipt is on its way by email.|Good luck with {work}.|Nothing else is open on your account.|] "
         + _OUR_SIGN),
    ),
    "declined": (
        ("out", "billing", "{home} Billing: the card payment of {amount} for invoice {inv} was declined. Please "
         "update your card at https://pay.{domain}/{inv}"),
        ("in", "billing", "[Sorry about that|Oops, sorry|Thanks for the heads up|Ah, apologies|Ugh, sorry|My mistake|"
         "Thanks for flagging it], [I've updated the card|the new card is in|our card expired, updated now|finance "
         "changed cards|the card details are fixed|we switched banks, new card added]. [Can you retry the charge?|"
         "Please try again.|Could you run it again?|Try now please.|Should work this time.|Give it another go.]"
         + _ASIDE + _SIGN),
    ),
    "support": (
        ("in", "support", "[Hi, this is|Hello, it's|Hi! This is|Hey, it's|Morning, this is] {first} from {company}. "
         "{product} [stopped working for us|keeps failing|is down for us|is acting up|won't start|throws errors] "
         "[this morning|since lunch|since yesterday|since the weekend|for an hour now][, it's holding up {work}| and "
         "{site} is waiting on it|, right before {rush}|]. [Can someone call me?|Could you call me back?|Please call "
         "when you can.|Is anyone free to look?|Who can help?]"),
        ("out", "support", "[Hi {first}, this is {agent} from {home} support.|{first}, {agent} here from {home} "
         "support.|Hello {first}, {agent} at {home} support.|Thanks {first}, {agent} here.|Sorry to hear that, "
         "{first}.] [I've opened a ticket|I've logged it with the team|We're looking into it|Our engineers are on "
         "it|I've flagged it as urgent|I can see the errors on our side][; we'll call you within the hour|; I'll "
         "call you shortly|; expect a call in 30 minutes|, and I'll ring you in a few minutes|. I'll call as soon "
         "as I know more|. Talk to you shortly]. [Sorry it's hitting {work}.|We know {rush} is close.|]"),
        ("in", "support", "[Thanks, talk soon.|Great, thanks.|Thank you!|Appreciated.|Perfect, I'll keep my phone "
         "on.|Thanks, that's a relief.|OK, waiting for your call.|Good, thank you.] [We're at {site}.|Best number "
         "is this one.|I'm in meetings until 3.|Ask for me at reception.|Our IT lead is here too.|]" + _SIGN),
    ),
    "code": (("out", "support", "Your {home} verification code is {code}. It expires in 10 minutes."),),
    "delivery": (
        ("out", "sales", "{home}: the delivery for order {order} is planned for {date} between 09:00 and 12:00. "
         "Reply 1 to confirm or call us to change it."),
        ("in", "sales", "[1|1 thanks|1, confirmed|1 - ok|1 👍|1 please][| - someone will be at {site}|, please ring "
         "the bell|, ask for {first} at reception|, use the side entrance|, we're in all morning|, the loading bay "
         "is open from 8|. Call {first} on arrival|. Leave it with security if nobody answers]"),
    ),
}
#: What an exchange is about when the person has no invoice or order that fits the one drawn.
_FALLBACKS = ("support", "reschedule", "appointment", "code")
_STOP_SCRIPT: Script = (
    ("out", "sales", "{home}: 20% off {product} until {date} with code SAVE20. Reply STOP to opt out."),
    ("in", "sales", "STOP"),
    ("auto", "sales", "You have successfully been unsubscribed. You will not receive any more messages from this "
     "number. Reply START to resubscribe."),
)
#: One text each from us to a company's main line (a landline, so it bounces), to colleagues, from strangers.
_TO_LANDLINE: Script = (("out", "billing", "{home} Billing: please call us back about invoice {inv} ({amount})."),)
_ALERTS = (
    "On-call alert: a P1 escalation from {company}. Please check the support queue.",
    "Reminder: the weekly team sync is on Monday at 10:00.",
)
_ALERTED_ROLES = ("support lead", "support agent", "engineering lead")
_STRANGERS = (
    "[Hi, is this|Hello, is this|Is this|Hi there, is this the number for] {home}? [I'd like a quote for|Could I "
    "get pricing for|Do you sell|Do you have stock of] {qty} x {product}?[ It's for {site}.| We need them before "
    "{rush}.| For {work}.|]",
    "[Who is this?|Hi, who's this?|Sorry, who is this?|Hello? Who is this please?] I got a missed call from this "
    "number[ this morning| earlier| at lunch| yesterday|][.| - was it about {product}?| - is this about an order?]",
    "[Wrong number, sorry!|Sorry, wrong number.|Oops, wrong person, sorry.|Sorry, I meant to text someone else.]"
    "[| Have a good day.| Ignore me!| My mistake.]",
    "[Do you deliver to|Hi, do you ship to|Can you deliver to|Quick question: do you deliver to] {city}? [It's for "
    "{site}.|We're a small team.|We'd need it before {rush}.|It's for {work}.|]",
)
#: (our line, text) of reminders scheduled for the coming days; the first two were canceled.
_SCHEDULED = (
    ("appointments", "Reminder: your {service} with {agent} is tomorrow at {time}, {place}. Reply C to confirm."),
    ("billing", "{home} Billing: invoice {inv} for {amount} is due in 3 days. Thank you!"),
    ("sales", "{home}: your {product} subscription renews on {date}. Reply with any questions."),
)
#: Our numbers: key -> (friendly name, can send SMS). The main office line is the world's home phone.
_LINES = {
    "main": ("Main office line", False),
    "support": ("Support line", True),
    "sales": ("Sales", True),
    "billing": ("Billing", True),
    "appointments": ("Appointments", True),
}
_DEFAULT_LINE = "support"
_SERVICES = ("onboarding workshop", "training session", "account review", "product demo", "data migration call")


def _facts(rng: Any, world: World, person: Person | None, category: str | None = None) -> dict[str, str]:
    """The everyday values one seeded exchange talks about (the records it names come from the world's plans)."""
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
        "code": f"{rng.randint(0, 999999):06d}",
        "service": rng.choice(_SERVICES),
        "agent": agent.first_name,
        "date": f"{future:%a} {future.day} {future:%b}",
        "time": f"{hour}:00",
        "alt_time": f"{hour + 1}:30",
        "place": rng.choice(world.places).name,
        **industry_facts(rng, org.industry),
    }
#: The scripts about an invoice, and the invoice of the plan each is about: one paid by bank transfer
#: on or before its due date (``paid``), one whose card was declined (``declined``).
_INVOICE_SCRIPTS = {"invoice": "paid", "declined": "declined"}


def _story_invoice(
    rng: Any, world: World, story: str, organisation_id: str, before: str | None = None
) -> PlannedInvoice | None:
    """The plan's invoice of ``organisation_id`` a text about ``story`` names (its day before ``before``), or None.

    ``open``: money still due; ``sent``: any invoice sent; ``due_soon``: due four days from now or later.
    """
    today = world.now_dt.date()
    soon = (today + timedelta(days=4)).isoformat()
    fits = {
        "paid": lambda i: i.status == "PAID" and len(i.payments) == 1 and i.payments[0].method == "bank_transfer"
        and i.payments[0].date <= i.due_date,
        "declined": lambda i: i.card == "failed",
        "open": lambda i: i.status == "AUTHORISED" and i.amount_due > 0,
        "sent": lambda i: i.status in ("AUTHORISED", "PAID"),
        "due_soon": lambda i: i.status == "AUTHORISED" and i.amount_due > 0 and i.due_date >= soon,
    }[story]
    latest = before or today.isoformat()
    return world.plan.invoice_to_mention(
        rng, lambda i: i.organisation_id == organisation_id and fits(i) and _invoice_anchor(story, i) < latest
    )


def _invoice_anchor(story: str, invoice: PlannedInvoice) -> str:
    """The day (ISO) a text about ``story`` is sent: paid, declined (on the due date), or issued."""
    if story == "paid":
        return invoice.payments[0].date
    return invoice.due_date if story == "declined" else invoice.date


def _invoice_facts(world: World, story: str, invoice: PlannedInvoice) -> dict[str, str]:
    """What a text says about its invoice, as the books hold it."""
    due = datetime.fromisoformat(invoice.due_date)
    amount = invoice.total if story in ("paid", "sent") else invoice.amount_due
    return {"inv": invoice.number, "amount": f"{amount:,.2f} {world.currency}", "date": f"{due:%a} {due.day} {due:%b}"}


def _morning_of(iso: str, rng: Any) -> datetime:
    """A time in the working morning of the day ``iso``."""
    return datetime.fromisoformat(iso).replace(hour=rng.randint(8, 11), minute=rng.randint(0, 59), tzinfo=UTC)


@dataclass(slots=True)
class _Text:
    """A seeded message before it gets its sid (sids follow creation time)."""

    direction: Direction
    ours: str
    theirs: str
    body: str
    at: datetime
    status: Status
    error: int | None = None
    send_at: datetime | None = None


def _directory(ctx: ToolContext) -> dict[str, Phone]:
    """Lookup's data: companies' main lines are landlines, people's phones are mobiles (a person wins a clash)."""
    world = ctx.world
    listings: dict[str, tuple[LineType, str, CallerType, str]] = {}
    for org in world.organisations:
        listings[org.phone] = ("landline", org.name, "BUSINESS", org.name)
    for person in world.people:
        listings[person.phone] = ("mobile", person.name, "CONSUMER", world.organisation(person.organisation_id).name)
    return {
        number: Phone(id=ctx.new_id("ph"), phone_number=number, line_type=line, caller_name=name, caller_type=kind,
                      company_name=company)
        for number, (line, name, kind, company) in sorted(listings.items())
    }


@service.seeder
def seed(ctx: ToolContext) -> None:
    world, rng, now = ctx.world, ctx.rng("seed"), ctx.now
    words = ctx.rng("words")  # the wording's own stream: rewording a text leaves the rest of the seed as it was
    directory = _directory(ctx)
    ctx.insert_many(list(directory.values()))
    taken = set(directory)

    def fresh_number() -> str:
        while True:
            number = f"+1{rng.randint(201, 989)}555{rng.randint(1000, 9999)}"
            if number not in taken:
                taken.add(number)
                return number

    ours = {key: world.home.phone if key == "main" else fresh_number() for key in _LINES}
    ctx.insert_many([
        SenderNumber(id=ctx.new_id(NUMBER_PREFIX), phone_number=ours[key], friendly_name=name, sms_enabled=sms,
                     is_default=key == _DEFAULT_LINE, created_at=ctx.days_from_now(-rng.randint(200, 800)))
        for key, (name, sms) in _LINES.items()
    ])

    texts: list[_Text] = []

    def delivery(to: str) -> tuple[Status, int | None]:
        if to in directory and directory[to].line_type == "landline":
            return "undelivered", 30006
        roll = rng.random()
        return ("undelivered", 30003) if roll < 0.04 else ("sent", None) if roll < 0.09 else ("delivered", None)

    def play(script: Script, theirs: str, facts: dict[str, str], start: datetime, steps: int) -> list[_Text]:
        at, played = start, []
        for i, (who, line, text) in enumerate(script[:steps]):
            at += timedelta(minutes=rng.randint(2, 300)) if i else timedelta(0)
            if at >= now - timedelta(minutes=5):
                break
            body = write(words, text, facts)
            if who in ("out", "auto"):
                # Our line's notice opens an exchange; after they wrote, a colleague answers in person.
                answered = who == "out" and i > 0 and script[i - 1][0] == "in"
                played.append(_Text("outbound-reply" if answered else "outbound-api", ours[line], theirs, body, at,
                                    *delivery(theirs)))
            else:
                played.append(_Text("inbound", ours[line], theirs, body, at, "received"))
        texts.extend(played)
        return played

    def start_time(max_days: float = 60.0, min_days: float = 0.1) -> datetime:
        return (now - timedelta(days=rng.uniform(min_days, max_days))).replace(microsecond=0)

    orders_of: dict[str, list[PlannedOrder]] = {}
    for order in commerce_plan(world).orders:
        orders_of.setdefault(order.customer.email, []).append(order)

    def about(name: str, person: Person, start: datetime, before: str | None = None) -> tuple[Script, dict[str, str], datetime]:
        """The script, facts and start of an exchange; one about an invoice or an order names one of the person's.

        Where the person has no invoice or order that fits, the exchange is an appointment reminder instead.
        """
        facts = _facts(rng, world, person)
        story = _INVOICE_SCRIPTS.get(name)
        if story is not None:
            invoice = _story_invoice(rng, world, story, person.organisation_id, before)
            if invoice is not None:
                facts.update(_invoice_facts(world, story, invoice))
                return _SCRIPTS[name], facts, _morning_of(_invoice_anchor(story, invoice), rng)
            name = rng.choice(_FALLBACKS)
        if name in ("shipping", "delivery"):
            limit = before or ctx.now_iso
            fits = [o for o in orders_of.get(person.email, []) if o.fulfillments and o.fulfillments[0].tracking_number
                    and o.fulfillments[0].created_at < limit
                    and (name == "shipping" or (o.fulfillments[0].delivered_at is None and o.story == "in_transit"))]
            if not fits:
                return _SCRIPTS[rng.choice(_FALLBACKS)], facts, start
            order = rng.choice(fits)
            shipped = order.fulfillments[0]
            line = order.lines[0]
            expected = datetime.fromisoformat(str(shipped.estimated_delivery_at).replace("Z", "+00:00"))
            facts.update(order=order.name, qty=str(line.quantity), product=line.product_title,
                         tracking=str(shipped.tracking_number), date=f"{expected:%a} {expected.day} {expected:%b}")
            sent = datetime.fromisoformat(shipped.created_at.replace("Z", "+00:00")) + timedelta(minutes=rng.randint(5, 90))
            return _SCRIPTS[name], facts, sent
        return _SCRIPTS[name], facts, start

    customers = list(world.customers)
    rng.shuffle(customers)
    regulars, stoppers, manual = customers[:44], customers[44:48], customers[48:50]
    for person in regulars:
        for _ in range(rng.choice((1, 2, 2, 3, 3))):
            script, facts, start = about(rng.choice(list(_SCRIPTS)), person, start_time())
            play(script, person.phone, facts, start, rng.randint(1, len(script)))
    opt_outs: list[tuple[str, _Text | None]] = []
    for person in stoppers:
        # Before they opted out (one to 25 days ago): an invoice of theirs from a month ago or more.
        month_ago = (now - timedelta(days=30)).date().isoformat()
        first, facts, start = about(
            rng.choice(("shipping", "invoice", "delivery")), person, start_time() - timedelta(days=30), month_ago
        )
        play(first, person.phone, facts, start, len(first))
        # Started a day or more ago, so the STOP reply always lands before the frozen clock.
        played = play(_STOP_SCRIPT, person.phone, _facts(rng, world, person), start_time(25.0, 1.0), 3)
        opt_outs += [(person.phone, m) for m in played if m.body == "STOP"]
    for person in manual:
        # Texted once, before they asked (by email, 3-40 days ago) not to be texted again.
        play(_SCRIPTS["appointment"], person.phone, _facts(rng, world, person), start_time(60.0, 41.0), 1)
        opt_outs.append((person.phone, None))
    for org in rng.sample(list(world.organisations[1:]), 4):
        facts, start = _facts(rng, world, None), start_time()
        story = "open"
        invoice = _story_invoice(rng, world, story, org.id)
        if invoice is None:
            story, invoice = "sent", _story_invoice(rng, world, "sent", org.id)
        if invoice is not None:  # about one of the company's invoices, after it was issued
            facts.update(_invoice_facts(world, story, invoice))
            play(_TO_LANDLINE, org.phone, facts, max(start, _morning_of(invoice.date, rng) + timedelta(days=1)), 1)
    for template in _STRANGERS:
        texts.append(_Text("inbound", ours["support"], fresh_number(), write(words, template, _facts(rng, world, None)),
                           start_time(20.0), "received"))
    for colleague in (p for p in world.team[1:] if p.job_title in _ALERTED_ROLES):
        for template in _ALERTS:
            body = write(words, template, _facts(rng, world, rng.choice(world.customers)))
            texts.append(_Text("outbound-api", ours["support"], colleague.phone, body, start_time(30.0), "delivered"))
    for i, person in enumerate(rng.sample(regulars, 10)):  # never to people who opted out
        line, template = rng.choice(_SCHEDULED)
        created = start_time(5.0)
        day = now + timedelta(days=rng.randint(1, 10))
        invoice = _story_invoice(rng, world, "due_soon", person.organisation_id) if line == "billing" else None
        if line == "billing" and invoice is None:
            line, template = _SCHEDULED[-1]  # nothing of theirs falls due: a renewal reminder instead
        if invoice is not None:  # sent three days before the invoice falls due
            day = datetime.fromisoformat(invoice.due_date).replace(tzinfo=UTC) - timedelta(days=3)
        send_at = day.replace(hour=rng.choice((8, 9, 10, 14, 16)), minute=0, second=0, microsecond=0)
        facts = _facts(rng, world, person, "subscriptions" if line == "sales" else None)
        due = send_at + timedelta(days=3)
        facts["date"] = f"{due:%a} {due.day} {due:%b}"  # the text speaks of 3 days after it is sent
        if invoice is not None:
            facts.update(_invoice_facts(world, "due_soon", invoice))
        texts.append(_Text("outbound-api", ours[line], person.phone, write(words, template, facts), created,
                           "canceled" if i < 2 else "scheduled", send_at=send_at))

    texts.sort(key=lambda t: t.at)  # sids follow creation time, as in a real account
    sids: dict[int, str] = {}
    rows = []
    for t in texts:
        at = ctx.iso(t.at)
        inbound = t.direction == "inbound"
        sids[id(t)] = ctx.new_id(MESSAGE_PREFIX)
        rows.append(Message(
            id=sids[id(t)], direction=t.direction, from_number=t.theirs if inbound else t.ours,
            to=t.ours if inbound else t.theirs, body=t.body, status=t.status, error_code=t.error,
            num_segments=_segments(t.body), date_created=at, date_sent=None if t.send_at else at,
            send_at=ctx.iso(t.send_at) if t.send_at else None, date_updated=at,
        ))
    ctx.insert_many(rows)
    ctx.insert_many([
        OptOut(id=ctx.new_id("oo"), phone_number=number, source="keyword" if stop else "manual",
               keyword="STOP" if stop else None, message_sid=sids[id(stop)] if stop else None,
               note=None if stop else "Asked by email not to receive text messages.",
               opted_out_at=ctx.iso(stop.at) if stop else ctx.days_from_now(-rng.uniform(3, 40)))
        for number, stop in opt_outs
    ])


# -- messages ------------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="notify",
    phrases=("text {to} saying {body}", "send an SMS to {to}: {body}", "send {to} a text message: {body}"),
)
def send_message(
    ctx: ToolContext,
    to: PhoneNumber,
    body: Text,
    from_number: PhoneNumber | None = None,
    send_at: DateTime | None = None,
) -> Message:
    """Send an SMS to a phone number from one of our numbers, now or scheduled for later.

    Without send_at the message goes out at once and its delivery status is final in the result
    (delivered, or undelivered when the number is a landline: lookup_phone_number tells beforehand).
    With send_at it is scheduled and can be canceled with cancel_message until then. A number that
    opted out (texted STOP) cannot be messaged.

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
        at = moment(send_at)
        if not ctx.now + MIN_SCHEDULE <= at <= ctx.now + MAX_SCHEDULE:
            raise ToolError.invalid_argument(
                f"send_at must be between 15 minutes and 35 days after now ({ctx.now_iso}); got {send_at}. "
                "Omit send_at to send immediately."
            )
        when = ctx.iso(at)
    return _send(ctx, sender, to, text, "outbound-api", when)


@service.tool(
    "write",
    intent="reply",
    phrases=("reply to {message_sid} by text: {body}", "text back in answer to {message_sid}: {body}"),
)
def reply_to_message(ctx: ToolContext, message_sid: MessageSid, body: Text) -> Message:
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
    return _send(ctx, sender, original.from_number, _check_body(body), "outbound-reply")


@service.tool("read", intent="find", phrases=("check the texts we sent to {to}", "look through our text messages"))
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
) -> Page[Message]:
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
    q = ctx.query(Message).filter(to=to, from_number=from_number, status=status).contains("body", query)
    if direction == "inbound":
        q.where(direction="inbound")
    elif direction == "outbound":
        q.where_sql("direction != 'inbound'")
    if date_sent:
        q.where_sql("substr(date_sent, 1, 10) = ?", date_sent)
    q.compare("date_sent", ">=", date_sent_after)
    q.compare("date_sent", "<=", f"{date_sent_before}T23:59:59Z" if date_sent_before else None)
    # date_created is when a message was sent, or scheduled: the log's order for every status.
    return q.order_by("-date_created", "-id").page(limit, cursor)


@service.tool(
    "read", intent="get", phrases=("check the delivery status of {message_sid}", "open the text {message_sid}")
)
def get_message(ctx: ToolContext, message_sid: MessageSid) -> Message:
    """Get one message with its delivery status (and the error when it was not delivered).

    Args:
        message_sid: The message's sid, e.g. SM_0042.
    """
    return _get_message(ctx, message_sid)


@service.tool("write", intent="cancel", phrases=("cancel the scheduled text {message_sid}", "don't send {message_sid}"))
def cancel_message(ctx: ToolContext, message_sid: MessageSid) -> Message:
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
    return ctx.update(message, status="canceled", date_updated=ctx.now_iso)


@service.tool("write", intent="delete", phrases=("erase the text of {message_sid} from our records",))
def redact_message(ctx: ToolContext, message_sid: MessageSid) -> Message:
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
    return ctx.update(message, body="", redacted=True, date_updated=ctx.now_iso)


@service.tool("write", intent="delete", phrases=("delete {message_sid} from our SMS log",))
def delete_message(ctx: ToolContext, message_sid: MessageSid) -> DeletedOut:
    """Delete a message from our log for good. A scheduled message must be canceled first.

    Args:
        message_sid: The message to delete.
    """
    message = _get_message(ctx, message_sid)
    if message.status == "scheduled":
        raise ToolError.invalid_state(f"Message {message_sid} is scheduled; cancel_message it before deleting it.")
    ctx.delete(message)
    return DeletedOut(sid=message_sid, deleted=True)


# -- conversations -------------------------------------------------------------------------------


def _contacts(ctx: ToolContext, numbers: list[str]) -> dict[str, dict[str, Any]]:
    """The ContactOut fields of these numbers: directory entries and opt-outs, in two queries."""
    phones = _phones(ctx, numbers)
    stopped = {o.phone_number for o in ctx.query(OptOut).where_in("phone_number", numbers).all()}
    contacts = {}
    for number in numbers:
        phone = phones.get(number)
        line_type = _line_type(number, phone)
        contacts[number] = {
            "contact_number": number,
            "contact_name": phone.caller_name if phone else None,
            "company_name": phone.company_name if phone else None,
            "line_type": line_type,
            "opted_out": number in stopped,
            "can_receive_sms": line_type != "landline" and number not in stopped,
        }
    return contacts


@service.tool(
    "read",
    intent="find",
    phrases=("look up our text conversations with {name}", "check who we have been texting with"),
)
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
        name: Only conversations with someone whose name (or company) contains these words, e.g. a person's name.
        our_number: Only messages to or from this one of our numbers.
        opted_out: true: only numbers that opted out; false: only those we may still text.
        limit: Maximum number of conversations to return (1-100).
        cursor: next_cursor from a previous page.
    """
    offset = decode_cursor(cursor)
    where, params = ["1"], []
    if our_number:
        where.append('(from_number = ? OR "to" = ?)')
        params += [our_number, our_number]
    if name and name.strip():
        numbers = [p.phone_number for p in ctx.query(Phone).search(name).all()]
        where.append(f"{_CONTACT_SQL} IN ({', '.join('?' for _ in numbers) or 'NULL'})")
        params += numbers
    if opted_out is not None:
        where.append(f"{_CONTACT_SQL} {'' if opted_out else 'NOT '}IN (SELECT phone_number FROM opt_outs)")
    grouped = (
        f"SELECT {_CONTACT_SQL} AS contact, MAX(date_created) AS last FROM messages "
        f"WHERE {' AND '.join(where)} GROUP BY contact"
    )
    total = ctx.sql(f"SELECT COUNT(*) FROM ({grouped})", *params)[0][0]
    numbers = [n for n, _ in ctx.sql(f"{grouped} ORDER BY last DESC, contact LIMIT ? OFFSET ?", *params, limit, offset)]
    # Every message of the page's conversations in one query, oldest first, grouped by contact here.
    q = ctx.query(Message).where_sql(f"{_CONTACT_SQL} IN ({', '.join('?' for _ in numbers) or 'NULL'})", *numbers)
    if our_number:
        q.where_sql('from_number = ? OR "to" = ?', our_number, our_number)
    by_number: dict[str, list[Message]] = {n: [] for n in numbers}
    for m in q.order_by("date_created", "id").all():
        by_number[_their_side(m)].append(m)
    contacts = _contacts(ctx, numbers)
    items = [
        ConversationSummaryOut(
            **contacts[number],
            message_count=len(rows),
            inbound_count=sum(m.direction == "inbound" for m in rows),
            our_numbers=list(dict.fromkeys(_our_side(m) for m in rows)),
            last_message_at=rows[-1].date_sent or rows[-1].date_created,
            last_direction=rows[-1].direction,
            last_body=rows[-1].body,
        )
        for number, rows in by_number.items()
    ]
    end = offset + len(items)
    return Page(items=items, total=total, next_cursor=str(end) if end < total else None)


@service.tool(
    "read",
    intent="get",
    phrases=("read our text conversation with {phone_number}", "pull up the texts with {phone_number}"),
)
def get_conversation(
    ctx: ToolContext, phone_number: PhoneNumber, limit: Limit = 20, cursor: Cursor = None
) -> ConversationOut:
    """Get the text conversation with one phone number (both directions, all our numbers), newest first.

    Args:
        phone_number: The other party's number in E.164 form.
        limit: Maximum number of messages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Message).where_sql(f"{_CONTACT_SQL} = ?", phone_number)
    page = q.order_by("-date_created", "-id").page(limit, cursor)
    if page.total == 0:
        raise ToolError.not_found(
            "conversation", phone_number, "We have no messages with that number; send_message starts a conversation."
        )
    return ConversationOut(
        **_contacts(ctx, [phone_number])[phone_number],
        messages=_records(ctx, Message, page.items),
        total=page.total,
        next_cursor=page.next_cursor,
    )


# -- lookup --------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="check",
    phrases=("check whose number {phone_number} is", "check whether {phone_number} can receive texts"),
)
def lookup_phone_number(ctx: ToolContext, phone_number: PhoneNumber) -> PhoneLookupOut:
    """Look up a phone number: who it belongs to (caller name and company, when known), its line type, and
    whether we can text it (landlines cannot receive SMS; opted-out numbers may not be texted).

    Args:
        phone_number: The number to look up, in E.164 form, e.g. +14155550123.
    """
    ours = ctx.find(SenderNumber, phone_number=phone_number)
    if ours is not None:
        home = ctx.world.home.name
        return PhoneLookupOut(
            phone_number=phone_number, valid=True, country_code="US",
            line_type="voip" if ours.sms_enabled else "landline", caller_name=home, caller_type="BUSINESS",
            company_name=home, is_ours=True, opted_out=False, can_receive_sms=False,
        )
    phone = ctx.find(Phone, phone_number=phone_number)
    opted_out = ctx.exists(OptOut, phone_number=phone_number)
    line_type = _line_type(phone_number, phone)
    return PhoneLookupOut(
        phone_number=phone_number,
        valid=True,
        country_code="US" if phone_number.startswith("+1") else None,
        line_type=line_type,
        caller_name=phone.caller_name if phone else None,
        caller_type=phone.caller_type if phone else None,
        company_name=phone.company_name if phone else None,
        is_ours=False,
        opted_out=opted_out,
        can_receive_sms=line_type != "landline" and not opted_out,
    )


# -- opt-outs ------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("check whether {phone_number} opted out of our texts", "see who asked us to stop texting them"),
)
def list_opt_outs(
    ctx: ToolContext, phone_number: PhoneNumber | None = None, limit: Limit = 20, cursor: Cursor = None
) -> Page[OptOut]:
    """List the numbers that opted out of our texts, most recent first.

    Args:
        phone_number: Only this number (an empty page means it has not opted out).
        limit: Maximum number of opt-outs to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(OptOut).filter(phone_number=phone_number).order_by("-opted_out_at", "phone_number")
    return q.page(limit, cursor)


@service.tool(
    "write",
    intent="opt_out",
    phrases=("stop texting {phone_number}", "put {phone_number} on the SMS opt-out list"),
)
def add_opt_out(ctx: ToolContext, phone_number: PhoneNumber, note: Text | None = None) -> OptOutAddedOut:
    """Record that a person asked not to be texted (e.g. by email or on the phone). From now on no message
    can be sent to the number, and its scheduled messages are canceled.

    Args:
        phone_number: The number to stop texting, in E.164 form.
        note: Why, e.g. "Asked by email on 12 March".
    """
    if ctx.exists(SenderNumber, phone_number=phone_number):
        raise ToolError.invalid_argument(f"{phone_number} is one of our own numbers; it cannot opt out.")
    if ctx.exists(OptOut, phone_number=phone_number):
        raise ToolError.conflict(f"{phone_number} has already opted out; list_opt_outs shows since when.")
    opt_out = ctx.insert(OptOut(
        id=ctx.new_id("oo"), phone_number=phone_number, source="manual",
        note=note.strip() if note and note.strip() else None, opted_out_at=ctx.now_iso,
    ))
    scheduled = ctx.query(Message).where(to=phone_number, status="scheduled").order_by("id").all()
    for message in scheduled:
        ctx.update(message, status="canceled", date_updated=ctx.now_iso)
    return OptOutAddedOut(opt_out=_records(ctx, OptOut, [opt_out])[0], canceled_message_sids=[m.id for m in scheduled])


@service.tool(
    "write",
    intent="delete",
    phrases=("take {phone_number} off the SMS opt-out list", "let us text {phone_number} again"),
)
def remove_opt_out(ctx: ToolContext, phone_number: PhoneNumber) -> OptOutRemovedOut:
    """Take a number off the opt-out list after the person asked to receive texts again.

    Only opt-outs we recorded ourselves (add_opt_out) can be removed. A number that texted STOP can only opt
    back in by texting START itself: carriers do not let a sender override it.

    Args:
        phone_number: The opted-out number.
    """
    opt_out = ctx.find(OptOut, phone_number=phone_number)
    if opt_out is None:
        raise ToolError.not_found("opt-out", phone_number, "That number has not opted out; list_opt_outs lists them.")
    if opt_out.source == "keyword":
        raise ToolError.permission_denied(
            f"{phone_number} opted out by texting {opt_out.keyword or 'STOP'}; only the person can opt back in, by "
            "texting START to our number."
        )
    ctx.delete(opt_out)
    return OptOutRemovedOut(phone_number=phone_number, removed=True)


# -- our numbers ---------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check which of our numbers can send texts",))
def list_sender_numbers(ctx: ToolContext, sms_enabled: bool | None = None) -> list[SenderNumber]:
    """List our own phone numbers: which can send SMS, which one is the default sender, and how much each sent.

    Args:
        sms_enabled: true: only numbers that can send SMS; false: only voice-only numbers.
    """
    return ctx.query(SenderNumber).filter(sms_enabled=sms_enabled).order_by("id").all()


@service.tool(
    "write",
    intent="update",
    phrases=("rename our number {number_sid} to {friendly_name}", "make {number_sid} our default texting number"),
)
def update_sender_number(
    ctx: ToolContext, number_sid: NumberSid, friendly_name: str | None = None, make_default: bool = False
) -> SenderNumber:
    """Rename one of our numbers, or make it the default sender for send_message.

    Args:
        number_sid: The number's sid, e.g. PN_0002 (see list_sender_numbers).
        friendly_name: A new display name, e.g. Support line.
        make_default: Make this number the default sender (it must be able to send SMS).
    """
    number = ctx.get(SenderNumber, number_sid, hint="Use list_sender_numbers to find number sids.")
    if friendly_name is None and not make_default:
        raise ToolError.invalid_argument("Pass friendly_name or make_default=true.")
    if friendly_name is not None:
        if not friendly_name.strip():
            raise ToolError.invalid_argument("friendly_name must not be empty.")
        number = ctx.update(number, friendly_name=friendly_name.strip())
    if make_default:
        if not number.sms_enabled:
            raise ToolError.invalid_state(
                f"{number.phone_number} ({number.friendly_name}) is voice only and cannot be the default SMS sender."
            )
        if number.is_default and friendly_name is None:
            raise ToolError.invalid_state(f"{number.phone_number} is already the default sender.")
        for other in ctx.query(SenderNumber).where(is_default=True).all():
            ctx.update(other, is_default=False)
        number = ctx.update(number, is_default=True)
    return number


# -- world events (what arrives from outside; the composer plants task triggers with them) ---------


@service.event("message_received")
def message_received(ctx: ToolContext, from_number: str, body: str, hours_ago: float = 1.0) -> str:
    """A text from someone's phone arrives at our default number; returns the message sid."""
    ours = _sender(ctx, None)
    at = ctx.days_from_now(-hours_ago / 24)
    message = ctx.insert(
        Message(
            id=ctx.new_id(MESSAGE_PREFIX), direction="inbound", from_number=from_number, to=ours.phone_number, body=body,
            status="received", error_code=None, num_segments=_segments(body), date_created=at, date_sent=at,
            send_at=None, date_updated=at,
        )
    )
    return message.id
