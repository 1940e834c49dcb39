"""Over HTTP each rollout reaches its own task server and no other; a server that cannot start is an
error, never a graded rollout."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.agents import ReferenceAgent
from harness.backends import LocalBackend
from harness.collect import CollectConfig, collect
from harness.evaluate import read_run
from harness.errors import TaskServerError
from harness.mcp_tools import McpTransport
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import make_transport
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskSpec

pytestmark = pytest.mark.e2e

_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parents[1]


def reference_rollout(task: TaskSpec, transport: Any) -> Trajectory:
    return asyncio.run(run_episode(RolloutJob(task, 0, 7), ReferenceAgent([task]), transport, RunnerConfig()))


def start_decoy(argv: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], int]:
    """A server on a free port of 127.0.0.1 that is not the episode's: its process and port."""
    process = subprocess.Popen(argv, cwd=_REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    assert process.stderr is not None
    line = process.stderr.readline()  # the URL line, once it listens
    found = re.search(r"127\.0\.0\.1:(\d+)/mcp", line)
    assert found, line
    return process, int(found.group(1))


DECOYS = ["another episode's task server", "an MCP server with no token"]


@pytest.fixture()
def decoy(request: pytest.FixtureRequest, tasks_file: Path, tasks: list[TaskSpec]) -> Iterator[int]:
    if request.param == "an MCP server with no token":
        argv = [sys.executable, "-m", "mcp_services", "serve", "crm", "--transport", "http", "--port", "0"]
        process, port = start_decoy(argv)
    else:  # the same task, even: only the token tells them apart
        argv = [sys.executable, "-m", "harness.task_server", "--tasks", str(tasks_file), "--task", tasks[0].id,
                "--transport", "http", "--auth-token-env", "OTHER_EPISODE_TOKEN"]
        process, port = start_decoy(argv, {"OTHER_EPISODE_TOKEN": "another-episode-token-0123456789"})
    try:
        yield port
    finally:
        process.terminate()
        process.wait(30)


def point_at(monkeypatch: pytest.MonkeyPatch, port: int, tries: int) -> list[int]:
    """Make the first ``tries`` starts of a task server connect to ``port`` instead of its own."""
    real = McpTransport._read_port
    seen: list[int] = []

    async def read_port(self: McpTransport, *args: Any) -> int:
        own = await real(self, *args)
        seen.append(own)
        return port if len(seen) <= tries else own

    monkeypatch.setattr(McpTransport, "_read_port", read_port)
    return seen


@pytest.mark.parametrize("decoy", DECOYS, indirect=True)
def test_a_rollout_pointed_at_a_decoy_refuses_it_and_reaches_its_own_server_on_the_retry(
    decoy: int, tasks: list[TaskSpec], monkeypatch: pytest.MonkeyPatch
) -> None:
    local = reference_rollout(tasks[0], make_transport("inprocess"))
    seen = point_at(monkeypatch, decoy, tries=1)
    remote = reference_rollout(tasks[0], McpTransport("http"))
    assert len(seen) == 2  # the decoy was refused, the second server was the episode's own
    assert remote.without_timings() == local.without_timings() and remote.passed


@pytest.mark.parametrize("decoy", DECOYS[1:], indirect=True)  # the 401 of the other one: see the retry test
def test_a_rollout_that_only_ever_reaches_a_decoy_is_an_error_never_a_graded_trajectory(
    decoy: int, tasks: list[TaskSpec], tasks_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, decoy, tries=2)
    config = CollectConfig(out=tmp_path / "run", tasks_file=tasks_file, concurrency=1, progress=False)
    backend = LocalBackend(ReferenceAgent(tasks), McpTransport("http"), config.runner, 1)
    with pytest.raises(TaskServerError) as error:
        collect(config, backend=backend, log=lambda _: None)
    message = str(error.value)
    assert "could not be started (2 tries)" in message and f"port {decoy}" in message
    assert "is not this episode's task server" in message
    assert not (tmp_path / "run" / "trajectories.jsonl").read_text()  # nothing was graded


def test_an_answer_without_the_episodes_proof_ends_the_rollout_ungraded(
    tasks: list[TaskSpec], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if the episode's server were gone mid-rollout and another answered on its port."""
    import harness.mcp_tools as mcp_tools

    monkeypatch.setattr(mcp_tools, "server_proof", lambda token: "a proof no server shows")
    with pytest.raises(TaskServerError, match="did not come from this episode's task server"):
        reference_rollout(tasks[0], McpTransport("http"))


def test_a_task_server_that_exits_before_it_listens_is_tried_twice_then_an_error_with_its_log(
    tasks: list[TaskSpec], tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    broken = tmp_path / "python"
    broken.write_text(f"#!/bin/sh\necho start >> {starts}\necho 'ImportError: no module named compoworld' >&2\n"
                      "exit 3\n")
    broken.chmod(0o755)
    with pytest.raises(TaskServerError) as error:
        reference_rollout(tasks[0], McpTransport("http", python=str(broken)))
    message = str(error.value)
    assert starts.read_text().count("start") == 2
    assert "could not be started (2 tries)" in message and "exited with code 3 before it listened" in message
    assert "no module named compoworld" in message


@pytest.mark.slow
def test_rollouts_over_http_with_ports_churning_all_the_while_are_those_of_the_in_process_run(
    tasks: list[TaskSpec], tasks_file: Path, tmp_path: Path
) -> None:
    """200 rollouts at concurrency 32 on a bigger machine: COMPOWORLD_PORT_RACE_ROLLOUTS=200
    COMPOWORLD_PORT_RACE_CONCURRENCY=32 (the suite runs a smaller size: each server takes ~1.5 s of
    CPU to start, and this machine has 2 cores)."""
    n = int(os.environ.get("COMPOWORLD_PORT_RACE_ROLLOUTS", "12"))
    concurrency = int(os.environ.get("COMPOWORLD_PORT_RACE_CONCURRENCY", "12"))
    rollouts = math.ceil(n / len(tasks))
    counted = tmp_path / "ports-bound"
    churner = subprocess.Popen([sys.executable, str(_HERE / "port_churner.py"), str(counted), str(os.getpid())],
                               cwd=_REPO, env={**os.environ, "PYTHONPATH": str(_REPO)})
    try:
        runs = {}
        for transport in ("inprocess", "http"):
            config = CollectConfig(out=tmp_path / transport, tasks_file=tasks_file, rollouts=rollouts,
                                   concurrency=concurrency, transport=transport, progress=False)
            collect(config, agent=ReferenceAgent(tasks), log=lambda _: None)
            runs[transport] = {t.key: t.without_timings() for t in read_run(config.out)}
        assert churner.poll() is None, "the churner stopped early"
    finally:
        churner.terminate()
        churner.wait(30)
    assert int(counted.read_text()) >= 50  # it bound and released ports all the while
    assert len(runs["http"]) == rollouts * len(tasks)
    assert runs["http"] == runs["inprocess"]
    assert all(json.loads(json.dumps(t))["passed"] for t in runs["http"].values())


def kill_servers_when(monkeypatch: pytest.MonkeyPatch, where: str, times: int) -> list[int]:
    """Kill -9 the episode's task server ``times`` times: before it lists its tools (``"list"``) or
    after the rollout's first tool call (``"call"``); the pids of the servers started."""
    import signal

    import harness.mcp_tools as mcp_tools

    started: list[int] = []
    killed: list[int] = []
    real_read_port, real_list, real_call = McpTransport._read_port, mcp_tools._list_tools, mcp_tools.McpSession.call

    async def read_port(self: McpTransport, fd: int, process: Any, log: Path) -> int:
        started.append(process.pid)
        return await real_read_port(self, fd, process, log)

    def kill_latest() -> None:
        if len(killed) < times:
            os.kill(started[-1], signal.SIGKILL)
            killed.append(started[-1])

    async def list_tools(client: Any) -> list[dict[str, Any]]:
        if where == "list":
            kill_latest()
        return await real_list(client)

    async def call(self: Any, *args: Any) -> Any:
        outcome = await real_call(self, *args)
        if where == "call":
            kill_latest()
        return outcome

    monkeypatch.setattr(McpTransport, "_read_port", read_port)
    monkeypatch.setattr(mcp_tools, "_list_tools", list_tools)
    monkeypatch.setattr(mcp_tools.McpSession, "call", call)
    return started


def test_a_task_server_killed_before_it_lists_its_tools_is_started_again_and_the_rollout_runs(
    tasks: list[TaskSpec], monkeypatch: pytest.MonkeyPatch
) -> None:
    local = reference_rollout(tasks[0], make_transport("inprocess"))
    started = kill_servers_when(monkeypatch, "list", times=1)
    remote = reference_rollout(tasks[0], McpTransport("http"))
    assert len(started) == 2
    assert remote.without_timings() == local.without_timings() and remote.passed


def test_a_task_server_killed_mid_rollout_ends_its_calls_and_the_rollout_is_graded_on_what_it_kept(
    tasks: list[TaskSpec], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: closing the client of a dead server raised the failed request again (a raw httpx
    ConnectError in a task group), and a restarted collect died with its traceback."""
    kill_servers_when(monkeypatch, "call", times=1)
    trajectory = reference_rollout(tasks[0], McpTransport("http"))
    assert trajectory.stop_reason == "transport_error" and not trajectory.passed
    assert (trajectory.error or "").startswith("the task server stopped answering: ")


def test_collect_whose_task_servers_keep_dying_says_so_in_one_line(
    tasks_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    kill_servers_when(monkeypatch, "list", times=1_000)
    argv = ["collect", "--tasks", str(tasks_file), "--agent", "reference", "--transport", "http", "--concurrency", "1",
            "--out", str(tmp_path / "run"), "--no-progress"]
    assert main(argv) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0].startswith("harness: error: the http task server of task ")
    assert "could not be started (2 tries)" in lines[0] and "stopped answering before it listed its tools" in lines[0]
