"""Helpdesk: customer support tickets, public replies and internal notes (modelled on Zendesk Support).

Requesters are the world's customers (the same name, email and phone as in the CRM); agents are
the home team. Ticket status follows Zendesk's rules: new -> open / pending -> solved -> closed;
a solved ticket can be reopened (a reply reopens it too); a closed ticket is final and takes a
follow-up ticket instead. Seeded tickets talk about orders, charges, invoices and bugs with amounts,
order numbers and invoice numbers in their text, so other services' values can be found here.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel
from sqlalchemy import JSON, ColumnElement, ForeignKey, String, cast, exists, func, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
from mcp_services.kernel.semantic import (
    CompanyName,
    DateTime,
    EmailAddress,
    EntityId,
    PersonName,
    PhoneNumber,
    Subject,
    Tag,
    Text,
)
from mcp_services.kernel.world import Person, Product

TicketId = EntityId("helpdesk.ticket")
CommentId = EntityId("helpdesk.comment")
UserId = EntityId("helpdesk.user")

TicketStatus = Literal["new", "open", "pending", "solved", "closed"]
#: Statuses a caller may set; nothing ever goes back to "new".
SettableStatus = Literal["open", "pending", "solved", "closed"]
Priority = Literal["low", "normal", "high", "urgent"]
TicketType = Literal["question", "incident", "problem", "task"]
Channel = Literal["email", "web", "phone", "chat"]
UserRole = Literal["end-user", "agent", "admin"]
SatisfactionScore = Literal["unoffered", "offered", "good", "bad"]

#: Where each status may go next (Zendesk: closed is final; solved may only reopen or close).
NEXT_STATUSES: dict[str, tuple[str, ...]] = {
    "new": ("open", "pending", "solved", "closed"),
    "open": ("pending", "solved", "closed"),
    "pending": ("open", "solved", "closed"),
    "solved": ("open", "closed"),
    "closed": (),
}


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str]
    email: Mapped[str] = mapped_column(unique=True)
    phone: Mapped[str | None]
    role: Mapped[str]
    organization_name: Mapped[str | None]
    created_at: Mapped[str]


class Ticket(Base):
    __tablename__ = "tickets"
    id: Mapped[str] = mapped_column(primary_key=True)
    subject: Mapped[str]
    description: Mapped[str]
    status: Mapped[str] = mapped_column(index=True)
    priority: Mapped[str]
    type: Mapped[str]
    channel: Mapped[str]
    requester_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    assignee_email: Mapped[str | None]
    tags: Mapped[list[str]] = mapped_column(JSON)
    merged_into: Mapped[str | None] = mapped_column(ForeignKey("tickets.id"))
    follow_up_of: Mapped[str | None] = mapped_column(ForeignKey("tickets.id"))
    satisfaction_score: Mapped[str] = mapped_column(String(16), default="unoffered")
    satisfaction_comment: Mapped[str | None]
    created_at: Mapped[str]
    updated_at: Mapped[str]
    solved_at: Mapped[str | None]


class Comment(Base):
    __tablename__ = "comments"
    id: Mapped[str] = mapped_column(primary_key=True)
    ticket_id: Mapped[str] = mapped_column(ForeignKey("tickets.id"), index=True)
    author_email: Mapped[str]
    author_name: Mapped[str]
    body: Mapped[str]
    public: Mapped[bool]
    created_at: Mapped[str]


service = Service(
    "helpdesk",
    "Customer support desk: tickets from customers with status, priority, assignee and tags, "
    "public replies, internal notes, merging and satisfaction ratings.",
    Base,
    title="Helpdesk",
)


# -- results -------------------------------------------------------------------------------------


class UserOut(BaseModel):
    id: UserId
    name: PersonName
    email: EmailAddress
    phone: PhoneNumber | None
    role: UserRole
    organization_name: CompanyName | None
    created_at: DateTime


class TicketOut(BaseModel):
    id: TicketId
    subject: Subject
    description: Text
    status: TicketStatus
    priority: Priority
    type: TicketType
    channel: Channel
    requester_id: UserId
    requester_name: PersonName
    requester_email: EmailAddress
    organization_name: CompanyName | None
    assignee_email: EmailAddress | None
    tags: list[Tag]
    merged_into: TicketId | None
    follow_up_of: TicketId | None
    satisfaction_score: SatisfactionScore
    satisfaction_comment: Text | None
    comment_count: int
    created_at: DateTime
    updated_at: DateTime
    solved_at: DateTime | None


class CommentOut(BaseModel):
    id: CommentId
    ticket_id: TicketId
    author_name: PersonName
    author_email: EmailAddress
    body: Text
    public: bool
    created_at: DateTime


class MergeOut(BaseModel):
    target: TicketOut
    merged_ticket_ids: list[TicketId]


def _user_out(u: User) -> UserOut:
    return UserOut.model_validate(u, from_attributes=True)


def _ticket_out(ctx: ToolContext, t: Ticket) -> TicketOut:
    return _ticket_outs(ctx, [t])[0]


def _ticket_outs(ctx: ToolContext, tickets: list[Ticket]) -> list[TicketOut]:
    """Tickets as results, with requesters and comment counts fetched in two queries per page."""
    if not tickets:
        return []
    requesters = {
        u.id: u for u in ctx.db.scalars(select(User).where(User.id.in_({t.requester_id for t in tickets})))
    }
    counts = dict(
        ctx.db.execute(
            select(Comment.ticket_id, func.count())
            .where(Comment.ticket_id.in_([t.id for t in tickets]))
            .group_by(Comment.ticket_id)
        ).all()
    )
    out = []
    for t in tickets:
        requester = requesters.get(t.requester_id)
        if requester is None:
            raise ToolError.not_found("user", t.requester_id)
        out.append(
            TicketOut(
                id=t.id,
                subject=t.subject,
                description=t.description,
                status=t.status,  # type: ignore[arg-type]
                priority=t.priority,  # type: ignore[arg-type]
                type=t.type,  # type: ignore[arg-type]
                channel=t.channel,  # type: ignore[arg-type]
                requester_id=requester.id,
                requester_name=requester.name,
                requester_email=requester.email,
                organization_name=requester.organization_name,
                assignee_email=t.assignee_email,
                tags=list(t.tags),
                merged_into=t.merged_into,
                follow_up_of=t.follow_up_of,
                satisfaction_score=t.satisfaction_score,  # type: ignore[arg-type]
                satisfaction_comment=t.satisfaction_comment,
                comment_count=int(counts.get(t.id, 0)),
                created_at=t.created_at,
                updated_at=t.updated_at,
                solved_at=t.solved_at,
            )
        )
    return out


def _comment_out(c: Comment) -> CommentOut:
    return CommentOut.model_validate(c, from_attributes=True)


# -- rules shared by the tools -------------------------------------------------------------------

_TICKET_HINT = "Use search_tickets or list_requested_tickets to find ticket ids."


def _ticket(ctx: ToolContext, ticket_id: str) -> Ticket:
    return ctx.get(Ticket, ticket_id, "ticket", _TICKET_HINT)


def _editable(ctx: ToolContext, ticket_id: str) -> Ticket:
    """A ticket that may still change: closed tickets are final in Zendesk."""
    ticket = _ticket(ctx, ticket_id)
    if ticket.status == "closed":
        why = f" (it was merged into {ticket.merged_into})" if ticket.merged_into else ""
        raise ToolError.invalid_state(
            f"Ticket {ticket_id} is closed{why} and can no longer be changed. "
            f"Open a follow-up with create_ticket(follow_up_of='{ticket_id}') instead."
        )
    return ticket


def _agent(ctx: ToolContext, email: str) -> User:
    """The agent with this email; only agents and admins can be assigned tickets."""
    user = ctx.db.scalar(select(User).where(User.email == email.lower()))
    if user is None or user.role == "end-user":
        raise ToolError.invalid_argument(
            f"{email} is not a helpdesk agent, so tickets cannot be assigned to them. "
            "Use search_users(role='agent') to see who can be assigned."
        )
    return user


def _acting_user(ctx: ToolContext) -> User:
    """The agent the caller acts for: the world's user, who is always seeded as an agent."""
    user = ctx.db.scalar(select(User).where(User.email == ctx.world.user.email))
    assert user is not None, "the world's user is seeded as an agent"
    return user


def _set_status(ctx: ToolContext, ticket: Ticket, status: str) -> None:
    """Move a ticket to ``status`` if the workflow allows it; say which moves are allowed if not."""
    if status == ticket.status:
        raise ToolError.invalid_state(f"Ticket {ticket.id} is already {status}.")
    allowed = NEXT_STATUSES[ticket.status]
    if status not in allowed:
        if ticket.status == "closed":
            raise ToolError.invalid_state(
                f"Ticket {ticket.id} is closed, which is final. Create a follow-up with "
                f"create_ticket(follow_up_of='{ticket.id}')."
            )
        raise ToolError.invalid_state(
            f"Ticket {ticket.id} cannot go from {ticket.status} to {status}; from {ticket.status} it can "
            f"go to: {', '.join(allowed)}."
        )
    if status in ("solved", "closed"):
        # Zendesk assigns an unassigned ticket to the agent who solves it.
        if ticket.assignee_email is None:
            ticket.assignee_email = ctx.world.user.email
        if ticket.solved_at is None:
            ticket.solved_at = ctx.now_iso
        if ticket.satisfaction_score == "unoffered":
            ticket.satisfaction_score = "offered"
    if status == "open" and ticket.status == "solved":
        ticket.solved_at = None
    ticket.status = status
    ticket.updated_at = ctx.now_iso


def _add_comment(ctx: ToolContext, ticket: Ticket, body: str, public: bool, author: User) -> Comment:
    if not body.strip():
        raise ToolError.invalid_argument("The comment body must not be empty.")
    comment = Comment(
        id=ctx.new_id("cm"),
        ticket_id=ticket.id,
        author_email=author.email,
        author_name=author.name,
        body=body.strip(),
        public=public,
        created_at=ctx.now_iso,
    )
    ctx.db.add(comment)
    ticket.updated_at = ctx.now_iso
    ctx.db.flush()
    return comment


def _normalise_tags(tags: list[str]) -> list[str]:
    """Zendesk tags are lowercase single words; spaces become underscores."""
    out: list[str] = []
    for tag in tags:
        clean = "_".join(tag.strip().lower().split())
        if not clean or any(ch in clean for ch in "\"',#"):
            raise ToolError.invalid_argument(
                f"Tag {tag!r} is not valid: use letters, digits, '_', '-' or ':' (e.g. 'refund_request')."
            )
        if clean not in out:
            out.append(clean)
    return out


def _tag_condition(tag: str) -> ColumnElement[bool]:
    # Tags are a JSON list of quoted strings; matching the quoted value avoids prefix false hits.
    return cast(Ticket.tags, String).like(f'%"{_normalise_tags([tag])[0]}"%')


# -- seed ----------------------------------------------------------------------------------------

_PHYSICAL = ("hardware", "furniture", "pantry", "supplies", "merchandise")
_ANY = (*_PHYSICAL, "subscriptions", "usage", "services")

# Each template: subject, description, ticket type, tags, and the product categories its story fits
# (a late delivery is about a desk, not a workshop). Placeholders come from _facts().
_TEMPLATES: tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "Charged twice for order {order}",
        "Hi, our card was charged {amount} twice on {date} for order {order} ({qty} x {product}). "
        "Please refund the duplicate charge.",
        "incident",
        ("billing", "double_charge"),
        _ANY,
    ),
    (
        "Refund request for order {order}",
        "We returned {qty} x {product} from order {order} on {date}. We are still waiting for the refund of "
        "{amount}. Can you confirm when it will be processed?",
        "question",
        ("billing", "refund_request"),
        _PHYSICAL,
    ),
    (
        "Invoice {invoice} does not match our quote",
        "Invoice {invoice} shows {amount} for {product}, but the quote we accepted was {quote}. "
        "Please send a corrected invoice before the due date.",
        "problem",
        ("billing", "invoice"),
        _ANY,
    ),
    (
        "Copy of invoice {invoice} needed",
        "Our accounts team cannot find invoice {invoice} ({amount}, issued {date}). Could you email a PDF copy "
        "to {email}?",
        "question",
        ("billing", "invoice"),
        _ANY,
    ),
    (
        "Order {order} has not arrived",
        "We ordered {qty} x {product} (order {order}, {amount}) on {date} and the delivery is now late. "
        "Can you tell us where it is?",
        "incident",
        ("shipping", "delivery_delay"),
        _PHYSICAL,
    ),
    (
        "{product} arrived damaged",
        "Order {order} arrived today but {qty} x {product} were damaged in transit. We paid {amount}. "
        "We would like replacements or a refund.",
        "incident",
        ("shipping", "damaged_item"),
        _PHYSICAL,
    ),
    (
        "Cancel our {plan} subscription",
        "Please cancel our {plan} subscription at the end of the current billing period. Our last payment of "
        "{amount} was on {date}; we do not want to be charged again.",
        "task",
        ("account", "cancellation"),
        ("subscriptions",),
    ),
    (
        "Upgrade from {plan} to Enterprise plan",
        "We would like to upgrade our account from the {plan} to the Enterprise plan starting next month. "
        "What will the prorated charge be?",
        "question",
        ("account", "upgrade"),
        ("subscriptions",),
    ),
    (
        "CSV export fails with error 500",
        "Since {date}, exporting the orders report to CSV fails with 'Error 500: internal server error'. "
        "It worked last week. This blocks our month-end close.",
        "problem",
        ("bug", "export"),
        _ANY,
    ),
    (
        "Dashboard totals are wrong",
        "The revenue dashboard shows {amount} for last month, but our own records say {quote}. "
        "Order {order} seems to be counted twice.",
        "problem",
        ("bug", "reporting"),
        _ANY,
    ),
    (
        "Login loop after password reset",
        "After resetting my password on {date} I keep getting sent back to the login page. "
        "I have tried two browsers. My account email is {email}.",
        "incident",
        ("bug", "login"),
        _ANY,
    ),
    (
        "API returns 429 below our quota",
        "Our integration gets HTTP 429 (too many requests) although we use far less than the "
        "{product} we paid {amount} for on {date}.",
        "problem",
        ("bug", "api"),
        ("usage",),
    ),
    (
        "Add a new admin to our account",
        "Please give admin rights to a colleague who joined our team. I am the account owner ({email}).",
        "task",
        ("account", "user_management"),
        _ANY,
    ),
    (
        "Wrong VAT on invoice {invoice}",
        "Invoice {invoice} for {amount} applies VAT although we are tax exempt. Please reissue it "
        "without tax.",
        "problem",
        ("billing", "invoice", "tax"),
        _ANY,
    ),
    (
        "Payment failed for invoice {invoice}",
        "Our payment of {amount} for invoice {invoice} was declined on {date}. Can you retry the charge "
        "or send a payment link?",
        "incident",
        ("billing", "payment_failed"),
        _ANY,
    ),
    (
        "How do I set up single sign-on?",
        "We would like our team to log in with our identity provider. Is SSO included in our plan, and "
        "where do I configure it?",
        "question",
        ("how_to", "sso"),
        _ANY,
    ),
)

#: How many days ago a seeded ticket in each status was opened: new ones are fresh, closed ones old.
_AGE_DAYS: dict[str, tuple[float, float]] = {
    "new": (0.1, 4),
    "open": (0.5, 30),
    "pending": (1, 30),
    "solved": (1, 60),
    "closed": (10, 120),
}

_AGENT_REPLIES = (
    "Thanks for reaching out, {first}. I am looking into this now and will get back to you today.",
    "Hi {first}, could you send us a screenshot and the exact time this happened?",
    "Hi {first}, we have processed this on our side; it can take 5-10 business days to show on your statement.",
    "Thanks {first}. I have escalated this to our billing team and will update you within 24 hours.",
    "Hi {first}, this should now be fixed. Please let us know if you still see the problem.",
)
_CUSTOMER_FOLLOW_UPS = (
    "Thanks, any update on this?",
    "Attached is the screenshot you asked for.",
    "This is still happening for us today.",
    "Great, that worked. Thank you!",
)
_INTERNAL_NOTES = (
    "Checked the payment log: the duplicate charge is confirmed.",
    "Escalated to engineering; waiting for a fix.",
    "Customer is on an annual contract; loop in their account executive before any refund.",
    "Asked finance to confirm the invoice amount.",
    "Could not reproduce yet; asked for more details.",
)


def _facts(
    rng: random.Random, person: Person, products: list[Product], ctx: ToolContext, age: float
) -> dict[str, str]:
    """Concrete values for one ticket's text: an order, an invoice, an amount, a date."""
    product = rng.choice(products)
    # Nobody orders twelve security audits: only goods come in dozens.
    qty = rng.randint(1, 12) if product.category in _PHYSICAL else rng.randint(1, 2)
    amount = round(product.unit_price * qty, 2)
    plan = rng.choice(("Standard plan", "Pro plan"))
    date = ctx.days_from_now(-age - rng.randint(1, 20))[:10]  # before the ticket was opened
    return {
        "order": f"ORD-{rng.randint(10000, 99999)}",
        "invoice": f"INV-{date[:4]}-{rng.randint(1, 999):04d}",
        "product": product.name,
        "qty": str(qty),
        "amount": f"{amount:,.2f} {product.currency}",
        "quote": f"{round(amount * rng.choice((0.8, 0.85, 0.9)), 2):,.2f} {product.currency}",
        "date": date,
        "plan": plan,
        "email": person.email,
        "first": person.first_name,
    }


@service.seeder
def seed(ctx: ToolContext) -> None:
    # new_id runs an UPDATE, which would autoflush once per row (seconds); flush by hand, parents
    # first, since without relationship() the unit of work does not order inserts by foreign key.
    with ctx.db.no_autoflush:
        _seed(ctx)


def _seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    support = [world.team_member("support lead"), world.team_member("support agent")]
    for person in world.team:
        role = "admin" if person.job_title == "support lead" else "agent"
        ctx.db.add(
            User(
                id=ctx.new_id("u"),
                name=person.name,
                email=person.email,
                phone=person.phone,
                role=role,
                organization_name=world.home.name,
                created_at=ctx.days_from_now(-rng.randint(400, 1200)),
            )
        )
    requesters: list[tuple[User, Person]] = []
    for person in world.customers:
        user = User(
            id=ctx.new_id("u"),
            name=person.name,
            email=person.email,
            phone=person.phone,
            role="end-user",
            organization_name=world.organisation(person.organisation_id).name,
            created_at=ctx.days_from_now(-rng.randint(120, 900)),
        )
        ctx.db.add(user)
        requesters.append((user, person))
    ctx.db.flush()
    agents_by_email = {p.email: p for p in world.team}

    statuses = ("new",) * 3 + ("open",) * 5 + ("pending",) * 3 + ("solved",) * 5 + ("closed",) * 4
    comments: list[Comment] = []  # added once their tickets are stored
    for _ in range(220):
        user, person = rng.choice(requesters)
        subject_t, body_t, kind, tags, categories = rng.choice(_TEMPLATES)
        status = rng.choice(statuses)
        age = rng.uniform(*_AGE_DAYS[status])
        fitting = [p for p in world.products if p.category in categories]
        facts = _facts(rng, person, fitting, ctx, age)
        created = ctx.days_from_now(-age)
        assignee = None if status == "new" else rng.choice(support).email
        ticket = Ticket(
            id=ctx.new_id("tk"),
            subject=subject_t.format(**facts),
            description=body_t.format(**facts),
            status=status,
            priority=rng.choice(("low", "normal", "normal", "normal", "high", "urgent")),
            type=kind,
            channel=rng.choice(("email", "email", "web", "phone", "chat")),
            requester_id=user.id,
            assignee_email=assignee,
            tags=list(tags),
            merged_into=None,
            follow_up_of=None,
            satisfaction_score="unoffered",
            satisfaction_comment=None,
            created_at=created,
            updated_at=created,
            solved_at=None,
        )
        ctx.db.add(ticket)
        # The description is the requester's first public comment, as in Zendesk.
        thread: list[tuple[str, str, bool]] = [(person.email, ticket.description, True)]
        if status != "new":
            agent = agents_by_email[assignee or support[0].email]
            thread.append((agent.email, rng.choice(_AGENT_REPLIES).format(**facts), True))
            if rng.random() < 0.5:
                thread.append((agent.email, rng.choice(_INTERNAL_NOTES), False))
            if rng.random() < 0.4:
                thread.append((person.email, rng.choice(_CUSTOMER_FOLLOW_UPS), True))
        step = age / (len(thread) + 1)
        for i, (email, body, public) in enumerate(thread):
            author = agents_by_email.get(email) or person
            comments.append(
                Comment(
                    id=ctx.new_id("cm"),
                    ticket_id=ticket.id,
                    author_email=email,
                    author_name=author.name,
                    body=body,
                    public=public,
                    created_at=ctx.days_from_now(-age + i * step),
                )
            )
        ticket.updated_at = ctx.days_from_now(-age + (len(thread) - 1) * step)
        if status in ("solved", "closed"):
            ticket.solved_at = ticket.updated_at
            score = rng.choice(("offered", "good", "good", "bad"))
            ticket.satisfaction_score = score
            if score == "bad":
                ticket.satisfaction_comment = "It took too long to get an answer."
            elif score == "good" and rng.random() < 0.5:
                ticket.satisfaction_comment = "Quick and helpful, thanks!"
    ctx.db.flush()
    ctx.db.add_all(comments)
    ctx.db.flush()


# -- tickets: reads -------------------------------------------------------------------------------


@service.tool("read")
def search_tickets(
    ctx: ToolContext,
    query: str | None = None,
    requester_email: EmailAddress | None = None,
    organization_name: CompanyName | None = None,
    status: TicketStatus | None = None,
    tag: Tag | None = None,
    assignee_email: EmailAddress | None = None,
    priority: Priority | None = None,
    ticket_type: TicketType | None = None,
    unassigned: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[TicketOut]:
    """Search tickets, most recently updated first. Filters combine with AND.

    Use it to find a customer's ticket about an order, invoice or charge: the query matches the
    subject, the description and every comment, so an order number (ORD-12345), an invoice number
    (INV-2025-0042) or an amount can be searched for.

    Args:
        query: Text to find in the subject, description or any comment (case-insensitive).
        requester_email: Only tickets requested by this email address.
        organization_name: Only tickets from requesters of this company (partial, case-insensitive).
        status: Only tickets in this status: new, open, pending, solved or closed.
        tag: Only tickets carrying this tag, e.g. billing or refund_request.
        assignee_email: Only tickets assigned to this agent.
        priority: Only tickets of this priority: low, normal, high or urgent.
        ticket_type: Only tickets of this type: question, incident, problem or task.
        unassigned: Only tickets that have no assignee.
        limit: Maximum number of tickets to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Ticket).order_by(Ticket.updated_at.desc(), Ticket.id)
    if query and query.strip():
        like = f"%{query.strip()}%"
        in_comments = exists().where(Comment.ticket_id == Ticket.id, Comment.body.ilike(like))
        stmt = stmt.where(or_(Ticket.subject.ilike(like), Ticket.description.ilike(like), in_comments))
    if requester_email:
        stmt = stmt.where(Ticket.requester_id.in_(select(User.id).where(User.email == requester_email.lower())))
    if organization_name:
        org_like = f"%{organization_name.strip()}%"
        stmt = stmt.where(Ticket.requester_id.in_(select(User.id).where(User.organization_name.ilike(org_like))))
    if status:
        stmt = stmt.where(Ticket.status == status)
    if tag:
        stmt = stmt.where(_tag_condition(tag))
    if assignee_email:
        stmt = stmt.where(Ticket.assignee_email == assignee_email.lower())
    if priority:
        stmt = stmt.where(Ticket.priority == priority)
    if ticket_type:
        stmt = stmt.where(Ticket.type == ticket_type)
    if unassigned:
        stmt = stmt.where(Ticket.assignee_email.is_(None))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[TicketOut](items=_ticket_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def list_requested_tickets(
    ctx: ToolContext,
    requester_email: EmailAddress,
    status: TicketStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[TicketOut]:
    """List the tickets one customer has requested, newest first.

    Args:
        requester_email: The customer's email address.
        status: Only tickets in this status: new, open, pending, solved or closed.
        limit: Maximum number of tickets to return (1-100).
        cursor: next_cursor from a previous page.
    """
    user = ctx.db.scalar(select(User).where(User.email == requester_email.lower()))
    if user is None:
        raise ToolError.not_found(
            "requester", requester_email, "No helpdesk user has that email; use search_users to look people up."
        )
    stmt = select(Ticket).where(Ticket.requester_id == user.id).order_by(Ticket.created_at.desc(), Ticket.id)
    if status:
        stmt = stmt.where(Ticket.status == status)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[TicketOut](items=_ticket_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_ticket(ctx: ToolContext, ticket_id: TicketId) -> TicketOut:
    """Get one ticket by id, with its requester, status, assignee, tags and satisfaction rating.

    Args:
        ticket_id: The ticket's id, e.g. tk_0042.
    """
    return _ticket_out(ctx, _ticket(ctx, ticket_id))


@service.tool("read")
def list_ticket_comments(
    ctx: ToolContext,
    ticket_id: TicketId,
    public_only: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[CommentOut]:
    """List a ticket's conversation, oldest first: public replies and internal notes.

    Args:
        ticket_id: The ticket whose comments to list.
        public_only: Only public replies (what the requester sees), no internal notes.
        limit: Maximum number of comments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    _ticket(ctx, ticket_id)
    stmt = select(Comment).where(Comment.ticket_id == ticket_id).order_by(Comment.created_at, Comment.id)
    if public_only:
        stmt = stmt.where(Comment.public.is_(True))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[CommentOut](items=[_comment_out(c) for c in rows], total=total, next_cursor=next_cursor)


@service.tool("read")
def search_users(
    ctx: ToolContext,
    query: str | None = None,
    role: UserRole | None = None,
    organization_name: CompanyName | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[UserOut]:
    """Search helpdesk users: customers (end-users) and the agents who work tickets.

    Args:
        query: Text to match against the name, email or phone (case-insensitive).
        role: Only users with this role: end-user, agent or admin. Both agent and admin can be assigned tickets.
        organization_name: Only users of this company (partial, case-insensitive).
        limit: Maximum number of users to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(User).order_by(User.name, User.id)
    if query and query.strip():
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(User.name.ilike(like), User.email.ilike(like), User.phone.ilike(like)))
    if role:
        stmt = stmt.where(User.role == role)
    if organization_name:
        stmt = stmt.where(User.organization_name.ilike(f"%{organization_name.strip()}%"))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[UserOut](items=[_user_out(u) for u in rows], total=total, next_cursor=next_cursor)


# -- tickets: writes ------------------------------------------------------------------------------


@service.tool("write")
def create_ticket(
    ctx: ToolContext,
    requester_email: EmailAddress,
    subject: Subject,
    description: Text,
    requester_name: PersonName | None = None,
    priority: Priority = "normal",
    ticket_type: TicketType = "question",
    channel: Channel = "web",
    assignee_email: EmailAddress | None = None,
    tags: list[Tag] | None = None,
    follow_up_of: TicketId | None = None,
) -> TicketOut:
    """Open a ticket on behalf of a customer. The description becomes the first public comment.

    A ticket with an assignee starts open, otherwise new. If no user has requester_email yet,
    pass requester_name and a new end-user is created (as Zendesk does).

    Args:
        requester_email: The email address of the customer who asks for help.
        subject: A short summary of the request.
        description: The customer's request in full.
        requester_name: The customer's full name; required only when the email is not a known user.
        priority: low, normal (default), high or urgent.
        ticket_type: question (default), incident, problem or task.
        channel: How the request came in: email, web (default), phone or chat.
        assignee_email: The agent to assign the ticket to (see search_users with role agent).
        tags: Tags to put on the ticket, e.g. ["billing", "refund_request"].
        follow_up_of: The id of a closed ticket this one follows up on (closed tickets cannot be reopened).
    """
    if not subject.strip() or not description.strip():
        raise ToolError.invalid_argument("subject and description must not be empty.")
    email = requester_email.lower()
    requester = ctx.db.scalar(select(User).where(User.email == email))
    if requester is None:
        if not (requester_name and requester_name.strip()):
            raise ToolError.invalid_argument(
                f"No helpdesk user has the email {email}; pass requester_name to create one, "
                "or check the address with search_users."
            )
        requester = User(
            id=ctx.new_id("u"),
            name=requester_name.strip(),
            email=email,
            phone=None,
            role="end-user",
            organization_name=None,
            created_at=ctx.now_iso,
        )
        ctx.db.add(requester)
    assignee = _agent(ctx, assignee_email).email if assignee_email else None
    if follow_up_of is not None:
        source = _ticket(ctx, follow_up_of)
        if source.status != "closed":
            raise ToolError.invalid_state(
                f"Ticket {follow_up_of} is {source.status}, not closed; reopen or reply to it instead of "
                "creating a follow-up."
            )
    ticket = Ticket(
        id=ctx.new_id("tk"),
        subject=subject.strip(),
        description=description.strip(),
        status="open" if assignee else "new",
        priority=priority,
        type=ticket_type,
        channel=channel,
        requester_id=requester.id,
        assignee_email=assignee,
        tags=_normalise_tags(tags or []),
        merged_into=None,
        follow_up_of=follow_up_of,
        satisfaction_score="unoffered",
        satisfaction_comment=None,
        created_at=ctx.now_iso,
        updated_at=ctx.now_iso,
        solved_at=None,
    )
    ctx.db.add(ticket)
    ctx.db.flush()
    _add_comment(ctx, ticket, ticket.description, True, requester)
    return _ticket_out(ctx, ticket)


@service.tool("write")
def update_ticket(
    ctx: ToolContext,
    ticket_id: TicketId,
    subject: Subject | None = None,
    priority: Priority | None = None,
    ticket_type: TicketType | None = None,
    assignee_email: EmailAddress | None = None,
    status: SettableStatus | None = None,
) -> TicketOut:
    """Change a ticket's subject, priority, type, assignee or status. Only the fields you pass change.

    Status rules: new -> open, pending, solved or closed; open -> pending, solved or closed;
    pending -> open, solved or closed; solved -> open or closed; closed is final. Nothing goes
    back to new. Assigning a new ticket opens it. Solving an unassigned ticket assigns it to you.

    Args:
        ticket_id: The ticket to update.
        subject: A new subject.
        priority: New priority: low, normal, high or urgent.
        ticket_type: New type: question, incident, problem or task.
        assignee_email: The agent to assign the ticket to (agents only; see search_users with role agent).
        status: New status: open, pending, solved or closed.
    """
    ticket = _editable(ctx, ticket_id)
    if subject is None and priority is None and ticket_type is None and assignee_email is None and status is None:
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if subject is not None:
        if not subject.strip():
            raise ToolError.invalid_argument("subject must not be empty.")
        ticket.subject = subject.strip()
    if priority is not None:
        ticket.priority = priority
    if ticket_type is not None:
        ticket.type = ticket_type
    if assignee_email is not None:
        ticket.assignee_email = _agent(ctx, assignee_email).email
        if ticket.status == "new" and status is None:
            ticket.status = "open"
    if status is not None:
        _set_status(ctx, ticket, status)
    ticket.updated_at = ctx.now_iso
    return _ticket_out(ctx, ticket)


@service.tool("write")
def add_ticket_reply(
    ctx: ToolContext,
    ticket_id: TicketId,
    body: Text,
    status: Literal["open", "pending", "solved"] | None = None,
) -> CommentOut:
    """Post a public reply to the requester (they receive it by email).

    Replying to a new or solved ticket makes it open, unless you pass another status (as
    "submit as pending" or "submit as solved" does). A closed ticket cannot be replied to:
    create a follow-up ticket instead.

    Args:
        ticket_id: The ticket to reply on.
        body: The reply text the customer will read.
        status: Status to set with the reply: open, pending (waiting for the customer) or solved.
    """
    ticket = _editable(ctx, ticket_id)
    comment = _add_comment(ctx, ticket, body, True, _acting_user(ctx))
    target = status or ("open" if ticket.status in ("new", "solved") else ticket.status)
    if target != ticket.status:
        _set_status(ctx, ticket, target)
    return _comment_out(comment)


@service.tool("write")
def add_ticket_note(ctx: ToolContext, ticket_id: TicketId, note: Text) -> CommentOut:
    """Add an internal note to a ticket: visible to agents only, it does not change the status.

    Use it to record what was done (a refund id, an escalation) without emailing the customer.
    Closed tickets cannot take notes.

    Args:
        ticket_id: The ticket to note on.
        note: The note's text.
    """
    ticket = _editable(ctx, ticket_id)
    return _comment_out(_add_comment(ctx, ticket, note, False, _acting_user(ctx)))


@service.tool("write")
def solve_ticket(ctx: ToolContext, ticket_id: TicketId, comment: Text | None = None) -> TicketOut:
    """Mark a ticket solved, optionally with a final public reply to the requester.

    Only new, open or pending tickets can be solved. An unassigned ticket is assigned to you.
    The requester is offered a satisfaction survey. A solved ticket can still be reopened.

    Args:
        ticket_id: The ticket to solve.
        comment: A public reply to send with the solution.
    """
    ticket = _editable(ctx, ticket_id)
    if ticket.status == "solved":
        raise ToolError.invalid_state(f"Ticket {ticket_id} is already solved.")
    if comment is not None:
        _add_comment(ctx, ticket, comment, True, _acting_user(ctx))
    _set_status(ctx, ticket, "solved")
    return _ticket_out(ctx, ticket)


@service.tool("write")
def close_ticket(ctx: ToolContext, ticket_id: TicketId) -> TicketOut:
    """Close a ticket for good. Closed is final: a closed ticket cannot be reopened, replied to or edited.

    Any ticket that is not yet closed can be closed. An unassigned ticket is assigned to you.

    Args:
        ticket_id: The ticket to close.
    """
    ticket = _editable(ctx, ticket_id)
    _set_status(ctx, ticket, "closed")
    return _ticket_out(ctx, ticket)


@service.tool("write")
def reopen_ticket(ctx: ToolContext, ticket_id: TicketId, comment: Text | None = None) -> TicketOut:
    """Reopen a solved ticket (it goes back to open). Closed tickets cannot be reopened.

    Args:
        ticket_id: The solved ticket to reopen.
        comment: An internal note saying why it was reopened.
    """
    ticket = _editable(ctx, ticket_id)
    if ticket.status != "solved":
        raise ToolError.invalid_state(
            f"Ticket {ticket_id} is {ticket.status}, not solved; only solved tickets can be reopened."
        )
    if comment is not None:
        _add_comment(ctx, ticket, comment, False, _acting_user(ctx))
    _set_status(ctx, ticket, "open")
    return _ticket_out(ctx, ticket)


@service.tool("write")
def merge_tickets(
    ctx: ToolContext,
    target_ticket_id: TicketId,
    source_ticket_ids: list[TicketId],
    comment: Text | None = None,
) -> MergeOut:
    """Merge duplicate tickets into one: each source ticket is closed and points to the target.

    Both sides get an internal note about the merge. Closed tickets cannot be merged, on either
    side, and a ticket cannot be merged into itself.

    Args:
        target_ticket_id: The ticket that stays open and receives the others.
        source_ticket_ids: The duplicate tickets to close into the target (at least one).
        comment: Extra text for the note added to the target ticket.
    """
    if not source_ticket_ids:
        raise ToolError.invalid_argument("Pass at least one id in source_ticket_ids.")
    if target_ticket_id in source_ticket_ids:
        raise ToolError.invalid_argument(f"Ticket {target_ticket_id} cannot be merged into itself.")
    if len(set(source_ticket_ids)) != len(source_ticket_ids):
        raise ToolError.invalid_argument("source_ticket_ids names the same ticket twice.")
    target = _editable(ctx, target_ticket_id)
    agent = _acting_user(ctx)
    for source_id in source_ticket_ids:
        source = _editable(ctx, source_id)
        _add_comment(ctx, source, f"This request was closed and merged into request {target.id}.", False, agent)
        source.status = "closed"
        source.merged_into = target.id
        if source.solved_at is None:
            source.solved_at = ctx.now_iso
        source.updated_at = ctx.now_iso
    extra = f" {comment.strip()}" if comment and comment.strip() else ""
    merged = ", ".join(source_ticket_ids)
    _add_comment(ctx, target, f"Requests {merged} were closed and merged into this request.{extra}", False, agent)
    return MergeOut(target=_ticket_out(ctx, target), merged_ticket_ids=list(source_ticket_ids))


@service.tool("write")
def add_ticket_tags(ctx: ToolContext, ticket_id: TicketId, tags: list[Tag]) -> TicketOut:
    """Add tags to a ticket (existing tags stay). Tags are lowercased; spaces become underscores.

    Args:
        ticket_id: The ticket to tag.
        tags: The tags to add, e.g. ["refund_issued"].
    """
    ticket = _editable(ctx, ticket_id)
    if not tags:
        raise ToolError.invalid_argument("Pass at least one tag.")
    new = [t for t in _normalise_tags(tags) if t not in ticket.tags]
    if not new:
        raise ToolError.invalid_state(f"Ticket {ticket_id} already has all of these tags: {', '.join(ticket.tags)}.")
    ticket.tags = [*ticket.tags, *new]
    ticket.updated_at = ctx.now_iso
    return _ticket_out(ctx, ticket)


@service.tool("write")
def remove_ticket_tags(ctx: ToolContext, ticket_id: TicketId, tags: list[Tag]) -> TicketOut:
    """Remove tags from a ticket.

    Args:
        ticket_id: The ticket to untag.
        tags: The tags to remove; each must be on the ticket.
    """
    ticket = _editable(ctx, ticket_id)
    if not tags:
        raise ToolError.invalid_argument("Pass at least one tag.")
    remove = _normalise_tags(tags)
    missing = [t for t in remove if t not in ticket.tags]
    if missing:
        have = ", ".join(ticket.tags) or "none"
        raise ToolError.invalid_argument(
            f"Ticket {ticket_id} does not have the tag(s) {', '.join(missing)}; its tags are: {have}."
        )
    ticket.tags = [t for t in ticket.tags if t not in remove]
    ticket.updated_at = ctx.now_iso
    return _ticket_out(ctx, ticket)


@service.tool("write")
def create_satisfaction_rating(
    ctx: ToolContext,
    ticket_id: TicketId,
    score: Literal["good", "bad"],
    comment: Text | None = None,
) -> TicketOut:
    """Record the requester's satisfaction rating (good or bad) on a solved or closed ticket.

    A later rating replaces an earlier one. Tickets closed by a merge cannot be rated: rate the
    ticket they were merged into.

    Args:
        ticket_id: The solved or closed ticket being rated.
        score: good or bad.
        comment: What the customer said about the service.
    """
    ticket = _ticket(ctx, ticket_id)
    if ticket.status not in ("solved", "closed"):
        raise ToolError.invalid_state(
            f"Ticket {ticket_id} is {ticket.status}; only solved or closed tickets can be rated."
        )
    if ticket.merged_into:
        raise ToolError.invalid_state(
            f"Ticket {ticket_id} was merged into {ticket.merged_into}; rate that ticket instead."
        )
    ticket.satisfaction_score = score
    ticket.satisfaction_comment = comment.strip() if comment and comment.strip() else None
    # Rating a closed ticket is allowed (Zendesk surveys arrive after closing); it is not an edit.
    return _ticket_out(ctx, ticket)
