"""CRM: contacts, companies, deals and notes (modelled on HubSpot's CRM objects API)."""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.plans.commerce import commerce_plan
from mcp_services.kernel.prose import industry_facts, write
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    URL,
    Address,
    City,
    CompanyName,
    Currency,
    Date,
    DateTime,
    DomainName,
    EmailAddress,
    EntityId,
    JobTitle,
    Money,
    PersonName,
    PhoneNumber,
    Text,
    moment,
)

ContactId = EntityId("crm.contact")
CompanyId = EntityId("crm.company")
DealId = EntityId("crm.deal")
NoteId = EntityId("crm.note")

LifecycleStage = Literal["lead", "customer", "churned"]
DealStage = Literal["qualification", "proposal", "negotiation", "won", "lost"]
NoteTarget = Literal["contact", "company", "deal"]
OPEN_DEAL_STAGES = ("qualification", "proposal", "negotiation")

service = Service(
    "crm",
    "Customer relationship management: the companies we sell to, their contacts, sales deals and notes.",
    title="CRM",
)


@service.entity(table="companies", prefix="co", label="name", search=("name", "domain"))
class Company:
    """A company we sell to (a CRM account)."""

    id: CompanyId
    name: CompanyName = field(index=True, role="self")
    domain: DomainName = field(unique=True)
    industry: str
    phone: PhoneNumber
    website: URL
    address: Address
    city: City
    owner_email: EmailAddress | None = field(None, role="account owner")


@service.entity(
    table="contacts", prefix="ct", label="name", search=("first_name", "last_name", "email", "job_title")
)
class Contact:
    """A person at a company we sell to."""

    id: ContactId
    first_name: str
    last_name: str = field(index=True)
    email: EmailAddress = field(unique=True, role="self")
    phone: PhoneNumber | None = None
    company_id: CompanyId | None = field(None, role="employer")
    job_title: JobTitle | None = None
    city: City | None = None
    lifecycle_stage: LifecycleStage = "lead"
    owner_email: EmailAddress | None = field(None, role="contact owner")
    archived: bool = False
    created_at: DateTime

    name = derived(PersonName, lambda c: f"{c.first_name} {c.last_name}")
    company_name = joined(CompanyName | None, via="company_id", field="name")


@service.entity(
    table="deals",
    prefix="dl",
    label="name",
    search=("name",),
    state=StateDef(
        field="stage",
        values=["qualification", "proposal", "negotiation", "won", "lost"],
        initial="qualification",
        terminal=["won", "lost"],
    ),
)
class Deal:
    """A sales opportunity with a company."""

    id: DealId
    name: str
    company_id: CompanyId = field(role="customer")
    contact_id: ContactId | None = field(None, role="primary contact")
    amount: Money = field(mention="the deal amount")
    currency: Currency
    stage: DealStage
    close_date: Date | None = field(None, mention="the close date")
    owner_email: EmailAddress | None = field(None, role="deal owner")
    lost_reason: str | None = None
    updated_at: DateTime

    company_name = joined(CompanyName, via="company_id", field="name")


@service.entity(table="notes", prefix="nt", search=("body",))
class Note:
    """A note on a contact, company or deal."""

    id: NoteId
    entity_type: NoteTarget
    entity_id: str = field(index=True)
    body: Text
    author_email: EmailAddress = field(role="author")
    created_at: DateTime


_NOTE_TARGETS: dict[str, type] = {"contact": Contact, "company": Company, "deal": Deal}
#: What an account owner notes about a contact: what they said, what they want, what happens next.
_NOTE_TEXTS = (
    "[Asked about|Wants to know about|Brought up] [volume pricing|an annual plan|a multi-year discount] for "
    "[next quarter|{rush}|the new budget year].",
    "[Prefers email over phone calls|Only reachable by email|Best reached by phone in the mornings|Likes a short call "
    "rather than long emails].",
    "[Renewal conversation scheduled|Renewal call booked|We talked about the renewal]; [budget approved|budget still "
    "to confirm|they need sign-off from their CFO].",
    "[Raised concerns about|Worried about|Unhappy with] [onboarding time|response times|the last invoice|how long "
    "{work} takes with us].",
    "[Introduced us to|Put us in touch with|Connected us with] their [finance team|IT lead|operations director].",
    "[Evaluating|Comparing us with|Looking at] [two competitors|another vendor|a cheaper tool] [before {rush}|this "
    "quarter|for {site}].",
    "[Very happy with|Positive about|Praised] [the support team|the new reports|the onboarding workshop] [on our "
    "last call|in the QBR|by email].",
    "[Wants a demo of|Asked to see|Interested in] {product} [for {site}|for their team|before {rush}].",
    "[Moved to a new role|Now heads|Took over] [{work}|operations|purchasing] [at {company}|there]; [keep them in the "
    "loop|new decision maker|update the org chart].",
)
_NOTE_TAILS = ("", "", "", "Follow up {when}.", "Next step: send a summary {when}.", "Call again {when}.",
               "Logged after the call.", "Shared with {colleague}.")
_WHEN = ("next week", "on Monday", "after the QBR", "before month end", "in two weeks")


# -- seed ----------------------------------------------------------------------------------------


#: Product categories no sales deal is about.
_NOT_SOLD_IN_DEALS = ("pantry", "supplies", "merchandise")
#: The smallest deal sales keeps in the pipeline (USD).
MIN_DEAL = 500.0
#: Why seeded deals were lost, as salespeople log it.
_LOST_REASONS = (
    "Chose a cheaper competitor", "Budget cut", "Project on hold", "Missing integrations", "No decision made",
    "Stayed with their current supplier", "Timing: revisit next quarter", "Went with an in-house tool",
    "Price above their budget", "Champion left the company",
)


def _closed_at(ctx: ToolContext, day: str) -> str:
    """When a deal that closed on ``day`` was marked so: that afternoon, or an hour ago if that is still ahead."""
    return min(f"{day}T16:00:00Z", ctx.days_from_now(-1 / 24))


def _won_today(ctx: ToolContext, deals: list[Deal], companies: dict[str, Company]) -> list[Deal]:
    """``deals`` with one open deal won this morning: the deal a salesperson announces today ("X signed!").

    Where it can, a company with no other won deal (the plan's deals counted), so "the deal they just signed" names
    one record even by company. Drawn from a stream of its own, so the rest of the seed stays as it was.
    """
    won = {d.company_id for d in deals if d.stage == "won"}
    won |= {c.id for c in companies.values() for d in commerce_plan(ctx.world).deals
            if d.stage == "won" and ctx.world.organisation(d.organisation_id).name == c.name}
    pool = [d for d in deals if d.stage in ("proposal", "negotiation")]
    alone = [d for d in pool if d.company_id not in won]
    if not pool:
        return deals
    chosen = ctx.rng("won today").choice(alone or pool)
    hours = ctx.now.hour + ctx.now.minute / 60
    at = ctx.days_from_now(-min(2.0, hours * 0.8) / 24)  # this morning, before now
    today = dataclasses.replace(chosen, stage="won", close_date=ctx.now_iso[:10], updated_at=at)
    return [today if d is chosen else d for d in deals]


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    sales = [p for p in world.team if p.job_title in ("sales lead", "account executive")]
    companies = [
        Company(
            id=ctx.new_id("co"),
            name=org.name,
            domain=org.domain,
            industry=org.industry,
            phone=org.phone,
            website=org.website,
            address=org.address,
            city=org.city,
            # The owner every service names (the draw keeps the rest of the seed as it was).
            owner_email=world.plan.account_owners[org.id].email if rng.choice(sales) else "",
        )
        for org in world.organisations[1:]
    ]
    ctx.insert_many(companies)
    by_domain = {c.domain: c for c in companies}
    contacts = []
    for person in world.customers:
        company = by_domain[person.email.split("@")[1]]
        contacts.append(
            Contact(
                id=ctx.new_id("ct"),
                first_name=person.first_name,
                last_name=person.last_name,
                email=person.email,
                phone=person.phone,
                company_id=company.id,
                job_title=person.job_title,
                city=person.city,
                lifecycle_stage=rng.choice(("lead", "customer", "customer", "customer", "churned")),
                owner_email=company.owner_email,
                created_at=ctx.days_from_now(-rng.randint(30, 900)),
            )
        )
    ctx.insert_many(contacts)
    by_id = {c.id: c for c in companies}
    deals = []
    # What a sales deal sells: plans, services, usage and equipment, never the pantry or the stationery cupboard.
    sold = [p for p in world.products if p.category not in _NOT_SOLD_IN_DEALS]
    reasons = ctx.rng("lost reasons")
    for _ in range(40):
        contact = rng.choice(contacts)
        product = rng.choice(sold)
        stage = rng.choice(("qualification", "proposal", "negotiation", "won", "won", "lost"))
        closed = stage in ("won", "lost")
        name = f"{product.name} for {by_id[contact.company_id or ''].name}"
        # Enough of it to be worth a salesperson's time (a deal of 34.50 USD is nobody's pipeline).
        amount = round(product.unit_price * max(rng.randint(1, 20), math.ceil(MIN_DEAL / product.unit_price)), 2)
        # A deal won or lost closed in the past; an open one is expected to close soon (or is overdue).
        close_date = ctx.days_from_now(rng.randint(-120, -1) if closed else rng.randint(-20, 90))[:10]
        touched = ctx.days_from_now(-rng.randint(1, 60))
        deals.append(
            Deal(
                id=ctx.new_id("dl"),
                name=name,
                company_id=contact.company_id or "",
                contact_id=contact.id,
                amount=amount,
                currency=world.currency,
                stage=stage,
                close_date=close_date,
                owner_email=contact.owner_email,
                lost_reason=reasons.choice(_LOST_REASONS) if stage == "lost" else None,
                # A closed deal was last changed when it closed.
                updated_at=_closed_at(ctx, close_date) if closed else touched,
            )
        )
    ctx.insert_many(_won_today(ctx, deals, by_id))
    notes = []
    people = {p.email: p for p in world.customers}
    for _ in range(world.scaled(30)):
        contact = rng.choice(contacts)
        person = people[contact.email]
        org = world.organisation(person.organisation_id)
        facts = {"product": rng.choice(world.products).name, "company": org.name, "when": rng.choice(_WHEN),
                 "colleague": rng.choice(world.team).first_name, **industry_facts(rng, org.industry)}
        # Written after the contact was added, within the last 200 days.
        since = (ctx.now - moment(contact.created_at)).days
        notes.append(
            Note(
                id=ctx.new_id("nt"),
                entity_type="contact",
                entity_id=contact.id,
                body=write(rng, f"{rng.choice(_NOTE_TEXTS)} {rng.choice(_NOTE_TAILS)}", facts),
                author_email=contact.owner_email or world.user.email,
                created_at=ctx.days_from_now(-rng.uniform(0.2, min(200, max(1, since - 1)))),
            )
        )
    ctx.insert_many(notes)
    # The deals esign's agreements belong to (the World's commerce plan): same name, company, contact.
    by_email = {c.email: c for c in contacts}
    ctx.insert_many([
        Deal(
            id=ctx.new_id("dl"),
            name=deal.name,
            company_id=by_domain[world.organisation(deal.organisation_id).domain].id,
            contact_id=by_email[deal.contact_email].id if deal.contact_email in by_email else None,
            amount=deal.amount,
            currency=world.currency,
            stage=deal.stage,
            close_date=deal.close_date,
            owner_email=deal.owner_email,
            updated_at=f"{deal.close_date}T16:00:00Z" if deal.stage == "won" else ctx.days_from_now(-2),
        )
        for deal in commerce_plan(world).deals
    ])


# -- contacts ------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look {query} up in the CRM", "find {query} in the CRM"))
def search_contacts(
    ctx: ToolContext,
    query: str | None = None,
    company_id: CompanyId | None = None,
    lifecycle_stage: LifecycleStage | None = None,
    include_archived: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Contact]:
    """Search contacts by name, email or job title, optionally within one company or lifecycle stage.

    Args:
        query: Words to match against first name, last name, email or job title (case-insensitive; every word must match).
        company_id: Only contacts of this company (see search_companies).
        lifecycle_stage: Only contacts in this stage: lead, customer or churned.
        include_archived: Also return archived contacts.
        limit: Maximum number of contacts to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Contact).search(query).filter(company_id=company_id, lifecycle_stage=lifecycle_stage)
    if not include_archived:
        q.where(archived=False)
    return q.order_by("last_name", "first_name").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open {contact_id} in the CRM",))
def get_contact(ctx: ToolContext, contact_id: ContactId) -> Contact:
    """Get one contact by id.

    Args:
        contact_id: The contact's id, e.g. ct_0007.
    """
    return ctx.get(Contact, contact_id)


@service.tool("read", intent="find", phrases=("find the CRM contact with the address {email}",))
def find_contact_by_email(ctx: ToolContext, email: EmailAddress) -> Contact:
    """Find the contact with exactly this email address.

    Args:
        email: The email address to look up.
    """
    contact = ctx.find(Contact, email=email.lower())
    if contact is None:
        raise ToolError.not_found("contact", email, "No contact has that email; try search_contacts.")
    return contact


@service.tool(
    "write",
    intent="create",
    phrases=("add {first_name} {last_name} to the CRM as a contact", "create a CRM contact for {first_name} {last_name}"),
)
def create_contact(
    ctx: ToolContext,
    first_name: str,
    last_name: str,
    email: EmailAddress,
    phone: PhoneNumber | None = None,
    company_id: CompanyId | None = None,
    job_title: JobTitle | None = None,
    lifecycle_stage: LifecycleStage = "lead",
) -> Contact:
    """Create a new contact. The email must not belong to another contact.

    Args:
        first_name: Given name.
        last_name: Family name.
        email: Email address (unique across contacts).
        phone: Phone number in E.164 form, e.g. +14155550123.
        company_id: The company the contact works for.
        job_title: The contact's job title.
        lifecycle_stage: lead (default), customer or churned.
    """
    email = email.lower()
    if not first_name.strip() or not last_name.strip():
        raise ToolError.invalid_argument("first_name and last_name must not be empty.")
    if ctx.exists(Contact, email=email):
        raise ToolError.conflict(f"A contact with email {email} already exists; use find_contact_by_email.")
    if company_id:
        ctx.get(Company, company_id)
    return ctx.insert(
        Contact(
            id=ctx.new_id("ct"),
            first_name=first_name.strip(),
            last_name=last_name.strip(),
            email=email,
            phone=phone,
            company_id=company_id,
            job_title=job_title,
            lifecycle_stage=lifecycle_stage,
            owner_email=ctx.world.user.email,
            created_at=ctx.now_iso,
        )
    )


@service.tool(
    "write",
    intent="update",
    phrases=("update {contact_id} in the CRM", "change the CRM record of {contact_id}"),
)
def update_contact(
    ctx: ToolContext,
    contact_id: ContactId,
    phone: PhoneNumber | None = None,
    job_title: JobTitle | None = None,
    lifecycle_stage: LifecycleStage | None = None,
    owner_email: EmailAddress | None = None,
) -> Contact:
    """Update a contact's phone, job title, lifecycle stage or owner. Only the fields you pass change.

    Args:
        contact_id: The contact to update.
        phone: New phone number in E.164 form.
        job_title: New job title.
        lifecycle_stage: New stage: lead, customer or churned.
        owner_email: Email of the colleague who owns this contact.
    """
    contact = ctx.get(Contact, contact_id)
    if contact.archived:
        raise ToolError.invalid_state(f"Contact {contact_id} is archived; restore_contact it first.")
    changes = {
        "phone": phone,
        "job_title": job_title,
        "lifecycle_stage": lifecycle_stage,
        "owner_email": owner_email.lower() if owner_email else None,
    }
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field to change.")
    return ctx.update(contact, **changes)


@service.tool("write", intent="delete", phrases=("archive {contact_id} in the CRM",))
def archive_contact(ctx: ToolContext, contact_id: ContactId) -> Contact:
    """Archive a contact so it no longer shows in searches. Archived contacts cannot be edited.

    Args:
        contact_id: The contact to archive.
    """
    contact = ctx.get(Contact, contact_id)
    if contact.archived:
        raise ToolError.invalid_state(f"Contact {contact_id} is already archived.")
    return ctx.update(contact, archived=True)


@service.tool("write", intent="restore", phrases=("restore {contact_id} in the CRM",))
def restore_contact(ctx: ToolContext, contact_id: ContactId) -> Contact:
    """Restore an archived contact.

    Args:
        contact_id: The archived contact to restore.
    """
    contact = ctx.get(Contact, contact_id, hint="Use search_contacts with include_archived=true.")
    if not contact.archived:
        raise ToolError.invalid_state(f"Contact {contact_id} is not archived.")
    return ctx.update(contact, archived=False)


# -- companies -----------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look up {query} in the CRM",))
def search_companies(
    ctx: ToolContext,
    query: str | None = None,
    industry: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Company]:
    """Search companies by name or domain, optionally by industry.

    Args:
        query: Words to match against the company name or domain (case-insensitive).
        industry: Only companies in this industry, e.g. logistics.
        limit: Maximum number of companies to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Company).search(query)
    if industry and industry.strip():
        q.where_sql("lower(industry) = lower(?)", industry.strip())
    return q.order_by("name").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the CRM account of {company_id}",))
def get_company(ctx: ToolContext, company_id: CompanyId) -> Company:
    """Get one company by id, with its phone, website, address and account owner.

    Args:
        company_id: The company's id, e.g. co_0003.
    """
    return ctx.get(Company, company_id)


# -- deals ---------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check the deals in the CRM",))
def list_deals(
    ctx: ToolContext,
    company_id: CompanyId | None = None,
    contact_id: ContactId | None = None,
    stage: DealStage | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Deal]:
    """List deals, most recently updated first, filtered by company, contact or stage.

    Args:
        company_id: Only deals with this company.
        contact_id: Only deals whose primary contact is this contact.
        stage: Only deals in this stage: qualification, proposal, negotiation, won or lost.
        limit: Maximum number of deals to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Deal).filter(company_id=company_id, contact_id=contact_id, stage=stage)
    return q.order_by("-updated_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open {deal_id}",))
def get_deal(ctx: ToolContext, deal_id: DealId) -> Deal:
    """Get one deal by id.

    Args:
        deal_id: The deal's id, e.g. dl_0012.
    """
    return ctx.get(Deal, deal_id)


@service.tool(
    "write",
    intent="create",
    phrases=("open a deal called {name} for {company_id}", "log a new {amount} deal with {company_id}"),
)
def create_deal(
    ctx: ToolContext,
    name: str,
    company_id: CompanyId,
    amount: Money,
    contact_id: ContactId | None = None,
    close_date: Date | None = None,
) -> Deal:
    """Open a new deal (stage qualification) with a company.

    Args:
        name: A short name for the deal.
        company_id: The company the deal is with.
        amount: Expected value in the home currency.
        contact_id: The primary contact; must work for the same company.
        close_date: Expected close date (YYYY-MM-DD).
    """
    if not name.strip():
        raise ToolError.invalid_argument("name must not be empty.")
    company = ctx.get(Company, company_id)
    if contact_id:
        contact = ctx.get(Contact, contact_id)
        if contact.company_id != company.id:
            raise ToolError.invalid_argument(f"Contact {contact_id} does not work for company {company_id}.")
    return ctx.insert(
        Deal(
            id=ctx.new_id("dl"),
            name=name.strip(),
            company_id=company.id,
            contact_id=contact_id,
            amount=round(amount, 2),
            currency=ctx.world.currency,
            stage="qualification",
            close_date=close_date,
            owner_email=ctx.world.user.email,
            updated_at=ctx.now_iso,
        )
    )


@service.tool(
    "write",
    intent="transition",
    phrases=("move {deal_id} to {stage}", "mark {deal_id} as {stage}"),
)
def update_deal_stage(ctx: ToolContext, deal_id: DealId, stage: DealStage, lost_reason: str | None = None) -> Deal:
    """Move an open deal to another stage. Won and lost deals are closed: reopen_deal them first.

    Closing a deal (won or lost) sets its close date to today, as HubSpot does.

    Args:
        deal_id: The deal to move.
        stage: The new stage: qualification, proposal, negotiation, won or lost.
        lost_reason: Required when the stage is lost: why the deal was lost.
    """
    deal = ctx.get(Deal, deal_id)
    if deal.stage not in OPEN_DEAL_STAGES:
        raise ToolError.invalid_state(f"Deal {deal_id} is closed ({deal.stage}); use reopen_deal first.")
    if deal.stage == stage:
        raise ToolError.invalid_state(f"Deal {deal_id} is already in stage {stage}.")
    if stage == "lost" and not (lost_reason and lost_reason.strip()):
        raise ToolError.invalid_argument("A lost deal needs a lost_reason.")
    reason = lost_reason.strip() if stage == "lost" and lost_reason else None
    closes = ctx.now_iso[:10] if stage in ("won", "lost") else deal.close_date
    return ctx.update(deal, stage=stage, lost_reason=reason, close_date=closes, updated_at=ctx.now_iso)


@service.tool("write", intent="reopen", phrases=("reopen {deal_id}",))
def reopen_deal(ctx: ToolContext, deal_id: DealId) -> Deal:
    """Reopen a won or lost deal; it goes back to negotiation.

    Args:
        deal_id: The closed deal to reopen.
    """
    deal = ctx.get(Deal, deal_id)
    if deal.stage in OPEN_DEAL_STAGES:
        raise ToolError.invalid_state(f"Deal {deal_id} is already open ({deal.stage}).")
    return ctx.update(deal, stage="negotiation", lost_reason=None, updated_at=ctx.now_iso)


# -- notes ---------------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="note",
    phrases=("add a note to {entity_id} in the CRM saying {body}", "note on {entity_id} in the CRM: {body}"),
)
def add_note(ctx: ToolContext, entity_type: NoteTarget, entity_id: str, body: Text) -> Note:
    """Attach a note to a contact, company or deal.

    Args:
        entity_type: What the note is about: contact, company or deal.
        entity_id: The id of that contact, company or deal.
        body: The note's text.
    """
    if not body.strip():
        raise ToolError.invalid_argument("body must not be empty.")
    ctx.get(_NOTE_TARGETS[entity_type], entity_id, entity_type)
    return ctx.insert(
        Note(
            id=ctx.new_id("nt"),
            entity_type=entity_type,
            entity_id=entity_id,
            body=body.strip(),
            author_email=ctx.world.user.email,
            created_at=ctx.now_iso,
        )
    )


@service.tool("read", intent="find", phrases=("read the CRM notes on {entity_id}",))
def list_notes(
    ctx: ToolContext,
    entity_type: NoteTarget,
    entity_id: str,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Note]:
    """List the notes on a contact, company or deal, newest first.

    Args:
        entity_type: contact, company or deal.
        entity_id: The id of that contact, company or deal.
        limit: Maximum number of notes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    ctx.get(_NOTE_TARGETS[entity_type], entity_id, entity_type)
    q = ctx.query(Note).where(entity_type=entity_type, entity_id=entity_id)
    return q.order_by("-created_at").page(limit, cursor)
