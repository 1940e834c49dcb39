"""One task picked out of a task file by id (or a unique id prefix), for the one-task commands."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessInputError
from mcp_services.tasks.spec import TaskFileError, TaskSpec, load_tasks

__all__ = ["load_task"]


def load_task(tasks_file: Path, task_id: str) -> TaskSpec:
    """The task; ``HarnessInputError`` (one line) for a missing or unreadable file, a task file of
    another schema version, or an id that names no task or more than one."""
    try:
        tasks = load_tasks(tasks_file)
    except TaskFileError as exc:
        raise HarnessInputError(str(exc)) from None
    exact = [t for t in tasks if t.id == task_id]
    matches = exact or [t for t in tasks if task_id and t.id.startswith(task_id)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise HarnessInputError(f"task id {task_id!r} is ambiguous in {tasks_file}: it starts {len(matches)} task ids")
    raise HarnessInputError(f"no task with id {task_id!r} in {tasks_file} ({len(tasks)} tasks)")
