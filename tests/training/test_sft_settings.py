"""SFT settings: config files, flags over files, clear errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.errors import TrainingInputError
from training.sft_settings import SFTSettings, load_config_file

REPO = Path(__file__).resolve().parents[2]
BASE = {"data": "runs/x", "out": "out/x"}


def test_yaml_exponent_without_dot_is_read_as_a_float(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    config = tmp_path / "c.yaml"
    config.write_text("learning_rate: 1e-4  # YAML 1.1 reads this as a string\nlora: true\n")
    settings = SFTSettings.from_mapping(load_config_file(config) | BASE)
    assert settings.learning_rate == 1e-4 and settings.lora and settings.data == Path("runs/x")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"max_steps": "3"}, "setting max_steps must be int"),
        ({"lora": "yes"}, "setting lora must be bool"),
        ({"learning_rate": "fast"}, "setting learning_rate must be float"),
        ({"bf16": 1}, "setting bf16 must be NoneType or bool"),
        ({"max_steps": 0}, "max_steps must be a positive number or -1"),
        ({"val_fraction": 1.0}, r"val_fraction must be in \[0, 1\)"),
        ({"merge_lora": True}, "merge_lora needs lora"),
        ({"lora_rank": 8}, "unknown setting"),
    ],
)
def test_bad_settings_are_clear_errors(values: dict, message: str) -> None:
    with pytest.raises(TrainingInputError, match=message):
        SFTSettings.from_mapping(BASE | values)


def test_data_and_out_are_required() -> None:
    with pytest.raises(TrainingInputError, match="missing setting"):
        SFTSettings.from_mapping({"data": "runs/x"})


def test_config_file_errors(tmp_path: Path) -> None:
    with pytest.raises(TrainingInputError, match="does not exist"):
        load_config_file(tmp_path / "nope.json")
    (tmp_path / "c.toml").write_text("x = 1")
    with pytest.raises(TrainingInputError, match=r"must end in \.json, \.yaml or \.yml"):
        load_config_file(tmp_path / "c.toml")
    (tmp_path / "c.json").write_text("[1, 2]")
    with pytest.raises(TrainingInputError, match="must hold a mapping"):
        load_config_file(tmp_path / "c.json")


def test_shipped_configs_load() -> None:
    pytest.importorskip("yaml")
    # *-grpo.yaml files are RL settings (tests/training/test_rl.py loads them).
    configs = sorted(p for p in (REPO / "training" / "configs").glob("*.yaml") if not p.name.endswith("-grpo.yaml"))
    assert {path.name for path in configs} >= {"qwen3-8b-sft.yaml", "qwen3-0.6b-sft.yaml", "cpu-smoke.yaml"}
    for path in configs:
        assert SFTSettings.from_mapping(load_config_file(path) | BASE).out == Path("out/x")
    qwen3_8b = SFTSettings.from_mapping(load_config_file(REPO / "training/configs/qwen3-8b-sft.yaml") | BASE)
    assert qwen3_8b.lora and qwen3_8b.bf16 and qwen3_8b.gradient_checkpointing
    assert qwen3_8b.chat_template == "qwen3" and qwen3_8b.learning_rate == 1e-4
