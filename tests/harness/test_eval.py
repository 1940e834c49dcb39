"""``harness eval``: pass@k, pass^k, bootstrap intervals and breakdowns; the table and summary.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.evaluate import EvalOptions, summarize
from harness.metrics import bootstrap_ci, pass_at_k, pass_hat_k
from harness.trajectory import Trajectory


def test_pass_at_k_and_pass_hat_k_follow_their_definitions() -> None:
    assert pass_at_k(4, 1, 1) == 0.25 and pass_hat_k(4, 1, 1) == 0.25
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - 3 / 6)  # 1 - C(3,2)/C(4,2)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_at_k(4, 0, 4) == 0.0 and pass_at_k(4, 1, 4) == 1.0
    assert pass_hat_k(4, 4, 4) == 1.0 and pass_hat_k(4, 3, 4) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_bootstrap_interval_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    low, high = bootstrap_ci(values, seed="x")
    assert low < sum(values) / len(values) < high and 0.0 <= low and high <= 1.0
    assert bootstrap_ci(values, seed="x") == (low, high)
    assert bootstrap_ci([0.5], seed=1) == (0.5, 0.5)


def fake(task: str, rollout: int, passed: bool, score: float, services: list[str], length: int) -> Trajectory:
    return Trajectory(
        task_id=task, rollout=rollout, agent="scripted", mode="direct", seed=0, messages=[], tools=[], answer=None,
        criteria={"c": passed}, rubric_score=score, passed=passed, collateral=[], n_tool_calls=length,
        n_service_calls=length, n_turns=1, stop_reason="answer", error=None,
        task_info={"services": services, "capabilities": ["policy"], "plan_length": length},
    )


def test_summary_has_the_interface_fields_and_breakdowns() -> None:
    trajectories = [
        fake("a", 0, True, 1.0, ["crm"], 2), fake("a", 1, False, 0.5, ["crm"], 2),
        fake("b", 0, False, 0.0, ["crm", "mailbox"], 4), fake("b", 1, False, 0.5, ["crm", "mailbox"], 4),
    ]
    s = summarize(trajectories, EvalOptions(resamples=200))
    assert s["n_tasks"] == 2 and s["n_rollouts"] == 2 and s["n_trajectories"] == 4 and s["k"] == 2
    assert s["pass_at_1"] == 0.25 and s["pass_at_k"] == 0.5 and s["pass_hat_k"] == 0.0
    assert s["mean_rubric_score"] == pytest.approx((0.75 + 0.25) / 2)
    assert set(s["ci95"]) == {"pass_at_1", "pass_at_k", "pass_hat_k", "mean_rubric_score"}
    assert set(s["by_service"]) == {"crm", "mailbox"} and s["by_service"]["mailbox"]["n_tasks"] == 1
    assert s["by_service"]["crm"]["pass_at_1"] == 0.25
    assert list(s["by_plan_length"]) == ["2", "4"] and s["by_capability"]["policy"]["n_tasks"] == 2


def test_eval_runs_then_reports_and_reads_a_run_back(tmp_path: Path, tasks_file: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "null"
    assert main(["eval", "--tasks", str(tasks_file), "--agent", "null", "--rollouts", "2", "--out", str(out),
                 "--no-progress"]) == 0
    table = capsys.readouterr().out
    assert "pass@1" in table and "pass^2" in table and "by service" in table
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pass_at_1"] == 0.0 and summary["n_tasks"] == 3 and summary["n_rollouts"] == 2
    assert {"pass_hat_k", "mean_rubric_score", "by_service", "by_capability", "by_plan_length"} <= set(summary)

    ref = tmp_path / "ref"
    assert main(["collect", "--tasks", str(tasks_file), "--rollouts", "3", "--out", str(ref), "--no-progress"]) == 0
    assert main(["eval", "--run", str(ref), "--k", "2"]) == 0
    summary = json.loads((ref / "summary.json").read_text())
    assert summary["pass_at_1"] == summary["pass_hat_k"] == 1.0 and summary["k"] == 2
    assert summary["ci95"]["pass_at_1"] == [1.0, 1.0]
