"""What the tests of each archetype family check alike: a plan graded on a task, the reference and the
counterfactuals, and that every write of the reference is needed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateReport
from composer.runner import Runner
from composer.verify import reference_answer, run_plan, verify_task
from mcp_services.tasks.spec import PlanStep, TaskSpec


def of(tasks: Sequence[TaskSpec], archetype: str) -> list[TaskSpec]:
    """The tasks of one archetype (at least one must have been kept)."""
    found = [t for t in tasks if t.scenario and t.scenario.archetype == archetype]
    assert found, f"no {archetype} task was kept"
    return found


def read(runner: Runner, service: str, tool: str, **arguments: Any) -> Any:
    """What a read tool returns on the runner's current state (it must succeed)."""
    result = runner.call(service, tool, arguments)
    assert result.success, result.error_message
    return result.data


def with_reply(task: TaskSpec, text: str) -> list[PlanStep]:
    """The reference plan with its last report (the answer to whoever asked) saying ``text`` instead."""
    assert task.scenario
    j = max(i for i, stage in enumerate(task.scenario.stages) if stage == "report")
    param = "body" if "body" in task.plan[j].arguments else "text"
    return [s.model_copy(update={"arguments": {**s.arguments, param: text}}) if i == j else s for i, s in enumerate(task.plan)]


def tasks_of(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport], archetype: str) -> tuple[Runner, list[TaskSpec]]:
    """A runner for the set's world and the tasks of one archetype (at least one)."""
    tasks = [t for t in generated[0] if t.scenario is not None and t.scenario.archetype == archetype]
    assert tasks, archetype
    return Runner(catalog, tasks[0].world_seed), tasks


def step_of(task: TaskSpec, tool: str) -> PlanStep:
    """The reference plan's first call of ``tool``."""
    return next(s for s in task.plan if s.tool == tool)


def changed(task: TaskSpec, tool: str, **arguments: Any) -> list[PlanStep]:
    """The reference plan with other arguments for its calls of ``tool``."""
    return [s.model_copy(update={"arguments": {**s.arguments, **arguments}}) if s.tool == tool else s for s in task.plan]


def passes(task: TaskSpec, runner: Runner, plan: Sequence[PlanStep], answer: str | None = None) -> bool:
    """Whether running ``plan`` on a fresh episode of the task (errors and all), then answering ``answer`` (default: the
    reference's answer), passes it."""
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


def checked_writes(catalog: Catalog, task: TaskSpec) -> list[int]:
    """The writes of the reference plan that a criterion of their own checks. A write that is only a means to a later
    one (opening the direct message a message is posted in) is checked through that one: leaving it out may still
    pass, when the message finds its way anyway."""
    named = {int(m[1]) - 1 for item in task.rubric if (m := re.match(r"step-(\d+)-", item.id))}
    return [i for i, step in enumerate(task.plan) if catalog.tool(step.service, step.tool).is_write and i in named]


def assert_every_write_is_needed(catalog: Catalog, tasks: Sequence[TaskSpec], *, min_writes: int = 1) -> None:
    """Leaving out any one checked write of the reference fails the task."""
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        writes = checked_writes(catalog, task)
        assert len(writes) >= min_writes, task.id
        for left_out in writes:
            plan = [s for i, s in enumerate(task.plan) if i != left_out]
            assert not passes(task, runner, plan), (task.id, task.plan[left_out].tool)




@dataclass
class Family:
    """The tasks of one module of archetypes, generated on a few services, with a runner for their world."""

    ids: tuple[str, ...]
    catalog: Catalog
    tasks: list[TaskSpec]
    report: GenerateReport
    runner: Runner


def family(module: ModuleType, services: Sequence[str], *, per: int, seed: int) -> Family:
    """Generate ``per`` candidates of every archetype ``module`` declares (generation drops any nothing decides), on ``services``."""
    from composer.generate import GenerateConfig, generate
    from composer.scenario import ARCHETYPES

    ids = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == module.__name__))
    catalog = load_catalog(services)
    tasks, report = generate(GenerateConfig(n=per * len(ids), seed=seed, services=tuple(services), archetypes=ids), catalog)
    assert tasks, report.summary()
    return Family(ids, catalog, tasks, report, Runner(catalog, tasks[0].world_seed))


def assert_family_holds(found: Family) -> None:
    """Every archetype kept, each task with a decision; the reference passes, every counterfactual fails, and leaving out
    any checked write fails."""
    assert {t.scenario.archetype for t in found.tasks if t.scenario} == set(found.ids), found.report.details
    assert all(t.stats["decisions"] for t in found.tasks)
    assert_reference_passes_and_counterfactuals_fail(found.catalog, found.tasks)
    assert_every_write_is_needed(found.catalog, found.tasks)


def args_of(task: TaskSpec, tool: str) -> list[dict[str, Any]]:
    """The arguments of every call of ``tool`` in the reference plan."""
    return [dict(s.arguments) for s in task.plan if s.tool == tool]


def premise_of(task: TaskSpec) -> bool | None:
    """Whether the task's premise holds (None: it has none)."""
    return next((d.get("default") for d in task.stats["decisions"] if d.get("kind") == "premise"), None)
