"""Behaviour of payments a user would notice: seeded customers and charges, refunds, disputes, links."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, StateDump, Store, ToolContext, ToolResult, World
from mcp_services.library import payments


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["payments"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("payments", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.dump()
    result = ep.call("payments", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    assert ep.dump() == before
    return result


def all_charges(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "list_charges", limit=100, cursor=cursor, **filters)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def a_charge(ep: Episode, status: str) -> dict[str, Any]:
    """A seeded charge in ``status`` that is not refunded, disputed or an invoice payment."""
    tables = ep.dump()["payments"]
    disputed = {d["charge_id"] for d in tables["disputes"].values()}
    for row in tables["charges"].values():
        if row["status"] == status and not (row["amount_refunded"] or row["invoice_number"] or row["id"] in disputed):
            return call(ep, "get_charge", charge_id=row["id"])
    raise AssertionError(f"no plain seeded {status} charge")


def a_dispute(ep: Episode, status: str, *, overdue: bool = False) -> dict[str, Any]:
    now = ep.world.now
    for dispute in call(ep, "list_disputes", status=status, limit=100)["items"]:
        if (dispute["evidence_due_by"] < now) == overdue:
            return dispute
    raise AssertionError(f"no seeded {status} dispute (overdue={overdue})")


def duplicate_pairs(ep: Episode) -> list[list[dict[str, Any]]]:
    """Charges of one customer with the same amount and description on the same day."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for c in all_charges(ep, status="succeeded"):
        groups.setdefault((c["customer_id"], c["amount"], c["description"], c["created"][:10]), []).append(c)
    return [g for g in groups.values() if len(g) > 1]


# -- seeded data ---------------------------------------------------------------------------------


def test_customers_are_the_crm_contacts_with_the_same_name_email_phone_and_company() -> None:
    with Episode.create(["crm", "payments"], world_seed=0) as ep:
        customers = ep.call("payments", "list_customers", {"limit": 100}).data["items"]
        assert len(customers) == len(ep.world.customers)
        for customer in customers[:25]:
            contact = ep.call("crm", "find_contact_by_email", {"email": customer["email"]}).data
            assert (contact["name"], contact["phone"]) == (customer["name"], customer["phone"])
            assert contact["company_name"] == customer["company_name"]


def test_seeded_account_has_hundreds_of_charges_in_every_status(ep: Episode) -> None:
    tables = ep.dump()["payments"]
    assert 150 <= len(tables["charges"]) <= 1000
    assert Counter(c["status"] for c in tables["charges"].values()).keys() == {"succeeded", "pending", "failed"}
    assert len(tables["refunds"]) >= 10 and len(tables["payment_links"]) >= 10
    assert {d["status"] for d in tables["disputes"].values()} == {"needs_response", "under_review", "won", "lost"}
    failed = next(c for c in tables["charges"].values() if c["status"] == "failed")
    assert failed["failure_code"] and failed["failure_message"] and failed["amount_captured"] == 0
    # Every timestamp is in the past of the frozen clock, and ids follow time.
    charges = sorted(tables["charges"].values(), key=lambda c: c["id"])
    assert all(c["created"] <= ep.world.now for c in charges)
    assert [c["created"] for c in charges] == sorted(c["created"] for c in charges)


def test_invoice_charges_match_the_accounting_invoices_they_pay() -> None:
    with Episode.create(["payments", "accounting"], world_seed=0) as ep:
        charges = [c for c in all_charges(ep, status="succeeded") if c["invoice_number"]]
        assert len(charges) >= 20
        for charge in charges[:15]:
            invoice = ep.call("accounting", "get_invoice", {"invoice_number": charge["invoice_number"]}).data
            assert invoice["contact_email"] == charge["customer_email"]
            assert invoice["contact_name"] == charge["company_name"]
            assert charge["amount"] <= invoice["total"]


def test_some_customers_were_charged_twice_for_the_same_thing_minutes_apart(ep: Episode) -> None:
    pairs = duplicate_pairs(ep)
    assert len(pairs) >= 4
    assert any(pair[0]["invoice_number"] for pair in pairs)
    for first, second in pairs:
        assert first["id"] != second["id"] and first["created"][:13] <= second["created"][:13]
    # One twin was already caught and refunded as a duplicate; the others are still open.
    assert sum(any(c["refunded"] for c in pair) for pair in pairs) == 1
    duplicate_refunds = call(ep, "list_refunds", reason="duplicate")["items"]
    assert len(duplicate_refunds) == 1


def test_the_same_seed_gives_the_same_account_and_another_seed_another(ep: Episode) -> None:
    def fresh_seed(world_seed: int) -> StateDump:
        store = Store.in_memory(payments.service.metadata)
        try:
            with store.transaction() as session:
                payments.seed(ToolContext(session, World.from_seed(world_seed), "payments"))
            return store.dump()
        finally:
            store.close()

    assert fresh_seed(0) == ep.dump()["payments"]
    assert fresh_seed(1) != ep.dump()["payments"]


def test_tools_carry_the_semantic_types_that_link_services() -> None:
    tools = payments.service.tools
    assert len(tools) >= 13
    props = tools["list_charges"].input_schema["properties"]
    assert props["customer_email"]["anyOf"][0]["x-semantic-type"] == "email_address"
    assert props["invoice_number"]["anyOf"][0]["x-semantic-type"] == "id:accounting.invoice"
    charge = tools["get_charge"].data_schema["properties"]
    assert charge["amount"]["x-semantic-type"] == "money"
    assert charge["customer_name"]["x-semantic-type"] == "person_name"
    assert tools["refund_charge"].data_schema["properties"]["id"]["x-semantic-type"] == "id:payments.refund"
    for tool in tools.values():
        assert tool.description and all(p.get("description") for p in tool.input_schema["properties"].values())


# -- customers -----------------------------------------------------------------------------------


def test_created_customer_round_trips_and_can_be_found_by_email(ep: Episode) -> None:
    created = call(ep, "create_customer", name="Ana Ruiz", email="Ana.Ruiz@Brightline.example",
                   phone="+14155550123", company_name="Brightline Foods")
    assert created["id"] == "cus_0063" and created["email"] == "ana.ruiz@brightline.example"
    assert call(ep, "get_customer", customer_id=created["id"]) == created
    assert call(ep, "list_customers", email="ana.ruiz@brightline.example")["items"] == [created]


def test_a_second_customer_with_the_same_email_is_refused(ep: Episode) -> None:
    email = ep.world.customers[0].email
    result = refused(ep, "create_customer", "conflict", name="Someone Else", email=email)
    assert "update_customer" in (result.error_message or "")


def test_update_customer_changes_only_the_given_fields(ep: Episode) -> None:
    before = call(ep, "list_customers", limit=1)["items"][0]
    after = call(ep, "update_customer", customer_id=before["id"], phone="+14155550199")
    assert after == {**before, "phone": "+14155550199"}
    refused(ep, "update_customer", "invalid_argument", customer_id=before["id"])
    other = call(ep, "list_customers", limit=2)["items"][1]
    refused(ep, "update_customer", "conflict", customer_id=before["id"], email=other["email"])


def test_list_customers_searches_name_and_company(ep: Episode) -> None:
    person = ep.world.customers[3]
    company = ep.world.organisation(person.organisation_id).name
    assert person.email in {c["email"] for c in call(ep, "list_customers", query=person.last_name)["items"]}
    staff = call(ep, "list_customers", company_name=company, limit=100)["items"]
    assert staff and all(c["company_name"] == company for c in staff)
    assert len(staff) == sum(p.organisation_id == person.organisation_id for p in ep.world.customers)


# -- charges: search, pagination, create, capture -------------------------------------------------


def test_pagination_walks_every_charge_exactly_once(ep: Episode) -> None:
    first = call(ep, "list_charges", limit=30)
    assert first["total"] == len(ep.dump()["payments"]["charges"]) and first["next_cursor"] == "30"
    ids = [c["id"] for c in all_charges(ep)]
    assert len(ids) == len(set(ids)) == first["total"]
    refused(ep, "list_charges", "invalid_argument", cursor="page-two")


def test_list_charges_filters_by_email_status_dates_amounts_and_invoice(ep: Episode) -> None:
    charges = all_charges(ep)
    sample = next(c for c in charges if c["invoice_number"])
    mine = call(ep, "list_charges", customer_email=sample["customer_email"], limit=100)["items"]
    assert mine and all(c["customer_email"] == sample["customer_email"] for c in mine)
    assert [c["created"] for c in mine] == sorted((c["created"] for c in mine), reverse=True)
    failed = call(ep, "list_charges", status="failed", limit=100)["items"]
    assert failed and {c["status"] for c in failed} == {"failed"}
    day = sample["created"][:10]
    on_day = call(ep, "list_charges", created_from=day, created_to=day, limit=100)["items"]
    assert sample["id"] in {c["id"] for c in on_day} and all(c["created"][:10] == day for c in on_day)
    big = call(ep, "list_charges", amount_min=1000, amount_max=2000, limit=100)["items"]
    assert big and all(1000 <= c["amount"] <= 2000 for c in big)
    paying = call(ep, "list_charges", invoice_number=sample["invoice_number"])["items"]
    assert sample["id"] in {c["id"] for c in paying}
    assert all(c["invoice_number"] == sample["invoice_number"] for c in paying)


def test_an_impossible_date_filter_is_refused_with_the_expected_format(ep: Episode) -> None:
    result = refused(ep, "list_charges", "invalid_argument", created_from="2025-02-30")
    assert "YYYY-MM-DD" in (result.error_message or "")


def test_charging_a_customer_by_email_round_trips_through_get_charge(ep: Episode) -> None:
    person = ep.world.customers[5]
    charge = call(ep, "create_charge", customer_email=person.email, amount=129.0, description="Pro plan",
                  invoice_number="inv-0042")
    assert charge["status"] == "succeeded" and charge["captured"] and charge["amount_captured"] == 129.0
    assert charge["customer_name"] == person.name and charge["receipt_email"] == person.email
    assert charge["invoice_number"] == "INV-0042" and charge["created"] == ep.world.now
    assert call(ep, "get_charge", charge_id=charge["id"]) == charge


def test_charges_below_the_minimum_or_for_unknown_customers_are_refused(ep: Episode) -> None:
    email = ep.world.customers[0].email
    refused(ep, "create_charge", "invalid_argument", customer_email=email, amount=0.3)
    refused(ep, "create_charge", "not_found", customer_email="nobody@nowhere.example", amount=10)
    refused(ep, "create_charge", "invalid_argument", amount=10)
    refused(ep, "get_charge", "not_found", charge_id="ch_9999")


def test_an_authorised_charge_is_captured_once_and_not_beyond_its_amount(ep: Episode) -> None:
    email = ep.world.customers[0].email
    pending = call(ep, "create_charge", customer_email=email, amount=200, capture=False)
    assert pending["status"] == "pending" and not pending["captured"] and pending["amount_captured"] == 0
    refused(ep, "capture_charge", "invalid_argument", charge_id=pending["id"], amount=250)
    captured = call(ep, "capture_charge", charge_id=pending["id"], amount=150)
    assert captured["status"] == "succeeded" and captured["amount_captured"] == 150
    refused(ep, "capture_charge", "invalid_state", charge_id=pending["id"])
    # Only what was captured can be refunded.
    refused(ep, "refund_charge", "invalid_argument", charge_id=pending["id"], amount=200)
    assert call(ep, "refund_charge", charge_id=pending["id"])["amount"] == 150


def test_seeded_pending_charges_are_recent_and_capturable(ep: Episode) -> None:
    pending = call(ep, "list_charges", status="pending", limit=100)["items"]
    assert pending
    assert call(ep, "capture_charge", charge_id=pending[0]["id"])["status"] == "succeeded"


# -- refunds ---------------------------------------------------------------------------------------


def test_refunding_a_duplicate_charge_gives_a_new_refund_id_and_marks_it_refunded(ep: Episode) -> None:
    pair = next(p for p in duplicate_pairs(ep) if not any(c["refunded"] for c in p))
    twin = pair[-1]
    refund = call(ep, "refund_charge", charge_id=twin["id"], reason="duplicate")
    seeded = len(ep.initial_dump()["payments"]["refunds"])
    assert refund["id"] == f"re_{seeded + 1:04d}"
    assert (refund["amount"], refund["charge_id"], refund["reason"]) == (twin["amount"], twin["id"], "duplicate")
    assert refund["customer_email"] == twin["customer_email"] and refund["created"] == ep.world.now
    assert call(ep, "get_refund", refund_id=refund["id"]) == refund
    charge = call(ep, "get_charge", charge_id=twin["id"])
    assert charge["refunded"] and charge["amount_refunded"] == twin["amount"]
    # Only the twin changed: the first charge of the pair is untouched.
    assert call(ep, "get_charge", charge_id=pair[0]["id"]) == pair[0]
    diff = ep.diff()["payments"].to_dict()
    assert set(diff) == {"charges", "refunds"}
    assert list(diff["charges"]["changed"]) == [twin["id"]] and list(diff["refunds"]["added"]) == [refund["id"]]


def test_refunded_charge_cannot_be_refunded_twice(ep: Episode) -> None:
    charge = a_charge(ep, "succeeded")
    call(ep, "refund_charge", charge_id=charge["id"])
    result = refused(ep, "refund_charge", "invalid_state", charge_id=charge["id"])
    assert "already been refunded" in (result.error_message or "")


def test_partial_refunds_add_up_to_at_most_the_charge(ep: Episode) -> None:
    charge = a_charge(ep, "succeeded")
    part = round(charge["amount"] / 4, 2)
    call(ep, "refund_charge", charge_id=charge["id"], amount=part)
    refused(ep, "refund_charge", "invalid_argument", charge_id=charge["id"], amount=charge["amount"])
    rest = call(ep, "refund_charge", charge_id=charge["id"])
    assert rest["amount"] == round(charge["amount"] - part, 2)
    refunds = call(ep, "list_refunds", charge_id=charge["id"])["items"]
    assert round(sum(r["amount"] for r in refunds), 2) == charge["amount"]
    assert call(ep, "get_charge", charge_id=charge["id"])["refunded"]


def test_failed_and_pending_charges_cannot_be_refunded(ep: Episode) -> None:
    failed = a_charge(ep, "failed")
    result = refused(ep, "refund_charge", "invalid_state", charge_id=failed["id"])
    assert "nothing to refund" in (result.error_message or "")
    pending = a_charge(ep, "pending")
    refused(ep, "refund_charge", "invalid_state", charge_id=pending["id"])


def test_a_disputed_charge_cannot_be_refunded(ep: Episode) -> None:
    dispute = a_dispute(ep, "needs_response")
    result = refused(ep, "refund_charge", "invalid_state", charge_id=dispute["charge_id"])
    assert dispute["id"] in (result.error_message or "")
    assert call(ep, "get_charge", charge_id=dispute["charge_id"])["disputed"]


def test_list_refunds_filters_by_customer_and_reason(ep: Episode) -> None:
    refunds = call(ep, "list_refunds", limit=100)["items"]
    assert len(refunds) >= 10
    email = refunds[0]["customer_email"]
    assert all(r["customer_email"] == email for r in call(ep, "list_refunds", customer_email=email)["items"])
    assert {r["reason"] for r in call(ep, "list_refunds", reason="requested_by_customer", limit=100)["items"]} == {
        "requested_by_customer"
    }


# -- disputes --------------------------------------------------------------------------------------


def test_submitting_evidence_puts_the_dispute_under_review_once(ep: Episode) -> None:
    dispute = a_dispute(ep, "needs_response")
    answered = call(ep, "update_dispute", dispute_id=dispute["id"], evidence="Delivery receipt signed 3 March.")
    assert answered["status"] == "under_review" and answered["evidence_submitted_at"] == ep.world.now
    refused(ep, "update_dispute", "invalid_state", dispute_id=dispute["id"], evidence="More evidence")
    refused(ep, "close_dispute", "invalid_state", dispute_id=dispute["id"])


def test_draft_evidence_keeps_the_dispute_waiting_for_a_response(ep: Episode) -> None:
    dispute = a_dispute(ep, "needs_response")
    draft = call(ep, "update_dispute", dispute_id=dispute["id"], evidence="Draft notes", submit=False)
    assert draft["status"] == "needs_response" and draft["evidence"] == "Draft notes"
    assert draft["evidence_submitted_at"] is None
    refused(ep, "update_dispute", "invalid_argument", dispute_id=dispute["id"], evidence="   ")


def test_a_dispute_past_its_deadline_can_only_be_accepted(ep: Episode) -> None:
    late = a_dispute(ep, "needs_response", overdue=True)
    result = refused(ep, "update_dispute", "invalid_state", dispute_id=late["id"], evidence="Too late")
    assert "close_dispute" in (result.error_message or "")
    closed = call(ep, "close_dispute", dispute_id=late["id"])
    assert closed["status"] == "lost" and closed["closed_at"] == ep.world.now
    refused(ep, "close_dispute", "invalid_state", dispute_id=late["id"])
    # A lost dispute already returned the money to the customer: no refund on top.
    refused(ep, "refund_charge", "invalid_state", charge_id=late["charge_id"])


def test_list_disputes_orders_by_deadline_and_filters_by_status(ep: Episode) -> None:
    disputes = call(ep, "list_disputes", limit=100)["items"]
    assert [d["evidence_due_by"] for d in disputes] == sorted(d["evidence_due_by"] for d in disputes)
    won = call(ep, "list_disputes", status="won")["items"]
    assert won and all(d["status"] == "won" for d in won)
    refused(ep, "close_dispute", "invalid_state", dispute_id=won[0]["id"])


# -- payment links ---------------------------------------------------------------------------------


def test_payment_link_for_an_invoice_round_trips_and_only_one_is_active(ep: Episode) -> None:
    email = ep.world.customers[2].email
    link = call(ep, "create_payment_link", amount=1872.0, invoice_number="INV-0100", customer_email=email)
    assert link["url"].startswith("https://buy.stripe.com/") and link["active"]
    assert link["description"] == "Payment for invoice INV-0100" and link["amount"] == 1872.0
    assert call(ep, "list_payment_links", invoice_number="INV-0100")["items"] == [link]
    refused(ep, "create_payment_link", "conflict", amount=1872.0, invoice_number="INV-0100")
    off = call(ep, "update_payment_link", payment_link_id=link["id"], active=False)
    assert not off["active"]
    refused(ep, "update_payment_link", "invalid_state", payment_link_id=link["id"], active=False)
    again = call(ep, "create_payment_link", amount=1872.0, invoice_number="INV-0100")
    assert again["id"] != link["id"] and again["url"] != link["url"]
    refused(ep, "update_payment_link", "conflict", payment_link_id=link["id"], active=True)


def test_product_payment_links_use_the_catalogue_price(ep: Episode) -> None:
    product = ep.world.products[3]
    link = call(ep, "create_payment_link", product_sku=product.sku, quantity=2)
    assert (link["description"], link["unit_amount"], link["amount"]) == (
        product.name, product.unit_price, round(product.unit_price * 2, 2)
    )
    refused(ep, "create_payment_link", "not_found", product_sku="SKU-NOPE-1")
    refused(ep, "create_payment_link", "invalid_argument", product_sku=product.sku, amount=10)
    refused(ep, "create_payment_link", "invalid_argument", amount=10)


def test_seeded_links_include_inactive_ones_and_invoice_links(ep: Episode) -> None:
    inactive = call(ep, "list_payment_links", active=False)["items"]
    assert inactive and not any(link["active"] for link in inactive)
    all_links = call(ep, "list_payment_links", limit=100)["items"]
    assert any(link["invoice_number"] and link["customer_email"] for link in all_links)


def test_a_charge_or_link_for_an_invoice_the_books_do_not_hold_is_refused(ep: Episode) -> None:
    email = ep.world.customers[0].email
    result = refused(ep, "create_charge", "not_found", customer_email=email, amount=10, invoice_number="INV-9999")
    message = result.error_message or ""
    assert "INV-9999" in message and "list_invoices" in message and "INV-0001" in message
    refused(ep, "create_charge", "not_found", customer_email=email, amount=10, invoice_number="INV-2024-0042")
    refused(ep, "create_payment_link", "not_found", amount=10, invoice_number="INV-9999")
    paid = call(ep, "create_charge", customer_email=email, amount=10, invoice_number=" inv-0001 ")
    assert paid["invoice_number"] == "INV-0001"
