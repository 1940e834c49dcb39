"""The commerce plan: the shop's catalogue, orders, shipments and agreements, as a pure function of the World."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from mcp_services.kernel.plans import commerce as plans
from mcp_services.kernel.plans.commerce import CommercePlan, commerce_plan, parse_address, price_order, tracking_number
from mcp_services.kernel.world import World


def when(moment: str) -> datetime:
    return datetime.strptime(moment, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


@pytest.fixture(scope="module", params=[0, 7])
def world(request: pytest.FixtureRequest) -> World:
    return World.from_seed(request.param)


@pytest.fixture(scope="module")
def plan(world: World) -> CommercePlan:
    return commerce_plan(world)


def test_the_same_seed_gives_the_same_plan_and_another_seed_another() -> None:
    first = commerce_plan(World.from_seed(3))
    plans._plan_of.cache_clear()
    assert commerce_plan(World.from_seed(3)) == first
    assert commerce_plan(World.from_seed(4)).orders != first.orders


def test_the_catalogue_is_the_worlds_products_with_their_variants(world: World, plan: CommercePlan) -> None:
    assert [p.sku for p in plan.products] == [p.sku for p in world.products]
    for product, source in zip(plan.products, world.products, strict=True):
        assert product.title == source.name and product.product_type == source.category
        if len(product.variants) == 1:
            assert product.variants[0].sku == source.sku and product.variants[0].price == source.unit_price
        else:
            assert all(v.sku.startswith(f"{source.sku}-") for v in product.variants)
        assert all(v.tracked == product.requires_shipping for v in product.variants)
    assert sum(len(p.variants) > 1 for p in plan.products) >= 5


def test_orders_are_numbered_in_the_order_they_were_placed_by_the_worlds_customers(
    world: World, plan: CommercePlan
) -> None:
    assert [o.name for o in plan.orders] == [f"#{1001 + i}" for i in range(len(plan.orders))]
    assert [o.id for o in plan.orders] == [f"ord_{i + 1:04d}" for i in range(len(plan.orders))]
    assert [o.created_at for o in plan.orders] == sorted(o.created_at for o in plan.orders)
    assert all(o.created_at < world.now for o in plan.orders)
    customers = {p.email for p in world.customers}
    assert {o.customer.email for o in plan.orders} <= customers
    assert Counter(o.story for o in plan.orders).keys() == set(plans.OrderStory.__args__)  # type: ignore[attr-defined]


def test_every_order_is_priced_by_the_one_pricing_rule(plan: CommercePlan) -> None:
    codes = {d.code: d for d in plan.discounts}
    for order in plan.orders:
        assert order.subtotal == round(sum(line.amount for line in order.lines), 2)
        discount = codes.get(order.discount_code or "")
        expected = price_order(
            order.subtotal,
            order.shipping_method,
            plan.policy,
            discount.kind if discount else None,
            discount.value if discount else 0.0,
        )
        assert (order.total_discounts, order.shipping_price, order.total) == expected
        assert order.total_refunded <= order.total
        assert sum(line.grams * line.quantity for line in order.lines) <= plans.PARCEL_GRAMS


def test_discount_codes_were_only_used_while_valid_and_the_limited_one_is_used_up(plan: CommercePlan) -> None:
    codes = {d.code: d for d in plan.discounts}
    used = Counter(o.discount_code for o in plan.orders if o.discount_code)
    seen: set[tuple[str, str]] = set()
    for order in plan.orders:
        if order.discount_code is None:
            continue
        code = codes[order.discount_code]
        assert not code.disabled and code.starts_at <= order.created_at
        assert code.ends_at is None or order.created_at <= code.ends_at
        assert order.subtotal >= code.minimum_subtotal
        if code.once_per_customer:
            assert (code.code, order.customer.email) not in seen
            seen.add((code.code, order.customer.email))
    limited = codes["TEAMGEAR20"]
    assert limited.usage_limit == used["TEAMGEAR20"] >= 1


def test_money_and_statuses_tell_each_orders_story(plan: CommercePlan) -> None:
    for order in plan.orders:
        if order.story == "cancelled":
            assert order.cancelled_at and order.fulfillment_status == "unfulfilled"
            assert order.financial_status in ("refunded", "voided")
        elif order.story == "payment_pending":
            assert order.financial_status == "pending" and order.shipment is None
        elif order.story == "digital":
            assert order.shipment is None and order.fulfillment_status == "fulfilled"
            assert all(f.tracking_number is None for f in order.fulfillments)
        elif order.story == "partial_backorder":
            assert order.fulfillment_status == "partial"
        elif order.story in ("awaiting_shipment", "address_incomplete"):
            assert order.fulfillment_status == "unfulfilled" and order.shipment and order.shipment.status == "pending"
        else:
            assert order.fulfillment_status == "fulfilled"
        if order.story == "refunded_return":
            assert order.refunds[-1].return_index == 0 and order.returns[0].status == "closed"


def test_each_shipment_carries_its_orders_address_recipient_and_shipped_items(plan: CommercePlan) -> None:
    for order in plan.orders:
        shipment = order.shipment
        if shipment is None:
            continue
        assert (shipment.order_id, shipment.order_number) == (order.id, order.name)
        assert (shipment.ship_to_name, shipment.ship_to_email) == (order.customer.name, order.customer.email)
        assert shipment.ship_to_address == order.shipping_address
        shipped = {order.lines[i].sku: q for f in order.fulfillments for i, q in f.lines}
        wanted = shipped or {line.sku: line.quantity for line in order.lines}
        assert {i.sku: i.quantity for i in shipment.items} == wanted
        outbound = [label for label in shipment.labels if not label.is_return]
        assert [label.tracking_number for label in outbound] == [f.tracking_number for f in order.fulfillments]
        for returned, label in zip(order.returns, [lb for lb in shipment.labels if lb.is_return], strict=False):
            assert returned.tracking_number == label.tracking_number


def test_tracking_numbers_are_unique_in_their_carriers_format_and_scans_run_in_time(
    world: World, plan: CommercePlan
) -> None:
    formats = {"ups": r"^1Z[0-9A-Z]{16}$", "fedex": r"^\d{12}$", "usps": r"^9400\d{18}$"}
    labels = [label for s in plan.shipments for label in s.labels]
    assert len({label.tracking_number for label in labels}) == len(labels)
    for label in labels:
        assert re.match(formats[label.carrier], label.tracking_number)
        times = [e.at for e in label.events]
        assert times == sorted(times) and all(label.created_at <= t < world.now for t in times)
    statuses = Counter(label.status for label in labels if not label.is_return)
    assert {"delivered", "in_transit", "label_created", "exception", "returned_to_sender"} <= set(statuses)


def test_return_requests_fall_inside_or_outside_the_policys_window_as_planned(plan: CommercePlan) -> None:
    window = timedelta(days=plan.policy.return_window_days)
    for order in plan.orders:
        for ret in order.returns:
            shipped = when(order.fulfillments[0].created_at)
            late = when(ret.requested_at) - shipped > window
            assert late == (order.story == "return_requested_late")
            assert ret.requested_at > order.fulfillments[0].created_at


def test_stock_covers_open_orders_but_the_backordered_variants(plan: CommercePlan) -> None:
    committed: Counter[str] = Counter()
    for order in plan.orders:
        if not order.cancelled_at:
            for i, line in enumerate(order.lines):
                committed[line.sku] += line.quantity - order.fulfilled_quantity(i)
    short = {o.lines[-1].sku for o in plan.orders if o.story == "partial_backorder"}
    for product in plan.products:
        for v in product.variants:
            if v.tracked and v.sku not in short:
                assert v.on_hand >= committed[v.sku], v.sku
            if v.sku in short:
                assert v.on_hand == 0 < committed[v.sku]
    available = [v.on_hand - committed[v.sku] for p in plan.products for v in p.variants if v.tracked]
    assert available.count(0) >= 2 and any(1 <= a <= 5 for a in available)


def test_agreements_belong_to_deals_with_the_customers_people(world: World, plan: CommercePlan) -> None:
    stories = Counter(e.story for e in plan.envelopes)
    assert set(stories) == set(plans.EnvelopeStory.__args__)  # type: ignore[attr-defined]
    names = [d.name for d in plan.deals]
    assert len(names) == len(set(names)) == len(plan.envelopes) - 1  # the superseded envelope shares its deal
    finance = world.team_member("finance lead")
    for envelope in plan.envelopes:
        org = world.organisation(envelope.deal.organisation_id)
        owner = world.plan.account_owners[org.id]
        customer, *ours = envelope.signers
        assert customer.email.endswith(f"@{org.domain}") and customer.email == envelope.deal.contact_email
        assert [s.email for s in ours] == [owner.email if envelope.contract_number else finance.email]
        assert envelope.deal.company_name == org.name
        assert envelope.sender_email == envelope.deal.owner_email == owner.email
        assert [name for name, _ in envelope.documents] == [f"{org.name} - {envelope.template}.pdf"]
        if envelope.story == "completed":
            assert envelope.deal.stage in ("won", "proposal") and all(s.signed_at for s in envelope.signers)
    superseded = next(e for e in plan.envelopes if e.story == "superseded")
    assert superseded.voided_at and any(
        e.deal == superseded.deal and e.story == "sent" and e.created_at > superseded.created_at for e in plan.envelopes
    )


def test_the_master_services_agreements_are_the_worlds_contracts(world: World, plan: CommercePlan) -> None:
    msas = {e.contract_number: e for e in plan.envelopes if e.contract_number}
    assert set(msas) == {c.number for c in world.plan.contracts}
    for contract in world.plan.contracts:
        envelope = msas[contract.number]
        customer, owner = envelope.signers
        assert envelope.deal.organisation_id == contract.organisation_id and envelope.deal.amount == contract.annual_fee
        assert (customer.email, owner.email) == (contract.signatory_email, contract.owner_email)
        if contract.signed_on is not None:
            assert envelope.story == "completed" and (customer.signed_at or "")[:10] == contract.signed_on
            assert envelope.deal.stage == "won" and envelope.deal.close_date == contract.signed_on
        else:
            assert envelope.story in ("sent", "viewed") and not (customer.signed_at or owner.signed_at)
            assert when(envelope.sent_at or "") > world.now_dt - timedelta(days=plans.ENVELOPE_EXPIRY_DAYS)


def test_addresses_parse_into_parts_and_a_missing_zip_shows() -> None:
    parts = parse_address("967 Lawson Fort Apt. 024, Lake Kyle, ny 75246")
    assert parts is not None and (parts.city, parts.state, parts.postal_code) == ("Lake Kyle", "NY", "75246")
    missing = parse_address("332 Kathleen Knoll, East Davidborough, MP")
    assert missing is not None and missing.postal_code is None
    assert parse_address("somewhere") is None


def test_tracking_numbers_are_stable_per_token() -> None:
    assert tracking_number("ups", "a") == tracking_number("ups", "a") != tracking_number("ups", "b")
    assert len(tracking_number("usps", "a")) == 22 and len(tracking_number("fedex", "a")) == 12


def test_every_parcel_has_a_promised_date_and_only_the_late_stories_arrive_after_it(plan: CommercePlan) -> None:
    delivered = [(o, f) for o in plan.orders for f in o.fulfillments[:1] if f.tracking_number]
    assert delivered and all(f.estimated_delivery_at and f.estimated_delivery_at > f.created_at for _, f in delivered)
    late = [o for o, f in delivered if f.delivered_at and f.delivered_at > str(f.estimated_delivery_at)]
    assert len(late) >= 3 and {o.story for o in late} == {"delivered_late"}
    for order in late:  # the carrier said why on the way
        scans = order.shipment.labels[0].events if order.shipment else ()
        assert any(e.description.startswith("Delayed:") for e in scans)
        assert scans[-1].at == order.fulfillments[0].delivered_at
