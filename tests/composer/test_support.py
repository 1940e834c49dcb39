"""The support archetypes on the stages: a request on any channel a customer uses, the answer on that channel stating
what it must, solvable by the reference, failed by wrong solutions and by empty reports."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import support
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import reference_answer, run_plan
from mcp_services.kernel import World
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    changed,
    passes,
    step_of,
    tasks_of,
)

SERVICES = ("helpdesk", "mailbox", "chat", "crm", "sms", "voice", "forms", "projects", "files")
IDS = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == support.__name__))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=5 * len(IDS), seed=0, services=SERVICES, archetypes=IDS), catalog)


def test_generation_keeps_the_candidates_of_every_archetype_on_many_channels(
    generated: tuple[list[TaskSpec], GenerateReport],
) -> None:
    tasks, report = generated
    assert len(IDS) == 7
    assert report.kept >= 0.85 * report.candidates, report.summary()
    kept = Counter(t.scenario.archetype for t in tasks if t.scenario is not None)
    assert set(kept) == set(IDS), report.details
    assert all(t.scenario is not None and t.scenario.trigger is not None for t in tasks)
    channels = {a: {t.scenario.channel for t in tasks if t.scenario is not None and t.scenario.archetype == a} for a in IDS}
    # A colleague passes a call on in chat; every other request comes in on whichever channel the customer used.
    assert channels["chat-escalation-to-ticket"] == {"chat"}
    assert set().union(*channels.values()) >= {"email", "sms", "voice", "ticket", "form", "chat"}, channels
    assert sum(len(c) >= 2 for a, c in channels.items() if a != "chat-escalation-to-ticket") >= 5, channels
    assert sum(bool(t.traps) for t in tasks) >= 4
    assert sum(t.scenario is not None and t.scenario.policy_in_data for t in tasks) >= 4


def test_every_reference_solution_passes_and_every_counterfactual_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, generated[0])
    # "Thanks, this is handled." in the right thread is no answer: every task's messages are checked for their facts.
    assert all("empty-report" in {c.id for c in t.counterfactuals} for t in generated[0])


def test_leaving_out_any_write_fails(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    # A false premise (opted out already) leaves only the reply to write.
    false = [t for t in generated[0] if any(d.get("kind") == "premise" and d.get("default") is False for d in t.stats["decisions"])]
    assert_every_write_is_needed(catalog, [t for t in generated[0] if t not in false], min_writes=2)
    if false:
        assert_every_write_is_needed(catalog, false, min_writes=1)


def test_the_ticket_goes_under_the_caller_not_a_namesake_at_another_company(catalog: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=8, seed=3, services=SERVICES, archetypes=("chat-escalation-to-ticket",)), catalog)
    runner = Runner(catalog, tasks[0].world_seed)
    trapped = [t for t in tasks if t.traps]
    assert trapped
    world = World.from_seed(tasks[0].world_seed)
    for task in trapped:
        namesake = next(r.row for r in task.setup if r.table == "contacts" and r.row["id"] == task.traps[0].key)
        caller = next(p for p in world.customers if p.name in task.instruction)
        # The request names the caller; only the message in #support says which company they are with.
        assert world.organisation(caller.organisation_id).name not in task.instruction, task.id
        assert not passes(task, runner, changed(task, "create_ticket", requester_email=namesake["email"])), task.id


def test_a_customer_who_texts_stop_gets_no_text_back_and_the_crm_note_names_the_number(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, opt_outs = tasks_of(catalog, generated, "text-opt-out")
    for task in [t for t in opt_outs if any(step.tool == "add_opt_out" for step in t.plan)]:
        number = step_of(task, "add_opt_out").arguments["phone_number"]
        texted = [s for s in task.plan if s.service == "sms" and s.tool in ("send_message", "reply_to_message")]
        assert not texted, task.id
        assert not passes(task, runner, changed(task, "add_opt_out", phone_number="+15550000000")), task.id
        assert not passes(task, runner, changed(task, "add_note", body="Opted out of texts.")), task.id
        assert number in str(step_of(task, "add_note").arguments["body"])


def test_a_customer_opted_out_already_hears_since_when_and_nothing_changes(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, opt_outs = tasks_of(catalog, generated, "text-opt-out")
    already = [t for t in opt_outs if not any(step.tool == "add_opt_out" for step in t.plan)]
    assert already, "no customer was opted out already"
    for task in already:
        assert any(d.get("kind") == "premise" and d.get("default") is False for d in task.stats["decisions"]), task.id
        assert passes(task, runner, task.plan), task.id
        said = next(step for step in task.plan if "already opted out" in str(step.arguments))
        field = "text" if "text" in said.arguments else "body"
        # A reply that claims to have opted them out (the literal agent's) does not say where things stand.
        claim = said.model_copy(update={"arguments": {**said.arguments, field: "Done: we will not text you again."}})
        assert not passes(task, runner, [claim if step is said else step for step in task.plan]), task.id


def test_a_chased_bug_gets_the_priority_the_rules_say_on_its_own_escalation(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, chases = tasks_of(catalog, generated, "bug-status-chase")
    for task in chases:
        edit = step_of(task, "edit_issue")
        wrong = "high" if edit.arguments["priority"] == "highest" else "highest"
        assert not passes(task, runner, changed(task, "edit_issue", priority=wrong)), task.id
        assert task.traps, task.id
        # Raising the other customer's escalation as well is collateral even when their own is right.
        twin = edit.model_copy(update={"arguments": {**edit.arguments, "issue_key": task.traps[0].key}})
        assert not passes(task, runner, [*task.plan, twin]), task.id


def test_the_rule_s_priority_is_checked_as_that_value_not_inside_another(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    """The policy criterion alone fails "highest" where the rule says "high": a fixed choice is not a substring."""
    runner, chases = tasks_of(catalog, generated, "bug-status-chase")
    graded = 0
    for task in chases:
        if step_of(task, "edit_issue").arguments["priority"] != "high":
            continue
        runner.fresh(task.setup)
        run_plan(runner.call, changed(task, "edit_issue", priority="highest"), stop=False)
        assert task.grade(runner.diff(), reference_answer(task)).criteria["policy"] is False, task.id
        graded += 1
    assert graded or all(step_of(t, "edit_issue").arguments["priority"] == "highest" for t in chases)


def test_a_known_bug_gets_a_comment_not_a_duplicate(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    runner, known = tasks_of(catalog, generated, "known-bug-ticket")
    for task in known:
        cf = next(c for c in task.counterfactuals if c.id == "ignores-policy")
        filed = next(s for s in cf.plan if s.tool == "create_issue")
        assert filed.arguments["project_key"] == "ENG"
        assert not passes(task, runner, [*task.plan, filed]), task.id


def test_the_ticket_the_customer_means_may_be_solved_or_closed_but_not_their_other_one(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, fixed = tasks_of(catalog, generated, "ticket-fixed-confirmation")
    checked = 0
    for task in fixed:
        solved = next(s for s in task.plan if s.tool == "update_ticket" and s.arguments.get("status") == "solved")
        closed = PlanStep(service="helpdesk", tool="close_ticket", arguments={"ticket_id": solved.arguments["ticket_id"]})
        later = task.plan[task.plan.index(solved) + 1:]
        if not any(s.arguments.get("ticket_id") == solved.arguments["ticket_id"] for s in later):  # closed is final
            assert passes(task, runner, [closed if s is solved else s for s in task.plan]), task.id
        checked += 1
        assert task.traps, task.id
        other = solved.model_copy(update={"arguments": {**solved.arguments, "ticket_id": task.traps[0].key}})
        assert not passes(task, runner, [other if s is solved else s for s in task.plan]), task.id
    assert checked
