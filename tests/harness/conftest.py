"""Fixtures for the harness tests: hand-made crm tasks and a task file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # harness_fixtures, fake_openai

from mcp_services.tasks.spec import TaskSpec, write_tasks  # noqa: E402
from harness_fixtures import crm_tasks  # noqa: E402


@pytest.fixture(scope="session")
def tasks() -> list[TaskSpec]:
    return crm_tasks()


@pytest.fixture()
def tasks_file(tmp_path: Path, tasks: list[TaskSpec]) -> Path:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks)
    return path
