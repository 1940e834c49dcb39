"""The short composed tasks both experiments run on (a 135M model on a CPU, a few GRPO steps on a GPU).

Tasks come from the composer's library function called as ``generate(GenerateConfig(n=..., seed=...,
services=...))`` and nothing else, so the experiments keep working while the composer's other
settings change. "Short" is the experiments' own choice: tasks whose reference plan has more than
``max_calls`` calls are left out here, after composition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp_services.tasks.spec import TaskSpec
from training.errors import TrainingInputError

__all__ = ["SHORT_TASK_SERVICES", "compose_short_tasks"]

#: Services whose workflow is short and solvable from the request and the plan's own tools (a
#: colleague asks in chat what a customer still owes: look the company up in accounting, answer the
#: balance): within SmolLM2-135M's reach on a CPU. Most other workflows start by reading a trigger
#: (an email, a text) that their reference plan does not read, so a view of the plan's tools alone
#: cannot solve them.
SHORT_TASK_SERVICES: tuple[str, ...] = ("accounting", "chat")


def compose_short_tasks(
    n: int, seed: int, services: Sequence[str], max_calls: int, log: Callable[[str], None]
) -> list[TaskSpec]:
    """The composer's verified tasks of ``n`` candidates over ``services`` (seed ``seed``) with at most
    ``max_calls`` calls in their reference plan; same arguments, same tasks."""
    from composer.generate import GenerateConfig, generate

    tasks, report = generate(GenerateConfig(n=n, seed=seed, services=tuple(services)))
    short = [task for task in tasks if len(task.plan) <= max_calls]
    log(f"composed {len(tasks)} tasks ({report.summary()}); {len(short)} have at most {max_calls} calls")
    if not short:
        raise TrainingInputError(
            f"none of the {len(tasks)} tasks composed over {', '.join(services)} has at most {max_calls} calls",
            "raise --max-calls, or name other services",
        )
    return short
