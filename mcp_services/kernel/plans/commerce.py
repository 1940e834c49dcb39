"""The shop and its paperwork: what commerce sells and to whom, what shipping carries, what esign has out.

Three services hold the same records, and this plan is where they come from, so they agree value
for value:

- ``commerce`` (Shopify) holds the catalogue built from ``world.products`` (products, variants, stock),
  the World's customers, their orders with line items, fulfilments, returns and refunds, the discount
  codes, and the store policy that decides returns and shipping charges;
- ``shipping`` (ShipStation) holds a shipment for every order that was sent or awaits a label, with
  the order's id, number, name, address and items, and the labels and tracking events of the ones
  that shipped: a fulfilment's tracking number in commerce is its label's tracking number;
- ``esign`` (DocuSign) holds the agreements sent for signature; each belongs to a sales deal that
  ``CommercePlan.deals`` lists, for crm to hold too (see ``PlannedDeal``). The master services
  agreements are the World's contracts (``world.plan.contracts``, whose documents files keeps).

Everything is a pure function of the World, built once per seed: ``commerce_plan(world)``.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Literal

from mcp_services.kernel.prose import industry_facts, write
from mcp_services.kernel.world import Organisation, Person, PlannedContract, World, WorldShape

__all__ = [
    "CARRIER_MAX_GRAMS",
    "CARRIER_NAMES",
    "CARRIER_SERVICES",
    "CancelReason",
    "Carrier",
    "CarrierService",
    "CommercePlan",
    "DealStage",
    "DeclineReason",
    "DiscountKind",
    "ENVELOPE_EXPIRY_DAYS",
    "EXPRESS_SHIPPING",
    "EnvelopeStory",
    "FINAL_SALE_TYPES",
    "FIRST_ORDER_NUMBER",
    "FREE_SHIPPING_MINIMUM",
    "ORDER_ID_PREFIX",
    "OrderStory",
    "PARCEL_GRAMS",
    "PlannedDeal",
    "PlannedDiscount",
    "PlannedEnvelope",
    "PlannedFulfillment",
    "PlannedLabel",
    "PlannedLine",
    "PlannedOrder",
    "PlannedProduct",
    "PlannedRefund",
    "PlannedReturn",
    "PlannedShipment",
    "PlannedSigner",
    "PlannedTrackingEvent",
    "PlannedVariant",
    "PostalAddress",
    "ReturnReason",
    "SHIPPABLE_TYPES",
    "STANDARD_SHIPPING",
    "ScanStatus",
    "ShipmentItem",
    "ShippingMethod",
    "StorePolicy",
    "TEMPLATES",
    "US_STATES",
    "carrier_service",
    "commerce_plan",
    "parse_address",
    "price_order",
    "promised_delivery",
    "refund_value",
    "returns_centre_address",
    "tracking_number",
    "tracking_url",
]

# -- the store's policy and the carriers ------------------------------------------------------------

#: Product types that ship in a box; the others (services, subscriptions, usage) are fulfilled without one.
SHIPPABLE_TYPES = frozenset({"furniture", "hardware", "pantry", "supplies", "merchandise"})
#: Product types that are final sale: never returned.
FINAL_SALE_TYPES = ("pantry", "services", "subscriptions", "usage")
STANDARD_SHIPPING = 12.0
EXPRESS_SHIPPING = 29.0
FREE_SHIPPING_MINIMUM = 150.0
#: Days after an envelope is sent before it expires unsigned (and is voided).
ENVELOPE_EXPIRY_DAYS = 30
#: Shopify's first order number; orders are #1001, #1002... in the order they were placed.
FIRST_ORDER_NUMBER = 1001
#: Order ids follow the plan's order: the n-th planned order is ``ord_000n`` in commerce and in shipping.
ORDER_ID_PREFIX = "ord"
#: The discount code with a usage limit that the World's orders used up.
_USED_UP_CODE = "TEAMGEAR20"

Carrier = Literal["ups", "fedex", "usps"]
ShippingMethod = Literal["standard", "express", "none"]
#: What a carrier's scan says about a package.
ScanStatus = Literal[
    "accepted", "in_transit", "out_for_delivery", "delivery_attempt", "delivered", "exception", "returned_to_sender"
]


@dataclass(frozen=True, slots=True)
class StorePolicy:
    """What the store promises customers; the commerce service enforces it and states it in ``text``."""

    return_window_days: int
    final_sale_types: tuple[str, ...]
    standard_shipping: float
    express_shipping: float
    free_shipping_minimum: float
    currency: str

    @property
    def text(self) -> str:
        final = ", ".join(self.final_sale_types)
        return (
            f"Returns: items can be returned within {self.return_window_days} days of the day they shipped, unused "
            f"and in their original packaging. Final sale, never returned: {final}. Refunds go back to the original "
            "payment method and never exceed what the customer paid minus what was already refunded. "
            f"Shipping: standard shipping costs {self.standard_shipping:.2f} {self.currency} and is free on orders of "
            f"{self.free_shipping_minimum:.2f} {self.currency} or more after discounts; express shipping costs "
            f"{self.express_shipping:.2f} {self.currency}. Orders ship once they are paid. An order cannot be "
            "cancelled once any of its items has shipped: start a return instead."
        )


@dataclass(frozen=True, slots=True)
class CarrierService:
    """A carrier's service level with its price: ``base`` plus ``per_kg`` for each kilogram."""

    carrier: Carrier
    code: str
    name: str
    transit_days: int
    base: float
    per_kg: float
    express: bool

    def rate(self, grams: int) -> float:
        return round(self.base + self.per_kg * max(grams, 100) / 1000, 2)


CARRIER_NAMES: Mapping[str, str] = {"ups": "UPS", "fedex": "FedEx", "usps": "USPS"}
#: The heaviest parcel the World's orders make up, in grams (every carrier but USPS takes it).
PARCEL_GRAMS = 60_000
#: The heaviest package each carrier accepts, in grams (USPS: 70 lb).
CARRIER_MAX_GRAMS: Mapping[str, int] = {"ups": 68_000, "fedex": 68_000, "usps": 31_750}
CARRIER_SERVICES: tuple[CarrierService, ...] = (
    CarrierService("ups", "ups_ground", "UPS Ground", 5, 9.50, 1.10, False),
    CarrierService("ups", "ups_2nd_day_air", "UPS 2nd Day Air", 2, 21.00, 2.40, True),
    CarrierService("ups", "ups_next_day_air", "UPS Next Day Air", 1, 38.00, 3.90, True),
    CarrierService("fedex", "fedex_ground", "FedEx Ground", 5, 9.20, 1.15, False),
    CarrierService("fedex", "fedex_2day", "FedEx 2Day", 2, 20.50, 2.50, True),
    CarrierService("fedex", "fedex_standard_overnight", "FedEx Standard Overnight", 1, 36.00, 4.10, True),
    CarrierService("usps", "usps_ground_advantage", "USPS Ground Advantage", 5, 7.40, 1.60, False),
    CarrierService("usps", "usps_priority_mail", "USPS Priority Mail", 3, 9.80, 1.90, False),
    CarrierService("usps", "usps_priority_mail_express", "USPS Priority Mail Express", 2, 28.50, 3.20, True),
)
_SERVICES_BY_CODE = {s.code: s for s in CARRIER_SERVICES}
_TRACKING_URLS: Mapping[str, str] = {
    "ups": "https://www.ups.com/track?tracknum={}",
    "fedex": "https://www.fedex.com/fedextrack/?trknbr={}",
    "usps": "https://tools.usps.com/go/TrackConfirmAction?tLabels={}",
}


def carrier_service(code: str) -> CarrierService | None:
    return _SERVICES_BY_CODE.get(code)


def promised_delivery(shipped: datetime, service: CarrierService) -> str:
    """When the store tells a customer a parcel arrives: the service's transit days after it ships, plus a day."""
    return _iso(shipped + timedelta(days=service.transit_days + 1))


def tracking_number(carrier: str, token: str) -> str:
    """A tracking number in the carrier's format, derived from ``token`` (stable: same token, same number)."""
    digest = hashlib.sha256(token.encode()).hexdigest()
    digits = "".join(str(int(c, 16) % 10) for c in digest)
    if carrier == "ups":
        letters = "".join("0123456789ABCDEFGHJKLMNPRSTUVWXY"[int(c, 16) * 2 % 32] for c in digest[-6:])
        return f"1Z{letters}03{digits[:8]}"
    if carrier == "fedex":
        return digits[:12]
    return f"9400{digits[:18]}"


def tracking_url(carrier: str, number: str) -> str:
    return _TRACKING_URLS[carrier].format(number)


# -- addresses -----------------------------------------------------------------------------------------

#: US states, DC and the territories USPS delivers to.
US_STATES = frozenset(
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH "
    "OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY AS GU MP PR VI MH FM PW".split()
)
_ADDRESS = re.compile(r"^(?P<street>.+?),\s*(?P<city>[^,]+?),\s*(?P<state>[A-Za-z]{2})(?:\s+(?P<zip>\S+))?\s*$")


@dataclass(frozen=True, slots=True)
class PostalAddress:
    """A one-line US address ("street, city, ST 12345") in its parts; ``postal_code`` None when it is missing."""

    street: str
    city: str
    state: str
    postal_code: str | None

    @property
    def city_state(self) -> str:
        return f"{self.city}, {self.state}"


def parse_address(text: str) -> PostalAddress | None:
    """The parts of a one-line address, or None when it is not "street, city, ST [ZIP]"."""
    match = _ADDRESS.match(" ".join(text.split()))
    if match is None:
        return None
    return PostalAddress(match["street"], match["city"], match["state"].upper(), match["zip"])


# -- the catalogue ---------------------------------------------------------------------------------------

#: Products sold in several variants: option name, then (value, SKU suffix, price difference, extra grams).
_VARIANT_OPTIONS: Mapping[str, tuple[str, tuple[tuple[str, str, float, int], ...]]] = {
    "Ergonomic office chair": ("Colour", (("Black", "BLK", 0.0, 0), ("Grey", "GRY", 0.0, 0))),
    "Standing desk": ("Size", (("120 x 60 cm", "120", 0.0, 0), ("160 x 80 cm", "160", 90.0, 6_500))),
    "Noise-cancelling headset": ("Colour", (("Black", "BLK", 0.0, 0), ("Silver", "SLV", 10.0, 0))),
    "Espresso beans 1kg": ("Grind", (("Whole bean", "WB", 0.0, 0), ("Ground", "GR", 0.0, 0))),
    "Branded hoodie": ("Size", (("S", "S", 0.0, 0), ("M", "M", 0.0, 0), ("L", "L", 0.0, 40), ("XL", "XL", 0.0, 80))),
    "Desk lamp": ("Colour", (("Black", "BLK", 0.0, 0), ("White", "WHT", 0.0, 0))),
}
_GRAMS: Mapping[str, int] = {
    "Ergonomic office chair": 15_800,
    "Standing desk": 31_500,
    "27-inch monitor": 6_200,
    "Wireless keyboard": 650,
    "Noise-cancelling headset": 320,
    "Laptop dock": 480,
    "Espresso beans 1kg": 1_050,
    "Oat milk case": 6_400,
    "Printer paper box": 11_800,
    "Whiteboard markers": 180,
    "Branded hoodie": 620,
    "Sticker pack": 40,
    "Desk lamp": 1_400,
    "USB-C cable 2m": 90,
    "Webcam HD": 230,
}
_DESCRIPTIONS: Mapping[str, str] = {
    "Standard plan (monthly)": "Core features for small teams, billed monthly per seat.",
    "Pro plan (monthly)": "Automation, reporting and integrations for growing teams, billed monthly per seat.",
    "Enterprise plan (monthly)": "SSO, audit logs and a dedicated success manager, billed monthly per seat.",
    "Onboarding workshop": "A half-day remote workshop that sets your team up and trains your admins.",
    "Priority support add-on": "Four-hour response times and a named support engineer, monthly.",
    "Data migration": "We move your records from your old system, mapped and verified.",
    "Ergonomic office chair": "Adjustable lumbar support, 4D armrests and a breathable mesh back.",
    "Standing desk": "Electric sit-stand desk with two motors and four memory presets.",
    "27-inch monitor": "27-inch QHD IPS display with USB-C power delivery and a height-adjustable stand.",
    "Wireless keyboard": "Low-profile wireless keyboard that pairs with three devices; rechargeable.",
    "Noise-cancelling headset": "Over-ear headset with active noise cancelling and a boom microphone.",
    "Laptop dock": "USB-C dock with two display outputs, Ethernet and 100 W charging.",
    "Espresso beans 1kg": "Medium-roast espresso blend from Brazil and Ethiopia, roasted weekly.",
    "Oat milk case": "A case of twelve 1-litre barista oat milk cartons.",
    "Printer paper box": "Five reams of A4 80 gsm paper, 2,500 sheets.",
    "Whiteboard markers": "A set of eight low-odour dry-erase markers in four colours.",
    "Conference room booking": "A meeting room for up to twelve people, per hour, with screen and coffee.",
    "Team offsite package": "A planned day away for up to 25 people: venue, facilitation and meals.",
    "Security audit": "An external review of your configuration, access rights and audit logs, with a report.",
    "API usage block (1M calls)": "One million API calls, valid for twelve months.",
    "Storage block (1 TB)": "One terabyte of extra file storage, per month.",
    "SMS bundle (10k)": "Ten thousand outbound text messages, valid for twelve months.",
    "Training seat": "One seat in a live training course for admins or end users.",
    "Hardware warranty (2y)": "Two-year replacement warranty for one hardware item.",
    "Branded hoodie": "Heavyweight organic cotton hoodie with the company logo.",
    "Sticker pack": "Twenty die-cut vinyl logo stickers.",
    "Desk lamp": "Dimmable LED desk lamp with adjustable colour temperature.",
    "USB-C cable 2m": "Braided 2-metre USB-C cable, 100 W and 10 Gbps.",
    "Webcam HD": "1080p webcam with a privacy shutter and dual microphones.",
    "Catering lunch (per person)": "A boxed lunch per person, with vegetarian and vegan options.",
}
#: A new model is coming: listed, but not for sale yet.
_DRAFT_PRODUCTS = frozenset({"Webcam HD"})
_QUANTITIES: Mapping[str, tuple[int, int]] = {
    "furniture": (1, 4),
    "hardware": (1, 6),
    "pantry": (1, 10),
    "supplies": (1, 12),
    "merchandise": (1, 40),
    "services": (1, 2),
    "subscriptions": (1, 10),
    "usage": (1, 3),
}


@dataclass(frozen=True, slots=True)
class PlannedVariant:
    """One sellable version of a product. ``on_hand``: units in the warehouse (tracked variants only)."""

    sku: str
    title: str  # "Default Title" for a product with a single variant, else the option's value
    price: float
    grams: int
    tracked: bool  # goods are counted in stock; services and subscriptions are not
    on_hand: int


@dataclass(frozen=True, slots=True)
class PlannedProduct:
    """A product of ``world.products`` as the store lists it; ``sku`` is the World's product SKU."""

    sku: str
    title: str
    product_type: str
    handle: str
    description: str
    option_name: str | None
    status: Literal["active", "draft"]
    requires_shipping: bool
    created_at: str
    variants: tuple[PlannedVariant, ...]


# -- orders, their fulfilments and shipments ----------------------------------------------------------

OrderStory = Literal[
    "delivered",
    "delivered_late",
    "in_transit",
    "label_created",
    "exception",
    "returned_to_sender",
    "awaiting_shipment",
    "address_incomplete",
    "partial_backorder",
    "payment_pending",
    "cancelled",
    "refunded_return",
    "return_requested",
    "return_requested_late",
    "return_open",
    "return_declined",
    "partially_refunded",
    "digital",
]
#: How many orders of each story a world has (about ninety orders in all).
_STORIES: tuple[tuple[OrderStory, int], ...] = (
    ("delivered", 34),
    ("delivered_late", 4),
    ("in_transit", 6),
    ("label_created", 3),
    ("exception", 3),
    ("returned_to_sender", 1),
    ("awaiting_shipment", 7),
    ("address_incomplete", 1),
    ("partial_backorder", 2),
    ("payment_pending", 3),
    ("cancelled", 4),
    ("refunded_return", 4),
    ("return_requested", 2),
    ("return_requested_late", 1),
    ("return_open", 2),
    ("return_declined", 1),
    ("partially_refunded", 3),
    ("digital", 6),
)
CancelReason = Literal["customer", "inventory", "fraud", "declined", "other"]
DeclineReason = Literal["return_period_ended", "final_sale", "other"]
_CANCEL_REASONS: tuple[CancelReason, ...] = ("customer", "customer", "inventory", "fraud")
ReturnReason = Literal[
    "color",
    "defective",
    "not_as_described",
    "other",
    "size_too_large",
    "size_too_small",
    "style",
    "unwanted",
    "wrong_item",
]
#: Why customers send things back, in their words.
_RETURN_NOTES: tuple[tuple[ReturnReason, str], ...] = (
    ("defective", "[One unit|One of them|A unit] stopped working after [two days|a week|the first day]; [the power light no "
     "longer comes on|it won't switch on any more|it keeps restarting].[ We need it for {work}.|]"),
    ("defective", "The left armrest [wobbles|is loose|rattles] even after tightening every screw.[ Not usable at "
     "{site}.|]"),
    ("size_too_small", "[These run small|They're smaller than the chart says|Too small for us]; we need the next size "
     "up.[ Same colour please.|]"),
    ("unwanted", "[Turns out the office already had enough of these|We ordered more than we need|Our team ordered "
     "these twice]; they are still sealed."),
    ("color", "The colour looks [noticeably|quite|very] different from the photos on the product page."),
    ("wrong_item", "We received a different model from the one on the packing slip.[ The box label is right, the "
     "product isn't.|]"),
    ("not_as_described", "The listing says it is height-adjustable, but the stand is fixed.[ Please advise.|]"),
)
_RETURN_TAILS = ("", "", "Refund to the card please.", "Happy to exchange instead.", "Label please.", "Thanks.",
                 "Sorry for the hassle.")
_EXCEPTIONS = (
    "Delivery attempted: the business was closed. The carrier will try again next business day.",
    "Address information is incomplete: the carrier is trying to contact the recipient.",
    "The package was damaged in transit; the carrier will contact the shipper.",
)
_DELAYS = (
    "Delayed: severe weather at the sort facility. The carrier will deliver as soon as possible.",
    "Delayed: the package missed its scheduled connection.",
    "Delayed: high volume at the sort facility.",
    "Delayed: a mechanical problem with the delivery vehicle.",
)
_HUBS = ("Louisville, KY", "Memphis, TN", "Indianapolis, IN", "Dallas, TX", "Chicago, IL", "Columbus, OH")


@dataclass(frozen=True, slots=True)
class PlannedLine:
    """One line of an order: a variant, how many, at what price."""

    sku: str
    product_title: str
    variant_title: str
    product_type: str
    quantity: int
    price: float
    grams: int  # per unit
    requires_shipping: bool

    @property
    def amount(self) -> float:
        return round(self.quantity * self.price, 2)


@dataclass(frozen=True, slots=True)
class PlannedTrackingEvent:
    at: str
    status: ScanStatus
    description: str
    location: str


@dataclass(frozen=True, slots=True)
class PlannedLabel:
    """A shipping label bought for a shipment (``is_return``: sent back by the customer to the returns centre)."""

    carrier: Carrier
    service_code: str
    tracking_number: str
    cost: float
    created_at: str
    is_return: bool
    events: tuple[PlannedTrackingEvent, ...]

    @property
    def tracking_url(self) -> str:
        return tracking_url(self.carrier, self.tracking_number)

    @property
    def status(self) -> str:
        """The latest tracking status, or ``label_created`` before the carrier's first scan."""
        return self.events[-1].status if self.events else "label_created"


@dataclass(frozen=True, slots=True)
class ShipmentItem:
    sku: str
    name: str
    quantity: int


@dataclass(frozen=True, slots=True)
class PlannedShipment:
    """What shipping holds for an order: the order's id, number, recipient, address and items."""

    order_id: str
    order_number: str  # the order's name, "#1042"
    ship_to_name: str
    ship_to_email: str
    ship_to_phone: str
    ship_to_company: str
    ship_to_address: str
    items: tuple[ShipmentItem, ...]
    grams: int
    requested_service: Literal["standard", "express"]
    created_at: str
    status: Literal["pending", "label_purchased", "cancelled"]
    labels: tuple[PlannedLabel, ...]  # the outbound label first, then a return label


@dataclass(frozen=True, slots=True)
class PlannedFulfillment:
    """Items of an order sent (or handed over, for services); tracking for shipped goods."""

    lines: tuple[tuple[int, int], ...]  # (index of the order's line, quantity)
    created_at: str
    carrier: Carrier | None
    tracking_number: str | None
    estimated_delivery_at: str | None = None  # what the store promised: shipped + the service's transit days + 1
    delivered_at: str | None = None  # when the carrier scanned it delivered

    @property
    def tracking_url(self) -> str | None:
        return tracking_url(self.carrier, self.tracking_number) if self.carrier and self.tracking_number else None


@dataclass(frozen=True, slots=True)
class PlannedReturn:
    lines: tuple[tuple[int, int, ReturnReason], ...]  # (index of the order's line, quantity, reason)
    status: Literal["requested", "open", "closed", "declined"]
    customer_note: str
    requested_at: str
    decided_at: str | None
    closed_at: str | None
    decline_reason: DeclineReason | None
    tracking_number: str | None  # the return label's, once approved


@dataclass(frozen=True, slots=True)
class PlannedRefund:
    amount: float
    created_at: str
    reason: str
    return_index: int | None  # which of the order's returns it refunds
    restocked: bool


@dataclass(frozen=True, slots=True)
class PlannedOrder:
    """An order one of the World's customers placed, with everything that has happened to it since."""

    id: str  # ord_0001
    number: int  # 1001
    story: OrderStory
    customer: Person
    company: str
    shipping_address: str
    shipping_method: ShippingMethod
    created_at: str
    lines: tuple[PlannedLine, ...]
    discount_code: str | None
    subtotal: float
    total_discounts: float
    shipping_price: float
    total: float
    paid: bool
    cancelled_at: str | None
    cancel_reason: CancelReason | None
    fulfillments: tuple[PlannedFulfillment, ...]
    returns: tuple[PlannedReturn, ...]
    refunds: tuple[PlannedRefund, ...]
    shipment: PlannedShipment | None
    note: str | None

    @property
    def name(self) -> str:
        return f"#{self.number}"

    @property
    def total_refunded(self) -> float:
        return round(sum(r.amount for r in self.refunds), 2)

    @property
    def financial_status(self) -> str:
        if not self.paid:
            return "voided" if self.cancelled_at else "pending"
        refunded = self.total_refunded
        if refunded >= self.total - 0.005:
            return "refunded"
        return "partially_refunded" if refunded > 0 else "paid"

    def fulfilled_quantity(self, index: int) -> int:
        return sum(q for f in self.fulfillments for i, q in f.lines if i == index)

    @property
    def fulfillment_status(self) -> str:
        done = [self.fulfilled_quantity(i) for i in range(len(self.lines))]
        if not any(done):
            return "unfulfilled"
        return "fulfilled" if all(d >= line.quantity for d, line in zip(done, self.lines, strict=True)) else "partial"


# -- discount codes ------------------------------------------------------------------------------------------

DiscountKind = Literal["percentage", "fixed_amount", "free_shipping"]


@dataclass(frozen=True, slots=True)
class PlannedDiscount:
    code: str
    title: str
    kind: DiscountKind
    value: float  # percent off, amount off, or 0 for free shipping
    minimum_subtotal: float
    starts_at: str
    ends_at: str | None
    usage_limit: int | None
    once_per_customer: bool
    disabled: bool


def price_order(
    subtotal: float,
    method: ShippingMethod,
    policy: StorePolicy,
    discount_kind: str | None = None,
    discount_value: float = 0.0,
) -> tuple[float, float, float]:
    """(total discounts, shipping price, total) of an order: the one pricing rule commerce and the plan share.

    A percentage or fixed discount comes off the items; a free-shipping code waives standard shipping.
    Standard shipping is free from the policy's minimum (after discounts); express is never free.
    """
    off = 0.0
    if discount_kind == "percentage":
        off = round(subtotal * discount_value / 100, 2)
    elif discount_kind == "fixed_amount":
        off = round(min(discount_value, subtotal), 2)
    shipping = 0.0
    if method == "express":
        shipping = policy.express_shipping
    elif method == "standard":
        free = subtotal - off >= policy.free_shipping_minimum or discount_kind == "free_shipping"
        shipping = 0.0 if free else policy.standard_shipping
    return off, shipping, round(subtotal - off + shipping, 2)


def refund_value(order_subtotal: float, order_discounts: float, price: float, quantity: int) -> float:
    """What returned items are worth: their price less their share of the order's item discounts."""
    share = 1 - (order_discounts / order_subtotal if order_subtotal > 0 else 0.0)
    return round(price * quantity * share, 2)


# -- agreements for signature -------------------------------------------------------------------------------

EnvelopeStory = Literal["draft", "sent", "viewed", "countersign", "completed", "declined", "expired", "superseded"]
#: The agreements besides the master services agreements (which are the World's contracts), by story.
_ENVELOPE_STORIES: tuple[EnvelopeStory, ...] = (
    ("draft",) * 3
    + ("sent",) * 3
    + ("viewed",) * 2
    + ("countersign",) * 2
    + ("completed",) * 2
    + ("declined",) * 2
    + ("expired",)
    + ("superseded",)
)
MSA = "Master Services Agreement"
#: The esign templates: name, what it is for, pages, whether our side countersigns.
TEMPLATES: tuple[tuple[str, str, int, bool], ...] = (
    (MSA, "The terms under which we serve a customer: scope, fees, liability, term.", 12, True),
    ("Order Form", "What a customer buys under its agreement: products, quantities, fees and start date.", 3, True),
    ("Mutual NDA", "A mutual non-disclosure agreement, signed before confidential information is shared.", 4, True),
    ("Statement of Work", "Scope, deliverables, timeline and fees of a services project.", 8, True),
    ("Renewal Amendment", "Extends an agreement for another term at updated fees.", 2, True),
)
_TEMPLATE_PAGES = {name: pages for name, _, pages, _ in TEMPLATES}
#: How a master services agreement still out for signature stands: sent, or opened by the customer.
_AWAITING: tuple[EnvelopeStory, ...] = ("sent", "viewed")
_DECLINE_REASONS = (
    "Our legal team needs the liability cap in section 9 raised before we can sign.",
    "We need a 60-day termination notice instead of 30 days; please send a revised version.",
    "The fees do not match the quote we agreed on the call; please correct them.",
)
DealStage = Literal["qualification", "proposal", "negotiation", "won", "lost"]
#: Where an agreement's deal stands, by what happened to its envelope.
_DEAL_STAGES: Mapping[EnvelopeStory, DealStage] = {
    "draft": "proposal",
    "sent": "negotiation",
    "viewed": "negotiation",
    "countersign": "negotiation",
    "completed": "won",
    "declined": "negotiation",
    "expired": "lost",
    "superseded": "negotiation",
}


@dataclass(frozen=True, slots=True)
class PlannedDeal:
    """The crm deal an agreement belongs to.

    Note for crm: these deals are not in crm's own seed yet. crm should add one deal per entry of
    ``commerce_plan(world).deals`` (name, the company with the organisation's domain, the contact with
    ``contact_email``, amount, stage, close date, owner); esign's envelopes name them by ``name`` and
    ``company_name``.
    """

    name: str
    organisation_id: str
    company_name: str
    contact_email: str
    owner_email: str
    amount: float
    stage: DealStage
    close_date: str


@dataclass(frozen=True, slots=True)
class PlannedSigner:
    name: str
    email: str
    role_name: Literal["Customer signatory", "Countersigner"]
    routing_order: int
    viewed_at: str | None
    signed_at: str | None
    declined_at: str | None
    decline_reason: str | None


@dataclass(frozen=True, slots=True)
class PlannedEnvelope:
    """An agreement sent (or drafted) for signature, in the state it is on the World's day."""

    story: EnvelopeStory
    template: str
    contract_number: str | None  # a master services agreement's number in the World's plan (MSA-2025-003)
    subject: str
    message: str
    sender_email: str
    deal: PlannedDeal
    documents: tuple[tuple[str, int], ...]  # (file name, pages)
    signers: tuple[PlannedSigner, ...]
    created_at: str
    sent_at: str | None
    expires_at: str | None
    voided_at: str | None
    void_reason: str | None


@dataclass(frozen=True, slots=True)
class CommercePlan:
    """The shop of one world: policy, catalogue, discount codes, orders (with their shipments) and agreements."""

    policy: StorePolicy
    products: tuple[PlannedProduct, ...]
    discounts: tuple[PlannedDiscount, ...]
    orders: tuple[PlannedOrder, ...]
    envelopes: tuple[PlannedEnvelope, ...]

    @property
    def shipments(self) -> tuple[PlannedShipment, ...]:
        return tuple(o.shipment for o in self.orders if o.shipment is not None)

    @property
    def deals(self) -> tuple[PlannedDeal, ...]:
        """Each agreement's deal once (a superseded envelope shares its deal with the one that replaced it)."""
        seen: dict[str, PlannedDeal] = {}
        for envelope in self.envelopes:
            seen.setdefault(envelope.deal.name, envelope.deal)
        return tuple(seen.values())

    def order(self, name: str) -> PlannedOrder | None:
        return next((o for o in self.orders if o.name == name), None)

    def variant(self, sku: str) -> PlannedVariant | None:
        return next((v for p in self.products for v in p.variants if v.sku == sku), None)


def commerce_plan(world: World) -> CommercePlan:
    """The plan of ``world`` (built once per seed)."""
    return _plan_of(*world.key)


@lru_cache(maxsize=64)
def _plan_of(seed: int, shape: WorldShape) -> CommercePlan:
    world = World.from_seed(seed, shape)
    policy = StorePolicy(
        return_window_days=world.rng("plan:commerce:policy").choice((14, 30, 30, 45)),
        final_sale_types=FINAL_SALE_TYPES,
        standard_shipping=STANDARD_SHIPPING,
        express_shipping=EXPRESS_SHIPPING,
        free_shipping_minimum=FREE_SHIPPING_MINIMUM,
        currency=world.currency,
    )
    catalogue = _plan_catalogue(world)
    orders, discounts = _plan_orders(
        world, world.rng("plan:commerce:orders"), policy, catalogue, _plan_discounts(world)
    )
    products = _stock(world.rng("plan:commerce:stock"), catalogue, orders)
    envelopes = _plan_envelopes(world, world.rng("plan:commerce:agreements"))
    return CommercePlan(policy, products, discounts, orders, envelopes)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _stamp(moment: datetime | None) -> str | None:
    return _iso(moment.replace(microsecond=0)) if moment else None


def _parse(moment: str) -> datetime:
    return datetime.strptime(moment, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _ago(world: World, days: float) -> datetime:
    """``days`` before the frozen clock, to the second, never later than a minute before it."""
    moment = world.now_dt - timedelta(days=max(days, 1 / 1440))
    return moment.replace(microsecond=0)


def _plan_catalogue(world: World) -> list[PlannedProduct]:
    rng = world.rng("plan:commerce:catalogue")
    products = []
    for product in world.products:
        ships = product.category in SHIPPABLE_TYPES
        option, values = _VARIANT_OPTIONS.get(product.name, (None, ()))
        grams = _GRAMS.get(product.name, 0) if ships else 0
        if values:
            variants = tuple(
                PlannedVariant(
                    f"{product.sku}-{suffix}", value, round(product.unit_price + delta, 2), grams + extra, ships, 0
                )
                for value, suffix, delta, extra in values
            )
        else:
            variants = (PlannedVariant(product.sku, "Default Title", product.unit_price, grams, ships, 0),)
        products.append(
            PlannedProduct(
                sku=product.sku,
                title=product.name,
                product_type=product.category,
                handle=re.sub(r"[^a-z0-9]+", "-", product.name.lower()).strip("-"),
                description=_DESCRIPTIONS.get(product.name, product.name),
                option_name=option,
                status="draft" if product.name in _DRAFT_PRODUCTS else "active",
                requires_shipping=ships,
                created_at=_iso(_ago(world, rng.uniform(400, 900))),
                variants=variants,
            )
        )
    return products


def _plan_discounts(world: World) -> list[PlannedDiscount]:

    def at(days: int) -> str:
        """The start of the day ``days`` ago."""
        return _iso(_ago(world, days).replace(hour=0, minute=0, second=0))

    def until(days: int) -> str:
        """The end of the day ``days`` ahead."""
        return _iso((world.now_dt + timedelta(days=days)).replace(hour=23, minute=59, second=59))

    return [
        PlannedDiscount("WELCOME10", "10% off a first order", "percentage", 10, 0, at(700), None, None, True, False),
        PlannedDiscount("SPRING15", "Spring sale: 15% off", "percentage", 15, 0, at(150), at(95), None, False, False),
        PlannedDiscount(
            "FREESHIP", "Free standard shipping from 75.00", "free_shipping", 0, 75, at(300), None, None, False, False
        ),
        PlannedDiscount(
            "BULK50",
            "50.00 off orders of 500.00 or more",
            "fixed_amount",
            50,
            500,
            at(200),
            until(60),
            None,
            False,
            False,
        ),
        PlannedDiscount(
            "TEAMGEAR20", "Team gear: 20% off, limited uses", "percentage", 20, 0, at(80), until(20), None, False, False
        ),
        PlannedDiscount(
            "PARTNER25", "Partner programme: 25% off", "percentage", 25, 0, at(300), None, None, False, True
        ),
    ]


def _discount_applies(
    discount: PlannedDiscount, when: str, subtotal: float, email: str, uses: Counter[str], used_by: set[tuple[str, str]]
) -> bool:
    return (
        not discount.disabled
        and discount.starts_at <= when
        and (discount.ends_at is None or when <= discount.ends_at)
        and subtotal >= discount.minimum_subtotal
        and (discount.usage_limit is None or uses[discount.code] < discount.usage_limit)
        and not (discount.once_per_customer and (discount.code, email) in used_by)
    )


def _age_range(story: OrderStory, window: int) -> tuple[float, float]:
    """How long ago (days) orders of a story were placed."""
    return {
        "delivered": (8, 150),
        "delivered_late": (14, 120),
        "in_transit": (1.2, 3.5),
        "label_created": (0.3, 1.0),
        "exception": (6.5, 10),
        "returned_to_sender": (20, 40),
        "awaiting_shipment": (0.05, 1.5),
        "address_incomplete": (0.2, 1.2),
        "partial_backorder": (7.5, 14),
        "payment_pending": (0.5, 5),
        "cancelled": (5, 120),
        "refunded_return": (window + 10, 140),
        "return_requested": (9, window - 2),
        "return_requested_late": (window + 8, window + 30),
        "return_open": (12, window - 1),
        "return_declined": (20, 90),
        "partially_refunded": (15, 100),
        "digital": (2, 140),
    }[story]


def _plan_orders(
    world: World,
    rng: random.Random,
    policy: StorePolicy,
    catalogue: Sequence[PlannedProduct],
    discounts: Sequence[PlannedDiscount],
) -> tuple[tuple[PlannedOrder, ...], tuple[PlannedDiscount, ...]]:
    window = policy.return_window_days
    active = [p for p in catalogue if p.status == "active"]
    goods = [p for p in active if p.requires_shipping]
    digital = [p for p in active if not p.requires_shipping]
    backorder_skus = _backorder_skus(rng, goods)
    drafts: list[tuple[datetime, OrderStory]] = []
    for story, count in _STORIES:
        low, high = _age_range(story, window)
        drafts += [(_ago(world, rng.uniform(low, high)), story) for _ in range(count)]
    drafts.sort(key=lambda d: d[0])
    uses: Counter[str] = Counter()
    used_by: set[tuple[str, str]] = set()
    team_gear = next(d for d in discounts if d.code == _USED_UP_CODE)
    orders = []
    partial = 0
    for n, (placed, story) in enumerate(drafts, start=1):
        customer = rng.choice(world.customers)
        pool = digital if story == "digital" else goods
        if story in ("refunded_return", "return_requested", "return_requested_late", "return_open"):
            pool = [p for p in goods if p.product_type not in policy.final_sale_types]
        lines = _order_lines(rng, pool, rng.choices((1, 2, 3), weights=(5, 3, 1))[0], backorder_skus)
        if story == "return_declined":
            pantry = [p for p in goods if p.product_type == "pantry"]
            lines = _order_lines(rng, pantry, 1, backorder_skus)
        if story == "partial_backorder":
            sku = backorder_skus[partial % len(backorder_skus)]
            partial += 1
            product = next(p for p in goods if any(v.sku == sku for v in p.variants))
            variant = next(v for v in product.variants if v.sku == sku)
            others = [p for p in goods if p is not product]
            waiting = _line(product, variant, rng.randint(1, 3))
            room = PARCEL_GRAMS - waiting.grams * waiting.quantity
            lines = _order_lines(rng, others, 1, backorder_skus, room) + (waiting,)
        subtotal = round(sum(line.amount for line in lines), 2)
        method: ShippingMethod = "none" if story == "digital" else ("express" if rng.random() < 0.2 else "standard")
        if story == "in_transit":
            method = "standard"  # still moving on the World's day: a ground service
        when = _iso(placed)
        discount = None
        eligible = [d for d in discounts if _discount_applies(d, when, subtotal, customer.email, uses, used_by)]
        if team_gear in eligible and uses[team_gear.code] < 2:
            discount = team_gear  # the limited code is used up by the World's day (see below)
        elif eligible and rng.random() < 0.2:
            discount = rng.choice(eligible)
        if discount is not None:
            uses[discount.code] += 1
            used_by.add((discount.code, customer.email))
        off, shipping, total = price_order(
            subtotal, method, policy, discount.kind if discount else None, discount.value if discount else 0.0
        )
        order = _story(
            world,
            rng,
            policy,
            story,
            f"{ORDER_ID_PREFIX}_{n:04d}",
            FIRST_ORDER_NUMBER + n - 1,
            customer,
            placed,
            lines,
            method,
            discount.code if discount else None,
            subtotal,
            off,
            shipping,
            total,
        )
        orders.append(order)
    # The limited code was used up by the World's day: its limit is the uses it had.
    limited = [replace(d, usage_limit=uses[d.code]) if d.code == _USED_UP_CODE else d for d in discounts]
    return tuple(orders), tuple(limited)


def _backorder_skus(rng: random.Random, goods: Sequence[PlannedProduct]) -> list[str]:
    """Two variants that sold out with orders still waiting for them."""
    hoodie = next((p for p in goods if p.title == "Branded hoodie"), None)
    skus = [hoodie.variants[-1].sku] if hoodie else []
    others = [
        v.sku for p in goods for v in p.variants if p is not hoodie and p.product_type != "pantry" and v.grams < 5_000
    ]
    skus.append(rng.choice(others))
    return skus


def _line(product: PlannedProduct, variant: PlannedVariant, quantity: int) -> PlannedLine:
    return PlannedLine(
        variant.sku,
        product.title,
        variant.title,
        product.product_type,
        quantity,
        variant.price,
        variant.grams,
        product.requires_shipping,
    )


def _order_lines(
    rng: random.Random, pool: Sequence[PlannedProduct], count: int, avoid: Sequence[str], room: int = PARCEL_GRAMS
) -> tuple[PlannedLine, ...]:
    """``count`` lines of distinct products, in quantities typical of their type, that fit in one parcel."""
    lines: list[PlannedLine] = []
    for product in rng.sample(list(pool), len(pool)):
        if len(lines) == count:
            break
        variants = [v for v in product.variants if v.sku not in avoid] or list(product.variants)
        variant = rng.choice(variants)
        low, high = _QUANTITIES.get(product.product_type, (1, 3))
        quantity = rng.randint(low, high)
        if variant.grams:
            quantity = min(quantity, room // variant.grams)
            if quantity < 1:
                continue
            room -= quantity * variant.grams
        lines.append(_line(product, variant, quantity))
    return tuple(lines)


def _pick_service(rng: random.Random, method: ShippingMethod, grams: int, slowest: bool = False) -> CarrierService:
    fits = [s for s in CARRIER_SERVICES if s.express == (method == "express") and grams <= CARRIER_MAX_GRAMS[s.carrier]]
    if slowest:
        fits = [s for s in fits if s.transit_days >= 5]
    return rng.choice(fits)


def _journey(
    rng: random.Random,
    world: World,
    start: datetime,
    service: CarrierService,
    origin: str,
    destination: str,
    outcome: Literal["delivered", "late", "moving", "exception", "returned_to_sender"],
) -> tuple[PlannedTrackingEvent, ...]:
    """The carrier's scans from pickup on: delivered (on time, or days late), still moving at the World's hour,
    stopped by an exception."""
    days = service.transit_days + (rng.uniform(3, 7) if outcome == "late" else rng.uniform(-0.3, 0.6))
    hub = rng.choice([h for h in _HUBS if h != destination] or list(_HUBS))
    name = CARRIER_NAMES[service.carrier]
    steps: list[tuple[float, ScanStatus, str, str]] = [
        (0.3, "accepted", f"Picked up by {name}", origin),
        (0.7, "in_transit", f"Departed {name} facility", origin),
        (days * 0.45, "in_transit", "Arrived at sort facility", hub),
        (days * 0.55, "in_transit", "Departed sort facility", hub),
        (days - 0.5, "in_transit", "Arrived at destination facility", destination),
    ]
    if outcome == "late":
        steps.append((service.transit_days - 0.2, "in_transit", rng.choice(_DELAYS), hub))
    if outcome in ("delivered", "late", "moving"):
        steps += [
            (days - 0.25, "out_for_delivery", "Out for delivery", destination),
            (days, "delivered", "Delivered: left at the front desk", destination),
        ]
    else:
        steps.append((days - 0.25, "exception", rng.choice(_EXCEPTIONS), destination))
    if outcome == "returned_to_sender":
        steps += [
            (
                days + 2,
                "in_transit",
                "Returning package to the shipper: the address could not be confirmed",
                destination,
            ),
            (days + 5, "returned_to_sender", "Returned to sender: delivered back to the shipper", origin),
        ]
    events = []
    for offset, status, text, where in sorted(steps, key=lambda s: s[0]):
        moment = (start + timedelta(days=max(offset, 0.05))).replace(microsecond=0)
        if moment >= world.now_dt:
            break
        events.append(PlannedTrackingEvent(_iso(moment), status, text, where))
    return tuple(events)


def _story(
    world: World,
    rng: random.Random,
    policy: StorePolicy,
    story: OrderStory,
    order_id: str,
    number: int,
    customer: Person,
    placed: datetime,
    lines: tuple[PlannedLine, ...],
    method: ShippingMethod,
    discount_code: str | None,
    subtotal: float,
    off: float,
    shipping: float,
    total: float,
) -> PlannedOrder:
    """One order and what happened to it since it was placed, as ``story`` tells."""
    words = world.rng(f"plan:commerce:words:{order_id}")  # how people word its notes, apart from what happened
    company = world.organisation(customer.organisation_id).name
    address = customer.address
    if story == "address_incomplete":
        parts = parse_address(address)
        address = f"{parts.street}, {parts.city}, {parts.state}" if parts else address  # the customer left out the ZIP
    now = world.now_dt
    origin = (parse_address(world.home.address) or PostalAddress("", world.home.city, "", None)).city_state
    destination = (parse_address(address) or PostalAddress("", customer.city, "", None)).city_state
    paid = story != "payment_pending" and not (story == "cancelled" and rng.random() < 0.25)
    fulfillments: list[PlannedFulfillment] = []
    returns: list[PlannedReturn] = []
    refunds: list[PlannedRefund] = []
    labels: list[PlannedLabel] = []
    cancelled_at: datetime | None = None
    cancel_reason: CancelReason | None = None
    note: str | None = None
    shipment_status: Literal["pending", "label_purchased", "cancelled"] = "pending"
    grams = sum(line.grams * line.quantity for line in lines if line.requires_shipping)
    service = _pick_service(rng, method, grams, slowest=story == "in_transit") if method != "none" else None
    shipped = placed + timedelta(days=rng.uniform(0.1, 0.9))
    if story in ("in_transit", "label_created"):
        shipped = placed + timedelta(days=rng.uniform(0.05, 0.3))
    if shipped >= now:
        shipped = placed + (now - placed) / 2
    shipped = shipped.replace(microsecond=0)
    ship_lines = tuple((i, line.quantity) for i, line in enumerate(lines))
    if story == "partial_backorder":
        ship_lines = ship_lines[:-1]  # the last line waits for stock

    def ship(outcome: Literal["delivered", "late", "moving", "exception", "returned_to_sender", "none"]) -> PlannedLabel:
        assert service is not None
        number_ = tracking_number(service.carrier, f"{world.seed}:{order_id}:out")
        events = () if outcome == "none" else _journey(rng, world, shipped, service, origin, destination, outcome)
        label = PlannedLabel(service.carrier, service.code, number_, service.rate(grams), _iso(shipped), False, events)
        labels.append(label)
        delivered = next((e.at for e in events if e.status == "delivered"), None)
        fulfillments.append(PlannedFulfillment(ship_lines, _iso(shipped), service.carrier, number_,
                                               promised_delivery(shipped, service), delivered))
        return label

    outbound: PlannedLabel | None = None
    if story == "digital":
        fulfillments.append(PlannedFulfillment(ship_lines, _iso(shipped), None, None))
    elif story in (
        "delivered",
        "partially_refunded",
        "refunded_return",
        "return_requested",
        "return_requested_late",
        "return_open",
        "return_declined",
        "partial_backorder",
    ):
        outbound = ship("delivered")
    elif story == "delivered_late":
        outbound = ship("late")
    elif story == "in_transit":
        outbound = ship("moving")
    elif story == "label_created":
        outbound = ship("none")
    elif story == "exception":
        outbound = ship("exception")
    elif story == "returned_to_sender":
        outbound = ship("returned_to_sender")
        note = write(words, "[Carrier could not deliver|Returned by the carrier|Bounced back]: confirm the address "
                            "with [the customer|{first}] before reshipping.", {"first": customer.first_name})
    elif story == "cancelled":
        cancelled_at = (placed + timedelta(hours=rng.uniform(1, 20))).replace(microsecond=0)
        cancel_reason = rng.choice(_CANCEL_REASONS)
        if paid:
            refunds.append(PlannedRefund(total, _iso(cancelled_at), f"Order cancelled ({cancel_reason})", None, False))
    if outbound is not None:
        shipment_status = "label_purchased"
    if story == "cancelled":
        shipment_status = "cancelled"
    delivered_at = next((e.at for e in (outbound.events if outbound else ()) if e.status == "delivered"), None)

    returnable = [i for i, line in enumerate(lines) if line.product_type not in policy.final_sale_types]
    if story in ("refunded_return", "return_requested", "return_requested_late", "return_open", "return_declined"):
        index = (returnable or [0])[0] if story != "return_declined" else 0
        reason, text = rng.choice(_RETURN_NOTES)
        text = write(words, f"{text} {words.choice(_RETURN_TAILS)}",
                     industry_facts(words, world.organisation(customer.organisation_id).industry))
        quantity = rng.randint(1, lines[index].quantity)
        start = _parse(delivered_at) if delivered_at else shipped
        if story in ("return_requested", "return_requested_late"):
            requested = now - timedelta(hours=rng.uniform(1, 30))
        elif story == "return_open":
            requested = now - timedelta(days=rng.uniform(1, 3))  # approved; the parcel is on its way back
        else:
            latest = min(shipped + timedelta(days=policy.return_window_days - 1), now - timedelta(days=10))
            requested = start + (latest - start) * rng.uniform(0.2, 0.8)
        requested = max(requested, start + timedelta(hours=2)).replace(microsecond=0)
        decided = (requested + timedelta(hours=rng.uniform(2, 30))).replace(microsecond=0)
        decided = min(decided, now - timedelta(minutes=30))
        status: Literal["requested", "open", "closed", "declined"] = "requested"
        decline: DeclineReason | None = None
        back: str | None = None
        closed_at = None
        if story == "return_declined":
            status, decline = "declined", "final_sale"
            reason, text = "unwanted", write(words, "We ordered too much for [the event|our offsite|the launch]; [can we "
                                                     "send|could we return] the unopened packs [back|for a refund]?")
        elif story in ("return_open", "refunded_return"):
            status = "open" if story == "return_open" else "closed"
            back = _return_label(world, rng, order_id, decided, grams, destination, labels, story == "refunded_return")
        if story == "refunded_return":
            delivered_back = labels[-1].events[-1].at
            closed = _parse(delivered_back) + timedelta(hours=rng.uniform(2, 20))
            closed_at = _iso(min(closed, now - timedelta(minutes=10)).replace(microsecond=0))
            amount = refund_value(subtotal, off, lines[index].price, quantity)
            refunds.append(PlannedRefund(amount, closed_at, f"Return received: {reason.replace('_', ' ')}", 0, True))
        returns.append(
            PlannedReturn(
                ((index, quantity, reason),),
                status,
                text,
                _iso(requested),
                _iso(decided) if status != "requested" else None,
                closed_at,
                decline,
                back,
            )
        )
    if story == "partially_refunded" and delivered_at:
        share = rng.choice((0.1, 0.15, 0.2))
        at = min(_parse(delivered_at) + timedelta(days=1), now - timedelta(hours=1))
        refunds.append(
            PlannedRefund(
                round(total * share, 2),
                _iso(at.replace(microsecond=0)),
                rng.choice(("Goodwill credit: the box arrived dented", "Goodwill credit: a part was missing from the box")),
                None,
                False,
            )
        )
    if story == "payment_pending":
        note = write(words, "[Paying|We'll pay|Will pay|Our finance team will pay|Payment will come] by bank transfer "
                            "[against the emailed invoice|once we get the invoice|on receipt of the invoice][.|, within "
                            "a week.|; PO to follow.|. Please hold the order until then.]")

    shipment = None
    if method != "none" and story != "payment_pending" and not (story == "cancelled" and not paid):
        # Shipping imports an order a few minutes after it is paid; a label covers what shipped.
        boxed = ship_lines if outbound else tuple((i, line.quantity) for i, line in enumerate(lines))
        imported = min(placed + timedelta(minutes=rng.randint(5, 50)), now - timedelta(minutes=1))
        shipment = PlannedShipment(
            order_id=order_id,
            order_number=f"#{number}",
            ship_to_name=customer.name,
            ship_to_email=customer.email,
            ship_to_phone=customer.phone,
            ship_to_company=company,
            ship_to_address=address,
            items=tuple(ShipmentItem(lines[i].sku, _item_name(lines[i]), q) for i, q in boxed),
            grams=sum(lines[i].grams * q for i, q in boxed),
            requested_service="express" if method == "express" else "standard",
            created_at=_iso(max(imported, placed).replace(microsecond=0)),
            status=shipment_status,
            labels=tuple(labels),
        )
    return PlannedOrder(
        id=order_id,
        number=number,
        story=story,
        customer=customer,
        company=company,
        shipping_address=address,
        shipping_method=method,
        created_at=_iso(placed),
        lines=lines,
        discount_code=discount_code,
        subtotal=subtotal,
        total_discounts=off,
        shipping_price=shipping,
        total=total,
        paid=paid,
        cancelled_at=_iso(cancelled_at) if cancelled_at else None,
        cancel_reason=cancel_reason,
        fulfillments=tuple(fulfillments),
        returns=tuple(returns),
        refunds=tuple(refunds),
        shipment=shipment,
        note=note,
    )


def _item_name(line: PlannedLine) -> str:
    return (
        line.product_title if line.variant_title == "Default Title" else f"{line.product_title} - {line.variant_title}"
    )


def _return_label(
    world: World,
    rng: random.Random,
    order_id: str,
    approved: datetime,
    grams: int,
    customer_city: str,
    labels: list[PlannedLabel],
    arrived: bool,
) -> str:
    """A prepaid return label from the customer to the returns centre; its tracking number."""
    service = (
        carrier_service("usps_ground_advantage")
        if grams <= CARRIER_MAX_GRAMS["usps"]
        else carrier_service("ups_ground")
    )
    assert service is not None
    number = tracking_number(service.carrier, f"{world.seed}:{order_id}:return")
    start = approved + timedelta(days=rng.uniform(0.5, 1.5))
    returns_centre = (
        parse_address(returns_centre_address(world)) or PostalAddress("", world.home.city, "", None)
    ).city_state
    events = _journey(rng, world, start, service, customer_city, returns_centre, "delivered" if arrived else "moving")
    labels.append(
        PlannedLabel(service.carrier, service.code, number, service.rate(grams), _iso(approved), True, events)
    )
    return number


def returns_centre_address(world: World) -> str:
    """Where return labels send parcels: the home organisation's address (its warehouse takes returns in)."""
    return world.home.address


def _stock(
    rng: random.Random, catalogue: Sequence[PlannedProduct], orders: Sequence[PlannedOrder]
) -> tuple[PlannedProduct, ...]:
    """Units on hand per variant: enough for the open orders, plus a free amount (none, a few, or plenty).

    Open orders' unfulfilled units are committed; the variants that ran out (the backordered lines of
    partly fulfilled orders) hold fewer units than are committed.
    """
    committed: Counter[str] = Counter()
    short: set[str] = set()
    for order in orders:
        if order.cancelled_at:
            continue
        for index, line in enumerate(order.lines):
            waiting = line.quantity - order.fulfilled_quantity(index)
            if waiting > 0:
                committed[line.sku] += waiting
                if order.story == "partial_backorder" and index == len(order.lines) - 1:
                    short.add(line.sku)
    tracked = [v.sku for p in catalogue for v in p.variants if v.tracked and v.sku not in short]
    sold_out = set(rng.sample([s for s in tracked if not committed[s]], 2))
    low = set(rng.sample([s for s in tracked if s not in sold_out], 3))
    products = []
    for product in catalogue:
        variants = []
        for v in product.variants:
            if not v.tracked:
                on_hand = 0
            elif v.sku in short:
                on_hand = 0
            elif v.sku in sold_out:
                on_hand = committed[v.sku]
            elif v.sku in low:
                on_hand = committed[v.sku] + rng.randint(1, 4)
            else:
                on_hand = committed[v.sku] + rng.randint(12, 140)
            variants.append(replace(v, on_hand=on_hand))
        products.append(replace(product, variants=tuple(variants)))
    return tuple(products)


# -- agreements ------------------------------------------------------------------------------------------------


def _plan_envelopes(world: World, rng: random.Random) -> tuple[PlannedEnvelope, ...]:
    """Every customer's master services agreement as the World's plan has it (signed, or out for the
    customer's signature), and the other agreements of the sales pipeline in every state."""
    owners = world.plan.account_owners
    finance = world.team_member("finance lead")
    plans = [_msa_envelope(world, rng, contract) for contract in world.plan.contracts]
    stories = list(_ENVELOPE_STORIES)
    rng.shuffle(stories)
    stories.remove("superseded")
    orgs = list(world.organisations[1:])
    rng.shuffle(orgs)
    others = [t for t in TEMPLATES if t[0] != MSA]
    kinds_used: set[tuple[str, str]] = set()
    for n, story in enumerate(stories):
        org = orgs[n % len(orgs)]
        template = rng.choice([t for t in others if (org.id, t[0]) not in kinds_used])
        kinds_used.add((org.id, template[0]))
        plans.append(_envelope(world, rng, story, org, template, owners[org.id], finance))
    # One agreement was sent with a mistake, voided and sent again: the voided one shares its deal.
    resent = next(e for e in plans if e.story == "sent" and e.contract_number is None)
    org = world.organisation(resent.deal.organisation_id)
    template = next(t for t in TEMPLATES if t[0] == resent.template)
    sent = _parse(resent.sent_at or resent.created_at)
    old = _envelope(world, rng, "superseded", org, template, owners[org.id], finance, deal=resent.deal, before=sent)
    plans.append(old)
    return tuple(sorted(plans, key=lambda e: e.created_at))


def _msa_envelope(world: World, rng: random.Random, contract: PlannedContract) -> PlannedEnvelope:
    """A contract of the World's plan as esign holds it: the customer signed it on its signing day and the
    account owner countersigned, or it is out for the customer's signature since lately."""
    org = world.organisation(contract.organisation_id)
    signatory = next(p for p in world.people if p.email == contract.signatory_email)
    owner = next(p for p in world.team if p.email == contract.owner_email)
    now = world.now_dt
    viewed = signed = countersigned = None
    if contract.signed_on is not None:
        day = datetime.fromisoformat(contract.signed_on).replace(tzinfo=UTC)
        signed = day + timedelta(hours=rng.uniform(9, 16))
        sent = signed - timedelta(days=rng.uniform(1, 4))
        viewed = sent + (signed - sent) * rng.uniform(0.2, 0.6)
        countersigned = min(signed + timedelta(hours=rng.uniform(1, 20)), now - timedelta(minutes=5))
        story: EnvelopeStory = "completed"
        deal_stage: DealStage = "won"
        closes = contract.signed_on
    else:
        sent = _ago(world, rng.uniform(1, 20))
        story = rng.choice(_AWAITING)
        if story == "viewed":
            viewed = min(sent + timedelta(hours=rng.uniform(2, 40)), now - timedelta(minutes=30))
        deal_stage = "negotiation"
        closes = (now + timedelta(days=rng.randint(7, 30))).date().isoformat()
    created = sent - timedelta(hours=rng.uniform(1, 8))
    deal = PlannedDeal(
        f"{MSA} - {org.name}", org.id, org.name, signatory.email, owner.email, contract.annual_fee, deal_stage, closes
    )
    expires = sent + timedelta(days=ENVELOPE_EXPIRY_DAYS)
    return PlannedEnvelope(
        story=story,
        template=MSA,
        contract_number=contract.number,
        subject=f"Please DocuSign: {MSA} {contract.number} - {org.name}",
        message=_message(world, signatory, owner, f"{MSA} ({contract.number})", org),
        sender_email=owner.email,
        deal=deal,
        documents=((_document_name(MSA, org), _TEMPLATE_PAGES[MSA]),),
        signers=_signers(signatory, owner, viewed, signed, None, None, countersigned),
        created_at=_iso(created.replace(microsecond=0)),
        sent_at=_stamp(sent),
        expires_at=_stamp(expires),
        voided_at=None,
        void_reason=None,
    )


def _document_name(template: str, org: Organisation) -> str:
    """How the company files an agreement (the files service's contract documents are named so)."""
    return f"{org.name} - {template}.pdf"


def _message(world: World, signatory: Person, owner: Person, what: str, org: Organisation) -> str:
    """The note an account owner sends with an agreement for signature, in their own words."""
    words = world.rng(f"plan:commerce:words:{what}:{org.id}")
    return write(words, _SIGN_NOTE, {"first": signatory.first_name, "what": what, "org": org.name, "me": owner.first_name,
                                      **industry_facts(words, org.industry)})


_SIGN_NOTE = (
    "[Hi|Hello|Dear|Hi there] {first}, [please review and sign|here is|attached for your signature:] the {what} for {org}. "
    "[Let me know if anything needs changing.|Happy to walk you through it.|Any questions, just reply.|It reflects what we "
    "agreed on the call.] [We can start before {rush}.|I'd love to have it back this week.|] [Thanks,|Best,|Cheers,|] {me}"
)


def _signers(
    signatory: Person,
    countersigner: Person | None,
    viewed: datetime | None,
    signed: datetime | None,
    declined: datetime | None,
    decline_reason: str | None,
    countersigned: datetime | None,
) -> tuple[PlannedSigner, ...]:
    """The customer's signatory (routing order 1), then our countersigner (2) where the agreement has one."""
    customer = PlannedSigner(
        signatory.name,
        signatory.email,
        "Customer signatory",
        1,
        _stamp(viewed),
        _stamp(signed),
        _stamp(declined),
        decline_reason,
    )
    if countersigner is None:
        return (customer,)
    ours = PlannedSigner(
        countersigner.name,
        countersigner.email,
        "Countersigner",
        2,
        _stamp(countersigned),
        _stamp(countersigned),
        None,
        None,
    )
    return customer, ours


def _deal_amount(world: World, rng: random.Random, template: str) -> float:
    """What the deal is worth: a year of seats for agreements and renewals, the project fee for a statement of work."""
    plans = [p for p in world.products if p.category == "subscriptions"]
    services = [p for p in world.products if p.category == "services"]
    if template == "Statement of Work":
        projects = [p for p in services if p.unit_price >= 400]
        return round(sum(p.unit_price * rng.randint(1, 3) for p in rng.sample(projects, 2)), 2)
    plan = rng.choice(plans)
    seats = rng.randint(2, 12) if plan.unit_price > 500 else rng.randint(5, 60)
    extra = rng.choice(services).unit_price if template in ("Order Form", "Master Services Agreement") else 0.0
    return round(plan.unit_price * seats * 12 + extra, 2)


def _envelope(
    world: World,
    rng: random.Random,
    story: EnvelopeStory,
    org: Organisation,
    template: tuple[str, str, int, bool],
    owner: Person,
    countersigner: Person,
    deal: PlannedDeal | None = None,
    before: datetime | None = None,
) -> PlannedEnvelope:
    name, _, pages, countersigned = template
    now = world.now_dt
    signatory = (
        next(p for p in world.people if p.email == deal.contact_email)
        if deal is not None
        else rng.choice([p for p in world.people if p.organisation_id == org.id])
    )
    low, high = {
        "draft": (0.2, 4),
        "sent": (1, 12),
        "viewed": (1, 12),
        "countersign": (1, 8),
        "completed": (10, 120),
        "declined": (3, 20),
        "expired": (45, 80),
        "superseded": (1, 3),
    }[story]
    created = _ago(world, rng.uniform(low, high))
    if before is not None:
        created = (before - timedelta(days=rng.uniform(1, 3))).replace(microsecond=0)
    sent = None if story == "draft" else min(created + timedelta(hours=rng.uniform(0.2, 6)), now - timedelta(hours=2))
    latest = now - timedelta(minutes=5)
    viewed = signed = declined = countersigned_at = None
    if sent is not None and story in ("viewed", "countersign", "completed", "declined"):
        viewed = min(sent + timedelta(hours=rng.uniform(0.5, 30)), latest - timedelta(minutes=40))
    if viewed is not None and story in ("countersign", "completed"):
        signed = min(viewed + timedelta(hours=rng.uniform(0.2, 40)), latest - timedelta(minutes=20))
    if viewed is not None and story == "declined":
        declined = min(viewed + timedelta(hours=rng.uniform(0.2, 20)), latest)
    if signed is not None and story == "completed":
        countersigned_at = min(signed + timedelta(hours=rng.uniform(1, 30)), latest)
    if deal is None:
        amount = _deal_amount(world, rng, name)
        stage = _DEAL_STAGES[story]
        if name == "Mutual NDA":  # an NDA opens the conversation; the deal itself is still early
            stage = "proposal" if story == "completed" else "qualification"
        closes = (
            countersigned_at if stage == "won" and countersigned_at else created + timedelta(days=rng.randint(10, 45))
        )
        title = "New business" if name == "Mutual NDA" else name
        deal = PlannedDeal(
            f"{title} - {org.name}",
            org.id,
            org.name,
            signatory.email,
            owner.email,
            amount,
            stage,
            closes.date().isoformat(),
        )
    reason = rng.choice(_DECLINE_REASONS) if story == "declined" else None
    signers = _signers(
        signatory, countersigner if countersigned else None, viewed, signed, declined, reason, countersigned_at
    )
    expires = sent + timedelta(days=ENVELOPE_EXPIRY_DAYS) if sent else None
    voided = void_reason = None
    if story == "expired" and expires is not None:
        voided = expires
        void_reason = f"The envelope expired on {expires.date().isoformat()} without being signed."
    if story == "superseded" and sent is not None:
        voided = min(sent + timedelta(hours=rng.uniform(2, 20)), before or now)
        void_reason = "Sent with the wrong fees; replaced by a corrected envelope."
    return PlannedEnvelope(
        story=story,
        template=name,
        contract_number=None,
        subject=f"Please DocuSign: {name} - {org.name}",
        message=_message(world, signatory, owner, name, org),
        sender_email=owner.email,
        deal=deal,
        documents=((_document_name(name, org), pages),),
        signers=signers,
        created_at=_iso(created),
        sent_at=_stamp(sent),
        expires_at=_stamp(expires),
        voided_at=_stamp(voided),
        void_reason=void_reason,
    )
