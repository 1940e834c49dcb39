"""The command line: bad input gives one clear error line and exit code 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["collect", "--agent", "gpt4"], "unknown agent 'gpt4'"),
        (["collect", "--agent", "litellm:"], "needs a model after 'litellm:'"),
        (["collect", "--agent", "reference:x"], "takes no ':<target>'"),
        (["collect", "--tasks", "/no/such/file.jsonl"], "is not a file"),
        (["collect", "--rollouts", "0"], "--rollouts must be at least 1"),
        (["collect", "--max-turns", "0"], "max turns must be at least 1"),
        (["collect", "--extra-body", "{nope"], "--extra-body is not valid JSON"),
        (["collect", "--mode", "sideways"], "invalid choice: 'sideways'"),
        (["collect", "--bogus"], "unrecognized arguments: --bogus"),
        (["eval", "--agent", "null"], "--out DIR is required"),
        (["eval", "--run", "/no/such/run"], "is not a folder"),
    ],
)
def test_bad_input_gives_one_error_line_and_exit_code_2(args: list[str], expected: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    if args[0] == "collect":
        args = [*args, "--out", str(tmp_path / "run")]
    assert run_cli(args) == 2
    line = error_line(capsys)
    assert expected in line and line.startswith("harness")


def run_cli(args: list[str]) -> int:
    """The exit code, whether main returns it or argparse exits with it."""
    try:
        return main(args)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_a_corrupt_task_file_is_named_with_its_line(tmp_path: Path, tasks_file: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(tasks_file.read_text() + "{not json\n")
    assert main(["collect", "--tasks", str(bad), "--out", str(tmp_path / "run")]) == 2
    assert f"{bad}:4: not valid JSON" in error_line(capsys)


def test_eval_of_a_run_with_a_corrupt_line_names_the_line(tmp_path: Path, tasks_file: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["collect", "--tasks", str(tasks_file), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    path = out / "trajectories.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "garbage\n" + "".join(lines[1:]))
    assert main(["eval", "--run", str(out)]) == 2
    assert "trajectories.jsonl:2: corrupt line: not valid JSON" in error_line(capsys)


def test_regrade_command_agrees_with_a_collected_run(tmp_path: Path, tasks_file: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["collect", "--tasks", str(tasks_file), "--out", str(out), "--rollouts", "2", "--no-progress"]) == 0
    assert main(["regrade", "--run", str(out)]) == 0
    assert "re-graded 6 trajectories: 6 agree, 0 differ" in capsys.readouterr().out


def test_python_dash_m_harness_prints_help() -> None:
    result = subprocess.run([sys.executable, "-m", "harness", "collect", "--help"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and "--concurrency" in result.stdout and "--api-base" in result.stdout
