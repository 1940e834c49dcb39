"""Behaviour of accounting a user would notice: seeded books, the invoice lifecycle, payments, credits, bills."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, StateDump, Store, ToolContext, ToolResult, World
from mcp_services.library import accounting


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["accounting"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("accounting", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.dump()
    result = ep.call("accounting", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    assert ep.dump() == before
    return result


def all_invoices(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "list_invoices", limit=100, cursor=cursor, **filters)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def an_invoice(ep: Episode, status: str, *, untouched: bool = True) -> dict[str, Any]:
    """A seeded invoice in ``status``; ``untouched``: with nothing paid or credited yet."""
    for row in ep.dump()["accounting"]["invoices"].values():
        if row["status"] == status and (not untouched or (row["amount_paid"] == 0 and row["amount_credited"] == 0)):
            return call(ep, "get_invoice", invoice_number=row["id"])
    raise AssertionError(f"no seeded {status} invoice")


def a_contact(ep: Episode, *, supplier: bool = False) -> dict[str, Any]:
    return call(ep, "list_contacts", is_supplier=supplier, limit=1)["items"][0]


def sku_line(ep: Episode, index: int, quantity: int) -> dict[str, Any]:
    return {"sku": ep.world.products[index].sku, "quantity": quantity}


# -- seeded data ---------------------------------------------------------------------------------


def test_contacts_are_the_world_organisations_billed_to_a_crm_contact() -> None:
    with Episode.create(["crm", "accounting"], world_seed=0) as ep:
        contacts = ep.call("accounting", "list_contacts", {"limit": 100}).data["items"]
        assert {c["name"] for c in contacts} == {o.name for o in ep.world.organisations[1:]}
        for contact in contacts:
            person = ep.call("crm", "find_contact_by_email", {"email": contact["email"]}).data
            assert person["company_name"] == contact["name"] and person["name"] == contact["contact_person"]
        assert sum(c["is_supplier"] for c in contacts) == accounting.N_SUPPLIERS


def test_seeded_invoices_are_priced_from_the_product_catalogue_and_add_up(ep: Episode) -> None:
    prices = {p.sku: p.unit_price for p in ep.world.products}
    tables = ep.dump()["accounting"]
    invoices = list(tables["invoices"].values())
    assert len(invoices) == accounting.N_SALES_INVOICES and len(tables["bills"]) == accounting.N_BILLS
    assert {i["status"] for i in invoices} == {"DRAFT", "AUTHORISED", "PAID", "VOIDED"}
    paid_by = {}
    for payment in tables["payments"].values():
        if payment["invoice_number"]:
            paid_by[payment["invoice_number"]] = paid_by.get(payment["invoice_number"], 0) + payment["amount"]
    for inv in invoices:
        for line in inv["line_items"]:
            assert line["unit_price"] == prices[line["sku"]]
            assert line["line_amount"] == round(line["quantity"] * line["unit_price"], 2)
        assert inv["total"] == round(sum(line["line_amount"] for line in inv["line_items"]), 2)
        assert round(paid_by.get(inv["id"], 0), 2) == inv["amount_paid"]
        if inv["status"] == "AUTHORISED":
            assert inv["amount_due"] == round(inv["total"] - inv["amount_paid"] - inv["amount_credited"], 2)
        else:
            assert inv["status"] != "PAID" or (inv["amount_due"] == 0 and inv["fully_paid_on"])
        assert inv["date"] <= inv["due_date"] and inv["date"] <= ep.world.now[:10]
    numbers = sorted(tables["invoices"])
    assert numbers[0] == "INV-0001" and [tables["invoices"][n]["date"] for n in numbers] == sorted(
        i["date"] for i in invoices
    )


def test_approved_invoices_were_emailed_to_the_billing_contact_and_drafts_never(ep: Episode) -> None:
    tables = ep.dump()["accounting"]
    contacts = tables["contacts"]
    sent = {e["invoice_number"]: e for e in tables["invoice_emails"].values()}
    for inv in tables["invoices"].values():
        assert inv["sent_to_contact"] == (inv["id"] in sent)
        if inv["status"] == "DRAFT":
            assert not inv["sent_to_contact"]
        elif inv["id"] in sent:
            assert sent[inv["id"]]["to"] == [contacts[inv["contact_id"]]["email"]]
    assert len(sent) >= 60


def test_the_same_seed_gives_the_same_books_and_another_seed_another(ep: Episode) -> None:
    def fresh_seed(world_seed: int) -> StateDump:
        store = Store.in_memory(accounting.service.metadata)
        try:
            with store.transaction() as session:
                accounting.seed(ToolContext(session, World.from_seed(world_seed), "accounting"))
            return store.dump()
        finally:
            store.close()

    assert fresh_seed(0) == ep.dump()["accounting"]
    assert fresh_seed(1) != ep.dump()["accounting"]


def test_tools_carry_the_semantic_types_that_link_services() -> None:
    tools = accounting.service.tools
    assert len(tools) >= 13
    props = tools["list_invoices"].input_schema["properties"]
    assert props["email"]["anyOf"][0]["x-semantic-type"] == "email_address"
    assert props["contact_name"]["anyOf"][0]["x-semantic-type"] == "company_name"
    invoice = tools["get_invoice"].data_schema["properties"]
    assert invoice["invoice_number"]["x-semantic-type"] == "id:accounting.invoice"
    assert invoice["amount_due"]["x-semantic-type"] == "money"
    assert invoice["contact_email"]["x-semantic-type"] == "email_address"
    assert tools["create_payment"].input_schema["properties"]["amount"]["x-semantic-type"] == "money"
    for tool in tools.values():
        assert tool.description and all(p.get("description") for p in tool.input_schema["properties"].values())


# -- contacts ------------------------------------------------------------------------------------


def test_any_employees_email_finds_their_company(ep: Episode) -> None:
    person = ep.world.customers[7]
    found = call(ep, "list_contacts", email=person.email)["items"]
    assert [c["name"] for c in found] == [ep.world.organisation(person.organisation_id).name]


def test_a_contacts_balance_is_what_its_open_invoices_still_owe(ep: Episode) -> None:
    contact = max(call(ep, "list_contacts", limit=100)["items"], key=lambda c: c["outstanding"])
    open_invoices = all_invoices(ep, contact_id=contact["id"], status="AUTHORISED")
    assert contact["outstanding"] == round(sum(i["amount_due"] for i in open_invoices), 2) > 0
    assert contact["overdue"] == round(sum(i["amount_due"] for i in open_invoices if i["overdue"]), 2)


def test_created_contact_round_trips_and_names_stay_unique(ep: Episode) -> None:
    created = call(ep, "create_contact", name="Brightline Foods", email="AP@Brightline.example",
                   contact_person="Ana Ruiz", payment_terms_days=14)
    assert created["id"] == "con_0016" and created["email"] == "ap@brightline.example"
    assert created["outstanding"] == 0 and not created["is_supplier"]
    assert call(ep, "get_contact", contact_id=created["id"]) == created
    refused(ep, "create_contact", "conflict", name="brightline foods", email="x@brightline.example")
    refused(ep, "create_contact", "invalid_argument", name="Other Co", email="x@other.example", payment_terms_days=400)


def test_update_contact_changes_only_the_given_fields(ep: Episode) -> None:
    before = a_contact(ep)
    after = call(ep, "update_contact", contact_id=before["id"], email="billing@new.example", payment_terms_days=45)
    assert after == {**before, "email": "billing@new.example", "payment_terms_days": 45}
    refused(ep, "update_contact", "invalid_argument", contact_id=before["id"])
    refused(ep, "update_contact", "not_found", contact_id="con_0999", phone="+14155550123")


# -- invoices: search and pagination ---------------------------------------------------------------


def test_pagination_walks_every_invoice_exactly_once(ep: Episode) -> None:
    first = call(ep, "list_invoices", limit=25)
    assert first["total"] == accounting.N_SALES_INVOICES and first["next_cursor"] == "25"
    numbers = [i["invoice_number"] for i in all_invoices(ep)]
    assert len(numbers) == len(set(numbers)) == accounting.N_SALES_INVOICES


def test_overdue_lists_only_approved_invoices_past_due_with_money_owed(ep: Episode) -> None:
    today = ep.world.now[:10]
    overdue = all_invoices(ep, overdue=True)
    assert overdue
    for inv in overdue:
        assert inv["status"] == "AUTHORISED" and inv["due_date"] < today and inv["amount_due"] > 0
        assert inv["overdue"] and inv["days_overdue"] > 0
    others = [i for i in all_invoices(ep) if i["invoice_number"] not in {o["invoice_number"] for o in overdue}]
    assert not any(i["overdue"] for i in others)


def test_list_invoices_filters_by_company_email_status_dates_and_text(ep: Episode) -> None:
    sample = an_invoice(ep, "PAID", untouched=False)
    by_name = all_invoices(ep, contact_name=sample["contact_name"][:6])
    assert sample["invoice_number"] in {i["invoice_number"] for i in by_name}
    by_email = all_invoices(ep, email=sample["contact_email"])
    assert by_email and {i["contact_id"] for i in by_email} == {sample["contact_id"]}
    assert {i["status"] for i in all_invoices(ep, status="DRAFT")} == {"DRAFT"}
    month = all_invoices(ep, date_from=sample["date"][:8] + "01", date_to=sample["date"])
    assert sample["invoice_number"] in {i["invoice_number"] for i in month}
    assert all(sample["date"][:8] + "01" <= i["date"] <= sample["date"] for i in month)
    product = sample["line_items"][0]["description"]
    assert sample["invoice_number"] in {i["invoice_number"] for i in all_invoices(ep, query=product)}
    refused(ep, "list_invoices", "invalid_argument", date_from="2025-13-01")


# -- the invoice lifecycle -------------------------------------------------------------------------


def test_created_invoice_is_a_draft_priced_from_the_catalogue_and_round_trips(ep: Episode) -> None:
    contact = a_contact(ep)
    product = ep.world.products[1]
    created = call(ep, "create_invoice", contact_id=contact["id"], reference="PO-1234",
                   line_items=[{"sku": product.sku, "quantity": 3},
                               {"description": "Setup fee", "quantity": 1, "unit_price": 250.0}])
    assert created["invoice_number"] == "INV-0121" and created["status"] == "DRAFT"
    assert created["line_items"][0] == {"sku": product.sku, "description": product.name, "quantity": 3,
                                        "unit_price": product.unit_price, "line_amount": product.unit_price * 3}
    assert created["total"] == created["amount_due"] == product.unit_price * 3 + 250.0
    assert created["date"] == ep.world.now[:10] and not created["sent_to_contact"]
    days = contact["payment_terms_days"]
    assert created["due_date"] > created["date"] and days in (14, 30, 45)
    assert call(ep, "get_invoice", invoice_number="inv-0121") == created


def test_an_invoice_can_name_its_customer_instead_of_an_id(ep: Episode) -> None:
    contact = a_contact(ep)
    created = call(ep, "create_invoice", contact_name=contact["name"].upper(), line_items=[sku_line(ep, 0, 2)])
    assert created["contact_id"] == contact["id"] and created["contact_email"] == contact["email"]
    refused(ep, "create_invoice", "not_found", contact_name="No Such Company", line_items=[sku_line(ep, 0, 1)])
    refused(ep, "create_invoice", "invalid_argument", contact_id=contact["id"], contact_name=contact["name"],
            line_items=[sku_line(ep, 0, 1)])


def test_bad_invoice_lines_and_dates_are_refused(ep: Episode) -> None:
    contact = a_contact(ep)["id"]
    refused(ep, "create_invoice", "not_found", contact_id=contact, line_items=[{"sku": "SKU-NOPE-999"}])
    refused(ep, "create_invoice", "invalid_argument", contact_id=contact, line_items=[])
    refused(ep, "create_invoice", "invalid_argument", contact_id=contact, line_items=[{"description": "Consulting"}])
    refused(ep, "create_invoice", "invalid_argument", contact_id=contact, line_items=[sku_line(ep, 0, 0)])
    refused(ep, "create_invoice", "invalid_argument", contact_id=contact, line_items=[sku_line(ep, 0, 1)],
            date="2025-03-10", due_date="2025-03-01")


def test_only_a_draft_can_be_approved(ep: Episode) -> None:
    draft = an_invoice(ep, "DRAFT")
    approved = call(ep, "approve_invoice", invoice_number=draft["invoice_number"])
    assert approved["status"] == "AUTHORISED" and approved["amount_due"] == draft["total"]
    result = refused(ep, "approve_invoice", "invalid_state", invoice_number=draft["invoice_number"])
    assert "only DRAFT" in (result.error_message or "")


def test_a_draft_cannot_be_emailed_or_paid_until_approved(ep: Episode) -> None:
    draft = an_invoice(ep, "DRAFT")
    number = draft["invoice_number"]
    result = refused(ep, "email_invoice", "invalid_state", invoice_number=number)
    assert "approve_invoice" in (result.error_message or "")
    refused(ep, "create_payment", "invalid_state", invoice_number=number, amount=1)
    call(ep, "approve_invoice", invoice_number=number)
    assert call(ep, "email_invoice", invoice_number=number)["to"] == [draft["contact_email"]]


def test_emailing_an_invoice_records_when_and_to_whom(ep: Episode) -> None:
    inv = an_invoice(ep, "AUTHORISED")
    sent = call(ep, "email_invoice", invoice_number=inv["invoice_number"], to=["Ap@Example.com"],
                cc=["finance@example.com"], message="Friendly reminder")
    assert sent["to"] == ["ap@example.com"] and sent["cc"] == ["finance@example.com"]
    assert sent["sent_at"] == ep.world.now and inv["invoice_number"] in sent["subject"]
    assert sent["amount_due"] == inv["amount_due"] and sent["id"].startswith("ie_")
    after = call(ep, "get_invoice", invoice_number=inv["invoice_number"])
    assert after["sent_to_contact"] and after["last_sent_at"] == ep.world.now
    diff = ep.diff()["accounting"].to_dict()
    assert list(diff["invoice_emails"]["added"]) == [sent["id"]]


def test_payments_cannot_exceed_what_is_due_and_the_last_one_marks_it_paid(ep: Episode) -> None:
    inv = an_invoice(ep, "AUTHORISED")
    number, total = inv["invoice_number"], inv["total"]
    refused(ep, "create_payment", "invalid_argument", invoice_number=number, amount=total + 0.01)
    refused(ep, "create_payment", "invalid_argument", invoice_number=number, amount=0)
    refused(ep, "create_payment", "invalid_argument", invoice_number=number, amount=1, date="2000-01-01")
    half = round(total / 2, 2)
    first = call(ep, "create_payment", invoice_number=number, amount=half, reference="Bank ref 881")
    assert (first["amount"], first["date"], first["method"]) == (half, ep.world.now[:10], "bank_transfer")
    partly = call(ep, "get_invoice", invoice_number=number)
    assert partly["status"] == "AUTHORISED" and partly["amount_due"] == round(total - half, 2)
    call(ep, "create_payment", invoice_number=number, amount=round(total - half, 2), method="card")
    paid = call(ep, "get_invoice", invoice_number=number)
    assert paid["status"] == "PAID" and paid["amount_due"] == 0 and paid["fully_paid_on"] == ep.world.now[:10]
    refused(ep, "create_payment", "invalid_state", invoice_number=number, amount=1)
    listed = call(ep, "list_payments", invoice_number=number)["items"]
    assert round(sum(p["amount"] for p in listed), 2) == total


def test_an_invoice_with_payments_cannot_be_voided_but_an_untouched_one_can(ep: Episode) -> None:
    paid = an_invoice(ep, "PAID", untouched=False)
    refused(ep, "void_invoice", "invalid_state", invoice_number=paid["invoice_number"])
    inv = an_invoice(ep, "AUTHORISED")
    call(ep, "create_payment", invoice_number=inv["invoice_number"], amount=10)
    result = refused(ep, "void_invoice", "invalid_state", invoice_number=inv["invoice_number"])
    assert "credit note" in (result.error_message or "")
    untouched = next(
        i for i in all_invoices(ep, status="AUTHORISED") if i["amount_paid"] == 0 and i["amount_credited"] == 0
    )
    voided = call(ep, "void_invoice", invoice_number=untouched["invoice_number"])
    assert voided["status"] == "VOIDED" and voided["amount_due"] == 0 and not voided["overdue"]


def test_a_voided_invoice_cannot_be_sent_paid_edited_or_voided_again(ep: Episode) -> None:
    number = an_invoice(ep, "VOIDED")["invoice_number"]
    refused(ep, "email_invoice", "invalid_state", invoice_number=number)
    refused(ep, "create_payment", "invalid_state", invoice_number=number, amount=1)
    refused(ep, "update_invoice", "invalid_state", invoice_number=number, reference="X")
    refused(ep, "void_invoice", "invalid_state", invoice_number=number)


def test_lines_are_locked_once_approved_but_the_due_date_can_move(ep: Episode) -> None:
    inv = an_invoice(ep, "AUTHORISED")
    number = inv["invoice_number"]
    refused(ep, "update_invoice", "invalid_state", invoice_number=number, line_items=[sku_line(ep, 0, 1)])
    refused(ep, "update_invoice", "invalid_argument", invoice_number=number, due_date="2000-01-01")
    moved = call(ep, "update_invoice", invoice_number=number, due_date="2099-01-31")
    assert moved["due_date"] == "2099-01-31" and not moved["overdue"]
    draft = an_invoice(ep, "DRAFT")
    edited = call(ep, "update_invoice", invoice_number=draft["invoice_number"], line_items=[sku_line(ep, 2, 4)])
    assert edited["total"] == edited["amount_due"] == ep.world.products[2].unit_price * 4


# -- credit notes ----------------------------------------------------------------------------------


def test_a_credit_note_applied_to_an_invoice_reduces_what_is_due_until_paid(ep: Episode) -> None:
    inv = an_invoice(ep, "AUTHORISED")
    credit = call(ep, "create_credit_note", contact_id=inv["contact_id"], reason="Goodwill",
                  line_items=[{"description": "Goodwill credit", "unit_price": inv["amount_due"] + 50}])
    assert credit["status"] == "AUTHORISED" and credit["remaining_credit"] == credit["total"]
    applied = call(ep, "allocate_credit_note", credit_note_number=credit["credit_note_number"],
                   invoice_number=inv["invoice_number"])
    assert applied["remaining_credit"] == 50 and applied["allocations"][0]["amount"] == inv["amount_due"]
    paid = call(ep, "get_invoice", invoice_number=inv["invoice_number"])
    assert paid["status"] == "PAID" and paid["amount_credited"] == inv["amount_due"] and paid["amount_due"] == 0
    listed = call(ep, "list_credit_notes", contact_id=inv["contact_id"], with_remaining_credit=True)["items"]
    assert credit["credit_note_number"] in {c["credit_note_number"] for c in listed}


def test_credit_only_goes_to_the_same_customers_open_invoices_and_never_beyond_what_is_left(ep: Episode) -> None:
    inv = an_invoice(ep, "AUTHORISED")
    credit = call(ep, "create_credit_note", contact_id=inv["contact_id"],
                  line_items=[{"description": "Credit", "unit_price": 5.0}])
    number = credit["credit_note_number"]
    refused(ep, "allocate_credit_note", "invalid_argument", credit_note_number=number,
            invoice_number=inv["invoice_number"], amount=6)
    other = next(i for i in all_invoices(ep, status="AUTHORISED") if i["contact_id"] != inv["contact_id"])
    refused(ep, "allocate_credit_note", "invalid_argument", credit_note_number=number,
            invoice_number=other["invoice_number"])
    paid = next(i for i in all_invoices(ep, contact_id=inv["contact_id"], status="PAID"))
    refused(ep, "allocate_credit_note", "invalid_state", credit_note_number=number,
            invoice_number=paid["invoice_number"])
    call(ep, "allocate_credit_note", credit_note_number=number, invoice_number=inv["invoice_number"])
    refused(ep, "allocate_credit_note", "invalid_state", credit_note_number=number,
            invoice_number=inv["invoice_number"])


def test_seeded_credit_notes_are_partly_applied(ep: Episode) -> None:
    notes = call(ep, "list_credit_notes", limit=100)["items"]
    assert len(notes) == 10
    assert any(n["status"] == "PAID" and n["allocations"] for n in notes)
    assert any(n["status"] == "AUTHORISED" and n["remaining_credit"] > 0 for n in notes)


# -- bills -----------------------------------------------------------------------------------------


def test_a_bill_from_a_supplier_is_awaiting_payment_and_paid_in_full_becomes_paid(ep: Episode) -> None:
    supplier = a_contact(ep, supplier=True)
    bill = call(ep, "create_bill", contact_id=supplier["id"], supplier_reference="SI-777",
                line_items=[sku_line(ep, 12, 10)])
    assert bill["bill_number"] == f"BILL-{accounting.N_BILLS + 1:04d}" and bill["status"] == "AUTHORISED"
    assert bill["supplier_name"] == supplier["name"] and bill["total"] == ep.world.products[12].unit_price * 10
    refused(ep, "create_bill", "conflict", contact_id=supplier["id"], supplier_reference="si-777",
            line_items=[sku_line(ep, 12, 1)])
    refused(ep, "create_payment", "invalid_argument", bill_number=bill["bill_number"], amount=bill["total"] + 1)
    call(ep, "create_payment", bill_number=bill["bill_number"], amount=bill["total"])
    paid = call(ep, "list_bills", contact_id=supplier["id"], status="PAID", limit=100)["items"]
    assert bill["bill_number"] in {b["bill_number"] for b in paid}


def test_only_suppliers_can_send_bills(ep: Episode) -> None:
    customer = a_contact(ep)
    result = refused(ep, "create_bill", "invalid_state", contact_id=customer["id"], line_items=[sku_line(ep, 12, 1)])
    assert "update_contact" in (result.error_message or "")
    refused(ep, "create_payment", "invalid_argument", amount=5)


def test_overdue_bills_are_unpaid_past_their_due_date(ep: Episode) -> None:
    overdue = call(ep, "list_bills", overdue=True, limit=100)["items"]
    assert overdue and all(b["status"] == "AUTHORISED" and b["due_date"] < ep.world.now[:10] for b in overdue)
    suppliers = {c["name"] for c in call(ep, "list_contacts", is_supplier=True)["items"]}
    assert {b["supplier_name"] for b in call(ep, "list_bills", limit=100)["items"]} <= suppliers


def test_list_items_is_the_world_product_catalogue(ep: Episode) -> None:
    items = call(ep, "list_items", limit=100)["items"]
    assert {(i["code"], i["unit_price"]) for i in items} == {(p.sku, p.unit_price) for p in ep.world.products}
    hardware = call(ep, "list_items", category="hardware")["items"]
    assert hardware and {i["category"] for i in hardware} == {"hardware"}


# -- across services -------------------------------------------------------------------------------


def test_a_card_payment_missing_from_the_books_can_be_reconciled_from_the_charge() -> None:
    with Episode.create(["payments", "accounting"], world_seed=0) as ep:
        charges = ep.call("payments", "list_charges", {"status": "succeeded", "limit": 100}).data["items"]
        charges += ep.call("payments", "list_charges", {"status": "succeeded", "limit": 100, "cursor": "100"}).data[
            "items"
        ]
        unrecorded = []
        for charge in charges:
            if charge["invoice_number"]:
                inv = ep.call("accounting", "get_invoice", {"invoice_number": charge["invoice_number"]}).data
                # Nothing recorded at all, though the card was charged (partial card payments are recorded).
                if inv["status"] == "AUTHORISED" and inv["amount_paid"] == 0:
                    unrecorded.append((charge, inv))
        assert unrecorded
        charge, inv = unrecorded[0]
        assert charge["amount"] == inv["amount_due"] and charge["customer_email"] == inv["contact_email"]
        result = ep.call("accounting", "create_payment", {"invoice_number": inv["invoice_number"],
                                                          "amount": charge["amount"], "method": "card",
                                                          "reference": charge["id"], "date": charge["created"][:10]})
        assert result.success, result.envelope()
        assert ep.call("accounting", "get_invoice", {"invoice_number": inv["invoice_number"]}).data["status"] == "PAID"


def test_a_contacts_balance_counts_every_open_invoice_even_one_added_by_a_task_setup(ep: Episode) -> None:
    contact = a_contact(ep)
    row = dict(ep.dump()["accounting"]["invoices"][an_invoice(ep, "AUTHORISED")["invoice_number"]])
    row.update(id="INV-0900", contact_id=contact["id"], due_date="2000-02-01", date="2000-01-01", amount_due=123.45,
               amount_paid=0.0, amount_credited=0.0)
    ep.apply_setup([{"service": "accounting", "table": "invoices", "row": row}])
    after = call(ep, "get_contact", contact_id=contact["id"])
    assert after["outstanding"] == round(contact["outstanding"] + 123.45, 2)
    assert after["overdue"] == round(contact["overdue"] + 123.45, 2)
    planted = call(ep, "get_invoice", invoice_number="INV-0900")
    assert planted["overdue"] and planted["days_overdue"] > 9000 and planted["contact_name"] == contact["name"]
