"""Mailbox: the home user's email, with threads, labels, drafts and trash (modelled on the Gmail API).

The mailbox belongs to ``world.user``. As in Gmail, a message's state lives in its label ids:
``INBOX``, ``SENT``, ``UNREAD``, ``STARRED``, ``IMPORTANT``, ``SPAM``, ``TRASH`` and the user's own
labels (``Label_0001``...). Searches leave out spam and trash unless asked. Drafts are their own
resource (as in Gmail): sending one turns it into a ``SENT`` message and the draft disappears.

Correspondents are the world's people, so a customer who writes here has the same name and email
as their CRM contact; seeded threads talk about orders, invoices, refunds, meetings and support
problems, with the order/invoice ids and amounts written in the text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field as dc_field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, WithJsonSchema

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field
from mcp_services.kernel.entity import json_text, runtime_of
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import Query, RecordAccess, like_pattern
from mcp_services.kernel.semantic import (
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    FileName,
    PersonName,
    Subject,
    Tag,
    Text,
)
from mcp_services.kernel.world import Person, PlannedInvoice, World

MessageId = EntityId("mailbox.message")
ThreadId = EntityId("mailbox.thread")
DraftId = EntityId("mailbox.draft")
LabelId = EntityId("mailbox.label")

#: Gmail's system labels. TRASH, SENT and DRAFT are set by the mailbox itself, never by modify_message.
SYSTEM_LABELS = ("INBOX", "SENT", "UNREAD", "STARRED", "IMPORTANT", "SPAM", "TRASH", "DRAFT")
RESERVED_LABELS = ("TRASH", "SENT", "DRAFT")
USER_LABELS = ("Customers", "Finance", "Orders", "Support", "Meetings", "Follow up")
#: Gmail's user label ids look like Label_0001 (KeyDef prefixes are lowercase only, so Label declares none).
USER_LABEL_PREFIX = "Label"
MAX_RECIPIENTS = 50

service = Service(
    "mailbox",
    "Email for the user we act for: search, read and send messages, reply and forward, threads, labels, "
    "drafts and trash.",
    title="Mailbox",
)


# -- values of returned records that other rows hold ---------------------------------------------


def _label_names(db: RecordAccess) -> dict[str, str]:
    return dict(db.sql("SELECT id, name FROM labels"))


def _names_of_labels(db: RecordAccess, messages: Sequence[Message]) -> list[list[str]]:
    names = _label_names(db)
    return [[names.get(i, i) for i in m.label_ids] for m in messages]


def _label_counts(db: RecordAccess) -> dict[str, tuple[int, int]]:
    """Messages per label, and how many of them are unread.

    Counted per distinct label list (a few dozen) and summed here. (SQLite's json_each would say it in
    one statement, but a cached statement with a table-valued function crashes SQLite 3.40 once a diff
    has attached and detached a snapshot on the connection.)
    """
    counts: dict[str, tuple[int, int]] = {}
    unread = like_pattern(json_text("UNREAD"))
    for text, total, unread_total in db.sql(
        "SELECT label_ids, COUNT(*), SUM(label_ids LIKE ? ESCAPE '\\') FROM messages GROUP BY label_ids", unread
    ):
        for label_id in json.loads(text):
            seen, seen_unread = counts.get(label_id, (0, 0))
            counts[label_id] = (seen + total, seen_unread + unread_total)
    return counts


def _messages_total(db: RecordAccess, labels: Sequence[Label]) -> list[int]:
    counts = _label_counts(db)
    return [counts.get(label.id, (0, 0))[0] for label in labels]


def _messages_unread(db: RecordAccess, labels: Sequence[Label]) -> list[int]:
    counts = _label_counts(db)
    return [counts.get(label.id, (0, 0))[1] for label in labels]


# -- entities ------------------------------------------------------------------------------------


@service.entity(table="labels", prefix="", label="name")
class Label:
    """A label messages are filed under: one of Gmail's system labels or one of the user's own."""

    id: LabelId
    name: Tag = field(unique=True)
    type: Literal["system", "user"]
    created_at: DateTime | None = None

    messages_total = derived(int, batch=_messages_total)
    messages_unread = derived(int, batch=_messages_unread)


@service.entity(table="threads", prefix="th", label="subject")
class Thread:
    """A conversation: the messages that reply to (or forward) one another."""

    id: ThreadId
    subject: Subject
    updated_at: DateTime = field(index=True)  # time of the thread's latest message


@service.entity(table="messages", prefix="msg", label="subject")
class Message:
    """An email the user sent or received."""

    id: MessageId
    thread_id: ThreadId = field(index=True)
    from_email: EmailAddress = field(index=True, role="sender")
    from_name: PersonName | None = field(None, role="sender")
    to: list[EmailAddress] = field(role="recipient")
    cc: list[EmailAddress] = field(role="recipient")
    bcc: list[EmailAddress] = field(role="recipient")
    subject: Subject
    body: Text
    attachments: list[FileName] = field(mention="the attached file")
    label_ids: list[LabelId] = field(incidental=True)
    in_reply_to: MessageId | None = None
    sent_at: DateTime = field(index=True)

    label_names = derived(list[Tag], batch=_names_of_labels)
    is_unread = derived(bool, lambda m: "UNREAD" in m.label_ids)
    is_starred = derived(bool, lambda m: "STARRED" in m.label_ids)
    in_trash = derived(bool, lambda m: "TRASH" in m.label_ids)


@service.entity(table="drafts", prefix="dr", label="subject")
class Draft:
    """An unsent email; it may still lack a recipient, a subject or a body."""

    id: DraftId
    thread_id: ThreadId | None = None
    in_reply_to: MessageId | None = None
    to: list[EmailAddress] = field(role="recipient")
    cc: list[EmailAddress] = field(role="recipient")
    bcc: list[EmailAddress] = field(role="recipient")
    subject: Subject | None = None
    body: Text
    attachments: list[FileName]
    created_at: DateTime
    updated_at: DateTime


def _records(ctx: ToolContext, cls: type[Any], records: list[Any]) -> list[dict[str, Any]]:
    """Records as a tool returns them, for results that hold records inside a summary."""
    return present_records(ctx.conn, runtime_of(cls), records)


MessageRecord = Annotated[dict[str, Any], WithJsonSchema(runtime_of(Message).schema)]


# -- results that are not records ----------------------------------------------------------------


class ThreadSummaryOut(BaseModel):
    id: ThreadId
    subject: Subject
    participants: list[EmailAddress]
    message_count: int
    unread_count: int
    label_names: list[Tag]
    last_message_at: DateTime
    last_sender_email: EmailAddress
    snippet: str


class ThreadOut(BaseModel):
    id: ThreadId
    subject: Subject
    participants: list[EmailAddress]
    messages: list[MessageRecord]


class DeletedOut(BaseModel):
    id: DraftId
    deleted: bool


# -- rules ---------------------------------------------------------------------------------------


Condition = tuple[str, list[Any]]  # SQL over a message's columns, with its parameters
#: The text fields free-text search matches (addresses included: lists are stored as JSON text).
_TEXT_FIELDS = ("subject", "body", "from_name", "from_email", "to", "cc")


def _list_holds(value: str, *columns: str) -> Condition:
    """One of the JSON list ``columns`` contains ``value``.

    Lists are stored as JSON text ('["INBOX","UNREAD"]'), so an item is found by its JSON encoding with
    the kernel's escaped LIKE pattern.
    """
    test = " OR ".join(f'"{c}" LIKE ? ESCAPE \'\\\'' for c in columns)
    return test, [like_pattern(json_text(value))] * len(columns)


def _lacks(condition: Condition) -> Condition:
    return f"NOT ({condition[0]})", condition[1]


def _labelled(label_id: str, present: bool = True) -> Condition:
    holds = _list_holds(label_id, "label_ids")
    return holds if present else _lacks(holds)


#: Spam and trash, which searches leave out unless asked.
_NOT_HIDDEN = (_labelled("SPAM", False), _labelled("TRASH", False))


def _where(q: Query[Any], conditions: Iterable[Condition]) -> Query[Any]:
    for sql, params in conditions:
        q.where_sql(sql, *params)
    return q


def _in_threads_of(conditions: list[Condition]) -> Condition:
    """A thread that has a message meeting every condition."""
    where = " AND ".join(f"({sql})" for sql, _ in conditions) or "1"
    return f"id IN (SELECT thread_id FROM messages WHERE {where})", [p for _, params in conditions for p in params]


def _participants(messages: list[Message]) -> list[str]:
    return list(dict.fromkeys(email for m in messages for email in (m.from_email, *m.to, *m.cc)))


def _snippet(body: str) -> str:
    flat = " ".join(body.split())
    return flat if len(flat) <= 120 else flat[:117] + "..."


def _emails(values: list[str] | None, what: str) -> list[str]:
    """Normalise a recipient list: lower case, no blanks, no duplicates, order kept."""
    out = list(dict.fromkeys(e for e in (v.strip().lower() for v in values or []) if e))
    if len(out) > MAX_RECIPIENTS:
        raise ToolError.invalid_argument(f"{what} has {len(out)} addresses; at most {MAX_RECIPIENTS} are allowed.")
    return out


def _files(values: list[str] | None) -> list[str]:
    return [v.strip() for v in values or [] if v.strip()]


def _resolve_label(ctx: ToolContext, ref: str) -> Label:
    """A label by id (INBOX, Label_0003) or by name (Finance), case-insensitive."""
    ref = ref.strip()
    label = ctx.fetch(Label, ref) or ctx.fetch(Label, ref.upper())
    if label is None:
        label = ctx.query(Label).where_sql("lower(name) = lower(?)", ref).first()
    if label is None:
        known = ", ".join(label.name for label in ctx.query(Label).order_by("type", "name").all())
        raise ToolError.not_found("label", ref, f"Known labels: {known}. Use create_label to add a new one.")
    return label


def _get_message(ctx: ToolContext, message_id: str) -> Message:
    return ctx.get(Message, message_id, hint="Use search_messages to find message ids.")


def _get_draft(ctx: ToolContext, draft_id: str) -> Draft:
    return ctx.get(Draft, draft_id, hint="Use list_drafts to find draft ids.")


def _new_message(
    ctx: ToolContext,
    *,
    thread_id: str | None,
    to: list[str],
    cc: list[str],
    bcc: list[str],
    subject: str,
    body: str,
    attachments: list[str],
    in_reply_to: str | None,
) -> Message:
    """Send a message from the user: it gets the SENT label (and INBOX + UNREAD if sent to oneself)."""
    if thread_id is None:
        thread_id = ctx.insert(Thread(id=ctx.new_id("th"), subject=subject, updated_at=ctx.now_iso)).id
    else:
        ctx.update(ctx.get(Thread, thread_id), updated_at=ctx.now_iso)
    user = ctx.world.user
    labels = ["SENT", "INBOX", "UNREAD"] if user.email in (*to, *cc, *bcc) else ["SENT"]
    message = Message(
        id=ctx.new_id("msg"), thread_id=thread_id, from_email=user.email, from_name=user.name, to=to, cc=cc,
        bcc=bcc, subject=subject, body=body, attachments=attachments, label_ids=labels, in_reply_to=in_reply_to,
        sent_at=ctx.now_iso,
    )
    return ctx.insert(message)


def _check_sendable(to: list[str], subject: str, body: str) -> None:
    if not to:
        raise ToolError.invalid_argument("The message needs at least one recipient in 'to'.")
    if not subject.strip():
        raise ToolError.invalid_argument("The message needs a subject.")
    if not body.strip():
        raise ToolError.invalid_argument("The message body is empty.")


def _sender_line(m: Message) -> str:
    return f"{m.from_name} <{m.from_email}>" if m.from_name else m.from_email


def _quote(original: Message) -> str:
    """The quoted original under a reply, as mail clients write it."""
    quoted = "\n".join(f"> {line}" if line else ">" for line in original.body.splitlines())
    return f"On {original.sent_at}, {_sender_line(original)} wrote:\n{quoted}"


def _prefixed(prefix: str, subject: str) -> str:
    return subject if subject.lower().startswith(prefix.lower()) else f"{prefix}{subject}"


# -- seed: conversation templates ----------------------------------------------------------------


#: What a thread says about its invoice, so the plan's invoice it names fits the story: an open one
#: with a purchase order and one line (``po``), one paid in a single bank transfer (``paid``), one
#: overdue today (``overdue``), any open one (``open``).
InvoiceStory = Literal["po", "paid", "overdue", "open"]


@dataclass(frozen=True)
class _Template:
    """A seeded conversation: who writes each step ("them" or "me"), and the text, with {facts}."""

    kind: Literal["customer", "colleague"]
    subject: str
    labels: tuple[str, ...]
    steps: tuple[tuple[str, str, tuple[str, ...]], ...]  # (who, body, attachment names)
    min_steps: int = 1
    role: str | None = None  # the colleague's role for colleague threads
    categories: tuple[str, ...] = ()  # product categories that make sense here (empty: any)
    invoice: InvoiceStory | None = None  # the kind of invoice of the plan the thread is about


_CUSTOMER_TEMPLATES: tuple[_Template, ...] = (
    _Template(
        "customer",
        "Invoice {inv} does not match our PO",
        ("Finance", "Customers"),
        (
            ("them", "Hi {me},\n\nWe received invoice {inv} for {amount} ({qty} x {product}), but our purchase "
             "order {po} was for {qty_po} units. Could you check and send a corrected invoice?\n\nThanks,\n{first}",
             ("{inv}.pdf",)),
            ("me", "Hi {first},\n\nThanks for flagging this. I've asked our finance team to review invoice {inv} "
             "against PO {po}; I'll come back to you by {date}.\n\nBest,\n{me}", ()),
            ("them", "Thanks {me}. Please note our payment terms are net {terms} from the corrected invoice date."
             "\n\n{first}", ()),
        ),
        min_steps=2,
        invoice="po",
    ),
    _Template(
        "customer",
        "Refund request: duplicate charge on order {order}",
        ("Finance", "Customers", "IMPORTANT"),
        (
            ("them", "Hello,\n\nOur card was charged twice for order {order}: two charges of {amount} on "
             "{past_date}. Please refund the duplicate charge.\n\nRegards,\n{name}\n{company}", ()),
            ("me", "Hi {first},\n\nSorry about that. I can see both charges for order {order}. I'm arranging a "
             "refund of {amount} for the duplicate; it should reach your card within 5-10 business days.\n\n"
             "Best,\n{me}", ()),
            ("them", "Great, thank you. Could you send the refund confirmation once it's done?\n\n{first}", ()),
        ),
        min_steps=2,
    ),
    _Template(
        "customer",
        "Where is order {order}?",
        ("Orders", "Customers"),
        (
            ("them", "Hi,\n\nWe ordered {qty} x {product} (SKU {sku}) on {past_date}, order {order}, total "
             "{amount}. It hasn't arrived yet. Do you have a tracking number?\n\n{first}", ()),
            ("me", "Hi {first},\n\nOrder {order} shipped yesterday with tracking number {tracking}. It should "
             "arrive by {date}.\n\nBest,\n{me}", ()),
        ),
        categories=("hardware", "furniture", "supplies", "pantry", "merchandise"),
    ),
    _Template(
        "customer",
        "{product}: errors since {past_date}",
        ("Support", "IMPORTANT"),
        (
            ("them", "Hi team,\n\nSince {past_date} we get intermittent errors when using {product}. About {pct}% "
             "of requests fail with error 502 and it is blocking our team. Our account is under {company}.\n\n"
             "{name}", ()),
            ("me", "Hi {first},\n\nThanks for the report. I've opened ticket {ticket} with our support team and "
             "escalated it to engineering. We'll update you within 24 hours.\n\n{me}", ()),
            ("them", "Any news on ticket {ticket}? The errors are still happening.\n\n{first}", ()),
        ),
        categories=("subscriptions", "usage"),
        min_steps=2,
    ),
    _Template(
        "customer",
        "Meeting about the {product} renewal",
        ("Meetings", "Customers"),
        (
            ("them", "Hi {me},\n\nCould we meet to discuss the {product} renewal? I'm free on {date} at {time}, or "
             "the day after. We could meet at {place} ({place_address}) or do a video call.\n\nBest,\n{first}", ()),
            ("me", "Hi {first},\n\n{date} at {time} works for me. Let's meet at {place}. I'll send a calendar "
             "invite.\n\n{me}", ()),
        ),
        categories=("subscriptions",),
    ),
    _Template(
        "customer",
        "Quote for {qty} x {product}",
        ("Customers", "Orders"),
        (
            ("them", "Hello {me},\n\nCould you send us a quote for {qty} units of {product} (SKU {sku})? We'd need "
             "delivery to {address} by {date}.\n\nThanks,\n{name}\n{company}", ()),
            ("me", "Hi {first},\n\nHere is our quote {quote}: {qty} x {product} at {unit} each, {amount} in total, "
             "valid until {date}. Let me know if you'd like to proceed.\n\nBest regards,\n{me}", ("{quote}.pdf",)),
            ("them", "Thanks {me}, we'll review it internally and come back to you this week.\n\n{first}", ()),
        ),
        categories=("hardware", "furniture", "supplies", "pantry", "merchandise"),
        min_steps=2,
    ),
    _Template(
        "customer",
        "Payment for invoice {inv}",
        ("Finance",),
        (
            ("them", "Hi,\n\nWe paid invoice {inv} ({amount}) by bank transfer on {past_date}, reference {ref}. "
             "Please confirm receipt.\n\nKind regards,\n{name}\nAccounts payable, {company}",
             ("remittance-{ref}.pdf",)),
            ("me", "Hi {first},\n\nConfirmed: we received {amount} for invoice {inv}. Thank you!\n\n{me}", ()),
        ),
        invoice="paid",
    ),
    _Template(
        "customer",
        "Reminder: invoice {inv} is overdue",
        ("Finance", "Follow up"),
        (
            ("me", "Hi {first},\n\nA friendly reminder that invoice {inv} for {amount}, due on {past_date}, is "
             "still unpaid. Could you let me know when we can expect payment?\n\nThanks,\n{me}", ("{inv}.pdf",)),
            ("them", "Apologies, {me}. It's scheduled for our next payment run on {date}.\n\n{first}", ()),
        ),
        invoice="overdue",
    ),
    _Template(
        "customer",
        "Cancel our {product} subscription",
        ("Customers",),
        (
            ("them", "Hi,\n\nPlease cancel our {product} subscription at the end of the current billing period. "
             "We'd like confirmation in writing.\n\n{name}, {company}", ()),
            ("me", "Hi {first},\n\nSorry to see you go. I've scheduled the cancellation of {product} for the end of "
             "the period ({date}); you won't be charged after that.\n\n{me}", ()),
        ),
        categories=("subscriptions",),
    ),
    _Template(
        "customer",
        "New billing address for {company}",
        ("Customers", "Finance"),
        (
            ("them", "Hello,\n\nOur billing address has changed to {address}. Please use it on future invoices "
             "and reissue {inv}, which still shows our old address.\n\nThank you,\n{name}", ()),
        ),
        invoice="open",
    ),
    _Template(
        "customer",
        "Damaged items in order {order}",
        ("Orders", "Support"),
        (
            ("them", "Hi,\n\n{qty_damaged} of the {qty} {product} units in order {order} arrived damaged. We'd "
             "like a replacement or a refund of {amount_damaged}. Photos attached.\n\n{first}",
             ("damaged-{order}.jpg",)),
            ("me", "Hi {first},\n\nI'm sorry to hear that. We'll send a prepaid return label today and ship "
             "replacements as soon as the damaged units are on their way back.\n\n{me}", ()),
        ),
        categories=("hardware", "furniture"),
    ),
)

_COLLEAGUE_TEMPLATES: tuple[_Template, ...] = (
    _Template(
        "colleague",
        "Refund approval: {company}",
        ("Finance",),
        (
            ("me", "Hi {col},\n\n{company} was charged twice for order {order}. Can you approve a refund of "
             "{amount}?\n\nThanks,\n{me}", ()),
            ("them", "Approved. Please note the refund on their ticket and let them know.\n\n{col}", ()),
        ),
        role="finance lead",
    ),
    _Template(
        "colleague",
        "Escalation: {company}, ticket {ticket}",
        ("Support", "IMPORTANT"),
        (
            ("them", "Hi {me},\n\nHeads up: {name} at {company} reports failing requests since {past_date} "
             "(ticket {ticket}). Engineering is on it; can you keep the account informed?\n\n{col}", ()),
            ("me", "Thanks {col}, I'll call {first} this afternoon.\n\n{me}", ()),
        ),
        role="support lead",
    ),
    _Template(
        "colleague",
        "Office supplies order",
        (),
        (
            ("them", "Hi {me},\n\nI'm ordering {qty} x {product} for the office ({amount}). OK to go ahead?\n\n{col}",
             ()),
            ("me", "Yes, go ahead. Thanks {col}!", ()),
        ),
        role="office manager",
        categories=("supplies", "pantry", "furniture", "hardware"),
        min_steps=2,
    ),
    _Template(
        "colleague",
        "Ops sync moved to {date}",
        ("Meetings",),
        (
            ("them", "Hi all,\n\nThis week's ops sync moves to {date} at {time} in {room}. Agenda: open refunds, "
             "late deliveries and the {company} escalation.\n\n{col}", ()),
        ),
        role="product manager",
    ),
    _Template(
        "colleague",
        "Deal update: {company}",
        ("Customers",),
        (
            ("them", "Hi {me},\n\n{company} wants {qty} x {product}; I sent quote {quote} for {amount}. Can you join "
             "the call with {name} on {date} at {time}?\n\n{col}", ()),
            ("me", "Sure, count me in.\n\n{me}", ()),
        ),
        role="account executive",
        categories=("services", "subscriptions", "usage"),
    ),
    _Template(
        "colleague",
        "Month-end close: open invoices",
        ("Finance", "Follow up"),
        (
            ("them", "Hi {me},\n\nFor the month-end close I still need confirmation on invoice {inv} ({amount}) for "
             "{company}. Has it been sent to {name}?\n\n{col}", ()),
            ("me", "Yes, it went out on {past_date}. Payment is due by {date}.\n\n{me}", ()),
        ),
        role="accountant",
        invoice="open",
    ),
    _Template(
        "colleague",
        "Incident report {incident}",
        ("Support",),
        (
            ("them", "Summary of incident {incident}: on {past_date} the API error rate reached {pct}% for 40 "
             "minutes. Root cause: an expired certificate on a load balancer. Affected customers include "
             "{company}.\n\n{col}", ("incident-{incident}.pdf",)),
        ),
        role="engineering lead",
    ),
    _Template(
        "colleague",
        "Q{quarter} sales pipeline",
        ("Customers",),
        (
            ("them", "Hi {me},\n\nThe pipeline for next quarter stands at {big_amount}. The biggest open deal is "
             "{product} for {company}. Let's review it on {date}.\n\n{col}", ()),
        ),
        role="sales lead",
    ),
)

_SPAM = (
    ("Best Deals", "offers@bestdeals-mail.example", "You won a $500 gift card!!!",
     "Congratulations! Click here to claim your $500 gift card before midnight."),
    ("Crypto Alerts", "alerts@coin-profits.example", "Double your money in 7 days",
     "Our members made 300% last month. Join now, limited places."),
    ("IT Support", "it-helpdesk@secure-mail-login.example", "Your mailbox is full",
     "Your mailbox has exceeded its quota. Verify your password here to keep receiving email."),
)

@dataclass
class _SeedMessage:
    sender: tuple[str, str]  # (email, name)
    to: list[str]
    cc: list[str]
    body: str
    at: datetime
    labels: list[str]
    attachments: list[str] = dc_field(default_factory=list)


@dataclass
class _SeedThread:
    subject: str
    messages: list[_SeedMessage]
    labels: tuple[str, ...]



def _money(amount: float, currency: str) -> str:
    return f"{amount:,.2f} {currency}"


def _facts(
    rng: Any, world: World, me: Person, other: Person, start: datetime, categories: tuple[str, ...]
) -> dict[str, str]:
    """The concrete values one seeded thread talks about."""
    products = [p for p in world.products if not categories or p.category in categories] or list(world.products)
    product = rng.choice(products)
    qty = rng.randint(1, 4) if product.unit_price >= 500 else rng.randint(2, 40)
    amount = round(product.unit_price * qty, 2)
    qty_damaged = max(1, qty // 4)
    place = rng.choice(world.places)
    rooms = [p for p in world.places if p.kind == "meeting room"] or list(world.places)
    future = world.now_dt + timedelta(days=rng.randint(2, 14))
    past = start - timedelta(days=rng.randint(2, 20))
    org = world.organisation(other.organisation_id)
    return {
        "me": me.first_name,
        "first": other.first_name,
        "name": other.name,
        "company": org.name,
        "address": org.address,
        "product": product.name,
        "sku": product.sku,
        "qty": str(qty),
        "qty_po": str(qty + rng.randint(1, 5)),
        "qty_damaged": str(qty_damaged),
        "unit": _money(product.unit_price, world.currency),
        "amount": _money(amount, world.currency),
        "amount_damaged": _money(product.unit_price * qty_damaged, world.currency),
        "big_amount": _money(rng.randint(40, 400) * 1000.0, world.currency),
        "po": f"PO-{rng.randint(10000, 99999)}",
        "order": f"ORD-{rng.randint(10000, 99999)}",
        "quote": f"Q-{rng.randint(1000, 9999)}",
        "ref": f"TRF{rng.randint(100000, 999999)}",
        "ticket": f"T-{rng.randint(1000, 1999)}",
        "incident": f"INC-{rng.randint(100, 999)}",
        "tracking": f"1Z{rng.randint(10**9, 10**10 - 1)}",
        "pct": str(rng.randint(3, 30)),
        "quarter": str(((world.now_dt.month - 1) // 3 + 1) % 4 + 1),  # next quarter
        "date": f"{future:%A} {future.day} {future:%B}",
        "past_date": f"{past.day} {past:%B}",
        "time": rng.choice(("09:30", "10:00", "11:00", "14:00", "15:30", "16:00")),
        "place": place.name,
        "place_address": place.address,
        "room": rng.choice(rooms).name,
    }


def _render(text: str, facts: dict[str, str]) -> str:
    return text.format(**facts)


def _story_invoice(rng: Any, world: World, story: InvoiceStory, organisation_id: str | None) -> PlannedInvoice | None:
    """The plan's invoice a thread about ``story`` names: the organisation's where one fits."""
    today = world.now_dt.date().isoformat()
    fits = {
        "po": lambda i: i.status == "AUTHORISED" and i.reference is not None and len(i.lines) == 1,
        "paid": lambda i: i.status == "PAID" and len(i.payments) == 1 and i.payments[0].method == "bank_transfer",
        "overdue": lambda i: i.is_overdue(today),
        "open": lambda i: i.status == "AUTHORISED" and i.amount_due > 0,
    }[story]
    return world.plan.invoice_to_mention(rng, lambda i: fits(i) and _invoice_anchor(story, i) < today, organisation_id)


def _invoice_anchor(story: InvoiceStory, invoice: PlannedInvoice) -> str:
    """The day (ISO) from which a thread about ``story`` can be written: issued, paid, or gone overdue."""
    if story == "paid":
        return invoice.payments[0].date
    if story == "overdue":
        return invoice.due_date
    return invoice.date


def _day(iso: str) -> datetime:
    return datetime.fromisoformat(iso).replace(tzinfo=UTC)


def _invoice_facts(world: World, story: InvoiceStory, invoice: PlannedInvoice, rng: Any) -> dict[str, str]:
    """What a thread says about its invoice, as the books hold it."""
    due, line = _day(invoice.due_date), invoice.lines[0]
    moment = _day(_invoice_anchor(story, invoice))
    facts = {
        "inv": invoice.number,
        "amount": _money(invoice.amount_due if story == "overdue" else invoice.total, world.currency),
        "past_date": f"{moment.day} {moment:%B}",
        "terms": str(world.plan.payment_terms[invoice.organisation_id]),
    }
    if story == "po":
        facts.update(po=invoice.reference or "", product=line.description, qty=str(line.quantity),
                     qty_po=str(line.quantity + rng.randint(1, 5)))
    if story == "open":
        facts["date"] = f"{due:%A} {due.day} {due:%B}"
    return facts


def _build_thread(
    rng: Any, world: World, template: _Template, other: Person, cc: list[Person], start: datetime,
    invoice: PlannedInvoice | None = None,
) -> _SeedThread | None:
    me = world.user
    if invoice is not None and template.invoice is not None:
        # Written once there is something to write about: a day or so after the invoice's moment (at
        # once for a payment or a wrong invoice, any time later for a reminder or an address change).
        written = _day(_invoice_anchor(template.invoice, invoice)) + timedelta(hours=rng.uniform(8, 30))
        written = min(written, world.now_dt - timedelta(hours=1)).replace(second=0, microsecond=0)
        start = written if template.invoice in ("paid", "po") else max(start, written)
    facts = _facts(rng, world, me, other, start, template.categories)
    if template.kind == "colleague":
        facts["col"] = other.first_name
        # The colleague threads talk about a customer: name one so the text links to the world; a
        # thread about an invoice names the customer's billing contact.
        customer = (world.plan.billing_contacts[invoice.organisation_id] if invoice is not None
                    else rng.choice(world.customers))
        facts.update(
            first=customer.first_name, name=customer.name, company=world.organisation(customer.organisation_id).name
        )
    if invoice is not None and template.invoice is not None:
        facts.update(_invoice_facts(world, template.invoice, invoice, rng))
    n_steps = rng.randint(template.min_steps, len(template.steps))
    at, messages = start, []
    for i, (who, body, files) in enumerate(template.steps[:n_steps]):
        if i:
            at = at + timedelta(minutes=rng.randint(20, 2400))
        if at >= world.now_dt - timedelta(minutes=10):
            break
        sender, to, labels = (me, other, "SENT") if who == "me" else (other, me, "INBOX")
        messages.append(_SeedMessage(
            (sender.email, sender.name), [to.email], [p.email for p in cc], _render(body, facts), at, [labels],
            [_render(f, facts) for f in files],
        ))
    return _SeedThread(_render(template.subject, facts), messages, template.labels) if messages else None


@service.seeder
def seed(ctx: ToolContext) -> None:
    world, rng, now, me = ctx.world, ctx.rng("seed"), ctx.now, ctx.world.user
    colleagues, customers = list(world.team[1:]), list(world.customers)
    labels = [Label(id=name, name=name, type="system") for name in SYSTEM_LABELS] + [
        Label(id=ctx.new_id(USER_LABEL_PREFIX), name=name, type="user", created_at=ctx.days_from_now(-400))
        for name in USER_LABELS
    ]
    ctx.insert_many(labels)
    label_ids = {label.name: label.id for label in labels}

    def start_time() -> datetime:
        return (now - timedelta(days=rng.uniform(0.1, 90.0))).replace(second=0, microsecond=0)

    threads: list[_SeedThread | None] = []
    for _ in range(110):
        template, other = rng.choice(_CUSTOMER_TEMPLATES), rng.choice(customers)
        invoice = _story_invoice(rng, world, template.invoice, other.organisation_id) if template.invoice else None
        if template.invoice and invoice is None:
            continue  # no invoice in the books fits the story
        if invoice is not None and invoice.organisation_id != other.organisation_id:
            other = world.plan.billing_contacts[invoice.organisation_id]
        # Sometimes a second person from the same company is in copy (so reply-all matters).
        same_org = [p for p in customers if p.organisation_id == other.organisation_id and p.id != other.id]
        cc = [rng.choice(same_org)] if same_org and rng.random() < 0.3 else []
        threads.append(_build_thread(rng, world, template, other, cc, start_time(), invoice))
    for _ in range(30):
        template = rng.choice(_COLLEAGUE_TEMPLATES)
        other = world.team_member(template.role) if template.role else rng.choice(colleagues)
        cc = rng.sample([p for p in colleagues if p.id != other.id], rng.randint(0, 2))
        invoice = _story_invoice(rng, world, template.invoice, None) if template.invoice else None
        if template.invoice and invoice is None:
            continue
        threads.append(_build_thread(rng, world, template, other, cc, start_time(), invoice))
    for sender_name, sender_email, subject, body in _SPAM:
        spam = _SeedMessage((sender_email, sender_name), [me.email], [], body, start_time(), ["SPAM", "UNREAD"])
        threads.append(_SeedThread(subject, [spam], ()))

    # Ids follow time, as in a real mailbox: older threads and messages have smaller ids.
    built = sorted((t for t in threads if t is not None), key=lambda t: t.messages[0].at)
    trashed = set(rng.sample(range(len(built) - len(_SPAM)), 4))
    in_thread: list[tuple[str, _SeedMessage]] = []
    thread_rows = []
    for index, thread in enumerate(built):
        last_at = ctx.iso(thread.messages[-1].at)
        thread_rows.append(Thread(id=ctx.new_id("th"), subject=thread.subject, updated_at=last_at))
        starred = rng.random() < 0.08
        for i, msg in enumerate(thread.messages):
            if "INBOX" in msg.labels:
                recent = msg.at > now - timedelta(days=10)
                if rng.random() < (0.6 if recent else 0.05):
                    msg.labels.append("UNREAD")
                if starred and i == len(thread.messages) - 1:
                    msg.labels.append("STARRED")
            msg.labels += [label_ids[name] for name in thread.labels]
            if index in trashed:
                msg.labels.append("TRASH")
            in_thread.append((thread_rows[-1].id, msg))
    ctx.insert_many(thread_rows)
    subjects = {t.id: t.subject for t in thread_rows}
    last_in_thread: dict[str, str] = {}
    messages = []
    for thread_id, msg in sorted(in_thread, key=lambda item: item[1].at):
        subject = subjects[thread_id]
        messages.append(Message(
            id=ctx.new_id("msg"), thread_id=thread_id, from_email=msg.sender[0], from_name=msg.sender[1], to=msg.to,
            cc=msg.cc, bcc=[], subject=_prefixed("Re: ", subject) if thread_id in last_in_thread else subject,
            body=msg.body, attachments=msg.attachments, label_ids=list(dict.fromkeys(msg.labels)),
            in_reply_to=last_in_thread.get(thread_id), sent_at=ctx.iso(msg.at),
        ))
        last_in_thread[thread_id] = messages[-1].id
    ctx.insert_many(messages)
    ctx.insert_many(_seed_drafts(ctx, rng, messages))


def _seed_drafts(ctx: ToolContext, rng: Any, messages: list[Message]) -> list[Draft]:
    """A few unfinished drafts: replies to recent mail, a new email, and one that still has no recipient."""
    world = ctx.world
    # Newest first; a stable sort keeps id order among messages sent at the same minute.
    inbound = sorted((m for m in messages if "INBOX" in m.label_ids and "TRASH" not in m.label_ids),
                     key=lambda m: m.sent_at, reverse=True)
    created = ctx.days_from_now(-1)
    drafts = [
        Draft(
            id=ctx.new_id("dr"), thread_id=original.thread_id, in_reply_to=original.id, to=[original.from_email],
            cc=list(original.cc), bcc=[], subject=_prefixed("Re: ", original.subject),
            body=f"Hi {(original.from_name or original.from_email).split()[0]},\n\nThanks for your message. I'm "
            "looking into it and will get back to you shortly.",
            attachments=[], created_at=created, updated_at=created,
        )
        for original in (inbound[1], inbound[4])
    ]
    finance = world.team_member("finance lead")
    customer = rng.choice(world.customers)
    company = world.organisation(customer.organisation_id).name
    for to, subject, body in (
        ([finance.email], f"Refunds to review for {company}",
         f"Hi {finance.first_name},\n\nCould we go through the open refund requests from {company} this week?"),
        ([customer.email], "Following up on our quote",
         f"Hi {customer.first_name},\n\nI wanted to follow up on the quote we sent last week."),
        ([], "Team offsite ideas", "Agenda ideas: roadmap review, customer panel, dinner. Budget to confirm."),
    ):
        when = ctx.days_from_now(-rng.uniform(0.5, 5))
        drafts.append(Draft(id=ctx.new_id("dr"), to=to, cc=[], bcc=[], subject=subject, body=body, attachments=[],
                            created_at=when, updated_at=when))
    return drafts


# -- messages ------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("look for emails about {query}", "find the emails from {from_email}", "search the mailbox for {query}"),
)
def search_messages(
    ctx: ToolContext,
    query: str | None = None,
    from_email: EmailAddress | None = None,
    from_name: PersonName | None = None,
    to_email: EmailAddress | None = None,
    subject: str | None = None,
    label: Tag | None = None,
    is_unread: bool | None = None,
    is_starred: bool | None = None,
    has_attachment: bool | None = None,
    after: Date | None = None,
    before: Date | None = None,
    include_spam_trash: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Message]:
    """Search the mailbox, newest first. Like Gmail search: every filter you pass must match.

    Spam and trash are left out unless include_spam_trash is true (or you filter by the SPAM or TRASH label).

    Args:
        query: Words to find in the subject, body, sender name or any address (case-insensitive; every word must
            match).
        from_email: Only messages sent by this address.
        from_name: Only messages whose sender's name contains this text, e.g. a person's full name.
        to_email: Only messages sent to this address (in To or Cc).
        subject: Text the subject must contain.
        label: Only messages with this label, by id or name: INBOX, SENT, UNREAD, STARRED, IMPORTANT, SPAM, TRASH,
            or one of the user's labels such as Finance (see list_labels).
        is_unread: true for unread messages only, false for read ones only.
        is_starred: true for starred messages only, false for the others.
        has_attachment: true for messages with attachments only, false for those without.
        after: Only messages sent on or after this date (YYYY-MM-DD).
        before: Only messages sent before this date (YYYY-MM-DD).
        include_spam_trash: Also search spam and trash.
        limit: Maximum number of messages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Message).search(query, *_TEXT_FIELDS)
    q.filter(from_email=from_email.strip().lower() if from_email else None).contains("from_name", from_name)
    q.contains("subject", subject).compare("sent_at", ">=", after).compare("sent_at", "<", before)
    if to_email:
        _where(q, [_list_holds(to_email.strip().lower(), "to", "cc")])
    label_id = _resolve_label(ctx, label).id if label else None
    if label_id:
        _where(q, [_labelled(label_id)])
    _where(q, [_labelled(flag, wanted) for flag, wanted in (("UNREAD", is_unread), ("STARRED", is_starred))
               if wanted is not None])
    if has_attachment is not None:
        q.where_sql(f"json_array_length(attachments) {'>' if has_attachment else '='} 0")
    if not include_spam_trash and label_id not in ("SPAM", "TRASH"):
        _where(q, _NOT_HIDDEN)
    return q.order_by("-sent_at", "-id").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the email {message_id}", "read {message_id}"))
def get_message(ctx: ToolContext, message_id: MessageId) -> Message:
    """Get one message with its full body, recipients, attachments and labels.

    Args:
        message_id: The message's id, e.g. msg_0042 (see search_messages).
    """
    return _get_message(ctx, message_id)


@service.tool(
    "write",
    intent="notify",
    phrases=("email {to} about {subject}", "send {to} an email saying {body}", "write to {to} by email: {body}"),
)
def send_email(
    ctx: ToolContext,
    to: list[EmailAddress],
    subject: Subject,
    body: Text,
    cc: list[EmailAddress] | None = None,
    bcc: list[EmailAddress] | None = None,
    attachments: list[FileName] | None = None,
) -> Message:
    """Send a new email from the user's address; it starts a new thread and gets the SENT label.

    To answer an existing message use reply_to_message (it keeps the thread); to pass one on use forward_message.

    Args:
        to: Recipient addresses (at least one).
        subject: The subject line.
        body: The plain-text body.
        cc: Addresses to copy in.
        bcc: Addresses to copy in blind (the other recipients do not see them).
        attachments: Names of files to attach, e.g. INV-2025-0142.pdf.
    """
    to_list = _emails(to, "to")
    _check_sendable(to_list, subject, body)
    return _new_message(
        ctx, thread_id=None, to=to_list, cc=_emails(cc, "cc"), bcc=_emails(bcc, "bcc"), subject=subject.strip(),
        body=body.strip(), attachments=_files(attachments), in_reply_to=None,
    )


@service.tool(
    "write",
    intent="reply",
    phrases=("reply to {message_id} saying {body}", "answer {message_id} by email: {body}"),
)
def reply_to_message(
    ctx: ToolContext,
    message_id: MessageId,
    body: Text,
    reply_all: bool = False,
    cc: list[EmailAddress] | None = None,
    attachments: list[FileName] | None = None,
) -> Message:
    """Reply to a message in its thread. The subject gets "Re: " and the original is quoted below your text.

    The reply goes to the original sender (or, when replying to a message the user sent, to its recipients).
    With reply_all, everyone else on the original To and Cc is copied in too. A message in the trash must be
    restored with untrash_message before you can reply to it.

    Args:
        message_id: The message to reply to.
        body: Your reply text (the quoted original is added after it).
        reply_all: Also copy everyone else who was on the original message.
        cc: Extra addresses to copy in.
        attachments: Names of files to attach.
    """
    original = _get_message(ctx, message_id)
    if "TRASH" in original.label_ids:
        raise ToolError.invalid_state(f"Message {message_id} is in the trash; use untrash_message before replying.")
    if "SPAM" in original.label_ids:
        raise ToolError.invalid_state(
            f"Message {message_id} is marked as spam; remove the SPAM label with modify_message before replying."
        )
    if not body.strip():
        raise ToolError.invalid_argument("The reply body is empty; write the text of your reply.")
    me = ctx.world.user.email
    to = list(original.to) if original.from_email == me else [original.from_email]
    copied = [e for e in (*original.to, *original.cc) if e != me] if reply_all else []
    copied = [e for e in dict.fromkeys([*copied, *_emails(cc, "cc")]) if e not in to]
    return _new_message(
        ctx, thread_id=original.thread_id, to=_emails(to, "to"), cc=_emails(copied, "cc"), bcc=[],
        subject=_prefixed("Re: ", original.subject), body=f"{body.strip()}\n\n{_quote(original)}",
        attachments=_files(attachments), in_reply_to=original.id,
    )


@service.tool("write", intent="forward", phrases=("forward {message_id} to {to}", "pass {message_id} on to {to}"))
def forward_message(
    ctx: ToolContext,
    message_id: MessageId,
    to: list[EmailAddress],
    note: Text | None = None,
    cc: list[EmailAddress] | None = None,
) -> Message:
    """Forward a message, with its attachments, to other people. The subject gets "Fwd: ".

    A message in the trash must be restored with untrash_message first.

    Args:
        message_id: The message to forward.
        to: Who to forward it to (at least one address).
        note: Your text above the forwarded message.
        cc: Addresses to copy in.
    """
    original = _get_message(ctx, message_id)
    if "TRASH" in original.label_ids:
        raise ToolError.invalid_state(f"Message {message_id} is in the trash; use untrash_message before forwarding.")
    to_list = _emails(to, "to")
    if not to_list:
        raise ToolError.invalid_argument("Forwarding needs at least one recipient in 'to'.")
    forwarded = (
        "---------- Forwarded message ---------\n"
        f"From: {_sender_line(original)}\nDate: {original.sent_at}\nSubject: {original.subject}\n"
        f"To: {', '.join(original.to)}\n\n{original.body}"
    )
    return _new_message(
        ctx, thread_id=original.thread_id, to=to_list, cc=_emails(cc, "cc"), bcc=[],
        subject=_prefixed("Fwd: ", original.subject),
        body=f"{note.strip()}\n\n{forwarded}" if note and note.strip() else forwarded,
        attachments=list(original.attachments), in_reply_to=None,
    )


@service.tool(
    "write",
    intent="tag",
    phrases=("label {message_id} as {add_labels}", "file {message_id} under {add_labels}", "mark {message_id} as read"),
)
def modify_message(
    ctx: ToolContext,
    message_id: MessageId,
    add_labels: list[Tag] | None = None,
    remove_labels: list[Tag] | None = None,
) -> Message:
    """Add or remove labels on a message: this is how to mark read/unread, star, archive or file a message.

    Mark as read: remove UNREAD. Mark as unread: add UNREAD. Star: add STARRED. Archive: remove INBOX.
    File under a label: add its name (e.g. Finance). TRASH, SENT and DRAFT cannot be changed here:
    use trash_message / untrash_message.

    Args:
        message_id: The message to change.
        add_labels: Label ids or names to add, e.g. ["STARRED", "Finance"].
        remove_labels: Label ids or names to remove, e.g. ["UNREAD"].
    """
    message = _get_message(ctx, message_id)
    if not add_labels and not remove_labels:
        raise ToolError.invalid_argument("Pass add_labels or remove_labels (or both).")
    add = [_resolve_label(ctx, ref).id for ref in add_labels or []]
    remove = [_resolve_label(ctx, ref).id for ref in remove_labels or []]
    reserved = sorted({*add, *remove} & set(RESERVED_LABELS))
    if reserved:
        raise ToolError.invalid_argument(
            f"{' and '.join(reserved)} cannot be added or removed with modify_message: use trash_message or "
            "untrash_message for the trash; sent mail and drafts come from send_email and the draft tools."
        )
    both = sorted(set(add) & set(remove))
    if both:
        raise ToolError.invalid_argument(f"Labels {', '.join(both)} are both added and removed; pick one.")
    labels = [i for i in message.label_ids if i not in remove]
    labels += [i for i in dict.fromkeys(add) if i not in labels]
    return ctx.update(message, label_ids=labels)


@service.tool("write", intent="delete", phrases=("delete the email {message_id}", "move {message_id} to the trash"))
def trash_message(ctx: ToolContext, message_id: MessageId) -> Message:
    """Move a message to the trash. It disappears from searches until restored with untrash_message.

    Args:
        message_id: The message to move to the trash.
    """
    message = _get_message(ctx, message_id)
    if "TRASH" in message.label_ids:
        raise ToolError.invalid_state(f"Message {message_id} is already in the trash; untrash_message restores it.")
    return ctx.update(message, label_ids=[*message.label_ids, "TRASH"])


@service.tool("write", intent="restore", phrases=("get {message_id} back from the trash",))
def untrash_message(ctx: ToolContext, message_id: MessageId) -> Message:
    """Restore a message from the trash, with the labels it had before.

    Args:
        message_id: The trashed message to restore (search_messages with label TRASH lists them).
    """
    message = _get_message(ctx, message_id)
    if "TRASH" not in message.label_ids:
        raise ToolError.invalid_state(f"Message {message_id} is not in the trash; nothing to restore.")
    return ctx.update(message, label_ids=[i for i in message.label_ids if i != "TRASH"])


# -- threads -------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("look through the email threads with {participant_email}", "find the email conversations about {query}"),
)
def list_threads(
    ctx: ToolContext,
    query: str | None = None,
    participant_email: EmailAddress | None = None,
    label: Tag | None = None,
    is_unread: bool | None = None,
    include_spam_trash: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[ThreadSummaryOut]:
    """List conversations (threads), most recently active first. A thread matches if any of its messages does.

    Args:
        query: Words to find in a message's subject, body, sender name or addresses (case-insensitive; every word
            must match).
        participant_email: Only threads with a message from, to or copied to this address.
        label: Only threads with a message carrying this label (id or name, e.g. INBOX or Finance).
        is_unread: true: only threads with unread messages; false: only fully read threads.
        include_spam_trash: Also count messages in spam and trash.
        limit: Maximum number of threads to return (1-100).
        cursor: next_cursor from a previous page.
    """
    conditions: list[Condition] = [] if include_spam_trash else list(_NOT_HIDDEN)
    if participant_email:
        email = participant_email.strip().lower()
        test, params = _list_holds(email, "to", "cc")
        conditions.append((f"from_email = ? OR {test}", [email, *params]))
    if label:
        conditions.append(_labelled(_resolve_label(ctx, label).id))
    threads = ctx.query(Thread)
    if query and query.strip():
        # The kernel's word search finds the matching messages (a search hits few); their threads are the candidates.
        hits = _where(ctx.query(Message).search(query, *_TEXT_FIELDS), conditions).all()
        threads.where_in("id", {m.thread_id for m in hits})
    else:
        _where(threads, [_in_threads_of(conditions)])
    if is_unread is not None:
        unread_sql, params = _in_threads_of([_labelled("UNREAD"), *([] if include_spam_trash else _NOT_HIDDEN)])
        threads.where_sql(unread_sql if is_unread else f"NOT ({unread_sql})", *params)
    page = threads.order_by("-updated_at", "-id").page(limit, cursor)
    # Every message of the page's threads in one query, oldest first, grouped by thread here.
    by_thread: dict[str, list[Message]] = {t.id: [] for t in page.items}
    for m in ctx.query(Message).where_in("thread_id", by_thread).order_by("sent_at", "id").all():
        by_thread[m.thread_id].append(m)
    names = _label_names(ctx)
    items = []
    for thread in page.items:
        messages = by_thread[thread.id]
        visible = messages if include_spam_trash else [
            m for m in messages if "TRASH" not in m.label_ids and "SPAM" not in m.label_ids
        ] or messages
        last = visible[-1]
        items.append(ThreadSummaryOut(
            id=thread.id,
            subject=thread.subject,
            participants=_participants(visible),
            message_count=len(visible),
            unread_count=sum("UNREAD" in m.label_ids for m in visible),
            label_names=list(dict.fromkeys(names.get(i, i) for m in visible for i in m.label_ids)),
            last_message_at=last.sent_at,
            last_sender_email=last.from_email,
            snippet=_snippet(last.body),
        ))
    return Page(items=items, total=page.total, next_cursor=page.next_cursor)


@service.tool("read", intent="get", phrases=("read the whole email thread {thread_id}",))
def get_thread(ctx: ToolContext, thread_id: ThreadId) -> ThreadOut:
    """Get a whole conversation: every message of the thread, oldest first, trashed ones included (see in_trash).

    Args:
        thread_id: The thread's id, e.g. th_0012 (every message carries its thread_id).
    """
    thread = ctx.get(Thread, thread_id, hint="Use list_threads or search_messages to find thread ids.")
    messages = ctx.query(Message).where(thread_id=thread.id).order_by("sent_at", "id").all()
    return ThreadOut(
        id=thread.id, subject=thread.subject, participants=_participants(messages),
        messages=_records(ctx, Message, messages),
    )


# -- drafts --------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check the unsent email drafts about {query}",))
def list_drafts(ctx: ToolContext, query: str | None = None, limit: Limit = 20, cursor: Cursor = None) -> Page[Draft]:
    """List the user's unsent drafts, most recently edited first.

    Args:
        query: Words to find in the draft's subject, body or recipients (case-insensitive; every word must match).
        limit: Maximum number of drafts to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Draft).search(query, "subject", "body", "to", "cc")
    return q.order_by("-updated_at", "-id").page(limit, cursor)


@service.tool(
    "write",
    intent="draft",
    phrases=("draft an email to {to} about {subject}", "prepare a reply to {reply_to_message_id} without sending it"),
)
def create_draft(
    ctx: ToolContext,
    to: list[EmailAddress] | None = None,
    subject: str = "",
    body: Text = "",
    cc: list[EmailAddress] | None = None,
    bcc: list[EmailAddress] | None = None,
    attachments: list[FileName] | None = None,
    reply_to_message_id: MessageId | None = None,
) -> Draft:
    """Save a draft to finish and send later with send_draft. A draft may be incomplete (no recipient yet).

    With reply_to_message_id the draft is a reply in that message's thread: its recipient and "Re:" subject
    default from the original.

    Args:
        to: Recipient addresses.
        subject: The subject line.
        body: The plain-text body.
        cc: Addresses to copy in.
        bcc: Addresses to copy in blind.
        attachments: Names of files to attach.
        reply_to_message_id: Make the draft a reply to this message.
    """
    to_list = _emails(to, "to")
    thread_id = None
    if reply_to_message_id:
        original = _get_message(ctx, reply_to_message_id)
        thread_id = original.thread_id
        if not to_list:
            to_list = list(original.to) if original.from_email == ctx.world.user.email else [original.from_email]
        subject = subject.strip() or _prefixed("Re: ", original.subject)
    return ctx.insert(Draft(
        id=ctx.new_id("dr"), thread_id=thread_id, in_reply_to=reply_to_message_id, to=to_list,
        cc=_emails(cc, "cc"), bcc=_emails(bcc, "bcc"), subject=subject.strip() or None, body=body.strip(),
        attachments=_files(attachments), created_at=ctx.now_iso, updated_at=ctx.now_iso,
    ))


@service.tool(
    "write", intent="update", phrases=("edit the draft {draft_id}", "change the draft {draft_id} to say {body}")
)
def update_draft(
    ctx: ToolContext,
    draft_id: DraftId,
    to: list[EmailAddress] | None = None,
    subject: str | None = None,
    body: Text | None = None,
    cc: list[EmailAddress] | None = None,
    bcc: list[EmailAddress] | None = None,
    attachments: list[FileName] | None = None,
) -> Draft:
    """Change a draft. Only the fields you pass change; a list you pass replaces the old one.

    Args:
        draft_id: The draft to change (see list_drafts).
        to: New recipient list.
        subject: New subject line.
        body: New body.
        cc: New copy list.
        bcc: New blind-copy list.
        attachments: New list of attached file names.
    """
    draft = _get_draft(ctx, draft_id)
    if all(v is None for v in (to, subject, body, cc, bcc, attachments)):
        raise ToolError.invalid_argument("Pass at least one field to change.")
    changes: dict[str, Any] = {
        "to": None if to is None else _emails(to, "to"),
        "cc": None if cc is None else _emails(cc, "cc"),
        "bcc": None if bcc is None else _emails(bcc, "bcc"),
        "body": None if body is None else body.strip(),
        "attachments": None if attachments is None else _files(attachments),
    }
    changes = {k: v for k, v in changes.items() if v is not None}
    if subject is not None:
        changes["subject"] = subject.strip() or None
    return ctx.update(draft, **changes, updated_at=ctx.now_iso)


@service.tool("write", intent="notify", phrases=("send the draft {draft_id}", "send off the email in {draft_id}"))
def send_draft(ctx: ToolContext, draft_id: DraftId) -> Message:
    """Send a draft. It becomes a SENT message (in its thread, if it is a reply) and the draft is removed.

    The draft needs a recipient, a subject and a body; fix it with update_draft first if one is missing.

    Args:
        draft_id: The draft to send.
    """
    draft = _get_draft(ctx, draft_id)
    fix = f"Use update_draft on {draft_id} to complete it, then send it."
    if not draft.to:
        raise ToolError.invalid_state(f"Draft {draft_id} has no recipient in 'to'. {fix}")
    if not draft.subject:
        raise ToolError.invalid_state(f"Draft {draft_id} has no subject. {fix}")
    if not draft.body.strip():
        raise ToolError.invalid_state(f"Draft {draft_id} has an empty body. {fix}")
    ctx.delete(draft)
    return _new_message(
        ctx, thread_id=draft.thread_id, to=list(draft.to), cc=list(draft.cc), bcc=list(draft.bcc),
        subject=draft.subject, body=draft.body, attachments=list(draft.attachments), in_reply_to=draft.in_reply_to,
    )


@service.tool("write", intent="delete", phrases=("discard the draft {draft_id}",))
def delete_draft(ctx: ToolContext, draft_id: DraftId) -> DeletedOut:
    """Discard a draft for good (drafts do not go to the trash).

    Args:
        draft_id: The draft to discard.
    """
    ctx.delete(_get_draft(ctx, draft_id))
    return DeletedOut(id=draft_id, deleted=True)


# -- labels --------------------------------------------------------------------------------------


@service.tool("read", intent="check", phrases=("check how many unread emails each label has",))
def list_labels(ctx: ToolContext) -> list[Label]:
    """List every label (system labels first, then the user's own) with how many messages carry it, and how many
    of those are unread.
    """
    return ctx.query(Label).order_by("type", "name").all()


@service.tool("write", intent="create", phrases=("create an email label called {name}",))
def create_label(ctx: ToolContext, name: Tag) -> Label:
    """Create a user label to file messages under (apply it with modify_message). Names are unique.

    Args:
        name: The label's name, e.g. Invoices 2025.
    """
    name = name.strip()
    if not name:
        raise ToolError.invalid_argument("The label name must not be empty.")
    existing = ctx.query(Label).where_sql("lower(name) = lower(?)", name).first()
    if existing is not None or name.upper() in SYSTEM_LABELS:
        label_id = existing.id if existing else name.upper()
        raise ToolError.conflict(f"A label named {name!r} already exists (id {label_id}); apply that one instead.")
    label = Label(id=ctx.new_id(USER_LABEL_PREFIX), name=name, type="user", created_at=ctx.now_iso)
    return ctx.insert(label)


# -- world events (what arrives from outside; the composer plants task triggers with them) ---------


@service.event("email_received")
def email_received(
    ctx: ToolContext, from_email: str, from_name: str, subject: str, body: str, hours_ago: float = 1.0,
    to: list[str] | None = None, attachments: list[str] | None = None,
) -> str:
    """An email from outside lands in the user's inbox, unread, as a new thread (with these files attached, by name);
    returns the message id."""
    sent = ctx.days_from_now(-hours_ago / 24)
    thread = ctx.insert(Thread(id=ctx.new_id("th"), subject=subject, updated_at=sent))
    message = ctx.insert(
        Message(
            id=ctx.new_id("msg"), thread_id=thread.id, from_email=from_email.lower(), from_name=from_name,
            to=to or [ctx.world.user.email], cc=[], bcc=[], subject=subject, body=body,
            attachments=[a.strip() for a in attachments or [] if a.strip()], label_ids=["INBOX", "UNREAD"],
            in_reply_to=None, sent_at=sent,
        )
    )
    return message.id
