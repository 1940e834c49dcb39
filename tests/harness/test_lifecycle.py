"""What the harness starts ends with it: task servers and workers after a kill -9, and their folders."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.mcp_tools import EPISODE_FOLDER_PREFIX, sweep_episode_folders

REPO = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds processes through /proc")


def processes(match: Callable[[list[str]], bool]) -> list[int]:
    """Pids of the live (not zombie) processes whose argv ``match`` accepts."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = [a.decode(errors="replace") for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue  # it ended while we looked
        if state != "Z" and match(argv):
            found.append(int(entry.name))
    return found


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture()
def private_tmp(tmp_path: Path) -> Iterator[Path]:
    """A temp folder of its own for the processes a test starts (their episode folders land there)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    yield folder
    for pid in processes(lambda argv: any(str(folder) in a for a in argv)):  # never leave a server behind
        os.kill(pid, signal.SIGKILL)


def harness(args: list[str], tmp: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "harness", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


@linux_only
@pytest.mark.e2e
@pytest.mark.parametrize(("transport", "workers"), [("http", 1), ("stdio", 2)])
def test_kill_9_of_collect_leaves_no_task_server_and_the_restart_removes_its_folders(
    tmp_path: Path, tasks_file: Path, private_tmp: Path, transport: str, workers: int
) -> None:
    out = tmp_path / "run"
    args = ["collect", "--tasks", str(tasks_file), "--rollouts", "1", "--concurrency", "2", "--workers", str(workers),
            "--transport", transport, "--out", str(out), "--no-progress"]

    def servers() -> list[int]:
        return processes(lambda argv: "harness.task_server" in argv and any(str(private_tmp) in a for a in argv))

    run = harness(args, private_tmp)
    try:
        started = wait_until(lambda: bool(servers()) or run.poll() is not None, timeout=120)
        assert started and run.poll() is None, "no task server came up while the run was going"
        run.send_signal(signal.SIGKILL)
    finally:
        run.wait(timeout=30)
        stderr = run.stderr.read().decode() if run.stderr else ""
        if run.stderr:
            run.stderr.close()
    def workers_left() -> list[int]:
        return processes(lambda argv: "harness.worker" in argv and str(run.pid) in argv)

    assert wait_until(lambda: not servers() and not workers_left(), timeout=15), (
        f"still alive 15 s after kill -9: task servers {servers()}, workers {workers_left()}; {stderr[-500:]}"
    )

    rerun = harness(args, private_tmp)
    _, err = rerun.communicate(timeout=240)
    assert rerun.returncode == 0, err.decode()[-2000:]
    assert not list(private_tmp.glob(f"{EPISODE_FOLDER_PREFIX}*")), "the restart left episode folders behind"
    keys = [(r["task_id"], r["rollout"]) for r in map(json.loads, (out / "trajectories.jsonl").read_text().splitlines())]
    assert len(keys) == len(set(keys)) == 3


def test_sweep_removes_only_the_folders_of_processes_that_are_gone(tmp_path: Path) -> None:
    gone = tmp_path / f"{EPISODE_FOLDER_PREFIX}{dead_pid()}-abc"
    mine = tmp_path / f"{EPISODE_FOLDER_PREFIX}{os.getpid()}-def"
    foreign = tmp_path / f"{EPISODE_FOLDER_PREFIX}notapid"
    for folder in (gone, mine, foreign):
        (folder / "db").mkdir(parents=True)
    assert sweep_episode_folders(tmp_path) == 1
    assert not gone.exists() and mine.exists() and foreign.exists()


@linux_only
def test_the_watchdog_alone_ends_a_child_whose_parent_was_killed(private_tmp: Path) -> None:
    # The parent starts a child that watches it (without the Linux death signal: the portable path),
    # prints the child's pid, and waits; kill -9 of the parent must end the child.
    child = (
        "import sys, time; import harness.lifeline as l; l._set_parent_death_signal = lambda: None; "
        "l.die_with_parent(int(sys.argv[1]), interval=0.1); time.sleep(120)"
    )
    parent = (
        "import os, subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', {child!r}, str(os.getpid()), {str(private_tmp)!r}]); "
        "print(p.pid, flush=True); time.sleep(120)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, env=env)
    try:
        assert process.stdout is not None
        child_pid = int(process.stdout.readline())
        assert wait_until(lambda: bool(processes(lambda argv: str(private_tmp) in argv)), timeout=30)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()
    assert wait_until(lambda: not processes(lambda argv: str(private_tmp) in argv), timeout=15), child_pid
