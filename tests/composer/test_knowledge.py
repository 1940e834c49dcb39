"""The archetypes that run on the wiki, the spreadsheets, the help center and the forms: each yields verified
tasks whose rules live in the data, requests arrive on the channels people use, a solution that ignores a rule
or a table fails, and so does a message that lists every candidate instead of the right one."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import knowledge
from composer.audit import audit_records
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import empty_diff, verify_task, verify_task_exact
from mcp_services.kernel import World
from mcp_services.kernel.plans.policies import DISCOUNT, policy_plan
from mcp_services.tasks.checks import RowAbsent, RowExists
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    changed,
    passes,
    step_of,
    tasks_of,
)

SERVICES = ("crm", "helpdesk", "mailbox", "chat", "calendar", "sheets", "docs", "kb", "forms", "sms", "voice")
IDS = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == knowledge.__name__))
N = 4 * len(IDS)
#: Archetypes about one channel's own record: a ticket to route, a form's submissions.
ONE_CHANNEL = {"ticket-routing": "ticket", "contact-form-to-ticket": "form", "demo-request-to-lead": None,
               "event-registration": None}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=N, seed=1, services=SERVICES, archetypes=IDS), catalog)


@pytest.fixture(scope="module")
def tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> list[TaskSpec]:
    return generated[0]


def test_every_archetype_of_the_module_yields_tasks_in_a_family_of_work(
    generated: tuple[list[TaskSpec], GenerateReport],
) -> None:
    tasks, report = generated
    assert len(IDS) >= 6
    assert report.kept >= 0.9 * N, report.summary()
    assert {t.scenario.archetype for t in tasks if t.scenario} == set(IDS)
    assert {t.scenario.family for t in tasks if t.scenario} >= {"support", "sales", "marketing", "hr"}
    uses = {s: sum(s in t.services for t in tasks) for s in ("sheets", "docs", "kb", "forms")}
    assert all(count >= 3 for count in uses.values()), uses


def test_requests_arrive_on_the_channels_people_use(tasks: list[TaskSpec]) -> None:
    channels: dict[str, set[str | None]] = {a: set() for a in IDS}
    for task in tasks:
        assert task.scenario is not None
        channels[task.scenario.archetype].add(task.scenario.channel)
    for archetype, channel in ONE_CHANNEL.items():
        assert channels[archetype] == {channel}, (archetype, channels[archetype])
    customers = [a for a in IDS if a not in ONE_CHANNEL and a not in ("ticket-to-kb-draft", "people-policy-question")]
    # Four candidates each: one archetype may land on one channel by chance, not two.
    assert sum(1 for a in customers if len(channels[a]) < 2) <= 1, channels
    assert len(set().union(*(channels[a] for a in customers)) & {"email", "sms", "voice", "ticket", "form", "chat"}) >= 4, channels
    assert channels["people-policy-question"] | channels["ticket-to-kb-draft"] <= {"email", "chat"}


def test_the_rules_live_in_the_data_and_every_task_verifies(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert task.scenario is not None and task.scenario.policy_in_data, task.id
        assert task.scenario.trigger is not None, task.id
        assert verify_task(task, runner) == [], task.id
    for task in {t.scenario.archetype: t for t in tasks if t.scenario}.values():
        assert verify_task_exact(task) == [], task.id


def test_every_reference_passes_and_every_counterfactual_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, tasks)
    shortcuts = Counter(c.id for t in tasks for c in t.counterfactuals if not c.id.startswith(("trap", "ignores")))
    writing = [t for t in tasks if t.stats.get("message_steps")]  # question tasks and routed tickets write no message
    assert writing and all(any(c.id == "empty-report" for c in t.counterfactuals) for t in writing), shortcuts
    assert shortcuts["list-answer"] >= 3, shortcuts


def test_no_request_states_the_colleagues_it_asks_the_agent_to_look_up(tasks: list[TaskSpec]) -> None:
    world = World.from_seed(tasks[0].world_seed)
    plan = policy_plan(world)
    for task in tasks:
        assert not [p.email for p in world.team if p.email in task.instruction], task.id
        # (A follow-up the walk adds may ask to tell a salesperson something: only the workflow's own request counts.)
        if task.scenario and task.scenario.archetype in ("demo-request-to-lead", "churn-risk-to-account-manager") \
                and not task.scenario.walk:
            managers = {a.manager_name for a in plan.accounts if a.company in task.instruction}
            assert managers and not [m for m in managers if m in task.instruction], task.id


def test_leaving_out_any_requested_change_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_every_write_is_needed(catalog, [t for t in tasks if t.answer is None])
    for task in tasks:
        assert not task.grade(empty_diff(task), None).passed


def test_a_discount_is_logged_at_the_discounted_total_only_within_the_limit(catalog: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=10, seed=2, services=SERVICES, archetypes=("discount-request",)), catalog)
    runner = Runner(catalog, tasks[0].world_seed)
    approver = next(p.email for p in World.from_seed(tasks[0].world_seed).team if p.job_title == DISCOUNT.approver_role)
    outcomes = set()
    for task in tasks:
        deals = [s for s in task.plan if s.tool == "create_deal"]
        forbidden = [c for c in task.checks if isinstance(c, RowAbsent) and c.table == "deals"]
        outcomes.add(bool(deals))
        if deals:
            assert not forbidden
            (deal,) = [c for c in task.checks if isinstance(c, RowExists) and c.table == "deals"]
            assert deal.match["amount"] == {"$approx": deals[0].arguments["amount"]}
            # Confirming the discount is a decision the reply states: "declined" is not a confirmation.
            reply = next(s for s in task.plan[task.plan.index(deals[0]) + 1:] if s.tool in _ANSWERS)
            text = next(k for k in ("body", "text") if k in reply.arguments)
            said = "We have declined this discount, sorry. " + str(reply.arguments[text])
            assert not passes(task, runner, _with(task, reply, {text: said})), task.id
        else:
            assert forbidden and any(cf.id == "ignores-policy" for cf in task.counterfactuals)
            handed = next(s for s in task.plan if s.tool in ("forward_message", "send_email") and approver in s.arguments["to"])
            assert handed.arguments["to"] == [approver]
    assert outcomes == {True, False}  # both sides of the limit come up


_ANSWERS = ("reply_to_message", "reply_in_thread", "add_ticket_reply", "send_message", "send_email")


def _with(task: TaskSpec, step: PlanStep, arguments: dict[str, object]) -> list[PlanStep]:
    return [s.model_copy(update={"arguments": {**s.arguments, **arguments}}) if s is step else s for s in task.plan]


def test_an_answer_that_lists_every_article_or_manager_fails_and_the_one_right_answer_passes(
    catalog: Catalog, tasks: list[TaskSpec]
) -> None:
    listed = [t for t in tasks if any(c.id == "list-answer" for c in t.counterfactuals) and t.answer is None]
    assert {t.scenario.archetype for t in listed if t.scenario} >= {"churn-risk-to-account-manager"}
    runner = Runner(catalog, tasks[0].world_seed)
    for task in listed:
        cf = next(c for c in task.counterfactuals if c.id == "list-answer")
        assert "Other options:" in str(cf.plan) and not passes(task, runner, cf.plan), task.id
        assert passes(task, runner, task.plan), task.id


def test_a_people_question_answered_with_every_figure_of_the_page_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner, questions = tasks_of(catalog, (tasks, GenerateReport()), "people-policy-question")
    for task in questions:
        listing = next(c for c in task.counterfactuals if c.id == "list-answer")
        assert listing.answer is not None and str(task.answer) in listing.answer
        assert not passes(task, runner, task.plan, listing.answer), task.id
        assert passes(task, runner, task.plan, f"It is {task.answer}."), task.id


def test_the_demo_contact_gets_the_account_manager_as_owner(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner, demos = tasks_of(catalog, (tasks, GenerateReport()), "demo-request-to-lead")
    managers = {a.manager_email for a in policy_plan(World.from_seed(tasks[0].world_seed)).accounts}
    for task in demos:
        owner = step_of(task, "update_contact").arguments["owner_email"]
        assert owner in step_of(task, "create_event").arguments["attendee_emails"]
        other = next(m for m in sorted(managers) if m != owner)
        assert not passes(task, runner, changed(task, "update_contact", owner_email=other)), task.id


def test_the_audit_proves_every_reference_through_a_named_relation(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    records = list(audit_records(tasks, catalog))
    references = [r for record in records for r in record["references"]]
    assert references and all(r["resolved"] and r["relation"] for r in references)
    assert {r["service"] for r in references} >= {"sheets", "docs", "forms"}
