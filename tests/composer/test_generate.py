"""Generated tasks: verified, non-vacuous, with checked distractors, every shape, byte-stable."""

from __future__ import annotations

from collections import Counter

from composer.catalog import Catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.verify import empty_diff, leaks, reference_answer, run_plan, verify_task, verify_task_exact
from mcp_services.tasks.checks import RowUnchanged
from mcp_services.tasks.spec import CAPABILITIES, TaskSpec

from .conftest import N, SEED, SERVICES


def test_most_candidates_become_verified_tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, report = generated
    assert report.candidates == N
    assert report.kept == len(tasks) >= N * 0.8, report.summary()
    assert sum(report.dropped.values()) == N - report.kept


def test_every_generated_task_passes_verification_on_a_fresh_episode(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)  # no memo: every call really runs
    for task in tasks:
        assert verify_task(task, runner) == [], task.id


def test_verification_agrees_with_the_harness_grading_path(tasks: list[TaskSpec]) -> None:
    for task in tasks[:2]:
        assert verify_task_exact(task) == [], task.id


def test_a_mutated_reference_plan_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        writes = [i for i, step in enumerate(task.plan) if catalog.tool(step.service, step.tool).is_write]
        if not writes:
            continue
        # Leave out the last write: the task must no longer pass.
        plan = [step for i, step in enumerate(task.plan) if i != writes[-1]]
        runner.fresh(task.setup)
        run_plan(runner.call, plan, stop=False)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, task.id


def test_no_criterion_passes_when_nothing_is_done(tasks: list[TaskSpec]) -> None:
    for task in tasks:
        by_id = {c.id: c for c in task.checks}
        idle = task.grade(empty_diff(task), None)
        assert not any(idle.criteria.values()), task.id
        for item in task.rubric:
            assert any(not by_id[c].negative for c in item.checks), (task.id, item.id)


def test_distractor_records_exist_are_checked_and_following_them_fails(tasks: list[TaskSpec]) -> None:
    with_distractors = [t for t in tasks if "distractor-avoidance" in t.capabilities]
    assert with_distractors
    for task in with_distractors:
        assert task.setup
        guarded = {(c.service, c.table) for c in task.checks if isinstance(c, RowUnchanged)}
        assert {(r.service, r.table) for r in task.setup} <= guarded
        assert any(cf.id.startswith("distractor") for cf in task.counterfactuals)


def test_every_capability_appears(tasks: list[TaskSpec]) -> None:
    shares = Counter(c for t in tasks for c in t.capabilities)
    assert set(CAPABILITIES) <= set(shares), shares


def test_instructions_state_the_date_and_never_a_looked_up_value(tasks: list[TaskSpec]) -> None:
    for task in tasks:
        assert leaks(task) == [], task.id
        assert any(day in task.instruction for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"))


def test_tasks_need_several_services_and_calls(tasks: list[TaskSpec]) -> None:
    assert sum(len(t.services) for t in tasks) / len(tasks) >= 3
    assert sum(len(t.plan) for t in tasks) / len(tasks) >= 6
    for task in tasks:
        assert len(task.services) >= 3
        assert set(task.distractor_services).isdisjoint(task.services)


def test_the_same_seed_gives_the_same_bytes(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    again, _ = generate(GenerateConfig(n=4, seed=SEED, services=SERVICES), catalog)
    first = [t for t in tasks if t.id in {a.id for a in again}]
    assert [t.to_json() for t in again] == [t.to_json() for t in first][: len(again)]
    assert [t.to_json() for t in again] == [t.to_json() for t in tasks[: len(again)]]
