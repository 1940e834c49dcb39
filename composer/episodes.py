"""The episode a task runs in: its services and distractor services mounted, its setup applied."""

from __future__ import annotations

from pathlib import Path

from composer.task import TaskSpec
from mcp_services.kernel.episode import Episode


def episode_for(task: TaskSpec, *, db_dir: Path | None = None) -> Episode:
    """A fresh private episode for ``task`` (file-backed under ``db_dir`` if given)."""
    episode = Episode.create(task.mounted_services, task.world_seed, db_dir=db_dir)
    try:
        if task.setup and (db_dir is None or not _already_set_up(episode, task)):
            episode.apply_setup(record.model_dump() for record in task.setup)
    except BaseException:
        episode.close()
        raise
    return episode


def _already_set_up(episode: Episode, task: TaskSpec) -> bool:
    """A reopened file-backed episode already holds the setup rows (their keys exist)."""
    first = task.setup[0]
    table = episode.stores[first.service].table(first.table)
    pk = [c.name for c in table.primary_key.columns]
    key = "|".join(str(first.row.get(k)) for k in pk)
    return key in episode.stores[first.service].dump().get(first.table, {})
