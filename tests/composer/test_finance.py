"""Finance archetypes on the stages: customers ask on any channel, every answer states what it reports, and the
rules (refund approval, copying the finance lead on late reminders) decide near their thresholds, where the tool
would do either.

Each test reads the task's world as an agent would (the services' own tools on a fresh episode with the task's
setup) and checks that the reference plan does what the request and the rule in the data say, that a careless
or lazy variant fails, and that a faithful variant in other words passes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from composer.archetypes import finance
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import run_plan
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    of,
    passes,
    read,
    with_reply,
)

#: The customer channels (mailbox, sms, voice, helpdesk, forms, chat) and where rules live (files, mailbox).
SERVICES = ("accounting", "payments", "mailbox", "chat", "sms", "voice", "helpdesk", "forms", "files")
IDS = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == finance.__name__))
PER_ARCHETYPE = 4


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=PER_ARCHETYPE * len(IDS), seed=2, services=SERVICES, archetypes=IDS), catalog)


@pytest.fixture(scope="module")
def tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> list[TaskSpec]:
    return generated[0]


@pytest.fixture(scope="module")
def runner(catalog: Catalog, tasks: list[TaskSpec]) -> Runner:
    return Runner(catalog, tasks[0].world_seed)


@pytest.fixture
def world_of(runner: Runner) -> Iterator[Any]:
    """The task's world as the agent finds it: the seeded state plus the task's setup."""

    def fresh(task: TaskSpec) -> Runner:
        runner.fresh(task.setup)
        return runner

    yield fresh


def _steps(plan: list[PlanStep], tool: str) -> list[dict[str, Any]]:
    return [dict(step.arguments) for step in plan if step.tool == tool]


def _rule_text(task: TaskSpec, needle: str) -> str:
    """The text of the rule the task's setup planted (a policy document or a manager's email) that says ``needle``."""
    for record in task.setup:
        for cell in record.row.values():
            if isinstance(cell, str) and needle in cell:
                return cell
    raise AssertionError(f"{task.id}: no rule saying {needle!r} in the setup")


def _money(text: str) -> float:
    return float(text.replace(",", ""))


def test_every_finance_archetype_is_kept_from_a_trigger_on_many_channels(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, report = generated
    assert report.kept >= 0.85 * report.candidates, report.summary()
    assert {t.scenario.archetype for t in tasks if t.scenario} == set(IDS)
    assert all(t.scenario and t.scenario.trigger for t in tasks)
    customers = [t for t in tasks if t.scenario and t.scenario.archetype not in ("overdue-invoice-chase", "text-payment-link")]
    assert len({t.scenario.channel for t in customers if t.scenario}) >= 4, Counter(t.scenario.channel for t in customers if t.scenario)


def test_every_reference_passes_and_every_counterfactual_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, tasks)


def test_leaving_out_any_checked_write_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_every_write_is_needed(catalog, tasks)


def test_a_refund_goes_out_only_within_the_policys_limit_and_otherwise_the_finance_lead_is_asked(
    tasks: list[TaskSpec], world_of: Any
) -> None:
    decided = Counter()
    for task in of(tasks, "refund-needs-approval"):
        world = world_of(task)
        limit = _money(re.search(r"refund up to ([\d,.]+) USD", _rule_text(task, "Support may refund up to"))[1])  # type: ignore[index]
        refunded = _steps(task.plan, "refund_charge")
        careless = next(c for c in task.counterfactuals if c.id == "ignores-policy") if not refunded else None
        charge_id = (refunded or _steps(careless.plan if careless else [], "refund_charge"))[0]["charge_id"]
        charge = read(world, "payments", "get_charge", charge_id=charge_id)
        assert bool(refunded) == (charge["amount"] <= limit), task.id
        # The limit sits near the charge: within half of it either way, never an order of magnitude away.
        assert 0.5 * charge["amount"] <= limit <= 2 * charge["amount"], (task.id, limit, charge["amount"])
        if careless is not None:
            # The refund tool would take it: only the rule in the data says to ask first.
            assert run_plan(world.call, careless.plan, stop=True) == [], task.id
            assert not task.grade(world.diff(), None).passed, task.id
        decided["refunded" if refunded else "asked"] += 1
    assert len(decided) == 2 or sum(decided.values()) < 4, decided


def test_the_reminder_copies_the_finance_lead_exactly_when_the_invoice_is_later_than_the_rule_says(
    tasks: list[TaskSpec], world_of: Any
) -> None:
    for task in of(tasks, "overdue-invoice-chase"):
        if not _steps(task.plan, "email_invoice"):
            continue  # the customer paid since: nothing is chased (tests/composer/test_premises.py)
        world = world_of(task)
        sent = _steps(task.plan, "email_invoice")[0]
        invoice = read(world, "accounting", "get_invoice", invoice_number=sent["invoice_number"])
        assert invoice["overdue"] and invoice["status"] == "AUTHORISED", task.id
        if not (task.scenario and task.scenario.policy_in_data):
            assert not sent.get("cc"), task.id
            continue
        days = int(re.search(r"more than (\d+) days overdue", _rule_text(task, "days overdue"))[1])  # type: ignore[index]
        assert abs(invoice["days_overdue"] - days) <= 7, task.id  # near the line, on either side of it
        assert bool(sent.get("cc")) == (invoice["days_overdue"] > days), task.id
        # Whoever asked hears which invoice went out and what is still due; "done" is not an answer.
        assert not passes(task, world, with_reply(task, "Done, reminder sent.")), task.id
        due = f"${invoice['amount_due']:,.2f}"
        assert passes(task, world, with_reply(task, f"Sent {invoice['invoice_number']} again; {due} is outstanding.")), task.id


def test_a_part_payment_is_recorded_as_paid_and_the_reply_says_what_is_still_due(tasks: list[TaskSpec], world_of: Any) -> None:
    parts = 0
    for task in of(tasks, "bank-payment-recorded"):
        world = world_of(task)
        paid = _steps(task.plan, "create_payment")[0]
        invoice = read(world, "accounting", "get_invoice", invoice_number=paid["invoice_number"])
        left = round(invoice["amount_due"] - paid["amount"], 2)
        assert 0 <= left < invoice["amount_due"], task.id
        if left:
            parts += 1
            # A reply that calls it settled leaves out what is still due.
            assert not passes(task, world, with_reply(task, f"Thanks, your payment of {paid['amount']:,.2f} is recorded.")), task.id
            right = f"Got it: {paid['amount']:,.2f} recorded, and ${left:,.2f} remains on the invoice."
            assert passes(task, world, with_reply(task, right)), task.id
    assert parts or len(of(tasks, "bank-payment-recorded")) < 3


def test_a_payment_link_is_for_what_is_due_not_the_invoice_total(tasks: list[TaskSpec], world_of: Any) -> None:
    for task in [t for t in of(tasks, "payment-link-request") + of(tasks, "text-payment-link")
                 if _steps(t.plan, "create_payment_link")]:
        world = world_of(task)
        link = _steps(task.plan, "create_payment_link")[0]
        invoice = read(world, "accounting", "get_invoice", invoice_number=link["invoice_number"])
        assert link["amount"] == invoice["amount_due"] and invoice["status"] == "AUTHORISED", task.id
        if invoice["amount_due"] != invoice["total"]:
            total = [s.model_copy(update={"arguments": {**s.arguments, "amount": invoice["total"]}}) if s.tool == "create_payment_link"
                     else s for s in task.plan]
            assert not passes(task, world, total), task.id


def test_an_invoice_paid_in_full_already_gets_no_link_and_the_reply_says_when_it_was_paid(catalog: Catalog) -> None:
    """The customer's premise is false (nothing is due): no link is made, and a reply that sends a link or leaves out
    the day it was paid fails."""
    generated = generate(GenerateConfig(n=20, seed=1, services=SERVICES, archetypes=("payment-link-request",)), catalog)[0]
    paid = [t for t in generated if any(d.get("kind") == "premise" and d.get("default") is False for d in t.stats["decisions"])]
    assert paid
    world = Runner(catalog, paid[0].world_seed)
    for task in paid:
        assert not _steps(task.plan, "create_payment_link"), task.id
        assert passes(task, world, task.plan), task.id
        assert not passes(task, world, with_reply(task, "It is paid already.")), task.id
        number = re.search(r"INV-\d+", task.instruction + str(task.plan))
        assert number, task.id
        link = PlanStep(service="payments", tool="create_payment_link",
                        arguments={"amount": 10.0, "invoice_number": number.group(0)})
        assert not passes(task, world, [*task.plan, link]), task.id


def test_the_invoice_copy_goes_to_whoever_asked_for_the_invoice_they_named(tasks: list[TaskSpec], world_of: Any) -> None:
    for task in of(tasks, "invoice-copy-request"):
        world = world_of(task)
        sent = _steps(task.plan, "email_invoice")[0]
        invoice = read(world, "accounting", "get_invoice", invoice_number=sent["invoice_number"])
        assert sent["to"] == [invoice["contact_email"]], task.id
        for trap in task.traps:  # another invoice of theirs: sending that one instead fails
            other = [s.model_copy(update={"arguments": {**s.arguments, "invoice_number": trap.key}}) if s.tool == "email_invoice"
                     else s for s in task.plan]
            assert not passes(task, world, other), (task.id, trap.key)
