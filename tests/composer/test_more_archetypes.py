"""The sms and projects archetypes: kept, solvable by their reference, failed by wrong solutions, fair to right ones."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import reference_answer, run_plan
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    passes,
)

SERVICES = ("sms", "projects", "accounting", "payments", "chat", "crm", "calendar", "helpdesk", "mailbox", "files")
IDS = ("text-payment-link", "meeting-reminder-text", "bug-status-chase", "known-bug-ticket")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=3 * len(IDS), seed=0, services=SERVICES, archetypes=IDS), catalog)


def _of(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport], archetype: str) -> tuple[Runner, list[TaskSpec]]:
    """A runner for the set's world and the tasks of one archetype (at least one)."""
    tasks = [t for t in generated[0] if t.scenario is not None and t.scenario.archetype == archetype]
    assert tasks, archetype
    return Runner(catalog, tasks[0].world_seed), tasks


def _step(task: TaskSpec, tool: str) -> PlanStep:
    return next(s for s in task.plan if s.tool == tool)


def _changed(task: TaskSpec, tool: str, **arguments: Any) -> list[PlanStep]:
    """The reference plan with other arguments for its call of ``tool``."""
    return [s.model_copy(update={"arguments": {**s.arguments, **arguments}}) if s.tool == tool else s for s in task.plan]


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
    runner, links = _of(catalog, generated, "text-payment-link")
    for task in links:
        trigger = next(r.row for r in task.setup if r.table == "messages")
        reply = _step(task, "reply_to_message")
        texted = PlanStep(service="sms", tool="send_message", arguments={"to": trigger["from_number"], "body": reply.arguments["body"]})
        assert passes(task, runner, [texted if s is reply else s for s in task.plan]), task.id
        # A link that never reaches the customer's phone does not answer the text.
        assert not passes(task, runner, [s for s in task.plan if s is not reply]), task.id
    trapped = [t for t in links if t.traps]
    assert trapped
    for task in trapped:
        assert not passes(task, runner, _changed(task, "create_payment_link", invoice_number=task.traps[0].key)), task.id


def test_the_reminder_goes_to_the_customers_mobile_from_the_line_the_rules_name(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, reminders = _of(catalog, generated, "meeting-reminder-text")
    ours = runner.call("sms", "list_sender_numbers", {}).data
    default = next(n["phone_number"] for n in ours if n["is_default"])
    for task in reminders:
        ruled = task.scenario is not None and task.scenario.policy_in_data
        # With the texting rules, the default line breaks them; without, any of our SMS lines is fine.
        assert passes(task, runner, _changed(task, "send_message", from_number=default)) is not ruled, task.id
        assert not passes(task, runner, _changed(task, "send_message", body="Reminder: our meeting soon.")), task.id
    assert any(t.scenario is not None and t.scenario.policy_in_data for t in reminders)


def test_a_chased_bug_gets_the_priority_the_rules_say_on_its_own_escalation(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, chases = _of(catalog, generated, "bug-status-chase")
    for task in chases:
        edit = _step(task, "edit_issue")
        wrong = "high" if edit.arguments["priority"] == "highest" else "highest"
        assert not passes(task, runner, _changed(task, "edit_issue", priority=wrong)), task.id
        assert task.traps, task.id
        # Raising the other customer's escalation as well is collateral even when their own is right.
        twin = edit.model_copy(update={"arguments": {**edit.arguments, "issue_key": task.traps[0].key}})
        assert not passes(task, runner, [*task.plan, twin]), task.id


def test_a_known_bug_gets_a_comment_not_a_duplicate_and_the_ticket_may_wait_as_pending(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, known = _of(catalog, generated, "known-bug-ticket")
    for task in known:
        cf = next(c for c in task.counterfactuals if c.id == "ignores-policy")
        filed = next(s for s in cf.plan if s.tool == "create_issue")
        assert filed.arguments["project_key"] == "ENG"
        assert not passes(task, runner, [*task.plan, filed]), task.id
        assert passes(task, runner, _changed(task, "add_ticket_reply", status="pending")), task.id
        assert not passes(task, runner, _changed(task, "add_ticket_reply", status="solved")), task.id


def test_the_rule_s_priority_is_checked_as_that_value_not_inside_another(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    """The policy criterion alone fails "highest" where the rule says "high": a fixed choice is not a substring."""
    runner, chases = _of(catalog, generated, "bug-status-chase")
    graded = 0
    for task in chases:
        if _step(task, "edit_issue").arguments["priority"] != "high" or "policy" not in {c.id for c in task.rubric}:
            continue
        runner.fresh(task.setup)
        run_plan(runner.call, _changed(task, "edit_issue", priority="highest"), stop=False)
        assert task.grade(runner.diff(), reference_answer(task)).criteria["policy"] is False, task.id
        graded += 1
    assert graded or all(_step(t, "edit_issue").arguments["priority"] == "highest" for t in chases)
