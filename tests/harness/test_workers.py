"""``--workers``: episodes in worker processes give the same trajectories, and their failures stop the run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.agents import AGENTS, AgentConfig
from harness.collect import CollectConfig, collect
from harness.errors import HarnessInputError
from harness.runner import RunnerConfig
from harness.trajectory import Trajectory

pytestmark = pytest.mark.e2e


def records(out: Path) -> list[dict]:
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    return sorted((Trajectory.from_line(line).without_timings() for line in lines),
                  key=lambda r: (r["task_id"], r["rollout"]))


def test_worker_processes_give_the_same_trajectories_as_one_process(tmp_path: Path, tasks_file: Path) -> None:
    for workers in (1, 2):
        config = CollectConfig(out=tmp_path / str(workers), tasks_file=tasks_file, rollouts=4, workers=workers,
                               progress=False, runner=RunnerConfig(mode="discover"))
        assert collect(config, log=lambda _: None).n_new == 12
    assert records(tmp_path / "1") == records(tmp_path / "2")
    manifest = json.loads((tmp_path / "2" / "manifest.json").read_text())
    assert manifest["config"]["workers"] == 2 and manifest["status"]["state"] == "complete"


def test_a_failure_inside_a_worker_stops_the_run_with_its_message(
    tmp_path: Path, tasks_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # collect refuses a vllm agent without vLLM before it starts (check_agent); without that check here,
    # the agent fails where it first generates: inside a worker.
    monkeypatch.setitem(AGENTS, "vllm", dataclasses.replace(AGENTS["vllm"], check=None))
    config = CollectConfig(out=tmp_path / "run", tasks_file=tasks_file, workers=2, progress=False,
                           agent=AgentConfig("vllm:/no/such/model"))
    with pytest.raises(HarnessInputError, match="vllm agents need the vllm extra"):
        collect(config, log=lambda _: None)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"]["state"].startswith("stopped")
