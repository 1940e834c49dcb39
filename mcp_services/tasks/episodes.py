"""The episode a task runs in: its services and distractor services mounted, its setup applied."""

from __future__ import annotations

from pathlib import Path

from mcp_services.kernel.episode import Episode
from mcp_services.kernel.errors import ToolError
from mcp_services.tasks.spec import TaskFileError, TaskSpec


class TaskSetupError(TaskFileError):
    """A task's setup does not fit the world as this version seeds it: the file was composed by another version."""


def episode_for(task: TaskSpec, *, db_dir: Path | None = None) -> Episode:
    """A fresh private episode for ``task`` (file-backed under ``db_dir`` if given)."""
    episode = Episode.create(task.mounted_services, task.world_seed, shape=task.world_shape, db_dir=db_dir)
    try:
        # A reopened file-backed episode records that its setup was applied: never apply it twice
        # (re-adding a setup row the agent deleted would hide what the agent did).
        if task.setup and episode.setup_marker() != task.id:
            apply_task_setup(episode, task, marker=task.id)
    except BaseException:
        episode.close()
        raise
    return episode


def apply_task_setup(episode: Episode, task: TaskSpec, *, marker: str | None = None) -> None:
    """Insert ``task``'s setup records into ``episode``; they become its initial state."""
    try:
        episode.apply_setup((record.model_dump() for record in task.setup), marker=marker)
    except ToolError as exc:  # a setup row that clashes with the seeded world (an id or email the seed now uses)
        raise TaskSetupError(
            f"task {task.id}: its setup does not fit world {task.world_seed} as this version of CompoWorld seeds it "
            f"({exc.message}); the task file was composed by another version: compose it again (composer generate)"
        ) from None
