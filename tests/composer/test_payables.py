"""Accounts payable: a supplier's invoice entered as a bill unless it is a copy of one we have, and a chased bill paid,
passed to the finance lead, or shown paid already, as the data says.

Each test reads the task's world as an agent would (the services' own tools on a fresh episode with the task's setup)
and checks that the reference does what the procedure in the data says, that the literal reading fails where the
data says otherwise, and that a faithful reply in other words passes.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from composer.archetypes import payables
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    Family,
    args_of,
    assert_family_holds,
    family,
    of,
    passes,
    premise_of,
    read,
    with_reply,
)

SERVICES = ("accounting", "mailbox", "files", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(payables, SERVICES, per=12, seed=3)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def _reference(task: TaskSpec) -> str:
    found = re.search(r"SI-\d{5}", str([r.row for r in task.setup]))
    assert found, task.id
    return found.group(0)


def test_a_new_invoice_becomes_a_bill_and_a_resent_copy_is_not_entered_twice(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "supplier-bill-entry"):
        reference = _reference(task)
        fam.runner.fresh(task.setup)
        bills = read(fam.runner, "accounting", "list_bills", limit=100)["items"]
        created = args_of(task, "create_bill")
        if premise_of(task) is False:
            seen["copy"] += 1
            # A bill of the same supplier, date and total is there under another reference: nothing is entered.
            assert not created and reference not in {b["supplier_reference"] for b in bills}, task.id
            entered = PlanStep(service="accounting", tool="create_bill", arguments={
                "contact_name": bills[0]["supplier_name"], "supplier_reference": reference,
                "line_items": [{"description": "Goods", "quantity": 1, "unit_price": 10.0}]})
            assert not passes(task, fam.runner, [*task.plan, entered]), task.id  # the literal agent enters it again
            assert not passes(task, fam.runner, with_reply(task, "Thanks, all entered.")), task.id
        else:
            seen["new"] += 1
            assert created and created[0]["supplier_reference"] == reference, task.id
            assert not passes(task, fam.runner, [s for s in task.plan if s.tool != "create_bill"]), task.id
            wrong = [s.model_copy(update={"arguments": {**s.arguments, "due_date": s.arguments["date"]}})
                     if s.tool == "create_bill" else s for s in task.plan]
            assert not passes(task, fam.runner, wrong), task.id  # their due date, not the invoice date
    assert seen["copy"] and seen["new"], seen


def test_a_chased_bill_is_paid_passed_on_or_shown_paid_as_the_rule_and_the_books_say(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "supplier-payment-chase"):
        fam.runner.fresh(task.setup)
        paid = args_of(task, "create_payment")
        if premise_of(task) is False:
            seen["paid already"] += 1
            assert not paid and args_of(task, "list_payments"), task.id
            payment = read(fam.runner, "accounting", "list_payments", bill_number=args_of(task, "list_payments")[0]["bill_number"])["items"][0]
            # The books show it paid: a reply that pays it now, or says so without when, fails.
            assert not passes(task, fam.runner, with_reply(task, f"Sorry! We have paid {payment['amount']:,.2f} today.")), task.id
            day = f"{int(payment['date'][8:10])} " + ["January", "February", "March", "April", "May", "June", "July", "August",
                                                      "September", "October", "November", "December"][int(payment["date"][5:7]) - 1]
            natural = f"We settled that one already: {payment['amount']:,.2f} went out to you by bank transfer on {day}."
            assert passes(task, fam.runner, with_reply(task, natural)), task.id
            continue
        limit = float(re.search(r"is ([\d,.]+) USD or less", str([r.row for r in task.setup]))[1].replace(",", ""))  # type: ignore[index]
        bill = read(fam.runner, "accounting", "list_bills", limit=100)["items"]
        due = next(b for b in bill if b["supplier_reference"] == _reference(task))["amount_due"]
        assert bool(paid) == (due <= limit), (task.id, due, limit)
        seen["paid" if paid else "passed on"] += 1
    assert seen["paid already"] and (seen["paid"] or seen["passed on"]), seen


def test_the_suppliers_email_is_filed_under_finance_by_name_or_id_and_skipping_it_fails(fam: Family) -> None:
    for task in of(fam.tasks, "supplier-bill-entry"):
        filed = args_of(task, "modify_message")
        assert filed, task.id
        by_name = [s.model_copy(update={"arguments": {**s.arguments, "add_labels": ["Finance"], "remove_labels": ["UNREAD"]}})
                   if s.tool == "modify_message" else s for s in task.plan]
        assert passes(task, fam.runner, by_name), task.id  # the label's name does, and marking it read is no harm
        assert not passes(task, fam.runner, [s for s in task.plan if s.tool != "modify_message"]), task.id
