"""Verifying a task: solvable by its reference plan, failed by inaction and by every near miss.

A task is kept only if, on a fresh episode with its setup records:

1. the reference plan runs without an error and passes every criterion (with the expected answer);
2. doing nothing fails every criterion (no criterion is vacuous);
3. every counterfactual plan (following a distractor, ignoring a house rule) fails the task;
4. the instruction does not give away a value the agent must look up.

``verify_task`` runs on a ``Runner`` (restored snapshots, tracked diffs: fast);
``verify_task_exact`` runs on ``episode_for(task)`` with ``Episode.diff()``, the harness's own path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcp_services.kernel.diff import StateDiff
from mcp_services.tasks.checks import AnswerCheck, InfoFlow
from mcp_services.tasks.spec import PlanStep, TaskSpec

Diff = Mapping[str, StateDiff]


def reference_answer(task: TaskSpec) -> str | None:
    """The final message of an agent that did the task: the expected answer, stated."""
    if task.answer is None:
        return None
    if isinstance(task.answer, float):
        return f"The answer is {task.answer:.2f}."
    return f"The answer is {task.answer}."


def empty_diff(task: TaskSpec) -> dict[str, StateDiff]:
    return {name: StateDiff({}) for name in task.mounted_services}


def judge(
    task: TaskSpec,
    reference: tuple[Diff, list[str]],
    counterfactuals: Sequence[Diff],
) -> list[str]:
    """Problems with a task, given the diff of its reference run (and that run's errors) and of each counterfactual."""
    problems: list[str] = []
    diff, errors = reference
    problems += [f"reference plan: {e}" for e in errors]
    grade = task.grade(diff, reference_answer(task))
    failing = [c for c, ok in grade.criteria.items() if not ok]
    if failing:
        problems.append(f"reference plan fails criteria: {', '.join(failing)}")
    idle = task.grade(empty_diff(task), None)
    vacuous = [c for c, ok in idle.criteria.items() if ok]
    if vacuous:
        problems.append(f"criteria pass when nothing is done: {', '.join(vacuous)}")
    if not task.rubric:
        problems.append("the task has no rubric criteria")
    for cf, cf_diff in zip(task.counterfactuals, counterfactuals, strict=True):
        cf_grade = task.grade(cf_diff, cf.answer)
        if cf_grade.passed:
            problems.append(f"counterfactual {cf.id} ({cf.description}) passes the task")
        passing = [c for c in cf.criteria if cf_grade.criteria.get(c, False)]
        if passing:
            problems.append(f"counterfactual {cf.id} ({cf.description}) passes the criterion {passing[0]} that should catch it")
    problems += leaks(task)
    return problems


def leaks(task: TaskSpec) -> list[str]:
    """Looked-up values (info-flow values, the answer) that the instruction states outright."""
    text = task.instruction.lower()
    found: list[str] = []
    for check in task.checks:
        values: list[Any] = []
        if isinstance(check, InfoFlow):
            values = [check.value]
        elif isinstance(check, AnswerCheck):
            values = check.expected if isinstance(check.expected, list) else [check.expected]
        for value in values:
            for form in _forms(value):
                if form and form.lower() in text:
                    found.append(f"the instruction gives away {form!r} ({check.id})")
                    break
    return found


def _forms(value: Any) -> list[str]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        if value <= 0:
            return []
        forms = [f"{float(value):,.2f}", f"{float(value):.2f}"]
        if float(value).is_integer() and abs(value) >= 100:
            forms.append(str(int(value)))
        return forms
    text = str(value)
    return [text] if len(text) >= 4 else []


def run_plan(call: Callable[[str, str, dict[str, Any]], Any], plan: Sequence[PlanStep], *, stop: bool) -> list[str]:
    """Run concrete calls; returns the errors (a reference stops at the first, a counterfactual goes on)."""
    errors: list[str] = []
    for n, step in enumerate(plan, 1):
        result = call(step.service, step.tool, dict(step.arguments))
        if not result.success:
            errors.append(f"step {n} {step.service}.{step.tool} failed: {result.error_message}")
            if stop:
                break
    return errors


def verify_task(task: TaskSpec, runner: Any) -> list[str]:
    """Verify on a ``composer.runner.Runner`` for the task's world seed."""
    missing = [s for s in task.services if s not in runner.catalog.services]
    if missing:
        return [f"services not available: {', '.join(missing)}"]
    try:
        runner.fresh(task.setup)
    except Exception as exc:  # noqa: BLE001 - a setup record the store refuses is a broken task, said in one line
        return [f"setup records cannot be applied ({type(exc).__name__}: {exc})"]
    errors = run_plan(runner.call, task.plan, stop=True)
    reference = (runner.diff(), errors)
    cf_diffs = []
    for cf in task.counterfactuals:
        runner.fresh(task.setup)
        run_plan(runner.call, cf.plan, stop=False)
        cf_diffs.append(runner.diff())
    return judge(task, reference, cf_diffs)


def verify_task_exact(task: TaskSpec) -> list[str]:
    """Verify the way the harness grades: ``episode_for(task)`` and ``Episode.diff()`` (slow, exact)."""
    from mcp_services.tasks.episodes import episode_for

    with episode_for(task) as episode:
        errors = run_plan(episode.call, task.plan, stop=True)
        reference = (episode.diff(), errors)
    cf_diffs = []
    for cf in task.counterfactuals:
        with episode_for(task) as episode:
            run_plan(episode.call, cf.plan, stop=False)
            cf_diffs.append(episode.diff())
    return judge(task, reference, cf_diffs)
