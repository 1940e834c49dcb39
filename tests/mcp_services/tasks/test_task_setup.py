"""A task whose setup clashes with the world this version seeds is a clear task-file error, not a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as harness_main
from mcp_services.kernel import Episode
from mcp_services.tasks.episodes import TaskSetupError, episode_for
from mcp_services.tasks.spec import SetupRecord, TaskSpec, load_tasks

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "task_contract_v1.jsonl"


def _stale_task() -> TaskSpec:
    """A task whose setup adds a contact the seeded CRM already holds (as after a change of seed data)."""
    task = next(t for t in load_tasks(FIXTURE) if "crm" in t.services and t.setup)
    with Episode.create(["crm"], task.world_seed) as episode:
        seeded = episode.stores["crm"].dump()["contacts"]["ct_0001"]
    clash = SetupRecord(service="crm", table="contacts", row=seeded)
    return task.model_copy(update={"setup": [*task.setup, clash]})


def test_a_setup_that_clashes_with_the_seed_says_to_compose_the_file_again() -> None:
    task = _stale_task()
    with pytest.raises(TaskSetupError, match=rf"task {task.id}: its setup does not fit world .*compose it again"):
        episode_for(task)


def test_harness_collect_reports_a_stale_task_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(_stale_task().model_dump(mode="json")) + "\n", encoding="utf-8")
    code = harness_main(["collect", "--tasks", str(tasks), "--out", str(tmp_path / "run"), "--no-progress"])
    assert code == 2
    assert "compose it again" in capsys.readouterr().err
