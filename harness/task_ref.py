"""One task picked out of a task file by id (or a unique id prefix), for the one-task commands."""

from __future__ import annotations

from pathlib import Path

from mcp_services.tasks.spec import TaskSpec, find_task, load_tasks

__all__ = ["load_task"]


def load_task(tasks_file: Path, task_id: str) -> TaskSpec:
    """The task; an ``InputError`` (one line) for a missing or unreadable file, a task file of
    another schema version, or an id that names no task or more than one."""
    return find_task(load_tasks(tasks_file), task_id, str(tasks_file))
