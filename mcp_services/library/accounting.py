"""Accounting: contacts, sales invoices, payments, credit notes and supplier bills (modelled on Xero Accounting).

Invoices move DRAFT -> AUTHORISED (approve_invoice) -> PAID (once payments and credit notes cover the
total), or to VOIDED while nothing has been paid or credited. Bills are the same document the other
way round: what suppliers charge us. Line items reference the world's products (SKU, unit price),
and contacts are the world's organisations with a billing person from the CRM, so every company
name, email and amount here lines up with the other services.

The seeded books are the world's business plan (``world.plan``): its invoices, the payments and
credit notes on them. The payments service holds the card charges of the same plan (same invoice
number, amount and billing email), and the files service keeps the invoices' PDFs; a few card
payments are missing from these books on purpose: reconciling them is a task.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date as date_cls
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, WithJsonSchema
from typing_extensions import TypedDict

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.context import stored_world
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.schema import StateDef
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
from mcp_services.kernel.world import N_PLANNED_INVOICES, N_SUPPLIERS, PlannedLine, World, planned_lines, planned_status

ContactId = EntityId("accounting.contact")
ItemCode = EntityId("accounting.item")
InvoiceNumber = EntityId("accounting.invoice")
BillNumber = EntityId("accounting.bill")
CreditNoteNumber = EntityId("accounting.credit_note")
PaymentId = EntityId("accounting.payment")
InvoiceEmailId = EntityId("accounting.invoice_email")

InvoiceStatus = Literal["DRAFT", "AUTHORISED", "PAID", "VOIDED"]
CreditNoteStatus = Literal["AUTHORISED", "PAID"]
PaymentMethod = Literal["bank_transfer", "card", "cheque", "cash"]

N_SALES_INVOICES = N_PLANNED_INVOICES
#: How far back supplier bills go, in days.
_BILL_DAYS = 200
N_BILLS = 40
__all__ = ["N_BILLS", "N_SALES_INVOICES", "N_SUPPLIERS", "seed", "service"]

# What we buy from suppliers (bills); subscriptions and usage are what we sell.
_BILL_CATEGORIES = ("furniture", "hardware", "pantry", "supplies", "merchandise")
_DOCUMENT_STATES = StateDef(
    field="status",
    values=["DRAFT", "AUTHORISED", "PAID", "VOIDED"],
    initial="DRAFT",
    terminal=["PAID", "VOIDED"],
    transitions={"DRAFT": ["AUTHORISED", "VOIDED"], "AUTHORISED": ["PAID", "VOIDED"]},
)


class LineDict(TypedDict):
    """One line of an invoice, bill or credit note as stored and returned."""

    sku: ProductSKU | None
    description: str
    quantity: Quantity
    unit_price: Money
    line_amount: Money


class AllocationDict(TypedDict):
    """Credit applied from a credit note to an invoice."""

    invoice_number: InvoiceNumber
    amount: Money
    date: Date


def _json_list(item: type[Any]) -> Any:
    """A list-of-objects column whose schema is written inline (entity field schemas cannot hold $defs)."""
    schema = {"type": "array", "items": TypeAdapter(item).json_schema()}
    return Annotated[list[item], WithJsonSchema(schema)]  # type: ignore[valid-type]  # a type built at import time


Lines = _json_list(LineDict)
Allocations = _json_list(AllocationDict)

service = Service(
    "accounting",
    "Accounting and invoicing: customer and supplier contacts, sales invoices, payments received, credit notes "
    "and supplier bills.",
    title="Accounting",
)


# -- values read at call time ---------------------------------------------------------------------


def _day_of(db: RecordAccess) -> str:
    """The world's day for the store being read (a batch sees the store only; each store knows its world)."""
    return stored_world(db).now[:10]


def _days_late(db: RecordAccess, docs: Sequence[Any]) -> list[int]:
    """Days each approved invoice or bill with money due is past its due date (0 when not overdue)."""
    today = _day_of(db)
    return [
        (date_cls.fromisoformat(today) - date_cls.fromisoformat(d.due_date)).days
        if d.status == "AUTHORISED" and d.amount_due > 0 and d.due_date < today else 0
        for d in docs
    ]


def _balances(db: RecordAccess, contacts: Sequence[Any], part: int) -> list[float]:
    """What each contact owes on its open invoices (part 0) and the overdue share of it (part 1), in one query."""
    marks = ", ".join("?" for _ in contacts)
    rows = db.sql(
        "SELECT contact_id, SUM(amount_due), SUM(CASE WHEN due_date < ? THEN amount_due ELSE 0 END) FROM invoices "
        f"WHERE status = 'AUTHORISED' AND contact_id IN ({marks}) GROUP BY contact_id",
        _day_of(db), *(c.id for c in contacts),
    )
    sums = {row[0]: round(float(row[1 + part] or 0), 2) for row in rows}
    return [sums.get(c.id, 0.0) for c in contacts]


# -- entities --------------------------------------------------------------------------------------


@service.entity(table="items", prefix="", label="name", search=("name",), noun="product")
class Item:
    """A product or service we sell, by its code (the world's SKU)."""

    id: ItemCode
    name: ProductName
    category: str
    unit_price: Money = field(mention="the unit price")
    currency: Currency

    code = derived(ProductSKU, lambda i: i.id)


@service.entity(table="contacts", prefix="con", label="name", search=("name", "email", "contact_person"))
class Contact:
    """A customer or supplier organisation, with the billing email its invoices go to."""

    id: ContactId
    name: CompanyName = field(index=True, role="self", link="crm.company.name")
    email: EmailAddress = field(role="billing contact", link="crm.contact.email")
    contact_person: PersonName | None = field(None, role="billing contact")
    phone: PhoneNumber | None = None
    address: Address | None = None
    domain: str | None = None  # lets any email at the organisation find its contact
    is_customer: bool = True
    is_supplier: bool = False
    payment_terms_days: int = 30
    currency: Currency
    created_at: DateTime

    outstanding = derived(Money, batch=lambda db, cs: _balances(db, cs, 0),
                          description="Amount due on its open (AUTHORISED) sales invoices")
    overdue = derived(Money, batch=lambda db, cs: _balances(db, cs, 1),
                      description="The part of outstanding that is past its due date")


@service.entity(table="invoices", prefix="inv", search=("reference",), state=_DOCUMENT_STATES)
class Invoice:
    """A sales invoice to a customer contact."""

    id: InvoiceNumber = field(mention="the invoice number")
    contact_id: ContactId = field(role="customer")
    reference: str | None = field(None, mention="the purchase order number")
    date: Date = field(mention="the invoice date")
    due_date: Date = field(mention="the due date")
    currency: Currency
    status: InvoiceStatus = "DRAFT"
    line_items: Lines
    total: Money = field(mention="the invoice total")
    amount_paid: Money = 0.0
    amount_credited: Money = 0.0
    amount_due: Money = field(mention="the amount due")
    sent_to_contact: bool = False
    last_sent_at: DateTime | None = None
    fully_paid_on: Date | None = None
    created_at: DateTime
    updated_at: DateTime

    invoice_number = derived(InvoiceNumber, lambda i: i.id)
    contact_name = joined(CompanyName, via="contact_id", field="name")
    contact_email = joined(EmailAddress, via="contact_id", field="email")
    days_overdue = derived(int, batch=_days_late)
    overdue = derived(bool, batch=lambda db, invoices: [days > 0 for days in _days_late(db, invoices)])


@service.entity(table="bills", prefix="bill", search=("supplier_reference",), state=_DOCUMENT_STATES)
class Bill:
    """A bill a supplier sent us."""

    id: BillNumber = field(mention="the bill number")
    contact_id: ContactId = field(role="supplier")
    supplier_reference: str | None = field(None, mention="the supplier's invoice number")
    date: Date
    due_date: Date = field(mention="the due date")
    currency: Currency
    status: InvoiceStatus = "AUTHORISED"
    line_items: Lines
    total: Money = field(mention="the bill total")
    amount_paid: Money = 0.0
    amount_due: Money = field(mention="the amount due")
    fully_paid_on: Date | None = None
    created_at: DateTime
    updated_at: DateTime

    bill_number = derived(BillNumber, lambda b: b.id)
    supplier_name = joined(CompanyName, via="contact_id", field="name")
    overdue = derived(bool, batch=lambda db, bills: [days > 0 for days in _days_late(db, bills)])


@service.entity(table="payments", prefix="pay")
class Payment:
    """Money received on a sales invoice, or paid on a supplier bill."""

    id: PaymentId = field(mention="the payment id")
    invoice_number: InvoiceNumber | None = None
    bill_number: BillNumber | None = None
    contact_id: ContactId = field(role="payer")
    amount: Money = field(mention="the amount paid")
    currency: Currency
    date: Date = field(mention="the payment date")
    method: PaymentMethod
    reference: str | None = field(None, mention="the payment reference")
    created_at: DateTime

    contact_name = joined(CompanyName, via="contact_id", field="name")


@service.entity(
    table="credit_notes",
    prefix="cn",
    search=("reason",),
    state=StateDef(field="status", values=["AUTHORISED", "PAID"], initial="AUTHORISED", terminal=["PAID"]),
)
class CreditNote:
    """Credit given to a customer, applied to their invoices as allocations."""

    id: CreditNoteNumber = field(mention="the credit note number")
    contact_id: ContactId = field(role="customer")
    date: Date
    reason: Text | None = None
    currency: Currency
    status: CreditNoteStatus = "AUTHORISED"
    line_items: Lines
    total: Money = field(mention="the credit amount")
    remaining_credit: Money = field(mention="the credit left")
    allocations: Allocations
    created_at: DateTime

    credit_note_number = derived(CreditNoteNumber, lambda c: c.id)
    contact_name = joined(CompanyName, via="contact_id", field="name")


@service.entity(table="invoice_emails", prefix="ie", label="subject", noun="invoice email")
class InvoiceEmail:
    """An invoice sent to its customer by email."""

    id: InvoiceEmailId
    invoice_number: InvoiceNumber
    to: list[EmailAddress] = field(role="recipient")
    cc: list[EmailAddress] = field(role="copied")
    subject: Subject
    message: Text | None = None
    sent_at: DateTime = field(mention="when the invoice was sent")

    amount_due = joined(Money, via="invoice_number", field="amount_due")


class LineItemIn(BaseModel):
    """One line of an invoice, bill or credit note: a product by SKU, or a free description and price."""

    sku: ProductSKU | None = Field(None, description="A product code from list_items, e.g. SKU-SUB-101.")
    description: str | None = Field(None, description="What is sold; defaults to the product's name.")
    quantity: Quantity = Field(1, description="How many units (at least 1).")
    unit_price: Money | None = Field(None, description="Price per unit; defaults to the product's price.")


def _today(ctx: ToolContext) -> str:
    return ctx.now_iso[:10]


# -- shared rules ----------------------------------------------------------------------------------


def _cents(amount: float) -> int:
    return round(amount * 100)


def _document_number(ctx: ToolContext, prefix: str) -> str:
    """INV-0001 style numbers: the kernel's counters give ``INV_0001``; accounting uses a hyphen."""
    return ctx.new_id(prefix).replace("_", "-")


def _check_date(value: str, name: str) -> str:
    try:
        date_cls.fromisoformat(value)
    except ValueError:
        raise ToolError.invalid_argument(f"{name} {value!r} is not a real calendar date; use YYYY-MM-DD.") from None
    return value


def _in_dates(q: Any, column: str, date_from: str | None, date_to: str | None) -> Any:
    if date_from:
        q.compare(column, ">=", _check_date(date_from, "date_from"))
    if date_to:
        q.compare(column, "<=", _check_date(date_to, "date_to"))
    return q


def _settled(ctx: ToolContext, inv: Invoice, on: str, **changes: Any) -> Invoice:
    """Write ``changes`` and what is now due; an invoice covered by payments and credits becomes PAID."""
    inv = ctx.update(inv, **changes)
    due = round(inv.total - inv.amount_paid - inv.amount_credited, 2)
    settle: dict[str, Any] = {"amount_due": due, "updated_at": ctx.now_iso}
    if _cents(due) <= 0:
        settle.update(amount_due=0.0, status="PAID", fully_paid_on=on)
    return ctx.update(inv, **settle)


def _build_lines(ctx: ToolContext, line_items: list[LineItemIn]) -> list[LineDict]:
    """Validate line items against the item catalogue and price them."""
    if not line_items:
        raise ToolError.invalid_argument('Pass at least one line item, e.g. [{"sku": "SKU-SUB-101", "quantity": 2}].')
    if len(line_items) > 50:
        raise ToolError.invalid_argument("At most 50 line items per document.")
    items = ctx.fetch_many(Item, (line.sku.strip().upper() for line in line_items if line.sku))
    lines: list[LineDict] = []
    for i, line in enumerate(line_items, start=1):
        if line.quantity < 1:
            raise ToolError.invalid_argument(f"Line {i}: quantity must be at least 1.")
        sku, description, unit_price = None, line.description, line.unit_price
        if line.sku:
            item = items.get(line.sku.strip().upper())
            if item is None:
                raise ToolError.not_found("item", line.sku, "Use list_items to find product codes (SKUs).")
            sku = item.id
            description = description or item.name
            unit_price = item.unit_price if unit_price is None else unit_price
        if not (description and description.strip()):
            raise ToolError.invalid_argument(f"Line {i}: give a sku or a description.")
        if unit_price is None:
            raise ToolError.invalid_argument(f"Line {i}: a line without a sku needs a unit_price.")
        lines.append(_line(sku, description.strip(), line.quantity, round(unit_price, 2)))
    return lines


def _line(sku: str | None, description: str, quantity: int, unit_price: float) -> LineDict:
    return LineDict(sku=sku, description=description, quantity=quantity, unit_price=unit_price,
                    line_amount=round(quantity * unit_price, 2))


def _stored(lines: Sequence[PlannedLine]) -> list[LineDict]:
    return [_line(line.sku, line.description, line.quantity, line.unit_price) for line in lines]


def _total(lines: list[LineDict]) -> float:
    return round(sum(line["line_amount"] for line in lines), 2)


def _contact(ctx: ToolContext, contact_id: str) -> Contact:
    return ctx.get(Contact, contact_id, "contact", "Use list_contacts to find contact ids.")


def _resolve_contact(ctx: ToolContext, contact_id: str | None, contact_name: str | None) -> Contact:
    if bool(contact_id) == bool(contact_name):
        raise ToolError.invalid_argument("Pass exactly one of contact_id or contact_name.")
    if contact_id:
        return _contact(ctx, contact_id)
    matches = ctx.query(Contact).where_sql("lower(name) = lower(?)", (contact_name or "").strip()).all()
    if not matches:
        raise ToolError.not_found(
            "contact", contact_name, "No contact has that name; use list_contacts with query= to search by part of it."
        )
    if len(matches) > 1:
        raise ToolError.invalid_argument(
            f"{len(matches)} contacts are named {contact_name!r}; pass contact_id instead."
        )
    return matches[0]


def _contacts_matching(ctx: ToolContext, name: str | None = None, email: str | None = None) -> list[str] | None:
    """Ids of the contacts whose name contains ``name`` / who use ``email``'s address or domain; None: no filter."""
    if not (name and name.strip()) and not email:
        return None
    q = ctx.query(Contact).contains("name", name)
    if email:
        address = email.strip().lower()
        q.where_sql("lower(email) = ? OR domain = ?", address, address.split("@")[1])
    return [c.id for c in q.all()]


def _on(ctx: ToolContext, day: str, clock: str) -> str:
    """A time on ``day`` (HH:MM), or a minute before now when that is later than now (a payment made today)."""
    return min(f"{day}T{clock}:00Z", ctx.days_from_now(-1 / 1440))


def _invoice(ctx: ToolContext, invoice_number: str) -> Invoice:
    return ctx.get(Invoice, invoice_number.strip().upper(), "invoice", "Use list_invoices to find invoice numbers.")


# -- seed ----------------------------------------------------------------------------------------


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    plan = world.plan
    rng = ctx.rng("seed")
    ctx.insert_many(
        [Item(id=p.sku, name=p.name, category=p.category, unit_price=p.unit_price, currency=p.currency)
         for p in world.products]
    )
    contacts = {}
    oldest = max(world.shape.history_days, _BILL_DAYS)
    for org in world.organisations[1:]:
        person = plan.billing_contacts[org.id]
        contacts[org.id] = Contact(
            id=ctx.new_id("con"), name=org.name, email=person.email, contact_person=person.name, phone=org.phone,
            address=org.address, domain=org.domain, is_supplier=org.id in plan.suppliers,
            payment_terms_days=plan.payment_terms[org.id], currency=world.currency,
            created_at=ctx.days_from_now(-rng.randint(oldest + 10, oldest + 660)),  # before their first invoice or bill
        )
    ctx.insert_many(list(contacts.values()))
    _seed_invoices(ctx, rng, contacts)
    _seed_credit_notes(ctx, contacts)
    _seed_bills(ctx, rng, contacts)


def _seed_invoices(ctx: ToolContext, rng: Any, contacts: dict[str, Contact]) -> None:
    today = _today(ctx)
    home = ctx.world.home.name
    invoices, payments, emails = [], [], []
    for plan in ctx.world.plan.invoices:
        if _document_number(ctx, "INV") != plan.number:
            raise RuntimeError(f"invoice numbers must follow the world's plan ({plan.number})")
        contact = contacts[plan.organisation_id]
        for p in plan.payments:
            payments.append(
                Payment(id=ctx.new_id("pay"), invoice_number=plan.number, contact_id=contact.id, amount=p.amount,
                        currency=contact.currency, date=p.date, method=p.method,
                        reference=f"{'Card payment' if p.method == 'card' else 'Remittance'} {plan.number}",
                        created_at=_on(ctx, p.date, "12:00"))
            )
        created = f"{plan.date}T08:{rng.randint(10, 59)}:00Z"
        sent: list[str] = []
        if plan.status in ("AUTHORISED", "PAID") and rng.random() < 0.85:
            sent.append(f"{plan.date}T{rng.randint(9, 16):02d}:{rng.randint(0, 59):02d}:00Z")
            reminder = (date_cls.fromisoformat(plan.due_date) + timedelta(days=3)).isoformat()
            if plan.status == "AUTHORISED" and reminder < today and rng.random() < 0.5:
                sent.append(f"{reminder}T09:30:00Z")
        for n, sent_at in enumerate(sent):
            reminder = n > 0
            emails.append(
                InvoiceEmail(
                    id=ctx.new_id("ie"), invoice_number=plan.number, to=[contact.email], cc=[], sent_at=sent_at,
                    subject=f"{'Reminder: ' if reminder else ''}Invoice {plan.number} from {home}",
                    message=(
                        f"Invoice {plan.number} for {plan.total:.2f} {contact.currency} was due on {plan.due_date}."
                        if reminder
                        else f"Please find attached invoice {plan.number}, due {plan.due_date}."
                    ),
                )
            )
        invoices.append(
            Invoice(
                id=plan.number, contact_id=contact.id, reference=plan.reference, date=plan.date,
                due_date=plan.due_date, currency=contact.currency, status=plan.status, line_items=_stored(plan.lines),
                total=plan.total, amount_paid=plan.amount_paid, amount_credited=plan.amount_credited,
                amount_due=plan.amount_due,
                sent_to_contact=bool(sent), last_sent_at=sent[-1] if sent else None, fully_paid_on=plan.fully_paid_on,
                created_at=created, updated_at=_on(ctx, plan.fully_paid_on, "12:00") if plan.fully_paid_on else created,
            )
        )
    ctx.insert_many(invoices)
    ctx.insert_many(payments)
    ctx.insert_many(emails)


def _seed_credit_notes(ctx: ToolContext, contacts: dict[str, Contact]) -> None:
    notes = []
    for credit in ctx.world.plan.credits:
        if _document_number(ctx, "CN") != credit.number:
            raise RuntimeError(f"credit note numbers must follow the world's plan ({credit.number})")
        invoice = ctx.world.plan.invoice(credit.invoice_number)
        contact = contacts[invoice.organisation_id] if invoice else None
        if contact is None:
            raise RuntimeError(f"credit note {credit.number} names an invoice outside the plan")
        allocations = [AllocationDict(invoice_number=credit.invoice_number, amount=credit.amount, date=credit.date)]
        notes.append(
            CreditNote(
                id=credit.number, contact_id=contact.id, date=credit.date, reason=credit.reason,
                currency=contact.currency, status="PAID" if credit.applied else "AUTHORISED",
                line_items=[_line(None, f"Credit against {credit.invoice_number}", 1, credit.amount)],
                total=credit.amount, remaining_credit=0.0 if credit.applied else credit.amount,
                allocations=allocations if credit.applied else [], created_at=_on(ctx, credit.date, "10:00"),
            )
        )
    ctx.insert_many(notes)


def _seed_bills(ctx: ToolContext, rng: Any, contacts: dict[str, Contact]) -> None:
    world = ctx.world
    today = date_cls.fromisoformat(_today(ctx))
    products = tuple(p for p in world.products if p.category in _BILL_CATEGORIES)
    suppliers = sorted(world.plan.suppliers)
    bills, payments = [], []
    for age in sorted((rng.randint(1, _BILL_DAYS) for _ in range(N_BILLS)), reverse=True):
        contact = contacts[rng.choice(suppliers)]
        issued = today - timedelta(days=age)
        due = issued + timedelta(days=rng.choice((14, 30)))
        lines = _stored(planned_lines(rng, products, rng.choices((1, 2, 3, 4), weights=(4, 3, 2, 1))[0]))
        total = _total(lines)
        paid_on = issued + timedelta(days=rng.randint(3, 40))
        status = planned_status(rng, age, paid_on <= today, draft=(7, 0.4), voided=0.05, paid=0.8)
        paid = status == "PAID"
        bill = Bill(
            id=_document_number(ctx, "BILL"), contact_id=contact.id,
            supplier_reference=f"SI-{rng.randint(10000, 99999)}",
            date=issued.isoformat(), due_date=due.isoformat(), currency=world.currency, status=status, line_items=lines,
            total=total, amount_paid=total if paid else 0.0, amount_due=0.0 if paid else total,
            fully_paid_on=paid_on.isoformat() if paid else None, created_at=f"{issued.isoformat()}T15:00:00Z",
            updated_at=_on(ctx, (paid_on if paid else issued).isoformat(), "15:00"),
        )
        bills.append(bill)
        if paid:
            payments.append(
                Payment(id=ctx.new_id("pay"), bill_number=bill.id, contact_id=contact.id, amount=total,
                        currency=world.currency, date=paid_on.isoformat(), method="bank_transfer",
                        reference=f"Payment of {bill.supplier_reference}",
                        created_at=_on(ctx, paid_on.isoformat(), "15:30"))
            )
    ctx.insert_many(bills)
    ctx.insert_many(payments)


# -- contacts and items ----------------------------------------------------------------------------


@service.tool(
    "read", intent="find", phrases=("look {query} up in the accounts", "find the accounting contact that uses {email}")
)
def list_contacts(
    ctx: ToolContext,
    query: str | None = None,
    email: EmailAddress | None = None,
    is_supplier: bool | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Contact]:
    """List customer and supplier contacts (organisations), with what each owes us now.

    Args:
        query: Words to match in the organisation's name, billing email or contact person (case-insensitive).
        email: An email address: finds the contact whose billing email this is, or whose organisation
            uses this email's domain (so any employee's email finds their company).
        is_supplier: true for suppliers only (they send us bills), false for customers that are not suppliers.
        limit: Maximum number of contacts to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Contact).search(query).filter(is_supplier=is_supplier)
    ids = _contacts_matching(ctx, email=email)
    if ids is not None:
        q.where_in("id", ids)
    return q.order_by("name").page(limit, cursor)


@service.tool("read", intent="get", phrases=("check what {contact_id} owes us", "open {contact_id} in accounting"))
def get_contact(ctx: ToolContext, contact_id: ContactId) -> Contact:
    """Get one contact by id, with its billing email, payment terms and outstanding balance.

    Args:
        contact_id: The contact's id, e.g. con_0003.
    """
    return _contact(ctx, contact_id)


@service.tool(
    "write",
    intent="create",
    phrases=("set {name} up as a customer in accounting", "add {name} to the books, billed at {email}"),
)
def create_contact(
    ctx: ToolContext,
    name: CompanyName,
    email: EmailAddress,
    contact_person: PersonName | None = None,
    phone: PhoneNumber | None = None,
    address: Address | None = None,
    is_supplier: bool = False,
    payment_terms_days: int = 30,
) -> Contact:
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
    existing = ctx.query(Contact).where_sql("lower(name) = lower(?)", name.strip()).first()
    if existing:
        raise ToolError.conflict(
            f"A contact named {name.strip()!r} already exists ({existing.id}); use update_contact."
        )
    address_email = email.strip().lower()
    contact = Contact(
        id=ctx.new_id("con"), name=name.strip(), email=address_email,
        contact_person=contact_person.strip() if contact_person else None, phone=phone, address=address,
        domain=address_email.split("@")[1], is_supplier=is_supplier, payment_terms_days=payment_terms_days,
        currency=ctx.world.currency, created_at=ctx.now_iso,
    )
    return ctx.insert(contact)


@service.tool(
    "write",
    intent="update",
    phrases=(
        "update the billing details of {contact_id}",
        "change the payment terms of {contact_id} to {payment_terms_days} days",
    ),
)
def update_contact(
    ctx: ToolContext,
    contact_id: ContactId,
    email: EmailAddress | None = None,
    contact_person: PersonName | None = None,
    phone: PhoneNumber | None = None,
    address: Address | None = None,
    is_supplier: bool | None = None,
    payment_terms_days: int | None = None,
) -> Contact:
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
    contact = _contact(ctx, contact_id)
    changes = {
        "email": email.strip().lower() if email is not None else None,
        "contact_person": contact_person.strip() if contact_person is not None else None,
        "phone": phone,
        "address": address,
        "is_supplier": is_supplier,
        "payment_terms_days": payment_terms_days,
    }
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if payment_terms_days is not None and not 0 <= payment_terms_days <= 120:
        raise ToolError.invalid_argument("payment_terms_days must be between 0 and 120.")
    return ctx.update(contact, **changes)


@service.tool("read", intent="find", phrases=("look up the price of {query}", "find the product code for {query}"))
def list_items(
    ctx: ToolContext,
    query: str | None = None,
    category: str | None = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[Item]:
    """List the products and services we sell, with their codes (SKUs) and unit prices, for invoice lines.

    Args:
        query: Words to match in the product name or code (case-insensitive).
        category: Only this category, e.g. subscriptions, services, hardware, furniture.
        limit: Maximum number of items to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Item).search(query, "name", "id")
    if category and category.strip():
        q.where_sql("lower(category) = lower(?)", category.strip())
    return q.order_by("id").page(limit, cursor)


# -- invoices --------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("find the invoices of {contact_name}", "check the invoices sent to {email}"),
)
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
) -> Page[Invoice]:
    """List sales invoices, newest first, filtered by customer, status, date range or overdue.

    Args:
        contact_id: Only invoices to this contact.
        contact_name: Only invoices to contacts whose name contains this text (case-insensitive).
        email: Only invoices to the organisation that uses this email (billing email or same domain).
        status: Only this status: DRAFT, AUTHORISED (approved, awaiting payment), PAID or VOIDED.
        overdue: Only approved invoices with money still due after their due date.
        date_from: Only invoices dated on or after this date (YYYY-MM-DD).
        date_to: Only invoices dated on or before this date (YYYY-MM-DD).
        query: Words to match in the invoice number, reference or line descriptions.
        limit: Maximum number of invoices to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Invoice).filter(contact_id=contact_id, status=status)
    ids = _contacts_matching(ctx, contact_name, email)
    if ids is not None:
        q.where_in("contact_id", ids)
    if overdue:
        q.where(status="AUTHORISED").compare("due_date", "<", _today(ctx)).compare("amount_due", ">", 0)
    _in_dates(q, "date", date_from, date_to).search(query, "id", "reference", "line_items")
    return q.order_by("-date", "-id").page(limit, cursor)


@service.tool(
    "read",
    intent="get",
    phrases=("open invoice {invoice_number}", "check what is still due on {invoice_number}"),
)
def get_invoice(ctx: ToolContext, invoice_number: InvoiceNumber) -> Invoice:
    """Get one sales invoice by number, with its lines, totals, amount due and whether it was sent.

    Args:
        invoice_number: The invoice number, e.g. INV-0042.
    """
    return _invoice(ctx, invoice_number)


@service.tool(
    "write",
    intent="invoice",
    phrases=("invoice {contact_name} for {line_items}", "raise an invoice to {contact_id}"),
)
def create_invoice(
    ctx: ToolContext,
    line_items: list[LineItemIn],
    contact_id: ContactId | None = None,
    contact_name: CompanyName | None = None,
    date: Date | None = None,
    due_date: Date | None = None,
    reference: str | None = None,
) -> Invoice:
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
        id=_document_number(ctx, "INV"), contact_id=contact.id, reference=reference.strip() if reference else None,
        date=issued, due_date=due, currency=contact.currency, status="DRAFT", line_items=lines, total=total,
        amount_due=total, created_at=ctx.now_iso, updated_at=ctx.now_iso,
    )
    return ctx.insert(inv)


@service.tool(
    "write",
    intent="update",
    phrases=("move the due date of {invoice_number} to {due_date}", "put reference {reference} on {invoice_number}"),
)
def update_invoice(
    ctx: ToolContext,
    invoice_number: InvoiceNumber,
    line_items: list[LineItemIn] | None = None,
    due_date: Date | None = None,
    reference: str | None = None,
) -> Invoice:
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
        raise ToolError.invalid_state(f"Invoice {inv.id} is {inv.status} and can no longer be edited.")
    changes: dict[str, Any] = {"updated_at": ctx.now_iso}
    if line_items is not None:
        if inv.status != "DRAFT":
            raise ToolError.invalid_state(
                f"Invoice {inv.id} is already approved; its lines are locked. Void it and create a new one, "
                "or issue a credit note with create_credit_note."
            )
        lines = _build_lines(ctx, line_items)
        total = _total(lines)
        if _cents(total) <= 0:
            raise ToolError.invalid_argument("The invoice total must be more than zero.")
        changes.update(line_items=lines, total=total, amount_due=total)
    if due_date is not None:
        if _check_date(due_date, "due_date") < inv.date:
            raise ToolError.invalid_argument(f"due_date {due_date} is before the invoice date {inv.date}.")
        changes["due_date"] = due_date
    if reference is not None:
        changes["reference"] = reference.strip() or None
    return ctx.update(inv, **changes)


@service.tool(
    "write",
    intent="approve",
    phrases=("approve {invoice_number}", "sign off draft invoice {invoice_number}"),
)
def approve_invoice(ctx: ToolContext, invoice_number: InvoiceNumber) -> Invoice:
    """Approve a DRAFT invoice: it becomes AUTHORISED (awaiting payment) and can be emailed and paid.

    Args:
        invoice_number: The draft invoice to approve, e.g. INV-0121.
    """
    inv = _invoice(ctx, invoice_number)
    if inv.status != "DRAFT":
        raise ToolError.invalid_state(f"Invoice {inv.id} is {inv.status}; only DRAFT invoices can be approved.")
    return ctx.update(inv, status="AUTHORISED", updated_at=ctx.now_iso)


@service.tool("write", intent="cancel", phrases=("void {invoice_number}", "cancel invoice {invoice_number}"))
def void_invoice(ctx: ToolContext, invoice_number: InvoiceNumber) -> Invoice:
    """Void a DRAFT or AUTHORISED invoice that has no payments or credits applied. A voided invoice
    stays on record with nothing due and cannot be changed again.

    Args:
        invoice_number: The invoice to void, e.g. INV-0042.
    """
    inv = _invoice(ctx, invoice_number)
    if inv.status in ("PAID", "VOIDED"):
        raise ToolError.invalid_state(f"Invoice {inv.id} is {inv.status}; it cannot be voided.")
    if inv.amount_paid > 0 or inv.amount_credited > 0:
        raise ToolError.invalid_state(
            f"Invoice {inv.id} has {inv.amount_paid:.2f} paid and {inv.amount_credited:.2f} credited; an invoice "
            "with payments or credits cannot be voided. Issue a credit note for the rest instead."
        )
    return ctx.update(inv, status="VOIDED", amount_due=0.0, updated_at=ctx.now_iso)


@service.tool(
    "write",
    intent="send",
    phrases=("email {invoice_number} to the customer", "send {invoice_number} to {to} with the note {message}"),
)
def email_invoice(
    ctx: ToolContext,
    invoice_number: InvoiceNumber,
    to: list[EmailAddress] | None = None,
    cc: list[EmailAddress] | None = None,
    message: Text | None = None,
) -> InvoiceEmail:
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
        raise ToolError.invalid_state(f"Invoice {inv.id} is a DRAFT; approve_invoice it before emailing it.")
    if inv.status == "VOIDED":
        raise ToolError.invalid_state(f"Invoice {inv.id} is VOIDED and cannot be sent.")
    recipients = sorted({a.strip().lower() for a in to}) if to else [_contact(ctx, inv.contact_id).email]
    copies = sorted({a.strip().lower() for a in cc or []} - set(recipients))
    ctx.update(inv, sent_to_contact=True, last_sent_at=ctx.now_iso, updated_at=ctx.now_iso)
    receipt = "Receipt for i" if inv.status == "PAID" else "I"
    return ctx.insert(
        InvoiceEmail(
            id=ctx.new_id("ie"), invoice_number=inv.id, to=recipients, cc=copies,
            subject=f"{receipt}nvoice {inv.id} from {ctx.world.home.name}",
            message=message.strip() if message and message.strip() else None, sent_at=ctx.now_iso,
        )
    )


# -- payments ----------------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="pay",
    phrases=(
        "record the payment of {amount} on {invoice_number}",
        "mark {invoice_number} as paid with {amount} by {method}",
    ),
)
def create_payment(
    ctx: ToolContext,
    amount: Money,
    invoice_number: InvoiceNumber | None = None,
    bill_number: BillNumber | None = None,
    date: Date | None = None,
    method: PaymentMethod = "bank_transfer",
    reference: str | None = None,
) -> Payment:
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
        doc, kind = _invoice(ctx, invoice_number), "Invoice"
    else:
        doc = ctx.get(Bill, (bill_number or "").strip().upper(), "bill", "Use list_bills to find bill numbers.")
        kind = "Bill"
    if doc.status != "AUTHORISED":
        hint = " Approve it first." if doc.status == "DRAFT" else ""
        raise ToolError.invalid_state(f"{kind} {doc.id} is {doc.status}; payments need an AUTHORISED one.{hint}")
    if _cents(amount) > _cents(doc.amount_due):
        raise ToolError.invalid_argument(
            f"{kind} {doc.id} has only {doc.amount_due:.2f} {doc.currency} due; a payment cannot exceed that."
        )
    if on < doc.date:
        raise ToolError.invalid_argument(f"The payment date {on} is before the {kind.lower()} date {doc.date}.")
    paid = round(doc.amount_paid + amount, 2)
    if isinstance(doc, Invoice):
        _settled(ctx, doc, on, amount_paid=paid)
    else:
        due = round(doc.total - paid, 2)
        settle: dict[str, Any] = {"amount_paid": paid, "amount_due": due, "updated_at": ctx.now_iso}
        if _cents(due) <= 0:
            settle.update(amount_due=0.0, status="PAID", fully_paid_on=on)
        ctx.update(doc, **settle)
    return ctx.insert(
        Payment(
            id=ctx.new_id("pay"), invoice_number=doc.id if kind == "Invoice" else None,
            bill_number=doc.id if kind == "Bill" else None, contact_id=doc.contact_id, amount=round(amount, 2),
            currency=doc.currency, date=on, method=method,
            reference=reference.strip() if reference and reference.strip() else None, created_at=ctx.now_iso,
        )
    )


@service.tool(
    "read",
    intent="find",
    phrases=("check the payments received on {invoice_number}", "find the payments from {contact_id}"),
)
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
) -> Page[Payment]:
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
    q = ctx.query(Payment).filter(
        invoice_number=invoice_number.strip().upper() if invoice_number else None,
        bill_number=bill_number.strip().upper() if bill_number else None,
        contact_id=contact_id,
        method=method,
    )
    return _in_dates(q, "date", date_from, date_to).order_by("-date", "-id").page(limit, cursor)


# -- credit notes ----------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="create",
    phrases=("issue a credit note to {contact_id} for {line_items}", "credit {contact_id} because {reason}"),
)
def create_credit_note(
    ctx: ToolContext,
    contact_id: ContactId,
    line_items: list[LineItemIn],
    reason: Text | None = None,
    date: Date | None = None,
) -> CreditNote:
    """Issue a credit note to a customer (approved straight away). Its credit can then be applied to
    that customer's open invoices with allocate_credit_note.

    Args:
        contact_id: The customer being credited.
        line_items: What is credited: products by {"sku", "quantity"} or {"description", "quantity", "unit_price"}.
        reason: Why the credit is given, e.g. "Returned 2 monitors (INV-0042)".
        date: Credit note date (YYYY-MM-DD); defaults to today.
    """
    contact = _contact(ctx, contact_id)
    lines = _build_lines(ctx, line_items)
    total = _total(lines)
    if _cents(total) <= 0:
        raise ToolError.invalid_argument("The credit note total must be more than zero.")
    return ctx.insert(
        CreditNote(
            id=_document_number(ctx, "CN"), contact_id=contact.id,
            date=_check_date(date, "date") if date else _today(ctx),
            reason=reason.strip() if reason and reason.strip() else None, currency=contact.currency,
            line_items=lines, total=total, remaining_credit=total, allocations=[], created_at=ctx.now_iso,
        )
    )


@service.tool(
    "write",
    intent="link",
    phrases=(
        "apply {credit_note_number} to {invoice_number}",
        "use the credit on {credit_note_number} against {invoice_number}",
    ),
)
def allocate_credit_note(
    ctx: ToolContext,
    credit_note_number: CreditNoteNumber,
    invoice_number: InvoiceNumber,
    amount: Money | None = None,
) -> CreditNote:
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
        raise ToolError.invalid_state(f"Credit note {cn.id} has no credit left to allocate.")
    if inv.status != "AUTHORISED":
        raise ToolError.invalid_state(
            f"Invoice {inv.id} is {inv.status}; credit can only be applied to AUTHORISED invoices with money due."
        )
    if inv.contact_id != cn.contact_id:
        raise ToolError.invalid_argument(
            f"Credit note {cn.id} belongs to contact {cn.contact_id}, but invoice {inv.id} is for "
            f"{inv.contact_id}; credit can only be applied to the same customer's invoices."
        )
    applied = min(cn.remaining_credit, inv.amount_due) if amount is None else round(amount, 2)
    if _cents(applied) <= 0:
        raise ToolError.invalid_argument("amount must be more than zero.")
    if _cents(applied) > _cents(cn.remaining_credit):
        raise ToolError.invalid_argument(f"Credit note {cn.id} has only {cn.remaining_credit:.2f} credit left.")
    if _cents(applied) > _cents(inv.amount_due):
        raise ToolError.invalid_argument(f"Invoice {inv.id} has only {inv.amount_due:.2f} due.")
    today = _today(ctx)
    left = round(cn.remaining_credit - applied, 2)
    allocation = AllocationDict(invoice_number=inv.id, amount=applied, date=today)
    cn = ctx.update(
        cn,
        allocations=[*cn.allocations, allocation],
        remaining_credit=left if _cents(left) > 0 else 0.0,
        status="AUTHORISED" if _cents(left) > 0 else "PAID",
    )
    _settled(ctx, inv, today, amount_credited=round(inv.amount_credited + applied, 2))
    return cn


@service.tool(
    "read",
    intent="find",
    phrases=("check the credit notes of {contact_id}", "find the credit notes with credit left"),
)
def list_credit_notes(
    ctx: ToolContext,
    contact_id: ContactId | None = None,
    status: CreditNoteStatus | None = None,
    with_remaining_credit: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[CreditNote]:
    """List credit notes, newest first, with the credit each has left and where it was applied.

    Args:
        contact_id: Only credit notes of this contact.
        status: AUTHORISED (credit left) or PAID (fully used).
        with_remaining_credit: Only credit notes that still have credit to allocate.
        limit: Maximum number of credit notes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(CreditNote).filter(contact_id=contact_id, status=status)
    if with_remaining_credit:
        q.compare("remaining_credit", ">", 0)
    return q.order_by("-date", "-id").page(limit, cursor)


# -- bills -----------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("find the bills from {supplier_name}", "check which supplier bills are overdue"),
)
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
) -> Page[Bill]:
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
    q = ctx.query(Bill).filter(contact_id=contact_id, status=status)
    ids = _contacts_matching(ctx, supplier_name)
    if ids is not None:
        q.where_in("contact_id", ids)
    if overdue:
        q.where(status="AUTHORISED").compare("due_date", "<", _today(ctx)).compare("amount_due", ">", 0)
    return _in_dates(q, "date", date_from, date_to).order_by("-date", "-id").page(limit, cursor)


@service.tool(
    "write",
    intent="create",
    phrases=(
        "enter the bill from {contact_name} for {line_items}",
        "book supplier invoice {supplier_reference} from {contact_id}",
    ),
)
def create_bill(
    ctx: ToolContext,
    line_items: list[LineItemIn],
    contact_id: ContactId | None = None,
    contact_name: CompanyName | None = None,
    supplier_reference: str | None = None,
    date: Date | None = None,
    due_date: Date | None = None,
) -> Bill:
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
        dup = (
            ctx.query(Bill)
            .where(contact_id=contact.id)
            .where_sql("lower(supplier_reference) = lower(?) AND status != 'VOIDED'", ref)
            .first()
        )
        if dup:
            raise ToolError.conflict(f"Bill {dup.id} from {contact.name} already has supplier reference {ref}.")
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
        id=_document_number(ctx, "BILL"), contact_id=contact.id, supplier_reference=ref, date=issued, due_date=due,
        currency=contact.currency, line_items=lines, total=total, amount_due=total, created_at=ctx.now_iso,
        updated_at=ctx.now_iso,
    )
    return ctx.insert(bill)
