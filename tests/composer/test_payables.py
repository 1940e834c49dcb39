"""Accounts payable: a supplier's invoice entered as a bill unless it is a copy of one we have, and a chased bill paid,
passed to the finance lead, or shown paid already, as the data says.

Each test reads the task's world as an agent would (the services' own tools on a fresh episode with the task's setup)
and checks that the reference does what the procedure in the data says, that the literal reading fails where the
data says otherwise, and that a faithful reply in other words passes.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from composer.archetypes import payables
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    of,
    passes,
    read,
    with_reply,
)

SERVICES = ("accounting", "mailbox", "files", "chat")
IDS = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == payables.__name__))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=12 * len(IDS), seed=3, services=SERVICES, archetypes=IDS, require_decision=True), catalog)


@pytest.fixture(scope="module")
def tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> list[TaskSpec]:
    return generated[0]


@pytest.fixture(scope="module")
def runner(catalog: Catalog, tasks: list[TaskSpec]) -> Runner:
    return Runner(catalog, tasks[0].world_seed)


def _premise(task: TaskSpec) -> bool | None:
    return next((d.get("default") for d in task.stats["decisions"] if d.get("kind") == "premise"), None)


def _args(task: TaskSpec, tool: str) -> list[dict[str, Any]]:
    return [dict(s.arguments) for s in task.plan if s.tool == tool]


def _reference(task: TaskSpec) -> str:
    found = re.search(r"SI-\d{5}", str([r.row for r in task.setup]))
    assert found, task.id
    return found.group(0)


def test_both_workflows_are_kept_with_a_decision_each(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, report = generated
    assert {t.scenario.archetype for t in tasks if t.scenario} == set(IDS), report.details
    assert all(t.stats["decisions"] for t in tasks)


def test_every_reference_passes_and_every_counterfactual_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, tasks)


def test_leaving_out_any_checked_write_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_every_write_is_needed(catalog, tasks)


def test_a_new_invoice_becomes_a_bill_and_a_resent_copy_is_not_entered_twice(tasks: list[TaskSpec], runner: Runner) -> None:
    seen = Counter()
    for task in of(tasks, "supplier-bill-entry"):
        reference = _reference(task)
        runner.fresh(task.setup)
        bills = read(runner, "accounting", "list_bills", limit=100)["items"]
        created = _args(task, "create_bill")
        if _premise(task) is False:
            seen["copy"] += 1
            # A bill of the same supplier, date and total is there under another reference: nothing is entered.
            assert not created and reference not in {b["supplier_reference"] for b in bills}, task.id
            entered = PlanStep(service="accounting", tool="create_bill", arguments={
                "contact_name": bills[0]["supplier_name"], "supplier_reference": reference,
                "line_items": [{"description": "Goods", "quantity": 1, "unit_price": 10.0}]})
            assert not passes(task, runner, [*task.plan, entered]), task.id  # the literal agent enters it again
            assert not passes(task, runner, with_reply(task, "Thanks, all entered.")), task.id
        else:
            seen["new"] += 1
            assert created and created[0]["supplier_reference"] == reference, task.id
            assert not passes(task, runner, [s for s in task.plan if s.tool != "create_bill"]), task.id
            wrong = [s.model_copy(update={"arguments": {**s.arguments, "due_date": s.arguments["date"]}})
                     if s.tool == "create_bill" else s for s in task.plan]
            assert not passes(task, runner, wrong), task.id  # their due date, not the invoice date
    assert seen["copy"] and seen["new"], seen


def test_a_chased_bill_is_paid_passed_on_or_shown_paid_as_the_rule_and_the_books_say(tasks: list[TaskSpec], runner: Runner) -> None:
    seen = Counter()
    for task in of(tasks, "supplier-payment-chase"):
        runner.fresh(task.setup)
        paid = _args(task, "create_payment")
        if _premise(task) is False:
            seen["paid already"] += 1
            assert not paid and _args(task, "list_payments"), task.id
            payment = read(runner, "accounting", "list_payments", bill_number=_args(task, "list_payments")[0]["bill_number"])["items"][0]
            # The books show it paid: a reply that pays it now, or says so without when, fails.
            assert not passes(task, runner, with_reply(task, f"Sorry! We have paid {payment['amount']:,.2f} today.")), task.id
            day = f"{int(payment['date'][8:10])} " + ["January", "February", "March", "April", "May", "June", "July", "August",
                                                      "September", "October", "November", "December"][int(payment["date"][5:7]) - 1]
            natural = f"We settled that one already: {payment['amount']:,.2f} went out to you by bank transfer on {day}."
            assert passes(task, runner, with_reply(task, natural)), task.id
            continue
        limit = float(re.search(r"is ([\d,.]+) USD or less", str([r.row for r in task.setup]))[1].replace(",", ""))  # type: ignore[index]
        bill = read(runner, "accounting", "list_bills", limit=100)["items"]
        due = next(b for b in bill if b["supplier_reference"] == _reference(task))["amount_due"]
        assert bool(paid) == (due <= limit), (task.id, due, limit)
        seen["paid" if paid else "passed on"] += 1
    assert seen["paid already"] and (seen["paid"] or seen["passed on"]), seen
