"""Payments: customers, card charges, refunds, disputes and payment links (modelled on the Stripe API).

A charge is ``succeeded``, ``pending`` (authorised, not yet captured) or ``failed``. Only captured
money can be refunded, never more than was captured in total, never on a failed charge and never
while the charge is disputed. Disputes wait for a response (evidence) until their due date, or can
be accepted (closed as lost).

Customers are the world's people outside the home organisation: the same name, email and phone as
in the CRM, with their organisation as ``company_name``. Charges that pay sales invoices are the
charges of the world's business plan (``world.plan``): every invoice number here is an invoice of
the accounting books with the same billing email, and a charge or payment link can only name such
an invoice. A few customers were charged twice for the same thing, so "refund the duplicate
charge" tasks have something to find.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import date as date_cls
from datetime import datetime, timedelta
from random import Random
from typing import Any, Literal

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.records import check_search_text, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.prose import write
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

CustomerId = EntityId("payments.customer")
ChargeId = EntityId("payments.charge")
RefundId = EntityId("payments.refund")
DisputeId = EntityId("payments.dispute")
PaymentLinkId = EntityId("payments.payment_link")
# Charges name the accounting invoice they pay, so the two services reconcile.
InvoiceNumber = EntityId("accounting.invoice")
INVOICE_LINK = "accounting.invoice.id"

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
_CARD_BRANDS = ("visa", "visa", "mastercard", "mastercard", "amex")
_DISPUTE_REASONS = ("fraudulent", "product_not_received", "subscription_canceled", "unrecognized", "general")

service = Service(
    "payments", "Card payments: customers, charges, refunds, disputes and payment links.", title="Payments"
)


# -- entities --------------------------------------------------------------------------------------


@service.entity(table="customers", prefix="cus", label="name", search=("name", "email", "phone", "company_name"))
class Customer:
    """A person we take card payments from."""

    id: CustomerId
    name: PersonName = field(index=True, role="self", link="crm.contact.name")
    email: EmailAddress = field(unique=True, role="self", link="crm.contact.email")
    phone: PhoneNumber | None = None
    company_name: CompanyName | None = field(None, role="employer", link="crm.company.name")
    address: Address | None = None
    description: Text | None = None
    currency: Currency
    card_brand: str
    card_last4: str
    created: DateTime

    card = derived(str, lambda c: f"{c.card_brand} ending {c.card_last4}")


@service.entity(
    table="charges",
    prefix="ch",
    search=("description", "invoice_number"),
    state=StateDef(field="status", values=["succeeded", "pending", "failed"], initial="pending",
                   terminal=["failed"], transitions={"pending": ["succeeded"]}),
)
class Charge:
    """A payment taken (or authorised) from a customer's card."""

    id: ChargeId = field(mention="the charge id")
    customer_id: CustomerId = field(role="customer")
    amount: Money = field(mention="the charge amount")
    amount_captured: Money
    amount_refunded: Money = 0.0
    currency: Currency
    status: ChargeStatus
    description: Text | None = None
    receipt_email: EmailAddress | None = field(None, role="receipt")
    invoice_number: InvoiceNumber | None = field(None, index=True, link=INVOICE_LINK, mention="the invoice number")
    card_brand: str
    card_last4: str
    failure_code: str | None = None
    failure_message: str | None = None
    disputed: bool = False  # as on Stripe's charge object; disputes are opened by banks, never by a tool
    created: DateTime = field(mention="when the charge was made")

    customer_name = joined(PersonName, via="customer_id", field="name")
    customer_email = joined(EmailAddress, via="customer_id", field="email")
    company_name = joined(CompanyName | None, via="customer_id", field="company_name")
    captured = derived(bool, lambda c: c.status == "succeeded")
    refunded = derived(
        bool, lambda c: c.status == "succeeded" and _cents(c.amount_refunded) >= _cents(c.amount_captured)
    )
    card = derived(str, lambda c: f"{c.card_brand} ending {c.card_last4}")


@service.entity(table="refunds", prefix="re")
class Refund:
    """Money given back on a charge."""

    id: RefundId = field(mention="the refund id")
    charge_id: ChargeId
    customer_id: CustomerId = field(role="customer")
    amount: Money = field(mention="the refund amount")
    currency: Currency
    reason: RefundReason | None = None
    status: Literal["succeeded"] = "succeeded"
    created: DateTime

    customer_email = joined(EmailAddress, via="customer_id", field="email")
    charge_description = joined(Text | None, via="charge_id", field="description")
    invoice_number = joined(InvoiceNumber | None, via="charge_id", field="invoice_number")


@service.entity(
    table="disputes",
    prefix="dp",
    state=StateDef(field="status", values=["needs_response", "under_review", "won", "lost"], initial="needs_response",
                   terminal=["won", "lost"], transitions={"needs_response": ["under_review", "lost"],
                                                          "under_review": ["won", "lost"]}),
)
class Dispute:
    """A chargeback the customer's bank opened on a charge."""

    id: DisputeId = field(mention="the dispute id")
    charge_id: ChargeId
    customer_id: CustomerId = field(role="customer")
    amount: Money = field(mention="the disputed amount")
    currency: Currency
    reason: DisputeReason
    status: DisputeStatus
    evidence: Text | None = None
    evidence_submitted_at: DateTime | None = None
    evidence_due_by: DateTime = field(mention="the evidence deadline")
    created: DateTime
    closed_at: DateTime | None = None

    customer_email = joined(EmailAddress, via="customer_id", field="email")


@service.entity(table="payment_links", prefix="plink", label="description", search=("description",))
class PaymentLink:
    """A shareable payment page for a product or an amount."""

    id: PaymentLinkId
    url: URL = field(unique=True, mention="the payment link")
    active: bool = True
    description: Text
    product_sku: ProductSKU | None = None
    quantity: Quantity = 1
    unit_amount: Money
    amount: Money = field(mention="the amount to pay")
    currency: Currency
    customer_email: EmailAddress | None = field(None, role="payer")
    invoice_number: InvoiceNumber | None = field(None, index=True, link=INVOICE_LINK, mention="the invoice number")
    created: DateTime


# -- shared rules ----------------------------------------------------------------------------------


def _cents(amount: float) -> int:
    return round(amount * 100)


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


def _created_between(q: Any, created_from: str | None, created_to: str | None, column: str = "created") -> Any:
    if created_from:
        q.compare(column, ">=", _day_bounds(created_from, "created_from")[0])
    if created_to:
        q.compare(column, "<=", _day_bounds(created_to, "created_to")[1])
    return q


def _customer_id_of(ctx: ToolContext, email: str | None) -> str | None:
    """The id of the customer with this email ("" when nobody has it, so a filter matches nothing)."""
    if email is None:
        return None
    customer = ctx.find(Customer, email=email.strip().lower())
    return customer.id if customer else ""


def _find_customer(ctx: ToolContext, customer_id: str | None, customer_email: str | None) -> Customer:
    if bool(customer_id) == bool(customer_email):
        raise ToolError.invalid_argument("Pass exactly one of customer_id or customer_email.")
    if customer_id:
        return ctx.get(Customer, customer_id, "customer", "Use list_customers to find customer ids.")
    address = (customer_email or "").strip().lower()
    customer = ctx.find(Customer, email=address)
    if customer is None:
        raise ToolError.not_found(
            "customer",
            address,
            "No customer has that email. Use list_customers to search, or create_customer to add them.",
        )
    return customer


def _known_invoice(ctx: ToolContext, invoice_number: str | None) -> str | None:
    """An accounting invoice number, normalised; one the books do not hold is refused."""
    if invoice_number is None:
        return None
    number = invoice_number.strip().upper()
    if ctx.world.plan.invoice(number) is None:
        invoices = ctx.world.plan.invoices
        raise ToolError.not_found(
            "invoice", number,
            f"Accounting holds invoices {invoices[0].number} to {invoices[-1].number}; use accounting's list_invoices "
            "or the invoice_number of an existing charge to find the right one.",
        )
    return number


def _charge(ctx: ToolContext, charge_id: str, hint: str = "Use list_charges to find charge ids.") -> Charge:
    return ctx.get(Charge, charge_id, "charge", hint)


# -- seed ----------------------------------------------------------------------------------------


#: How far back one-off purchases go, in days.
_PURCHASE_DAYS = 200


@dataclass(slots=True)
class _Planned:
    """A seeded charge before ids are given out in time order, with what happens to it later."""

    email: str
    amount: float
    status: ChargeStatus
    description: str
    created: str
    kind: Literal["invoice", "unrecorded", "subscription", "purchase", "duplicate"]
    invoice: str | None = None
    failure: tuple[str, str] | None = None
    has_twin: bool = False  # another charge duplicates this one
    refund_as_duplicate: bool = False  # this duplicate was already caught and refunded
    id: str = ""
    refunded: float = 0.0
    disputed: bool = False


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    org_name = {o.id: o.name for o in world.organisations}
    # Customers signed up before their oldest charge: the books' first invoice or the oldest purchase.
    oldest = max(world.shape.history_days, _PURCHASE_DAYS)
    customers = [
        Customer(
            id=ctx.new_id("cus"), name=p.name, email=p.email, phone=p.phone, company_name=org_name[p.organisation_id],
            address=p.address, currency=world.currency, card_brand=rng.choice(_CARD_BRANDS),
            card_last4=f"{rng.randint(0, 9999):04d}", created=ctx.days_from_now(-rng.randint(oldest + 10, oldest + 660)),
        )
        for p in world.customers
    ]
    ctx.insert_many(customers)
    by_email = {c.email: c for c in customers}
    planned = sorted(_planned_charges(ctx, rng, customers), key=lambda s: (s.created, s.email))
    for spec in planned:
        spec.id = ctx.new_id("ch")
    refunds, disputes = _refunds_and_disputes(ctx, rng, planned, by_email)
    ctx.insert_many(
        [
            Charge(
                id=s.id, customer_id=by_email[s.email].id, amount=s.amount,
                amount_captured=s.amount if s.status == "succeeded" else 0.0, amount_refunded=s.refunded,
                currency=world.currency, status=s.status, description=s.description, receipt_email=s.email,
                invoice_number=s.invoice, card_brand=by_email[s.email].card_brand,
                card_last4=by_email[s.email].card_last4, failure_code=s.failure[0] if s.failure else None,
                failure_message=s.failure[1] if s.failure else None, disputed=s.disputed, created=s.created,
            )
            for s in planned
        ]
    )
    ctx.insert_many(refunds)
    ctx.insert_many(disputes)
    _seed_payment_links(ctx, rng)


def _moment(ctx: ToolContext, rng: Random, day: date_cls) -> str:
    """A time on ``day``, never later than the frozen clock."""
    today = ctx.now.date()
    day = min(day, today)
    last_hour = ctx.now.hour - 1 if day == today else 21
    hour, minute, second = rng.randint(min(7, last_hour), last_hour), rng.randint(0, 59), rng.randint(0, 59)
    return f"{day.isoformat()}T{hour:02d}:{minute:02d}:{second:02d}Z"


def _planned_charges(ctx: ToolContext, rng: Random, customers: list[Customer]) -> list[_Planned]:
    world = ctx.world
    today = ctx.now.date()
    specs: list[_Planned] = []

    # The world's invoice charges: paid, declined, or paid but missing from the books; a duplicate is the
    # same charge again a few minutes after the first (the customer paid the invoice twice).
    firsts: dict[str, _Planned] = {}
    for charge in world.plan.charges:
        day = date_cls.fromisoformat(charge.date)
        status: ChargeStatus = "succeeded" if charge.succeeded else "failed"
        if charge.duplicate:
            original = firsts[charge.invoice_number]
            original.has_twin = True
            specs.append(replace(original, kind="duplicate", created=_minutes_after(original.created, rng.randint(1, 3)),
                                 has_twin=False))
            continue
        kind = "invoice" if charge.recorded or not charge.succeeded else "unrecorded"
        specs.append(
            _Planned(charge.email, charge.amount, status, f"Invoice {charge.invoice_number}", _moment(ctx, rng, day),
                     kind, charge.invoice_number, failure=None if charge.succeeded else rng.choice(_FAILURES))
        )
        firsts.setdefault(charge.invoice_number, specs[-1])

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
                _Planned(
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
        day = today - timedelta(days=rng.randint(0, 3) if recent else rng.randint(1, _PURCHASE_DAYS))
        failed = not recent and rng.random() < 0.07
        state: ChargeStatus = "pending" if recent else ("failed" if failed else "succeeded")
        specs.append(
            _Planned(
                customer.email, round(product.unit_price * quantity, 2), state, f"{quantity} x {product.name}",
                _moment(ctx, rng, day), "purchase", failure=rng.choice(_FAILURES) if failed else None,
            )
        )

    # Duplicates of other charges too: a subscription or a purchase charged twice, the last already refunded.
    succeeded = [s for s in specs if s.status == "succeeded" and s.created < ctx.days_from_now(-2)]
    others = [s for s in succeeded if s.kind in ("subscription", "purchase")]
    originals = rng.sample(others, 2)
    for n, original in enumerate(originals):
        original.has_twin = True
        specs.append(
            replace(original, kind="duplicate", created=_minutes_after(original.created, rng.randint(1, 3)),
                    has_twin=False, refund_as_duplicate=n == len(originals) - 1)
        )
    return specs


def _refunds_and_disputes(
    ctx: ToolContext, rng: Random, planned: list[_Planned], customers: dict[str, Customer]
) -> tuple[list[Refund], list[Dispute]]:
    currency = ctx.world.currency
    moves: list[tuple[str, _Planned, float, RefundReason]] = []  # (created, charge, amount, reason)
    for spec in planned:
        if spec.refund_as_duplicate:
            moves.append((_after(spec.created, 1), spec, spec.amount, "duplicate"))
    # Ordinary refunds only on purchases and subscriptions, never on invoice charges, so the
    # accounting books stay right; and never on the duplicate pairs.
    plain = [
        s for s in planned
        if s.status == "succeeded" and s.kind in ("purchase", "subscription") and not s.has_twin
        and s.created < ctx.days_from_now(-3)
    ]
    chosen = rng.sample(plain, 20)
    for i, spec in enumerate(chosen[:12]):
        amount = spec.amount if i % 2 == 0 else round(spec.amount * rng.choice((0.1, 0.25, 0.5)), 2)
        moves.append((_after(spec.created, rng.randint(1, 3)), spec, amount, "requested_by_customer"))
    refunds = []
    done = sorted((m for m in moves if m[0] <= ctx.now_iso), key=lambda m: (m[0], m[1].id))
    for created, spec, amount, reason in done:
        spec.refunded = round(spec.refunded + amount, 2)
        refunds.append(
            Refund(id=ctx.new_id("re"), charge_id=spec.id, customer_id=customers[spec.email].id, amount=amount,
                   currency=currency, reason=reason, created=created)
        )

    # Disputes on other charges. The oldest charges get the closed ones (won, lost) and the one whose
    # evidence deadline has passed; the rest await a response or are under review.
    candidates = sorted(chosen[12:], key=lambda s: s.created)
    outcomes: list[tuple[DisputeStatus, int]] = [
        ("lost", rng.randint(60, 90)), ("won", rng.randint(60, 90)), ("needs_response", 20),
        ("under_review", rng.randint(15, 30)), ("under_review", rng.randint(15, 30)),
        ("needs_response", rng.randint(1, 8)), ("needs_response", rng.randint(1, 8)),
        ("needs_response", rng.randint(1, 8)),
    ]
    opened = []
    for spec, (status, age_days) in zip(candidates, outcomes, strict=False):
        created = max(ctx.days_from_now(-age_days), _after(spec.created, 2))
        start = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ")
        submitted = min(ctx.iso(start + timedelta(days=3)), ctx.now_iso) if status != "needs_response" else None
        closed = min(ctx.iso(start + timedelta(days=30)), ctx.now_iso) if status in ("won", "lost") else None
        spec.disputed = True
        due = ctx.iso(start + timedelta(days=14))
        opened.append((created, spec, status, rng.choice(_DISPUTE_REASONS), submitted, closed, due))
    disputes = [
        Dispute(
            id=ctx.new_id("dp"), charge_id=spec.id, customer_id=customers[spec.email].id, amount=spec.amount,
            currency=currency, reason=reason, status=status,
            evidence=write(ctx.rng(f"words:dispute:{spec.id}"), _EVIDENCE) if submitted else None,
            evidence_submitted_at=submitted, evidence_due_by=due, created=created, closed_at=closed,
        )
        # ids follow time, as Stripe's do
        for created, spec, status, reason, submitted, closed, due in sorted(opened, key=lambda d: d[0])
    ]
    return refunds, disputes


def _minutes_after(moment: str, minutes: int) -> str:
    """A few minutes after ``moment`` the same day (seeded charges stay before 22:00)."""
    minute = int(moment[14:16]) + minutes
    hour = int(moment[11:13]) + minute // 60
    return f"{moment[:11]}{hour:02d}:{minute % 60:02d}{moment[16:]}"


#: What we sent the card network to contest a dispute.
_EVIDENCE = ("[Signed delivery receipt|Proof of delivery|The carrier's delivery confirmation] and [customer emails "
             "confirming the order|the customer's order confirmation|the emails where they approved the purchase][.|, plus "
             "the invoice.|, plus the usage logs.|; the service was used after the charge.]")


def _after(moment: str, days: int) -> str:
    return f"{(date_cls.fromisoformat(moment[:10]) + timedelta(days=days)).isoformat()}{moment[10:]}"


def _seed_payment_links(ctx: ToolContext, rng: Random) -> None:
    world = ctx.world
    today = ctx.now.date()
    drafts: list[dict[str, Any]] = []
    failed = [i for i in world.plan.invoices if i.card == "failed"]
    # Half the invoices whose card failed already got a link; the rest still need one.
    for inv in failed[: len(failed) // 2]:
        since_due = (today - date_cls.fromisoformat(inv.due_date)).days
        drafts.append(
            {
                "description": f"Payment for invoice {inv.number}", "unit_amount": inv.amount_due,
                "amount": inv.amount_due, "customer_email": inv.billing_email, "invoice_number": inv.number,
                "created": ctx.days_from_now(-rng.randint(0, min(5, since_due - 1))),
            }
        )
    catalogue = [p for p in world.products if p.category in ("services", "subscriptions", "merchandise")]
    for i, product in enumerate(rng.sample(catalogue, 10)):
        drafts.append(
            {"description": product.name, "product_sku": product.sku, "unit_amount": product.unit_price,
                 "amount": product.unit_price, "active": i >= 3, "created": ctx.days_from_now(-rng.randint(10, 300))}
        )
    links = []
    for draft in sorted(drafts, key=lambda d: d["created"]):
        link_id = ctx.new_id("plink")
        links.append(PaymentLink(id=link_id, url=_link_url(world.seed, link_id), currency=world.currency, **draft))
    ctx.insert_many(links)


# -- customers -------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look {query} up in payments", "find the payments customer {email}"))
def list_customers(
    ctx: ToolContext,
    query: str | None = None,
    email: EmailAddress | None = None,
    company_name: CompanyName | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Customer]:
    """List or search customers, alphabetically by name.

    Args:
        query: Words to match in the customer's name, email, phone or company (case-insensitive).
        email: Only the customer with exactly this email address.
        company_name: Only customers whose company name contains this text (case-insensitive).
        created_from: Only customers created on or after this date (YYYY-MM-DD).
        created_to: Only customers created on or before this date (YYYY-MM-DD).
        limit: Maximum number of customers to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Customer).search(query).contains("company_name", company_name)
    q.filter(email=email.strip().lower() if email else None)
    return _created_between(q, created_from, created_to).order_by("name").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the payments profile of {customer_id}",))
def get_customer(ctx: ToolContext, customer_id: CustomerId) -> Customer:
    """Get one customer by id, with their contact details and saved card.

    Args:
        customer_id: The customer's id, e.g. cus_0012.
    """
    return ctx.get(Customer, customer_id, "customer", "Use list_customers to find customer ids.")


@service.tool(
    "write", intent="create", phrases=("set {name} up as a payments customer", "add {email} as a customer in payments")
)
def create_customer(
    ctx: ToolContext,
    name: PersonName,
    email: EmailAddress,
    phone: PhoneNumber | None = None,
    company_name: CompanyName | None = None,
    address: Address | None = None,
    description: Text | None = None,
) -> Customer:
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
    existing = ctx.find(Customer, email=email)
    if existing:
        raise ToolError.conflict(
            f"Customer {existing.id} already has email {email}; use update_customer or charge them."
        )
    return ctx.insert(
        Customer(
            id=ctx.new_id("cus"), name=name.strip(), email=email, phone=phone,
            company_name=company_name.strip() if company_name else None, address=address,
            description=description.strip() if description and description.strip() else None,
            currency=ctx.world.currency, card_brand="visa", card_last4="4242", created=ctx.now_iso,
        )
    )


@service.tool(
    "write",
    intent="update",
    phrases=("update the payments details of {customer_id}", "change the email of {customer_id} to {email}"),
)
def update_customer(
    ctx: ToolContext,
    customer_id: CustomerId,
    name: PersonName | None = None,
    email: EmailAddress | None = None,
    phone: PhoneNumber | None = None,
    company_name: CompanyName | None = None,
    address: Address | None = None,
    description: Text | None = None,
) -> Customer:
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
    changes: dict[str, Any] = {"phone": phone, "address": address}
    if name is not None:
        if not name.strip():
            raise ToolError.invalid_argument("name must not be empty.")
        changes["name"] = name.strip()
    if email is not None:
        email = email.strip().lower()
        other = ctx.find(Customer, email=email)
        if other is not None and other.id != customer.id:
            raise ToolError.conflict(f"Email {email} already belongs to customer {other.id}.")
        changes["email"] = email
    if company_name is not None:
        changes["company_name"] = company_name.strip()
    if description is not None:
        changes["description"] = description.strip() or None
    return ctx.update(customer, **{k: v for k, v in changes.items() if v is not None or k == "description"})


# -- charges ---------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("check the charges of {customer_email}", "find the card payments for {invoice_number}"),
)
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
) -> Page[Charge]:
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
        query: Words to match in the description, invoice number, customer name or company (case-insensitive).
        limit: Maximum number of charges to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Charge).filter(
        customer_id=customer_id,
        status=status,
        invoice_number=invoice_number.strip().upper() if invoice_number else None,
    )
    if customer_email:
        address = customer_email.strip().lower()
        q.where_sql("customer_id = ? OR lower(receipt_email) = ?", _customer_id_of(ctx, address), address)
    _created_between(q, created_from, created_to)
    q.compare("amount", ">=", amount_min - 0.005 if amount_min is not None else None)
    q.compare("amount", "<=", amount_max + 0.005 if amount_max is not None else None)
    if query and query.strip():
        # A word matches the charge's own text or its customer's name or company (the kernel's search
        # covers one table; the customers it names are looked up first, with the same escaping).
        for word in check_search_text(query).split(" "):
            who = [c.id for c in ctx.query(Customer).search(word, "name", "company_name").all()]
            pattern = like_pattern(word)
            q.where_sql(
                "description LIKE ? ESCAPE '\\' OR invoice_number LIKE ? ESCAPE '\\' "
                f"OR customer_id IN ({', '.join('?' for _ in who) or 'NULL'})",
                pattern, pattern, *who,
            )
    return q.order_by("-created", "-id").page(limit, cursor)


@service.tool("read", intent="get", phrases=("look at charge {charge_id}", "check whether {charge_id} was refunded"))
def get_charge(ctx: ToolContext, charge_id: ChargeId) -> Charge:
    """Get one charge by id, with how much was captured and refunded and whether it is disputed.

    Args:
        charge_id: The charge's id, e.g. ch_0042.
    """
    return _charge(ctx, charge_id)


@service.tool(
    "write",
    intent="charge",
    phrases=(
        "charge {customer_email} {amount}",
        "take {amount} from the card of {customer_email} for {invoice_number}",
    ),
)
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
) -> Charge:
    """Charge a customer's saved card. With capture=false the money is only authorised (status
    pending) until capture_charge, within 7 days. A charge that pays an invoice names an invoice of
    the accounting books.

    Args:
        amount: The amount to charge, at least 0.50.
        customer_id: The customer to charge. Pass this or customer_email.
        customer_email: The email of the customer to charge, instead of customer_id.
        currency: ISO currency code; defaults to the customer's currency.
        description: What the charge is for; shown on the receipt.
        receipt_email: Where to send the receipt; defaults to the customer's email.
        invoice_number: The accounting invoice this charge pays, e.g. INV-0042 (see accounting's list_invoices).
        capture: Capture now (default) or only authorise (pending).
    """
    customer = _find_customer(ctx, customer_id, customer_email)
    if _cents(amount) < _cents(MIN_CHARGE):
        raise ToolError.invalid_argument(f"amount must be at least {MIN_CHARGE:.2f}.")
    invoice = _known_invoice(ctx, invoice_number)
    total = round(amount, 2)
    return ctx.insert(
        Charge(
            id=ctx.new_id("ch"), customer_id=customer.id, amount=total, amount_captured=total if capture else 0.0,
            currency=currency or customer.currency, status="succeeded" if capture else "pending",
            description=description.strip() if description and description.strip() else None,
            receipt_email=(receipt_email or customer.email).strip().lower(), invoice_number=invoice,
            card_brand=customer.card_brand, card_last4=customer.card_last4, created=ctx.now_iso,
        )
    )


@service.tool("write", intent="charge", phrases=("capture {charge_id}", "take the authorised payment on {charge_id}"))
def capture_charge(ctx: ToolContext, charge_id: ChargeId, amount: Money | None = None) -> Charge:
    """Capture a pending (authorised) charge, in full or in part; the uncaptured rest is released.
    Authorisations expire 7 days after the charge was made.

    Args:
        charge_id: The pending charge, e.g. ch_0042.
        amount: How much to capture (at most the authorised amount); defaults to all of it.
    """
    charge = _charge(ctx, charge_id, "Use list_charges with status=pending to find it.")
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
    return ctx.update(charge, amount_captured=captured, status="succeeded")


# -- refunds ---------------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="refund",
    phrases=("refund {charge_id}", "give back {amount} of {charge_id} because it was {reason}"),
)
def refund_charge(
    ctx: ToolContext,
    charge_id: ChargeId,
    amount: Money | None = None,
    reason: RefundReason | None = None,
) -> Refund:
    """Refund a succeeded charge, fully or partly. Refunds together cannot exceed what was captured;
    failed or pending charges cannot be refunded, nor can a charge with an open or lost dispute
    (answer the dispute instead).

    Args:
        charge_id: The charge to refund, e.g. ch_0042.
        amount: How much to refund; defaults to everything not yet refunded.
        reason: duplicate, fraudulent or requested_by_customer.
    """
    charge = _charge(ctx, charge_id)
    if charge.status == "failed":
        raise ToolError.invalid_state(f"Charge {charge.id} failed, so no money was taken; there is nothing to refund.")
    if charge.status == "pending":
        raise ToolError.invalid_state(
            f"Charge {charge.id} is pending (not captured); capture it first, or let it expire."
        )
    dispute = ctx.query(Dispute).where(charge_id=charge.id).order_by("-created").first()
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
    ctx.update(charge, amount_refunded=round(charge.amount_refunded + value, 2))
    return ctx.insert(
        Refund(id=ctx.new_id("re"), charge_id=charge.id, customer_id=charge.customer_id, amount=value,
               currency=charge.currency, reason=reason, created=ctx.now_iso)
    )


@service.tool(
    "read",
    intent="find",
    phrases=("check the refunds of {customer_email}", "find the refunds on {charge_id}"),
)
def list_refunds(
    ctx: ToolContext,
    charge_id: ChargeId | None = None,
    customer_email: EmailAddress | None = None,
    reason: RefundReason | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Refund]:
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
    q = ctx.query(Refund).filter(charge_id=charge_id, customer_id=_customer_id_of(ctx, customer_email), reason=reason)
    return _created_between(q, created_from, created_to).order_by("-created", "-id").page(limit, cursor)


@service.tool("read", intent="get", phrases=("look up refund {refund_id}",))
def get_refund(ctx: ToolContext, refund_id: RefundId) -> Refund:
    """Get one refund by id.

    Args:
        refund_id: The refund's id, e.g. re_0007.
    """
    return ctx.get(Refund, refund_id, "refund", "Use list_refunds to find refund ids.")


# -- disputes --------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("check the disputes waiting for a response", "find the dispute on {charge_id}"),
)
def list_disputes(
    ctx: ToolContext,
    status: DisputeStatus | None = None,
    charge_id: ChargeId | None = None,
    customer_email: EmailAddress | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Dispute]:
    """List disputes (chargebacks), soonest evidence deadline first.

    Args:
        status: needs_response (waiting for our evidence), under_review (evidence sent), won or lost.
        charge_id: Only the dispute on this charge.
        customer_email: Only disputes raised by the customer with this email.
        limit: Maximum number of disputes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Dispute).filter(status=status, charge_id=charge_id, customer_id=_customer_id_of(ctx, customer_email))
    return q.order_by("evidence_due_by").page(limit, cursor)


def _dispute(ctx: ToolContext, dispute_id: str) -> Dispute:
    return ctx.get(Dispute, dispute_id, "dispute", "Use list_disputes to find dispute ids.")


@service.tool(
    "write",
    intent="submit",
    phrases=("answer dispute {dispute_id} with {evidence}", "send the bank our evidence for {dispute_id}: {evidence}"),
)
def update_dispute(ctx: ToolContext, dispute_id: DisputeId, evidence: Text, submit: bool = True) -> Dispute:
    """Respond to a dispute with evidence. With submit=true (default) the evidence goes to the bank
    and the dispute moves to under_review; with submit=false it is only saved as a draft. Only
    disputes in needs_response can be answered, and only before their evidence deadline.

    Args:
        dispute_id: The dispute, e.g. dp_0003.
        evidence: The evidence: what was sold, delivery proof, the customer's messages, the refund policy.
        submit: Send it to the bank now (true) or keep it as a draft (false).
    """
    dispute = _dispute(ctx, dispute_id)
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
    if submit:
        return ctx.update(dispute, evidence=evidence.strip(), status="under_review", evidence_submitted_at=ctx.now_iso)
    return ctx.update(dispute, evidence=evidence.strip())


@service.tool("write", intent="close", phrases=("accept dispute {dispute_id}", "stop contesting {dispute_id}"))
def close_dispute(ctx: ToolContext, dispute_id: DisputeId) -> Dispute:
    """Accept a dispute: we stop contesting it and it is closed as lost (the customer keeps the money).
    Only disputes still in needs_response can be accepted.

    Args:
        dispute_id: The dispute to accept, e.g. dp_0003.
    """
    dispute = _dispute(ctx, dispute_id)
    if dispute.status == "under_review":
        raise ToolError.invalid_state(
            f"Dispute {dispute.id} already has evidence under review; wait for the bank's decision."
        )
    if dispute.status in ("won", "lost"):
        raise ToolError.invalid_state(f"Dispute {dispute.id} is already closed ({dispute.status}).")
    return ctx.update(dispute, status="lost", closed_at=ctx.now_iso)


# -- payment links ---------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="invoice",
    phrases=("make a payment link for {invoice_number}", "send {customer_email} a link to pay {amount}"),
)
def create_payment_link(
    ctx: ToolContext,
    product_sku: ProductSKU | None = None,
    amount: Money | None = None,
    description: Text | None = None,
    quantity: Quantity = 1,
    customer_email: EmailAddress | None = None,
    invoice_number: InvoiceNumber | None = None,
) -> PaymentLink:
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
    invoice = _known_invoice(ctx, invoice_number)
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
        existing = ctx.find(PaymentLink, invoice_number=invoice, active=True)
        if existing:
            raise ToolError.conflict(
                f"Payment link {existing.id} is already active for invoice {invoice}; reuse it, or deactivate it "
                "with update_payment_link first."
            )
    link_id = ctx.new_id("plink")
    return ctx.insert(
        PaymentLink(
            id=link_id, url=_link_url(ctx.world.seed, link_id), description=label, product_sku=sku, quantity=quantity,
            unit_amount=unit, amount=round(unit * quantity, 2), currency=ctx.world.currency,
            customer_email=customer_email.strip().lower() if customer_email else None, invoice_number=invoice,
            created=ctx.now_iso,
        )
    )


@service.tool(
    "read",
    intent="find",
    phrases=("check the payment links for {invoice_number}", "find the links made for {customer_email}"),
)
def list_payment_links(
    ctx: ToolContext,
    active: bool | None = None,
    customer_email: EmailAddress | None = None,
    invoice_number: InvoiceNumber | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[PaymentLink]:
    """List payment links, newest first.

    Args:
        active: true for links that still accept payments, false for deactivated ones.
        customer_email: Only links made for this email.
        invoice_number: Only links for this accounting invoice.
        limit: Maximum number of links to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(PaymentLink).filter(
        active=active,
        customer_email=customer_email.strip().lower() if customer_email else None,
        invoice_number=invoice_number.strip().upper() if invoice_number else None,
    )
    return q.order_by("-created", "-id").page(limit, cursor)


@service.tool(
    "write", intent="update", phrases=("switch off payment link {payment_link_id}", "turn {payment_link_id} back on")
)
def update_payment_link(ctx: ToolContext, payment_link_id: PaymentLinkId, active: bool) -> PaymentLink:
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
        other = ctx.find(PaymentLink, invoice_number=link.invoice_number, active=True)
        if other is not None:
            raise ToolError.conflict(f"Payment link {other.id} is already active for invoice {link.invoice_number}.")
    return ctx.update(link, active=active)
