"""Commerce: the online store's products, stock, customers, orders, fulfilments, returns, refunds and
discount codes (modelled on Shopify's Admin API).

Stock works as in Shopify: a variant's ``on_hand`` units are in the warehouse; ``committed`` units are
promised to open orders that have not shipped; ``available`` is what can still be sold. Shipping an
order (``fulfill_order``) takes its units off ``on_hand``; a restocked return puts them back.

The rules the store keeps (its policy, ``get_store_policy``, states them): an order ships once it is
paid, and its goods ship with a carrier's tracking number (buy the label in shipping first); an order
with anything shipped cannot be cancelled, only returned; returns are accepted within the policy's
window from the day the items shipped, never for final-sale product types; a refund never exceeds what
was paid minus what was already refunded; a discount code works only while it is active, within its
dates, above its minimum and under its usage limit.

The catalogue, the orders and what happened to them come from the World's commerce plan
(``mcp_services.kernel.plans.commerce``): customers are the World's people outside the home
organisation, and every shipped order has a shipment in the shipping service with the same order id,
number, address, items and tracking number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, Field, TypeAdapter, WithJsonSchema
from typing_extensions import TypedDict

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import json_text
from mcp_services.kernel.plans.commerce import (
    CARRIER_NAMES,
    FIRST_ORDER_NUMBER,
    CancelReason,
    Carrier,
    DeclineReason,
    DiscountKind,
    PlannedOrder,
    ReturnReason,
    ShippingMethod,
    commerce_plan,
    price_order,
    refund_value,
    tracking_url,
)
from mcp_services.kernel.records import RecordAccess, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    URL,
    Address,
    City,
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
    ShortText,
    Tag,
    Text,
)

ProductId = EntityId("commerce.product")
VariantId = EntityId("commerce.variant")
CustomerId = EntityId("commerce.customer")
OrderId = EntityId("commerce.order")
LineItemId = EntityId("commerce.line_item")
FulfillmentId = EntityId("commerce.fulfillment")
ReturnId = EntityId("commerce.return")
RefundId = EntityId("commerce.refund")
DiscountCodeId = EntityId("commerce.discount_code")
TRACKING_LINK = "shipping.label.tracking_number"

ProductStatus = Literal["active", "draft", "archived"]
FinancialStatus = Literal["pending", "paid", "partially_refunded", "refunded", "voided"]
FulfillmentStatus = Literal["unfulfilled", "partial", "fulfilled"]
OrderStatus = Literal["open", "cancelled"]
ReturnStatus = Literal["requested", "open", "closed", "declined", "cancelled"]
DiscountState = Literal["active", "scheduled", "expired", "disabled"]
StockLevel = Literal["in_stock", "low", "out_of_stock"]
AdjustReason = Literal["received", "correction", "damaged", "shrinkage", "restock"]
Delta = Annotated[int, Field(ge=-100_000, le=100_000)]

#: Available units at or below this count as low stock.
LOW_STOCK = 5
_TRACKING_FORMATS = {"ups": r"^1Z[0-9A-Z]{16}$", "fedex": r"^\d{12}$", "usps": r"^\d{20,22}$"}
_OPEN_RETURNS = ("requested", "open", "closed")

service = Service(
    "commerce",
    "An online store: products with variants and stock, customers, orders, fulfilments, returns, refunds and "
    "discount codes.",
    title="Commerce",
)


class VariantSummary(TypedDict):
    id: str
    sku: str
    title: str
    price: float
    available: int | None


class LineSummary(TypedDict):
    """One line of an order as the order shows it."""

    id: str
    sku: str
    title: str
    variant_title: str
    quantity: int
    price: float
    requires_shipping: bool
    fulfilled_quantity: int
    returned_quantity: int


class FulfilledItem(TypedDict):
    line_item_id: str
    sku: str
    quantity: int


class ReturnedItem(TypedDict):
    line_item_id: str
    sku: str
    quantity: int
    reason: str


class RefundedItem(TypedDict):
    line_item_id: str
    quantity: int


VariantSummaries = Annotated[
    list[VariantSummary], WithJsonSchema({"type": "array", "items": TypeAdapter(VariantSummary).json_schema()})
]
LineSummaries = Annotated[
    list[LineSummary], WithJsonSchema({"type": "array", "items": TypeAdapter(LineSummary).json_schema()})
]
FulfilledItems = Annotated[
    list[FulfilledItem], WithJsonSchema({"type": "array", "items": TypeAdapter(FulfilledItem).json_schema()})
]
ReturnedItems = Annotated[
    list[ReturnedItem], WithJsonSchema({"type": "array", "items": TypeAdapter(ReturnedItem).json_schema()})
]
RefundedItems = Annotated[
    list[RefundedItem], WithJsonSchema({"type": "array", "items": TypeAdapter(RefundedItem).json_schema()})
]


# -- derived values over whole results ------------------------------------------------------------------


def _committed_sql(variant: str) -> str:
    """Units of a variant promised to open orders that have not shipped (SQL over its id column)."""
    return (
        "COALESCE((SELECT SUM(li.quantity - li.fulfilled_quantity) FROM line_items li "
        "JOIN orders o ON o.id = li.order_id "
        f"WHERE li.variant_id = {variant} AND o.status = 'open'), 0)"
    )


def _committed(db: RecordAccess, variant_ids: Sequence[str]) -> dict[str, int]:
    if not variant_ids:
        return {}
    marks = ", ".join("?" for _ in variant_ids)
    rows = db.sql(
        "SELECT li.variant_id, SUM(li.quantity - li.fulfilled_quantity) FROM line_items li JOIN orders o "
        f"ON o.id = li.order_id WHERE o.status = 'open' AND li.variant_id IN ({marks}) GROUP BY li.variant_id",
        *variant_ids,
    )
    return {str(v): int(n) for v, n in rows}


def _variant_committed(db: RecordAccess, variants: Sequence[Any]) -> list[int]:
    found = _committed(db, [v.id for v in variants])
    return [found.get(v.id, 0) if v.inventory_tracked else 0 for v in variants]


def _variant_available(db: RecordAccess, variants: Sequence[Any]) -> list[int | None]:
    found = _committed(db, [v.id for v in variants])
    return [v.on_hand - found.get(v.id, 0) if v.inventory_tracked else None for v in variants]


def _product_variants(db: RecordAccess, products: Sequence[Any]) -> list[list[VariantSummary]]:
    variants = db.query(Variant).where_in("product_id", [p.id for p in products]).order_by("id").all()
    available = dict(zip((v.id for v in variants), _variant_available(db, variants), strict=True))
    by_product: dict[str, list[VariantSummary]] = {}
    for v in variants:
        by_product.setdefault(v.product_id, []).append(
            VariantSummary(id=v.id, sku=v.sku, title=v.title, price=v.price, available=available[v.id])
        )
    return [by_product.get(p.id, []) for p in products]


def _returned_by_line(db: RecordAccess, order_ids: Sequence[str]) -> dict[str, int]:
    """Units of each line item in returns that were not declined or cancelled."""
    returned: dict[str, int] = {}
    for ret in db.query(Return).where_in("order_id", order_ids).where_in("status", _OPEN_RETURNS).all():
        for item in ret.items:
            returned[item["line_item_id"]] = returned.get(item["line_item_id"], 0) + int(item["quantity"])
    return returned


def _order_lines(db: RecordAccess, orders: Sequence[Any]) -> list[list[LineSummary]]:
    ids = [o.id for o in orders]
    lines = db.query(LineItem).where_in("order_id", ids).order_by("id").all()
    returned = _returned_by_line(db, ids)
    by_order: dict[str, list[LineSummary]] = {}
    for li in lines:
        by_order.setdefault(li.order_id, []).append(
            LineSummary(
                id=li.id,
                sku=li.sku,
                title=li.title,
                variant_title=li.variant_title,
                quantity=li.quantity,
                price=li.price,
                requires_shipping=li.requires_shipping,
                fulfilled_quantity=li.fulfilled_quantity,
                returned_quantity=returned.get(li.id, 0),
            )
        )
    return [by_order.get(o.id, []) for o in orders]


def _customer_totals(db: RecordAccess, customers: Sequence[Any], column: str) -> list[Any]:
    marks = ", ".join("?" for _ in customers)
    rows = db.sql(
        "SELECT customer_id, COUNT(*), SUM(CASE WHEN financial_status IN ('paid', 'partially_refunded', 'refunded') "
        "THEN total_price - total_refunded ELSE 0 END) "
        f"FROM orders WHERE customer_id IN ({marks}) GROUP BY customer_id",
        *[c.id for c in customers],
    )
    found = {r[0]: (int(r[1]), round(float(r[2] or 0), 2)) for r in rows}
    index = 0 if column == "count" else 1
    return [found.get(c.id, (0, 0.0))[index] for c in customers]


def _times_used(db: RecordAccess, codes: Sequence[Any]) -> list[int]:
    marks = ", ".join("?" for _ in codes)
    rows = db.sql(
        f"SELECT upper(discount_code), COUNT(*) FROM orders WHERE upper(discount_code) IN ({marks}) "
        "GROUP BY upper(discount_code)",
        *[c.code for c in codes],
    )
    found = {str(code): int(n) for code, n in rows}
    return [found.get(c.code, 0) for c in codes]


# -- entities --------------------------------------------------------------------------------------------


@service.entity(
    table="products", prefix="prod", label="title", search=("title", "handle", "product_type", "description")
)
class Product:
    """A product the store sells, in one or more variants."""

    id: ProductId
    title: ProductName = field(index=True)
    handle: str = field(unique=True)
    product_type: str
    vendor: CompanyName = field(role="vendor")
    description: Text
    option_name: str | None = None
    status: ProductStatus = "active"
    requires_shipping: bool
    sku: ProductSKU = field(unique=True, description="The product's catalogue SKU (its single variant's SKU)")
    tags: list[str]
    created_at: DateTime

    variants = derived(VariantSummaries, batch=_product_variants, description="Each variant with what is available")


@service.entity(table="variants", prefix="var", label="sku", search=("sku", "title"))
class Variant:
    """One sellable version of a product (a size, a colour) with its own SKU, price and stock."""

    id: VariantId
    product_id: ProductId
    sku: ProductSKU = field(unique=True, mention="the SKU")
    title: str
    price: Money = field(mention="the price")
    grams: Quantity
    requires_shipping: bool
    inventory_tracked: bool
    on_hand: int = field(description="Units in the warehouse")
    updated_at: DateTime

    product_title = joined(ProductName, via="product_id", field="title")
    committed = derived(int, batch=_variant_committed, description="Units promised to open orders not yet shipped")
    available = derived(
        int | None, batch=_variant_available, description="on_hand minus committed; null if not tracked"
    )


@service.entity(table="customers", prefix="cust", label="email", search=("first_name", "last_name", "email", "company"))
class Customer:
    """Someone who buys from the store."""

    id: CustomerId
    first_name: str
    last_name: str = field(index=True)
    email: EmailAddress = field(unique=True, role="self", link="crm.contact.email")
    phone: PhoneNumber | None = None
    company: CompanyName | None = field(None, role="employer", link="crm.company.name")
    default_address: Address | None = field(None, mention="the address")
    city: City | None = None
    tags: list[str]
    accepts_marketing: bool = False
    note: Text | None = None
    created_at: DateTime

    name = derived(PersonName, lambda c: f"{c.first_name} {c.last_name}")
    orders_count = derived(int, batch=lambda db, cs: _customer_totals(db, cs, "count"))
    total_spent = derived(Money, batch=lambda db, cs: _customer_totals(db, cs, "spent"))


@service.entity(
    table="orders",
    prefix="ord",
    label="name",
    search=("name", "email", "customer_name", "shipping_name"),
    state=StateDef(field="status", values=["open", "cancelled"], initial="open", terminal=["cancelled"]),
)
class Order:
    """An order a customer placed: what it costs, whether it is paid, shipped, refunded or cancelled."""

    id: OrderId
    name: str = field(unique=True, mention="the order number", description="The order number customers see, e.g. #1042")
    customer_id: CustomerId = field(role="customer")
    customer_name: PersonName = field(role="customer")
    email: EmailAddress = field(index=True, role="customer")
    phone: PhoneNumber | None = None
    shipping_name: PersonName = field(role="recipient")
    shipping_address: Address | None = field(None, mention="the shipping address")
    shipping_method: ShippingMethod
    currency: Currency
    subtotal_price: Money
    total_discounts: Money
    shipping_price: Money
    total_price: Money = field(mention="the order total")
    total_refunded: Money = 0.0
    financial_status: FinancialStatus
    fulfillment_status: FulfillmentStatus = "unfulfilled"
    status: OrderStatus = "open"
    discount_code: str | None = field(None, mention="the discount code")
    note: Text | None = None
    tags: list[str]
    cancel_reason: CancelReason | None = None
    cancelled_at: DateTime | None = None
    created_at: DateTime = field(mention="when the order was placed")
    updated_at: DateTime

    line_items = derived(
        LineSummaries, batch=_order_lines, description="The order's lines with shipped and returned units"
    )
    refundable = derived(
        Money,
        lambda o: (
            round(o.total_price - o.total_refunded, 2) if o.financial_status in ("paid", "partially_refunded") else 0.0
        ),
        description="What can still be refunded: paid minus already refunded",
    )


@service.entity(table="line_items", prefix="li", label="title")
class LineItem:
    """One line of an order: a variant, how many, at what price, and how many shipped."""

    id: LineItemId
    order_id: OrderId
    variant_id: VariantId
    sku: ProductSKU = field(index=True)
    title: ProductName
    variant_title: str
    quantity: Quantity
    price: Money
    requires_shipping: bool
    fulfilled_quantity: Quantity = 0


@service.entity(
    table="fulfillments",
    prefix="ful",
    state=StateDef(field="status", values=["success", "cancelled"], initial="success", terminal=["cancelled"]),
)
class Fulfillment:
    """Items of an order handed to a carrier (with its tracking number) or, for services, delivered."""

    id: FulfillmentId
    order_id: OrderId
    status: Literal["success", "cancelled"] = "success"
    tracking_company: str | None = field(None, role="carrier")
    tracking_number: str | None = field(None, index=True, link=TRACKING_LINK, mention="the tracking number")
    tracking_url: URL | None = field(None, mention="the tracking link")
    items: FulfilledItems
    notify_customer: bool = True
    created_at: DateTime = field(mention="when the order shipped")
    estimated_delivery_at: DateTime | None = field(None, mention="the promised delivery date")
    delivered_at: DateTime | None = field(None, description="When the carrier scanned it delivered (None: not yet)")
    cancelled_at: DateTime | None = None

    order_name = joined(str, via="order_id", field="name")
    delivered_late = derived(bool, lambda f: bool(f.delivered_at and f.estimated_delivery_at
                                                  and f.delivered_at > f.estimated_delivery_at))


@service.entity(
    table="returns",
    prefix="ret",
    state=StateDef(
        field="status",
        values=["requested", "open", "closed", "declined", "cancelled"],
        initial="requested",
        terminal=["closed", "declined", "cancelled"],
        transitions={"requested": ["open", "declined"], "open": ["closed", "cancelled"]},
    ),
)
class Return:
    """A customer's request to send items back: requested, approved (open), refunded (closed) or declined."""

    id: ReturnId = field(mention="the return id")
    order_id: OrderId
    status: ReturnStatus = "requested"
    items: ReturnedItems
    customer_note: Text | None = None
    decline_reason: DeclineReason | None = None
    decline_note: Text | None = None
    return_tracking_number: str | None = field(None, link=TRACKING_LINK, mention="the return tracking number")
    requested_at: DateTime
    decided_at: DateTime | None = None
    closed_at: DateTime | None = None

    order_name = joined(str, via="order_id", field="name")
    customer_email = joined(EmailAddress, via="order_id", field="email")


@service.entity(table="refunds", prefix="rfd")
class Refund:
    """Money given back on an order, for a return, a cancellation or as a goodwill gesture."""

    id: RefundId = field(mention="the refund id")
    order_id: OrderId
    return_id: ReturnId | None = None
    amount: Money = field(mention="the refund amount")
    currency: Currency
    reason: ShortText
    note: Text | None = None
    restocked: bool = False
    items: RefundedItems
    created_at: DateTime

    order_name = joined(str, via="order_id", field="name")


@service.entity(table="discount_codes", prefix="dsc", label="code", search=("code", "title"))
class DiscountCode:
    """A code customers enter at checkout for money off or free shipping."""

    id: DiscountCodeId
    code: str = field(unique=True, mention="the discount code")
    title: ShortText
    kind: DiscountKind
    value: float = field(description="Percent off (percentage), amount off (fixed_amount), 0 for free_shipping")
    minimum_subtotal: Money = 0.0
    starts_at: DateTime
    ends_at: DateTime | None = field(None, mention="when the code expires")
    usage_limit: int | None = None
    once_per_customer: bool = False
    disabled: bool = False
    created_at: DateTime

    times_used = derived(int, batch=_times_used)


# -- seed ------------------------------------------------------------------------------------------------

_CUSTOMER_TAGS = ("wholesale", "repeat buyer", "vip", "net-30")
_ORDER_TAGS = ("gift", "rush", "b2b", "event")


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    plan = commerce_plan(world)
    rng = ctx.rng("seed")
    products, variants = [], []
    for planned in plan.products:
        product_id = ctx.new_id("prod")
        products.append(
            Product(
                id=product_id,
                title=planned.title,
                handle=planned.handle,
                product_type=planned.product_type,
                vendor=world.home.name,
                description=planned.description,
                option_name=planned.option_name,
                status=planned.status,
                requires_shipping=planned.requires_shipping,
                sku=planned.sku,
                tags=[planned.product_type] + (["new"] if planned.status == "draft" else []),
                created_at=planned.created_at,
            )
        )
        for v in planned.variants:
            variants.append(
                Variant(
                    id=ctx.new_id("var"),
                    product_id=product_id,
                    sku=v.sku,
                    title=v.title,
                    price=v.price,
                    grams=v.grams,
                    requires_shipping=planned.requires_shipping,
                    inventory_tracked=v.tracked,
                    on_hand=v.on_hand,
                    updated_at=planned.created_at,
                )
            )
    ctx.insert_many(products)
    ctx.insert_many(variants)
    variant_of = {v.sku: v for v in variants}

    first_order = {o.customer.email: o.created_at for o in reversed(plan.orders)}
    customers = []
    for person in world.customers:
        since = first_order.get(person.email) or ctx.days_from_now(-rng.randint(30, 600))
        joined_at = ctx.iso(datetime.strptime(since, "%Y-%m-%dT%H:%M:%SZ") - timedelta(days=rng.randint(0, 200)))
        customers.append(
            Customer(
                id=ctx.new_id("cust"),
                first_name=person.first_name,
                last_name=person.last_name,
                email=person.email,
                phone=person.phone,
                company=world.organisation(person.organisation_id).name,
                default_address=person.address,
                city=person.city,
                tags=sorted(rng.sample(_CUSTOMER_TAGS, rng.choice((0, 0, 1, 2)))),
                accepts_marketing=rng.random() < 0.6,
                created_at=joined_at,
            )
        )
    ctx.insert_many(customers)
    customer_of = {c.email: c for c in customers}

    orders, lines, fulfillments, returns, refunds = [], [], [], [], []
    for planned in plan.orders:
        if ctx.new_id("ord") != planned.id:
            raise RuntimeError(f"commerce order ids must follow the plan: expected {planned.id}")
        order, order_lines = _seeded_order(ctx, rng, planned, customer_of[planned.customer.email].id, variant_of)
        orders.append(order)
        lines += order_lines
        for f in planned.fulfillments:
            fulfillments.append(
                Fulfillment(
                    id=ctx.new_id("ful"),
                    order_id=order.id,
                    tracking_company=CARRIER_NAMES[f.carrier] if f.carrier else None,
                    tracking_number=f.tracking_number,
                    tracking_url=f.tracking_url,
                    items=[
                        FulfilledItem(line_item_id=order_lines[i].id, sku=order_lines[i].sku, quantity=q)
                        for i, q in f.lines
                    ],
                    created_at=f.created_at,
                    estimated_delivery_at=f.estimated_delivery_at,
                    delivered_at=f.delivered_at,
                )
            )
        return_ids = []
        for r in planned.returns:
            return_ids.append(ctx.new_id("ret"))
            returns.append(
                Return(
                    id=return_ids[-1],
                    order_id=order.id,
                    status=r.status,
                    items=[
                        ReturnedItem(line_item_id=order_lines[i].id, sku=order_lines[i].sku, quantity=q, reason=why)
                        for i, q, why in r.lines
                    ],
                    customer_note=r.customer_note,
                    decline_reason=r.decline_reason,
                    decline_note="Pantry items are final sale under our return policy." if r.decline_reason else None,
                    return_tracking_number=r.tracking_number,
                    requested_at=r.requested_at,
                    decided_at=r.decided_at,
                    closed_at=r.closed_at,
                )
            )
        for refund in planned.refunds:
            ret = planned.returns[refund.return_index] if refund.return_index is not None else None
            refunds.append(
                Refund(
                    id=ctx.new_id("rfd"),
                    order_id=order.id,
                    return_id=return_ids[refund.return_index] if refund.return_index is not None else None,
                    amount=refund.amount,
                    currency=world.currency,
                    reason=refund.reason,
                    restocked=refund.restocked,
                    items=[
                        RefundedItem(line_item_id=order_lines[i].id, quantity=q)
                        for i, q, _ in (ret.lines if ret else ())
                    ],
                    created_at=refund.created_at,
                )
            )
    ctx.insert_many(orders)
    ctx.insert_many(lines)
    ctx.insert_many(fulfillments)
    ctx.insert_many(returns)
    ctx.insert_many(refunds)
    ctx.insert_many(
        [
            DiscountCode(
                id=ctx.new_id("dsc"),
                code=d.code,
                title=d.title,
                kind=d.kind,
                value=d.value,
                minimum_subtotal=d.minimum_subtotal,
                starts_at=d.starts_at,
                ends_at=d.ends_at,
                usage_limit=d.usage_limit,
                once_per_customer=d.once_per_customer,
                disabled=d.disabled,
                created_at=d.starts_at,
            )
            for d in plan.discounts
        ]
    )


def _seeded_order(
    ctx: ToolContext, rng: Any, planned: PlannedOrder, customer_id: str, variant_of: dict[str, Variant]
) -> tuple[Order, list[LineItem]]:
    last_change = max(
        [planned.created_at, planned.cancelled_at or ""]
        + [f.created_at for f in planned.fulfillments]
        + [r.created_at for r in planned.refunds]
    )
    order = Order(
        id=planned.id,
        name=planned.name,
        customer_id=customer_id,
        customer_name=planned.customer.name,
        email=planned.customer.email,
        phone=planned.customer.phone,
        shipping_name=planned.customer.name,
        shipping_address=planned.shipping_address if planned.shipping_method != "none" else None,
        shipping_method=planned.shipping_method,
        currency=ctx.world.currency,
        subtotal_price=planned.subtotal,
        total_discounts=planned.total_discounts,
        shipping_price=planned.shipping_price,
        total_price=planned.total,
        total_refunded=planned.total_refunded,
        financial_status=planned.financial_status,  # type: ignore[arg-type]
        fulfillment_status=planned.fulfillment_status,  # type: ignore[arg-type]
        status="cancelled" if planned.cancelled_at else "open",
        discount_code=planned.discount_code,
        note=planned.note,
        tags=sorted(rng.sample(_ORDER_TAGS, 1)) if rng.random() < 0.15 else [],
        cancel_reason=planned.cancel_reason,
        cancelled_at=planned.cancelled_at,
        created_at=planned.created_at,
        updated_at=last_change,
    )
    lines = [
        LineItem(
            id=ctx.new_id("li"),
            order_id=planned.id,
            variant_id=variant_of[line.sku].id,
            sku=line.sku,
            title=line.product_title,
            variant_title=line.variant_title,
            quantity=line.quantity,
            price=line.price,
            requires_shipping=line.requires_shipping,
            fulfilled_quantity=planned.fulfilled_quantity(i),
        )
        for i, line in enumerate(planned.lines)
    ]
    return order, lines


# -- shared rules ------------------------------------------------------------------------------------------


def _cents(amount: float) -> int:
    return round(amount * 100)


def _policy(ctx: ToolContext) -> Any:
    return commerce_plan(ctx.world).policy


def _order(ctx: ToolContext, order_id: str) -> Order:
    return ctx.get(
        Order, order_id, "order", "Use list_orders (e.g. with name='#1042' or the customer's email) to find it."
    )


def _sku(text: str) -> str:
    return text.strip().upper()


def _parse_time(moment: str) -> datetime:
    return datetime.strptime(moment, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _next_order_name(ctx: ToolContext) -> str:
    row = ctx.sql("SELECT MAX(CAST(substr(name, 2) AS INTEGER)) FROM orders")
    highest = int(row[0][0]) if row and row[0][0] is not None else FIRST_ORDER_NUMBER - 1
    return f"#{highest + 1}"


def _find_discount(ctx: ToolContext, code: str) -> DiscountCode:
    found = ctx.query(DiscountCode).where_sql("upper(code) = ?", code.strip().upper()).first()
    if found is None:
        raise ToolError.not_found("discount code", code.strip(), "Use list_discount_codes to see the store's codes.")
    return found


def _check_discount(ctx: ToolContext, code: str, subtotal: float, email: str) -> DiscountCode:
    """The code, if it can be used now on this order; a clear refusal saying why not otherwise."""
    discount = _find_discount(ctx, code)
    now = ctx.now_iso
    if discount.disabled:
        raise ToolError.invalid_state(f"Discount code {discount.code} is disabled; it cannot be used.")
    if now < discount.starts_at:
        raise ToolError.invalid_state(f"Discount code {discount.code} only starts on {discount.starts_at[:10]}.")
    if discount.ends_at is not None and now > discount.ends_at:
        raise ToolError.invalid_state(f"Discount code {discount.code} expired on {discount.ends_at[:10]}.")
    if subtotal < discount.minimum_subtotal:
        raise ToolError.invalid_state(
            f"Discount code {discount.code} needs a subtotal of at least {discount.minimum_subtotal:.2f}; "
            f"this order's is {subtotal:.2f}."
        )
    used = _times_used(ctx, [discount])[0]
    if discount.usage_limit is not None and used >= discount.usage_limit:
        raise ToolError.invalid_state(
            f"Discount code {discount.code} has been used {used} times, its limit; it cannot be used again."
        )
    if (
        discount.once_per_customer
        and ctx.query(Order).where(email=email).where_sql("upper(discount_code) = ?", discount.code).exists()
    ):
        raise ToolError.invalid_state(
            f"Discount code {discount.code} is once per customer and {email} already used it."
        )
    return discount


class OrderItemIn(BaseModel):
    """One item to order: a variant's SKU and how many."""

    sku: ProductSKU = Field(description="The variant's SKU, e.g. SKU-FUR-106-BLK (see list_variants).")
    quantity: Quantity = Field(description="How many units (at least 1).")


def _place_order(
    ctx: ToolContext,
    customer: Customer,
    items: Sequence[tuple[str, int]],
    shipping_address: str | None,
    shipping_method: str,
    discount_code: str | None,
    note: str | None,
    paid: bool,
    at: str,
) -> Order:
    """Price and record an order (the one way orders are made, by staff or by the storefront)."""
    if not items:
        raise ToolError.invalid_argument("items must list at least one {sku, quantity}.")
    wanted: dict[str, int] = {}
    for sku, quantity in items:
        if quantity < 1:
            raise ToolError.invalid_argument(f"quantity of {sku} must be at least 1.")
        if _sku(sku) in wanted:
            raise ToolError.invalid_argument(
                f"SKU {_sku(sku)} is listed twice; list each SKU once with its total quantity."
            )
        wanted[_sku(sku)] = quantity
    variants = {v.sku: v for v in ctx.query(Variant).where_in("sku", list(wanted)).all()}
    for sku in wanted:
        if sku not in variants:
            raise ToolError.not_found("variant with SKU", sku, "Use list_variants or search_products to find SKUs.")
    products = ctx.fetch_many(Product, [v.product_id for v in variants.values()])
    available = dict(zip(variants, _variant_available(ctx, list(variants.values())), strict=True))
    for sku, quantity in wanted.items():
        product = products[variants[sku].product_id]
        if product.status != "active":
            raise ToolError.invalid_state(f"{product.title} is {product.status}, not for sale.")
        free = available[sku]
        if free is not None and quantity > free:
            raise ToolError.invalid_state(
                f"Only {max(free, 0)} of {sku} ({product.title}) are available; order at most that many."
            )
    ships = any(variants[s].requires_shipping for s in wanted)
    method = shipping_method if ships else "none"
    if ships and method not in ("standard", "express"):
        raise ToolError.invalid_argument("shipping_method must be standard or express for goods that ship.")
    address = (shipping_address or customer.default_address or "").strip() if ships else None
    if ships and not address:
        raise ToolError.invalid_argument(f"{customer.email} has no address on file; pass shipping_address.")
    subtotal = round(sum(variants[s].price * q for s, q in wanted.items()), 2)
    discount = _check_discount(ctx, discount_code, subtotal, customer.email) if discount_code else None
    off, shipping, total = price_order(
        subtotal,
        method,
        _policy(ctx),
        discount.kind if discount else None,
        discount.value if discount else 0.0,  # type: ignore[arg-type]
    )
    name = f"{customer.first_name} {customer.last_name}"
    order = ctx.insert(
        Order(
            id=ctx.new_id("ord"),
            name=_next_order_name(ctx),
            customer_id=customer.id,
            customer_name=name,
            email=customer.email,
            phone=customer.phone,
            shipping_name=name,
            shipping_address=address,
            shipping_method=method,
            currency=ctx.world.currency,
            subtotal_price=subtotal,  # type: ignore[arg-type]
            total_discounts=off,
            shipping_price=shipping,
            total_price=total,
            financial_status="paid" if paid else "pending",
            discount_code=discount.code if discount else None,
            note=note.strip() if note and note.strip() else None,
            tags=[],
            created_at=at,
            updated_at=at,
        )
    )
    ctx.insert_many(
        [
            LineItem(
                id=ctx.new_id("li"),
                order_id=order.id,
                variant_id=variants[sku].id,
                sku=sku,
                title=products[variants[sku].product_id].title,
                variant_title=variants[sku].title,
                quantity=quantity,
                price=variants[sku].price,
                requires_shipping=variants[sku].requires_shipping,
            )
            for sku, quantity in wanted.items()
        ]
    )
    return order


def _shipped_on(ctx: ToolContext, order: Order) -> dict[str, str]:
    """For each line item, the day its latest fulfilment shipped."""
    shipped: dict[str, str] = {}
    for f in ctx.query(Fulfillment).where(order_id=order.id, status="success").order_by("created_at").all():
        for item in f.items:
            shipped[item["line_item_id"]] = f.created_at
    return shipped


def _check_returnable(
    ctx: ToolContext, order: Order, items: Sequence[ReturnedItem], exclude: str | None = None
) -> None:
    """Refuse a return the policy does not allow: unshipped or already returned units, final sale, past the window."""
    if order.status == "cancelled":
        raise ToolError.invalid_state(f"Order {order.name} was cancelled; nothing shipped, so nothing can be returned.")
    policy = _policy(ctx)
    lines = {li.id: li for li in ctx.query(LineItem).where(order_id=order.id).all()}
    returned = _returned_by_line(ctx, [order.id])
    if exclude is not None:
        for item in ctx.get(Return, exclude).items:
            returned[item["line_item_id"]] -= int(item["quantity"])
    products = {v.id: v.product_id for v in ctx.fetch_many(Variant, [li.variant_id for li in lines.values()]).values()}
    kinds = {p.id: p.product_type for p in ctx.fetch_many(Product, products.values()).values()}
    shipped = _shipped_on(ctx, order)
    seen: set[str] = set()
    for item in items:
        line = lines.get(item["line_item_id"])
        if line is None:
            raise ToolError.not_found(
                "line item", item["line_item_id"], f"Order {order.name}'s line items are listed by get_order."
            )
        if line.id in seen:
            raise ToolError.invalid_argument(f"Line item {line.id} is listed twice; list it once with its quantity.")
        seen.add(line.id)
        can = line.fulfilled_quantity - returned.get(line.id, 0)
        if item["quantity"] < 1 or item["quantity"] > can:
            raise ToolError.invalid_argument(
                f"{line.title}: {line.fulfilled_quantity} shipped and {returned.get(line.id, 0)} already in returns, "
                "so "
                f"between 1 and {max(can, 0)} can be returned, not {item['quantity']}."
            )
        kind = kinds[products[line.variant_id]]
        if kind in policy.final_sale_types:
            raise ToolError.permission_denied(
                f"{line.title} is {kind}, which the store policy makes final sale: it cannot be returned "
                "(decline_return with reason final_sale)."
            )
        day = shipped.get(line.id)
        if day is not None:
            closes = _parse_time(day) + timedelta(days=policy.return_window_days)
            if ctx.now > closes:
                raise ToolError.permission_denied(
                    f"{line.title} shipped on {day[:10]}; the {policy.return_window_days}-day return window closed on "
                    f"{ctx.iso(closes)[:10]}, so the store policy does not allow this return "
                    "(decline_return with reason return_period_ended)."
                )


def _refund(
    ctx: ToolContext,
    order: Order,
    amount: float,
    reason: str,
    *,
    note: str | None = None,
    ret: Return | None = None,
    restock: bool = False,
) -> Refund:
    """Record a refund and move the order's money; never more than was paid minus what was refunded."""
    if order.financial_status not in ("paid", "partially_refunded"):
        hint = {
            "pending": "nothing has been paid yet: cancel_order instead, or mark_order_paid once the money arrives.",
            "refunded": "it has been refunded in full already.",
            "voided": "its payment was voided; nothing was paid.",
        }[order.financial_status]
        raise ToolError.invalid_state(f"Order {order.name} cannot be refunded: {hint}")
    left = _cents(order.total_price) - _cents(order.total_refunded)
    if _cents(amount) <= 0 or _cents(amount) > left:
        raise ToolError.invalid_argument(
            f"Order {order.name} was paid {order.total_price:.2f} and {order.total_refunded:.2f} is already refunded, "
            "so "
            f"a refund must be between 0.01 and {left / 100:.2f}, not {amount:.2f}."
        )
    refunded = round((_cents(order.total_refunded) + _cents(amount)) / 100, 2)
    status = "refunded" if _cents(refunded) >= _cents(order.total_price) else "partially_refunded"
    ctx.update(order, total_refunded=refunded, financial_status=status, updated_at=ctx.now_iso)
    items = [
        RefundedItem(line_item_id=i["line_item_id"], quantity=int(i["quantity"])) for i in (ret.items if ret else [])
    ]
    if ret is not None and restock:
        lines = ctx.fetch_many(LineItem, [i["line_item_id"] for i in ret.items])
        variants = ctx.fetch_many(Variant, [li.variant_id for li in lines.values()])
        for item in ret.items:
            variant = variants[lines[item["line_item_id"]].variant_id]
            if variant.inventory_tracked:
                variants[variant.id] = ctx.update(
                    variant, on_hand=variant.on_hand + int(item["quantity"]), updated_at=ctx.now_iso
                )
    return ctx.insert(
        Refund(
            id=ctx.new_id("rfd"),
            order_id=order.id,
            return_id=ret.id if ret else None,
            amount=round(amount, 2),
            currency=order.currency,
            reason=reason,
            note=note,
            restocked=bool(ret is not None and restock),
            items=items,
            created_at=ctx.now_iso,
        )
    )


def _return_value(ctx: ToolContext, order: Order, ret: Return) -> float:
    lines = ctx.fetch_many(LineItem, [i["line_item_id"] for i in ret.items])
    return round(
        sum(
            refund_value(
                order.subtotal_price, order.total_discounts, lines[i["line_item_id"]].price, int(i["quantity"])
            )
            for i in ret.items
        ),
        2,
    )


# -- the store ---------------------------------------------------------------------------------------------


class StorePolicyOut(BaseModel):
    """The store's rules for returns, refunds and shipping."""

    return_window_days: int
    final_sale_product_types: list[str]
    standard_shipping: Money
    express_shipping: Money
    free_shipping_minimum: Money
    currency: Currency
    text: Text


@service.tool("read", intent="check", phrases=("check the store's return policy", "what is our return window"))
def get_store_policy(ctx: ToolContext) -> StorePolicyOut:
    """The store's policy: how many days after shipping a return is accepted, which product types are final
    sale, and what shipping costs. Read it before accepting a return or promising a refund."""
    policy = _policy(ctx)
    return StorePolicyOut(
        return_window_days=policy.return_window_days,
        final_sale_product_types=list(policy.final_sale_types),
        standard_shipping=policy.standard_shipping,
        express_shipping=policy.express_shipping,
        free_shipping_minimum=policy.free_shipping_minimum,
        currency=policy.currency,
        text=policy.text,
    )


# -- products and stock --------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look {query} up in the store's catalogue", "find {query} in the shop"))
def search_products(
    ctx: ToolContext,
    query: str | None = None,
    product_type: str | None = None,
    status: ProductStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Product]:
    """Search the catalogue by title, handle, type or description. Each product lists its variants with
    their SKU, price and available units.

    Args:
        query: Words to match in the title, handle, product type or description (case-insensitive).
        product_type: Only products of this type, e.g. furniture, hardware, merchandise, services.
        status: Only active (for sale), draft or archived products.
        limit: Maximum number of products to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Product).search(query).filter(status=status)
    if product_type and product_type.strip():
        q.where_sql("lower(product_type) = lower(?)", product_type.strip())
    return q.order_by("title").page(limit, cursor)


@service.tool(
    "read", intent="get", phrases=("open the product page of {product_id}", "check the variants of {product_id}")
)
def get_product(ctx: ToolContext, product_id: ProductId) -> Product:
    """Get one product with its variants (SKU, price, available units).

    Args:
        product_id: The product's id, e.g. prod_0007 (see search_products).
    """
    return ctx.get(Product, product_id, "product", "Use search_products to find product ids.")


@service.tool("read", intent="find", phrases=("check the stock of {sku}", "how many {sku} do we have left"))
def list_variants(
    ctx: ToolContext,
    query: str | None = None,
    sku: ProductSKU | None = None,
    product_id: ProductId | None = None,
    stock: StockLevel | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Variant]:
    """List variants with their stock: on hand, committed to open orders, and available to sell.

    Args:
        query: Words to match in the SKU or variant title (case-insensitive).
        sku: Only the variant with exactly this SKU.
        product_id: Only variants of this product.
        stock: in_stock (more than 5 available), low (1 to 5 available) or out_of_stock (none available).
            Untracked variants (services, subscriptions) never match a stock filter.
        limit: Maximum number of variants to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Variant).search(query).filter(sku=_sku(sku) if sku else None, product_id=product_id)
    if stock is not None:
        available = f"(on_hand - {_committed_sql('variants.id')})"
        condition = {
            "in_stock": f"{available} > {LOW_STOCK}",
            "low": f"{available} BETWEEN 1 AND {LOW_STOCK}",
            "out_of_stock": f"{available} <= 0",
        }[stock]
        q.where(inventory_tracked=True).where_sql(condition)
    return q.order_by("sku").page(limit, cursor)


@service.tool(
    "write",
    intent="update",
    phrases=("add {delta} units of {variant_id} to stock", "correct the stock count of {variant_id} by {delta}"),
)
def adjust_inventory(ctx: ToolContext, variant_id: VariantId, delta: Delta, reason: AdjustReason) -> Variant:
    """Change a variant's units on hand: positive when stock arrives, negative for damage, loss or a recount.
    Stock on hand can never go below zero.

    Args:
        variant_id: The variant whose stock changes, e.g. var_0012 (see list_variants).
        delta: Units to add (positive) or remove (negative); not zero.
        reason: received, restock, correction, damaged or shrinkage.
    """
    variant = ctx.get(Variant, variant_id, "variant", "Use list_variants to find variant ids.")
    if not variant.inventory_tracked:
        raise ToolError.invalid_state(f"{variant.sku} is not stocked (a service or subscription); nothing to adjust.")
    if delta == 0:
        raise ToolError.invalid_argument("delta must not be zero.")
    if variant.on_hand + delta < 0:
        raise ToolError.invalid_argument(
            f"{variant.sku} has {variant.on_hand} on hand; it cannot lose {-delta}. Remove at most {variant.on_hand}."
        )
    return ctx.update(variant, on_hand=variant.on_hand + delta, updated_at=ctx.now_iso)


@service.tool("write", intent="update", phrases=("change the price of {variant_id} to {price}", "reprice {variant_id}"))
def update_variant_price(ctx: ToolContext, variant_id: VariantId, price: Money) -> Variant:
    """Set a variant's price for new orders (orders already placed keep the price they were sold at).

    Args:
        variant_id: The variant to reprice, e.g. var_0012.
        price: The new price in the store's currency (more than 0).
    """
    variant = ctx.get(Variant, variant_id, "variant", "Use list_variants to find variant ids.")
    if _cents(price) <= 0:
        raise ToolError.invalid_argument("price must be more than 0.")
    if _cents(price) == _cents(variant.price):
        raise ToolError.invalid_state(f"{variant.sku} already costs {variant.price:.2f}.")
    return ctx.update(variant, price=round(price, 2), updated_at=ctx.now_iso)


# -- customers ----------------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look {query} up in the store", "find the shop customer {query}"))
def search_customers(
    ctx: ToolContext,
    query: str | None = None,
    email: EmailAddress | None = None,
    tag: Tag | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Customer]:
    """Search the store's customers by name, email or company; each shows their order count and total spent.

    Args:
        query: Words to match in the first or last name, email or company (case-insensitive).
        email: Only the customer with exactly this email.
        tag: Only customers with this tag, e.g. wholesale.
        limit: Maximum number of customers to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Customer).search(query).filter(email=email.strip().lower() if email else None)
    if tag is not None:
        q.where_sql("lower(tags) LIKE ? ESCAPE '\\'", like_pattern(json_text(tag.strip().lower())))
    return q.order_by("last_name", "first_name").page(limit, cursor)


@service.tool(
    "read", intent="get", phrases=("open the store profile of {customer_id}", "check how much {customer_id} has spent")
)
def get_customer(ctx: ToolContext, customer_id: CustomerId) -> Customer:
    """Get one customer with their default address, tags, order count and total spent.

    Args:
        customer_id: The customer's id, e.g. cust_0012 (see search_customers).
    """
    return ctx.get(Customer, customer_id, "customer", "Use search_customers to find customer ids.")


# -- orders -----------------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("look up the orders of {email}", "find order {name}", "check which orders are still {fulfillment_status}"),
)
def list_orders(
    ctx: ToolContext,
    query: str | None = None,
    name: str | None = None,
    customer_id: CustomerId | None = None,
    email: EmailAddress | None = None,
    status: OrderStatus | None = None,
    financial_status: FinancialStatus | None = None,
    fulfillment_status: FulfillmentStatus | None = None,
    sku: ProductSKU | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Order]:
    """List orders, newest first, with their line items, filtered by number, customer, status or date.

    Args:
        query: Words to match in the order number, email, customer name or recipient (case-insensitive).
        name: The order number exactly, e.g. #1042 (the # is optional).
        customer_id: Only this customer's orders.
        email: Only orders placed with this email.
        status: open or cancelled.
        financial_status: pending (awaiting payment), paid, partially_refunded, refunded or voided.
        fulfillment_status: unfulfilled, partial or fulfilled.
        sku: Only orders with a line for this SKU.
        created_from: Only orders placed on or after this day (YYYY-MM-DD).
        created_to: Only orders placed on or before this day (YYYY-MM-DD).
        limit: Maximum number of orders to return (1-100).
        cursor: next_cursor from a previous page.
    """
    number = f"#{name.strip().lstrip('#')}" if name and name.strip() else None
    q = (
        ctx.query(Order)
        .search(query)
        .filter(
            name=number,
            customer_id=customer_id,
            email=email.strip().lower() if email else None,
            status=status,
            financial_status=financial_status,
            fulfillment_status=fulfillment_status,
        )
    )
    if sku:
        q.where_sql("EXISTS (SELECT 1 FROM line_items li WHERE li.order_id = orders.id AND li.sku = ?)", _sku(sku))
    q.compare("created_at", ">=", created_from and f"{created_from}T00:00:00Z").compare(
        "created_at", "<=", created_to and f"{created_to}T23:59:59Z"
    )
    return q.order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open {order_id}", "pull up {order_id}"))
def get_order(ctx: ToolContext, order_id: OrderId) -> Order:
    """Get one order: its lines (with shipped and returned units), totals, payment and fulfilment status.

    Args:
        order_id: The order's id, e.g. ord_0042 (list_orders with name='#1042' finds it from its number).
    """
    return _order(ctx, order_id)


@service.tool(
    "write",
    intent="create",
    phrases=("place an order for {customer_id}", "take an order from {customer_email}"),
)
def create_order(
    ctx: ToolContext,
    items: list[OrderItemIn],
    customer_id: CustomerId | None = None,
    customer_email: EmailAddress | None = None,
    shipping_method: Literal["standard", "express"] = "standard",
    discount_code: str | None = None,
    shipping_address: Address | None = None,
    paid: bool = True,
    note: Text | None = None,
) -> Order:
    """Place an order for a customer (a phone or email order). Stock must be available; a discount code must
    be usable now; shipping is priced by the store policy.

    Args:
        items: What to order: a list of {"sku", "quantity"}.
        customer_id: The customer ordering (see search_customers). Pass this or customer_email.
        customer_email: The customer's email, instead of customer_id.
        shipping_method: standard (default; free from the policy's minimum) or express.
        discount_code: A discount code to apply, e.g. WELCOME10.
        shipping_address: Where to ship, on one line; defaults to the customer's address.
        paid: True (default) when paid at checkout; false when the customer pays later (the order waits as pending).
        note: A note on the order.
    """
    if bool(customer_id) == bool(customer_email):
        raise ToolError.invalid_argument("Pass exactly one of customer_id or customer_email.")
    if customer_id:
        customer = ctx.get(Customer, customer_id, "customer", "Use search_customers to find customer ids.")
    else:
        found = ctx.find(Customer, email=(customer_email or "").strip().lower())
        if found is None:
            raise ToolError.not_found("customer", customer_email, "Use search_customers to find the customer.")
        customer = found
    return _place_order(
        ctx,
        customer,
        [(i.sku, i.quantity) for i in items],
        shipping_address,
        shipping_method,
        discount_code,
        note,
        paid,
        ctx.now_iso,
    )


@service.tool(
    "write",
    intent="update",
    phrases=("change the shipping address of {order_id} to {shipping_address}", "update {order_id}"),
)
def update_order(
    ctx: ToolContext,
    order_id: OrderId,
    shipping_address: Address | None = None,
    email: EmailAddress | None = None,
    phone: PhoneNumber | None = None,
    tags: list[Tag] | None = None,
) -> Order:
    """Change an order's shipping address, contact email or phone, or its tags. The address can only change
    while nothing has shipped (update the shipment in shipping too if it was already imported there).

    Args:
        order_id: The order to change, e.g. ord_0042.
        shipping_address: The new shipping address on one line.
        email: The new contact email for the order.
        phone: The new contact phone in E.164 form.
        tags: The order's tags (replaces the old ones), e.g. ["rush"].
    """
    order = _order(ctx, order_id)
    if all(v is None for v in (shipping_address, email, phone, tags)):
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if order.status == "cancelled":
        raise ToolError.invalid_state(f"Order {order.name} is cancelled; it can no longer change.")
    changes: dict[str, Any] = {}
    if shipping_address is not None:
        if order.shipping_method == "none":
            raise ToolError.invalid_state(f"Order {order.name} has nothing to ship, so it has no shipping address.")
        if order.fulfillment_status != "unfulfilled":
            raise ToolError.invalid_state(
                f"Order {order.name} has already shipped ({order.fulfillment_status}); its address cannot change. "
                "Ask the carrier to redirect the parcel instead."
            )
        changes["shipping_address"] = " ".join(shipping_address.split())
    if email is not None:
        changes["email"] = email.strip().lower()
    if phone is not None:
        changes["phone"] = phone
    if tags is not None:
        changes["tags"] = sorted({t.strip().lower() for t in tags})
    return ctx.update(order, **changes, updated_at=ctx.now_iso)


@service.tool("write", intent="note", phrases=("note on {order_id}: {note}", "add a note to {order_id} saying {note}"))
def add_order_note(ctx: ToolContext, order_id: OrderId, note: Text) -> Order:
    """Add a line to an order's internal note (earlier notes are kept).

    Args:
        order_id: The order, e.g. ord_0042.
        note: What to note, e.g. a ticket number or what the customer asked for.
    """
    order = _order(ctx, order_id)
    text = note.strip()
    if not text:
        raise ToolError.invalid_argument("note must not be empty.")
    combined = f"{order.note}\n{text}" if order.note else text
    return ctx.update(order, note=combined, updated_at=ctx.now_iso)


@service.tool("write", intent="pay", phrases=("mark {order_id} as paid", "record that {order_id} was paid"))
def mark_order_paid(ctx: ToolContext, order_id: OrderId) -> Order:
    """Record that a pending order's payment arrived (a bank transfer, an invoice paid), so it can ship.

    Args:
        order_id: The pending order, e.g. ord_0042.
    """
    order = _order(ctx, order_id)
    if order.status == "cancelled":
        raise ToolError.invalid_state(f"Order {order.name} is cancelled.")
    if order.financial_status != "pending":
        raise ToolError.invalid_state(f"Order {order.name} is not awaiting payment (it is {order.financial_status}).")
    return ctx.update(order, financial_status="paid", updated_at=ctx.now_iso)


@service.tool("write", intent="cancel", phrases=("cancel {order_id}", "cancel {order_id} and refund it"))
def cancel_order(
    ctx: ToolContext, order_id: OrderId, reason: CancelReason, refund: bool = True, note: Text | None = None
) -> Order:
    """Cancel an order that has not shipped: its stock is released and, by default, what was paid is refunded.
    An order with anything shipped cannot be cancelled: create_return instead. Cancel its shipment in
    shipping too.

    Args:
        order_id: The order to cancel, e.g. ord_0042.
        reason: customer (they asked), inventory (we cannot supply it), fraud, declined (payment declined) or other.
        refund: Refund what was paid (default true). A pending order has nothing to refund: its payment is voided.
        note: Why it was cancelled, kept in the order's note.
    """
    order = _order(ctx, order_id)
    if order.status == "cancelled":
        raise ToolError.invalid_state(f"Order {order.name} is already cancelled.")
    if order.fulfillment_status != "unfulfilled":
        raise ToolError.invalid_state(
            f"Order {order.name} is {order.fulfillment_status}: items have shipped, so it cannot be cancelled. "
            "Use create_return for the shipped items, then refund_order."
        )
    if refund and order.financial_status in ("paid", "partially_refunded"):
        left = round(order.total_price - order.total_refunded, 2)
        _refund(ctx, order, left, f"Order cancelled ({reason})", note=note)
        order = ctx.get(Order, order.id)
    changes: dict[str, Any] = {"status": "cancelled", "cancel_reason": reason, "cancelled_at": ctx.now_iso}
    if order.financial_status == "pending":
        changes["financial_status"] = "voided"
    if note and note.strip():
        changes["note"] = f"{order.note}\n{note.strip()}" if order.note else note.strip()
    return ctx.update(order, **changes, updated_at=ctx.now_iso)


# -- fulfilments --------------------------------------------------------------------------------------------


class FulfillItemIn(BaseModel):
    """Units of one line item to fulfil."""

    line_item_id: LineItemId = Field(description="The line item's id (see get_order's line_items).")
    quantity: Quantity = Field(description="How many units of that line (at least 1).")


@service.tool(
    "write",
    intent="ship",
    phrases=("mark {order_id} as shipped with tracking number {tracking_number}", "fulfil {order_id}"),
)
def fulfill_order(
    ctx: ToolContext,
    order_id: OrderId,
    tracking_number: str | None = None,
    carrier: Carrier | None = None,
    line_items: list[FulfillItemIn] | None = None,
    notify_customer: bool = True,
) -> Fulfillment:
    """Mark an order's items as shipped (or, for services, delivered). Goods need the carrier and tracking
    number of the label bought for them in shipping; the units leave stock on hand. The order must be paid.

    Args:
        order_id: The order to fulfil, e.g. ord_0042.
        tracking_number: The label's tracking number (required when any item ships).
        carrier: The label's carrier: ups, fedex or usps (required with a tracking number).
        line_items: Which units to fulfil, as [{"line_item_id", "quantity"}]; default every unit not yet fulfilled.
        notify_customer: Email the customer the tracking link (default true).
    """
    order = _order(ctx, order_id)
    if order.status == "cancelled":
        raise ToolError.invalid_state(f"Order {order.name} is cancelled; it cannot be fulfilled.")
    if order.financial_status in ("pending", "voided"):
        raise ToolError.invalid_state(f"Order {order.name} is not paid yet; orders ship once paid (mark_order_paid).")
    lines = {li.id: li for li in ctx.query(LineItem).where(order_id=order.id).order_by("id").all()}
    if line_items is None:
        wanted = {
            li.id: li.quantity - li.fulfilled_quantity for li in lines.values() if li.fulfilled_quantity < li.quantity
        }
        if not wanted:
            raise ToolError.invalid_state(f"Every item of order {order.name} is already fulfilled.")
    else:
        if not line_items:
            raise ToolError.invalid_argument("line_items must not be empty; omit it to fulfil everything left.")
        wanted = {}
        for item in line_items:
            line = lines.get(item.line_item_id)
            if line is None:
                raise ToolError.not_found(
                    "line item", item.line_item_id, f"Order {order.name}'s lines are in get_order."
                )
            if item.line_item_id in wanted:
                raise ToolError.invalid_argument(f"Line item {line.id} is listed twice.")
            left = line.quantity - line.fulfilled_quantity
            if item.quantity < 1 or item.quantity > left:
                raise ToolError.invalid_argument(f"{line.title}: {left} unit(s) left to fulfil, not {item.quantity}.")
            wanted[line.id] = item.quantity
    ships = any(lines[i].requires_shipping for i in wanted)
    number = tracking_number.strip().upper() if tracking_number and tracking_number.strip() else None
    if ships and (number is None or carrier is None):
        raise ToolError.invalid_argument(
            "These items ship: pass the carrier and tracking_number of the label bought in shipping (create_label)."
        )
    if number is not None:
        if carrier is None:
            raise ToolError.invalid_argument("Pass the carrier (ups, fedex or usps) with the tracking number.")
        if not re.match(_TRACKING_FORMATS[carrier], number):
            raise ToolError.invalid_argument(f"{number} is not a {CARRIER_NAMES[carrier]} tracking number.")
        if ctx.exists(Fulfillment, tracking_number=number, status="success"):
            raise ToolError.conflict(f"Tracking number {number} is already on another fulfilment.")
    variants = ctx.fetch_many(Variant, [lines[i].variant_id for i in wanted])
    for line_id, quantity in wanted.items():
        variant = variants[lines[line_id].variant_id]
        if variant.inventory_tracked and variant.on_hand < quantity:
            raise ToolError.invalid_state(
                f"Only {variant.on_hand} of {variant.sku} are on hand; {quantity} cannot ship. Fulfil the other items "
                "(line_items) or adjust_inventory when stock arrives."
            )
    for line_id, quantity in wanted.items():
        line = lines[line_id]
        variant = variants[line.variant_id]
        if variant.inventory_tracked:
            variants[variant.id] = ctx.update(variant, on_hand=variant.on_hand - quantity, updated_at=ctx.now_iso)
        lines[line_id] = ctx.update(line, fulfilled_quantity=line.fulfilled_quantity + quantity)
    done = all(li.fulfilled_quantity >= li.quantity for li in lines.values())
    ctx.update(order, fulfillment_status="fulfilled" if done else "partial", updated_at=ctx.now_iso)
    return ctx.insert(
        Fulfillment(
            id=ctx.new_id("ful"),
            order_id=order.id,
            tracking_company=CARRIER_NAMES[carrier] if carrier and number else None,
            tracking_number=number,
            tracking_url=tracking_url(carrier, number) if carrier and number else None,
            items=[FulfilledItem(line_item_id=i, sku=lines[i].sku, quantity=q) for i, q in wanted.items()],
            notify_customer=notify_customer,
            created_at=ctx.now_iso,
        )
    )


@service.tool(
    "read", intent="find", phrases=("check the tracking number of {order_id}", "find the shipments of {order_id}")
)
def list_fulfillments(
    ctx: ToolContext,
    order_id: OrderId | None = None,
    tracking_number: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Fulfillment]:
    """List fulfilments (what shipped, when, with which tracking number), newest first.

    Args:
        order_id: Only this order's fulfilments.
        tracking_number: Only the fulfilment with this tracking number.
        limit: Maximum number of fulfilments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    if order_id is not None:
        _order(ctx, order_id)
    number = tracking_number.strip().upper() if tracking_number and tracking_number.strip() else None
    return (
        ctx.query(Fulfillment)
        .filter(order_id=order_id, tracking_number=number)
        .order_by("-created_at")
        .page(limit, cursor)
    )


@service.tool("write", intent="cancel", phrases=("cancel {fulfillment_id}", "undo {fulfillment_id}"))
def cancel_fulfillment(ctx: ToolContext, fulfillment_id: FulfillmentId) -> Fulfillment:
    """Cancel a fulfilment whose parcel never left (its label was voided in shipping): its units go back to
    stock and the order's items count as unfulfilled again. Not possible once items of it are in a return.

    Args:
        fulfillment_id: The fulfilment to cancel, e.g. ful_0042 (see list_fulfillments).
    """
    fulfillment = ctx.get(Fulfillment, fulfillment_id, "fulfillment", "Use list_fulfillments to find fulfilment ids.")
    if fulfillment.status == "cancelled":
        raise ToolError.invalid_state(f"Fulfilment {fulfillment.id} is already cancelled.")
    order = _order(ctx, fulfillment.order_id)
    returned = _returned_by_line(ctx, [order.id])
    lines = ctx.fetch_many(LineItem, [i["line_item_id"] for i in fulfillment.items])
    for item in fulfillment.items:
        line = lines[item["line_item_id"]]
        if line.fulfilled_quantity - int(item["quantity"]) < returned.get(line.id, 0):
            raise ToolError.invalid_state(f"{line.title} of this fulfilment is in a return; the fulfilment must stay.")
    variants = ctx.fetch_many(Variant, [li.variant_id for li in lines.values()])
    for item in fulfillment.items:
        line = lines[item["line_item_id"]]
        variant = variants[line.variant_id]
        if variant.inventory_tracked:
            variants[variant.id] = ctx.update(
                variant, on_hand=variant.on_hand + int(item["quantity"]), updated_at=ctx.now_iso
            )
        ctx.update(line, fulfilled_quantity=line.fulfilled_quantity - int(item["quantity"]))
    remaining = ctx.query(LineItem).where(order_id=order.id).where_sql("fulfilled_quantity > 0").exists()
    ctx.update(order, fulfillment_status="partial" if remaining else "unfulfilled", updated_at=ctx.now_iso)
    return ctx.update(fulfillment, status="cancelled", cancelled_at=ctx.now_iso)


# -- returns and refunds ----------------------------------------------------------------------------------


class ReturnItemIn(BaseModel):
    """Units of one line item the customer sends back, and why."""

    line_item_id: LineItemId = Field(description="The line item's id (see get_order's line_items).")
    quantity: Quantity = Field(description="How many units (at least 1).")
    reason: ReturnReason = Field(
        description="Why: defective, wrong_item, not_as_described, size_too_small, size_too_large, "
        "color, style, unwanted or other."
    )


@service.tool("read", intent="find", phrases=("check the open return requests", "find the returns of {order_id}"))
def list_returns(
    ctx: ToolContext,
    order_id: OrderId | None = None,
    status: ReturnStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Return]:
    """List returns, newest request first: requested (awaiting a decision), open (approved, on its way back),
    closed (refunded), declined or cancelled.

    Args:
        order_id: Only this order's returns.
        status: requested, open, closed, declined or cancelled.
        limit: Maximum number of returns to return (1-100).
        cursor: next_cursor from a previous page.
    """
    if order_id is not None:
        _order(ctx, order_id)
    return ctx.query(Return).filter(order_id=order_id, status=status).order_by("-requested_at").page(limit, cursor)


@service.tool(
    "write",
    intent="create",
    phrases=("start a return for {order_id}", "take back the items of {order_id}"),
)
def create_return(
    ctx: ToolContext, order_id: OrderId, items: list[ReturnItemIn], customer_note: Text | None = None
) -> Return:
    """Open an approved return for shipped items of an order (for a customer who asked by email or phone).
    The store policy applies: within the return window from the shipping day, never final-sale items.

    Args:
        order_id: The order the items came from, e.g. ord_0042.
        items: The units coming back: [{"line_item_id", "quantity", "reason"}].
        customer_note: What the customer said about it.
    """
    order = _order(ctx, order_id)
    if not items:
        raise ToolError.invalid_argument("items must list at least one {line_item_id, quantity, reason}.")
    lines = ctx.fetch_many(LineItem, [i.line_item_id for i in items])
    records = [
        ReturnedItem(
            line_item_id=i.line_item_id,
            sku=lines[i.line_item_id].sku if i.line_item_id in lines else "",
            quantity=i.quantity,
            reason=i.reason,
        )
        for i in items
    ]
    _check_returnable(ctx, order, records)
    return ctx.insert(
        Return(
            id=ctx.new_id("ret"),
            order_id=order.id,
            status="open",
            items=records,
            customer_note=customer_note.strip() if customer_note and customer_note.strip() else None,
            requested_at=ctx.now_iso,
            decided_at=ctx.now_iso,
        )
    )


@service.tool("write", intent="approve", phrases=("approve {return_id}", "accept {return_id}"))
def approve_return(ctx: ToolContext, return_id: ReturnId) -> Return:
    """Approve a requested return so the customer can send the items back. Refused when the store policy does
    not allow it (past the return window, final-sale items): decline it instead.

    Args:
        return_id: The requested return, e.g. ret_0004 (see list_returns with status=requested).
    """
    ret = ctx.get(Return, return_id, "return", "Use list_returns to find return ids.")
    if ret.status != "requested":
        raise ToolError.invalid_state(f"Return {ret.id} is {ret.status}; only requested returns can be approved.")
    _check_returnable(ctx, _order(ctx, ret.order_id), ret.items, exclude=ret.id)
    return ctx.update(ret, status="open", decided_at=ctx.now_iso)


@service.tool("write", intent="reject", phrases=("decline {return_id}", "turn down {return_id}"))
def decline_return(ctx: ToolContext, return_id: ReturnId, reason: DeclineReason, note: Text | None = None) -> Return:
    """Decline a requested return, saying why (the customer is told).

    Args:
        return_id: The requested return, e.g. ret_0004.
        reason: return_period_ended (past the policy's window), final_sale, or other.
        note: An explanation for the customer; required when the reason is other.
    """
    ret = ctx.get(Return, return_id, "return", "Use list_returns to find return ids.")
    if ret.status != "requested":
        raise ToolError.invalid_state(f"Return {ret.id} is {ret.status}; only requested returns can be declined.")
    text = note.strip() if note and note.strip() else None
    if reason == "other" and text is None:
        raise ToolError.invalid_argument("Explain the decline in note when the reason is other.")
    return ctx.update(ret, status="declined", decline_reason=reason, decline_note=text, decided_at=ctx.now_iso)


@service.tool(
    "write",
    intent="refund",
    phrases=("refund {amount} on {order_id}", "refund {return_id}", "issue a refund for {order_id}"),
)
def refund_order(
    ctx: ToolContext,
    order_id: OrderId,
    reason: ShortText,
    amount: Money | None = None,
    return_id: ReturnId | None = None,
    restock: bool = True,
    note: Text | None = None,
) -> Refund:
    """Refund money on a paid order: for an approved return (the return closes), or any amount as a goodwill
    gesture. A refund never exceeds what was paid minus what was already refunded (see the order's refundable).

    Args:
        order_id: The order to refund, e.g. ord_0042.
        reason: Why, in a few words (the customer sees it), e.g. "Return received: defective".
        amount: How much to refund; for a return it defaults to the returned items' value after discounts.
        return_id: The approved (open) return this refund settles.
        restock: For a return: put the returned units back in stock (default true).
        note: An internal note about the refund.
    """
    order = _order(ctx, order_id)
    if not reason.strip():
        raise ToolError.invalid_argument("reason must not be empty.")
    ret = None
    if return_id is not None:
        ret = ctx.get(Return, return_id, "return", "Use list_returns to find return ids.")
        if ret.order_id != order.id:
            raise ToolError.invalid_argument(f"Return {ret.id} belongs to another order, not {order.name}.")
        if ret.status != "open":
            hint = "approve_return it first" if ret.status == "requested" else "it cannot be refunded again"
            raise ToolError.invalid_state(f"Return {ret.id} is {ret.status}; {hint}.")
    if amount is None:
        if ret is None:
            raise ToolError.invalid_argument("Pass the amount to refund (or a return_id to refund its items).")
        amount = _return_value(ctx, order, ret)
    text = note.strip() if note and note.strip() else None
    refund = _refund(ctx, order, amount, reason.strip(), note=text, ret=ret, restock=restock)
    if ret is not None:
        ctx.update(ret, status="closed", closed_at=ctx.now_iso)
    return refund


@service.tool("read", intent="find", phrases=("check the refunds on {order_id}", "find the refunds we issued"))
def list_refunds(
    ctx: ToolContext,
    order_id: OrderId | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Refund]:
    """List refunds, newest first.

    Args:
        order_id: Only this order's refunds.
        created_from: Only refunds issued on or after this day (YYYY-MM-DD).
        created_to: Only refunds issued on or before this day (YYYY-MM-DD).
        limit: Maximum number of refunds to return (1-100).
        cursor: next_cursor from a previous page.
    """
    if order_id is not None:
        _order(ctx, order_id)
    q = ctx.query(Refund).filter(order_id=order_id)
    q.compare("created_at", ">=", created_from and f"{created_from}T00:00:00Z").compare(
        "created_at", "<=", created_to and f"{created_to}T23:59:59Z"
    )
    return q.order_by("-created_at").page(limit, cursor)


# -- discount codes ----------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check whether the code {query} still works", "list our discount codes"))
def list_discount_codes(
    ctx: ToolContext,
    query: str | None = None,
    state: DiscountState | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[DiscountCode]:
    """List discount codes with their value, dates, minimum and usage.

    Args:
        query: Words to match in the code or its title (case-insensitive).
        state: active (usable now, limit aside), scheduled (starts later), expired or disabled.
        limit: Maximum number of codes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(DiscountCode).search(query)
    now = ctx.now_iso
    if state == "disabled":
        q.where(disabled=True)
    elif state == "scheduled":
        q.where(disabled=False).compare("starts_at", ">", now)
    elif state == "expired":
        q.where(disabled=False).where_sql("ends_at IS NOT NULL AND ends_at < ?", now)
    elif state == "active":
        q.where(disabled=False).compare("starts_at", "<=", now).where_sql("ends_at IS NULL OR ends_at >= ?", now)
    return q.order_by("code").page(limit, cursor)


@service.tool(
    "write",
    intent="create",
    phrases=("create a discount code {code} for {value} off", "set up the code {code}"),
)
def create_discount_code(
    ctx: ToolContext,
    code: Annotated[str, Field(min_length=3, max_length=30)],
    kind: DiscountKind,
    title: ShortText,
    value: float = 0.0,
    minimum_subtotal: Money = 0.0,
    starts_at: DateTime | None = None,
    ends_at: DateTime | None = None,
    usage_limit: Annotated[int, Field(ge=1, le=1_000_000)] | None = None,
    once_per_customer: bool = False,
) -> DiscountCode:
    """Create a discount code customers can use at checkout.

    Args:
        code: The code itself, 3-30 letters, digits, - or _ (stored in capitals), e.g. SUMMER10.
        kind: percentage (value is percent off), fixed_amount (value is money off) or free_shipping (value 0).
        title: What the code is for, e.g. "Summer sale: 10% off".
        value: Percent (1-100) for percentage, an amount (more than 0) for fixed_amount, 0 for free_shipping.
        minimum_subtotal: The smallest order subtotal the code works on.
        starts_at: When it starts working; default now.
        ends_at: When it stops working; default never.
        usage_limit: How many orders in all may use it; default unlimited.
        once_per_customer: Each customer may use it once.
    """
    normal = code.strip().upper()
    if not re.fullmatch(r"[A-Z0-9_-]{3,30}", normal):
        raise ToolError.invalid_argument("code must be 3-30 letters, digits, - or _, e.g. SUMMER10.")
    if ctx.query(DiscountCode).where_sql("upper(code) = ?", normal).exists():
        raise ToolError.conflict(f"Discount code {normal} already exists; pick another code.")
    if not title.strip():
        raise ToolError.invalid_argument("title must not be empty.")
    if kind == "percentage" and not 1 <= value <= 100:
        raise ToolError.invalid_argument("A percentage discount needs a value between 1 and 100.")
    if kind == "fixed_amount" and not 0 < value <= 1_000_000:
        raise ToolError.invalid_argument("A fixed_amount discount needs a value above 0 (the amount off).")
    if kind == "free_shipping" and value != 0:
        raise ToolError.invalid_argument("A free_shipping discount takes value 0.")
    start = starts_at or ctx.now_iso
    if ends_at is not None and ends_at <= start:
        raise ToolError.invalid_argument(f"ends_at {ends_at} must be after starts_at {start}.")
    return ctx.insert(
        DiscountCode(
            id=ctx.new_id("dsc"),
            code=normal,
            title=title.strip(),
            kind=kind,
            value=round(value, 2),
            minimum_subtotal=round(minimum_subtotal, 2),
            starts_at=start,
            ends_at=ends_at,
            usage_limit=usage_limit,
            once_per_customer=once_per_customer,
            created_at=ctx.now_iso,
        )
    )


@service.tool("write", intent="delete", phrases=("disable {discount_code_id}", "turn off {discount_code_id}"))
def disable_discount_code(ctx: ToolContext, discount_code_id: DiscountCodeId) -> DiscountCode:
    """Disable a discount code so no new order can use it (orders that used it keep their discount).

    Args:
        discount_code_id: The code's id, e.g. dsc_0003 (see list_discount_codes).
    """
    discount = ctx.get(DiscountCode, discount_code_id, "discount code", "Use list_discount_codes to find code ids.")
    if discount.disabled:
        raise ToolError.invalid_state(f"Discount code {discount.code} is already disabled.")
    return ctx.update(discount, disabled=True)


# -- world events -------------------------------------------------------------------------------------------


@service.event("order_placed")
def order_placed(
    ctx: ToolContext,
    customer_email: str,
    items: list[dict[str, Any]],
    shipping_method: str = "standard",
    discount_code: str | None = None,
    shipping_address: str | None = None,
    note: str | None = None,
    paid: bool = True,
    customer_first_name: str | None = None,
    customer_last_name: str | None = None,
    hours_ago: float = 1.0,
) -> str:
    """A customer checks out on the storefront (a task's trigger); returns the new order's id.

    ``items`` are ``{"sku", "quantity"}``. A first-time buyer (an email the store does not know) becomes a
    customer; they need a name and a shipping address. The store's rules apply as for create_order.
    """
    at = ctx.days_from_now(-hours_ago / 24)
    email = customer_email.strip().lower()
    customer = ctx.find(Customer, email=email)
    if customer is None:
        if not (customer_first_name and customer_last_name and shipping_address):
            raise ToolError.invalid_argument(
                "A new customer needs customer_first_name, customer_last_name and shipping_address."
            )
        customer = ctx.insert(
            Customer(
                id=ctx.new_id("cust"),
                first_name=customer_first_name.strip(),
                last_name=customer_last_name.strip(),
                email=email,
                default_address=shipping_address.strip(),
                tags=[],
                created_at=at,
            )
        )
    try:
        pairs = [(str(item["sku"]), int(item["quantity"])) for item in items]
    except (KeyError, TypeError, ValueError):
        raise ToolError.invalid_argument("items must be a list of {sku, quantity}.") from None
    return _place_order(ctx, customer, pairs, shipping_address, shipping_method, discount_code, note, paid, at).id


@service.event("return_requested")
def return_requested(
    ctx: ToolContext,
    order_id: str,
    items: list[dict[str, Any]],
    customer_note: str | None = None,
    hours_ago: float = 1.0,
) -> str:
    """A customer asks on the storefront to send items back (a task's trigger); returns the requested return's id.

    ``items`` are ``{"line_item_id" or "sku", "quantity", "reason"}``. Only shipped units not already in a
    return can be asked for; whether the store policy allows the return is for the merchant to decide
    (approve_return or decline_return), so a request past the window or for final-sale items is recorded.
    """
    order = _order(ctx, order_id)
    lines = ctx.query(LineItem).where(order_id=order.id).all()
    returned = _returned_by_line(ctx, [order.id])
    records = []
    for item in items:
        match = [li for li in lines if li.id == item.get("line_item_id") or li.sku == _sku(str(item.get("sku", "")))]
        if not match:
            raise ToolError.not_found(
                "line item", item.get("line_item_id") or item.get("sku"), f"Not a line of {order.name}."
            )
        line = match[0]
        quantity = int(item.get("quantity", 1))
        reason = str(item.get("reason", "other"))
        if reason not in get_args(ReturnReason):
            raise ToolError.invalid_argument(f"reason {reason!r} is not a return reason.")
        if not 1 <= quantity <= line.fulfilled_quantity - returned.get(line.id, 0):
            raise ToolError.invalid_argument(
                f"{line.title}: only shipped units not already in a return can be asked for."
            )
        records.append(ReturnedItem(line_item_id=line.id, sku=line.sku, quantity=quantity, reason=reason))
    if not records:
        raise ToolError.invalid_argument("items must list at least one item.")
    return ctx.insert(
        Return(
            id=ctx.new_id("ret"),
            order_id=order.id,
            status="requested",
            items=records,
            customer_note=customer_note.strip() if customer_note and customer_note.strip() else None,
            requested_at=ctx.days_from_now(-hours_ago / 24),
        )
    ).id
