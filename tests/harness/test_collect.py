"""``collect``: the line schema, resume after any crash, corrupt lines, same seed same trajectories."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from harness.agents import AgentConfig, ReferenceAgent
from harness.cli import main as cli_main
from harness.collect import CollectConfig, collect
from harness.errors import HarnessInputError, RunFileError
from harness.runlock import LOCK_FILE, RunFolderBusyError, hold_run_folder
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskSpec

LINE_KEYS = {
    "schema_version", "task_id", "rollout", "agent", "messages", "tools", "criteria", "rubric_score", "passed",
    "n_tool_calls", "timings",
}


def lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def config(out: Path, tasks_file: Path, **overrides: object) -> CollectConfig:
    return CollectConfig(out=out, tasks_file=tasks_file, progress=False, **overrides)  # type: ignore[arg-type]


def quiet(_: str) -> None:
    return None


def test_collect_writes_one_line_per_task_and_rollout_with_the_interface_fields(tmp_path: Path, tasks_file: Path,
                                                                                tasks: list[TaskSpec]) -> None:
    out = tmp_path / "run"
    report = collect(config(out, tasks_file, rollouts=2, concurrency=3), log=quiet)
    assert report.n_new == 6 and report.n_passed_new == 6
    records = lines(out)
    expected = Counter({(t.id, r): 1 for t in tasks for r in (0, 1)})
    assert Counter((r["task_id"], r["rollout"]) for r in records) == expected
    for record in records:
        assert LINE_KEYS <= set(record)
        assert record["schema_version"] == 1 and record["agent"] == "reference"
        for message in record["messages"]:
            for call in message.get("tool_calls") or ():
                assert isinstance(call["function"]["arguments"], str)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["agent"]["spec"] == "reference" and manifest["config"]["rollouts"] == 2
    assert manifest["status"] == {"state": "complete", "n_trajectories": 6, "n_expected": 6}
    assert {"python", "mcp", "compoworld"} <= set(manifest["versions"])
    assert manifest["seeds"]["run_seed"] == 0 and manifest["tasks"]["n_tasks"] == 3
    assert (out / "tasks.jsonl").exists()


def test_trajectories_load_with_datasets_as_is(tmp_path: Path, tasks_file: Path) -> None:
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "run"
    collect(config(out, tasks_file, rollouts=2), log=quiet)
    collect(config(tmp_path / "null", tasks_file, agent=AgentConfig("null")), log=quiet)
    both = tmp_path / "both.jsonl"
    both.write_text((out / "trajectories.jsonl").read_text() + (tmp_path / "null" / "trajectories.jsonl").read_text())
    data = datasets.load_dataset("json", data_files=str(both), split="train")
    assert len(data) == 9 and LINE_KEYS <= set(data.column_names)
    row = data[0]
    assert row["messages"][0]["role"] == "system" and isinstance(row["tools"][0]["function"]["name"], str)


def test_same_seed_gives_the_same_trajectories(tmp_path: Path, tasks_file: Path) -> None:
    def trajectories(out: Path, concurrency: int) -> list[dict]:
        collect(config(out, tasks_file, rollouts=2, concurrency=concurrency), log=quiet)
        records = [Trajectory.from_record(r).without_timings() for r in lines(out)]
        return sorted(records, key=lambda r: (r["task_id"], r["rollout"]))

    assert trajectories(tmp_path / "a", 1) == trajectories(tmp_path / "b", 5)


def test_a_rerun_with_the_same_arguments_does_nothing(tmp_path: Path, tasks_file: Path) -> None:
    out = tmp_path / "run"
    collect(config(out, tasks_file), log=quiet)
    before = (out / "trajectories.jsonl").read_bytes()
    assert collect(config(out, tasks_file), log=quiet).n_new == 0
    assert (out / "trajectories.jsonl").read_bytes() == before


def test_rollouts_can_grow_on_a_restart(tmp_path: Path, tasks_file: Path) -> None:
    out = tmp_path / "run"
    collect(config(out, tasks_file, rollouts=1), log=quiet)
    assert collect(config(out, tasks_file, rollouts=3), log=quiet).n_new == 6
    assert len(lines(out)) == 9


def test_a_restart_with_another_agent_is_refused_in_one_readable_line(tmp_path: Path, tasks_file: Path) -> None:
    out = tmp_path / "run"
    collect(config(out, tasks_file), log=quiet)
    with pytest.raises(RunFileError) as refused:
        collect(config(out, tasks_file, agent=AgentConfig("null")), log=quiet)
    assert str(refused.value) == (
        f"{out} holds a run with other arguments: agent: reference -> null "
        "(restart with the same arguments, or use another --out)"
    )
    with pytest.raises(RunFileError, match=r"other arguments: agent temperature: 0\.7 -> 0\.2 \("):
        collect(config(out, tasks_file, agent=AgentConfig("reference", temperature=0.2)), log=quiet)


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("hf:/nope", {}, "model '/nope' is neither a local path that exists nor one of tiny-qwen3, smollm2"),
        ("litellm:gpt-4.1", {}, "agent litellm:gpt-4.1 needs OPENAI_API_KEY, which is not set"),
        ("litellm:gpt-4.1", {"api_key_env": "NO_SUCH_KEY_VAR"}, "NO_SUCH_KEY_VAR (from --api-key-env) is not set"),
    ],
)
def test_an_agent_that_cannot_run_is_refused_before_anything_is_written(
    spec: str, options: dict[str, str], message: str, tmp_path: Path, tasks_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("litellm" if spec.startswith("litellm") else "transformers")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"
    with pytest.raises(HarnessInputError, match=re.escape(message)):
        collect(config(out, tasks_file, agent=AgentConfig(spec, **options)), log=quiet)
    assert not out.exists()


def test_a_vllm_agent_without_vllm_is_refused_before_anything_is_written(tmp_path: Path, tasks_file: Path) -> None:
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    out = tmp_path / "run"
    with pytest.raises(HarnessInputError, match=r"agent vllm:/models/x needs vLLM, which is not installed here \("):
        collect(config(out, tasks_file, agent=AgentConfig("vllm:/models/x")), log=quiet)
    assert not out.exists()


def test_a_run_folder_without_a_trajectory_is_fresh(tmp_path: Path, tasks_file: Path, tasks: list[TaskSpec]) -> None:
    out = tmp_path / "run"
    collect(config(out, tasks_file, agent=AgentConfig("null"), rollouts=2), log=quiet)
    (out / "trajectories.jsonl").write_text("")  # as a run that stopped before its first episode leaves it
    other = tmp_path / "other.jsonl"
    other.write_text("".join(t.to_json() + "\n" for t in tasks[:1]))
    report = collect(config(out, other), log=quiet)  # another agent, task set and rollouts: all fine
    assert report.n_new == 1 and report.n_passed_new == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["agent"]["spec"] == "reference" and manifest["tasks"]["n_tasks"] == 1
    assert [t["id"] for t in map(json.loads, (out / "tasks.jsonl").read_text().splitlines())] == [tasks[0].id]


def test_torn_final_line_is_reported_and_dropped(tmp_path: Path, tasks_file: Path) -> None:
    out = tmp_path / "run"
    collect(config(out, tasks_file, rollouts=2), log=quiet)
    path = out / "trajectories.jsonl"
    kept = path.read_text().splitlines(keepends=True)[:4]
    path.write_text("".join(kept) + kept[-1][:50])  # a write cut short by a crash
    messages: list[str] = []
    report = collect(config(out, tasks_file, rollouts=2), log=messages.append)
    assert report.torn_bytes == 50 and report.n_new == 2
    assert any("torn final line (50 bytes" in m for m in messages)
    assert len({(r["task_id"], r["rollout"]) for r in lines(out)}) == len(lines(out)) == 6


def test_corrupt_line_is_reported_not_skipped_and_repair_recollects_it(tmp_path: Path, tasks_file: Path) -> None:
    out = tmp_path / "run"
    collect(config(out, tasks_file, rollouts=2), log=quiet)
    path = out / "trajectories.jsonl"
    text = path.read_text().splitlines(keepends=True)
    text[2] = '{"schema_version": 1, "oops": true}\n'
    path.write_text("".join(text))
    with pytest.raises(RunFileError, match=r"trajectories.jsonl:3: corrupt line: missing field 'task_id'"):
        collect(config(out, tasks_file, rollouts=2), log=quiet)
    messages: list[str] = []
    report = collect(config(out, tasks_file, rollouts=2, repair=True), log=messages.append)
    assert report.n_new == 1 and report.n_repaired == 1
    assert "oops" in (out / "trajectories.corrupt.jsonl").read_text()
    assert len({(r["task_id"], r["rollout"]) for r in lines(out)}) == len(lines(out)) == 6


def test_a_second_collect_is_refused_while_one_runs_and_after_its_kill_9_the_run_resumes_with_no_gap_or_duplicate(
        tmp_path: Path, tasks_file: Path, tasks: list[TaskSpec], capsys: pytest.CaptureFixture[str]) -> None:
    out, rollouts = tmp_path / "run", 30
    path = out / "trajectories.jsonl"
    script = Path(__file__).parent / "slow_collect.py"
    process = subprocess.Popen([sys.executable, str(script), str(tasks_file), str(out), str(rollouts)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not (path.exists() and path.read_bytes().count(b"\n") >= 10):
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "the collector wrote nothing in time"
            time.sleep(0.05)
        second = ["collect", "--tasks", str(tasks_file), "--out", str(out), "--rollouts", str(rollouts), "--no-progress"]
        assert cli_main(second) == 2  # a double start, a scheduler's retry: refused before it writes anything
        err = capsys.readouterr().err
        assert f"is being written by another harness collect (pid {process.pid})" in err, err
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
        if process.stderr:
            process.stderr.close()
    written = path.read_bytes().count(b"\n")
    assert written < 3 * rollouts, "the run finished before it was killed"
    with path.open("ab") as handle:  # and a write that a crash cut short
        handle.write(b'{"schema_version": 1, "task_id": "')

    report = collect(config(out, tasks_file, rollouts=rollouts), agent=ReferenceAgent(tasks), log=quiet)
    assert report.torn_bytes > 0 and report.n_existing + report.n_new == 3 * rollouts
    keys = Counter((r["task_id"], r["rollout"]) for r in lines(out))
    assert keys == Counter({(t.id, r): 1 for t in tasks for r in range(rollouts)})
    assert all(r["passed"] for r in lines(out))


def test_a_run_folder_has_one_writer_and_a_run_that_wrote_nothing_leaves_no_folder(tmp_path: Path,
                                                                                    tasks_file: Path) -> None:
    out = tmp_path / "run"
    with hold_run_folder(out):
        with pytest.raises(RunFolderBusyError, match=f"another harness collect \\(pid {os.getpid()}\\)"):
            collect(config(out, tasks_file), log=quiet)
        assert [p.name for p in out.iterdir()] == [LOCK_FILE]  # the refused run wrote nothing
    assert not out.exists()
    collect(config(out, tasks_file), log=quiet)  # free again
    assert len(lines(out)) == 3
