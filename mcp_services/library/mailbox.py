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
from mcp_services.kernel.plans.commerce import PlannedOrder, commerce_plan
from mcp_services.kernel.prose import Register, day_name, industry_facts, letter, money, write
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


#: What a thread is about, so the record of the world it names fits the story. Invoices of the plan: an open
#: one with a purchase order and one line (``po``), one paid in a single bank transfer (``paid``), one overdue
#: (``overdue``), any open one (``open``); a duplicate card charge (``duplicate``); orders of the store on
#: their way (``in_transit``), delivered (``damaged``) or delivered late (``late``); a customer's proposal
#: (``proposal``); the biggest open deal (``pipeline``).
Story = Literal["po", "paid", "overdue", "open", "duplicate", "in_transit", "damaged", "late", "proposal", "pipeline"]
InvoiceStory = Literal["po", "paid", "overdue", "open"]
_INVOICE_STORIES = ("po", "paid", "overdue", "open")


@dataclass(frozen=True)
class _Template:
    """A seeded conversation: who writes each step ("them" or "me"), and the text, with {facts} and [choices].

    Each step's body is what the writer says between their greeting and their sign-off (both added).
    """

    kind: Literal["customer", "colleague"]
    subject: str
    labels: tuple[str, ...]
    steps: tuple[tuple[str, str, tuple[str, ...]], ...]  # (who, body, attachment names)
    min_steps: int = 1
    role: str | None = None  # the colleague's role for colleague threads
    categories: tuple[str, ...] = ()  # product categories that make sense here (empty: any)
    story: Story | None = None  # the kind of record of the world the thread is about
    to_team: bool = False  # a colleague writes to the whole team


_CUSTOMER_TEMPLATES: tuple[_Template, ...] = (
    _Template(
        "customer", "[Invoice {inv} does not match our PO|Invoice {inv} vs {po}|Query on invoice {inv}]",
        ("Finance", "Customers"),
        (
            ("them", "[We received|We've received|Our accounts team received] invoice {inv} for {amount} ({qty} x "
             "{product}), but our purchase order {po} [was for|covered|said] {qty_po} units. [Could you check and send a "
             "corrected invoice?|Can you reissue it with the right quantity?|Which one is right?] [We can't approve it "
             "until then.|It's holding up our payment run.|]", ("{inv}.pdf",)),
            ("me", "[Thanks for flagging this.|Good catch, thank you.|Thanks for letting us know.] [I've asked our finance "
             "team to review|Finance is checking|I'm looking into] invoice {inv} against {po}; I'll come back to you "
             "by {date}.", ()),
            ("them", "[Thanks.|Great, thanks.|Appreciated.] Please note our payment terms are net {terms} from the "
             "corrected invoice date.", ()),
        ),
        min_steps=2, story="po",
    ),
    _Template(
        "customer", "[Duplicate charge for invoice {inv}|Charged twice for {inv}|Refund request: double payment of {inv}]",
        ("Finance", "Customers", "IMPORTANT"),
        (
            ("them", "[Our card was charged twice|We were charged twice|Your system took two payments] for invoice "
             "{inv}: two charges of {amount} on {past_date}. [Please refund the duplicate charge.|Could you refund the "
             "second one?|We only owe it once.] [Our finance team spotted it in the statement.|It shows twice on our "
             "card.|]", ()),
            ("me", "[Sorry about that.|Apologies for the trouble.|Thanks for catching it.] [I can see both charges|Both "
             "charges show on our side] for invoice {inv}. I'm arranging a refund of {amount} for the duplicate; it should "
             "reach your card within 5-10 business days.", ()),
            ("them", "[Great, thank you.|Thanks for sorting it.|Perfect.] Could you send the refund confirmation once "
             "it's done?", ()),
        ),
        min_steps=2, story="duplicate",
    ),
    _Template(
        "customer", "[Where is order {order}?|Order {order}: delivery date?|Tracking for order {order}]",
        ("Orders", "Customers"),
        (
            ("them", "[We ordered|Our team ordered|I placed an order for] {qty} x {product} on {order_date} (order "
             "{order}). [Do you have a tracking number?|When will it arrive?|Could you tell me when to expect it?] "
             "[We need it for {work}.|{site} is waiting for it.|]", ()),
            ("me", "Order {order} [shipped on|left our warehouse on|went out on] {shipped_date} with tracking number "
             "{tracking}. [It should arrive by|The carrier expects to deliver it by|You should have it by] {date}.", ()),
        ),
        categories=("hardware", "furniture", "supplies", "pantry", "merchandise"), story="in_transit",
    ),
    _Template(
        "customer", "[Order {order} arrived late|Late delivery: order {order}|Order {order} was late]",
        ("Orders", "Support"),
        (
            ("them", "Order {order} [finally arrived|turned up|was delivered] on {delivered}, [days after the {promised} "
             "you promised|later than the date you gave us|well after the promised {promised}]. [It held up {work}.|We "
             "had to work around it during {rush}.|Not what we expected from you.] [What happened?|Can you make sure it "
             "doesn't happen again?|]", ()),
            ("me", "[I'm sorry about the delay.|Apologies for the late delivery.|Sorry, that's not the service we aim "
             "for.] [The carrier held the parcel at a sort facility.|The carrier had a delay on the way.|The parcel was "
             "held up in transit.] [I'll look into what we can offer you.|I've passed this to our support lead.|Thank "
             "you for your patience.]", ()),
        ),
        categories=("hardware", "furniture", "supplies", "pantry", "merchandise"), story="late",
    ),
    _Template(
        "customer", "[{product}: errors since {past_date}|Errors with {product}|{product} keeps failing]",
        ("Support", "IMPORTANT"),
        (
            ("them", "[Since|Starting] {past_date} we [get|see|keep getting] intermittent errors when using {product}. "
             "About {pct}% of requests fail with error 502 and [it is blocking|it's slowing down|it's disrupting] "
             "{work}. [Our account is under {company}.|The account is in {company}'s name.|]", ()),
            ("me", "[Thanks for the report.|Thanks for the details.|Sorry to hear that.] [I've opened a ticket with our "
             "support team|I've logged it with support] and escalated it to engineering. We'll update you within 24 "
             "hours.", ()),
            ("them", "[Any news on this?|Any update?|Just checking in:] the errors are still happening[ for {clients}|].",
             ()),
        ),
        categories=("subscriptions", "usage"), min_steps=2,
    ),
    _Template(
        "customer", "[Meeting about the {product} renewal|{product} renewal: time to meet?|Renewal chat]",
        ("Meetings", "Customers"),
        (
            ("them", "[Could we meet to discuss|Can we find time to talk about|I'd like to go over] the {product} "
             "renewal? I'm free on {date} at {time}[, or the day after|, or any time that week|]. We could meet at "
             "{place} ({place_address}) or do a video call.", ()),
            ("me", "{date} at {time} [works for me|suits me|is perfect]. [Let's meet at {place}.|See you at {place}.] "
             "[I'll send a calendar invite.|Invite to follow.|]", ()),
        ),
        categories=("subscriptions",),
    ),
    _Template(
        "customer", "[Quote for {product}|Request for a quote|Pricing for {product}]",
        ("Customers", "Orders"),
        (
            ("them", "[Could you send us a quote for|We'd like pricing for|Please quote us for] {product} and "
             "{product2}? [We'd need it before {rush}.|It's for {site}.|Our budget review is next week.]", ()),
            ("me", "[Here is|Attached is|Please find] our proposal {proposal}: {total} in total[, valid until "
             "{valid}|]. [Let me know if you'd like to proceed.|Happy to walk you through it.|Any questions, just "
             "ask.]", ("{proposal}.pdf",)),
            ("them", "[Thanks, we'll review it internally|Thanks, I'll share it with the team|Great, we'll look at it] "
             "and come back to you this week.", ()),
        ),
        min_steps=2, story="proposal",
    ),
    _Template(
        "customer", "[Payment for invoice {inv}|Remittance: {inv}|Invoice {inv} paid]",
        ("Finance",),
        (
            ("them", "[We paid|We've paid|Payment sent for] invoice {inv} ({amount}) by bank transfer on {past_date}, "
             "reference {inv}. [Please confirm receipt.|Could you confirm it arrived?|Remittance attached.]",
             ("remittance-{inv}.pdf",)),
            ("me", "[Confirmed:|Thank you,] we [received|have] {amount} for invoice {inv}. [Thank you!|All settled.|]",
             ()),
        ),
        story="paid",
    ),
    _Template(
        "customer", "[Reminder: invoice {inv} is overdue|Invoice {inv} overdue|Overdue invoice {inv}]",
        ("Finance", "Follow up"),
        (
            ("me", "[A friendly reminder|Just a reminder|A quick note] that invoice {inv} for {amount}, due on "
             "{past_date}, is still unpaid. [Could you let me know when we can expect payment?|When can we expect "
             "it?|Is anything holding it up?]", ("{inv}.pdf",)),
            ("them", "[Apologies.|Sorry for the delay.|Thanks for the reminder.] It's scheduled for our next payment run "
             "on {date}.", ()),
        ),
        story="overdue",
    ),
    _Template(
        "customer", "[Cancel our {product} subscription|Cancelling {product}|{product}: cancellation]",
        ("Customers",),
        (
            ("them", "Please cancel our {product} subscription at the end of the current billing period. [We'd like "
             "confirmation in writing.|Please confirm by email.|] [We've moved {site} to another tool.|Budgets were cut "
             "for next year.|]", ()),
            ("me", "[Sorry to see you go.|Thanks for letting us know.|Understood.] I've scheduled the cancellation of "
             "{product} for the end of the period ({date}); you won't be charged after that.", ()),
        ),
        categories=("subscriptions",),
    ),
    _Template(
        "customer", "[New billing address for {company}|Billing address change|Updated address for invoices]",
        ("Customers", "Finance"),
        (
            ("them", "Our billing address has changed to {address}. [Please use it on future invoices|Could you update "
             "it for future invoices] and reissue {inv}, which still shows our old address.", ()),
        ),
        story="open",
    ),
    _Template(
        "customer", "[Damaged items in order {order}|Order {order} arrived damaged|Broken {product} in order {order}]",
        ("Orders", "Support"),
        (
            ("them", "[Some of the|A few of the|Part of the] {product} units in order {order} [arrived damaged|were "
             "broken on arrival|came crushed] on {delivered}. [We'd like a replacement or a refund|Please replace "
             "them|Can you refund them] ({unit} each). [Photos attached.|I can send photos.|]", ("damaged-{order}.jpg",)),
            ("me", "[I'm sorry to hear that.|Sorry about that.|Apologies.] [We'll send a prepaid return label today|A "
             "return label is on its way] and ship replacements as soon as the damaged units are on their way back.",
             ()),
        ),
        categories=("hardware", "furniture"), story="damaged",
    ),
)

_COLLEAGUE_TEMPLATES: tuple[_Template, ...] = (
    _Template(
        "colleague", "[Refund approval: {company}|Can you approve a refund for {company}?|Duplicate charge: {company}]",
        ("Finance",),
        (
            ("me", "{company} was charged twice for invoice {inv}. [Can you approve a refund of {amount}?|OK to refund "
             "the duplicate {amount}?|Could you sign off a refund of {amount}?]", ()),
            ("them", "[Approved.|Yes, go ahead.|Approved, thanks.] [Please note the refund on their ticket and let them "
             "know.|Let them know once it's done.|]", ()),
        ),
        role="finance lead", story="duplicate",
    ),
    _Template(
        "colleague", "[Escalation: {company}|{company} escalation|Heads up on {company}]",
        ("Support", "IMPORTANT"),
        (
            ("them", "[Heads up:|FYI,|Quick heads-up:] {name} at {company} reports failing requests since {past_date}. "
             "[Engineering is on it|We've escalated it to engineering]; [can you keep the account informed?|could you "
             "call them?|can you own the communication?]", ()),
            ("me", "[Thanks,|Got it,|Will do,] I'll call {first} [this afternoon|today|first thing tomorrow].", ()),
        ),
        role="support lead",
    ),
    _Template(
        "colleague", "[Office supplies order|Ordering {product}|Supplies for the office]",
        (),
        (
            ("them", "I'm [ordering|about to order|putting in an order for] {qty} x {product} for the office at {unit} "
             "each. [OK to go ahead?|Any objections?|Shout if we need anything else.]", ()),
            ("me", "[Yes, go ahead.|Sounds good, thanks.|Go for it.]", ()),
        ),
        role="office manager", categories=("supplies", "pantry", "furniture", "hardware"), min_steps=2,
    ),
    _Template(
        "colleague", "[Office closed on {date}|Office closure {date}|Building works on {date}]",
        ("Meetings",),
        (
            ("them", "The office is [closed|shut|not available] on {date} [for building works|for the fire safety "
             "inspection|while the floors are redone]. [Please work from home that day.|{place} is booked for anyone "
             "who needs a desk.|Meetings that day move online.]", ()),
        ),
        role="office manager", to_team=True,
    ),
    _Template(
        "colleague", "[Deal update: {company}|{company}: proposal sent|{company} pipeline update]",
        ("Customers",),
        (
            ("them", "{company} [wants|is interested in|asked about] {product}; I sent proposal {proposal} for {total}. "
             "[Can you join the call with {name} on {date} at {time}?|Could you help me with the next call?|Any tips "
             "before I follow up?]", ()),
            ("me", "[Sure, count me in.|Happy to help.|Yes, add me to the invite.]", ()),
        ),
        role="account executive", story="proposal",
    ),
    _Template(
        "colleague", "[Month-end close: open invoices|Close: invoice {inv}|Checking invoice {inv}]",
        ("Finance", "Follow up"),
        (
            ("them", "For the month-end close I still need confirmation on invoice {inv} ({amount}) for {company}. "
             "[Has it been sent to {name}?|Did {name} receive it?|Is it with {name}?]", ()),
            ("me", "[Yes, it went out on {past_date}.|Yes, sent on {past_date}.] Payment is due by {date}.", ()),
        ),
        role="accountant", story="open",
    ),
    _Template(
        "colleague", "[Incident summary|Incident report: API errors|What happened on {past_date}]",
        ("Support",),
        (
            ("them", "[Summary of the incident|What happened]: on {past_date} the API error rate reached {pct}% for 40 "
             "minutes. Root cause: [an expired certificate on a load balancer|a full disk on a database replica|a bad "
             "configuration push]. Affected customers include {company}.", ("incident-summary.pdf",)),
        ),
        role="engineering lead",
    ),
    _Template(
        "colleague", "[Next quarter's pipeline|Pipeline review|Our biggest open deal]",
        ("Customers",),
        (
            ("them", "The biggest open deal [for next quarter|right now|in the pipeline] is {deal} ({deal_amount}). "
             "[Let's review it on {date}.|Can we go through it on {date}?|I'd like your view before {date}.]", ()),
        ),
        role="sales lead", story="pipeline",
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
    return money(amount, currency)


def _facts(
    rng: Any, world: World, me: Person, other: Person, start: datetime, categories: tuple[str, ...]
) -> dict[str, str]:
    """The everyday values one seeded thread talks about."""
    products = [p for p in world.products if not categories or p.category in categories] or list(world.products)
    product, product2 = rng.sample(products, 2) if len(products) > 1 else (products[0], products[0])
    qty = rng.randint(1, 4) if product.unit_price >= 500 else rng.randint(2, 40)
    place = rng.choice(world.places)
    rooms = [p for p in world.places if p.kind == "meeting room"] or list(world.places)
    future = world.now_dt + timedelta(days=rng.randint(2, 14))
    past = start - timedelta(days=rng.randint(2, 20))
    org = world.organisation(other.organisation_id)
    return {
        "me": me.first_name, "first": other.first_name, "name": other.name, "company": org.name, "address": org.address,
        "product": product.name, "product2": product2.name, "sku": product.sku, "qty": str(qty),
        "unit": _money(product.unit_price, world.currency), "pct": str(rng.randint(3, 30)),
        "date": day_name(future), "past_date": f"{past.day} {past:%B}",
        "time": rng.choice(("09:30", "10:00", "11:00", "14:00", "15:30", "16:00")),
        "place": place.name, "place_address": place.address, "room": rng.choice(rooms).name,
        **industry_facts(rng, org.industry),
    }


def _day(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")) if "T" in iso else datetime.fromisoformat(iso).replace(tzinfo=UTC)


def _short(iso: str) -> str:
    moment = _day(iso)
    return f"{moment.day} {moment:%B}"


_Told = tuple[datetime, dict[str, str], Person | None]  # written from, what it says, who it is from or about


def _story(rng: Any, world: World, story: Story, person: Person | None) -> _Told | None:
    """The record of the world a thread about ``story`` names (``person``'s where one fits); None when none fits."""
    if story in _INVOICE_STORIES:
        invoice = _story_invoice(rng, world, story, person.organisation_id if person else None)  # type: ignore[arg-type]
        if invoice is None:
            return None
        # Written once there is something to write about: the day after it fell due, or hours after it happened.
        anchor = _day(_invoice_anchor(story, invoice)) + timedelta(hours=rng.uniform(26, 50) if story == "overdue" else rng.uniform(8, 30))  # type: ignore[arg-type]
        return anchor, _invoice_facts(world, story, invoice, rng), world.plan.billing_contacts[invoice.organisation_id]  # type: ignore[arg-type]
    if story == "duplicate":
        twins = world.plan.duplicates
        if not twins:
            return None
        charge = next((c for c in twins if person and c.email == person.email), None) or rng.choice(twins)
        payer = next(p for p in world.people if p.email == charge.email)
        return (_day(charge.date) + timedelta(hours=rng.uniform(10, 40)),
                {"inv": charge.invoice_number, "amount": _money(charge.amount, world.currency),
                 "past_date": _short(charge.date), "company": world.organisation(payer.organisation_id).name}, payer)
    if story == "proposal":
        proposals = [p for p in world.plan.proposals if person is None or p.organisation_id == person.organisation_id]
        if not proposals:
            return None
        proposal = rng.choice(proposals)
        contact = next(p for p in world.people if p.email == proposal.prepared_for_email)
        return (_day(proposal.date) - timedelta(hours=rng.uniform(20, 60)),
                {"proposal": proposal.number, "total": _money(proposal.total, world.currency),
                 "valid": _short(proposal.valid_until), "product": proposal.lines[0].description,
                 "product2": proposal.lines[-1].description}, contact)
    if story == "pipeline":
        deals = [d for d in commerce_plan(world).deals if d.stage in ("proposal", "negotiation")]
        if not deals:
            return None
        deal = max(deals, key=lambda d: d.amount)
        return (world.now_dt - timedelta(days=rng.uniform(1, 20)),
                {"deal": deal.name, "deal_amount": _money(deal.amount, world.currency)}, None)
    orders = [o for o in commerce_plan(world).orders if _order_fits(story, o)]
    if not orders:
        return None
    order = next((o for o in orders if person and o.customer.email == person.email), None) or rng.choice(orders)
    shipped = order.fulfillments[0]
    line = order.lines[0]
    facts = {"order": order.name, "qty": str(line.quantity), "product": line.product_title,
             "unit": _money(line.price, world.currency), "order_date": _short(order.created_at),
             "shipped_date": _short(shipped.created_at), "tracking": shipped.tracking_number or order.name,
             "date": day_name(_day(shipped.estimated_delivery_at or order.created_at))}
    if story == "in_transit":
        return _day(shipped.created_at) + timedelta(hours=rng.uniform(12, 30)), facts, order.customer
    assert shipped.delivered_at is not None and shipped.estimated_delivery_at is not None
    facts.update(delivered=_short(shipped.delivered_at), promised=_short(shipped.estimated_delivery_at))
    return _day(shipped.delivered_at) + timedelta(hours=rng.uniform(2, 30)), facts, order.customer


def _order_fits(story: Story, order: PlannedOrder) -> bool:
    shipped = order.fulfillments[0] if order.fulfillments else None
    if shipped is None or shipped.tracking_number is None or shipped.estimated_delivery_at is None:
        return False
    if story == "in_transit":
        return order.story == "in_transit"
    if story == "late":
        return order.story == "delivered_late"
    return story == "damaged" and order.story == "delivered" and shipped.delivered_at is not None


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


def _invoice_facts(world: World, story: InvoiceStory, invoice: PlannedInvoice, rng: Any) -> dict[str, str]:
    """What a thread says about its invoice, as the books hold it."""
    due, line = _day(invoice.due_date), invoice.lines[0]
    moment = _day(_invoice_anchor(story, invoice))
    org = world.organisation(invoice.organisation_id)
    facts = {
        "inv": invoice.number,
        "amount": _money(invoice.amount_due if story == "overdue" else invoice.total, world.currency),
        "past_date": f"{moment.day} {moment:%B}",
        "terms": str(world.plan.payment_terms[invoice.organisation_id]),
        "company": org.name, "address": org.address,
    }
    if story == "po":
        facts.update(po=invoice.reference or "", product=line.description, qty=str(line.quantity),
                     qty_po=str(line.quantity + rng.randint(1, 5)))
    if story == "open":
        facts["date"] = day_name(due)
    return facts


def _body(rng: Any, world: World, text: str, facts: dict[str, str], sender: Person, to: Person | None,
          register: Register) -> str:
    """A message as its writer writes it: a greeting, the body, their sign-off."""
    home = sender.organisation_id == world.home_organisation_id
    company = world.organisation(sender.organisation_id).name
    greeting_for = to.first_name if to is not None else "all"
    return letter(rng, register, text, facts, to_first=greeting_for, first=sender.first_name, name=sender.name,
                  title=sender.job_title.capitalize() if not home or rng.random() < 0.5 else "", company=company)


def _build_thread(
    rng: Any, world: World, template: _Template, other: Person, cc: list[Person], start: datetime,
) -> _SeedThread | None:
    me = world.user
    told = _story(rng, world, template.story, other if template.kind == "customer" else None) if template.story else None
    if template.story and told is None:
        return None  # no record of the world fits the story
    if told is not None:
        if told[2] is not None and template.kind == "customer" and told[2].id != other.id:
            other = told[2]  # the record's own customer writes; their colleagues, not the first one's, are in copy
            cc = [p for p in cc if p.organisation_id == other.organisation_id and p.id != other.id]
        # Written once there is something to write about, a day or so after the record's moment.
        written = min(told[0], world.now_dt - timedelta(hours=1)).replace(second=0, microsecond=0)
        start = written if template.story in ("paid", "po", "duplicate", "in_transit", "damaged", "late", "proposal") else max(start, written)
    facts = _facts(rng, world, me, other, start, template.categories)
    if template.kind == "colleague":
        facts["col"] = other.first_name
        # A colleague thread talks about a customer: the record's where it has one, else anyone.
        customer = told[2] if told is not None and told[2] is not None else rng.choice(world.customers)
        facts.update(first=customer.first_name, name=customer.name,
                     company=world.organisation(customer.organisation_id).name)
    if told is not None:
        facts.update(told[1])
    team = [p for p in world.team if p.id != other.id]
    n_steps = rng.randint(template.min_steps, len(template.steps))
    at, messages = start, []
    register: Register = "customer" if template.kind == "customer" else "colleague"
    for i, (who, body, files) in enumerate(template.steps[:n_steps]):
        if i:
            at = at + timedelta(minutes=rng.randint(20, 2400))
        if at >= world.now_dt - timedelta(minutes=10):
            break
        sender, to, labels = (me, other, "SENT") if who == "me" else (other, me, "INBOX")
        if template.to_team:
            recipients, copied, greeted = [p.email for p in team], [], None
        else:
            recipients, copied, greeted = [to.email], [p.email for p in cc], to
        messages.append(_SeedMessage(
            (sender.email, sender.name), recipients, copied, _body(rng, world, body, facts, sender, greeted, register),
            at, [labels], [write(rng, f, facts) for f in files],
        ))
    return _SeedThread(write(rng, template.subject, facts), messages, template.labels) if messages else None


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
    for _ in range(min(world.scaled(110), 440)):  # the user's own inbox: it grows with the customers, within reason
        template, other = rng.choice(_CUSTOMER_TEMPLATES), rng.choice(customers)
        # Sometimes a second person from the same company is in copy (so reply-all matters).
        same_org = [p for p in customers if p.organisation_id == other.organisation_id and p.id != other.id]
        cc = [rng.choice(same_org)] if same_org and rng.random() < 0.3 else []
        threads.append(_build_thread(rng, world, template, other, cc, start_time()))
    for _ in range(30):
        template = rng.choice(_COLLEAGUE_TEMPLATES)
        other = world.team_member(template.role) if template.role else rng.choice(colleagues)
        cc = rng.sample([p for p in colleagues if p.id != other.id], rng.randint(0, 2))
        threads.append(_build_thread(rng, world, template, other, cc, start_time()))
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
    drafts = []
    for original in (inbound[1], inbound[4]):
        # Started a while after the message came in (and before now).
        sent = _day(original.sent_at)
        created = ctx.iso(sent + (ctx.now - sent) * rng.uniform(0.2, 0.9))
        first = (original.from_name or original.from_email).split()[0]
        drafts.append(Draft(
            id=ctx.new_id("dr"), thread_id=original.thread_id, in_reply_to=original.id, to=[original.from_email],
            cc=list(original.cc), bcc=[], subject=_prefixed("Re: ", original.subject),
            body=write(rng, "[Hi|Hello|Dear] {first},\n\n[Thanks for your message.|Thanks for getting in touch.|Thank you "
                       "for the update.] [I'm looking into it|I'm checking this with the team|Let me look into this] and "
                       "will get back to you [shortly|today|by tomorrow|this week].", {"first": first}),
            attachments=[], created_at=created, updated_at=created,
        ))
    finance = world.team_member("finance lead")
    proposal = rng.choice(world.plan.proposals)
    customer = next(p for p in world.people if p.email == proposal.prepared_for_email)
    company = world.organisation(customer.organisation_id).name
    facts = {"finance": finance.first_name, "company": company, "first": customer.first_name,
             "proposal": proposal.number, "sent": _short(proposal.date), **industry_facts(rng, world.home.industry)}
    for to, subject, body in (
        ([finance.email], f"Refunds to review for {company}",
         "Hi {finance},\n\n[Could we go through|Can we look at|Shall we review] the open refund requests from {company} "
         "[this week|before the close|on Thursday]?[ I'd like to clear them before {rush}.|]"),
        ([customer.email], "[Following up on our proposal|Proposal {proposal}|Checking in on our proposal]",
         "Hi {first},\n\nI wanted to [follow up on|check in about] proposal {proposal}, which we sent on {sent}. "
         "[Any questions so far?|Happy to walk you through it.|Would a short call help?]"),
        ([], "Team offsite ideas", "[Agenda ideas|Ideas for the offsite|Offsite]: [roadmap review|a customer panel|"
         "a {work} retrospective], [a workshop|team games|a hike], dinner. Budget to confirm[ with {finance}|]."),
    ):
        when = ctx.days_from_now(-rng.uniform(0.5, 5))
        drafts.append(Draft(id=ctx.new_id("dr"), to=to, cc=[], bcc=[], subject=write(rng, subject, facts),
                            body=write(rng, body, facts), attachments=[], created_at=when, updated_at=when))
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
    """An email from outside lands in the user's inbox, unread (with these files attached, by name); returns its id.

    A new thread, unless the subject answers one ("Re: ..."): then it replies in the thread with that subject
    the sender is on, or, where there is none, after the email the user sent them with that subject two days
    before (every "Re:" has its thread).
    """
    sent = ctx.days_from_now(-hours_ago / 24)
    sender = from_email.lower()
    recipients = to or [ctx.world.user.email]
    original = _answered(ctx, sender, subject, sent) if subject[:3].lower() == "re:" else None
    if original is None and subject[:3].lower() == "re:":
        first = (from_name or sender).split()[0]
        base = _base(subject)
        user = ctx.world.user
        opened = ctx.insert(Thread(id=ctx.new_id("th"), subject=base, updated_at=sent))
        original = ctx.insert(Message(
            id=ctx.new_id("msg"), thread_id=opened.id, from_email=user.email, from_name=user.name, to=[sender], cc=[],
            bcc=[], subject=base, body=f"Hi {first},\n\nFollowing up about {base}: let me know if you have any "
            f"questions.\n\nBest,\n{user.first_name}", attachments=[], label_ids=["SENT"], in_reply_to=None,
            sent_at=ctx.days_from_now(-hours_ago / 24 - 2),
        ))
    if original is None:
        thread_id = ctx.insert(Thread(id=ctx.new_id("th"), subject=subject, updated_at=sent)).id
    else:
        thread_id = original.thread_id
        ctx.update(ctx.get(Thread, thread_id), updated_at=max(sent, ctx.get(Thread, thread_id).updated_at))
    message = ctx.insert(
        Message(
            id=ctx.new_id("msg"), thread_id=thread_id, from_email=sender, from_name=from_name,
            to=recipients, cc=[], bcc=[], subject=subject, body=body,
            attachments=[a.strip() for a in attachments or [] if a.strip()], label_ids=["INBOX", "UNREAD"],
            in_reply_to=original.id if original else None, sent_at=sent,
        )
    )
    return message.id


def _base(subject: str) -> str:
    """A subject without its "Re:" and "Fwd:" prefixes."""
    while subject[:3].lower() == "re:" or subject[:4].lower() == "fwd:":
        subject = subject.split(":", 1)[1].strip()
    return subject


def _answered(ctx: ToolContext, sender: str, subject: str, before: str) -> Message | None:
    """The latest message before ``before`` of a thread with ``subject``'s base that ``sender`` is on, if any."""
    base = _base(subject)
    found = ctx.query(Message).where_sql("lower(subject) IN (lower(?), lower(?))", base, f"Re: {base}")
    found.compare("sent_at", "<", before)
    _where(found, [_list_holds(sender, "to", "cc")])
    theirs = ctx.query(Message).where_sql("lower(subject) IN (lower(?), lower(?))", base, f"Re: {base}")
    theirs.where(from_email=sender).compare("sent_at", "<", before)
    candidates = found.all() + theirs.all()
    return max(candidates, key=lambda m: (m.sent_at, m.id)) if candidates else None
