"""Every training run names its model: configs say it, the run prints it (size, device), nothing is guessed.

README's 8B line is run as written (plus ``--dry-run``) on the CPU: it must resolve Qwen3-8B, print
its parameter count, and refuse to train it here in one line, before anything loads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.training.readme import REPO, in_folder, readme_command
from tests.training.trajectories import short_trajectory
from training.cli import main
from training.config_files import load_config_file
from training.errors import TrainingInputError

pytestmark = pytest.mark.train
pytest.importorskip("trl")

_QWEN3_8B_LINE = "model Qwen/Qwen3-8B: Qwen3ForCausalLM, 8.19B parameters, weights not on this machine; device cpu"


@pytest.fixture
def no_gpu_no_weights(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("the CPU refusal is what this test checks")
    monkeypatch.setenv("COMPOWORLD_MODELS", str(tmp_path / "no-models"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: the weights are nowhere


@pytest.mark.usefixtures("no_gpu_no_weights")
def test_readme_8b_sft_line_resolves_qwen3_8b_and_stops_on_the_cpu(
    write_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = readme_command("training", "sft --data runs/qwen --config training/configs/qwen3-8b-sft.yaml")
    assert "--model" not in argv  # the config alone names the model
    run_dir = write_run([short_trajectory("a"), short_trajectory("b")])
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "qwen").symlink_to(run_dir)
    monkeypatch.chdir(REPO)  # the config path is relative to the checkout
    argv = in_folder(argv, tmp_path)
    out = Path(argv[argv.index("--out") + 1])

    assert main([*argv, "--dry-run"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == _QWEN3_8B_LINE
    assert printed[1].startswith("dry run: would train Qwen/Qwen3-8B (LoRA r=64) for 2 epoch(s) on 2 training")

    assert main(argv) == 2  # without --dry-run: the model line, then one line of refusal
    captured = capsys.readouterr()
    assert captured.out.strip() == _QWEN3_8B_LINE
    assert captured.err.strip() == (
        "training: error: Qwen/Qwen3-8B has 8.19B parameters and this machine has no GPU: training it on the CPU "
        "would take weeks (run it on a GPU machine, or add --dry-run to check the settings and the data here)"
    )
    assert not out.exists()


@pytest.mark.usefixtures("no_gpu_no_weights")
def test_rl_config_of_8b_resolves_its_model_in_a_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcp_services.tasks.spec import write_tasks
    from tests.training.rl_tasks import deal_question

    tasks = tmp_path / "tasks.jsonl"  # one generation batch of the 8B config needs 8 distinct tasks
    write_tasks(tasks, [deal_question(f" (asked by colleague {i})") for i in range(8)])
    config = str(REPO / "training/configs/qwen3-8b-grpo.yaml")
    argv = ["rl", "--tasks", str(tasks), "--config", config, "--out", str(tmp_path / "o")]
    assert main([*argv, "--dry-run"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == _QWEN3_8B_LINE
    assert printed[1].startswith("dry run: would train Qwen/Qwen3-8B (LoRA) with GRPO over 8 tasks, groups of 8")
    assert main(argv) == 2
    assert "8.19B parameters and this machine has no GPU" in capsys.readouterr().err


@pytest.mark.parametrize("config", sorted((REPO / "training" / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_names_a_model_that_resolves(config: Path) -> None:
    from training.model_choice import resolve_model

    name = load_config_file(config).get("model")
    assert name, f"{config.name} names no model"
    choice = resolve_model(name)
    assert choice.name == name
    if name.startswith("Qwen/"):  # sized from the shipped architecture, on the meta device
        size = {"Qwen/Qwen3-8B": 8_190_735_360, "Qwen/Qwen3-0.6B": 596_049_920}[name]
        assert choice.n_parameters == size and choice.architecture == "Qwen3ForCausalLM"


def test_a_config_without_a_model_or_no_model_at_all_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("lora: true\n")
    assert main(["sft", "--data", str(tmp_path), "--out", str(tmp_path / "o"), "--config", str(config)]) == 2
    assert capsys.readouterr().err.startswith(f"training: error: config {config} names no model (add `model: NAME`")
    assert main(["rl", "--tasks", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("training: error: no model named (add `model: NAME`")


def test_a_folder_model_is_sized_from_its_config(tmp_path: Path) -> None:
    from transformers import Qwen3Config

    from training.model_choice import resolve_model

    Qwen3Config(vocab_size=128, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, head_dim=8).save_pretrained(tmp_path)
    choice = resolve_model(str(tmp_path))
    assert (choice.architecture, choice.load_from) == ("Qwen3ForCausalLM", str(tmp_path))
    assert choice.n_parameters is not None and 4_000 < choice.n_parameters < 10_000
    with pytest.raises(TrainingInputError, match="neither a built-in name, a known model id nor a model folder"):
        resolve_model(str(tmp_path / "nope"))


def test_weights_of_a_known_model_are_found_in_the_models_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training.model_choice import require_weights, resolve_model

    monkeypatch.setenv("COMPOWORLD_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(TrainingInputError, match=f"not on this machine \\(looked in {tmp_path}/Qwen3-0.6B"):
        require_weights(resolve_model("Qwen/Qwen3-0.6B"))
    (tmp_path / "Qwen3-0.6B").mkdir()
    (tmp_path / "Qwen3-0.6B" / "config.json").write_text("{}")
    assert require_weights(resolve_model("Qwen/Qwen3-0.6B")) == str(tmp_path / "Qwen3-0.6B")


def test_a_stopped_sft_run_leaves_no_output_folder(
    write_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trl import SFTTrainer

    def stopped(self: SFTTrainer, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # as Ctrl-C (or a kill) arrives in the middle of training

    monkeypatch.setattr(SFTTrainer, "train", stopped)
    out = tmp_path / "o"
    argv = ["sft", "--data", str(write_run([short_trajectory("a")])), "--out", str(out), "--model", "tiny-qwen3"]
    assert main(argv) == 130
    assert not out.exists()
