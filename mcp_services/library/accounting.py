"""Accounting: contacts, sales invoices, payments, credit notes and supplier bills (modelled on Xero Accounting).

Invoices move DRAFT -> AUTHORISED (approve_invoice) -> PAID (once payments and credit notes cover the
total), or to VOIDED while nothing has been paid or credited. Bills are the same document the other
way round: what suppliers charge us. Line items reference the world's products (SKU, unit price),
and contacts are the world's organisations with a billing person from the CRM, so every company
name, email and amount here lines up with the other services.

The seeded sales invoices come from ``planned_sales_invoices(world)``, a pure function of the
world. The payments service reads the same plan, so an invoice paid by card here has its Stripe
charge there (same invoice number, amount and billing email), and a few card payments are left
unrecorded here on purpose: reconciling them is a task.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date as date_cls
from datetime import timedelta
from functools import lru_cache
from typing import Literal, Protocol, TypedDict, TypeVar

from pydantic import BaseModel, Field
from sqlalchemy import JSON, ForeignKey, String, case, cast, func, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, ErrorCode, Limit, Page, Service, ToolContext, ToolError, World, paginate
from mcp_services.kernel.semantic import (
    Address,
    CompanyName,
    Currency,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    Money,
    PersonName,
    PhoneNumber,
    ProductName,
    ProductSKU,
    Quantity,
    Subject,
    Text,
)
from mcp_services.kernel.world import Person, Product

T = TypeVar("T")


class Rng(Protocol):
    """The part of the world's seeded random stream (``ctx.rng``/``world.rng``) that seeding uses."""

    def random(self) -> float: ...
    def randint(self, a: int, b: int) -> int: ...
    def uniform(self, a: float, b: float) -> float: ...
    def choice(self, seq: Sequence[T]) -> T: ...
    def choices(self, population: Sequence[T], weights: Sequence[float] | None = None) -> list[T]: ...
    def sample(self, population: Sequence[T], k: int) -> list[T]: ...

ContactId = EntityId("accounting.contact")
InvoiceNumber = EntityId("accounting.invoice")
BillNumber = EntityId("accounting.bill")
CreditNoteNumber = EntityId("accounting.credit_note")
PaymentId = EntityId("accounting.payment")
InvoiceEmailId = EntityId("accounting.invoice_email")

InvoiceStatus = Literal["DRAFT", "AUTHORISED", "PAID", "VOIDED"]
CreditNoteStatus = Literal["AUTHORISED", "PAID"]
PaymentMethod = Literal["bank_transfer", "card", "cheque", "cash"]

N_SALES_INVOICES = 120
N_BILLS = 40
N_SUPPLIERS = 5

# Typical quantities per product category, so seeded totals look like real orders.
_QUANTITY_RANGE: dict[str, tuple[int, int]] = {
    "subscriptions": (1, 25),
    "services": (1, 3),
    "furniture": (1, 12),
    "hardware": (1, 15),
    "pantry": (2, 30),
    "supplies": (2, 40),
    "usage": (1, 6),
    "merchandise": (10, 120),
}
# What we buy from suppliers (bills); subscriptions and usage are what we sell.
_BILL_CATEGORIES = ("furniture", "hardware", "pantry", "supplies", "merchandise")


class LineDict(TypedDict):
    """One stored line of an invoice, bill or credit note (a JSON column)."""

    sku: str | None
    description: str
    quantity: int
    unit_price: float
    line_amount: float


class Base(DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "items"
    code: Mapped[str] = mapped_column(primary_key=True)  # the world's product SKU
    name: Mapped[str]
    category: Mapped[str]
    unit_price: Mapped[float]
    currency: Mapped[str]


class Contact(Base):
    __tablename__ = "contacts"
    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    email: Mapped[str]  # the billing email invoices are sent to
    contact_person: Mapped[str | None]
    phone: Mapped[str | None]
    address: Mapped[str | None]
    domain: Mapped[str | None]  # lets any email at the organisation find its contact
    is_customer: Mapped[bool] = mapped_column(default=True)
    is_supplier: Mapped[bool] = mapped_column(default=False)
    payment_terms_days: Mapped[int] = mapped_column(default=30)
    currency: Mapped[str]
    created_at: Mapped[str]


class Invoice(Base):
    __tablename__ = "invoices"
    number: Mapped[str] = mapped_column(primary_key=True)  # INV-0001
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id"), index=True)
    reference: Mapped[str | None]
    date: Mapped[str]
    due_date: Mapped[str]
    currency: Mapped[str]
    status: Mapped[str]
    line_items: Mapped[list[LineDict]] = mapped_column(JSON)
    total: Mapped[float]
    amount_paid: Mapped[float] = mapped_column(default=0.0)
    amount_credited: Mapped[float] = mapped_column(default=0.0)
    amount_due: Mapped[float]
    sent_to_contact: Mapped[bool] = mapped_column(default=False)
    last_sent_at: Mapped[str | None]
    fully_paid_on: Mapped[str | None]
    created_at: Mapped[str]
    updated_at: Mapped[str]


class Bill(Base):
    __tablename__ = "bills"
    number: Mapped[str] = mapped_column(primary_key=True)  # BILL-0001
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id"), index=True)
    supplier_reference: Mapped[str | None]
    date: Mapped[str]
    due_date: Mapped[str]
    currency: Mapped[str]
    status: Mapped[str]
    line_items: Mapped[list[LineDict]] = mapped_column(JSON)
    total: Mapped[float]
    amount_paid: Mapped[float] = mapped_column(default=0.0)
    amount_due: Mapped[float]
    fully_paid_on: Mapped[str | None]
    created_at: Mapped[str]
    updated_at: Mapped[str]


class Payment(Base):
    __tablename__ = "payments"
    id: Mapped[str] = mapped_column(primary_key=True)
    invoice_number: Mapped[str | None] = mapped_column(ForeignKey("invoices.number"), index=True)
    bill_number: Mapped[str | None] = mapped_column(ForeignKey("bills.number"), index=True)
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id"))
    amount: Mapped[float]
    currency: Mapped[str]
    date: Mapped[str]
    method: Mapped[str]
    reference: Mapped[str | None]
    created_at: Mapped[str]


class CreditNote(Base):
    __tablename__ = "credit_notes"
    number: Mapped[str] = mapped_column(primary_key=True)  # CN-0001
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id"), index=True)
    date: Mapped[str]
    reason: Mapped[str | None]
    currency: Mapped[str]
    status: Mapped[str]
    line_items: Mapped[list[LineDict]] = mapped_column(JSON)
    total: Mapped[float]
    remaining_credit: Mapped[float]
    created_at: Mapped[str]


class CreditAllocation(Base):
    __tablename__ = "credit_allocations"
    id: Mapped[str] = mapped_column(primary_key=True)
    credit_note_number: Mapped[str] = mapped_column(ForeignKey("credit_notes.number"), index=True)
    invoice_number: Mapped[str] = mapped_column(ForeignKey("invoices.number"), index=True)
    amount: Mapped[float]
    date: Mapped[str]


class InvoiceEmail(Base):
    __tablename__ = "invoice_emails"
    id: Mapped[str] = mapped_column(primary_key=True)
    invoice_number: Mapped[str] = mapped_column(ForeignKey("invoices.number"), index=True)
    to: Mapped[list[str]] = mapped_column(JSON)
    cc: Mapped[list[str]] = mapped_column(JSON)
    subject: Mapped[str]
    message: Mapped[str | None]
    sent_at: Mapped[str]


service = Service(
    "accounting",
    "Accounting and invoicing: customer and supplier contacts, sales invoices, payments received, credit notes "
    "and supplier bills.",
    Base,
    title="Accounting",
)


# -- the shared seed plan (also read by the payments service) -------------------------------------


@dataclass(frozen=True, slots=True)
class PlannedLine:
    sku: str
    description: str
    quantity: int
    unit_price: float

    @property
    def amount(self) -> float:
        return round(self.quantity * self.unit_price, 2)

    def stored(self) -> LineDict:
        return LineDict(
            sku=self.sku,
            description=self.description,
            quantity=self.quantity,
            unit_price=self.unit_price,
            line_amount=self.amount,
        )


@dataclass(frozen=True, slots=True)
class PlannedPayment:
    amount: float
    date: str
    method: str


CardOutcome = Literal["none", "paid", "failed", "unrecorded"]


@dataclass(frozen=True, slots=True)
class PlannedInvoice:
    """One seeded sales invoice. ``card`` says what the payments service holds for it:
    ``paid`` (card payments recorded here have charges there), ``failed`` (a declined charge,
    invoice still open), ``unrecorded`` (a succeeded charge whose payment is missing here)."""

    number: str
    organisation_id: str
    billing_email: str
    date: str
    due_date: str
    lines: tuple[PlannedLine, ...]
    total: float
    status: str
    payments: tuple[PlannedPayment, ...]
    card: CardOutcome

    @property
    def amount_due(self) -> float:
        return round(self.total - sum(p.amount for p in self.payments), 2)


@lru_cache(maxsize=64)
def billing_contacts(world: World) -> dict[str, Person]:
    """Organisation id -> the person who receives its invoices (one of its CRM contacts)."""
    rng = world.rng("accounting:billing-contacts")
    result: dict[str, Person] = {}
    for org in world.organisations[1:]:
        people = [p for p in world.customers if p.organisation_id == org.id]
        result[org.id] = rng.choice(people)
    return result


@lru_cache(maxsize=64)
def payment_terms(world: World) -> dict[str, int]:
    """Organisation id -> payment terms in days."""
    rng = world.rng("accounting:terms")
    return {org.id: rng.choice((14, 30, 30, 45)) for org in world.organisations[1:]}


@lru_cache(maxsize=64)
def planned_sales_invoices(world: World) -> tuple[PlannedInvoice, ...]:
    """The seeded sales invoices, oldest first (so INV numbers grow with the date)."""
    rng = world.rng("accounting:plan")
    today = world.now_dt.date()
    billing = billing_contacts(world)
    terms = payment_terms(world)
    orgs = world.organisations[1:]
    ages = sorted((rng.randint(1, 240) for _ in range(N_SALES_INVOICES)), reverse=True)
    plans: list[PlannedInvoice] = []
    for index, age in enumerate(ages):
        org = rng.choice(orgs)
        issued = today - timedelta(days=age)
        due = issued + timedelta(days=terms[org.id])
        lines = _random_lines(rng, tuple(p for p in world.products if p.category != "pantry"))
        total = round(sum(line.amount for line in lines), 2)
        status = "AUTHORISED"
        payments: list[PlannedPayment] = []
        method = rng.choices(("card", "bank_transfer", "cheque"), weights=(4, 5, 1))[0]
        paid_on = issued + timedelta(days=rng.randint(1, terms[org.id] + 15))
        if age <= 12 and rng.random() < 0.45:
            status = "DRAFT"
        elif rng.random() < 0.04:
            status = "VOIDED"
        elif paid_on <= today and rng.random() < 0.88:
            status = "PAID"
            if rng.random() < 0.15 and (paid_on - issued).days >= 3:
                # Two instalments on different days, so they never look like a duplicate charge.
                first = round(total / 2, 2)
                early = issued + timedelta(days=rng.randint(1, (paid_on - issued).days - 1))
                payments = [PlannedPayment(first, early.isoformat(), method)]
                payments.append(PlannedPayment(round(total - first, 2), paid_on.isoformat(), method))
            else:
                payments = [PlannedPayment(total, paid_on.isoformat(), method)]
        elif age > 20 and rng.random() < 0.25:
            part = float(round(total * rng.uniform(0.3, 0.7)))
            payments = [PlannedPayment(part, min(paid_on, today).isoformat(), method)]
        card: CardOutcome = "paid" if payments and method == "card" else "none"
        plans.append(
            PlannedInvoice(
                number=f"INV-{index + 1:04d}",
                organisation_id=org.id,
                billing_email=billing[org.id].email,
                date=issued.isoformat(),
                due_date=due.isoformat(),
                lines=tuple(lines),
                total=total,
                status=status,
                payments=tuple(payments),
                card=card,
            )
        )
    # Open invoices with no payment yet: some had a declined card, a few were paid by card but
    # never recorded here (three or more of each where the world has them, for both kinds of task).
    open_unpaid = [i for i, p in enumerate(plans) if p.status == "AUTHORISED" and not p.payments]
    overdue = [i for i in open_unpaid if plans[i].due_date < today.isoformat()]
    for i in rng.sample(overdue, min(len(overdue), max(3, len(overdue) // 3))):
        plans[i] = replace(plans[i], card="failed")
    rest = [i for i in open_unpaid if plans[i].card == "none"]
    for i in rng.sample(rest, min(len(rest), 3)):
        plans[i] = replace(plans[i], card="unrecorded")
    return tuple(plans)


def _random_lines(rng: Rng, products: tuple[Product, ...]) -> list[PlannedLine]:
    chosen = rng.sample(products, rng.choices((1, 2, 3, 4), weights=(4, 3, 2, 1))[0])
    lines = []
    for product in chosen:
        low, high = _QUANTITY_RANGE.get(product.category, (1, 5))
        lines.append(
            PlannedLine(
                sku=product.sku,
                description=product.name,
                quantity=rng.randint(low, high),
                unit_price=product.unit_price,
            )
        )
    return lines


@lru_cache(maxsize=64)
def supplier_organisation_ids(world: World) -> frozenset[str]:
    """The organisations that also sell to us (they send bills)."""
    rng = world.rng("accounting:suppliers")
    return frozenset(org.id for org in rng.sample(list(world.organisations[1:]), N_SUPPLIERS))


# -- results -------------------------------------------------------------------------------------


class LineItemIn(BaseModel):
    """One line of an invoice, bill or credit note: a product by SKU, or a free description and price."""

    sku: ProductSKU | None = Field(None, description="A product code from list_items, e.g. SKU-SUB-101.")
    description: str | None = Field(None, description="What is sold; defaults to the product's name.")
    quantity: Quantity = Field(1, description="How many units (at least 1).")
    unit_price: Money | None = Field(None, description="Price per unit; defaults to the product's price.")


class LineItemOut(BaseModel):
    sku: ProductSKU | None
    description: str
    quantity: Quantity
    unit_price: Money
    line_amount: Money


class ItemOut(BaseModel):
    code: ProductSKU
    name: ProductName
    category: str
    unit_price: Money
    currency: Currency


class ContactOut(BaseModel):
    id: ContactId
    name: CompanyName
    email: EmailAddress
    contact_person: PersonName | None
    phone: PhoneNumber | None
    address: Address | None
    is_customer: bool
    is_supplier: bool
    payment_terms_days: int
    currency: Currency
    outstanding: Money = Field(description="Amount due on this contact's open (AUTHORISED) sales invoices")
    overdue: Money = Field(description="The part of outstanding that is past its due date")


class InvoiceOut(BaseModel):
    invoice_number: InvoiceNumber
    contact_id: ContactId
    contact_name: CompanyName
    contact_email: EmailAddress
    reference: str | None
    date: Date
    due_date: Date
    currency: Currency
    status: InvoiceStatus
    line_items: list[LineItemOut]
    total: Money
    amount_paid: Money
    amount_credited: Money
    amount_due: Money
    overdue: bool
    days_overdue: int
    sent_to_contact: bool
    last_sent_at: DateTime | None
    fully_paid_on: Date | None
    updated_at: DateTime


class BillOut(BaseModel):
    bill_number: BillNumber
    contact_id: ContactId
    supplier_name: CompanyName
    supplier_reference: str | None
    date: Date
    due_date: Date
    currency: Currency
    status: InvoiceStatus
    line_items: list[LineItemOut]
    total: Money
    amount_paid: Money
    amount_due: Money
    overdue: bool
    fully_paid_on: Date | None


class PaymentOut(BaseModel):
    id: PaymentId
    invoice_number: InvoiceNumber | None
    bill_number: BillNumber | None
    contact_id: ContactId
    contact_name: CompanyName
    amount: Money
    currency: Currency
    date: Date
    method: PaymentMethod
    reference: str | None
    created_at: DateTime


class AllocationOut(BaseModel):
    invoice_number: InvoiceNumber
    amount: Money
    date: Date


class CreditNoteOut(BaseModel):
    credit_note_number: CreditNoteNumber
    contact_id: ContactId
    contact_name: CompanyName
    date: Date
    reason: Text | None
    currency: Currency
    status: CreditNoteStatus
    line_items: list[LineItemOut]
    total: Money
    remaining_credit: Money
    allocations: list[AllocationOut]


class InvoiceEmailOut(BaseModel):
    id: InvoiceEmailId
    invoice_number: InvoiceNumber
    to: list[EmailAddress]
    cc: list[EmailAddress]
    subject: Subject
    message: Text | None
    sent_at: DateTime
    amount_due: Money


def _cents(amount: float) -> int:
    return round(amount * 100)


def _today(ctx: ToolContext) -> str:
    return ctx.now_iso[:10]


def _lines_out(lines: list[LineDict]) -> list[LineItemOut]:
    return [LineItemOut.model_validate(line) for line in lines]


def _contacts_by_id(ctx: ToolContext, contact_ids: Iterable[str]) -> dict[str, Contact]:
    """The contacts with these ids, in one query; a missing one is the not-found error ``ctx.get`` gives."""
    wanted = list(dict.fromkeys(contact_ids))
    if not wanted:
        return {}
    found = {c.id: c for c in ctx.db.scalars(select(Contact).where(Contact.id.in_(wanted)))}
    for contact_id in wanted:
        if contact_id not in found:
            raise ToolError.not_found("contact", contact_id)
    return found


def _contact_out(ctx: ToolContext, c: Contact) -> ContactOut:
    return _contact_outs(ctx, [c])[0]


def _contact_outs(ctx: ToolContext, contacts: list[Contact]) -> list[ContactOut]:
    """Contacts as results, with what each owes (open and overdue) summed in one query per page."""
    if not contacts:
        return []
    balances = {
        contact_id: (outstanding, overdue)
        for contact_id, outstanding, overdue in ctx.db.execute(
            select(
                Invoice.contact_id,
                func.sum(Invoice.amount_due),
                func.sum(case((Invoice.due_date < _today(ctx), Invoice.amount_due))),
            )
            .where(Invoice.contact_id.in_([c.id for c in contacts]), Invoice.status == "AUTHORISED")
            .group_by(Invoice.contact_id)
        )
    }
    out = []
    for c in contacts:
        outstanding, overdue = balances.get(c.id, (None, None))
        out.append(
            ContactOut(
                id=c.id,
                name=c.name,
                email=c.email,
                contact_person=c.contact_person,
                phone=c.phone,
                address=c.address,
                is_customer=c.is_customer,
                is_supplier=c.is_supplier,
                payment_terms_days=c.payment_terms_days,
                currency=c.currency,
                outstanding=round(float(outstanding or 0.0), 2),
                overdue=round(float(overdue or 0.0), 2),
            )
        )
    return out


def _days_overdue(ctx: ToolContext, status: str, due_date: str, amount_due: float) -> int:
    if status != "AUTHORISED" or amount_due <= 0:
        return 0
    delta = (date_cls.fromisoformat(_today(ctx)) - date_cls.fromisoformat(due_date)).days
    return max(delta, 0)


def _invoice_out(ctx: ToolContext, inv: Invoice) -> InvoiceOut:
    return _invoice_outs(ctx, [inv])[0]


def _invoice_outs(ctx: ToolContext, invoices: list[Invoice]) -> list[InvoiceOut]:
    """Invoices as results, with their contacts fetched in one query per page."""
    contacts = _contacts_by_id(ctx, (inv.contact_id for inv in invoices))
    out = []
    for inv in invoices:
        contact = contacts[inv.contact_id]
        days = _days_overdue(ctx, inv.status, inv.due_date, inv.amount_due)
        out.append(
            InvoiceOut(
                invoice_number=inv.number,
                contact_id=inv.contact_id,
                contact_name=contact.name,
                contact_email=contact.email,
                reference=inv.reference,
                date=inv.date,
                due_date=inv.due_date,
                currency=inv.currency,
                status=inv.status,  # type: ignore[arg-type]
                line_items=_lines_out(inv.line_items),
                total=inv.total,
                amount_paid=inv.amount_paid,
                amount_credited=inv.amount_credited,
                amount_due=inv.amount_due,
                overdue=days > 0,
                days_overdue=days,
                sent_to_contact=inv.sent_to_contact,
                last_sent_at=inv.last_sent_at,
                fully_paid_on=inv.fully_paid_on,
                updated_at=inv.updated_at,
            )
        )
    return out


def _bill_out(ctx: ToolContext, bill: Bill) -> BillOut:
    return _bill_outs(ctx, [bill])[0]


def _bill_outs(ctx: ToolContext, bills: list[Bill]) -> list[BillOut]:
    """Bills as results, with their suppliers fetched in one query per page."""
    contacts = _contacts_by_id(ctx, (bill.contact_id for bill in bills))
    return [
        BillOut(
            bill_number=bill.number,
            contact_id=bill.contact_id,
            supplier_name=contacts[bill.contact_id].name,
            supplier_reference=bill.supplier_reference,
            date=bill.date,
            due_date=bill.due_date,
            currency=bill.currency,
            status=bill.status,  # type: ignore[arg-type]
            line_items=_lines_out(bill.line_items),
            total=bill.total,
            amount_paid=bill.amount_paid,
            amount_due=bill.amount_due,
            overdue=_days_overdue(ctx, bill.status, bill.due_date, bill.amount_due) > 0,
            fully_paid_on=bill.fully_paid_on,
        )
        for bill in bills
    ]


def _payment_out(ctx: ToolContext, p: Payment) -> PaymentOut:
    return _payment_outs(ctx, [p])[0]


def _payment_outs(ctx: ToolContext, payments: list[Payment]) -> list[PaymentOut]:
    """Payments as results, with their contacts fetched in one query per page."""
    contacts = _contacts_by_id(ctx, (p.contact_id for p in payments))
    return [
        PaymentOut(
            id=p.id,
            invoice_number=p.invoice_number,
            bill_number=p.bill_number,
            contact_id=p.contact_id,
            contact_name=contacts[p.contact_id].name,
            amount=p.amount,
            currency=p.currency,
            date=p.date,
            method=p.method,  # type: ignore[arg-type]
            reference=p.reference,
            created_at=p.created_at,
        )
        for p in payments
    ]


def _credit_note_out(ctx: ToolContext, cn: CreditNote) -> CreditNoteOut:
    return _credit_note_outs(ctx, [cn])[0]


def _credit_note_outs(ctx: ToolContext, credit_notes: list[CreditNote]) -> list[CreditNoteOut]:
    """Credit notes as results, with contacts and allocations fetched in two queries per page."""
    contacts = _contacts_by_id(ctx, (cn.contact_id for cn in credit_notes))
    allocations: dict[str, list[AllocationOut]] = {cn.number: [] for cn in credit_notes}
    for a in ctx.db.scalars(
        select(CreditAllocation)
        .where(CreditAllocation.credit_note_number.in_(allocations))
        .order_by(CreditAllocation.id)
    ):
        allocations[a.credit_note_number].append(
            AllocationOut(invoice_number=a.invoice_number, amount=a.amount, date=a.date)
        )
    return [
        CreditNoteOut(
            credit_note_number=cn.number,
            contact_id=cn.contact_id,
            contact_name=contacts[cn.contact_id].name,
            date=cn.date,
            reason=cn.reason,
            currency=cn.currency,
            status=cn.status,  # type: ignore[arg-type]
            line_items=_lines_out(cn.line_items),
            total=cn.total,
            remaining_credit=cn.remaining_credit,
            allocations=allocations[cn.number],
        )
        for cn in credit_notes
    ]


def _email_out(e: InvoiceEmail, amount_due: float) -> InvoiceEmailOut:
    return InvoiceEmailOut(
        id=e.id,
        invoice_number=e.invoice_number,
        to=e.to,
        cc=e.cc,
        subject=e.subject,
        message=e.message,
        sent_at=e.sent_at,
        amount_due=amount_due,
    )


# -- shared rules ----------------------------------------------------------------------------------


def _document_number(ctx: ToolContext, prefix: str) -> str:
    """INV-0001 style numbers: the kernel's counters give ``INV_0001``; accounting uses a hyphen."""
    return ctx.new_id(prefix).replace("_", "-")


def _settle_invoice(ctx: ToolContext, inv: Invoice, on: str) -> None:
    """Recompute what is due and mark the invoice PAID once payments and credits cover it."""
    inv.amount_due = round(inv.total - inv.amount_paid - inv.amount_credited, 2)
    if _cents(inv.amount_due) <= 0:
        inv.amount_due = 0.0
        inv.status = "PAID"
        inv.fully_paid_on = on
    inv.updated_at = ctx.now_iso


def _check_date(value: str, name: str) -> str:
    try:
        date_cls.fromisoformat(value)
    except ValueError:
        raise ToolError.invalid_argument(f"{name} {value!r} is not a real calendar date; use YYYY-MM-DD.") from None
    return value


def _build_lines(ctx: ToolContext, line_items: list[LineItemIn]) -> list[LineDict]:
    """Validate line items against the item catalogue and price them."""
    if not line_items:
        raise ToolError.invalid_argument('Pass at least one line item, e.g. [{"sku": "SKU-SUB-101", "quantity": 2}].')
    if len(line_items) > 50:
        raise ToolError.invalid_argument("At most 50 line items per document.")
    lines: list[LineDict] = []
    for i, line in enumerate(line_items, start=1):
        if line.quantity < 1:
            raise ToolError.invalid_argument(f"Line {i}: quantity must be at least 1.")
        sku, description, unit_price = None, line.description, line.unit_price
        if line.sku:
            item = ctx.db.get(Item, line.sku.strip().upper())
            if item is None:
                raise ToolError.not_found("item", line.sku, "Use list_items to find product codes (SKUs).")
            sku = item.code
            description = description or item.name
            unit_price = item.unit_price if unit_price is None else unit_price
        if not (description and description.strip()):
            raise ToolError.invalid_argument(f"Line {i}: give a sku or a description.")
        if unit_price is None:
            raise ToolError.invalid_argument(f"Line {i}: a line without a sku needs a unit_price.")
        lines.append(
            {
                "sku": sku,
                "description": description.strip(),
                "quantity": line.quantity,
                "unit_price": round(unit_price, 2),
                "line_amount": round(line.quantity * unit_price, 2),
            }
        )
    return lines


def _total(lines: list[LineDict]) -> float:
    return round(sum(line["line_amount"] for line in lines), 2)


def _resolve_contact(ctx: ToolContext, contact_id: str | None, contact_name: str | None) -> Contact:
    if bool(contact_id) == bool(contact_name):
        raise ToolError.invalid_argument("Pass exactly one of contact_id or contact_name.")
    if contact_id:
        return ctx.get(Contact, contact_id, "contact", "Use list_contacts to find contact ids.")
    wanted = (contact_name or "").strip().lower()
    matches = list(ctx.db.scalars(select(Contact).where(func.lower(Contact.name) == wanted)))
    if not matches:
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"No contact is named {contact_name!r}. Use list_contacts with query= to search by part of the name.",
        )
    if len(matches) > 1:
        raise ToolError.invalid_argument(
            f"{len(matches)} contacts are named {contact_name!r}; pass contact_id instead."
        )
    return matches[0]


def _invoice(ctx: ToolContext, invoice_number: str) -> Invoice:
    return ctx.get(Invoice, invoice_number.strip().upper(), "invoice", "Use list_invoices to find invoice numbers.")


# -- seed ----------------------------------------------------------------------------------------


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    today = _today(ctx)
    for product in world.products:
        ctx.db.add(
            Item(
                code=product.sku,
                name=product.name,
                category=product.category,
                unit_price=product.unit_price,
                currency=product.currency,
            )
        )

    billing = billing_contacts(world)
    terms = payment_terms(world)
    suppliers = supplier_organisation_ids(world)
    contact_of: dict[str, str] = {}
    for org in world.organisations[1:]:
        person = billing[org.id]
        contact_of[org.id] = ctx.new_id("con")
        ctx.db.add(
            Contact(
                id=contact_of[org.id],
                name=org.name,
                email=person.email,
                contact_person=person.name,
                phone=org.phone,
                address=org.address,
                domain=org.domain,
                is_customer=True,
                is_supplier=org.id in suppliers,
                payment_terms_days=terms[org.id],
                currency=world.currency,
                created_at=ctx.days_from_now(-rng.randint(250, 900)),
            )
        )
    ctx.db.flush()

    invoices: list[Invoice] = []
    for plan in planned_sales_invoices(world):
        number = _document_number(ctx, "INV")
        assert number == plan.number, "invoice numbers must follow the shared plan"
        lines = [line.stored() for line in plan.lines]
        inv = Invoice(
            number=number,
            contact_id=contact_of[plan.organisation_id],
            reference=f"PO-{rng.randint(10000, 99999)}" if rng.random() < 0.5 else None,
            date=plan.date,
            due_date=plan.due_date,
            currency=world.currency,
            status=plan.status,
            line_items=lines,
            total=plan.total,
            amount_paid=0.0,
            amount_credited=0.0,
            amount_due=plan.total,
            sent_to_contact=False,
            last_sent_at=None,
            fully_paid_on=None,
            created_at=f"{plan.date}T08:{rng.randint(10, 59)}:00Z",
            updated_at=f"{plan.date}T08:{rng.randint(10, 59)}:00Z",
        )
        ctx.db.add(inv)
        ctx.db.flush()
        for p in plan.payments:
            ctx.db.add(
                Payment(
                    id=ctx.new_id("pay"),
                    invoice_number=number,
                    bill_number=None,
                    contact_id=inv.contact_id,
                    amount=p.amount,
                    currency=world.currency,
                    date=p.date,
                    method=p.method,
                    reference=f"Card payment {number}" if p.method == "card" else f"Remittance {number}",
                    created_at=f"{p.date}T12:00:00Z",
                )
            )
        inv.amount_paid = round(sum(p.amount for p in plan.payments), 2)
        inv.amount_due = round(plan.total - inv.amount_paid, 2)
        if plan.status == "PAID":
            inv.amount_due = 0.0
            inv.fully_paid_on = plan.payments[-1].date
            inv.updated_at = f"{plan.payments[-1].date}T12:00:00Z"
        if plan.status in ("AUTHORISED", "PAID") and rng.random() < 0.85:
            _seed_email(ctx, inv, f"{plan.date}T{rng.randint(9, 16):02d}:{rng.randint(0, 59):02d}:00Z")
            reminder = (date_cls.fromisoformat(plan.due_date) + timedelta(days=3)).isoformat()
            if plan.status == "AUTHORISED" and reminder < today and rng.random() < 0.5:
                _seed_email(ctx, inv, f"{reminder}T09:30:00Z", reminder=True)
        invoices.append(inv)
    ctx.db.flush()
    _seed_credit_notes(ctx, rng, invoices)
    _seed_bills(ctx, rng, contact_of, suppliers)


def _seed_email(ctx: ToolContext, inv: Invoice, sent_at: str, *, reminder: bool = False) -> None:
    contact = ctx.get(Contact, inv.contact_id, "contact")
    home = ctx.world.home.name
    ctx.db.add(
        InvoiceEmail(
            id=ctx.new_id("ie"),
            invoice_number=inv.number,
            to=[contact.email],
            cc=[],
            subject=f"{'Reminder: ' if reminder else ''}Invoice {inv.number} from {home}",
            message=(
                f"Invoice {inv.number} for {inv.total:.2f} {inv.currency} was due on {inv.due_date}."
                if reminder
                else f"Please find attached invoice {inv.number}, due {inv.due_date}."
            ),
            sent_at=sent_at,
        )
    )
    inv.sent_to_contact = True
    inv.last_sent_at = sent_at


_CREDIT_REASONS = (
    "Service credit for the outage on our side",
    "Returned goods: items arrived damaged",
    "Goodwill discount agreed with the account manager",
    "Billing error: seats charged twice",
)


def _seed_credit_notes(ctx: ToolContext, rng: Rng, invoices: list[Invoice]) -> None:
    plans = {p.number: p for p in planned_sales_invoices(ctx.world)}
    # Only invoices with no card activity get credits, so the payments service's amounts stay true.
    open_ones = [
        i for i in invoices if i.status == "AUTHORISED" and i.amount_paid == 0 and plans[i.number].card == "none"
    ]
    paid_ones = [i for i in invoices if i.status == "PAID" and plans[i.number].card == "none"]
    for inv in rng.sample(open_ones, min(5, len(open_ones))) + rng.sample(paid_ones, min(5, len(paid_ones))):
        amount = round(inv.total * rng.choice((0.05, 0.1, 0.15, 0.2)), 2)
        on = min(
            (date_cls.fromisoformat(inv.date) + timedelta(days=rng.randint(2, 20))).isoformat(), _today(ctx)
        )
        cn = CreditNote(
            number=_document_number(ctx, "CN"),
            contact_id=inv.contact_id,
            date=on,
            reason=rng.choice(_CREDIT_REASONS) + f" ({inv.number})",
            currency=inv.currency,
            status="AUTHORISED",
            line_items=[
                {"sku": None, "description": f"Credit against {inv.number}", "quantity": 1,
                 "unit_price": amount, "line_amount": amount}
            ],
            total=amount,
            remaining_credit=amount,
            created_at=f"{on}T10:00:00Z",
        )
        ctx.db.add(cn)
        ctx.db.flush()
        if inv.status == "AUTHORISED" and rng.random() < 0.6:
            # Applied straight away to the invoice it was raised for.
            ctx.db.add(
                CreditAllocation(
                    id=ctx.new_id("alloc"),
                    credit_note_number=cn.number,
                    invoice_number=inv.number,
                    amount=amount,
                    date=on,
                )
            )
            cn.remaining_credit = 0.0
            cn.status = "PAID"
            inv.amount_credited = amount
            inv.amount_due = round(inv.total - inv.amount_paid - amount, 2)


def _seed_bills(ctx: ToolContext, rng: Rng, contact_of: dict[str, str], suppliers: frozenset[str]) -> None:
    world = ctx.world
    today = date_cls.fromisoformat(_today(ctx))
    products = tuple(p for p in world.products if p.category in _BILL_CATEGORIES)
    supplier_ids = sorted(suppliers)
    ages = sorted((rng.randint(1, 200) for _ in range(N_BILLS)), reverse=True)
    for age in ages:
        org_id = rng.choice(supplier_ids)
        issued = today - timedelta(days=age)
        due = issued + timedelta(days=rng.choice((14, 30)))
        lines = [line.stored() for line in _random_lines(rng, products)]
        total = _total(lines)
        number = _document_number(ctx, "BILL")
        paid_on = issued + timedelta(days=rng.randint(3, 40))
        status = "AUTHORISED"
        if age <= 7 and rng.random() < 0.4:
            status = "DRAFT"
        elif rng.random() < 0.05:
            status = "VOIDED"
        elif paid_on <= today and rng.random() < 0.8:
            status = "PAID"
        bill = Bill(
            number=number,
            contact_id=contact_of[org_id],
            supplier_reference=f"SI-{rng.randint(10000, 99999)}",
            date=issued.isoformat(),
            due_date=due.isoformat(),
            currency=world.currency,
            status=status,
            line_items=lines,
            total=total,
            amount_paid=total if status == "PAID" else 0.0,
            amount_due=0.0 if status == "PAID" else total,
            fully_paid_on=paid_on.isoformat() if status == "PAID" else None,
            created_at=f"{issued.isoformat()}T15:00:00Z",
            updated_at=f"{(paid_on if status == 'PAID' else issued).isoformat()}T15:00:00Z",
        )
        ctx.db.add(bill)
        ctx.db.flush()
        if status == "PAID":
            ctx.db.add(
                Payment(
                    id=ctx.new_id("pay"),
                    invoice_number=None,
                    bill_number=number,
                    contact_id=bill.contact_id,
                    amount=total,
                    currency=world.currency,
                    date=paid_on.isoformat(),
                    method="bank_transfer",
                    reference=f"Payment of {bill.supplier_reference}",
                    created_at=f"{paid_on.isoformat()}T15:30:00Z",
                )
            )


# -- contacts and items ----------------------------------------------------------------------------


@service.tool("read")
def list_contacts(
    ctx: ToolContext,
    query: str | None = None,
    email: EmailAddress | None = None,
    is_supplier: bool | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[ContactOut]:
    """List customer and supplier contacts (organisations), with what each owes us now.

    Args:
        query: Text to match in the organisation's name, billing email or contact person (case-insensitive).
        email: An email address: finds the contact whose billing email this is, or whose organisation
            uses this email's domain (so any employee's email finds their company).
        is_supplier: true for suppliers only (they send us bills), false for customers that are not suppliers.
        limit: Maximum number of contacts to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Contact).order_by(Contact.name, Contact.id)
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(Contact.name.ilike(like), Contact.email.ilike(like), Contact.contact_person.ilike(like)))
    if email:
        address = email.strip().lower()
        stmt = stmt.where(or_(func.lower(Contact.email) == address, Contact.domain == address.split("@")[1]))
    if is_supplier is not None:
        stmt = stmt.where(Contact.is_supplier.is_(is_supplier))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[ContactOut](items=_contact_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_contact(ctx: ToolContext, contact_id: ContactId) -> ContactOut:
    """Get one contact by id, with its billing email, payment terms and outstanding balance.

    Args:
        contact_id: The contact's id, e.g. con_0003.
    """
    return _contact_out(ctx, ctx.get(Contact, contact_id, "contact", "Use list_contacts to find contact ids."))


@service.tool("write")
def create_contact(
    ctx: ToolContext,
    name: CompanyName,
    email: EmailAddress,
    contact_person: PersonName | None = None,
    phone: PhoneNumber | None = None,
    address: Address | None = None,
    is_supplier: bool = False,
    payment_terms_days: int = 30,
) -> ContactOut:
    """Create a customer (or supplier) contact for an organisation. Names must be unique.

    Args:
        name: The organisation's name, as it should appear on invoices.
        email: The billing email that invoices are sent to.
        contact_person: The person at the organisation who handles billing.
        phone: Phone number in E.164 form, e.g. +14155550123.
        address: Postal address on one line.
        is_supplier: Also a supplier that sends us bills.
        payment_terms_days: Days after the invoice date that payment is due (0-120; default 30).
    """
    if not name.strip():
        raise ToolError.invalid_argument("name must not be empty.")
    if not 0 <= payment_terms_days <= 120:
        raise ToolError.invalid_argument("payment_terms_days must be between 0 and 120.")
    existing = ctx.db.scalar(select(Contact.id).where(func.lower(Contact.name) == name.strip().lower()))
    if existing:
        raise ToolError.conflict(f"A contact named {name.strip()!r} already exists ({existing}); use update_contact.")
    contact = Contact(
        id=ctx.new_id("con"),
        name=name.strip(),
        email=email.strip().lower(),
        contact_person=contact_person.strip() if contact_person else None,
        phone=phone,
        address=address,
        domain=email.strip().lower().split("@")[1],
        is_customer=True,
        is_supplier=is_supplier,
        payment_terms_days=payment_terms_days,
        currency=ctx.world.currency,
        created_at=ctx.now_iso,
    )
    ctx.db.add(contact)
    ctx.db.flush()
    return _contact_out(ctx, contact)


@service.tool("write")
def update_contact(
    ctx: ToolContext,
    contact_id: ContactId,
    email: EmailAddress | None = None,
    contact_person: PersonName | None = None,
    phone: PhoneNumber | None = None,
    address: Address | None = None,
    is_supplier: bool | None = None,
    payment_terms_days: int | None = None,
) -> ContactOut:
    """Update a contact's billing email, billing person, phone, address, supplier flag or payment terms.
    Only the fields you pass change. New terms apply to invoices created afterwards.

    Args:
        contact_id: The contact to update.
        email: New billing email for future invoices.
        contact_person: New billing contact person.
        phone: New phone number in E.164 form.
        address: New postal address on one line.
        is_supplier: Whether the contact also sends us bills.
        payment_terms_days: New payment terms in days (0-120).
    """
    contact = ctx.get(Contact, contact_id, "contact", "Use list_contacts to find contact ids.")
    changes = (email, contact_person, phone, address, is_supplier, payment_terms_days)
    if all(value is None for value in changes):
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if payment_terms_days is not None and not 0 <= payment_terms_days <= 120:
        raise ToolError.invalid_argument("payment_terms_days must be between 0 and 120.")
    if email is not None:
        contact.email = email.strip().lower()
    if contact_person is not None:
        contact.contact_person = contact_person.strip()
    if phone is not None:
        contact.phone = phone
    if address is not None:
        contact.address = address
    if is_supplier is not None:
        contact.is_supplier = is_supplier
    if payment_terms_days is not None:
        contact.payment_terms_days = payment_terms_days
    return _contact_out(ctx, contact)


@service.tool("read")
def list_items(
    ctx: ToolContext,
    query: str | None = None,
    category: str | None = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[ItemOut]:
    """List the products and services we sell, with their codes (SKUs) and unit prices, for invoice lines.

    Args:
        query: Text to match in the product name or code (case-insensitive).
        category: Only this category, e.g. subscriptions, services, hardware, furniture.
        limit: Maximum number of items to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Item).order_by(Item.code)
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(Item.name.ilike(like), Item.code.ilike(like)))
    if category:
        stmt = stmt.where(Item.category.ilike(category.strip()))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[ItemOut](
        items=[ItemOut.model_validate(i, from_attributes=True) for i in rows], total=total, next_cursor=next_cursor
    )


# -- invoices --------------------------------------------------------------------------------------


@service.tool("read")
def list_invoices(
    ctx: ToolContext,
    contact_id: ContactId | None = None,
    contact_name: CompanyName | None = None,
    email: EmailAddress | None = None,
    status: InvoiceStatus | None = None,
    overdue: bool = False,
    date_from: Date | None = None,
    date_to: Date | None = None,
    query: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[InvoiceOut]:
    """List sales invoices, newest first, filtered by customer, status, date range or overdue.

    Args:
        contact_id: Only invoices to this contact.
        contact_name: Only invoices to contacts whose name contains this text (case-insensitive).
        email: Only invoices to the organisation that uses this email (billing email or same domain).
        status: Only this status: DRAFT, AUTHORISED (approved, awaiting payment), PAID or VOIDED.
        overdue: Only approved invoices with money still due after their due date.
        date_from: Only invoices dated on or after this date (YYYY-MM-DD).
        date_to: Only invoices dated on or before this date (YYYY-MM-DD).
        query: Text to match in the invoice number, reference or line descriptions.
        limit: Maximum number of invoices to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Invoice).join(Contact, Contact.id == Invoice.contact_id).order_by(
        Invoice.date.desc(), Invoice.number.desc()
    )
    if contact_id:
        stmt = stmt.where(Invoice.contact_id == contact_id)
    if contact_name:
        stmt = stmt.where(Contact.name.ilike(f"%{contact_name.strip()}%"))
    if email:
        address = email.strip().lower()
        stmt = stmt.where(or_(func.lower(Contact.email) == address, Contact.domain == address.split("@")[1]))
    if status:
        stmt = stmt.where(Invoice.status == status)
    if overdue:
        stmt = stmt.where(Invoice.status == "AUTHORISED", Invoice.due_date < _today(ctx), Invoice.amount_due > 0)
    if date_from:
        stmt = stmt.where(Invoice.date >= _check_date(date_from, "date_from"))
    if date_to:
        stmt = stmt.where(Invoice.date <= _check_date(date_to, "date_to"))
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(
            or_(Invoice.number.ilike(like), Invoice.reference.ilike(like), cast(Invoice.line_items, String).ilike(like))
        )
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[InvoiceOut](items=_invoice_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_invoice(ctx: ToolContext, invoice_number: InvoiceNumber) -> InvoiceOut:
    """Get one sales invoice by number, with its lines, totals, amount due and whether it was sent.

    Args:
        invoice_number: The invoice number, e.g. INV-0042.
    """
    return _invoice_out(ctx, _invoice(ctx, invoice_number))


@service.tool("write")
def create_invoice(
    ctx: ToolContext,
    line_items: list[LineItemIn],
    contact_id: ContactId | None = None,
    contact_name: CompanyName | None = None,
    date: Date | None = None,
    due_date: Date | None = None,
    reference: str | None = None,
) -> InvoiceOut:
    """Create a DRAFT sales invoice for a customer. Approve it with approve_invoice before sending or
    recording payments. Lines priced by SKU use the product's catalogue price unless you pass unit_price.

    Args:
        line_items: The lines: each {"sku", "quantity"} for a product (see list_items), or
            {"description", "quantity", "unit_price"} for anything else.
        contact_id: The customer contact (see list_contacts). Pass this or contact_name.
        contact_name: The customer's exact organisation name, instead of contact_id.
        date: Invoice date (YYYY-MM-DD); defaults to today.
        due_date: Due date (YYYY-MM-DD); defaults to the date plus the contact's payment terms.
        reference: The customer's reference, e.g. a purchase order number.
    """
    contact = _resolve_contact(ctx, contact_id, contact_name)
    lines = _build_lines(ctx, line_items)
    issued = _check_date(date, "date") if date else _today(ctx)
    due = (
        _check_date(due_date, "due_date")
        if due_date
        else (date_cls.fromisoformat(issued) + timedelta(days=contact.payment_terms_days)).isoformat()
    )
    if due < issued:
        raise ToolError.invalid_argument(f"due_date {due} is before the invoice date {issued}.")
    total = _total(lines)
    if _cents(total) <= 0:
        raise ToolError.invalid_argument("The invoice total must be more than zero.")
    inv = Invoice(
        number=_document_number(ctx, "INV"),
        contact_id=contact.id,
        reference=reference.strip() if reference else None,
        date=issued,
        due_date=due,
        currency=contact.currency,
        status="DRAFT",
        line_items=lines,
        total=total,
        amount_paid=0.0,
        amount_credited=0.0,
        amount_due=total,
        sent_to_contact=False,
        last_sent_at=None,
        fully_paid_on=None,
        created_at=ctx.now_iso,
        updated_at=ctx.now_iso,
    )
    ctx.db.add(inv)
    ctx.db.flush()
    return _invoice_out(ctx, inv)


@service.tool("write")
def update_invoice(
    ctx: ToolContext,
    invoice_number: InvoiceNumber,
    line_items: list[LineItemIn] | None = None,
    due_date: Date | None = None,
    reference: str | None = None,
) -> InvoiceOut:
    """Change an invoice's lines, due date or reference. Lines can only change while the invoice is
    DRAFT; an approved (AUTHORISED) invoice can still get a new due date or reference. PAID and
    VOIDED invoices cannot be edited.

    Args:
        invoice_number: The invoice to change, e.g. INV-0042.
        line_items: Replacement lines (all existing lines are replaced); DRAFT invoices only.
        due_date: New due date (YYYY-MM-DD), not before the invoice date.
        reference: New customer reference.
    """
    inv = _invoice(ctx, invoice_number)
    if line_items is None and due_date is None and reference is None:
        raise ToolError.invalid_argument("Pass at least one of line_items, due_date or reference.")
    if inv.status in ("PAID", "VOIDED"):
        raise ToolError.invalid_state(f"Invoice {inv.number} is {inv.status} and can no longer be edited.")
    if line_items is not None:
        if inv.status != "DRAFT":
            raise ToolError.invalid_state(
                f"Invoice {inv.number} is already approved; its lines are locked. Void it and create a new one, "
                "or issue a credit note with create_credit_note."
            )
        lines = _build_lines(ctx, line_items)
        total = _total(lines)
        if _cents(total) <= 0:
            raise ToolError.invalid_argument("The invoice total must be more than zero.")
        inv.line_items = lines
        inv.total = total
        inv.amount_due = total
    if due_date is not None:
        if _check_date(due_date, "due_date") < inv.date:
            raise ToolError.invalid_argument(f"due_date {due_date} is before the invoice date {inv.date}.")
        inv.due_date = due_date
    if reference is not None:
        inv.reference = reference.strip() or None
    inv.updated_at = ctx.now_iso
    return _invoice_out(ctx, inv)


@service.tool("write")
def approve_invoice(ctx: ToolContext, invoice_number: InvoiceNumber) -> InvoiceOut:
    """Approve a DRAFT invoice: it becomes AUTHORISED (awaiting payment) and can be emailed and paid.

    Args:
        invoice_number: The draft invoice to approve, e.g. INV-0121.
    """
    inv = _invoice(ctx, invoice_number)
    if inv.status != "DRAFT":
        raise ToolError.invalid_state(f"Invoice {inv.number} is {inv.status}; only DRAFT invoices can be approved.")
    inv.status = "AUTHORISED"
    inv.updated_at = ctx.now_iso
    return _invoice_out(ctx, inv)


@service.tool("write")
def void_invoice(ctx: ToolContext, invoice_number: InvoiceNumber) -> InvoiceOut:
    """Void a DRAFT or AUTHORISED invoice that has no payments or credits applied. A voided invoice
    stays on record with nothing due and cannot be changed again.

    Args:
        invoice_number: The invoice to void, e.g. INV-0042.
    """
    inv = _invoice(ctx, invoice_number)
    if inv.status in ("PAID", "VOIDED"):
        raise ToolError.invalid_state(f"Invoice {inv.number} is {inv.status}; it cannot be voided.")
    if inv.amount_paid > 0 or inv.amount_credited > 0:
        raise ToolError.invalid_state(
            f"Invoice {inv.number} has {inv.amount_paid:.2f} paid and {inv.amount_credited:.2f} credited; an invoice "
            "with payments or credits cannot be voided. Issue a credit note for the rest instead."
        )
    inv.status = "VOIDED"
    inv.amount_due = 0.0
    inv.updated_at = ctx.now_iso
    return _invoice_out(ctx, inv)


@service.tool("write")
def email_invoice(
    ctx: ToolContext,
    invoice_number: InvoiceNumber,
    to: list[EmailAddress] | None = None,
    cc: list[EmailAddress] | None = None,
    message: Text | None = None,
) -> InvoiceEmailOut:
    """Email an approved invoice (AUTHORISED, or PAID as a receipt) to the customer and record that it
    was sent, to whom and when. Drafts must be approved first; voided invoices cannot be sent.

    Args:
        invoice_number: The invoice to send, e.g. INV-0042.
        to: Recipients; defaults to the contact's billing email.
        cc: Addresses to copy, e.g. a colleague in finance.
        message: A note to include above the invoice.
    """
    inv = _invoice(ctx, invoice_number)
    if inv.status == "DRAFT":
        raise ToolError.invalid_state(f"Invoice {inv.number} is a DRAFT; approve_invoice it before emailing it.")
    if inv.status == "VOIDED":
        raise ToolError.invalid_state(f"Invoice {inv.number} is VOIDED and cannot be sent.")
    contact = ctx.get(Contact, inv.contact_id, "contact")
    recipients = sorted({a.strip().lower() for a in to}) if to else [contact.email]
    copies = sorted({a.strip().lower() for a in cc or []} - set(recipients))
    email = InvoiceEmail(
        id=ctx.new_id("ie"),
        invoice_number=inv.number,
        to=recipients,
        cc=copies,
        subject=f"{'Receipt for i' if inv.status == 'PAID' else 'I'}nvoice {inv.number} from {ctx.world.home.name}",
        message=message.strip() if message and message.strip() else None,
        sent_at=ctx.now_iso,
    )
    ctx.db.add(email)
    inv.sent_to_contact = True
    inv.last_sent_at = ctx.now_iso
    inv.updated_at = ctx.now_iso
    ctx.db.flush()
    return _email_out(email, inv.amount_due)


# -- payments ----------------------------------------------------------------------------------------


@service.tool("write")
def create_payment(
    ctx: ToolContext,
    amount: Money,
    invoice_number: InvoiceNumber | None = None,
    bill_number: BillNumber | None = None,
    date: Date | None = None,
    method: PaymentMethod = "bank_transfer",
    reference: str | None = None,
) -> PaymentOut:
    """Record a payment received against a sales invoice, or paid against a supplier bill. The
    document must be AUTHORISED and the amount cannot exceed what is still due; when the amount due
    reaches zero the document becomes PAID.

    Args:
        amount: The amount paid, more than zero and at most the amount due.
        invoice_number: The sales invoice being paid, e.g. INV-0042. Pass this or bill_number.
        bill_number: The supplier bill we are paying, e.g. BILL-0007.
        date: Payment date (YYYY-MM-DD), not before the document's date; defaults to today.
        method: bank_transfer (default), card, cheque or cash.
        reference: A note such as the bank reference or the card charge id (e.g. ch_0042).
    """
    if bool(invoice_number) == bool(bill_number):
        raise ToolError.invalid_argument("Pass exactly one of invoice_number or bill_number.")
    if _cents(amount) <= 0:
        raise ToolError.invalid_argument("amount must be more than zero.")
    on = _check_date(date, "date") if date else _today(ctx)
    doc: Invoice | Bill
    if invoice_number:
        doc = _invoice(ctx, invoice_number)
        kind = "Invoice"
    else:
        doc = ctx.get(Bill, (bill_number or "").strip().upper(), "bill", "Use list_bills to find bill numbers.")
        kind = "Bill"
    if doc.status != "AUTHORISED":
        hint = " Approve it first." if doc.status == "DRAFT" else ""
        raise ToolError.invalid_state(f"{kind} {doc.number} is {doc.status}; payments need an AUTHORISED one.{hint}")
    if _cents(amount) > _cents(doc.amount_due):
        raise ToolError.invalid_argument(
            f"{kind} {doc.number} has only {doc.amount_due:.2f} {doc.currency} due; a payment cannot exceed that."
        )
    if on < doc.date:
        raise ToolError.invalid_argument(f"The payment date {on} is before the {kind.lower()} date {doc.date}.")
    payment = Payment(
        id=ctx.new_id("pay"),
        invoice_number=doc.number if kind == "Invoice" else None,
        bill_number=doc.number if kind == "Bill" else None,
        contact_id=doc.contact_id,
        amount=round(amount, 2),
        currency=doc.currency,
        date=on,
        method=method,
        reference=reference.strip() if reference and reference.strip() else None,
        created_at=ctx.now_iso,
    )
    ctx.db.add(payment)
    doc.amount_paid = round(doc.amount_paid + amount, 2)
    if isinstance(doc, Invoice):
        _settle_invoice(ctx, doc, on)
    else:
        doc.amount_due = round(doc.total - doc.amount_paid, 2)
        if _cents(doc.amount_due) <= 0:
            doc.amount_due, doc.status, doc.fully_paid_on = 0.0, "PAID", on
        doc.updated_at = ctx.now_iso
    ctx.db.flush()
    return _payment_out(ctx, payment)


@service.tool("read")
def list_payments(
    ctx: ToolContext,
    invoice_number: InvoiceNumber | None = None,
    bill_number: BillNumber | None = None,
    contact_id: ContactId | None = None,
    method: PaymentMethod | None = None,
    date_from: Date | None = None,
    date_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[PaymentOut]:
    """List payments received on invoices and made on bills, newest first.

    Args:
        invoice_number: Only payments on this sales invoice.
        bill_number: Only payments on this supplier bill.
        contact_id: Only payments from or to this contact.
        method: Only this method: bank_transfer, card, cheque or cash.
        date_from: Only payments dated on or after this date (YYYY-MM-DD).
        date_to: Only payments dated on or before this date (YYYY-MM-DD).
        limit: Maximum number of payments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Payment).order_by(Payment.date.desc(), Payment.id.desc())
    if invoice_number:
        stmt = stmt.where(Payment.invoice_number == invoice_number.strip().upper())
    if bill_number:
        stmt = stmt.where(Payment.bill_number == bill_number.strip().upper())
    if contact_id:
        stmt = stmt.where(Payment.contact_id == contact_id)
    if method:
        stmt = stmt.where(Payment.method == method)
    if date_from:
        stmt = stmt.where(Payment.date >= _check_date(date_from, "date_from"))
    if date_to:
        stmt = stmt.where(Payment.date <= _check_date(date_to, "date_to"))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[PaymentOut](items=_payment_outs(ctx, rows), total=total, next_cursor=next_cursor)


# -- credit notes ----------------------------------------------------------------------------------


@service.tool("write")
def create_credit_note(
    ctx: ToolContext,
    contact_id: ContactId,
    line_items: list[LineItemIn],
    reason: Text | None = None,
    date: Date | None = None,
) -> CreditNoteOut:
    """Issue a credit note to a customer (approved straight away). Its credit can then be applied to
    that customer's open invoices with allocate_credit_note.

    Args:
        contact_id: The customer being credited.
        line_items: What is credited: products by {"sku", "quantity"} or {"description", "quantity", "unit_price"}.
        reason: Why the credit is given, e.g. "Returned 2 monitors (INV-0042)".
        date: Credit note date (YYYY-MM-DD); defaults to today.
    """
    contact = ctx.get(Contact, contact_id, "contact", "Use list_contacts to find contact ids.")
    lines = _build_lines(ctx, line_items)
    total = _total(lines)
    if _cents(total) <= 0:
        raise ToolError.invalid_argument("The credit note total must be more than zero.")
    cn = CreditNote(
        number=_document_number(ctx, "CN"),
        contact_id=contact.id,
        date=_check_date(date, "date") if date else _today(ctx),
        reason=reason.strip() if reason and reason.strip() else None,
        currency=contact.currency,
        status="AUTHORISED",
        line_items=lines,
        total=total,
        remaining_credit=total,
        created_at=ctx.now_iso,
    )
    ctx.db.add(cn)
    ctx.db.flush()
    return _credit_note_out(ctx, cn)


@service.tool("write")
def allocate_credit_note(
    ctx: ToolContext,
    credit_note_number: CreditNoteNumber,
    invoice_number: InvoiceNumber,
    amount: Money | None = None,
) -> CreditNoteOut:
    """Apply credit from a credit note to an AUTHORISED invoice of the same customer, reducing what is
    due. The amount cannot exceed the credit left or the invoice's amount due. An invoice whose amount
    due reaches zero becomes PAID; a fully used credit note becomes PAID too.

    Args:
        credit_note_number: The credit note to use, e.g. CN-0003.
        invoice_number: The invoice to apply it to, e.g. INV-0042.
        amount: How much to apply; defaults to as much as possible (the smaller of credit left and amount due).
    """
    cn = ctx.get(
        CreditNote, credit_note_number.strip().upper(), "credit note", "Use list_credit_notes to find credit notes."
    )
    inv = _invoice(ctx, invoice_number)
    if cn.status != "AUTHORISED" or _cents(cn.remaining_credit) <= 0:
        raise ToolError.invalid_state(f"Credit note {cn.number} has no credit left to allocate.")
    if inv.status != "AUTHORISED":
        raise ToolError.invalid_state(
            f"Invoice {inv.number} is {inv.status}; credit can only be applied to AUTHORISED invoices with money due."
        )
    if inv.contact_id != cn.contact_id:
        raise ToolError.invalid_argument(
            f"Credit note {cn.number} belongs to contact {cn.contact_id}, but invoice {inv.number} is for "
            f"{inv.contact_id}; credit can only be applied to the same customer's invoices."
        )
    applied = min(cn.remaining_credit, inv.amount_due) if amount is None else round(amount, 2)
    if _cents(applied) <= 0:
        raise ToolError.invalid_argument("amount must be more than zero.")
    if _cents(applied) > _cents(cn.remaining_credit):
        raise ToolError.invalid_argument(f"Credit note {cn.number} has only {cn.remaining_credit:.2f} credit left.")
    if _cents(applied) > _cents(inv.amount_due):
        raise ToolError.invalid_argument(f"Invoice {inv.number} has only {inv.amount_due:.2f} due.")
    ctx.db.add(
        CreditAllocation(
            id=ctx.new_id("alloc"),
            credit_note_number=cn.number,
            invoice_number=inv.number,
            amount=applied,
            date=_today(ctx),
        )
    )
    cn.remaining_credit = round(cn.remaining_credit - applied, 2)
    if _cents(cn.remaining_credit) <= 0:
        cn.remaining_credit, cn.status = 0.0, "PAID"
    inv.amount_credited = round(inv.amount_credited + applied, 2)
    _settle_invoice(ctx, inv, _today(ctx))
    ctx.db.flush()
    return _credit_note_out(ctx, cn)


@service.tool("read")
def list_credit_notes(
    ctx: ToolContext,
    contact_id: ContactId | None = None,
    status: CreditNoteStatus | None = None,
    with_remaining_credit: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[CreditNoteOut]:
    """List credit notes, newest first, with the credit each has left and where it was applied.

    Args:
        contact_id: Only credit notes of this contact.
        status: AUTHORISED (credit left) or PAID (fully used).
        with_remaining_credit: Only credit notes that still have credit to allocate.
        limit: Maximum number of credit notes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(CreditNote).order_by(CreditNote.date.desc(), CreditNote.number.desc())
    if contact_id:
        stmt = stmt.where(CreditNote.contact_id == contact_id)
    if status:
        stmt = stmt.where(CreditNote.status == status)
    if with_remaining_credit:
        stmt = stmt.where(CreditNote.remaining_credit > 0)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[CreditNoteOut](items=_credit_note_outs(ctx, rows), total=total, next_cursor=next_cursor)


# -- bills -----------------------------------------------------------------------------------------


@service.tool("read")
def list_bills(
    ctx: ToolContext,
    contact_id: ContactId | None = None,
    supplier_name: CompanyName | None = None,
    status: InvoiceStatus | None = None,
    overdue: bool = False,
    date_from: Date | None = None,
    date_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[BillOut]:
    """List supplier bills (what we owe), newest first, by supplier, status, date range or overdue.

    Args:
        contact_id: Only bills from this supplier contact.
        supplier_name: Only bills from suppliers whose name contains this text (case-insensitive).
        status: Only this status: DRAFT, AUTHORISED (awaiting payment), PAID or VOIDED.
        overdue: Only AUTHORISED bills still unpaid after their due date.
        date_from: Only bills dated on or after this date (YYYY-MM-DD).
        date_to: Only bills dated on or before this date (YYYY-MM-DD).
        limit: Maximum number of bills to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Bill).join(Contact, Contact.id == Bill.contact_id).order_by(Bill.date.desc(), Bill.number.desc())
    if contact_id:
        stmt = stmt.where(Bill.contact_id == contact_id)
    if supplier_name:
        stmt = stmt.where(Contact.name.ilike(f"%{supplier_name.strip()}%"))
    if status:
        stmt = stmt.where(Bill.status == status)
    if overdue:
        stmt = stmt.where(Bill.status == "AUTHORISED", Bill.due_date < _today(ctx), Bill.amount_due > 0)
    if date_from:
        stmt = stmt.where(Bill.date >= _check_date(date_from, "date_from"))
    if date_to:
        stmt = stmt.where(Bill.date <= _check_date(date_to, "date_to"))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[BillOut](items=_bill_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("write")
def create_bill(
    ctx: ToolContext,
    line_items: list[LineItemIn],
    contact_id: ContactId | None = None,
    contact_name: CompanyName | None = None,
    supplier_reference: str | None = None,
    date: Date | None = None,
    due_date: Date | None = None,
) -> BillOut:
    """Enter a bill received from a supplier; it is AUTHORISED (awaiting payment) at once. The contact
    must be a supplier, and the same supplier reference cannot be entered twice.

    Args:
        line_items: The bill's lines: {"sku", "quantity"} for catalogue products, or
            {"description", "quantity", "unit_price"}.
        contact_id: The supplier contact. Pass this or contact_name.
        contact_name: The supplier's exact organisation name, instead of contact_id.
        supplier_reference: The supplier's own invoice number, e.g. SI-48213.
        date: Bill date (YYYY-MM-DD); defaults to today.
        due_date: Due date (YYYY-MM-DD); defaults to 30 days after the bill date.
    """
    contact = _resolve_contact(ctx, contact_id, contact_name)
    if not contact.is_supplier:
        raise ToolError.invalid_state(
            f"{contact.name} ({contact.id}) is not a supplier; set is_supplier=true with update_contact first."
        )
    ref = supplier_reference.strip() if supplier_reference and supplier_reference.strip() else None
    if ref:
        dup = ctx.db.scalar(
            select(Bill.number).where(
                Bill.contact_id == contact.id,
                func.lower(Bill.supplier_reference) == ref.lower(),
                Bill.status != "VOIDED",
            )
        )
        if dup:
            raise ToolError.conflict(f"Bill {dup} from {contact.name} already has supplier reference {ref}.")
    lines = _build_lines(ctx, line_items)
    issued = _check_date(date, "date") if date else _today(ctx)
    due = (
        _check_date(due_date, "due_date")
        if due_date
        else (date_cls.fromisoformat(issued) + timedelta(days=30)).isoformat()
    )
    if due < issued:
        raise ToolError.invalid_argument(f"due_date {due} is before the bill date {issued}.")
    total = _total(lines)
    if _cents(total) <= 0:
        raise ToolError.invalid_argument("The bill total must be more than zero.")
    bill = Bill(
        number=_document_number(ctx, "BILL"),
        contact_id=contact.id,
        supplier_reference=ref,
        date=issued,
        due_date=due,
        currency=contact.currency,
        status="AUTHORISED",
        line_items=lines,
        total=total,
        amount_paid=0.0,
        amount_due=total,
        fully_paid_on=None,
        created_at=ctx.now_iso,
        updated_at=ctx.now_iso,
    )
    ctx.db.add(bill)
    ctx.db.flush()
    return _bill_out(ctx, bill)
