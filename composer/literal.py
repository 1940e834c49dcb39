"""The literal agent: a near miss that does exactly what the request's words say and nothing the data decides.

It takes the default branch (ignores the rule), the first match or the look-alike record (falls for the trap),
never checks a premise (does what was asked even where the work is done already or the duplicate is none), and
never reads a procedure (skips the follow-ups it asks for). A task teaches judgment where this agent fails it;
``composer stats`` reports the share of kept tasks it fails (it is measured, not required of each task).

Traps, the rule and the first match are counterfactuals every kept task is verified to fail already: a task
with one of them fails the literal agent. The premise and the procedure are replayed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcp_services.kernel.diff import StateDiff
from mcp_services.tasks.spec import TaskSpec

from composer.counterfactuals import stated_answer, without
from composer.plan import StepSpec
from composer.runner import Run, Runner
from composer.scenario import Scenario

#: Counterfactuals a literal agent's run contains (verified to fail every task that has them).
LITERAL_NEAR_MISSES = ("trap", "ignores-policy", "first-match")


def literal_plans(s: Scenario) -> list[list[StepSpec]]:
    """The plans of a literal agent that the kept counterfactuals do not cover: doing what a false premise asks, and
    leaving out what a procedure asks."""
    plans: list[list[StepSpec]] = []
    if s.literal_writes or s.literal_steps:
        plans.append([*(s.literal_steps.get(j, spec) for j, spec in enumerate(s.specs)), *s.literal_writes])
    procedure = [j for j, note in enumerate(s.notes) if note.stage == "follow-up" and not note.guided and note.say]
    if procedure:
        plan = list(s.specs)
        for j in sorted(procedure, reverse=True):
            plan = without(plan, j)
        plans.append(plan)
    return plans


def literal_fails(
    s: Scenario, runner: Runner, task: TaskSpec, reference: Run, reference_diff: Mapping[str, StateDiff]
) -> bool:
    """Whether the literal agent fails ``task`` (a draft whose checks are final)."""
    if any(cf.id.startswith(LITERAL_NEAR_MISSES) for cf in task.counterfactuals):
        return True
    for plan in literal_plans(s):
        runner.fresh(s.setup)
        _, diff = runner.replay(s.specs, reference, reference_diff, plan)
        if not task.grade(diff, stated_answer(s)).passed:
            return True
    return False


def literal_share(tasks: Sequence[TaskSpec]) -> float:
    """The share of ``tasks`` the literal agent fails (as each task recorded it when it was composed)."""
    return round(sum(1 for t in tasks if t.stats.get("literal_fails")) / len(tasks), 3) if tasks else 0.0


__all__ = ["LITERAL_NEAR_MISSES", "literal_fails", "literal_plans", "literal_share"]
