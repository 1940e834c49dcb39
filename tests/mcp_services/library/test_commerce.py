"""Behaviour of commerce a user would notice: the catalogue and its stock, orders and their money, the store's
rules for cancelling, shipping, returning and refunding, discount codes, the storefront's events, and
agreement with crm and shipping."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.commerce import commerce_plan
from tests.mcp_services.library.service_calls import ServiceCalls

call = ServiceCalls("commerce")
refused = call.refused
every = call.every


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["commerce"], world_seed=0) as episode:
        yield episode


def variant(ep: Episode, sku: str) -> dict[str, Any]:
    return call(ep, "list_variants", sku=sku)["items"][0]


def an_order(ep: Episode, story: str) -> dict[str, Any]:
    planned = next(o for o in commerce_plan(ep.world).orders if o.story == story)
    return call(ep, "get_order", order_id=planned.id)


def in_stock(ep: Episode, minimum: int = 10) -> dict[str, Any]:
    return next(
        v for v in every(ep, "list_variants", stock="in_stock") if v["available"] >= minimum and v["grams"] < 5000
    )


def when(moment: str) -> datetime:
    return datetime.strptime(moment, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


# -- the catalogue and stock ------------------------------------------------------------------------------


def test_products_are_the_worlds_catalogue_with_variants_and_prices(ep: Episode) -> None:
    products = every(ep, "search_products")
    assert {p["sku"] for p in products} == {p.sku for p in ep.world.products}
    chair = call(ep, "search_products", query="office chair")["items"][0]
    assert chair["option_name"] == "Colour" and [v["title"] for v in chair["variants"]] == ["Black", "Grey"]
    assert all(v["sku"].startswith(chair["sku"] + "-") for v in chair["variants"])
    assert call(ep, "search_products", product_type="SERVICES")["total"] == sum(
        p.category == "services" for p in ep.world.products
    )
    assert [p["title"] for p in call(ep, "search_products", status="draft")["items"]] == ["Webcam HD"]


def test_available_is_on_hand_minus_what_open_orders_still_wait_for(ep: Episode) -> None:
    waiting: dict[str, int] = {}
    for order in every(ep, "list_orders", status="open"):
        for line in order["line_items"]:
            waiting[line["sku"]] = waiting.get(line["sku"], 0) + line["quantity"] - line["fulfilled_quantity"]
    variants = every(ep, "list_variants")
    tracked = [v for v in variants if v["inventory_tracked"]]
    for v in tracked:
        assert v["committed"] == waiting.get(v["sku"], 0)
        assert v["available"] == v["on_hand"] - v["committed"]
    assert all(v["available"] is None for v in variants if not v["inventory_tracked"])
    low = every(ep, "list_variants", stock="low")
    out = every(ep, "list_variants", stock="out_of_stock")
    assert low and all(1 <= v["available"] <= 5 for v in low)
    assert len(out) >= 3 and all(v["available"] <= 0 for v in out)
    assert any(v["available"] < 0 for v in out), "a sold-out variant with orders still waiting for it"


def test_stock_is_adjusted_but_never_below_zero(ep: Episode) -> None:
    v = in_stock(ep)
    after = call(ep, "adjust_inventory", variant_id=v["id"], delta=-3, reason="damaged")
    assert after["on_hand"] == v["on_hand"] - 3 and after["available"] == v["available"] - 3
    refused(
        ep, "adjust_inventory", "invalid_argument", variant_id=v["id"], delta=-(v["on_hand"] + 1), reason="shrinkage"
    )
    service_variant = next(x for x in every(ep, "list_variants") if not x["inventory_tracked"])
    refused(ep, "adjust_inventory", "invalid_state", variant_id=service_variant["id"], delta=5, reason="received")


# -- customers -------------------------------------------------------------------------------------------


def test_customers_are_the_crm_contacts_with_their_orders_and_spend() -> None:
    with Episode.create(["crm", "commerce"], world_seed=0) as ep:
        customers = every(ep, "search_customers")
        assert len(customers) == len(ep.world.customers)
        for customer in customers[:20]:
            contact = ep.call("crm", "find_contact_by_email", {"email": customer["email"]}).data
            assert (contact["name"], contact["company_name"]) == (customer["name"], customer["company"])
        buyer = max(customers, key=lambda c: c["orders_count"])
        orders = every(ep, "list_orders", customer_id=buyer["id"])
        assert len(orders) == buyer["orders_count"] >= 2
        paid = [o for o in orders if o["financial_status"] in ("paid", "partially_refunded", "refunded")]
        assert buyer["total_spent"] == round(sum(o["total_price"] - o["total_refunded"] for o in paid), 2)
        tagged = call(ep, "search_customers", tag="wholesale")["items"]
        assert tagged and all("wholesale" in c["tags"] for c in tagged)


# -- orders ---------------------------------------------------------------------------------------------


def test_orders_are_found_by_number_customer_sku_and_status(ep: Episode) -> None:
    orders = every(ep, "list_orders")
    assert len(orders) == len({o["id"] for o in orders}) == len(commerce_plan(ep.world).orders)
    assert [o["created_at"] for o in orders] == sorted((o["created_at"] for o in orders), reverse=True)
    target = orders[10]
    for name in (target["name"], target["name"].lstrip("#")):
        assert [o["id"] for o in call(ep, "list_orders", name=name)["items"]] == [target["id"]]
    sku = target["line_items"][0]["sku"]
    assert all(any(li["sku"] == sku for li in o["line_items"]) for o in every(ep, "list_orders", sku=sku))
    pending = every(ep, "list_orders", financial_status="pending")
    assert pending and all(o["financial_status"] == "pending" for o in pending)
    day = target["created_at"][:10]
    assert target["id"] in {o["id"] for o in every(ep, "list_orders", created_from=day, created_to=day)}


def test_totals_add_up_and_refunds_match_what_was_refunded(ep: Episode) -> None:
    refunds = every(ep, "list_refunds")
    by_order: dict[str, float] = {}
    for r in refunds:
        by_order[r["order_id"]] = round(by_order.get(r["order_id"], 0) + r["amount"], 2)
    for order in every(ep, "list_orders"):
        lines = round(sum(li["price"] * li["quantity"] for li in order["line_items"]), 2)
        assert order["subtotal_price"] == lines
        assert order["total_price"] == round(
            order["subtotal_price"] - order["total_discounts"] + order["shipping_price"], 2
        )
        assert order["total_refunded"] == by_order.get(order["id"], 0)
        if order["financial_status"] in ("paid", "partially_refunded"):
            assert order["refundable"] == round(order["total_price"] - order["total_refunded"], 2)


def test_a_phone_order_commits_stock_prices_shipping_and_applies_a_discount(ep: Episode) -> None:
    v = in_stock(ep)
    customer = call(ep, "search_customers")["items"][0]
    order = call(
        ep,
        "create_order",
        customer_id=customer["id"],
        items=[{"sku": v["sku"], "quantity": 1}],
        discount_code="welcome10",
    )
    assert order["name"] == f"#{1000 + len(commerce_plan(ep.world).orders) + 1}"
    assert order["total_discounts"] == round(v["price"] * 0.1, 2) and order["discount_code"] == "WELCOME10"
    policy = call(ep, "get_store_policy")
    expected_shipping = 0.0 if v["price"] * 0.9 >= policy["free_shipping_minimum"] else policy["standard_shipping"]
    assert order["shipping_price"] == expected_shipping
    assert order["financial_status"] == "paid" and order["fulfillment_status"] == "unfulfilled"
    assert variant(ep, v["sku"])["available"] == v["available"] - 1
    again = ep.call(
        "commerce",
        "create_order",
        {"customer_id": customer["id"], "items": [{"sku": v["sku"], "quantity": 1}], "discount_code": "WELCOME10"},
    )
    assert again.error_code == "invalid_state" and "once per customer" in (again.error_message or "")


@pytest.mark.parametrize(
    ("code", "why"),
    [
        ("SPRING15", "expired"),
        ("PARTNER25", "disabled"),
        ("TEAMGEAR20", "limit"),
        ("BULK50", "at least 500.00"),
        ("NOSUCHCODE", "list_discount_codes"),
    ],
)
def test_a_discount_code_that_cannot_be_used_is_refused_with_why(ep: Episode, code: str, why: str) -> None:
    v = in_stock(ep)
    email = ep.world.customers[5].email
    result = refused(
        ep,
        "create_order",
        "not_found" if code == "NOSUCHCODE" else "invalid_state",
        customer_email=email,
        items=[{"sku": v["sku"], "quantity": 1}],
        discount_code=code,
    )
    assert why in (result.error_message or "")


def test_an_order_for_more_than_is_available_or_for_a_draft_product_is_refused(ep: Episode) -> None:
    email = ep.world.customers[0].email
    short = every(ep, "list_variants", stock="out_of_stock")[0]
    result = refused(
        ep, "create_order", "invalid_state", customer_email=email, items=[{"sku": short["sku"], "quantity": 1}]
    )
    assert "available" in (result.error_message or "")
    draft = call(ep, "search_products", status="draft")["items"][0]
    refused(ep, "create_order", "invalid_state", customer_email=email, items=[{"sku": draft["sku"], "quantity": 1}])
    refused(
        ep,
        "create_order",
        "not_found",
        customer_email="nobody@nowhere.example",
        items=[{"sku": draft["sku"], "quantity": 1}],
    )


def test_an_unshipped_order_is_cancelled_with_a_full_refund_and_its_stock_released(ep: Episode) -> None:
    order = an_order(ep, "awaiting_shipment")
    sku = order["line_items"][0]["sku"]
    before = variant(ep, sku)
    cancelled = call(ep, "cancel_order", order_id=order["id"], reason="customer", note="Customer ordered twice.")
    assert (cancelled["status"], cancelled["financial_status"], cancelled["refundable"]) == (
        "cancelled",
        "refunded",
        0.0,
    )
    assert cancelled["total_refunded"] == order["total_price"] and "ordered twice" in cancelled["note"]
    refund = call(ep, "list_refunds", order_id=order["id"])["items"][0]
    assert refund["amount"] == order["total_price"]
    assert variant(ep, sku)["available"] == before["available"] + order["line_items"][0]["quantity"]
    refused(ep, "cancel_order", "invalid_state", order_id=order["id"], reason="customer")


def test_a_pending_order_is_cancelled_without_a_refund(ep: Episode) -> None:
    order = an_order(ep, "payment_pending")
    cancelled = call(ep, "cancel_order", order_id=order["id"], reason="declined")
    assert cancelled["financial_status"] == "voided" and call(ep, "list_refunds", order_id=order["id"])["total"] == 0


def test_a_fulfilled_order_cannot_be_cancelled_only_returned(ep: Episode) -> None:
    order = an_order(ep, "in_transit")
    result = refused(ep, "cancel_order", "invalid_state", order_id=order["id"], reason="customer")
    assert "create_return" in (result.error_message or "")


def test_an_address_changes_only_before_the_order_ships(ep: Episode) -> None:
    waiting = an_order(ep, "awaiting_shipment")
    moved = call(ep, "update_order", order_id=waiting["id"], shipping_address="12 Pine Road, Springfield, IL 62701")
    assert moved["shipping_address"] == "12 Pine Road, Springfield, IL 62701"
    shipped = an_order(ep, "in_transit")
    refused(
        ep,
        "update_order",
        "invalid_state",
        order_id=shipped["id"],
        shipping_address="12 Pine Road, Springfield, IL 62701",
    )
    noted = call(ep, "add_order_note", order_id=shipped["id"], note="Customer called about delivery.")
    again = call(ep, "add_order_note", order_id=shipped["id"], note="Ticket T-1042.")
    assert noted["note"].endswith("delivery.") and again["note"].endswith("delivery.\nTicket T-1042.")


# -- fulfilment --------------------------------------------------------------------------------------------


def test_fulfilling_needs_payment_and_a_carriers_tracking_number_and_takes_stock(ep: Episode) -> None:
    pending = an_order(ep, "payment_pending")
    refused(
        ep,
        "fulfill_order",
        "invalid_state",
        order_id=pending["id"],
        tracking_number="1Z999AA10123456784",
        carrier="ups",
    )
    order = an_order(ep, "awaiting_shipment")
    refused(ep, "fulfill_order", "invalid_argument", order_id=order["id"])
    refused(
        ep,
        "fulfill_order",
        "invalid_argument",
        order_id=order["id"],
        tracking_number="1Z999AA10123456784",
        carrier="fedex",
    )
    line = order["line_items"][0]
    before = variant(ep, line["sku"])
    done = call(ep, "fulfill_order", order_id=order["id"], tracking_number="1z999aa10123456784", carrier="ups")
    assert done["tracking_url"] == "https://www.ups.com/track?tracknum=1Z999AA10123456784"
    assert done["tracking_company"] == "UPS" and done["order_name"] == order["name"]
    after = call(ep, "get_order", order_id=order["id"])
    assert after["fulfillment_status"] == "fulfilled"
    stock = variant(ep, line["sku"])
    assert stock["on_hand"] == before["on_hand"] - line["quantity"] and stock["available"] == before["available"]
    refused(
        ep, "fulfill_order", "invalid_state", order_id=order["id"], tracking_number="1Z999AA10123456785", carrier="ups"
    )


def test_a_backordered_line_cannot_ship_until_stock_arrives(ep: Episode) -> None:
    order = an_order(ep, "partial_backorder")
    waiting = next(li for li in order["line_items"] if li["fulfilled_quantity"] < li["quantity"])
    sku = waiting["sku"]
    result = refused(
        ep, "fulfill_order", "invalid_state", order_id=order["id"], tracking_number="774899172137", carrier="fedex"
    )
    assert "on hand" in (result.error_message or "")
    call(ep, "adjust_inventory", variant_id=variant(ep, sku)["id"], delta=waiting["quantity"], reason="received")
    call(ep, "fulfill_order", order_id=order["id"], tracking_number="774899172137", carrier="fedex")
    assert call(ep, "get_order", order_id=order["id"])["fulfillment_status"] == "fulfilled"
    assert variant(ep, sku)["on_hand"] == 0


def test_a_cancelled_fulfilment_puts_the_units_back(ep: Episode) -> None:
    order = an_order(ep, "label_created")
    fulfilment = call(ep, "list_fulfillments", order_id=order["id"])["items"][0]
    line = order["line_items"][0]
    before = variant(ep, line["sku"])
    cancelled = call(ep, "cancel_fulfillment", fulfillment_id=fulfilment["id"])
    assert cancelled["status"] == "cancelled"
    assert call(ep, "get_order", order_id=order["id"])["fulfillment_status"] == "unfulfilled"
    assert variant(ep, line["sku"])["on_hand"] == before["on_hand"] + line["quantity"]
    call(ep, "cancel_order", order_id=order["id"], reason="customer")  # nothing shipped any more


# -- returns and refunds -------------------------------------------------------------------------------------


def test_a_return_inside_the_window_is_approved_refunded_and_restocked(ep: Episode) -> None:
    ret = next(
        r
        for r in every(ep, "list_returns", status="requested")
        if r["order_id"] in {o.id for o in commerce_plan(ep.world).orders if o.story == "return_requested"}
    )
    order = call(ep, "get_order", order_id=ret["order_id"])
    item = ret["items"][0]
    line = next(li for li in order["line_items"] if li["id"] == item["line_item_id"])
    assert line["returned_quantity"] == item["quantity"]
    approved = call(ep, "approve_return", return_id=ret["id"])
    assert approved["status"] == "open"
    before = variant(ep, item["sku"])
    refund = call(ep, "refund_order", order_id=order["id"], return_id=ret["id"], reason="Return received: defective")
    share = 1 - order["total_discounts"] / order["subtotal_price"]
    assert refund["amount"] == round(line["price"] * item["quantity"] * share, 2) and refund["restocked"]
    assert variant(ep, item["sku"])["on_hand"] == before["on_hand"] + item["quantity"]
    closed = call(ep, "list_returns", order_id=order["id"])["items"][0]
    assert closed["status"] == "closed"
    assert call(ep, "get_order", order_id=order["id"])["financial_status"] == "partially_refunded"
    refused(ep, "refund_order", "invalid_state", order_id=order["id"], return_id=ret["id"], reason="again")


def test_a_return_asked_for_after_the_window_is_refused_and_can_be_declined(ep: Episode) -> None:
    late = next(o for o in commerce_plan(ep.world).orders if o.story == "return_requested_late")
    ret = call(ep, "list_returns", order_id=late.id, status="requested")["items"][0]
    window = call(ep, "get_store_policy")["return_window_days"]
    result = refused(ep, "approve_return", "permission_denied", return_id=ret["id"])
    assert f"{window}-day return window" in (result.error_message or "")
    order = call(ep, "get_order", order_id=late.id)
    refused(
        ep,
        "create_return",
        "permission_denied",
        order_id=late.id,
        items=[{"line_item_id": order["line_items"][0]["id"], "quantity": 1, "reason": "unwanted"}],
    )
    declined = call(ep, "decline_return", return_id=ret["id"], reason="return_period_ended")
    assert (declined["status"], declined["decline_reason"]) == ("declined", "return_period_ended")
    refused(ep, "approve_return", "invalid_state", return_id=ret["id"])


def test_final_sale_and_unshipped_items_cannot_be_returned(ep: Episode) -> None:
    pantry = an_order(ep, "return_declined")
    refused(
        ep,
        "create_return",
        "permission_denied",
        order_id=pantry["id"],
        items=[{"line_item_id": pantry["line_items"][0]["id"], "quantity": 1, "reason": "unwanted"}],
    )
    waiting = an_order(ep, "awaiting_shipment")
    refused(
        ep,
        "create_return",
        "invalid_argument",
        order_id=waiting["id"],
        items=[{"line_item_id": waiting["line_items"][0]["id"], "quantity": 1, "reason": "unwanted"}],
    )
    delivered = next(
        o
        for o in every(ep, "list_orders", fulfillment_status="fulfilled")
        if o["shipping_method"] != "none"
        and o["financial_status"] == "paid"
        and when(o["created_at"]) > when(ep.world.now) - timedelta(days=10)
    )
    line = delivered["line_items"][0]
    refused(
        ep,
        "create_return",
        "invalid_argument",
        order_id=delivered["id"],
        items=[{"line_item_id": line["id"], "quantity": line["quantity"] + 1, "reason": "unwanted"}],
    )


def test_a_refund_never_exceeds_what_was_paid_minus_what_was_refunded(ep: Episode) -> None:
    order = an_order(ep, "partially_refunded")
    left = order["refundable"]
    assert 0 < left < order["total_price"]
    result = refused(
        ep, "refund_order", "invalid_argument", order_id=order["id"], amount=round(left + 0.01, 2), reason="Goodwill"
    )
    assert f"{left:.2f}" in (result.error_message or "")
    call(ep, "refund_order", order_id=order["id"], amount=round(left - 10, 2), reason="Goodwill: late delivery")
    call(ep, "refund_order", order_id=order["id"], amount=10.0, reason="Goodwill: late delivery")
    done = call(ep, "get_order", order_id=order["id"])
    assert (done["financial_status"], done["refundable"]) == ("refunded", 0.0)
    refused(ep, "refund_order", "invalid_state", order_id=order["id"], amount=1.0, reason="again")
    refused(ep, "refund_order", "invalid_state", order_id=an_order(ep, "payment_pending")["id"], amount=1.0, reason="x")
    refused(ep, "refund_order", "invalid_argument", order_id=order["id"], reason="no amount")


# -- discount codes ------------------------------------------------------------------------------------


def test_discount_codes_are_listed_by_state_created_and_disabled(ep: Episode) -> None:
    states = {
        s: {c["code"] for c in call(ep, "list_discount_codes", state=s)["items"]}
        for s in ("active", "expired", "disabled")
    }
    assert {"WELCOME10", "FREESHIP", "BULK50", "TEAMGEAR20"} <= states["active"]
    assert states["expired"] == {"SPRING15"} and states["disabled"] == {"PARTNER25"}
    used = call(ep, "list_discount_codes", query="TEAMGEAR20")["items"][0]
    assert used["times_used"] == used["usage_limit"]
    code = call(ep, "create_discount_code", code="summer-10", kind="percentage", value=10, title="Summer: 10% off")
    assert code["code"] == "SUMMER-10" and code["times_used"] == 0
    refused(ep, "create_discount_code", "conflict", code="Summer-10", kind="percentage", value=5, title="Again")
    refused(ep, "create_discount_code", "invalid_argument", code="BIG", kind="percentage", value=150, title="Too much")
    disabled = call(ep, "disable_discount_code", discount_code_id=code["id"])
    assert disabled["disabled"]
    refused(
        ep,
        "create_order",
        "invalid_state",
        customer_email=ep.world.customers[0].email,
        items=[{"sku": in_stock(ep)["sku"], "quantity": 1}],
        discount_code="SUMMER-10",
    )


# -- world events ----------------------------------------------------------------------------------------


def test_a_storefront_order_arrives_as_new_rows_only(ep: Episode) -> None:
    v = in_stock(ep)
    order_id = ep.run_event(
        "commerce",
        "order_placed",
        customer_email="ana.ruiz@brightline.example",
        customer_first_name="Ana",
        customer_last_name="Ruiz",
        shipping_address="12 Pine Road, Springfield, IL 62701",
        items=[{"sku": v["sku"], "quantity": 2}],
        hours_ago=3,
    )
    diff = ep.diff()["commerce"]
    assert not any(t.changed or t.deleted for t in diff.tables.values())
    assert {name for name, table in diff.tables.items() if table} == {"orders", "line_items", "customers"}
    order = call(ep, "get_order", order_id=order_id)
    assert order["customer_name"] == "Ana Ruiz" and order["created_at"] < ep.world.now
    assert variant(ep, v["sku"])["committed"] == v["committed"] + 2
    with pytest.raises(ToolError, match="SPRING15 expired"):
        ep.run_event(
            "commerce",
            "order_placed",
            customer_email="ana.ruiz@brightline.example",
            items=[{"sku": v["sku"], "quantity": 1}],
            discount_code="SPRING15",
        )


def test_a_return_request_is_recorded_even_past_the_window_for_the_merchant_to_decide(ep: Episode) -> None:
    old = next(o for o in commerce_plan(ep.world).orders if o.story == "delivered")
    order = call(ep, "get_order", order_id=old.id)
    line = order["line_items"][0]
    return_id = ep.run_event(
        "commerce",
        "return_requested",
        order_id=old.id,
        customer_note="It stopped working.",
        items=[{"sku": line["sku"], "quantity": 1, "reason": "defective"}],
    )
    diff = ep.diff()["commerce"]
    assert {name for name, table in diff.tables.items() if table} == {"returns"} and not diff.tables["returns"].changed
    ret = call(ep, "list_returns", order_id=old.id, status="requested")["items"][0]
    assert ret["id"] == return_id and ret["customer_note"] == "It stopped working."
    with pytest.raises(ToolError, match="only shipped units"):
        ep.run_event(
            "commerce",
            "return_requested",
            order_id=old.id,
            items=[{"sku": line["sku"], "quantity": line["quantity"] + 5, "reason": "defective"}],
        )


# -- agreement with shipping ---------------------------------------------------------------------------------


def test_every_shipment_matches_its_order_and_every_label_its_fulfilment() -> None:
    with Episode.create(["commerce", "shipping"], world_seed=0) as ep:
        orders = {o["id"]: o for o in every(ep, "list_orders")}
        fulfilments = {f["tracking_number"]: f for f in every(ep, "list_fulfillments") if f["tracking_number"]}
        shipments = ep.call("shipping", "list_shipments", {"limit": 100}).data["items"]
        assert len(shipments) == len(commerce_plan(ep.world).shipments)
        for shipment in shipments:
            order = orders[shipment["order_id"]]
            assert shipment["order_number"] == order["name"]
            assert (shipment["ship_to_name"], shipment["ship_to_email"]) == (order["shipping_name"], order["email"])
            assert shipment["ship_to_address"] == order["shipping_address"]
            shipped = {li["sku"]: li["fulfilled_quantity"] for li in order["line_items"] if li["fulfilled_quantity"]}
            wanted = shipped or {li["sku"]: li["quantity"] for li in order["line_items"]}
            assert {i["sku"]: i["quantity"] for i in shipment["items"]} == wanted
            if order["status"] == "cancelled":
                assert shipment["status"] == "cancelled"
            elif order["fulfillment_status"] == "unfulfilled":
                assert shipment["status"] == "pending"
            else:
                fulfilment = fulfilments[shipment["tracking_number"]]
                assert fulfilment["order_id"] == order["id"]
                label = ep.call("shipping", "list_labels", {"tracking_number": shipment["tracking_number"]}).data[
                    "items"
                ][0]
                assert label["tracking_url"] == fulfilment["tracking_url"]
        with_return_labels = [r for r in every(ep, "list_returns") if r["return_tracking_number"]]
        assert with_return_labels
        for ret in with_return_labels:
            label = ep.call("shipping", "list_labels", {"tracking_number": ret["return_tracking_number"]}).data[
                "items"
            ][0]
            assert label["is_return"] and label["order_number"] == ret["order_name"]
