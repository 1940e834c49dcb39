"""Payments: customers, card charges, refunds, disputes and payment links (modelled on the Stripe API).

A charge is ``succeeded``, ``pending`` (authorised, not yet captured) or ``failed``. Only captured
money can be refunded, never more than was captured in total, never on a failed charge and never
while the charge is disputed. Disputes wait for a response (evidence) until their due date, or can
be accepted (closed as lost).

Customers are the world's people outside the home organisation: the same name, email and phone as
in the CRM, with their organisation as ``company_name``. Charges that pay sales invoices follow the
accounting service's seed plan (same invoice number, amount and billing email), and a few customers
were charged twice for the same thing, so "refund the duplicate charge" tasks have something to find.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date as date_cls
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel
from sqlalchemy import ForeignKey, String, func, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, ErrorCode, Limit, Page, Service, ToolContext, ToolError, paginate
from mcp_services.kernel.semantic import (
    URL,
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
    ProductSKU,
    Quantity,
    Text,
)
from mcp_services.library.accounting import Rng, planned_sales_invoices

CustomerId = EntityId("payments.customer")
ChargeId = EntityId("payments.charge")
RefundId = EntityId("payments.refund")
DisputeId = EntityId("payments.dispute")
PaymentLinkId = EntityId("payments.payment_link")
# Charges name the accounting invoice they pay, so the two services reconcile.
InvoiceNumber = EntityId("accounting.invoice")

ChargeStatus = Literal["succeeded", "pending", "failed"]
RefundReason = Literal["duplicate", "fraudulent", "requested_by_customer"]
DisputeStatus = Literal["needs_response", "under_review", "won", "lost"]
DisputeReason = Literal[
    "fraudulent", "duplicate", "product_not_received", "subscription_canceled", "unrecognized", "general"
]

MIN_CHARGE = 0.50  # Stripe's smallest USD charge
AUTHORISATION_DAYS = 7  # an uncaptured charge's authorisation expires after this
_FAILURES = (
    ("card_declined", "Your card was declined."),
    ("insufficient_funds", "Your card has insufficient funds."),
    ("expired_card", "Your card has expired."),
)


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    email: Mapped[str] = mapped_column(unique=True)
    phone: Mapped[str | None]
    company_name: Mapped[str | None]
    address: Mapped[str | None]
    description: Mapped[str | None]
    currency: Mapped[str]
    card_brand: Mapped[str]
    card_last4: Mapped[str]
    created: Mapped[str]


class Charge(Base):
    __tablename__ = "charges"
    id: Mapped[str] = mapped_column(primary_key=True)
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), index=True)
    amount: Mapped[float]
    amount_captured: Mapped[float]
    amount_refunded: Mapped[float] = mapped_column(default=0.0)
    currency: Mapped[str]
    status: Mapped[str]
    description: Mapped[str | None]
    receipt_email: Mapped[str | None]
    invoice_number: Mapped[str | None] = mapped_column(index=True)
    card_brand: Mapped[str]
    card_last4: Mapped[str]
    failure_code: Mapped[str | None]
    failure_message: Mapped[str | None]
    created: Mapped[str]


class Refund(Base):
    __tablename__ = "refunds"
    id: Mapped[str] = mapped_column(primary_key=True)
    charge_id: Mapped[str] = mapped_column(ForeignKey("charges.id"), index=True)
    amount: Mapped[float]
    currency: Mapped[str]
    reason: Mapped[str | None]
    status: Mapped[str]
    created: Mapped[str]


class Dispute(Base):
    __tablename__ = "disputes"
    id: Mapped[str] = mapped_column(primary_key=True)
    charge_id: Mapped[str] = mapped_column(ForeignKey("charges.id"), index=True)
    amount: Mapped[float]
    currency: Mapped[str]
    reason: Mapped[str]
    status: Mapped[str]
    evidence: Mapped[str | None]
    evidence_submitted_at: Mapped[str | None]
    evidence_due_by: Mapped[str]
    created: Mapped[str]
    closed_at: Mapped[str | None]


class PaymentLink(Base):
    __tablename__ = "payment_links"
    id: Mapped[str] = mapped_column(primary_key=True)
    url: Mapped[str] = mapped_column(unique=True)
    active: Mapped[bool]
    description: Mapped[str]
    product_sku: Mapped[str | None]
    quantity: Mapped[int]
    unit_amount: Mapped[float]
    amount: Mapped[float]
    currency: Mapped[str]
    customer_email: Mapped[str | None]
    invoice_number: Mapped[str | None] = mapped_column(index=True)
    created: Mapped[str]


service = Service(
    "payments",
    "Card payments: customers, charges, refunds, disputes and payment links.",
    Base,
    title="Payments",
)


# -- results -------------------------------------------------------------------------------------


class CustomerOut(BaseModel):
    id: CustomerId
    name: PersonName
    email: EmailAddress
    phone: PhoneNumber | None
    company_name: CompanyName | None
    address: Address | None
    description: Text | None
    currency: Currency
    card: str
    created: DateTime


class ChargeOut(BaseModel):
    id: ChargeId
    customer_id: CustomerId
    customer_name: PersonName
    customer_email: EmailAddress
    company_name: CompanyName | None
    amount: Money
    amount_captured: Money
    amount_refunded: Money
    currency: Currency
    status: ChargeStatus
    captured: bool
    refunded: bool
    disputed: bool
    description: Text | None
    receipt_email: EmailAddress | None
    invoice_number: InvoiceNumber | None
    card: str
    failure_code: str | None
    failure_message: str | None
    created: DateTime


class RefundOut(BaseModel):
    id: RefundId
    charge_id: ChargeId
    amount: Money
    currency: Currency
    reason: RefundReason | None
    status: Literal["succeeded"]
    customer_email: EmailAddress
    charge_description: Text | None
    invoice_number: InvoiceNumber | None
    created: DateTime


class DisputeOut(BaseModel):
    id: DisputeId
    charge_id: ChargeId
    amount: Money
    currency: Currency
    reason: DisputeReason
    status: DisputeStatus
    evidence: Text | None
    evidence_submitted_at: DateTime | None
    evidence_due_by: DateTime
    customer_email: EmailAddress
    created: DateTime
    closed_at: DateTime | None


class PaymentLinkOut(BaseModel):
    id: PaymentLinkId
    url: URL
    active: bool
    description: Text
    product_sku: ProductSKU | None
    quantity: Quantity
    unit_amount: Money
    amount: Money
    currency: Currency
    customer_email: EmailAddress | None
    invoice_number: InvoiceNumber | None
    created: DateTime


def _cents(amount: float) -> int:
    return round(amount * 100)


def _card(brand: str, last4: str) -> str:
    return f"{brand} ending {last4}"


def _customer_out(c: Customer) -> CustomerOut:
    return CustomerOut(
        id=c.id,
        name=c.name,
        email=c.email,
        phone=c.phone,
        company_name=c.company_name,
        address=c.address,
        description=c.description,
        currency=c.currency,
        card=_card(c.card_brand, c.card_last4),
        created=c.created,
    )


def _dispute_of(ctx: ToolContext, charge_id: str) -> Dispute | None:
    return ctx.db.scalar(select(Dispute).where(Dispute.charge_id == charge_id).order_by(Dispute.created.desc()))


def _charge_out(ctx: ToolContext, ch: Charge) -> ChargeOut:
    return _charges_out(ctx, [ch])[0]


def _charges_out(ctx: ToolContext, rows: list[Charge]) -> list[ChargeOut]:
    # One query each for the page's customers and disputes, rather than two per charge.
    ids = [ch.id for ch in rows]
    disputed = set(ctx.db.scalars(select(Dispute.charge_id).where(Dispute.charge_id.in_(ids))))
    wanted = {ch.customer_id for ch in rows}
    customers = {c.id: c for c in ctx.db.scalars(select(Customer).where(Customer.id.in_(wanted)))}
    return [
        ChargeOut(
            id=ch.id,
            customer_id=ch.customer_id,
            customer_name=customers[ch.customer_id].name,
            customer_email=customers[ch.customer_id].email,
            company_name=customers[ch.customer_id].company_name,
            amount=ch.amount,
            amount_captured=ch.amount_captured,
            amount_refunded=ch.amount_refunded,
            currency=ch.currency,
            status=ch.status,  # type: ignore[arg-type]
            captured=ch.status == "succeeded",
            refunded=ch.status == "succeeded" and _cents(ch.amount_refunded) >= _cents(ch.amount_captured),
            disputed=ch.id in disputed,
            description=ch.description,
            receipt_email=ch.receipt_email,
            invoice_number=ch.invoice_number,
            card=_card(ch.card_brand, ch.card_last4),
            failure_code=ch.failure_code,
            failure_message=ch.failure_message,
            created=ch.created,
        )
        for ch in rows
    ]


def _charges_with_customers(ctx: ToolContext, charge_ids: Iterable[str]) -> dict[str, tuple[Charge, Customer]]:
    """The charges with these ids and their customers, in one query; a missing one is a not-found error."""
    wanted = list(dict.fromkeys(charge_ids))
    if not wanted:
        return {}
    found = {
        charge.id: (charge, customer)
        for charge, customer in ctx.db.execute(
            select(Charge, Customer)
            .outerjoin(Customer, Customer.id == Charge.customer_id)
            .where(Charge.id.in_(wanted))
        )
    }
    for charge_id in wanted:
        if charge_id not in found:
            raise ToolError.not_found("charge", charge_id)
        charge, customer = found[charge_id]
        if customer is None:
            raise ToolError.not_found("customer", charge.customer_id)
    return found


def _refund_out(ctx: ToolContext, r: Refund) -> RefundOut:
    return _refund_outs(ctx, [r])[0]


def _refund_outs(ctx: ToolContext, refunds: list[Refund]) -> list[RefundOut]:
    """Refunds as results, with their charges and customers fetched in one query per page."""
    charges = _charges_with_customers(ctx, (r.charge_id for r in refunds))
    out = []
    for r in refunds:
        charge, customer = charges[r.charge_id]
        out.append(
            RefundOut(
                id=r.id,
                charge_id=r.charge_id,
                amount=r.amount,
                currency=r.currency,
                reason=r.reason,  # type: ignore[arg-type]
                status="succeeded",
                customer_email=customer.email,
                charge_description=charge.description,
                invoice_number=charge.invoice_number,
                created=r.created,
            )
        )
    return out


def _dispute_out(ctx: ToolContext, d: Dispute) -> DisputeOut:
    return _dispute_outs(ctx, [d])[0]


def _dispute_outs(ctx: ToolContext, disputes: list[Dispute]) -> list[DisputeOut]:
    """Disputes as results, with their charges and customers fetched in one query per page."""
    charges = _charges_with_customers(ctx, (d.charge_id for d in disputes))
    return [
        DisputeOut(
            id=d.id,
            charge_id=d.charge_id,
            amount=d.amount,
            currency=d.currency,
            reason=d.reason,  # type: ignore[arg-type]
            status=d.status,  # type: ignore[arg-type]
            evidence=d.evidence,
            evidence_submitted_at=d.evidence_submitted_at,
            evidence_due_by=d.evidence_due_by,
            customer_email=charges[d.charge_id][1].email,
            created=d.created,
            closed_at=d.closed_at,
        )
        for d in disputes
    ]


def _link_out(link: PaymentLink) -> PaymentLinkOut:
    return PaymentLinkOut.model_validate(link, from_attributes=True)


def _link_url(seed: int, link_id: str) -> str:
    # Stable per world and link, shaped like Stripe's buy.stripe.com links.
    token = hashlib.sha256(f"{seed}:{link_id}".encode()).hexdigest()[:14]
    return f"https://buy.stripe.com/{token}"


def _day_bounds(value: str, name: str) -> tuple[str, str]:
    try:
        date_cls.fromisoformat(value)
    except ValueError:
        raise ToolError.invalid_argument(f"{name} {value!r} is not a real calendar date; use YYYY-MM-DD.") from None
    return f"{value}T00:00:00Z", f"{value}T23:59:59Z"


def _find_customer(ctx: ToolContext, customer_id: str | None, customer_email: str | None) -> Customer:
    if bool(customer_id) == bool(customer_email):
        raise ToolError.invalid_argument("Pass exactly one of customer_id or customer_email.")
    if customer_id:
        return ctx.get(Customer, customer_id, "customer", "Use list_customers to find customer ids.")
    address = (customer_email or "").strip().lower()
    customer = ctx.db.scalar(select(Customer).where(Customer.email == address))
    if customer is None:
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"No customer has the email {address}. Use list_customers to search, or create_customer to add them.",
        )
    return customer


# -- seed ----------------------------------------------------------------------------------------


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    org_name = {o.id: o.name for o in world.organisations}
    customers: dict[str, Customer] = {}
    for person in world.customers:
        customer = Customer(
            id=ctx.new_id("cus"),
            name=person.name,
            email=person.email,
            phone=person.phone,
            company_name=org_name[person.organisation_id],
            address=person.address,
            description=None,
            currency=world.currency,
            card_brand=rng.choice(("visa", "visa", "mastercard", "mastercard", "amex")),
            card_last4=f"{rng.randint(0, 9999):04d}",
            created=ctx.days_from_now(-rng.randint(250, 900)),
        )
        customers[person.email] = customer
        ctx.db.add(customer)
    ctx.db.flush()

    specs = sorted(_planned_charges(ctx, rng, list(customers.values())), key=lambda s: (s.created, s.email))
    charges: list[Charge] = []
    for spec in specs:
        customer = customers[spec.email]
        charge = Charge(
            id=ctx.new_id("ch"),
            customer_id=customer.id,
            amount=spec.amount,
            amount_captured=spec.amount if spec.status == "succeeded" else 0.0,
            amount_refunded=0.0,
            currency=world.currency,
            status=spec.status,
            description=spec.description,
            receipt_email=customer.email,
            invoice_number=spec.invoice,
            card_brand=customer.card_brand,
            card_last4=customer.card_last4,
            failure_code=spec.failure[0] if spec.failure else None,
            failure_message=spec.failure[1] if spec.failure else None,
            created=spec.created,
        )
        ctx.db.add(charge)
        charges.append(charge)
    ctx.db.flush()
    _seed_refunds_and_disputes(ctx, rng, list(zip(charges, specs, strict=True)))
    _seed_payment_links(ctx, rng)


ChargeKind = Literal["invoice", "unrecorded", "subscription", "purchase", "duplicate"]


@dataclass(slots=True)
class _ChargeSpec:
    """A seeded charge before ids are given out in time order."""

    email: str
    amount: float
    status: ChargeStatus
    description: str
    created: str
    kind: ChargeKind
    invoice: str | None = None
    failure: tuple[str, str] | None = None
    has_twin: bool = False  # another charge duplicates this one
    refund_as_duplicate: bool = False  # this duplicate was already caught and refunded


def _moment(ctx: ToolContext, rng: Rng, day: date_cls) -> str:
    """A time on ``day``, never later than the frozen clock."""
    today = ctx.now.date()
    day = min(day, today)
    last_hour = ctx.now.hour - 1 if day == today else 21
    hour, minute, second = rng.randint(min(7, last_hour), last_hour), rng.randint(0, 59), rng.randint(0, 59)
    return f"{day.isoformat()}T{hour:02d}:{minute:02d}:{second:02d}Z"


def _planned_charges(ctx: ToolContext, rng: Rng, customers: list[Customer]) -> list[_ChargeSpec]:
    world = ctx.world
    today = ctx.now.date()
    specs: list[_ChargeSpec] = []

    # Invoice charges, mirroring the accounting plan.
    for plan in planned_sales_invoices(world):
        email = plan.billing_email
        label = f"Invoice {plan.number}"
        if plan.card == "paid":
            for p in plan.payments:
                moment = _moment(ctx, rng, date_cls.fromisoformat(p.date))
                specs.append(_ChargeSpec(email, p.amount, "succeeded", label, moment, "invoice", plan.number))
        elif plan.card == "unrecorded":
            moment = _moment(ctx, rng, date_cls.fromisoformat(plan.date) + timedelta(days=rng.randint(1, 10)))
            specs.append(_ChargeSpec(email, plan.amount_due, "succeeded", label, moment, "unrecorded", plan.number))
        elif plan.card == "failed":
            moment = _moment(ctx, rng, date_cls.fromisoformat(plan.due_date))
            specs.append(
                _ChargeSpec(email, plan.amount_due, "failed", label, moment, "invoice", plan.number,
                            failure=rng.choice(_FAILURES))
            )

    # Monthly subscriptions (per-seat plans), charged on the same day each month.
    plans = [p for p in world.products if p.category == "subscriptions"]
    for customer in customers:
        if rng.random() >= 0.45:
            continue
        product = rng.choice(plans)
        seats = rng.randint(1, 3) if product.unit_price > 500 else rng.randint(1, 12)
        day_of_month = rng.randint(1, 28)
        for months_back in range(rng.randint(1, 6)):
            year, month = today.year, today.month - months_back
            while month < 1:
                year, month = year - 1, month + 12
            day = date_cls(year, month, day_of_month)
            if day > today:
                continue
            failed = rng.random() < 0.06
            specs.append(
                _ChargeSpec(
                    customer.email, round(product.unit_price * seats, 2), "failed" if failed else "succeeded",
                    f"{product.name} x {seats} seat{'s' if seats > 1 else ''}, {day:%b %Y}",
                    _moment(ctx, rng, day), "subscription", failure=rng.choice(_FAILURES) if failed else None,
                )
            )

    # One-off purchases; the first few are recent and still pending capture.
    goods = [p for p in world.products if p.category != "subscriptions"]
    for i in range(80):
        customer = rng.choice(customers)
        product = rng.choice(goods)
        quantity = rng.randint(1, 4) if product.unit_price > 1000 else rng.randint(1, 10)
        recent = i < 6
        day = today - timedelta(days=rng.randint(0, 3) if recent else rng.randint(1, 200))
        failed = not recent and rng.random() < 0.07
        status: ChargeStatus = "pending" if recent else ("failed" if failed else "succeeded")
        specs.append(
            _ChargeSpec(
                customer.email, round(product.unit_price * quantity, 2), status, f"{quantity} x {product.name}",
                _moment(ctx, rng, day), "purchase", failure=rng.choice(_FAILURES) if failed else None,
            )
        )

    # Duplicates: the same charge again a few minutes later, mostly invoice payments. Twins come
    # from invoices paid in one charge, so a split payment is never mistaken for a duplicate.
    succeeded = [s for s in specs if s.status == "succeeded" and s.created < ctx.days_from_now(-2)]
    charges_per_invoice = Counter(s.invoice for s in specs if s.invoice)
    invoice_paid = [s for s in succeeded if s.kind == "invoice" and charges_per_invoice[s.invoice] == 1]
    others = [s for s in succeeded if s.kind in ("subscription", "purchase")]
    originals = rng.sample(invoice_paid, min(4, len(invoice_paid))) + rng.sample(others, 2)
    for n, original in enumerate(originals):
        minute = int(original.created[14:16]) + rng.randint(1, 3)
        hour = int(original.created[11:13]) + minute // 60  # _moment stays before 22:00, so no day overflow
        created = f"{original.created[:11]}{hour:02d}:{minute % 60:02d}{original.created[16:]}"
        original.has_twin = True
        specs.append(
            replace(original, kind="duplicate", created=created, has_twin=False,
                    refund_as_duplicate=n == len(originals) - 1)
        )
    return specs


def _seed_refunds_and_disputes(ctx: ToolContext, rng: Rng, seeded: list[tuple[Charge, _ChargeSpec]]) -> None:
    refunds: list[tuple[str, Charge, float, str]] = []  # (created, charge, amount, reason)
    for charge, spec in seeded:
        if spec.refund_as_duplicate:
            refunds.append((_after(charge.created, 1), charge, charge.amount, "duplicate"))
    # Ordinary refunds only on purchases and subscriptions, never on invoice charges, so the
    # accounting books stay right; and never on the duplicate pairs.
    plain = [
        charge for charge, spec in seeded
        if charge.status == "succeeded" and spec.kind in ("purchase", "subscription") and not spec.has_twin
        and charge.created < ctx.days_from_now(-3)
    ]
    chosen = rng.sample(plain, 20)
    for i, charge in enumerate(chosen[:12]):
        amount = charge.amount if i % 2 == 0 else round(charge.amount * rng.choice((0.1, 0.25, 0.5)), 2)
        refunds.append((_after(charge.created, rng.randint(1, 3)), charge, amount, "requested_by_customer"))
    refunds = [r for r in refunds if r[0] <= ctx.now_iso]
    for created, charge, amount, reason in sorted(refunds, key=lambda r: (r[0], r[1].id)):
        ctx.db.add(
            Refund(id=ctx.new_id("re"), charge_id=charge.id, amount=amount, currency=charge.currency,
                   reason=reason, status="succeeded", created=created)
        )
        charge.amount_refunded = round(charge.amount_refunded + amount, 2)

    # Disputes on other charges. The oldest charges get the closed ones (won, lost) and the one whose
    # evidence deadline has passed; the rest await a response or are under review.
    candidates = sorted(chosen[12:], key=lambda c: c.created)
    plans: list[tuple[DisputeStatus, int]] = [
        ("lost", rng.randint(60, 90)), ("won", rng.randint(60, 90)), ("needs_response", 20),
        ("under_review", rng.randint(15, 30)), ("under_review", rng.randint(15, 30)),
        ("needs_response", rng.randint(1, 8)), ("needs_response", rng.randint(1, 8)),
        ("needs_response", rng.randint(1, 8)),
    ]
    disputes: list[Dispute] = []
    for charge, (status, age_days) in zip(candidates, plans, strict=False):
        created = max(ctx.days_from_now(-age_days), _after(charge.created, 2))
        opened = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ")
        due = ctx.iso(opened + timedelta(days=14))
        reason = rng.choice(("fraudulent", "product_not_received", "subscription_canceled", "unrecognized", "general"))
        submitted = min(ctx.iso(opened + timedelta(days=3)), ctx.now_iso) if status != "needs_response" else None
        closed = min(ctx.iso(opened + timedelta(days=30)), ctx.now_iso) if status in ("won", "lost") else None
        disputes.append(
            Dispute(
                id="", charge_id=charge.id, amount=charge.amount, currency=charge.currency, reason=reason,
                status=status,
                evidence="Signed delivery receipt and customer emails confirming the order." if submitted else None,
                evidence_submitted_at=submitted, evidence_due_by=due, created=created, closed_at=closed,
            )
        )
    for dispute in sorted(disputes, key=lambda d: d.created):  # ids follow time, as Stripe's do
        dispute.id = ctx.new_id("dp")
        ctx.db.add(dispute)


def _after(moment: str, days: int) -> str:
    return f"{(date_cls.fromisoformat(moment[:10]) + timedelta(days=days)).isoformat()}{moment[10:]}"


def _seed_payment_links(ctx: ToolContext, rng: Rng) -> None:
    world = ctx.world
    today = ctx.now.date()
    links: list[PaymentLink] = []
    failed = [p for p in planned_sales_invoices(world) if p.card == "failed"]
    # Half the invoices whose card failed already got a link; the rest still need one.
    for plan in failed[: len(failed) // 2]:
        since_due = (today - date_cls.fromisoformat(plan.due_date)).days
        links.append(
            PaymentLink(
                description=f"Payment for invoice {plan.number}", product_sku=None, quantity=1,
                unit_amount=plan.amount_due, amount=plan.amount_due, active=True,
                customer_email=plan.billing_email, invoice_number=plan.number,
                created=ctx.days_from_now(-rng.randint(0, min(5, since_due - 1))),
            )
        )
    catalogue = [p for p in world.products if p.category in ("services", "subscriptions", "merchandise")]
    for i, product in enumerate(rng.sample(catalogue, 10)):
        links.append(
            PaymentLink(
                description=product.name, product_sku=product.sku, quantity=1, unit_amount=product.unit_price,
                amount=product.unit_price, active=i >= 3, customer_email=None, invoice_number=None,
                created=ctx.days_from_now(-rng.randint(10, 300)),
            )
        )
    for link in sorted(links, key=lambda link: link.created):
        link.id = ctx.new_id("plink")
        link.url = _link_url(world.seed, link.id)
        link.currency = world.currency
        ctx.db.add(link)


# -- customers -------------------------------------------------------------------------------------


@service.tool("read")
def list_customers(
    ctx: ToolContext,
    query: str | None = None,
    email: EmailAddress | None = None,
    company_name: CompanyName | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[CustomerOut]:
    """List or search customers, alphabetically by name.

    Args:
        query: Text to match in the customer's name, email, phone or company (case-insensitive).
        email: Only the customer with exactly this email address.
        company_name: Only customers whose company name contains this text (case-insensitive).
        created_from: Only customers created on or after this date (YYYY-MM-DD).
        created_to: Only customers created on or before this date (YYYY-MM-DD).
        limit: Maximum number of customers to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Customer).order_by(Customer.name, Customer.id)
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(
            or_(Customer.name.ilike(like), Customer.email.ilike(like), Customer.phone.ilike(like),
                Customer.company_name.ilike(like))
        )
    if email:
        stmt = stmt.where(Customer.email == email.strip().lower())
    if company_name:
        stmt = stmt.where(Customer.company_name.ilike(f"%{company_name.strip()}%"))
    if created_from:
        stmt = stmt.where(Customer.created >= _day_bounds(created_from, "created_from")[0])
    if created_to:
        stmt = stmt.where(Customer.created <= _day_bounds(created_to, "created_to")[1])
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[CustomerOut](items=[_customer_out(c) for c in rows], total=total, next_cursor=next_cursor)


@service.tool("read")
def get_customer(ctx: ToolContext, customer_id: CustomerId) -> CustomerOut:
    """Get one customer by id, with their contact details and saved card.

    Args:
        customer_id: The customer's id, e.g. cus_0012.
    """
    return _customer_out(ctx.get(Customer, customer_id, "customer", "Use list_customers to find customer ids."))


@service.tool("write")
def create_customer(
    ctx: ToolContext,
    name: PersonName,
    email: EmailAddress,
    phone: PhoneNumber | None = None,
    company_name: CompanyName | None = None,
    address: Address | None = None,
    description: Text | None = None,
) -> CustomerOut:
    """Create a customer who can then be charged. The email must not belong to another customer.

    Args:
        name: The customer's full name.
        email: The customer's email address (unique across customers); receipts go here.
        phone: Phone number in E.164 form, e.g. +14155550123.
        company_name: The organisation the customer pays for.
        address: Billing address on one line.
        description: An internal note about the customer.
    """
    email = email.strip().lower()
    if not name.strip():
        raise ToolError.invalid_argument("name must not be empty.")
    existing = ctx.db.scalar(select(Customer.id).where(Customer.email == email))
    if existing:
        raise ToolError.conflict(f"Customer {existing} already has email {email}; use update_customer or charge them.")
    customer = Customer(
        id=ctx.new_id("cus"),
        name=name.strip(),
        email=email,
        phone=phone,
        company_name=company_name.strip() if company_name else None,
        address=address,
        description=description.strip() if description and description.strip() else None,
        currency=ctx.world.currency,
        card_brand="visa",
        card_last4="4242",
        created=ctx.now_iso,
    )
    ctx.db.add(customer)
    ctx.db.flush()
    return _customer_out(customer)


@service.tool("write")
def update_customer(
    ctx: ToolContext,
    customer_id: CustomerId,
    name: PersonName | None = None,
    email: EmailAddress | None = None,
    phone: PhoneNumber | None = None,
    company_name: CompanyName | None = None,
    address: Address | None = None,
    description: Text | None = None,
) -> CustomerOut:
    """Update a customer's name, email, phone, company, address or note. Only the fields you pass change;
    past charges keep the receipt email they were sent to.

    Args:
        customer_id: The customer to update, e.g. cus_0012.
        name: New full name.
        email: New email address (must not belong to another customer).
        phone: New phone number in E.164 form.
        company_name: New company name.
        address: New billing address on one line.
        description: New internal note (replaces the old one).
    """
    customer = ctx.get(Customer, customer_id, "customer", "Use list_customers to find customer ids.")
    if all(v is None for v in (name, email, phone, company_name, address, description)):
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if name is not None:
        if not name.strip():
            raise ToolError.invalid_argument("name must not be empty.")
        customer.name = name.strip()
    if email is not None:
        email = email.strip().lower()
        other = ctx.db.scalar(select(Customer.id).where(Customer.email == email, Customer.id != customer.id))
        if other:
            raise ToolError.conflict(f"Email {email} already belongs to customer {other}.")
        customer.email = email
    if phone is not None:
        customer.phone = phone
    if company_name is not None:
        customer.company_name = company_name.strip()
    if address is not None:
        customer.address = address
    if description is not None:
        customer.description = description.strip() or None
    return _customer_out(customer)


# -- charges ---------------------------------------------------------------------------------------


@service.tool("read")
def list_charges(
    ctx: ToolContext,
    customer_id: CustomerId | None = None,
    customer_email: EmailAddress | None = None,
    status: ChargeStatus | None = None,
    invoice_number: InvoiceNumber | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    amount_min: Money | None = None,
    amount_max: Money | None = None,
    query: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[ChargeOut]:
    """List or search charges, newest first. Look for duplicates by listing one customer's charges:
    twins have the same amount and description minutes apart.

    Args:
        customer_id: Only charges of this customer.
        customer_email: Only charges of the customer with this email, or whose receipt went to it.
        status: Only charges with this status: succeeded, pending (not captured yet) or failed.
        invoice_number: Only charges that pay this accounting invoice, e.g. INV-0042.
        created_from: Only charges made on or after this date (YYYY-MM-DD).
        created_to: Only charges made on or before this date (YYYY-MM-DD).
        amount_min: Only charges of at least this amount.
        amount_max: Only charges of at most this amount.
        query: Text to match in the description, invoice number, customer name or company (case-insensitive).
        limit: Maximum number of charges to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = (
        select(Charge)
        .join(Customer, Customer.id == Charge.customer_id)
        .order_by(Charge.created.desc(), Charge.id.desc())
    )
    if customer_id:
        stmt = stmt.where(Charge.customer_id == customer_id)
    if customer_email:
        address = customer_email.strip().lower()
        stmt = stmt.where(or_(Customer.email == address, func.lower(Charge.receipt_email) == address))
    if status:
        stmt = stmt.where(Charge.status == status)
    if invoice_number:
        stmt = stmt.where(Charge.invoice_number == invoice_number.strip().upper())
    if created_from:
        stmt = stmt.where(Charge.created >= _day_bounds(created_from, "created_from")[0])
    if created_to:
        stmt = stmt.where(Charge.created <= _day_bounds(created_to, "created_to")[1])
    if amount_min is not None:
        stmt = stmt.where(Charge.amount >= amount_min - 0.005)
    if amount_max is not None:
        stmt = stmt.where(Charge.amount <= amount_max + 0.005)
    if query:
        like = f"%{query.strip()}%"
        stmt = stmt.where(
            or_(Charge.description.ilike(like), Charge.invoice_number.ilike(like), Customer.name.ilike(like),
                Customer.company_name.ilike(like))
        )
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[ChargeOut](items=_charges_out(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_charge(ctx: ToolContext, charge_id: ChargeId) -> ChargeOut:
    """Get one charge by id, with how much was captured and refunded and whether it is disputed.

    Args:
        charge_id: The charge's id, e.g. ch_0042.
    """
    return _charge_out(ctx, ctx.get(Charge, charge_id, "charge", "Use list_charges to find charge ids."))


@service.tool("write")
def create_charge(
    ctx: ToolContext,
    amount: Money,
    customer_id: CustomerId | None = None,
    customer_email: EmailAddress | None = None,
    currency: Currency | None = None,
    description: Text | None = None,
    receipt_email: EmailAddress | None = None,
    invoice_number: InvoiceNumber | None = None,
    capture: bool = True,
) -> ChargeOut:
    """Charge a customer's saved card. With capture=false the money is only authorised (status
    pending) until capture_charge, within 7 days.

    Args:
        amount: The amount to charge, at least 0.50.
        customer_id: The customer to charge. Pass this or customer_email.
        customer_email: The email of the customer to charge, instead of customer_id.
        currency: ISO currency code; defaults to the customer's currency.
        description: What the charge is for; shown on the receipt.
        receipt_email: Where to send the receipt; defaults to the customer's email.
        invoice_number: The accounting invoice this charge pays, e.g. INV-0042.
        capture: Capture now (default) or only authorise (pending).
    """
    customer = _find_customer(ctx, customer_id, customer_email)
    if _cents(amount) < _cents(MIN_CHARGE):
        raise ToolError.invalid_argument(f"amount must be at least {MIN_CHARGE:.2f}.")
    total = round(amount, 2)
    charge = Charge(
        id=ctx.new_id("ch"),
        customer_id=customer.id,
        amount=total,
        amount_captured=total if capture else 0.0,
        amount_refunded=0.0,
        currency=currency or customer.currency,
        status="succeeded" if capture else "pending",
        description=description.strip() if description and description.strip() else None,
        receipt_email=(receipt_email or customer.email).strip().lower(),
        invoice_number=invoice_number.strip().upper() if invoice_number else None,
        card_brand=customer.card_brand,
        card_last4=customer.card_last4,
        failure_code=None,
        failure_message=None,
        created=ctx.now_iso,
    )
    ctx.db.add(charge)
    ctx.db.flush()
    return _charge_out(ctx, charge)


@service.tool("write")
def capture_charge(ctx: ToolContext, charge_id: ChargeId, amount: Money | None = None) -> ChargeOut:
    """Capture a pending (authorised) charge, in full or in part; the uncaptured rest is released.
    Authorisations expire 7 days after the charge was made.

    Args:
        charge_id: The pending charge, e.g. ch_0042.
        amount: How much to capture (at most the authorised amount); defaults to all of it.
    """
    charge = ctx.get(Charge, charge_id, "charge", "Use list_charges with status=pending to find it.")
    if charge.status != "pending":
        raise ToolError.invalid_state(f"Charge {charge.id} is {charge.status}; only pending charges can be captured.")
    if charge.created < ctx.days_from_now(-AUTHORISATION_DAYS):
        raise ToolError.invalid_state(
            f"The authorisation of charge {charge.id} expired ({AUTHORISATION_DAYS} days after {charge.created}); "
            "create a new charge instead."
        )
    captured = charge.amount if amount is None else round(amount, 2)
    if _cents(captured) < _cents(MIN_CHARGE):
        raise ToolError.invalid_argument(f"amount must be at least {MIN_CHARGE:.2f}.")
    if _cents(captured) > _cents(charge.amount):
        raise ToolError.invalid_argument(f"Charge {charge.id} authorised only {charge.amount:.2f} {charge.currency}.")
    charge.amount_captured = captured
    charge.status = "succeeded"
    return _charge_out(ctx, charge)


# -- refunds ---------------------------------------------------------------------------------------


@service.tool("write")
def refund_charge(
    ctx: ToolContext,
    charge_id: ChargeId,
    amount: Money | None = None,
    reason: RefundReason | None = None,
) -> RefundOut:
    """Refund a succeeded charge, fully or partly. Refunds together cannot exceed what was captured;
    failed or pending charges cannot be refunded, nor can a charge with an open or lost dispute
    (answer the dispute instead).

    Args:
        charge_id: The charge to refund, e.g. ch_0042.
        amount: How much to refund; defaults to everything not yet refunded.
        reason: duplicate, fraudulent or requested_by_customer.
    """
    charge = ctx.get(Charge, charge_id, "charge", "Use list_charges to find charge ids.")
    if charge.status == "failed":
        raise ToolError.invalid_state(f"Charge {charge.id} failed, so no money was taken; there is nothing to refund.")
    if charge.status == "pending":
        raise ToolError.invalid_state(
            f"Charge {charge.id} is pending (not captured); capture it first, or let it expire."
        )
    dispute = _dispute_of(ctx, charge.id)
    if dispute is not None and dispute.status != "won":
        raise ToolError.invalid_state(
            f"Charge {charge.id} is disputed ({dispute.id}, {dispute.status}); the bank handles the money. "
            "Use update_dispute or close_dispute instead of a refund."
        )
    refundable = round(charge.amount_captured - charge.amount_refunded, 2)
    if _cents(refundable) <= 0:
        raise ToolError.invalid_state(f"Charge {charge.id} has already been refunded in full.")
    value = refundable if amount is None else round(amount, 2)
    if _cents(value) <= 0:
        raise ToolError.invalid_argument("amount must be more than zero.")
    if _cents(value) > _cents(refundable):
        raise ToolError.invalid_argument(
            f"Only {refundable:.2f} {charge.currency} of charge {charge.id} can still be refunded "
            f"({charge.amount_refunded:.2f} already refunded)."
        )
    refund = Refund(
        id=ctx.new_id("re"),
        charge_id=charge.id,
        amount=value,
        currency=charge.currency,
        reason=reason,
        status="succeeded",
        created=ctx.now_iso,
    )
    ctx.db.add(refund)
    charge.amount_refunded = round(charge.amount_refunded + value, 2)
    ctx.db.flush()
    return _refund_out(ctx, refund)


@service.tool("read")
def list_refunds(
    ctx: ToolContext,
    charge_id: ChargeId | None = None,
    customer_email: EmailAddress | None = None,
    reason: RefundReason | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[RefundOut]:
    """List refunds, newest first.

    Args:
        charge_id: Only refunds of this charge.
        customer_email: Only refunds to the customer with this email.
        reason: Only refunds with this reason: duplicate, fraudulent or requested_by_customer.
        created_from: Only refunds made on or after this date (YYYY-MM-DD).
        created_to: Only refunds made on or before this date (YYYY-MM-DD).
        limit: Maximum number of refunds to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = (
        select(Refund)
        .join(Charge, Charge.id == Refund.charge_id)
        .join(Customer, Customer.id == Charge.customer_id)
        .order_by(Refund.created.desc(), Refund.id.desc())
    )
    if charge_id:
        stmt = stmt.where(Refund.charge_id == charge_id)
    if customer_email:
        stmt = stmt.where(Customer.email == customer_email.strip().lower())
    if reason:
        stmt = stmt.where(Refund.reason == reason)
    if created_from:
        stmt = stmt.where(Refund.created >= _day_bounds(created_from, "created_from")[0])
    if created_to:
        stmt = stmt.where(Refund.created <= _day_bounds(created_to, "created_to")[1])
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[RefundOut](items=_refund_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_refund(ctx: ToolContext, refund_id: RefundId) -> RefundOut:
    """Get one refund by id.

    Args:
        refund_id: The refund's id, e.g. re_0007.
    """
    return _refund_out(ctx, ctx.get(Refund, refund_id, "refund", "Use list_refunds to find refund ids."))


# -- disputes --------------------------------------------------------------------------------------


@service.tool("read")
def list_disputes(
    ctx: ToolContext,
    status: DisputeStatus | None = None,
    charge_id: ChargeId | None = None,
    customer_email: EmailAddress | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[DisputeOut]:
    """List disputes (chargebacks), soonest evidence deadline first.

    Args:
        status: needs_response (waiting for our evidence), under_review (evidence sent), won or lost.
        charge_id: Only the dispute on this charge.
        customer_email: Only disputes raised by the customer with this email.
        limit: Maximum number of disputes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = (
        select(Dispute)
        .join(Charge, Charge.id == Dispute.charge_id)
        .join(Customer, Customer.id == Charge.customer_id)
        .order_by(Dispute.evidence_due_by, Dispute.id)
    )
    if status:
        stmt = stmt.where(Dispute.status == status)
    if charge_id:
        stmt = stmt.where(Dispute.charge_id == charge_id)
    if customer_email:
        stmt = stmt.where(Customer.email == customer_email.strip().lower())
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[DisputeOut](items=_dispute_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("write")
def update_dispute(ctx: ToolContext, dispute_id: DisputeId, evidence: Text, submit: bool = True) -> DisputeOut:
    """Respond to a dispute with evidence. With submit=true (default) the evidence goes to the bank
    and the dispute moves to under_review; with submit=false it is only saved as a draft. Only
    disputes in needs_response can be answered, and only before their evidence deadline.

    Args:
        dispute_id: The dispute, e.g. dp_0003.
        evidence: The evidence: what was sold, delivery proof, the customer's messages, the refund policy.
        submit: Send it to the bank now (true) or keep it as a draft (false).
    """
    dispute = ctx.get(Dispute, dispute_id, "dispute", "Use list_disputes to find dispute ids.")
    if dispute.status != "needs_response":
        raise ToolError.invalid_state(
            f"Dispute {dispute.id} is {dispute.status}; only needs_response disputes take evidence."
        )
    if dispute.evidence_due_by < ctx.now_iso:
        raise ToolError.invalid_state(
            f"The evidence deadline of dispute {dispute.id} passed on {dispute.evidence_due_by}; "
            "it can only be accepted now with close_dispute."
        )
    if not evidence.strip():
        raise ToolError.invalid_argument("evidence must not be empty.")
    dispute.evidence = evidence.strip()
    if submit:
        dispute.status = "under_review"
        dispute.evidence_submitted_at = ctx.now_iso
    return _dispute_out(ctx, dispute)


@service.tool("write")
def close_dispute(ctx: ToolContext, dispute_id: DisputeId) -> DisputeOut:
    """Accept a dispute: we stop contesting it and it is closed as lost (the customer keeps the money).
    Only disputes still in needs_response can be accepted.

    Args:
        dispute_id: The dispute to accept, e.g. dp_0003.
    """
    dispute = ctx.get(Dispute, dispute_id, "dispute", "Use list_disputes to find dispute ids.")
    if dispute.status == "under_review":
        raise ToolError.invalid_state(
            f"Dispute {dispute.id} already has evidence under review; wait for the bank's decision."
        )
    if dispute.status in ("won", "lost"):
        raise ToolError.invalid_state(f"Dispute {dispute.id} is already closed ({dispute.status}).")
    dispute.status = "lost"
    dispute.closed_at = ctx.now_iso
    return _dispute_out(ctx, dispute)


# -- payment links ---------------------------------------------------------------------------------


@service.tool("write")
def create_payment_link(
    ctx: ToolContext,
    product_sku: ProductSKU | None = None,
    amount: Money | None = None,
    description: Text | None = None,
    quantity: Quantity = 1,
    customer_email: EmailAddress | None = None,
    invoice_number: InvoiceNumber | None = None,
) -> PaymentLinkOut:
    """Create a shareable payment page URL (send it by email or SMS). Sell a catalogue product by
    SKU, or ask for a custom amount such as an invoice's amount due. One invoice can have only one
    active link.

    Args:
        product_sku: A product to sell, e.g. SKU-SER-103; its catalogue price is used. Pass this or amount.
        amount: A custom amount per unit instead of a product, e.g. an invoice's amount due.
        description: What the payer sees; defaults to the product name, or "Payment for invoice ...".
        quantity: How many units (default 1).
        customer_email: Who the link is for (prefills the payer's email).
        invoice_number: The accounting invoice the link collects payment for, e.g. INV-0042.
    """
    if bool(product_sku) == (amount is not None):
        raise ToolError.invalid_argument("Pass exactly one of product_sku or amount.")
    if quantity < 1:
        raise ToolError.invalid_argument("quantity must be at least 1.")
    invoice = invoice_number.strip().upper() if invoice_number else None
    sku: str | None = None
    if amount is not None:
        unit = round(amount, 2)
        label = f"Payment for invoice {invoice}" if invoice else ""
        if _cents(unit) < _cents(MIN_CHARGE):
            raise ToolError.invalid_argument(f"amount must be at least {MIN_CHARGE:.2f}.")
    else:
        wanted = (product_sku or "").strip().upper()
        product = next((p for p in ctx.world.products if p.sku == wanted), None)
        if product is None:
            raise ToolError.not_found(
                "product", product_sku, "Product SKUs look like SKU-SER-103; accounting's list_items lists them."
            )
        sku, unit, label = product.sku, product.unit_price, product.name
    label = description.strip() if description and description.strip() else label
    if not label:
        raise ToolError.invalid_argument("A custom-amount link needs a description (or an invoice_number).")
    if invoice:
        existing = ctx.db.scalar(
            select(PaymentLink.id).where(PaymentLink.invoice_number == invoice, PaymentLink.active.is_(True))
        )
        if existing:
            raise ToolError.conflict(
                f"Payment link {existing} is already active for invoice {invoice}; reuse it, or deactivate it "
                "with update_payment_link first."
            )
    link_id = ctx.new_id("plink")
    link = PaymentLink(
        id=link_id,
        url=_link_url(ctx.world.seed, link_id),
        active=True,
        description=label,
        product_sku=sku,
        quantity=quantity,
        unit_amount=unit,
        amount=round(unit * quantity, 2),
        currency=ctx.world.currency,
        customer_email=customer_email.strip().lower() if customer_email else None,
        invoice_number=invoice,
        created=ctx.now_iso,
    )
    ctx.db.add(link)
    ctx.db.flush()
    return _link_out(link)


@service.tool("read")
def list_payment_links(
    ctx: ToolContext,
    active: bool | None = None,
    customer_email: EmailAddress | None = None,
    invoice_number: InvoiceNumber | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[PaymentLinkOut]:
    """List payment links, newest first.

    Args:
        active: true for links that still accept payments, false for deactivated ones.
        customer_email: Only links made for this email.
        invoice_number: Only links for this accounting invoice.
        limit: Maximum number of links to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(PaymentLink).order_by(PaymentLink.created.desc(), PaymentLink.id.desc())
    if active is not None:
        stmt = stmt.where(PaymentLink.active.is_(active))
    if customer_email:
        stmt = stmt.where(PaymentLink.customer_email == customer_email.strip().lower())
    if invoice_number:
        stmt = stmt.where(PaymentLink.invoice_number == invoice_number.strip().upper())
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[PaymentLinkOut](items=[_link_out(p) for p in rows], total=total, next_cursor=next_cursor)


@service.tool("write")
def update_payment_link(ctx: ToolContext, payment_link_id: PaymentLinkId, active: bool) -> PaymentLinkOut:
    """Deactivate a payment link (active=false) so it stops taking payments, or reactivate it (active=true).
    An invoice can have only one active link at a time.

    Args:
        payment_link_id: The link, e.g. plink_0004.
        active: false to deactivate, true to reactivate.
    """
    link = ctx.get(PaymentLink, payment_link_id, "payment link", "Use list_payment_links to find link ids.")
    if link.active == active:
        raise ToolError.invalid_state(f"Payment link {link.id} is already {'active' if active else 'inactive'}.")
    if active and link.invoice_number:
        other = ctx.db.scalar(
            select(PaymentLink.id).where(
                PaymentLink.invoice_number == link.invoice_number,
                PaymentLink.active.is_(True),
                PaymentLink.id != link.id,
            )
        )
        if other:
            raise ToolError.conflict(f"Payment link {other} is already active for invoice {link.invoice_number}.")
    link.active = active
    return _link_out(link)
