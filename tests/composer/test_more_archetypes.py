"""The sms archetypes of finance and engagement: kept, solvable by their reference, failed by wrong solutions, fair to right ones."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.scenario import ARCHETYPES
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    changed,
    passes,
    step_of,
    tasks_of,
)

SERVICES = ("sms", "projects", "accounting", "payments", "chat", "crm", "calendar", "helpdesk", "mailbox", "files")
IDS = ("text-payment-link", "meeting-reminder-text")  # the support ones (bug-status-chase, known-bug-ticket): test_support.py


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=3 * len(IDS), seed=0, services=SERVICES, archetypes=IDS), catalog)


def test_sms_and_projects_each_serve_three_archetypes() -> None:
    uses = Counter(s for a in ARCHETYPES.values() for s in a.services)
    assert uses["sms"] >= 3 and uses["projects"] >= 3, uses
    assert all(a in ARCHETYPES for a in IDS)


def test_generation_keeps_the_candidates_of_every_archetype(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, report = generated
    assert report.kept >= 0.85 * report.candidates, report.summary()
    kept = Counter(t.scenario.archetype for t in tasks if t.scenario is not None)
    assert set(kept) == set(IDS), report.details
    assert all(t.scenario is not None and t.scenario.trigger is not None for t in tasks)
    assert sum(bool(t.traps) for t in tasks) >= len(IDS) - 1
    assert sum(t.scenario is not None and t.scenario.policy_in_data for t in tasks) >= len(IDS)


def test_every_reference_solution_passes_and_every_counterfactual_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, generated[0])


def test_leaving_out_any_write_fails(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_write_is_needed(catalog, generated[0], min_writes=2)


def test_the_payment_link_may_go_back_as_a_new_text_but_not_for_the_paid_invoice(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, links = tasks_of(catalog, generated, "text-payment-link")
    for task in links:
        trigger = next(r.row for r in task.setup if r.table == "messages")
        reply = step_of(task, "reply_to_message")
        texted = PlanStep(service="sms", tool="send_message", arguments={"to": trigger["from_number"], "body": reply.arguments["body"]})
        assert passes(task, runner, [texted if s is reply else s for s in task.plan]), task.id
        # A link that never reaches the customer's phone does not answer the text.
        assert not passes(task, runner, [s for s in task.plan if s is not reply]), task.id
    trapped = [t for t in links if t.traps]
    assert trapped
    for task in trapped:
        assert not passes(task, runner, changed(task, "create_payment_link", invoice_number=task.traps[0].key)), task.id


def test_the_reminder_goes_to_the_customers_mobile_from_the_line_the_rules_name(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, reminders = tasks_of(catalog, generated, "meeting-reminder-text")
    ours = runner.call("sms", "list_sender_numbers", {}).data
    default = next(n["phone_number"] for n in ours if n["is_default"])
    for task in reminders:
        ruled = task.scenario is not None and task.scenario.policy_in_data
        # With the texting rules, the default line breaks them; without, any of our SMS lines is fine.
        assert passes(task, runner, changed(task, "send_message", from_number=default)) is not ruled, task.id
        assert not passes(task, runner, changed(task, "send_message", body="Reminder: our meeting soon.")), task.id
    assert any(t.scenario is not None and t.scenario.policy_in_data for t in reminders)
