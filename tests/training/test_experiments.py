"""The two experiments compose through today's composer API and collect their reference runs on the CPU.

The model stages (SmolLM2 on a CPU for 45 minutes, SFT and GRPO on a GPU) are not run here; what
comes before them is, so that an API change upstream breaks a test and not the experiment.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.evaluate import read_run
from mcp_services.tasks.spec import load_tasks


@pytest.fixture
def composer_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The fields given to every ``GenerateConfig`` the experiments build."""
    import composer.generate as generate_module

    real = generate_module.GenerateConfig
    calls: list[dict[str, Any]] = []

    def recording(**fields: Any) -> Any:
        calls.append(fields)
        return real(**fields)

    monkeypatch.setattr(generate_module, "GenerateConfig", recording)
    return calls


def test_learn_offline_composes_short_tasks_and_every_reference_rollout_passes(
    tmp_path: Path, composer_calls: list[dict[str, Any]]
) -> None:
    from training.experiments.learn_offline import ExperimentSettings, reference_stage
    from training.experiments.short_tasks import SHORT_TASK_SERVICES

    settings = ExperimentSettings(out=tmp_path / "exp", n_candidates=8)
    tasks, reference = reference_stage(settings)
    assert tasks and all(len(task.plan) <= settings.max_calls for task in tasks)
    assert sorted(t.task_id for t in reference) == sorted(task.id for task in tasks)
    assert all(t.passed for t in reference)
    assert [t.task_id for t in read_run(tmp_path / "exp" / "reference")] == [t.task_id for t in reference]
    # Only the fields the composer keeps stable while it is rebuilt.
    assert composer_calls == [{"n": 8, "seed": 0, "services": SHORT_TASK_SERVICES}]


def test_gpu_check_composes_and_collects_its_reference_run_on_the_cpu(
    tmp_path: Path, composer_calls: list[dict[str, Any]]
) -> None:
    from training.experiments.gpu_check import _MAX_CALLS, compose_and_collect

    tasks_file, run_dir = compose_and_collect(tmp_path)
    tasks = load_tasks(tasks_file)
    trajectories = read_run(run_dir)
    assert len(trajectories) == len(tasks) >= 16 and all(t.passed for t in trajectories)
    assert all(len(task.plan) <= _MAX_CALLS for task in tasks)
    assert set(composer_calls[0]) == {"n", "seed", "services"}


def test_learn_offline_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    from training.experiments.learn_offline import main

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "--held-out" in capsys.readouterr().out


def test_an_experiment_refuses_an_impossible_task_filter_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from training.experiments.learn_offline import ExperimentSettings, compose_tasks
    from training.errors import TrainingInputError

    with pytest.raises(TrainingInputError, match=r"has at most 0 calls \(raise --max-calls"):
        compose_tasks(ExperimentSettings(out=tmp_path, n_candidates=4, max_calls=0))


@pytest.mark.train
@pytest.mark.slow
def test_gpu_check_dry_run_does_everything_but_the_gpu_work(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from training.experiments.gpu_check import main

    out = tmp_path / "check"
    assert main(["--dry-run", "--out", str(out)]) == 0
    plan = json.loads((out / "summary.json").read_text())
    assert plan["dry_run"] is True and plan["sft"]["examples"] > 10 and plan["sft"]["tokens_to_train_on"] > 0
    # Conversations that read a long channel history pass SmolLM2's context: they are cut at a turn
    # boundary, so at least 80% of the examples are trained on (38 of 57 were dropped before).
    sft = plan["sft"]
    kept = re.search(r"; (\d+) of (\d+) examples kept$", sft["lengths"])
    assert sft["lengths"].startswith("max_length 8,192 tokens (max_length setting)") and kept
    assert int(kept[2]) == sft["examples"] and int(kept[1]) == sft["kept"] >= 0.8 * sft["examples"]
    # Token figures count what is trained: the mean of the kept examples, cut ones as cut, all within the limit.
    assert sft["mean_tokens_trained"] <= 8192
    assert sft["tokens_to_train_on"] == round(sft["mean_tokens_trained"] * sft["steps"] * sft["batch_size"])
    assert plan["grpo"]["generation"] == "transformers"  # the lent GPU machine has no vLLM: --vllm opts in
    assert plan["grpo"]["tasks"] > 10 and 0 < plan["grpo"]["longest_prompt_tokens"] < 8192
    assert (out / "reference" / "trajectories.jsonl").exists() and not (out / "sft").exists()
