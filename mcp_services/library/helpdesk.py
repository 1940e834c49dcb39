"""Helpdesk: customer support tickets, public replies and internal notes (modelled on Zendesk Support).

Requesters are the world's customers (the same name, email and phone as in the CRM); agents are
the home team. Ticket status follows Zendesk's rules (``TICKET_STATUS``): new -> open / pending ->
solved -> closed; a solved ticket can be reopened (a reply reopens it too); a closed ticket is final
and takes a follow-up ticket instead. Seeded tickets (``data/helpdesk_seed.json``) talk about
orders, charges, invoices and bugs with amounts, order numbers and invoice numbers in their text,
so other services' values can be found here.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, WithJsonSchema

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import runtime_of
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import Query, RecordAccess, check_search_text, like_pattern
from mcp_services.kernel.schema import StateDef
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
from mcp_services.kernel.plans.commerce import PlannedOrder, commerce_plan
from mcp_services.kernel.prose import industry_facts, money, write
from mcp_services.kernel.world import Person, PlannedInvoice, Product, World

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

#: The ticket workflow: where each status may go next (Zendesk: closed is final; solved may only
#: reopen or close). The tools enforce exactly these moves.
TICKET_STATUS = StateDef(
    field="status",
    values=["new", "open", "pending", "solved", "closed"],
    initial="new",
    terminal=["closed"],
    transitions={
        "new": ["open", "pending", "solved", "closed"],
        "open": ["pending", "solved", "closed"],
        "pending": ["open", "solved", "closed"],
        "solved": ["open", "closed"],
        "closed": [],
    },
)

service = Service(
    "helpdesk",
    "Customer support desk: tickets from customers with status, priority, assignee and tags, "
    "public replies, internal notes, merging and satisfaction ratings.",
    title="Helpdesk",
)


@service.entity(table="users", prefix="u", label="name", search=("name", "email", "phone"))
class User:
    """A person the desk knows: a customer who asks for help (end-user) or an agent of the team."""

    id: UserId
    name: PersonName = field(role="self")
    # End-users are the CRM's contacts, with the same address.
    email: EmailAddress = field(unique=True, role="self", link="crm.contact.email")
    phone: PhoneNumber | None = None
    role: UserRole
    organization_name: CompanyName | None = field(None, role="employer")
    created_at: DateTime


def _comment_counts(db: RecordAccess, tickets: Sequence[Any]) -> list[int]:
    """How many comments each ticket has, for a whole result in one query."""
    ids = [t.id for t in tickets]
    marks = ", ".join("?" for _ in ids)
    counts = dict(db.sql(f"SELECT ticket_id, COUNT(*) FROM comments WHERE ticket_id IN ({marks}) GROUP BY 1", *ids))
    return [int(counts.get(t.id, 0)) for t in tickets]


@service.entity(table="tickets", prefix="tk", label="subject", search=("subject", "description"), state=TICKET_STATUS)
class Ticket:
    """A customer's support request."""

    id: TicketId = field(mention="the ticket number")
    subject: Subject
    description: Text
    status: TicketStatus = field(index=True)
    priority: Priority
    type: TicketType
    channel: Channel
    requester_id: UserId = field(role="requester")
    # The requester's company when the ticket was opened (Zendesk's ticket organization).
    organization_name: CompanyName | None = field(None, role="organization")
    assignee_email: EmailAddress | None = field(None, role="assignee")
    tags: list[Tag] = field(incidental=True)
    merged_into: TicketId | None = None
    follow_up_of: TicketId | None = None
    satisfaction_score: SatisfactionScore = "unoffered"
    satisfaction_comment: Text | None = None
    created_at: DateTime
    updated_at: DateTime
    solved_at: DateTime | None = None

    requester_name = joined(PersonName, via="requester_id", field="name")
    requester_email = joined(EmailAddress, via="requester_id", field="email")
    comment_count = derived(int, batch=_comment_counts, description="Public replies and internal notes so far")


@service.entity(table="comments", prefix="cm", search=("body",))
class Comment:
    """A public reply or an internal note on a ticket."""

    id: CommentId
    ticket_id: TicketId = field(index=True)
    author_email: EmailAddress = field(role="author")
    author_name: PersonName = field(role="author")
    body: Text
    public: bool
    created_at: DateTime


class MergeOut(BaseModel):
    target: Annotated[dict[str, Any], WithJsonSchema(runtime_of(Ticket).schema)]
    merged_ticket_ids: list[TicketId]


# -- rules shared by the tools -------------------------------------------------------------------

_TICKET_HINT = "Use search_tickets or list_requested_tickets to find ticket ids."


def _ticket(ctx: ToolContext, ticket_id: str) -> Ticket:
    return ctx.get(Ticket, ticket_id, hint=_TICKET_HINT)


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
    user = ctx.find(User, email=email.lower())
    if user is None or user.role == "end-user":
        raise ToolError.invalid_argument(
            f"{email} is not a helpdesk agent, so tickets cannot be assigned to them. "
            "Use search_users(role='agent') to see who can be assigned."
        )
    return user


def _acting_user(ctx: ToolContext) -> User:
    """The agent the caller acts for: the world's user, who is always seeded as an agent."""
    user = ctx.find(User, email=ctx.world.user.email)
    assert user is not None, "the world's user is seeded as an agent"
    return user


def _status_change(ctx: ToolContext, ticket: Ticket, status: str) -> dict[str, Any]:
    """The field changes that move ``ticket`` to ``status``, if the workflow allows it; else say which moves are."""
    if status == ticket.status:
        raise ToolError.invalid_state(f"Ticket {ticket.id} is already {status}.")
    allowed = (TICKET_STATUS.transitions or {})[ticket.status]
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
    changes: dict[str, Any] = {"status": status, "updated_at": ctx.now_iso}
    if status in ("solved", "closed"):
        # Zendesk assigns an unassigned ticket to the agent who solves it.
        if ticket.assignee_email is None:
            changes["assignee_email"] = ctx.world.user.email
        if ticket.solved_at is None:
            changes["solved_at"] = ctx.now_iso
        if ticket.satisfaction_score == "unoffered":
            changes["satisfaction_score"] = "offered"
    if status == "open" and ticket.status == "solved":
        changes["solved_at"] = None
    return changes


def _move(ctx: ToolContext, ticket: Ticket, status: str) -> Ticket:
    return ctx.update(ticket, **_status_change(ctx, ticket, status))


def _add_comment(
    ctx: ToolContext, ticket: Ticket, body: str, public: bool, author: User, at: str | None = None
) -> tuple[Ticket, Comment]:
    """Write a comment on ``ticket``; returns the ticket (now updated) and the comment."""
    if not body.strip():
        raise ToolError.invalid_argument("The comment body must not be empty.")
    comment = ctx.insert(
        Comment(
            id=ctx.new_id("cm"),
            ticket_id=ticket.id,
            author_email=author.email,
            author_name=author.name,
            body=body.strip(),
            public=public,
            created_at=at or ctx.now_iso,
        )
    )
    return ctx.update(ticket, updated_at=at or ctx.now_iso), comment


def _open_ticket(
    ctx: ToolContext, requester_email: str, requester_name: str | None, subject: str, description: str,
    at: str | None = None, **fields: Any,
) -> Ticket:
    """A new ticket from a customer (a new end-user when the email is unknown); the description is its first comment.

    A ticket with an assignee starts open, otherwise new.
    """
    if not subject.strip() or not description.strip():
        raise ToolError.invalid_argument("subject and description must not be empty.")
    at = at or ctx.now_iso
    email = requester_email.lower()
    requester = ctx.find(User, email=email)
    if requester is None:
        if not (requester_name and requester_name.strip()):
            raise ToolError.invalid_argument(
                f"No helpdesk user has the email {email}; pass requester_name to create one, "
                "or check the address with search_users."
            )
        requester = ctx.insert(
            User(id=ctx.new_id("u"), name=requester_name.strip(), email=email, role="end-user", created_at=at)
        )
    ticket = ctx.insert(
        Ticket(
            id=ctx.new_id("tk"),
            subject=subject.strip(),
            description=description.strip(),
            status="open" if fields.get("assignee_email") else "new",
            requester_id=requester.id,
            organization_name=requester.organization_name,
            created_at=at,
            updated_at=at,
            **fields,
        )
    )
    return _add_comment(ctx, ticket, ticket.description, True, requester, at)[0]


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


def _in_thread(q: Query[Ticket], text: str | None) -> Query[Ticket]:
    """Tickets where every word of ``text`` is in the subject, the description or any comment."""
    if text is None or not text.strip():
        return q
    for word in check_search_text(text).split(" "):
        pattern = like_pattern(word)
        q.where_sql(
            "subject LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM comments c "
            "WHERE c.ticket_id = tickets.id AND c.body LIKE ? ESCAPE '\\')",
            pattern, pattern, pattern,
        )
    return q


# -- seed ----------------------------------------------------------------------------------------

_SEED = json.loads(resources.files("mcp_services.library").joinpath("data/helpdesk_seed.json").read_text("utf-8"))
_PHYSICAL = ("hardware", "furniture", "pantry", "supplies", "merchandise")
#: The product categories a ticket's story fits ("fits" in the data): a late delivery is about a desk.
_FITS = {
    "goods": _PHYSICAL,
    "anything": (*_PHYSICAL, "subscriptions", "usage", "services"),
    "subscriptions": ("subscriptions",),
    "usage": ("usage",),
}
_STATUSES = ("new",) * 3 + ("open",) * 5 + ("pending",) * 3 + ("solved",) * 5 + ("closed",) * 4
#: How many days ago a seeded ticket in each status was opened: new ones are fresh, closed ones old.
_AGE_DAYS: dict[str, tuple[float, float]] = {
    "new": (0.1, 4), "open": (0.5, 30), "pending": (1, 30), "solved": (1, 60), "closed": (10, 120),
}


def _day(moment: datetime | str) -> str:
    """A day as a customer writes it: 14 March."""
    when = datetime.fromisoformat(moment.replace("Z", "+00:00")) if isinstance(moment, str) else moment
    return f"{when.day} {when:%B}"


def _moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")) if "T" in iso else datetime.fromisoformat(iso).replace(tzinfo=UTC)


def _facts(rng: random.Random, world: World, person: Person, products: list[Product], when: datetime) -> dict[str, str]:
    """The everyday values of one ticket's text: who writes, about which product, in their industry's words."""
    org = world.organisation(person.organisation_id)
    owner = world.plan.account_owners.get(org.id, world.user)
    earlier = when - timedelta(days=rng.randint(1, 20))
    last_month = (when.replace(day=1) - timedelta(days=1))
    return {
        "product": rng.choice(products).name,
        "plan": rng.choice(("Standard plan", "Pro plan")),
        "date": _day(earlier),
        "month": f"{last_month:%B}",
        "email": person.email,
        "first": person.first_name,
        "company": org.name,
        "weekday": rng.choice(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")),
        "home": world.home.name,
        "owner": owner.first_name,
        "accountant": world.team_member("accountant").first_name,
        "finance_lead": world.team_member("finance lead").first_name,
        **industry_facts(rng, org.industry),
    }


_Story = tuple[Person, datetime, datetime | None, dict[str, str]]  # who writes, from when (until when), what about


def _story(rng: random.Random, world: World, about: str, person: Person) -> _Story | None:
    """The record of the world a ticket about ``about`` is about, as it stood when the ticket was opened.

    The requester's own record where one fits, else any that fits (its customer then writes); None when none
    does. Tickets never invent numbers: the order, invoice, charge and dates they name are the world's.
    """
    if about.startswith("invoice:"):
        return _invoice_story(rng, world, about.split(":", 1)[1], person)
    if about == "duplicate":
        twins = world.plan.duplicates
        if not twins:
            return None
        charge = next((c for c in twins if c.email == person.email), None) or rng.choice(twins)
        payer = next(p for p in world.people if p.email == charge.email)
        when = _moment(charge.date) + timedelta(days=1)
        return payer, when, None, {"invoice": charge.invoice_number, "amount": _money(world, charge.amount),
                                   "date": _day(charge.date)}
    orders = [o for o in commerce_plan(world).orders if _order_fits(about, o, world)]
    if not orders:
        return None
    order = next((o for o in orders if o.customer.email == person.email), None) or rng.choice(orders)
    line = order.lines[0]
    outbound = order.fulfillments[0] if order.fulfillments else None
    facts = {"order": order.name, "qty": str(line.quantity), "product": line.product_title, "date": _day(order.created_at),
             "tracking": (outbound.tracking_number if outbound else None) or order.name}
    if about == "returned":
        # Sent back once the return was approved, and still waiting: before any refund of it.
        back = order.returns[0]
        assert back.decided_at is not None
        facts.update(qty=str(back.lines[0][1]), product=order.lines[back.lines[0][0]].product_title,
                     date=_day(back.decided_at))
        refunded = [r.created_at for r in order.refunds]
        return order.customer, _moment(back.decided_at) + timedelta(hours=6), _moment(min(refunded)) if refunded else None, facts
    assert outbound is not None and outbound.estimated_delivery_at is not None
    if about in ("late", "damaged"):
        assert outbound.delivered_at is not None
        facts.update(delivered=_day(outbound.delivered_at), promised=_day(outbound.estimated_delivery_at))
        return order.customer, _moment(outbound.delivered_at), None, facts
    label = order.shipment.labels[0] if order.shipment and order.shipment.labels else None
    scans = label.events if label else ()
    facts["last_scan"] = _day(scans[-1].at) if scans else facts["date"]
    since = outbound.estimated_delivery_at if about == "not_arrived" else outbound.created_at
    return order.customer, _moment(since), None, facts


def _order_fits(about: str, order: PlannedOrder, world: World) -> bool:
    """Whether an order has the history a ticket about ``about`` tells."""
    outbound = order.fulfillments[0] if order.fulfillments else None
    promised = outbound.estimated_delivery_at if outbound else None
    if about == "returned":
        return order.story in ("return_open", "refunded_return") and bool(order.returns) and order.returns[0].decided_at is not None
    if outbound is None or promised is None:
        return False
    if about == "late":
        return order.story == "delivered_late"
    if about == "damaged":
        return order.story == "delivered" and outbound.delivered_at is not None
    if about == "not_arrived":
        return order.story == "exception" and promised < world.now
    return about == "in_transit" and order.story == "in_transit"


def _invoice_story(rng: random.Random, world: World, story: str, person: Person) -> _Story | None:
    """A ticket about one of the plan's invoices, the requester's where one fits (else its billing contact writes)."""
    today = world.now_dt.date().isoformat()
    proposals = {p.organisation_id: p for p in world.plan.proposals}
    fits = {
        # One product at one price, not yet due ("please correct it before the due date"), and a proposal to compare.
        "quoted": lambda i: (i.status == "AUTHORISED" and len(i.lines) == 1 and i.due_date >= today
                             and i.organisation_id in proposals and proposals[i.organisation_id].date < today),
        "open": lambda i: i.status == "AUTHORISED",
        "sent": lambda i: i.status in ("AUTHORISED", "PAID"),
        "declined": lambda i: i.card == "failed",
    }[story]
    invoice = world.plan.invoice_to_mention(rng, lambda i: fits(i) and _invoice_anchor(story, i) < today,
                                            person.organisation_id)
    if invoice is None:
        return None
    payer = world.plan.billing_contacts[invoice.organisation_id]
    since = _moment(_invoice_anchor(story, invoice))
    facts = {"invoice": invoice.number, "product": invoice.lines[0].description, "date": _day(_invoice_anchor(story, invoice)),
             "amount": _money(world, invoice.amount_due if story == "declined" else invoice.total)}
    if story == "quoted":
        proposal = proposals[invoice.organisation_id]
        facts.update(proposal=proposal.number, quote=_money(world, proposal.total))
        since = max(since, _moment(proposal.date))
    return payer, since, None, facts


def _invoice_anchor(story: str, invoice: PlannedInvoice) -> str:
    """The day (ISO) a ticket about ``story`` can be opened from: the card was declined on the due date."""
    return invoice.due_date if story == "declined" else invoice.date


def _money(world: World, amount: float) -> str:
    return money(amount, world.currency)


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The team as agents, every customer as an end-user, and 220 tickets with their conversations."""
    world = ctx.world
    rng = ctx.rng("seed")
    support = [world.team_member("support lead"), world.team_member("support agent")]
    history = world.shape.history_days + 10
    users = [
        User(
            id=ctx.new_id("u"), name=p.name, email=p.email, phone=p.phone,
            role="admin" if p.job_title == "support lead" else "agent", organization_name=world.home.name,
            created_at=ctx.days_from_now(-rng.randint(400, 1200)),
        )
        for p in world.team
    ]
    requesters = [
        (
            User(
                id=ctx.new_id("u"), name=p.name, email=p.email, phone=p.phone, role="end-user",
                organization_name=world.organisation(p.organisation_id).name,
                # Before any ticket they open (a ticket can be about the oldest record of the books).
                created_at=ctx.days_from_now(-rng.randint(max(120, history), max(900, history + 660))),
            ),
            p,
        )
        for p in world.customers
    ]
    ctx.insert_many(users + [user for user, _ in requesters])
    authors = {p.email: p for p in world.team}
    requester_of = {person.id: (user, person) for user, person in requesters}
    tickets: list[Ticket] = []
    comments: list[Comment] = []
    for _ in range(world.scaled(220)):
        user, person = rng.choice(requesters)
        template = rng.choice(_SEED["tickets"])
        status = rng.choice(_STATUSES)
        age = rng.uniform(*_AGE_DAYS[status])
        about = template.get("about")
        story = _story(rng, world, about, person) if about else None
        if about and story is None:
            continue  # no record of the world fits the story
        if story is not None:
            user, person = requester_of[story[0].id]
            # Opened once there is something to write about (after the record's moment, before it was settled).
            newest = (ctx.now - story[2]).total_seconds() / 86400 if story[2] else 0.0
            oldest = (ctx.now - story[1]).total_seconds() / 86400
            if oldest - newest <= 0.05:
                continue
            if not newest < age < oldest:
                age = newest + (oldest - newest) * rng.uniform(0.05, 0.95)
        opened = ctx.now - timedelta(days=age)
        facts = _facts(rng, world, person, [p for p in world.products if p.category in _FITS[template["fits"]]], opened)
        if story is not None:
            facts.update(story[3])
        assignee = None if status == "new" else rng.choice(support).email
        ticket_id = ctx.new_id("tk")
        description = write(rng, template["description"], facts)
        subject = write(rng, template["subject"], facts)
        priority = rng.choice(("low", "normal", "normal", "normal", "high", "urgent"))
        channel = rng.choice(("email", "email", "web", "phone", "chat"))
        family = template["family"]
        # The description is the requester's first public comment, as in Zendesk.
        thread: list[tuple[str, str, bool]] = [(person.email, description, True)]
        if status != "new":
            agent = authors[assignee or support[0].email]
            reply_facts = {**facts, "agent": agent.first_name}
            thread.append((agent.email, write(rng, rng.choice(_SEED["agent_replies"][family]), reply_facts), True))
            if rng.random() < 0.5:
                thread.append((agent.email, write(rng, rng.choice(_SEED["internal_notes"][family]), reply_facts), False))
            if rng.random() < 0.4:
                thread.append((person.email, write(rng, rng.choice(_SEED["customer_follow_ups"]), reply_facts), True))
        step = age / (len(thread) + 1)
        for i, (email, body, public) in enumerate(thread):
            comments.append(
                Comment(
                    id=ctx.new_id("cm"), ticket_id=ticket_id, author_email=email,
                    author_name=(authors.get(email) or person).name, body=body, public=public,
                    created_at=ctx.days_from_now(-age + i * step),
                )
            )
        updated = ctx.days_from_now(-age + (len(thread) - 1) * step)
        score, remark = "unoffered", None
        if status in ("solved", "closed"):
            score = rng.choice(("offered", "good", "good", "bad"))
            remark_facts = {"agent": authors[assignee].first_name if assignee else "the team", "rush": facts["rush"],
                            "work": facts["work"]}
            if score == "bad":
                remark = write(rng, f"{rng.choice(_BAD_REMARKS)} {rng.choice(_BAD_TAILS)}", remark_facts)
            elif score == "good" and rng.random() < 0.5:
                remark = write(rng, f"{rng.choice(_GOOD_REMARKS)} {rng.choice(_GOOD_TAILS)}", remark_facts)
        tickets.append(
            Ticket(
                id=ticket_id, subject=subject, description=description, status=status, priority=priority,
                type=template["type"], channel=channel, requester_id=user.id,
                organization_name=user.organization_name, assignee_email=assignee, tags=list(template["tags"]),
                satisfaction_score=score, satisfaction_comment=remark, created_at=ctx.days_from_now(-age),
                updated_at=updated, solved_at=updated if status in ("solved", "closed") else None,
            )
        )
    ctx.insert_many(tickets)
    ctx.insert_many(comments)


_BAD_REMARKS = ("[It took too long to get an answer|The answer took days|Far too slow to reply][.|, during {rush}.|.]",
                "[Nobody explained what went wrong|No explanation of the cause|I still don't know what happened][.| "
                "Disappointing.|]", "I had to chase [twice|three times|more than once][.| to get a reply.|]")
_BAD_TAILS = ("", "", "Please improve.", "Expected better.", "It held up {work}.", "Not great for a paying customer.",
              "Hope the next one goes better.")
_GOOD_TAILS = ("", "", "Would recommend.", "Will use again.", "Thanks again.", "Much appreciated.",
               "Made {work} easier.", "Keep it up.")
_GOOD_REMARKS = ("[Quick and helpful|Fast and helpful|Quick, clear help][, thanks!|.|. Thank you {agent}!]",
                 "[Sorted in one reply|Fixed in one go|Solved on the first reply][.|, great.|!]",
                 "[Friendly and clear|Very friendly|Clear and patient][.| - thanks {agent}.|]",
                 "[Great service as always|Excellent support|Top service][.|!| from {agent}.]")


# -- tickets: reads -------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("find the support tickets about {query}", "check the helpdesk for tickets from {requester_email}"),
)
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
) -> Page[Ticket]:
    """Search tickets, most recently updated first. Filters combine with AND.

    Use it to find a customer's ticket about an order, invoice or charge: the query matches the
    subject, the description and every comment, so an order number (ORD-12345), an invoice number
    (INV-2025-0042) or an amount can be searched for.

    Args:
        query: Words to find in the subject, description or any comment (case-insensitive; every word must match).
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
    q = _in_thread(ctx.query(Ticket), query).contains("organization_name", organization_name)
    q.filter(status=status, priority=priority, type=ticket_type)
    if requester_email:
        q.where_sql("requester_id IN (SELECT id FROM users WHERE email = ?)", requester_email.lower())
    if tag:
        q.where_sql("EXISTS (SELECT 1 FROM json_each(tickets.tags) WHERE value = ?)", _normalise_tags([tag])[0])
    if assignee_email:
        q.where(assignee_email=assignee_email.lower())
    if unassigned:
        q.where(assignee_email=None)
    return q.order_by("-updated_at").page(limit, cursor)


@service.tool(
    "read",
    intent="find",
    phrases=(
        "pull up the tickets {requester_email} has opened",
        "check which support tickets {requester_email} raised",
    ),
)
def list_requested_tickets(
    ctx: ToolContext,
    requester_email: EmailAddress,
    status: TicketStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Ticket]:
    """List the tickets one customer has requested, newest first.

    Args:
        requester_email: The customer's email address.
        status: Only tickets in this status: new, open, pending, solved or closed.
        limit: Maximum number of tickets to return (1-100).
        cursor: next_cursor from a previous page.
    """
    user = ctx.find(User, email=requester_email.lower())
    if user is None:
        raise ToolError.not_found(
            "requester", requester_email, "No helpdesk user has that email; use search_users to look people up."
        )
    q = ctx.query(Ticket).where(requester_id=user.id).filter(status=status)
    return q.order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open ticket {ticket_id}", "look at {ticket_id} in the helpdesk"))
def get_ticket(ctx: ToolContext, ticket_id: TicketId) -> Ticket:
    """Get one ticket by id, with its requester, status, assignee, tags and satisfaction rating.

    Args:
        ticket_id: The ticket's id, e.g. tk_0042.
    """
    return _ticket(ctx, ticket_id)


@service.tool(
    "read", intent="find", phrases=("read the conversation on {ticket_id}", "go through the replies on {ticket_id}")
)
def list_ticket_comments(
    ctx: ToolContext,
    ticket_id: TicketId,
    public_only: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Comment]:
    """List a ticket's conversation, oldest first: public replies and internal notes.

    Args:
        ticket_id: The ticket whose comments to list.
        public_only: Only public replies (what the requester sees), no internal notes.
        limit: Maximum number of comments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    _ticket(ctx, ticket_id)
    q = ctx.query(Comment).where(ticket_id=ticket_id)
    if public_only:
        q.where(public=True)
    return q.order_by("created_at").page(limit, cursor)


@service.tool("read", intent="find", phrases=("look {query} up in the helpdesk", "find the helpdesk agents"))
def search_users(
    ctx: ToolContext,
    query: str | None = None,
    role: UserRole | None = None,
    organization_name: CompanyName | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[User]:
    """Search helpdesk users: customers (end-users) and the agents who work tickets.

    Args:
        query: Words to match against the name, email or phone (case-insensitive; every word must match).
        role: Only users with this role: end-user, agent or admin. Both agent and admin can be assigned tickets.
        organization_name: Only users of this company (partial, case-insensitive).
        limit: Maximum number of users to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(User).search(query).filter(role=role).contains("organization_name", organization_name)
    return q.order_by("name").page(limit, cursor)


# -- tickets: writes ------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="create",
    phrases=(
        "open a support ticket for {requester_email} about {subject}",
        "log a ticket for {requester_email}: {subject}",
    ),
)
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
) -> Ticket:
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
    assignee = _agent(ctx, assignee_email).email if assignee_email else None
    if follow_up_of is not None:
        source = _ticket(ctx, follow_up_of)
        if source.status != "closed":
            raise ToolError.invalid_state(
                f"Ticket {follow_up_of} is {source.status}, not closed; reopen or reply to it instead of "
                "creating a follow-up."
            )
    ticket = _open_ticket(
        ctx, requester_email, requester_name, subject, description, priority=priority, type=ticket_type,
        channel=channel, assignee_email=assignee, tags=_normalise_tags(tags or []), follow_up_of=follow_up_of,
    )
    return ticket


@service.event("ticket_received")
def ticket_received(
    ctx: ToolContext,
    requester_email: str,
    subject: str,
    description: str,
    requester_name: str | None = None,
    channel: str = "email",
    priority: str = "normal",
    ticket_type: str = "question",
    tags: list[str] | None = None,
    hours_ago: float = 0.0,
) -> str:
    """A customer writes in (a task's trigger): a new, unassigned ticket, and an end-user for an unknown address.

    Returns the ticket's id. The description is the requester's first public comment, as for create_ticket.
    """
    for name, value, allowed in (
        ("channel", channel, Channel), ("priority", priority, Priority), ("ticket_type", ticket_type, TicketType)
    ):
        if value not in get_args(allowed):
            raise ToolError.invalid_argument(f"{name} {value!r} is not one of {', '.join(get_args(allowed))}.")
    ticket = _open_ticket(
        ctx, requester_email, requester_name, subject, description, priority=priority, type=ticket_type,
        channel=channel, tags=_normalise_tags(tags or []), at=ctx.days_from_now(-hours_ago / 24),
    )
    return ticket.id


@service.tool(
    "write",
    intent="update",
    phrases=("change the priority of {ticket_id} to {priority}", "hand {ticket_id} over to {assignee_email}"),
)
def update_ticket(
    ctx: ToolContext,
    ticket_id: TicketId,
    subject: Subject | None = None,
    priority: Priority | None = None,
    ticket_type: TicketType | None = None,
    assignee_email: EmailAddress | None = None,
    status: SettableStatus | None = None,
) -> Ticket:
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
    changes: dict[str, Any] = {"priority": priority, "type": ticket_type}
    if subject is not None:
        if not subject.strip():
            raise ToolError.invalid_argument("subject must not be empty.")
        changes["subject"] = subject.strip()
    if assignee_email is not None:
        changes["assignee_email"] = _agent(ctx, assignee_email).email
        if ticket.status == "new" and status is None:
            changes["status"] = "open"
    changes = {k: v for k, v in changes.items() if v is not None}
    ticket = ctx.update(ticket, **changes, updated_at=ctx.now_iso)
    if status is not None:
        ticket = _move(ctx, ticket, status)
    return ticket


@service.tool(
    "write",
    intent="reply",
    phrases=("reply to {ticket_id} saying {body}", "answer the customer on {ticket_id}: {body}"),
)
def add_ticket_reply(
    ctx: ToolContext,
    ticket_id: TicketId,
    body: Text,
    status: Literal["open", "pending", "solved"] | None = None,
) -> Comment:
    """Post a public reply to the requester (they receive it by email).

    Replying to a new or solved ticket makes it open, unless you pass another status (as
    "submit as pending" or "submit as solved" does). A closed ticket cannot be replied to:
    create a follow-up ticket instead.

    Args:
        ticket_id: The ticket to reply on.
        body: The reply text the customer will read.
        status: Status to set with the reply: open, pending (waiting for the customer) or solved.
    """
    ticket, comment = _add_comment(ctx, _editable(ctx, ticket_id), body, True, _acting_user(ctx))
    target = status or ("open" if ticket.status in ("new", "solved") else ticket.status)
    if target != ticket.status:
        _move(ctx, ticket, target)
    return comment


@service.tool(
    "write",
    intent="note",
    phrases=("add an internal note to {ticket_id} saying {note}", "note on {ticket_id} that {note}"),
)
def add_ticket_note(ctx: ToolContext, ticket_id: TicketId, note: Text) -> Comment:
    """Add an internal note to a ticket: visible to agents only, it does not change the status.

    Use it to record what was done (a refund id, an escalation) without emailing the customer.
    Closed tickets cannot take notes.

    Args:
        ticket_id: The ticket to note on.
        note: The note's text.
    """
    return _add_comment(ctx, _editable(ctx, ticket_id), note, False, _acting_user(ctx))[1]


@service.tool(
    "write", intent="close",
    phrases=("mark {ticket_id} as solved", "solve {ticket_id} with the reply {comment}"),
)
def solve_ticket(ctx: ToolContext, ticket_id: TicketId, comment: Text | None = None) -> Ticket:
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
        ticket, _ = _add_comment(ctx, ticket, comment, True, _acting_user(ctx))
    return _move(ctx, ticket, "solved")


@service.tool("write", intent="close", phrases=("close {ticket_id}", "close {ticket_id} for good"))
def close_ticket(ctx: ToolContext, ticket_id: TicketId) -> Ticket:
    """Close a ticket for good. Closed is final: a closed ticket cannot be reopened, replied to or edited.

    Any ticket that is not yet closed can be closed. An unassigned ticket is assigned to you.

    Args:
        ticket_id: The ticket to close.
    """
    return _move(ctx, _editable(ctx, ticket_id), "closed")


@service.tool("write", intent="reopen", phrases=("reopen {ticket_id}", "reopen {ticket_id} because {comment}"))
def reopen_ticket(ctx: ToolContext, ticket_id: TicketId, comment: Text | None = None) -> Ticket:
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
        ticket, _ = _add_comment(ctx, ticket, comment, False, _acting_user(ctx))
    return _move(ctx, ticket, "open")


@service.tool(
    "write",
    intent="link",
    phrases=(
        "merge {source_ticket_ids} into {target_ticket_id}",
        "fold the duplicates {source_ticket_ids} into {target_ticket_id}",
    ),
)
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
        source, _ = _add_comment(
            ctx, _editable(ctx, source_id), f"This request was closed and merged into request {target.id}.", False,
            agent,
        )
        ctx.update(source, status="closed", merged_into=target.id, solved_at=source.solved_at or ctx.now_iso)
    extra = f" {comment.strip()}" if comment and comment.strip() else ""
    merged = ", ".join(source_ticket_ids)
    note = f"Requests {merged} were closed and merged into this request.{extra}"
    target, _ = _add_comment(ctx, target, note, False, agent)
    shown = present_records(ctx.conn, runtime_of(Ticket), [target])[0]
    return MergeOut(target=shown, merged_ticket_ids=list(source_ticket_ids))


@service.tool("write", intent="tag", phrases=("tag {ticket_id} with {tags}", "add the tags {tags} to {ticket_id}"))
def add_ticket_tags(ctx: ToolContext, ticket_id: TicketId, tags: list[Tag]) -> Ticket:
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
    return ctx.update(ticket, tags=[*ticket.tags, *new], updated_at=ctx.now_iso)


@service.tool("write", intent="tag", phrases=("take the {tags} tag off {ticket_id}",))
def remove_ticket_tags(ctx: ToolContext, ticket_id: TicketId, tags: list[Tag]) -> Ticket:
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
    return ctx.update(ticket, tags=[t for t in ticket.tags if t not in remove], updated_at=ctx.now_iso)


@service.tool(
    "write",
    intent="update",
    phrases=("record that the customer rated {ticket_id} {score}", "log a {score} satisfaction rating on {ticket_id}"),
)
def create_satisfaction_rating(
    ctx: ToolContext,
    ticket_id: TicketId,
    score: Literal["good", "bad"],
    comment: Text | None = None,
) -> Ticket:
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
    remark = comment.strip() if comment and comment.strip() else None
    # Rating a closed ticket is allowed (Zendesk surveys arrive after closing); it is not an edit.
    return ctx.update(ticket, satisfaction_score=score, satisfaction_comment=remark)
