"""The archetypes that run on the wiki, the spreadsheets, the help center and the forms: each yields verified
tasks whose rules live in the data, and a solution that ignores a rule or a table fails."""

from __future__ import annotations

import pytest

from composer.archetypes import knowledge
from composer.audit import audit_records
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import empty_diff, reference_answer, run_plan, verify_task, verify_task_exact
from mcp_services.kernel import World
from mcp_services.kernel.plans.policies import DISCOUNT, policy_plan
from mcp_services.tasks.checks import RowAbsent, RowExists
from mcp_services.tasks.spec import TaskSpec

SERVICES = ("crm", "helpdesk", "mailbox", "chat", "calendar", "sheets", "docs", "kb", "forms")
IDS = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == knowledge.__name__))
N = 3 * len(IDS)


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


def test_the_rules_live_in_the_data_and_every_task_verifies(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert task.scenario is not None and task.scenario.policy_in_data, task.id
        assert task.scenario.trigger is not None, task.id
        assert verify_task(task, runner) == [], task.id
    for task in {t.scenario.archetype: t for t in tasks if t.scenario}.values():
        assert verify_task_exact(task) == [], task.id


def test_no_request_states_the_colleagues_it_asks_the_agent_to_look_up(tasks: list[TaskSpec]) -> None:
    world = World.from_seed(tasks[0].world_seed)
    plan = policy_plan(world)
    for task in tasks:
        assert not [p.email for p in world.team if p.email in task.instruction], task.id
        if task.scenario and task.scenario.archetype in ("demo-request-to-lead", "churn-risk-to-account-manager"):
            managers = {a.manager_name for a in plan.accounts if a.company in task.instruction}
            assert managers and not [m for m in managers if m in task.instruction], task.id


def test_leaving_out_any_requested_change_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        writes = [i for i, step in enumerate(task.plan) if catalog.tool(step.service, step.tool).is_write]
        for left_out in writes:
            runner.fresh(task.setup)
            run_plan(runner.call, [s for i, s in enumerate(task.plan) if i != left_out], stop=False)
            assert not task.grade(runner.diff(), reference_answer(task)).passed, (task.id, task.plan[left_out].tool)
        assert not task.grade(empty_diff(task), None).passed


def test_a_discount_is_logged_at_the_discounted_total_only_within_the_limit(catalog: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=10, seed=2, services=SERVICES, archetypes=("discount-request",)), catalog)
    plan = policy_plan(World.from_seed(tasks[0].world_seed))
    outcomes = set()
    for task in tasks:
        deals = [s for s in task.plan if s.tool == "create_deal"]
        forbidden = [c for c in task.checks if isinstance(c, RowAbsent)]
        outcomes.add(bool(deals))
        if deals:
            assert not forbidden
            (deal,) = [c for c in task.checks if isinstance(c, RowExists) and c.table == "deals"]
            assert deal.match["amount"] == {"$approx": deals[0].arguments["amount"]}
        else:
            assert forbidden and any(cf.id == "ignores-policy" for cf in task.counterfactuals)
            forwarded = next(s for s in task.plan if s.tool == "forward_message")
            assert forwarded.arguments["to"] == [
                next(p.email for p in World.from_seed(task.world_seed).team if p.job_title == DISCOUNT.approver_role)
            ]
    assert outcomes == {True, False}  # both sides of the limit come up
    assert plan.price_list


def test_the_audit_proves_every_reference_through_a_named_relation(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    records = list(audit_records(tasks, catalog))
    references = [r for record in records for r in record["references"]]
    assert references and all(r["resolved"] and r["relation"] for r in references)
    assert {r["service"] for r in references} >= {"sheets", "docs", "forms"}
