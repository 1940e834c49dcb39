"""Files written whole or not at all get the mode a plain ``open`` gives them: the umask's, not 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_services.files import atomic_writer, write_atomically
from mcp_services.tasks.spec import load_tasks, write_tasks

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "task_contract_v1.jsonl"


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_task_file_is_readable_by_the_group_and_others_as_the_umask_allows(umask: None, tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    tasks = load_tasks(FIXTURE)
    assert write_tasks(path, tasks) == len(tasks)
    assert mode(path) == 0o644 and [t.id for t in load_tasks(path)] == [t.id for t in tasks]
    os.umask(0o077)
    write_tasks(path, tasks)
    assert mode(path) == 0o600


def test_a_given_mode_is_kept_and_a_failed_write_leaves_the_old_file(umask: None, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    assert write_atomically(path, "{}", mode=0o600) == 2 and mode(path) == 0o600
    with pytest.raises(RuntimeError), atomic_writer(path) as handle:
        handle.write(b"half")
        raise RuntimeError("crash")
    assert path.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == ["config.json"]
