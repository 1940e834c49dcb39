"""CRM: contacts, companies, deals and notes (modelled on HubSpot-style CRM APIs)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel
from sqlalchemy import ForeignKey, String, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
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
)

ContactId = EntityId("crm.contact")
CompanyId = EntityId("crm.company")
DealId = EntityId("crm.deal")
NoteId = EntityId("crm.note")

LifecycleStage = Literal["lead", "customer", "churned"]
DealStage = Literal["qualification", "proposal", "negotiation", "won", "lost"]
OPEN_DEAL_STAGES = ("qualification", "proposal", "negotiation")


class Base(DeclarativeBase):
    pass


class Company(Base):
    __tablename__ = "companies"
    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    domain: Mapped[str] = mapped_column(String(253), unique=True)
    industry: Mapped[str]
    phone: Mapped[str]
    website: Mapped[str]
    address: Mapped[str]
    city: Mapped[str]
    owner_email: Mapped[str | None]


class Contact(Base):
    __tablename__ = "contacts"
    id: Mapped[str] = mapped_column(primary_key=True)
    first_name: Mapped[str]
    last_name: Mapped[str] = mapped_column(index=True)
    email: Mapped[str] = mapped_column(unique=True)
    phone: Mapped[str | None]
    company_id: Mapped[str | None] = mapped_column(ForeignKey("companies.id"))
    job_title: Mapped[str | None]
    city: Mapped[str | None]
    lifecycle_stage: Mapped[str] = mapped_column(default="lead")
    owner_email: Mapped[str | None]
    archived: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[str]


class Deal(Base):
    __tablename__ = "deals"
    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str]
    company_id: Mapped[str] = mapped_column(ForeignKey("companies.id"))
    contact_id: Mapped[str | None] = mapped_column(ForeignKey("contacts.id"))
    amount: Mapped[float]
    currency: Mapped[str]
    stage: Mapped[str]
    close_date: Mapped[str | None]
    owner_email: Mapped[str | None]
    lost_reason: Mapped[str | None]
    updated_at: Mapped[str]


class Note(Base):
    __tablename__ = "notes"
    id: Mapped[str] = mapped_column(primary_key=True)
    entity_type: Mapped[str]
    entity_id: Mapped[str] = mapped_column(index=True)
    body: Mapped[str]
    author_email: Mapped[str]
    created_at: Mapped[str]


service = Service(
    "crm",
    "Customer relationship management: the companies we sell to, their contacts, sales deals and notes.",
    Base,
    title="CRM",
)


# -- results -------------------------------------------------------------------------------------


class ContactOut(BaseModel):
    id: ContactId
    name: PersonName
    first_name: str
    last_name: str
    email: EmailAddress
    phone: PhoneNumber | None
    company_id: CompanyId | None
    company_name: CompanyName | None
    job_title: JobTitle | None
    city: City | None
    lifecycle_stage: LifecycleStage
    owner_email: EmailAddress | None
    archived: bool
    created_at: DateTime


class CompanyOut(BaseModel):
    id: CompanyId
    name: CompanyName
    domain: DomainName
    industry: str
    phone: PhoneNumber
    website: URL
    address: Address
    city: City
    owner_email: EmailAddress | None


class DealOut(BaseModel):
    id: DealId
    name: str
    company_id: CompanyId
    company_name: CompanyName
    contact_id: ContactId | None
    amount: Money
    currency: Currency
    stage: DealStage
    close_date: Date | None
    owner_email: EmailAddress | None
    lost_reason: str | None
    updated_at: DateTime


class NoteOut(BaseModel):
    id: NoteId
    entity_type: Literal["contact", "company", "deal"]
    entity_id: str
    body: Text
    author_email: EmailAddress
    created_at: DateTime


def _companies_by_id(ctx: ToolContext, ids: Iterable[str | None]) -> dict[str, Company]:
    """The companies with these ids (None skipped), in one query."""
    wanted = {i for i in ids if i}
    if not wanted:
        return {}
    return {c.id: c for c in ctx.db.scalars(select(Company).where(Company.id.in_(wanted)))}


def _contact_out(ctx: ToolContext, c: Contact) -> ContactOut:
    return _contact_outs(ctx, [c])[0]


def _contact_outs(ctx: ToolContext, contacts: list[Contact]) -> list[ContactOut]:
    """Contacts as results, with their companies fetched in one query per page."""
    companies = _companies_by_id(ctx, (c.company_id for c in contacts))
    out = []
    for c in contacts:
        company = companies.get(c.company_id) if c.company_id else None
        out.append(
            ContactOut(
                id=c.id,
                name=f"{c.first_name} {c.last_name}",
                first_name=c.first_name,
                last_name=c.last_name,
                email=c.email,
                phone=c.phone,
                company_id=c.company_id,
                company_name=company.name if company else None,
                job_title=c.job_title,
                city=c.city,
                lifecycle_stage=c.lifecycle_stage,  # type: ignore[arg-type]
                owner_email=c.owner_email,
                archived=c.archived,
                created_at=c.created_at,
            )
        )
    return out


def _company_out(c: Company) -> CompanyOut:
    return CompanyOut.model_validate(c, from_attributes=True)


def _deal_out(ctx: ToolContext, d: Deal) -> DealOut:
    return _deal_outs(ctx, [d])[0]


def _deal_outs(ctx: ToolContext, deals: list[Deal]) -> list[DealOut]:
    """Deals as results, with their companies fetched in one query per page."""
    companies = _companies_by_id(ctx, (d.company_id for d in deals))
    out = []
    for d in deals:
        company = companies.get(d.company_id)
        if company is None:
            raise ToolError.not_found("company", d.company_id)
        out.append(
            DealOut(
                id=d.id,
                name=d.name,
                company_id=d.company_id,
                company_name=company.name,
                contact_id=d.contact_id,
                amount=d.amount,
                currency=d.currency,
                stage=d.stage,  # type: ignore[arg-type]
                close_date=d.close_date,
                owner_email=d.owner_email,
                lost_reason=d.lost_reason,
                updated_at=d.updated_at,
            )
        )
    return out


def _note_out(n: Note) -> NoteOut:
    return NoteOut.model_validate(n, from_attributes=True)


# -- seed ----------------------------------------------------------------------------------------


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    sales = [p for p in world.team if p.job_title in ("sales lead", "account executive")]
    for org in world.organisations[1:]:
        ctx.db.add(
            Company(
                id=ctx.new_id("co"),
                name=org.name,
                domain=org.domain,
                industry=org.industry,
                phone=org.phone,
                website=org.website,
                address=org.address,
                city=org.city,
                owner_email=rng.choice(sales).email,
            )
        )
    ctx.db.flush()
    company_by_domain = {c.domain: c for c in ctx.db.scalars(select(Company))}
    for person in world.customers:
        company = company_by_domain[person.email.split("@")[1]]
        ctx.db.add(
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
    ctx.db.flush()
    contacts = list(ctx.db.scalars(select(Contact)))
    products = world.products
    for i in range(40):
        contact = rng.choice(contacts)
        product = rng.choice(products)
        stage = rng.choice(("qualification", "proposal", "negotiation", "won", "won", "lost"))
        ctx.db.add(
            Deal(
                id=ctx.new_id("dl"),
                name=f"{product.name} for {ctx.db.get(Company, contact.company_id).name}",  # type: ignore[union-attr]
                company_id=contact.company_id,
                contact_id=contact.id,
                amount=round(product.unit_price * rng.randint(1, 20), 2),
                currency=world.currency,
                stage=stage,
                close_date=ctx.days_from_now(rng.randint(-120, 90))[:10],
                owner_email=contact.owner_email,
                lost_reason="Chose a competitor" if stage == "lost" else None,
                updated_at=ctx.days_from_now(-rng.randint(1, 60)),
            )
        )
    for i in range(30):
        contact = rng.choice(contacts)
        ctx.db.add(
            Note(
                id=ctx.new_id("nt"),
                entity_type="contact",
                entity_id=contact.id,
                body=rng.choice(
                    (
                        "Asked about volume pricing for next quarter.",
                        "Prefers email over phone calls.",
                        "Renewal conversation scheduled; budget approved.",
                        "Raised concerns about onboarding time.",
                        "Introduced us to their finance team.",
                    )
                ),
                author_email=contact.owner_email or world.user.email,
                created_at=ctx.days_from_now(-rng.randint(1, 200)),
            )
        )


# -- contacts ------------------------------------------------------------------------------------


@service.tool("read")
def search_contacts(
    ctx: ToolContext,
    query: str | None = None,
    company_id: CompanyId | None = None,
    lifecycle_stage: LifecycleStage | None = None,
    include_archived: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[ContactOut]:
    """Search contacts by name, email or job title, optionally within one company or lifecycle stage.

    Args:
        query: Words to match against first name, last name, full name, email or job title (case-insensitive).
        company_id: Only contacts of this company (see search_companies).
        lifecycle_stage: Only contacts in this stage: lead, customer or churned.
        include_archived: Also return archived contacts.
        limit: Maximum number of contacts to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Contact).order_by(Contact.last_name, Contact.first_name, Contact.id)
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(
            or_(
                Contact.first_name.ilike(like),
                Contact.last_name.ilike(like),
                (Contact.first_name + " " + Contact.last_name).ilike(like),
                Contact.email.ilike(like),
                Contact.job_title.ilike(like),
            )
        )
    if company_id:
        stmt = stmt.where(Contact.company_id == company_id)
    if lifecycle_stage:
        stmt = stmt.where(Contact.lifecycle_stage == lifecycle_stage)
    if not include_archived:
        stmt = stmt.where(Contact.archived.is_(False))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[ContactOut](items=_contact_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_contact(ctx: ToolContext, contact_id: ContactId) -> ContactOut:
    """Get one contact by id.

    Args:
        contact_id: The contact's id, e.g. ct_0007.
    """
    return _contact_out(ctx, ctx.get(Contact, contact_id, "contact", "Use search_contacts to find contact ids."))


@service.tool("read")
def find_contact_by_email(ctx: ToolContext, email: EmailAddress) -> ContactOut:
    """Find the contact with exactly this email address.

    Args:
        email: The email address to look up.
    """
    contact = ctx.db.scalar(select(Contact).where(Contact.email == email.lower()))
    if contact is None:
        raise ToolError.not_found("contact", email, "No contact has that email; try search_contacts.")
    return _contact_out(ctx, contact)


@service.tool("write")
def create_contact(
    ctx: ToolContext,
    first_name: str,
    last_name: str,
    email: EmailAddress,
    phone: PhoneNumber | None = None,
    company_id: CompanyId | None = None,
    job_title: JobTitle | None = None,
    lifecycle_stage: LifecycleStage = "lead",
) -> ContactOut:
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
    if ctx.db.scalar(select(Contact.id).where(Contact.email == email)):
        raise ToolError.conflict(f"A contact with email {email} already exists; use find_contact_by_email.")
    if company_id:
        ctx.get(Company, company_id, "company", "Use search_companies to find company ids.")
    contact = Contact(
        id=ctx.new_id("ct"),
        first_name=first_name.strip(),
        last_name=last_name.strip(),
        email=email,
        phone=phone,
        company_id=company_id,
        job_title=job_title,
        city=None,
        lifecycle_stage=lifecycle_stage,
        owner_email=ctx.world.user.email,
        archived=False,
        created_at=ctx.now_iso,
    )
    ctx.db.add(contact)
    ctx.db.flush()
    return _contact_out(ctx, contact)


@service.tool("write")
def update_contact(
    ctx: ToolContext,
    contact_id: ContactId,
    phone: PhoneNumber | None = None,
    job_title: JobTitle | None = None,
    lifecycle_stage: LifecycleStage | None = None,
    owner_email: EmailAddress | None = None,
) -> ContactOut:
    """Update a contact's phone, job title, lifecycle stage or owner. Only the fields you pass change.

    Args:
        contact_id: The contact to update.
        phone: New phone number in E.164 form.
        job_title: New job title.
        lifecycle_stage: New stage: lead, customer or churned.
        owner_email: Email of the colleague who owns this contact.
    """
    contact = ctx.get(Contact, contact_id, "contact", "Use search_contacts to find contact ids.")
    if contact.archived:
        raise ToolError.invalid_state(f"Contact {contact_id} is archived; restore_contact it first.")
    if phone is None and job_title is None and lifecycle_stage is None and owner_email is None:
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if phone is not None:
        contact.phone = phone
    if job_title is not None:
        contact.job_title = job_title
    if lifecycle_stage is not None:
        contact.lifecycle_stage = lifecycle_stage
    if owner_email is not None:
        contact.owner_email = owner_email.lower()
    return _contact_out(ctx, contact)


@service.tool("write")
def archive_contact(ctx: ToolContext, contact_id: ContactId) -> ContactOut:
    """Archive a contact so it no longer shows in searches. Archived contacts cannot be edited.

    Args:
        contact_id: The contact to archive.
    """
    contact = ctx.get(Contact, contact_id, "contact", "Use search_contacts to find contact ids.")
    if contact.archived:
        raise ToolError.invalid_state(f"Contact {contact_id} is already archived.")
    contact.archived = True
    return _contact_out(ctx, contact)


@service.tool("write")
def restore_contact(ctx: ToolContext, contact_id: ContactId) -> ContactOut:
    """Restore an archived contact.

    Args:
        contact_id: The archived contact to restore.
    """
    contact = ctx.get(Contact, contact_id, "contact", "Use search_contacts with include_archived=true.")
    if not contact.archived:
        raise ToolError.invalid_state(f"Contact {contact_id} is not archived.")
    contact.archived = False
    return _contact_out(ctx, contact)


# -- companies -----------------------------------------------------------------------------------


@service.tool("read")
def search_companies(
    ctx: ToolContext,
    query: str | None = None,
    industry: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[CompanyOut]:
    """Search companies by name or domain, optionally by industry.

    Args:
        query: Text to match against the company name or domain (case-insensitive).
        industry: Only companies in this industry, e.g. logistics.
        limit: Maximum number of companies to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Company).order_by(Company.name, Company.id)
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(Company.name.ilike(like), Company.domain.ilike(like)))
    if industry:
        stmt = stmt.where(Company.industry.ilike(industry.strip()))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[CompanyOut](items=[_company_out(c) for c in rows], total=total, next_cursor=next_cursor)


@service.tool("read")
def get_company(ctx: ToolContext, company_id: CompanyId) -> CompanyOut:
    """Get one company by id, with its phone, website, address and account owner.

    Args:
        company_id: The company's id, e.g. co_0003.
    """
    return _company_out(ctx.get(Company, company_id, "company", "Use search_companies to find company ids."))


# -- deals ---------------------------------------------------------------------------------------


@service.tool("read")
def list_deals(
    ctx: ToolContext,
    company_id: CompanyId | None = None,
    contact_id: ContactId | None = None,
    stage: DealStage | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[DealOut]:
    """List deals, newest first, filtered by company, contact or stage.

    Args:
        company_id: Only deals with this company.
        contact_id: Only deals whose primary contact is this contact.
        stage: Only deals in this stage: qualification, proposal, negotiation, won or lost.
        limit: Maximum number of deals to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Deal).order_by(Deal.updated_at.desc(), Deal.id)
    if company_id:
        stmt = stmt.where(Deal.company_id == company_id)
    if contact_id:
        stmt = stmt.where(Deal.contact_id == contact_id)
    if stage:
        stmt = stmt.where(Deal.stage == stage)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[DealOut](items=_deal_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_deal(ctx: ToolContext, deal_id: DealId) -> DealOut:
    """Get one deal by id.

    Args:
        deal_id: The deal's id, e.g. dl_0012.
    """
    return _deal_out(ctx, ctx.get(Deal, deal_id, "deal", "Use list_deals to find deal ids."))


@service.tool("write")
def create_deal(
    ctx: ToolContext,
    name: str,
    company_id: CompanyId,
    amount: Money,
    contact_id: ContactId | None = None,
    close_date: Date | None = None,
) -> DealOut:
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
    company = ctx.get(Company, company_id, "company", "Use search_companies to find company ids.")
    if contact_id:
        contact = ctx.get(Contact, contact_id, "contact", "Use search_contacts to find contact ids.")
        if contact.company_id != company.id:
            raise ToolError.invalid_argument(f"Contact {contact_id} does not work for company {company_id}.")
    deal = Deal(
        id=ctx.new_id("dl"),
        name=name.strip(),
        company_id=company.id,
        contact_id=contact_id,
        amount=round(amount, 2),
        currency=ctx.world.currency,
        stage="qualification",
        close_date=close_date,
        owner_email=ctx.world.user.email,
        lost_reason=None,
        updated_at=ctx.now_iso,
    )
    ctx.db.add(deal)
    ctx.db.flush()
    return _deal_out(ctx, deal)


@service.tool("write")
def update_deal_stage(
    ctx: ToolContext, deal_id: DealId, stage: DealStage, lost_reason: str | None = None
) -> DealOut:
    """Move an open deal to another stage. Won and lost deals are closed: reopen_deal them first.

    Args:
        deal_id: The deal to move.
        stage: The new stage: qualification, proposal, negotiation, won or lost.
        lost_reason: Required when the stage is lost: why the deal was lost.
    """
    deal = ctx.get(Deal, deal_id, "deal", "Use list_deals to find deal ids.")
    if deal.stage not in OPEN_DEAL_STAGES:
        raise ToolError.invalid_state(f"Deal {deal_id} is closed ({deal.stage}); use reopen_deal first.")
    if deal.stage == stage:
        raise ToolError.invalid_state(f"Deal {deal_id} is already in stage {stage}.")
    if stage == "lost" and not (lost_reason and lost_reason.strip()):
        raise ToolError.invalid_argument("A lost deal needs a lost_reason.")
    deal.stage = stage
    deal.lost_reason = lost_reason.strip() if stage == "lost" and lost_reason else None
    deal.updated_at = ctx.now_iso
    return _deal_out(ctx, deal)


@service.tool("write")
def reopen_deal(ctx: ToolContext, deal_id: DealId) -> DealOut:
    """Reopen a won or lost deal; it goes back to negotiation.

    Args:
        deal_id: The closed deal to reopen.
    """
    deal = ctx.get(Deal, deal_id, "deal", "Use list_deals to find deal ids.")
    if deal.stage in OPEN_DEAL_STAGES:
        raise ToolError.invalid_state(f"Deal {deal_id} is already open ({deal.stage}).")
    deal.stage = "negotiation"
    deal.lost_reason = None
    deal.updated_at = ctx.now_iso
    return _deal_out(ctx, deal)


# -- notes ---------------------------------------------------------------------------------------

_NOTE_TARGETS: dict[str, type[Base]] = {"contact": Contact, "company": Company, "deal": Deal}


@service.tool("write")
def add_note(
    ctx: ToolContext, entity_type: Literal["contact", "company", "deal"], entity_id: str, body: Text
) -> NoteOut:
    """Attach a note to a contact, company or deal.

    Args:
        entity_type: What the note is about: contact, company or deal.
        entity_id: The id of that contact, company or deal.
        body: The note's text.
    """
    if not body.strip():
        raise ToolError.invalid_argument("body must not be empty.")
    ctx.get(_NOTE_TARGETS[entity_type], entity_id, entity_type)
    note = Note(
        id=ctx.new_id("nt"),
        entity_type=entity_type,
        entity_id=entity_id,
        body=body.strip(),
        author_email=ctx.world.user.email,
        created_at=ctx.now_iso,
    )
    ctx.db.add(note)
    ctx.db.flush()
    return _note_out(note)


@service.tool("read")
def list_notes(
    ctx: ToolContext,
    entity_type: Literal["contact", "company", "deal"],
    entity_id: str,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[NoteOut]:
    """List the notes on a contact, company or deal, newest first.

    Args:
        entity_type: contact, company or deal.
        entity_id: The id of that contact, company or deal.
        limit: Maximum number of notes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    ctx.get(_NOTE_TARGETS[entity_type], entity_id, entity_type)
    stmt = (
        select(Note)
        .where(Note.entity_type == entity_type, Note.entity_id == entity_id)
        .order_by(Note.created_at.desc(), Note.id)
    )
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[NoteOut](items=[_note_out(n) for n in rows], total=total, next_cursor=next_cursor)
