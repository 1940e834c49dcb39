"""Behaviour of shipping a user would notice: shipments for the store's orders, rates, labels and their rules,
tracking, return labels, address validation, the carrier's scans as events, and the flow with commerce."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.commerce import commerce_plan
from tests.mcp_services.library.service_calls import ServiceCalls

FORMATS = {"ups": r"^1Z[0-9A-Z]{16}$", "fedex": r"^\d{12}$", "usps": r"^9400\d{18}$"}


call = ServiceCalls("shipping")
refused = call.refused
every = call.every
commerce = ServiceCalls("commerce")


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["shipping"], world_seed=0) as episode:
        yield episode


def shipment_of(ep: Episode, story: str) -> dict[str, Any]:
    order = next(o for o in commerce_plan(ep.world).orders if o.story == story and o.shipment is not None)
    return call(ep, "list_shipments", order_id=order.id)["items"][0]


def label_of(ep: Episode, story: str) -> dict[str, Any]:
    return call(ep, "list_labels", shipment_id=shipment_of(ep, story)["id"], is_return=False)["items"][0]


# -- seeded data ---------------------------------------------------------------------------------------


def test_shipments_labels_and_scans_tell_where_every_order_is(ep: Episode) -> None:
    shipments = every(ep, "list_shipments")
    assert Counter(s["status"] for s in shipments).keys() == {"pending", "label_purchased", "cancelled"}
    labels = every(ep, "list_labels")
    statuses = Counter(label["tracking_status"] for label in labels if not label["is_return"])
    assert {"delivered", "in_transit", "label_created", "exception", "returned_to_sender"} <= set(statuses)
    for label in labels:
        assert re.match(FORMATS[label["carrier_code"]], label["tracking_number"])
        assert label["tracking_url"].endswith(label["tracking_number"]) and label["cost"] > 0
    assert [label["id"] for label in sorted(labels, key=lambda lb: (lb["created_at"], lb["id"]))] == sorted(
        label["id"] for label in labels
    ), "label ids follow the time they were bought"
    for s in shipments:
        assert (s["tracking_number"] is not None) == (s["status"] == "label_purchased")
        assert s["ship_from_name"] == ep.world.home.name


def test_a_package_is_tracked_with_every_scan_in_order(ep: Episode) -> None:
    label = label_of(ep, "delivered")
    tracked = call(ep, "track_package", tracking_number=label["tracking_number"].lower())
    assert tracked["status"] == "delivered" and tracked["delivered_at"] == tracked["events"][-1]["occurred_at"]
    times = [e["occurred_at"] for e in tracked["events"]]
    assert times == sorted(times) and tracked["events"][0]["status"] == "accepted"
    assert tracked["order_number"] == label["order_number"]
    stuck = call(ep, "track_package", tracking_number=label_of(ep, "exception")["tracking_number"])
    assert stuck["status"] == "exception" and stuck["delivered_at"] is None
    refused(ep, "track_package", "not_found", tracking_number="1Z0000000000000000")


def test_addresses_are_validated_before_a_label_is_bought(ep: Episode) -> None:
    good = call(ep, "validate_address", address=ep.world.customers[0].address)
    assert good["status"] == "verified" and good["normalized_address"] == ep.world.customers[0].address
    assert call(ep, "validate_address", address="12 Pine Road, Springfield, IL")["messages"] == [
        "The ZIP code is missing."
    ]
    assert call(ep, "validate_address", address="12 Pine Road, Springfield, QQ 62701")["status"] == "error"
    assert call(ep, "validate_address", address="Pine Road, Springfield, IL 62701")["status"] == "warning"
    assert call(ep, "validate_address", address="somewhere near the station")["status"] == "error"
    incomplete = shipment_of(ep, "address_incomplete")
    result = refused(ep, "create_label", "invalid_state", shipment_id=incomplete["id"], service_code="ups_ground")
    assert "ZIP code is missing" in (result.error_message or "")
    fixed = f"{incomplete['ship_to_address']} 05401"
    call(ep, "update_shipment", shipment_id=incomplete["id"], ship_to_address=fixed)
    assert (
        call(ep, "create_label", shipment_id=incomplete["id"], service_code="ups_ground")["tracking_status"]
        == "label_created"
    )


# -- labels ------------------------------------------------------------------------------------------------


def test_a_label_is_bought_at_the_quoted_rate_with_a_new_tracking_number(ep: Episode) -> None:
    shipment = shipment_of(ep, "awaiting_shipment")
    rates = call(ep, "get_rates", shipment_id=shipment["id"])
    assert [r["amount"] for r in rates] == sorted(r["amount"] for r in rates)
    express = next(r for r in rates if r["express"])
    label = call(ep, "create_label", shipment_id=shipment["id"], service_code=express["service_code"])
    assert label["cost"] == express["amount"] and re.match(FORMATS[express["carrier"]], label["tracking_number"])
    assert label["estimated_delivery"] == express["estimated_delivery"]
    after = call(ep, "get_shipment", shipment_id=shipment["id"])
    assert (after["status"], after["tracking_number"]) == ("label_purchased", label["tracking_number"])
    result = refused(ep, "create_label", "invalid_state", shipment_id=shipment["id"], service_code="ups_ground")
    assert label["id"] in (result.error_message or "")
    other = call(ep, "list_shipments", status="pending")["items"][0]
    refused(ep, "create_label", "not_found", shipment_id=other["id"], service_code="pigeon")


def test_no_label_can_be_bought_for_a_cancelled_orders_shipment(ep: Episode) -> None:
    cancelled = shipment_of(ep, "cancelled")
    assert cancelled["status"] == "cancelled"
    result = refused(ep, "create_label", "invalid_state", shipment_id=cancelled["id"], service_code="ups_ground")
    assert "cancelled" in (result.error_message or "")
    waiting = shipment_of(ep, "awaiting_shipment")
    assert call(ep, "cancel_shipment", shipment_id=waiting["id"])["status"] == "cancelled"
    refused(ep, "create_label", "invalid_state", shipment_id=waiting["id"], service_code="ups_ground")


def test_a_heavy_package_needs_a_carrier_that_takes_its_weight(ep: Episode) -> None:
    shipment = shipment_of(ep, "awaiting_shipment")
    call(ep, "update_shipment", shipment_id=shipment["id"], weight_grams=40_000)
    assert {r["carrier"] for r in call(ep, "get_rates", shipment_id=shipment["id"])} == {"ups", "fedex"}
    result = refused(ep, "create_label", "invalid_state", shipment_id=shipment["id"], service_code="usps_priority_mail")
    assert "31.75 kg" in (result.error_message or "")


def test_only_an_unscanned_label_can_be_voided_and_its_shipment_is_pending_again(ep: Episode) -> None:
    waiting = label_of(ep, "label_created")
    voided = call(ep, "void_label", label_id=waiting["id"])
    assert voided["status"] == "voided" and voided["voided_at"] == ep.world.now
    shipment = call(ep, "get_shipment", shipment_id=waiting["shipment_id"])
    assert (shipment["status"], shipment["tracking_number"]) == ("pending", None)
    refused(ep, "void_label", "invalid_state", label_id=waiting["id"])
    moving = label_of(ep, "in_transit")
    result = refused(ep, "void_label", "invalid_state", label_id=moving["id"])
    assert "scanned" in (result.error_message or "")
    refused(ep, "cancel_shipment", "invalid_state", shipment_id=moving["shipment_id"])
    refused(ep, "update_shipment", "invalid_state", shipment_id=moving["shipment_id"], weight_grams=1000)


def test_a_delivered_package_gets_one_return_label_back_to_the_warehouse(ep: Episode) -> None:
    delivered = label_of(ep, "delivered")
    back = call(ep, "create_return_label", label_id=delivered["id"])
    assert back["is_return"] and back["shipment_id"] == delivered["shipment_id"] and back["status"] == "completed"
    tracked = call(ep, "track_package", tracking_number=back["tracking_number"])
    assert tracked["is_return"] and tracked["ship_to_address"] == ep.world.home.address
    refused(ep, "create_return_label", "conflict", label_id=delivered["id"])
    refused(ep, "create_return_label", "invalid_state", label_id=label_of(ep, "in_transit")["id"])
    refused(ep, "create_return_label", "invalid_argument", label_id=back["id"])


# -- searching ---------------------------------------------------------------------------------------------


def test_shipments_are_found_by_order_number_status_tag_and_recipient(ep: Episode) -> None:
    shipment = shipment_of(ep, "in_transit")
    for number in (shipment["order_number"], shipment["order_number"].lstrip("#")):
        assert [s["id"] for s in call(ep, "list_shipments", order_number=number)["items"]] == [shipment["id"]]
    pending = every(ep, "list_shipments", status="pending")
    assert len(pending) == sum(1 for s in commerce_plan(ep.world).shipments if s.status == "pending")
    express = every(ep, "list_shipments", tag="express")
    assert express and all(s["requested_service"] == "express" for s in express)
    mine = every(ep, "list_shipments", ship_to_email=shipment["ship_to_email"])
    assert shipment["id"] in {s["id"] for s in mine}
    by_name = call(ep, "list_shipments", query=shipment["ship_to_name"])["items"]
    assert all(s["ship_to_name"] == shipment["ship_to_name"] for s in by_name)
    tagged = call(ep, "tag_shipment", shipment_id=shipment["id"], tag="Fragile")
    assert "fragile" in tagged["tags"]
    refused(ep, "tag_shipment", "invalid_state", shipment_id=shipment["id"], tag="fragile")
    ups = every(ep, "list_labels", carrier_code="ups")
    assert ups and all(label["carrier_code"] == "ups" for label in ups)


def test_an_order_can_only_have_one_live_shipment(ep: Episode) -> None:
    shipment = shipment_of(ep, "awaiting_shipment")
    args = dict(
        order_id=shipment["order_id"],
        order_number=shipment["order_number"],
        ship_to_name=shipment["ship_to_name"],
        ship_to_address=shipment["ship_to_address"],
        items=shipment["items"],
        weight_grams=shipment["weight_grams"],
    )
    refused(ep, "create_shipment", "conflict", **args)
    call(ep, "cancel_shipment", shipment_id=shipment["id"])
    again = call(ep, "create_shipment", **args)
    assert again["status"] == "pending" and again["items"] == shipment["items"]
    refused(ep, "create_shipment", "invalid_argument", **{**args, "order_number": "order one"})


# -- world events -------------------------------------------------------------------------------------------


def test_a_carrier_scan_arrives_as_a_new_event_and_becomes_the_status(ep: Episode) -> None:
    label = label_of(ep, "in_transit")
    event_id = ep.run_event(
        "shipping",
        "tracking_updated",
        tracking_number=label["tracking_number"],
        status="exception",
        description="Address information is incomplete.",
        location="Dallas, TX",
        hours_ago=0.5,
    )
    diff = ep.diff()["shipping"]
    assert {n for n, t in diff.tables.items() if t} == {"tracking_events"} and not diff.tables[
        "tracking_events"
    ].changed
    tracked = call(ep, "track_package", tracking_number=label["tracking_number"])
    assert (
        tracked["status"] == "exception"
        and tracked["events"][-1]["description"] == "Address information is incomplete."
    )
    assert call(ep, "get_label", label_id=label["id"])["tracking_status"] == "exception"
    assert event_id.startswith("tev_")
    with pytest.raises(ToolError, match="cannot be earlier"):
        ep.run_event(
            "shipping",
            "tracking_updated",
            tracking_number=label["tracking_number"],
            status="delivered",
            description="Delivered",
            hours_ago=48,
        )
    with pytest.raises(ToolError, match="not one of"):
        ep.run_event(
            "shipping", "tracking_updated", tracking_number=label["tracking_number"], status="lost", description="Gone"
        )


# -- the flow with commerce -------------------------------------------------------------------------------


def test_an_order_placed_on_the_storefront_is_shipped_and_marked_fulfilled_with_the_labels_tracking() -> None:
    with Episode.create(["commerce", "shipping"], world_seed=0) as ep:
        customer = ep.world.customers[3]
        sku = next(
            v["sku"] for v in commerce(ep, "list_variants", stock="in_stock", limit=100)["items"] if v["grams"] < 3000
        )
        order_id = ep.run_event(
            "commerce",
            "order_placed",
            customer_email=customer.email,
            items=[{"sku": sku, "quantity": 2}],
            shipping_method="express",
        )
        order = commerce(ep, "get_order", order_id=order_id)
        line = order["line_items"][0]
        shipment = call(
            ep,
            "create_shipment",
            order_id=order["id"],
            order_number=order["name"],
            ship_to_name=order["shipping_name"],
            ship_to_address=order["shipping_address"],
            ship_to_email=order["email"],
            items=[{"sku": line["sku"], "name": line["title"], "quantity": 2}],
            weight_grams=2000,
            requested_service="express",
        )
        rate = next(r for r in call(ep, "get_rates", shipment_id=shipment["id"]) if r["express"])
        label = call(ep, "create_label", shipment_id=shipment["id"], service_code=rate["service_code"])
        fulfilment = commerce(
            ep,
            "fulfill_order",
            order_id=order_id,
            tracking_number=label["tracking_number"],
            carrier=label["carrier_code"],
        )
        assert fulfilment["tracking_url"] == label["tracking_url"]
        assert commerce(ep, "get_order", order_id=order_id)["fulfillment_status"] == "fulfilled"
        assert shipment["ship_to_address"] == customer.address == order["shipping_address"]
