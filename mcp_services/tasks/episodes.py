"""The episode a task runs in: its services and distractor services mounted, its setup applied."""

from __future__ import annotations

from pathlib import Path

from mcp_services.kernel.episode import Episode
from mcp_services.tasks.spec import TaskSpec


def episode_for(task: TaskSpec, *, db_dir: Path | None = None) -> Episode:
    """A fresh private episode for ``task`` (file-backed under ``db_dir`` if given)."""
    episode = Episode.create(task.mounted_services, task.world_seed, db_dir=db_dir)
    try:
        # A reopened file-backed episode records that its setup was applied: never apply it twice
        # (re-adding a setup row the agent deleted would hide what the agent did).
        if task.setup and episode.setup_marker() != task.id:
            episode.apply_setup((record.model_dump() for record in task.setup), marker=task.id)
    except BaseException:
        episode.close()
        raise
    return episode
