"""Shipping: shipments for the store's orders, carrier rates, labels with tracking numbers, tracking events,
voided and return labels, and address validation (modelled on ShipStation / ShipEngine).

A shipment is ``pending`` until a label is bought for it (``label_purchased``), or ``cancelled``. A label
can only be bought for a pending shipment whose address validates and whose weight the carrier takes;
a cancelled order's shipment is cancelled, and no label can be bought for it. A label can be voided
(refunded) only before the carrier's first scan; voiding puts its shipment back to pending. The
carrier's scans arrive as tracking events; a label's tracking status is its latest event's.

Shipments come from the World's commerce plan (``mcp_services.kernel.plans.commerce``): each holds its
order's id, number, recipient, address and items exactly as the commerce service does, and a shipped
order's fulfilment in commerce carries its label's tracking number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, Field, TypeAdapter, WithJsonSchema
from typing_extensions import TypedDict

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import json_text
from mcp_services.kernel.plans.commerce import (
    CARRIER_MAX_GRAMS,
    CARRIER_NAMES,
    CARRIER_SERVICES,
    US_STATES,
    ScanStatus,
    carrier_service,
    commerce_plan,
    parse_address,
    returns_centre_address,
    tracking_number,
    tracking_url,
)
from mcp_services.kernel.plans.commerce import Carrier as CarrierCode
from mcp_services.kernel.records import RecordAccess, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    URL,
    Address,
    CompanyName,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    Money,
    PersonName,
    PhoneNumber,
    ProductSKU,
    Quantity,
    ShortText,
    Tag,
)

ShipmentId = EntityId("shipping.shipment")
LabelId = EntityId("shipping.label")
CarrierId = EntityId("shipping.carrier")
CarrierServiceId = EntityId("shipping.carrier_service")
TrackingEventId = EntityId("shipping.tracking_event")
# Shipments name the store's order they carry, so shipping and commerce reconcile.
OrderId = EntityId("commerce.order")

ShipmentStatus = Literal["pending", "label_purchased", "cancelled"]
LabelStatus = Literal["completed", "voided"]
#: A label's status: its latest scan, or label_created before the carrier's first one.
TrackingStatus = Literal["label_created", ScanStatus]
Speed = Literal["standard", "express"]
Grams = Annotated[int, Field(ge=1, le=1_000_000)]

service = Service(
    "shipping",
    "Shipping for the store's orders: shipments, carrier rates, labels, tracking and address validation.",
    title="Shipping",
)


class PackedItem(TypedDict):
    sku: str
    name: str
    quantity: int


PackedItems = Annotated[
    list[PackedItem], WithJsonSchema({"type": "array", "items": TypeAdapter(PackedItem).json_schema()})
]


# -- derived values ---------------------------------------------------------------------------------------


def _latest_scans(db: RecordAccess, label_ids: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """Each label's latest tracking event: (status, when, description)."""
    if not label_ids:
        return {}
    marks = ", ".join("?" for _ in label_ids)
    rows = db.sql(
        "SELECT label_id, status, occurred_at, description FROM tracking_events e WHERE label_id IN "
        f"({marks}) AND id = (SELECT e2.id FROM tracking_events e2 WHERE e2.label_id = e.label_id "
        "ORDER BY e2.occurred_at DESC, e2.id DESC LIMIT 1)",
        *label_ids,
    )
    return {str(r[0]): (str(r[1]), str(r[2]), str(r[3])) for r in rows}


def _label_status(db: RecordAccess, labels: Sequence[Any]) -> list[str]:
    scans = _latest_scans(db, [label.id for label in labels])
    return [scans[label.id][0] if label.id in scans else "label_created" for label in labels]


def _label_delivered_at(db: RecordAccess, labels: Sequence[Any]) -> list[str | None]:
    scans = _latest_scans(db, [label.id for label in labels])
    return [scans[lb.id][1] if lb.id in scans and scans[lb.id][0] == "delivered" else None for lb in labels]


def _active_labels(db: RecordAccess, shipments: Sequence[Any]) -> dict[str, Any]:
    """Each shipment's outbound label that is not voided."""
    labels = (
        db.query(Label)
        .where_in("shipment_id", [s.id for s in shipments])
        .where(is_return=False, status="completed")
        .all()
    )
    return {label.shipment_id: label for label in labels}


def _shipment_tracking_number(db: RecordAccess, shipments: Sequence[Any]) -> list[str | None]:
    labels = _active_labels(db, shipments)
    return [labels[s.id].tracking_number if s.id in labels else None for s in shipments]


def _shipment_tracking_status(db: RecordAccess, shipments: Sequence[Any]) -> list[str | None]:
    labels = _active_labels(db, shipments)
    statuses = dict(zip((lb.id for lb in labels.values()), _label_status(db, list(labels.values())), strict=True))
    return [statuses[labels[s.id].id] if s.id in labels else None for s in shipments]


def _estimated_delivery(label: Any) -> str | None:
    found = carrier_service(label.service_code)
    if found is None:
        return None
    created = datetime.strptime(label.created_at, "%Y-%m-%dT%H:%M:%SZ")
    return (created + timedelta(days=found.transit_days)).date().isoformat()


# -- entities --------------------------------------------------------------------------------------------


@service.entity(table="carriers", prefix="car", label="name", search=("name", "code"))
class Carrier:
    """A carrier account the store ships with."""

    id: CarrierId
    code: CarrierCode = field(unique=True)
    name: CompanyName = field(role="carrier")
    account_number: str
    max_weight_grams: Quantity


@service.entity(table="carrier_services", prefix="csv", label="name", search=("name", "code"))
class CarrierService:
    """A carrier's service level (UPS Ground, FedEx 2Day...) with its transit time."""

    id: CarrierServiceId
    carrier_id: CarrierId
    code: str = field(unique=True)
    name: str
    transit_days: int
    express: bool

    carrier_code = joined(str, via="carrier_id", field="code")


@service.entity(
    table="shipments",
    prefix="shp",
    label="order_number",
    search=("order_number", "ship_to_name", "ship_to_email", "ship_to_company"),
    state=StateDef(
        field="status",
        values=["pending", "label_purchased", "cancelled"],
        initial="pending",
        terminal=["cancelled"],
        transitions={"pending": ["label_purchased", "cancelled"], "label_purchased": ["pending"]},
    ),
)
class Shipment:
    """What goes to one customer for one order: from the warehouse to the order's address."""

    id: ShipmentId
    order_id: OrderId = field(index=True, link="commerce.order.id")
    order_number: str = field(index=True, link="commerce.order.name", mention="the order number")
    ship_to_name: PersonName = field(role="recipient")
    ship_to_company: CompanyName | None = field(None, role="employer")
    ship_to_email: EmailAddress | None = field(None, role="recipient")
    ship_to_phone: PhoneNumber | None = None
    ship_to_address: Address = field(mention="the delivery address")
    ship_from_name: CompanyName = field(role="shipper")
    ship_from_address: Address
    items: PackedItems
    weight_grams: Quantity
    requested_service: Speed = "standard"
    status: ShipmentStatus = "pending"
    tags: list[str] = field(incidental=True)
    created_at: DateTime
    updated_at: DateTime

    tracking_number = derived(str | None, batch=_shipment_tracking_number, description="The current outbound label's")
    tracking_status = derived(str | None, batch=_shipment_tracking_status, description="The current outbound label's")


@service.entity(
    table="labels",
    prefix="lbl",
    label="tracking_number",
    search=("tracking_number",),
    state=StateDef(field="status", values=["completed", "voided"], initial="completed", terminal=["voided"]),
)
class Label:
    """A postage label bought from a carrier for a shipment (or for its return), with its tracking number."""

    id: LabelId
    shipment_id: ShipmentId
    is_return: bool = False
    carrier_id: CarrierId
    service_code: str
    tracking_number: str = field(unique=True, mention="the tracking number")
    tracking_url: URL = field(mention="the tracking link")
    cost: Money = field(mention="the label cost")
    status: LabelStatus = "completed"
    created_at: DateTime
    voided_at: DateTime | None = None

    carrier_code = joined(str, via="carrier_id", field="code")
    order_number = joined(str, via="shipment_id", field="order_number")
    tracking_status = derived(str, batch=_label_status, description="The latest scan, or label_created before any")
    delivered_at = derived(DateTime | None, batch=_label_delivered_at)
    estimated_delivery = derived(Date | None, _estimated_delivery)


@service.entity(table="tracking_events", prefix="tev", search=("description", "location"))
class TrackingEvent:
    """A carrier's scan of a package."""

    id: TrackingEventId
    label_id: LabelId
    occurred_at: DateTime
    status: ScanStatus
    description: ShortText
    location: str | None = None

    tracking_number = joined(str, via="label_id", field="tracking_number")


# -- seed ------------------------------------------------------------------------------------------------

_ACCOUNTS = {"ups": "UPS-{}", "fedex": "FDX-{}", "usps": "USPS-{}"}


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    carriers = {
        code: Carrier(
            id=ctx.new_id("car"),
            code=code,
            name=name,  # type: ignore[arg-type]
            account_number=_ACCOUNTS[code].format(rng.randint(100000, 999999)),
            max_weight_grams=CARRIER_MAX_GRAMS[code],
        )
        for code, name in CARRIER_NAMES.items()
    }
    ctx.insert_many(list(carriers.values()))
    ctx.insert_many(
        [
            CarrierService(
                id=ctx.new_id("csv"),
                carrier_id=carriers[s.carrier].id,
                code=s.code,
                name=s.name,
                transit_days=s.transit_days,
                express=s.express,
            )
            for s in CARRIER_SERVICES
        ]
    )
    plan = commerce_plan(world)
    shipments, pending_labels = [], []
    for planned in plan.shipments:
        shipment = Shipment(
            id=ctx.new_id("shp"),
            order_id=planned.order_id,
            order_number=planned.order_number,
            ship_to_name=planned.ship_to_name,
            ship_to_company=planned.ship_to_company,
            ship_to_email=planned.ship_to_email,
            ship_to_phone=planned.ship_to_phone,
            ship_to_address=planned.ship_to_address,
            ship_from_name=world.home.name,
            ship_from_address=world.home.address,
            items=[PackedItem(sku=i.sku, name=i.name, quantity=i.quantity) for i in planned.items],
            weight_grams=planned.grams,
            requested_service=planned.requested_service,
            status=planned.status,
            tags=["express"] if planned.requested_service == "express" else [],
            created_at=planned.created_at,
            updated_at=max([planned.created_at] + [label.created_at for label in planned.labels]),
        )
        shipments.append(shipment)
        pending_labels += [(label, shipment.id) for label in planned.labels]
    ctx.insert_many(shipments)
    labels, events = [], []
    for planned_label, shipment_id in sorted(pending_labels, key=lambda pair: pair[0].created_at):  # ids follow time
        label = Label(
            id=ctx.new_id("lbl"),
            shipment_id=shipment_id,
            is_return=planned_label.is_return,
            carrier_id=carriers[planned_label.carrier].id,
            service_code=planned_label.service_code,
            tracking_number=planned_label.tracking_number,
            tracking_url=planned_label.tracking_url,
            cost=planned_label.cost,
            created_at=planned_label.created_at,
        )
        labels.append(label)
        events += [(e, label.id) for e in planned_label.events]
    ctx.insert_many(labels)
    ctx.insert_many(
        [
            TrackingEvent(
                id=ctx.new_id("tev"),
                label_id=label_id,
                occurred_at=e.at,
                status=e.status,
                description=e.description,
                location=e.location,
            )
            for e, label_id in sorted(events, key=lambda pair: (pair[0].at, pair[1]))
        ]
    )


# -- shared rules ----------------------------------------------------------------------------------------


def _shipment(ctx: ToolContext, shipment_id: str) -> Shipment:
    return ctx.get(Shipment, shipment_id, "shipment", "Use list_shipments (e.g. with order_number='#1042') to find it.")


def _label(ctx: ToolContext, label_id: str) -> Label:
    return ctx.get(Label, label_id, "label", "Use list_labels (or get_shipment's tracking number) to find label ids.")


def _carrier(ctx: ToolContext, code: str) -> Carrier:
    found = ctx.find(Carrier, code=code)
    if found is None:
        raise ToolError.not_found("carrier", code, "Use list_carriers to see the store's carriers.")
    return found


def _number(text: str) -> str:
    return text.strip().upper()


def _order_number(text: str) -> str:
    return f"#{text.strip().lstrip('#')}"


class AddressCheck(BaseModel):
    """The result of validating an address: verified, warning (deliverable, but check it) or error (undeliverable)."""

    status: Literal["verified", "warning", "error"]
    normalized_address: Address | None
    street: str | None
    city: str | None
    state: str | None
    postal_code: str | None
    messages: list[str]


def _check_address(text: str) -> AddressCheck:
    parts = parse_address(text)
    if parts is None:
        return AddressCheck(
            status="error",
            normalized_address=None,
            street=None,
            city=None,
            state=None,
            postal_code=None,
            messages=["The address must read 'street, city, ST 12345' (street, city, two-letter state, ZIP code)."],
        )
    errors, warnings = [], []
    if parts.state not in US_STATES:
        errors.append(f"{parts.state} is not a US state or territory code.")
    if parts.postal_code is None:
        errors.append("The ZIP code is missing.")
    elif not re.fullmatch(r"\d{5}(-\d{4})?", parts.postal_code):
        errors.append(f"{parts.postal_code} is not a ZIP code (5 digits, or ZIP+4).")
    if not re.match(r"^\d+", parts.street):
        warnings.append("The street line has no house number; the carrier may not find it.")
    status: Literal["verified", "warning", "error"] = "error" if errors else ("warning" if warnings else "verified")
    normal = f"{parts.street}, {parts.city}, {parts.state} {parts.postal_code}" if not errors else None
    return AddressCheck(
        status=status,
        normalized_address=normal,
        street=parts.street,
        city=parts.city,
        state=parts.state,
        postal_code=parts.postal_code,
        messages=errors + warnings,
    )


def _rates(ctx: ToolContext, weight: int, carrier: str | None = None) -> list[RateOut]:
    today = ctx.now.date()
    rates = []
    for s in CARRIER_SERVICES:
        if (carrier is None or s.carrier == carrier) and weight <= CARRIER_MAX_GRAMS[s.carrier]:
            rates.append(
                RateOut(
                    carrier=s.carrier,
                    carrier_name=CARRIER_NAMES[s.carrier],
                    service_code=s.code,
                    service_name=s.name,
                    transit_days=s.transit_days,
                    express=s.express,
                    amount=s.rate(weight),
                    currency=ctx.world.currency,
                    estimated_delivery=(today + timedelta(days=s.transit_days)).isoformat(),
                )
            )
    return sorted(rates, key=lambda r: (r.amount, r.transit_days, r.service_code))


def _buy(ctx: ToolContext, shipment: Shipment, code: str, is_return: bool) -> Label:
    """Buy a label: a new tracking number from the carrier, priced by weight and service."""
    found = carrier_service(code)
    if found is None:
        raise ToolError.not_found("service", code, "Use get_rates or list_carrier_services for service codes.")
    carrier = _carrier(ctx, found.carrier)
    if shipment.weight_grams > carrier.max_weight_grams:
        raise ToolError.invalid_state(
            f"{carrier.name} takes packages up to {carrier.max_weight_grams / 1000:g} kg; this one weighs "
            f"{shipment.weight_grams / 1000:g} kg. Choose another carrier's service (get_rates)."
        )
    label_id = ctx.new_id("lbl")
    number = tracking_number(found.carrier, f"{ctx.world.seed}:{label_id}")
    label = ctx.insert(
        Label(
            id=label_id,
            shipment_id=shipment.id,
            is_return=is_return,
            carrier_id=carrier.id,
            service_code=found.code,
            tracking_number=number,
            tracking_url=tracking_url(found.carrier, number),
            cost=found.rate(shipment.weight_grams),
            created_at=ctx.now_iso,
        )
    )
    return label


# -- carriers and rates ------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check which carriers we ship with", "list our carrier accounts"))
def list_carriers(ctx: ToolContext, limit: Limit = 20, cursor: Cursor = None) -> Page[Carrier]:
    """List the carrier accounts the store ships with, and the heaviest package each takes.

    Args:
        limit: Maximum number of carriers to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Carrier).order_by("name").page(limit, cursor)


@service.tool(
    "read", intent="find", phrases=("check the express services of {carrier_code}", "list the shipping services")
)
def list_carrier_services(
    ctx: ToolContext,
    carrier_code: CarrierCode | None = None,
    express: bool | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[CarrierService]:
    """List carrier services with their transit times.

    Args:
        carrier_code: Only this carrier's services: ups, fedex or usps.
        express: true: only express (1-2 day) services; false: only standard ones.
        limit: Maximum number of services to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(CarrierService).filter(express=express)
    if carrier_code is not None:
        q.where(carrier_id=_carrier(ctx, carrier_code).id)
    return q.order_by("transit_days", "code").page(limit, cursor)


class RateOut(BaseModel):
    """What a label would cost with one carrier service, and when it would arrive."""

    carrier: CarrierCode
    carrier_name: CompanyName
    service_code: str
    service_name: str
    transit_days: int
    express: bool
    amount: Money
    currency: str
    estimated_delivery: Date


@service.tool(
    "read", intent="check", phrases=("get shipping rates for {shipment_id}", "what would it cost to ship {shipment_id}")
)
def get_rates(ctx: ToolContext, shipment_id: ShipmentId, carrier_code: CarrierCode | None = None) -> list[RateOut]:
    """Price a shipment with every service that takes its weight, cheapest first, with estimated delivery.

    Args:
        shipment_id: The shipment to price, e.g. shp_0042.
        carrier_code: Only this carrier's services: ups, fedex or usps.
    """
    shipment = _shipment(ctx, shipment_id)
    return _rates(ctx, shipment.weight_grams, carrier_code)


@service.tool(
    "read", intent="check", phrases=("check the address {address}", "validate the delivery address {address}")
)
def validate_address(ctx: ToolContext, address: Address) -> AddressCheck:
    """Check that an address can be delivered to: street, city, a real state code and a ZIP code. Labels are
    only bought for addresses that do not fail (status error).

    Args:
        address: The address on one line, e.g. "967 Lawson Fort Apt. 024, Lake Kyle, NY 75246".
    """
    return _check_address(address)


# -- shipments ------------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=(
        "check the shipment of order {order_number}",
        "find the shipments awaiting a label",
        "look up {query} in shipping",
    ),
)
def list_shipments(
    ctx: ToolContext,
    query: str | None = None,
    order_number: str | None = None,
    order_id: OrderId | None = None,
    status: ShipmentStatus | None = None,
    ship_to_email: EmailAddress | None = None,
    tag: Tag | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Shipment]:
    """List shipments, newest first: pending ones await a label, label_purchased ones have shipped.

    Args:
        query: Words to match in the order number, recipient's name, email or company (case-insensitive).
        order_number: The store's order number, e.g. #1042 (the # is optional).
        order_id: The store's order id, e.g. ord_0042.
        status: pending (awaiting a label), label_purchased or cancelled.
        ship_to_email: Only shipments to this email.
        tag: Only shipments with this tag, e.g. express.
        created_from: Only shipments created on or after this day (YYYY-MM-DD).
        created_to: Only shipments created on or before this day (YYYY-MM-DD).
        limit: Maximum number of shipments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = (
        ctx.query(Shipment)
        .search(query)
        .filter(
            order_number=_order_number(order_number) if order_number and order_number.strip() else None,
            order_id=order_id,
            status=status,
            ship_to_email=ship_to_email.strip().lower() if ship_to_email else None,
        )
    )
    if tag is not None:
        q.where_sql("lower(tags) LIKE ? ESCAPE '\\'", like_pattern(json_text(tag.strip().lower())))
    q.compare("created_at", ">=", created_from and f"{created_from}T00:00:00Z").compare(
        "created_at", "<=", created_to and f"{created_to}T23:59:59Z"
    )
    return q.order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open {shipment_id}", "check what is in {shipment_id}"))
def get_shipment(ctx: ToolContext, shipment_id: ShipmentId) -> Shipment:
    """Get one shipment: recipient, address, items, weight, status and its current tracking number.

    Args:
        shipment_id: The shipment's id, e.g. shp_0042 (see list_shipments).
    """
    return _shipment(ctx, shipment_id)


class PackedItemIn(BaseModel):
    """One item in the box."""

    sku: ProductSKU = Field(description="The item's SKU, as on the order.")
    name: ShortText = Field(description="The item's name, e.g. 'Ergonomic office chair - Black'.")
    quantity: Quantity = Field(description="How many units (at least 1).")


@service.tool(
    "write",
    intent="create",
    phrases=("create a shipment for order {order_number}", "set up shipping for {order_number} to {ship_to_address}"),
)
def create_shipment(
    ctx: ToolContext,
    order_id: OrderId,
    order_number: Annotated[str, Field(min_length=2, max_length=20)],
    ship_to_name: PersonName,
    ship_to_address: Address,
    items: list[PackedItemIn],
    weight_grams: Grams,
    ship_to_email: EmailAddress | None = None,
    ship_to_phone: PhoneNumber | None = None,
    ship_to_company: CompanyName | None = None,
    requested_service: Speed = "standard",
) -> Shipment:
    """Create a shipment for a store order (copy the order's number, recipient, address and items from
    commerce). An order has at most one shipment that is not cancelled.

    Args:
        order_id: The store's order id, e.g. ord_0042.
        order_number: The store's order number, e.g. #1042.
        ship_to_name: The recipient's full name.
        ship_to_address: The delivery address on one line.
        items: What goes in the box: [{"sku", "name", "quantity"}].
        weight_grams: The package's weight in grams.
        ship_to_email: The recipient's email, for tracking updates.
        ship_to_phone: The recipient's phone in E.164 form.
        ship_to_company: The recipient's company.
        requested_service: standard or express, as the customer paid for.
    """
    number = _order_number(order_number)
    if not re.fullmatch(r"#\d{3,10}", number):
        raise ToolError.invalid_argument(f"order_number {order_number!r} is not an order number like #1042.")
    taken = ctx.query(Shipment).where(order_id=order_id).where_sql("status != 'cancelled'").first()
    if taken is not None:
        raise ToolError.conflict(f"Order {number} already has shipment {taken.id} ({taken.status}); use that one.")
    if not items or any(i.quantity < 1 for i in items):
        raise ToolError.invalid_argument("items must list at least one item, each with a quantity of at least 1.")
    return ctx.insert(
        Shipment(
            id=ctx.new_id("shp"),
            order_id=order_id,
            order_number=number,
            ship_to_name=ship_to_name.strip(),
            ship_to_company=ship_to_company,
            ship_to_email=ship_to_email.strip().lower() if ship_to_email else None,
            ship_to_phone=ship_to_phone,
            ship_to_address=" ".join(ship_to_address.split()),
            ship_from_name=ctx.world.home.name,
            ship_from_address=ctx.world.home.address,
            items=[PackedItem(sku=i.sku.strip().upper(), name=i.name.strip(), quantity=i.quantity) for i in items],
            weight_grams=weight_grams,
            requested_service=requested_service,
            tags=["express"] if requested_service == "express" else [],
            created_at=ctx.now_iso,
            updated_at=ctx.now_iso,
        )
    )


@service.tool(
    "write",
    intent="update",
    phrases=("change the delivery address of {shipment_id} to {ship_to_address}", "update {shipment_id}"),
)
def update_shipment(
    ctx: ToolContext,
    shipment_id: ShipmentId,
    ship_to_address: Address | None = None,
    ship_to_name: PersonName | None = None,
    ship_to_phone: PhoneNumber | None = None,
    weight_grams: Grams | None = None,
) -> Shipment:
    """Correct a pending shipment's address, recipient, phone or weight. A shipment with a label cannot change:
    void its label first.

    Args:
        shipment_id: The shipment to change, e.g. shp_0042.
        ship_to_address: The corrected delivery address on one line.
        ship_to_name: The corrected recipient name.
        ship_to_phone: The corrected phone in E.164 form.
        weight_grams: The corrected weight in grams.
    """
    shipment = _shipment(ctx, shipment_id)
    if all(v is None for v in (ship_to_address, ship_to_name, ship_to_phone, weight_grams)):
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if shipment.status != "pending":
        hint = "void its label first (void_label)" if shipment.status == "label_purchased" else "it is cancelled"
        raise ToolError.invalid_state(f"Shipment {shipment.id} is {shipment.status}; {hint}.")
    changes: dict[str, Any] = {}
    if ship_to_address is not None:
        changes["ship_to_address"] = " ".join(ship_to_address.split())
    if ship_to_name is not None:
        changes["ship_to_name"] = ship_to_name.strip()
    if ship_to_phone is not None:
        changes["ship_to_phone"] = ship_to_phone
    if weight_grams is not None:
        changes["weight_grams"] = weight_grams
    return ctx.update(shipment, **changes, updated_at=ctx.now_iso)


@service.tool("write", intent="cancel", phrases=("cancel {shipment_id}", "stop {shipment_id}"))
def cancel_shipment(ctx: ToolContext, shipment_id: ShipmentId) -> Shipment:
    """Cancel a pending shipment (its order was cancelled). A shipment with a label must have it voided first.

    Args:
        shipment_id: The shipment to cancel, e.g. shp_0042.
    """
    shipment = _shipment(ctx, shipment_id)
    if shipment.status == "cancelled":
        raise ToolError.invalid_state(f"Shipment {shipment.id} is already cancelled.")
    if shipment.status == "label_purchased":
        raise ToolError.invalid_state(f"Shipment {shipment.id} has a label; void_label it first, then cancel.")
    return ctx.update(shipment, status="cancelled", updated_at=ctx.now_iso)


@service.tool("write", intent="tag", phrases=("tag {shipment_id} as {tag}", "mark {shipment_id} as {tag}"))
def tag_shipment(ctx: ToolContext, shipment_id: ShipmentId, tag: Tag) -> Shipment:
    """Add a tag to a shipment (e.g. fragile, gift, hold).

    Args:
        shipment_id: The shipment to tag, e.g. shp_0042.
        tag: The tag to add.
    """
    shipment = _shipment(ctx, shipment_id)
    name = tag.strip().lower()
    if name in shipment.tags:
        raise ToolError.invalid_state(f"Shipment {shipment.id} is already tagged {name}.")
    return ctx.update(shipment, tags=sorted([*shipment.tags, name]), updated_at=ctx.now_iso)


# -- labels -----------------------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="ship",
    phrases=("buy a label for {shipment_id} with {service_code}", "ship {shipment_id} by {service_code}"),
)
def create_label(ctx: ToolContext, shipment_id: ShipmentId, service_code: ShortText) -> Label:
    """Buy a postage label for a pending shipment: the carrier gives a tracking number (put it on the store's
    order with commerce's fulfill_order). Refused for a cancelled shipment, one that already has a label,
    an address that fails validation, or a package too heavy for the carrier.

    Args:
        shipment_id: The shipment to ship, e.g. shp_0042.
        service_code: The carrier service, e.g. ups_ground or fedex_2day (see get_rates).
    """
    shipment = _shipment(ctx, shipment_id)
    if shipment.status == "cancelled":
        raise ToolError.invalid_state(
            f"Shipment {shipment.id} for order {shipment.order_number} is cancelled; no label can be bought for it."
        )
    if shipment.status == "label_purchased":
        current = _active_labels(ctx, [shipment]).get(shipment.id)
        raise ToolError.invalid_state(
            f"Shipment {shipment.id} already has label {current.id if current else ''}; void_label it to buy another."
        )
    check = _check_address(shipment.ship_to_address)
    if check.status == "error":
        raise ToolError.invalid_state(
            f"The delivery address of {shipment.id} fails validation: {' '.join(check.messages)} "
            "Correct it with update_shipment (and on the order in commerce) before buying a label."
        )
    label = _buy(ctx, shipment, service_code.strip().lower(), is_return=False)
    ctx.update(shipment, status="label_purchased", updated_at=ctx.now_iso)
    return label


@service.tool("read", intent="find", phrases=("find the labels bought for {shipment_id}", "check the voided labels"))
def list_labels(
    ctx: ToolContext,
    shipment_id: ShipmentId | None = None,
    status: LabelStatus | None = None,
    carrier_code: CarrierCode | None = None,
    tracking_number: str | None = None,
    is_return: bool | None = None,
    created_from: Date | None = None,
    created_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Label]:
    """List labels, newest first, with their tracking status.

    Args:
        shipment_id: Only this shipment's labels.
        status: completed or voided.
        carrier_code: Only this carrier's labels: ups, fedex or usps.
        tracking_number: Only the label with this tracking number.
        is_return: true: only return labels; false: only outbound ones.
        created_from: Only labels bought on or after this day (YYYY-MM-DD).
        created_to: Only labels bought on or before this day (YYYY-MM-DD).
        limit: Maximum number of labels to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Label).filter(
        shipment_id=shipment_id,
        status=status,
        is_return=is_return,
        tracking_number=_number(tracking_number) if tracking_number and tracking_number.strip() else None,
    )
    if carrier_code is not None:
        q.where(carrier_id=_carrier(ctx, carrier_code).id)
    q.compare("created_at", ">=", created_from and f"{created_from}T00:00:00Z").compare(
        "created_at", "<=", created_to and f"{created_to}T23:59:59Z"
    )
    return q.order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open {label_id}", "check what {label_id} cost"))
def get_label(ctx: ToolContext, label_id: LabelId) -> Label:
    """Get one label: carrier, service, tracking number and link, cost and tracking status.

    Args:
        label_id: The label's id, e.g. lbl_0042.
    """
    return _label(ctx, label_id)


@service.tool("write", intent="cancel", phrases=("void {label_id}", "void {label_id} and get the postage back"))
def void_label(ctx: ToolContext, label_id: LabelId) -> Label:
    """Void a label the carrier has not scanned yet; its cost is refunded and its shipment is pending again
    (buy a new label, or cancel the shipment). A label the carrier has scanned cannot be voided.

    Args:
        label_id: The label to void, e.g. lbl_0042.
    """
    label = _label(ctx, label_id)
    if label.status == "voided":
        raise ToolError.invalid_state(f"Label {label.id} is already voided.")
    scans = _latest_scans(ctx, [label.id])
    if label.id in scans:
        status, when, _ = scans[label.id]
        raise ToolError.invalid_state(
            f"The carrier scanned label {label.id} ({status}, {when}); a label in the carrier's hands cannot be voided."
        )
    voided = ctx.update(label, status="voided", voided_at=ctx.now_iso)
    if not label.is_return:
        shipment = _shipment(ctx, label.shipment_id)
        ctx.update(shipment, status="pending", updated_at=ctx.now_iso)
    return voided


@service.tool(
    "write",
    intent="ship",
    phrases=("send the customer of {label_id} a return label", "create a return label for {label_id}"),
)
def create_return_label(ctx: ToolContext, label_id: LabelId) -> Label:
    """Buy a prepaid return label for a delivered package: from the customer back to the warehouse, by
    ground service. One active return label per shipment.

    Args:
        label_id: The delivered outbound label, e.g. lbl_0042.
    """
    label = _label(ctx, label_id)
    if label.is_return:
        raise ToolError.invalid_argument(f"Label {label.id} is itself a return label; pass the outbound label.")
    if label.status == "voided":
        raise ToolError.invalid_state(f"Label {label.id} was voided; nothing was delivered.")
    if _label_status(ctx, [label])[0] != "delivered":
        raise ToolError.invalid_state(
            f"Label {label.id} has not been delivered yet; a return label needs a delivered package."
        )
    shipment = _shipment(ctx, label.shipment_id)
    if ctx.query(Label).where(shipment_id=shipment.id, is_return=True, status="completed").exists():
        raise ToolError.conflict(f"Shipment {shipment.id} already has a return label; use list_labels to find it.")
    code = "usps_ground_advantage" if shipment.weight_grams <= CARRIER_MAX_GRAMS["usps"] else "ups_ground"
    returned = _buy(ctx, shipment, code, is_return=True)
    ctx.update(shipment, updated_at=ctx.now_iso)
    return returned


# -- tracking --------------------------------------------------------------------------------------------


class ScanOut(BaseModel):
    occurred_at: DateTime
    status: ScanStatus
    description: str
    location: str | None


class TrackingOut(BaseModel):
    """Where a package is: its latest status and every scan so far, oldest first."""

    tracking_number: str
    tracking_url: URL
    carrier: CarrierCode
    service_code: str
    order_number: str
    is_return: bool
    label_status: LabelStatus
    status: TrackingStatus
    estimated_delivery: Date | None
    delivered_at: DateTime | None
    ship_to_name: PersonName
    ship_to_address: Address
    events: list[ScanOut]


@service.tool(
    "read", intent="check", phrases=("track the package {tracking_number}", "where is the parcel {tracking_number}")
)
def track_package(ctx: ToolContext, tracking_number: Annotated[str, Field(min_length=6, max_length=40)]) -> TrackingOut:
    """Track a package by its tracking number: its status (in transit, delivered, exception...) and every scan.

    Args:
        tracking_number: The carrier's tracking number, e.g. 1Z8V4E290312345678.
    """
    label = ctx.find(Label, tracking_number=_number(tracking_number))
    if label is None:
        raise ToolError.not_found(
            "package with tracking number",
            _number(tracking_number),
            "Use list_labels or get_shipment to find the tracking number.",
        )
    shipment = _shipment(ctx, label.shipment_id)
    scans = ctx.query(TrackingEvent).where(label_id=label.id).order_by("occurred_at").all()
    carrier = ctx.get(Carrier, label.carrier_id)
    status = scans[-1].status if scans else "label_created"
    address = returns_centre_address(ctx.world) if label.is_return else shipment.ship_to_address
    return TrackingOut(
        tracking_number=label.tracking_number,
        tracking_url=label.tracking_url,
        carrier=carrier.code,
        service_code=label.service_code,
        order_number=shipment.order_number,
        is_return=label.is_return,
        label_status=label.status,
        status=status,
        estimated_delivery=_estimated_delivery(label),
        delivered_at=scans[-1].occurred_at if status == "delivered" else None,
        ship_to_name=ctx.world.home.name if label.is_return else shipment.ship_to_name,
        ship_to_address=address,
        events=[
            ScanOut(occurred_at=s.occurred_at, status=s.status, description=s.description, location=s.location)
            for s in scans
        ],
    )


# -- world events -----------------------------------------------------------------------------------------


@service.event("tracking_updated")
def tracking_updated(
    ctx: ToolContext,
    tracking_number: str,
    status: str,
    description: str,
    location: str | None = None,
    hours_ago: float = 1.0,
) -> str:
    """The carrier scans a package (a task's trigger: a delivery exception, a package returned to sender);
    returns the tracking event's id. The scan is the label's latest: it cannot predate the last one."""
    label = ctx.find(Label, tracking_number=_number(tracking_number))
    if label is None:
        raise ToolError.not_found("package with tracking number", tracking_number)
    if label.status == "voided":
        raise ToolError.invalid_state(f"Label {label.id} was voided; the carrier never had it.")
    if status not in get_args(ScanStatus):
        raise ToolError.invalid_argument(f"status {status!r} is not one of {', '.join(get_args(ScanStatus))}.")
    if not description.strip():
        raise ToolError.invalid_argument("description must not be empty.")
    at = ctx.days_from_now(-hours_ago / 24)
    last = _latest_scans(ctx, [label.id]).get(label.id)
    if last is not None and at < last[1]:
        raise ToolError.invalid_argument(f"The label's latest scan is at {last[1]}; a new scan cannot be earlier.")
    return ctx.insert(
        TrackingEvent(
            id=ctx.new_id("tev"),
            label_id=label.id,
            occurred_at=at,
            status=status,  # type: ignore[arg-type]
            description=description.strip(),
            location=location.strip() if location else None,
        )
    ).id
