"""A file-backed episode folder (``--db DIR``) that belongs to one task.

``harness serve --db DIR`` keeps a task's state in SQLite files there, so what a person does
survives a restart and ``harness grade`` can read it afterwards. A small marker file names the
task, so a folder is never served or graded as another task's state by mistake.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.errors import HarnessInputError
from mcp_services.tasks.spec import TaskSpec

__all__ = ["MARKER_FILE", "check_db", "claim_db", "db_files"]

MARKER_FILE = "compoworld-task.json"


def db_files(task: TaskSpec, db_dir: Path) -> list[Path]:
    """The state file of each mounted service (the kernel's layout: ``DIR/<service>.sqlite``)."""
    return [db_dir / f"{service}.sqlite" for service in task.mounted_services]


def _owner(db_dir: Path) -> str | None:
    path = db_dir / MARKER_FILE
    if not path.exists():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("task_id")
    except (json.JSONDecodeError, AttributeError):
        raise HarnessInputError(f"{path} is not a CompoWorld task marker; use another --db folder") from None
    return str(value) if value is not None else None


def claim_db(db_dir: Path, task: TaskSpec) -> None:
    """Mark ``db_dir`` as ``task``'s (creating it); refuse a folder that holds another task's state."""
    if db_dir.exists() and not db_dir.is_dir():
        raise HarnessInputError(f"--db {db_dir} exists and is not a folder")
    owner = _owner(db_dir) if db_dir.exists() else None
    if owner is not None and owner != task.id:
        raise HarnessInputError(
            f"--db {db_dir} holds the state of task {owner}, not {task.id}; use another folder (one per task)"
        )
    if owner is None:
        if db_dir.exists() and any(p.exists() for p in db_files(task, db_dir)):
            raise HarnessInputError(f"--db {db_dir} holds state files of an unknown task; use an empty folder")
        db_dir.mkdir(parents=True, exist_ok=True)
        tmp = db_dir / f".{MARKER_FILE}.tmp"
        tmp.write_text(json.dumps({"task_id": task.id}) + "\n", encoding="utf-8")
        os.replace(tmp, db_dir / MARKER_FILE)


def check_db(db_dir: Path, task: TaskSpec) -> None:
    """``db_dir`` holds ``task``'s served state: its marker and every service's file."""
    if not db_dir.is_dir():
        raise HarnessInputError(
            f"--db {db_dir} is not a folder; serve the task with `harness serve --db {db_dir}` first"
        )
    owner = _owner(db_dir)
    if owner is None:
        raise HarnessInputError(
            f"--db {db_dir} holds no served task (no {MARKER_FILE}); pass the folder given to `harness serve --db`"
        )
    if owner != task.id:
        raise HarnessInputError(f"--db {db_dir} holds the state of task {owner}, not {task.id}")
    missing = [p.name for p in db_files(task, db_dir) if not p.exists()]
    if missing:
        raise HarnessInputError(f"--db {db_dir} lacks the state of {', '.join(missing)}; was the task served there?")
