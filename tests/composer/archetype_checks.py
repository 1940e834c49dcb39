"""What the tests of each archetype family check alike: a plan graded on a task, the reference and the
counterfactuals, and that every write of the reference is needed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from composer.catalog import Catalog
from composer.generate import GenerateReport
from composer.runner import Runner
from composer.verify import reference_answer, run_plan, verify_task
from mcp_services.tasks.spec import PlanStep, TaskSpec


def passes(task: TaskSpec, runner: Runner, plan: Sequence[PlanStep], answer: str | None = None) -> bool:
    """Whether running ``plan`` on a fresh episode of the task (errors and all) passes it, with ``answer`` as the final
    answer (default: the reference's)."""
    runner.fresh(task.setup)
    run_plan(runner.call, plan, stop=False)
    return task.grade(runner.diff(), answer if answer is not None else reference_answer(task)).passed


def assert_every_archetype_kept(generated: tuple[Sequence[TaskSpec], GenerateReport], ids: Sequence[str]) -> None:
    """At least 85% of the candidates kept, and some of each archetype."""
    tasks, report = generated
    assert report.kept >= 0.85 * report.candidates, report.summary()
    assert {t.scenario.archetype for t in tasks if t.scenario is not None} == set(ids), report.details


def assert_reference_passes_and_counterfactuals_fail(catalog: Catalog, tasks: Sequence[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert verify_task(task, runner) == [], task.id
        assert passes(task, runner, task.plan), task.id
        for cf in task.counterfactuals:
            assert not passes(task, runner, cf.plan, cf.answer), (task.id, cf.id)


def assert_every_write_is_needed(catalog: Catalog, tasks: Sequence[TaskSpec], *, min_writes: int = 1) -> None:
    """Leaving out any one write of the reference fails the task (a means to a later step, such as opening the direct
    message a post goes to, has no criterion of its own and may already exist)."""
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        checked = {item.id.split("-")[1] for item in task.rubric if item.id.startswith("step-")}
        writes = [i for i, step in enumerate(task.plan) if catalog.tool(step.service, step.tool).is_write and str(i + 1) in checked]
        assert len(writes) >= min_writes, task.id
        for left_out in writes:
            plan = [s for i, s in enumerate(task.plan) if i != left_out]
            assert not passes(task, runner, plan), (task.id, task.plan[left_out].tool)


def tasks_of(tasks: Sequence[TaskSpec], archetype: str) -> list[TaskSpec]:
    """The tasks of one archetype (at least one)."""
    found = [t for t in tasks if t.scenario is not None and t.scenario.archetype == archetype]
    assert found, archetype
    return found


def step_of(task: TaskSpec, tool: str) -> PlanStep:
    """The reference plan's first call of ``tool``."""
    return next(s for s in task.plan if s.tool == tool)


def changed(task: TaskSpec, tool: str, **arguments: Any) -> list[PlanStep]:
    """The reference plan with other arguments for its calls of ``tool``."""
    return [s.model_copy(update={"arguments": {**s.arguments, **arguments}}) if s.tool == tool else s for s in task.plan]
