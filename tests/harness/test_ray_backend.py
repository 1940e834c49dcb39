"""The Ray backend: the same trajectories as the local backend, the same resume guarantees, clear errors.

One local Ray instance (2 CPUs, no dashboard, no auth) serves the whole session; starting it takes
most of this module's time, so the tests that use it are marked slow.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.agents import AgentConfig
from harness.cli import main
from harness.collect import CollectConfig, collect
from harness.errors import AgentUnavailableError, HarnessInputError
from harness.evaluate import read_run
from harness.runfile import scan_run
from mcp_services.tasks.spec import TaskSpec

ray = pytest.importorskip("ray")

from ray_agents import DownAgent, SeededAgent, missing_model  # noqa: E402

from harness.ray_backend import RayBackend, RayOptions, RayUnavailableError, check_address  # noqa: E402

_HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in ("RAY_AUTH_MODE", "PYTHONPATH")}
    os.environ["RAY_AUTH_MODE"] = "disabled"
    # Workers inherit this: they must import ray_agents (the helper agents) by name.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(_HERE), saved["PYTHONPATH"]) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _config(out: Path, rollouts: int) -> CollectConfig:
    return CollectConfig(out=out, agent=AgentConfig("reference"), rollouts=rollouts, concurrency=4, progress=False)


def _ray(config: CollectConfig, agent: AgentConfig | Any) -> RayBackend:
    return RayBackend(agent, config.runner, concurrency=config.concurrency, options=RayOptions(actors=2))


def _records(out: Path) -> dict[tuple[str, int], dict[str, Any]]:
    return {t.key: t.without_timings() for t in read_run(out)}


@pytest.mark.slow
def test_harness_collect_on_ray_writes_the_trajectories_of_the_local_backend(
    ray_cluster: None, tmp_path: Path, tasks_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["collect", "--tasks", str(tasks_file), "--rollouts", "2", "--concurrency", "4", "--no-progress"]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert main([*common, "--out", str(tmp_path / "ray"), "--backend", "ray", "--ray-actors", "2"]) == 0
    assert "6 of 6 new rollouts passed" in capsys.readouterr().out
    assert _records(tmp_path / "ray") == _records(tmp_path / "local")


@pytest.mark.slow
@pytest.mark.e2e
def test_ray_actors_over_http_reach_their_own_task_servers_and_write_the_in_process_trajectories(
    ray_cluster: None, tmp_path: Path, tasks_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["collect", "--tasks", str(tasks_file), "--concurrency", "4", "--no-progress"]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    ray_http = ["--backend", "ray", "--ray-actors", "2", "--transport", "http"]
    assert main([*common, "--out", str(tmp_path / "ray"), *ray_http]) == 0  # each server's own token, checked
    assert "3 of 3 new rollouts passed" in capsys.readouterr().out
    assert _records(tmp_path / "ray") == _records(tmp_path / "local")


@pytest.mark.slow
def test_ray_finishes_a_partial_local_run_with_the_trajectories_the_local_backend_gives(
    ray_cluster: None, tmp_path: Path, tasks: list[TaskSpec]
) -> None:
    collect(_config(tmp_path / "local", 3), tasks=tasks, agent=SeededAgent(tasks), log=lambda m: None)
    collect(_config(tmp_path / "mixed", 1), tasks=tasks, agent=SeededAgent(tasks), log=lambda m: None)

    config = _config(tmp_path / "mixed", 3)
    report = collect(config, tasks=tasks, backend=_ray(config, SeededAgent), log=lambda m: None)

    assert report.n_existing == 3 and report.n_new == 6
    scan = scan_run(tmp_path / "mixed" / "trajectories.jsonl")
    assert not scan.problems and scan.torn_offset is None and len(scan.trajectories) == 9
    assert _records(tmp_path / "mixed") == _records(tmp_path / "local")
    # The seeds reached the actors intact: some rollouts made the seeded extra call, some did not.
    assert {t.n_tool_calls - t.task_info["plan_length"] for t in scan.trajectories} == {0, 1}


@pytest.mark.slow
def test_a_model_that_is_down_in_an_actor_stops_the_run_and_the_run_resumes(
    ray_cluster: None, tmp_path: Path, tasks: list[TaskSpec]
) -> None:
    config = _config(tmp_path / "run", 2)
    down = functools.partial(DownAgent, tasks[1].id)
    with pytest.raises(AgentUnavailableError, match="is down"):
        collect(config, tasks=tasks, backend=_ray(config, down), log=lambda m: None)
    scan = scan_run(tmp_path / "run" / "trajectories.jsonl")
    assert not scan.problems and scan.torn_offset is None
    assert all(t.task_id != tasks[1].id for t in scan.trajectories)

    report = collect(config, tasks=tasks, log=lambda m: None)  # resumed locally: the backends are interchangeable
    assert report.n_existing + report.n_new == 6
    assert len(read_run(tmp_path / "run")) == 6


@pytest.mark.slow
def test_an_agent_that_cannot_be_built_on_a_worker_reports_its_own_error(
    ray_cluster: None, tmp_path: Path, tasks: list[TaskSpec]
) -> None:
    config = _config(tmp_path / "run", 1)
    with pytest.raises(HarnessInputError, match="no model at /models/missing"):
        collect(config, tasks=tasks, backend=_ray(config, missing_model), log=lambda m: None)
    assert scan_run(tmp_path / "run" / "trajectories.jsonl").trajectories == []


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_an_address_where_no_cluster_answers_is_one_clear_error(
    address: str, tasks_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(RayUnavailableError, match="no Ray cluster answers at"):
        check_address(address)
    args = ["collect", "--tasks", str(tasks_file), "--out", str(tmp_path / "run"), "--no-progress"]
    assert main([*args, "--backend", "ray", "--address", address]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"harness: error: no Ray cluster answers at {address}") and "\n" not in err


def test_ray_options_without_the_ray_backend_are_refused(
    tasks_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["collect", "--tasks", str(tasks_file), "--out", str(tmp_path / "run"), "--no-progress"]
    assert main([*args, "--address", "auto"]) == 2
    assert "--address and --ray-actors need --backend ray" in capsys.readouterr().err
    assert main([*args, "--backend", "ray", "--workers", "2"]) == 2
    assert "--workers is for the local backend" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["http://head:6379", "head", "ray://:10001"])
def test_an_address_that_is_not_a_ray_address_is_rejected(address: str) -> None:
    with pytest.raises(RayUnavailableError, match="--address"):
        check_address(address)


@pytest.mark.parametrize(("verbose", "level"), [(False, "ERROR"), (True, "INFO")])
def test_ray_logs_only_its_errors_unless_verbose(monkeypatch: pytest.MonkeyPatch, verbose: bool, level: str) -> None:
    """Issue 33: importing ray sets its logger to INFO, so a run printed Ray's INFO and WARNING lines."""
    import logging

    import harness.ray_backend as ray_backend

    started: list[dict[str, Any]] = []

    class FakeRay:
        @staticmethod
        def is_initialized() -> bool:
            return False

        @staticmethod
        def init(**kwargs: Any) -> None:
            started.append(kwargs)

    monkeypatch.setattr(ray_backend, "_import_ray", lambda: FakeRay)
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.INFO if verbose else logging.WARNING)  # as configure_logging(verbose) leaves it
    try:
        assert ray_backend.connect(RayOptions()) is True
    finally:
        root.setLevel(before)
    assert logging.getLevelName(started[0]["logging_level"]) == level and started[0]["log_to_driver"] is False
