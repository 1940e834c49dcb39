"""The World's business plan: one set of invoices, charges and documents that every service agrees on."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from mcp_services.kernel import Episode, World
from mcp_services.kernel.world import BusinessPlan, business_plan

REPO = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 7, 2026)


def canonical(plan: BusinessPlan) -> str:
    return json.dumps(asdict(plan), sort_keys=True, default=sorted)


@pytest.fixture(scope="module")
def books() -> Iterator[Episode]:
    """The three services that hold the plan's records, on the world of seed 0."""
    with Episode.create(["accounting", "payments", "files"], world_seed=0) as episode:
        yield episode


def every(ep: Episode, service: str, tool: str, **args: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        result = ep.call(service, tool, {**args, "limit": 100, "cursor": cursor})
        assert result.success, result.envelope()
        items += result.data["items"]
        cursor = result.data["next_cursor"]
        if cursor is None:
            return items


def invoice(ep: Episode, number: str) -> dict[str, Any]:
    result = ep.call("accounting", "get_invoice", {"invoice_number": number})
    assert result.success, f"{number} is not an accounting invoice: {result.envelope()}"
    return dict(result.data)


# -- the plan itself ---------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_plan_in_this_process_and_in_a_fresh_one() -> None:
    plan = World.from_seed(5).plan
    assert plan is World.from_seed(5).plan  # built once per seed
    assert canonical(plan) == canonical(business_plan(World.from_seed(5)))
    assert canonical(plan) != canonical(business_plan(World.from_seed(6)))
    code = (
        "import json; from dataclasses import asdict; from mcp_services.kernel import World; "
        "print(json.dumps(asdict(World.from_seed(5).plan), sort_keys=True, default=sorted))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "4321"}
    fresh = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert fresh.stdout.strip() == canonical(plan)


def test_the_plan_leaves_the_world_as_it_was() -> None:
    before = World.from_seed(3).to_json()
    assert World.from_seed(3).plan.invoices
    assert World.from_seed(3).to_json() == before


@pytest.mark.parametrize("seed", SEEDS)
def test_invoices_are_numbered_by_date_and_add_up(seed: int) -> None:
    world = World.from_seed(seed)
    plan, today = world.plan, world.now[:10]
    prices = {p.sku: p.unit_price for p in world.products}
    assert [i.number for i in plan.invoices] == [f"INV-{n:04d}" for n in range(1, len(plan.invoices) + 1)]
    assert [i.date for i in plan.invoices] == sorted(i.date for i in plan.invoices)
    assert {i.status for i in plan.invoices} >= {"AUTHORISED", "PAID"}
    for inv in plan.invoices:
        assert inv.date < inv.due_date and inv.date <= today, inv.number
        assert inv.lines and all(line.unit_price == prices[line.sku] for line in inv.lines)
        assert inv.total == round(sum(line.amount for line in inv.lines), 2) > 0
        assert all(inv.date <= p.date <= today for p in inv.payments), inv.number
        assert 0 <= inv.amount_due <= inv.total and inv.amount_paid <= inv.total
        if inv.status == "PAID":
            assert round(inv.amount_paid + inv.amount_credited, 2) == inv.total and inv.fully_paid_on
        if inv.status in ("DRAFT", "VOIDED"):
            assert not inv.payments and inv.credit is None
        person = plan.billing_contacts[inv.organisation_id]
        assert (inv.billing_email, inv.billing_name) == (person.email, person.name)
        assert person.organisation_id == inv.organisation_id


@pytest.mark.parametrize("seed", SEEDS)
def test_charges_pay_real_invoices_and_never_more_than_they_owe(seed: int) -> None:
    world = World.from_seed(seed)
    plan, today = world.plan, world.now[:10]
    assert plan.charges
    for charge in plan.charges:
        inv = plan.invoice(charge.invoice_number)
        assert inv is not None, charge
        assert charge.email == inv.billing_email and inv.date <= charge.date <= today
        assert 0 < charge.amount <= inv.total
        if charge.duplicate:  # the same card payment again: the customer paid twice
            first = [c for c in plan.charges_for(inv.number) if not c.duplicate]
            assert len(first) == 1 and (first[0].amount, first[0].date, first[0].recorded) == (charge.amount, charge.date, True)
            assert charge.succeeded and not charge.recorded
        elif charge.recorded:  # a card payment of the books
            assert inv.card == "paid" and charge.succeeded
        elif charge.succeeded:  # paid by card, missing from the books: exactly what is still due
            assert inv.card == "unrecorded" and not inv.payments and charge.amount == inv.amount_due
        else:  # declined: the invoice is still open and overdue
            assert inv.card == "failed" and inv.is_overdue(today) and charge.amount == inv.amount_due
    for inv in plan.invoices:
        card = [c for c in plan.charges_for(inv.number) if c.recorded]
        assert len([c for c in plan.charges_for(inv.number) if c.duplicate]) <= 1
        by_card = [p.amount for p in inv.payments if p.method == "card"]
        assert round(sum(c.amount for c in card), 2) == round(sum(by_card), 2)
        assert inv.credit is None or inv.card == "none"  # credits never change what a charge was for


@pytest.mark.parametrize("seed", SEEDS)
def test_documents_describe_records_of_the_plan(seed: int) -> None:
    world = World.from_seed(seed)
    plan = world.plan
    names = {o.id: o.name for o in world.organisations}
    emails = {p.email for p in world.people}
    kinds = {d.kind for d in plan.documents}
    assert kinds == {"invoice", "contract", "proposal", "revenue_report"}
    for doc in plan.documents:
        if doc.kind == "invoice":
            inv = plan.invoice(doc.describes)
            assert inv is doc.record and inv.status in ("AUTHORISED", "PAID")
            assert doc.amount == inv.total and doc.name == f"Invoice {inv.number} - {names[inv.organisation_id]}.pdf"
        if doc.organisation_id is not None:
            assert names[doc.organisation_id] in doc.name
        assert doc.owner_email in {p.email for p in world.team}
    for contract in plan.contracts:
        assert {contract.owner_email, contract.signatory_email} <= emails
        assert contract.effective < contract.ends and contract.annual_fee > 0
        assert contract.signed_on is None or contract.signed_on <= contract.effective
        assert contract.payment_days == plan.payment_terms[contract.organisation_id]
    for report in plan.reports:
        issued = [i for i in plan.invoices if i.date.startswith(report.month) and i.status in ("AUTHORISED", "PAID")]
        assert report.total == round(sum(i.total for i in issued), 2) > 0
    assert len(plan.suppliers) == 5 and plan.suppliers <= set(names) - {world.home_organisation_id}


# -- the services agree with it ----------------------------------------------------------------------


def test_every_invoice_pdf_in_files_is_an_accounting_invoice_with_the_same_number_and_amount(books: Episode) -> None:
    pdfs = every(books, "files", "search_files", name="Invoice INV-", order_by="name")
    assert len(pdfs) == sum(1 for d in books.world.plan.documents if d.kind == "invoice")
    for pdf in pdfs:
        text = books.call("files", "download_file", {"file_id": pdf["id"]}).data["content"]
        number = re.search(r"^INVOICE (INV-\d{4})$", text, re.MULTILINE)
        total = re.search(r"^Total due: USD ([\d,]+\.\d\d)$", text, re.MULTILINE)
        assert number and total, text
        inv = invoice(books, number.group(1))
        assert inv["total"] == float(total.group(1).replace(",", ""))
        assert inv["contact_email"] in text and inv["contact_name"] in pdf["name"]
        assert f"Issued: {inv['date']}    Due: {inv['due_date']}" in text


def test_every_invoice_a_charge_or_payment_link_names_is_an_accounting_invoice_of_that_customer(books: Episode) -> None:
    charges = [c for c in every(books, "payments", "list_charges") if c["invoice_number"]]
    links = [link for link in every(books, "payments", "list_payment_links") if link["invoice_number"]]
    assert len(charges) >= 20 and links
    for charge in charges:
        inv = invoice(books, charge["invoice_number"])
        assert charge["customer_email"] == inv["contact_email"] and charge["company_name"] == inv["contact_name"]
        assert charge["amount_captured"] <= charge["amount"] <= inv["total"]
    for link in links:
        inv = invoice(books, link["invoice_number"])
        assert link["amount"] == inv["amount_due"] > 0 and link["customer_email"] == inv["contact_email"]


def test_a_declined_invoice_charge_left_its_invoice_open_and_overdue(books: Episode) -> None:
    declined = [c for c in every(books, "payments", "list_charges", status="failed") if c["invoice_number"]]
    assert declined
    for charge in declined:
        inv = invoice(books, charge["invoice_number"])
        assert inv["status"] == "AUTHORISED" and inv["overdue"] and inv["amount_due"] == charge["amount"]


def test_revenue_reports_and_the_vendor_list_read_like_the_books(books: Episode) -> None:
    plan = books.world.plan
    report = plan.reports[0]
    doc = every(books, "files", "search_files", name=f"Revenue report {report.month}")[0]
    text = books.call("files", "download_file", {"file_id": doc["id"]}).data["content"]
    month = [i for i in every(books, "accounting", "list_invoices", date_from=f"{report.month}-01")
             if i["date"].startswith(report.month) and i["status"] in ("AUTHORISED", "PAID")]
    assert f"Total,{round(sum(i['total'] for i in month), 2):.2f}" in text
    vendors = every(books, "files", "search_files", name="Vendor list.csv")[0]
    listed = books.call("files", "download_file", {"file_id": vendors["id"]}).data["content"]
    suppliers = every(books, "accounting", "list_contacts", is_supplier=True)
    assert suppliers and all(f"{s['name']},{s['contact_person']},{s['email']}" in listed for s in suppliers)


def test_contracts_name_the_account_owner_and_the_payment_terms_of_the_books(books: Episode) -> None:
    plan = books.world.plan
    contacts = {c["name"]: c for c in every(books, "accounting", "list_contacts")}
    for contract in plan.contracts[:5]:
        org = books.world.organisation(contract.organisation_id)
        doc = every(books, "files", "search_files", name=f"{org.name} - Master Services Agreement")[0]
        text = books.call("files", "download_file", {"file_id": doc["id"]}).data["content"]
        assert f"Agreement number: {contract.number}" in text and contract.owner_email in text
        assert f"due within {contacts[org.name]['payment_terms_days']} days" in text
        assert doc["owner_email"] == plan.account_owners[org.id].email


def test_the_books_list_as_overdue_exactly_what_the_plan_says_is_overdue(books: Episode) -> None:
    listed = {i["invoice_number"] for i in every(books, "accounting", "list_invoices", overdue=True)}
    assert listed == {i.number for i in books.world.plan.overdue(books.world.now[:10])} != set()


@pytest.mark.parametrize("seed", SEEDS)
def test_a_few_invoices_were_paid_twice_by_card_and_payments_holds_both_charges(seed: int) -> None:
    plan = World.from_seed(seed).plan
    twins = plan.duplicates
    assert 3 <= len(twins) <= 4 and len({t.invoice_number for t in twins}) == len(twins)
    for twin in twins:
        inv = plan.invoice(twin.invoice_number)
        assert inv is not None and twin.amount == inv.total  # paid in full, then again
    with Episode.create(["payments"], world_seed=seed) as ep:
        charges = ep.dump()["payments"]["charges"].values()
        for twin in twins:
            pair = [c for c in charges if c["invoice_number"] == twin.invoice_number and c["status"] == "succeeded"]
            assert len(pair) == 2 and pair[0]["amount"] == pair[1]["amount"] == twin.amount
