"""RL data: a task file → the tasks by id, and the prompt dataset TRL's ``GRPOTrainer`` samples from.

One row per task. ``prompt`` is what the harness shows the model at the start of an episode (its
system prompt and the task's instruction); the rollout builds the real conversation itself, so the
prompt is for TRL's bookkeeping and logs. The rollout function receives only the prompts, so the
last prompt message also carries the task id (``TASK_KEY``); the ``task_id`` column is what the
reward function groups by.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from training.errors import TrainingInputError

if TYPE_CHECKING:
    from datasets import Dataset

    from mcp_services.tasks.spec import TaskSpec

__all__ = ["TASK_KEY", "load_rl_tasks", "prompt_dataset", "prompt_messages", "task_id_of"]

#: The key of the prompt message that names the task (an extra key chat templates never read).
TASK_KEY = "compoworld_task_id"


def load_rl_tasks(path: Path) -> list[TaskSpec]:
    """The tasks of ``path``; every one must have rubric criteria, or there is nothing to reward."""
    from mcp_services.tasks.spec import TaskFileError, load_tasks

    try:
        tasks = load_tasks(path)
    except TaskFileError as error:
        raise TrainingInputError(str(error)) from None
    no_rubric = [task.id for task in tasks if not task.rubric]
    if no_rubric:
        raise TrainingInputError(
            f"{len(no_rubric)} task(s) in {path} have no rubric criteria (e.g. {no_rubric[0]}): nothing to reward"
        )
    return tasks


def prompt_messages(task: TaskSpec, mode: str) -> list[dict[str, Any]]:
    """The harness's opening messages for ``task``, the last one tagged with the task id."""
    from harness.prompt import system_prompt, user_prompt

    return [
        {"role": "system", "content": system_prompt(task, mode)},  # type: ignore[arg-type]
        {"role": "user", "content": user_prompt(task), TASK_KEY: task.id},
    ]


def task_id_of(prompt: Sequence[dict[str, Any]]) -> str:
    """The task id a prompt row was built for."""
    task_id = prompt[-1].get(TASK_KEY) if prompt else None
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"prompt has no {TASK_KEY}: it was not built by training.rl_data.prompt_dataset")
    return task_id


def prompt_dataset(tasks: Sequence[TaskSpec], mode: str) -> Dataset:
    """One row per task: ``prompt`` (conversational) and ``task_id``."""
    from datasets import Dataset

    rows = [{"prompt": prompt_messages(task, mode), "task_id": task.id} for task in tasks]
    # Arrow unifies the message structs: the system message gets TASK_KEY = None, which nothing reads.
    return Dataset.from_list(rows)
