"""The settings of one SFT run: a frozen value object, loadable from a JSON or YAML config file.

A config file holds any subset of the fields below (see ``training/configs/``); command-line
flags override it. Unknown keys and out-of-range values are errors, not silently ignored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.config_files import load_config_file, settings_from_mapping
from training.errors import TrainingInputError

__all__ = ["SFTSettings", "load_config_file"]


@dataclass(frozen=True)
class SFTSettings:
    """What to train, on what, and how. ``None`` for bf16/gradient_checkpointing means: on a GPU only."""

    data: Path
    """Run folder holding ``trajectories.jsonl`` (from ``harness collect``)."""
    out: Path
    """Where the model, the tokenizer and ``training_summary.json`` are written."""
    model: str = "tiny-qwen3"
    """``tiny-qwen3``, ``smollm2`` or a local folder written by ``save_pretrained``."""
    chat_template: str | None = None
    """Replace the tokenizer's template: ``qwen3`` (TRL's), ``chatml-tools`` (ours) or a ``.jinja`` file."""
    seed: int = 0
    val_fraction: float = 0.1
    """Share of task ids held out for validation (whole tasks, never single rows)."""
    max_steps: int = -1
    """Optimizer steps; -1 trains for ``num_train_epochs`` instead."""
    num_train_epochs: float = 1.0
    learning_rate: float = 2e-5
    batch_size: int = 1
    """Per-device batch size."""
    gradient_accumulation_steps: int = 1
    max_length: int | None = None
    """Tokens per example; None: the longest example's, within the model's context. Longer examples are
    dropped, never truncated (a cut trajectory would teach stopping midway); the summary says how many."""
    cut_long_examples: bool = False
    """Cut an example longer than max_length at the end of its last assistant turn that fits (a
    conversation the model really had, ending with one of its own turns) instead of dropping it."""
    warmup: float = 0.0
    """Warmup steps (an int), or a ratio of the total steps (a float below 1)."""
    lr_scheduler_type: str = "linear"
    weight_decay: float = 0.0
    logging_steps: int = 1
    packing: bool = False
    bf16: bool | None = None
    gradient_checkpointing: bool | None = None
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: str | list[str] = "all-linear"
    merge_lora: bool = False
    """Save the LoRA-merged full model instead of the adapter alone."""
    extra_args: dict[str, Any] = field(default_factory=dict)
    """Further ``SFTConfig`` keyword arguments, passed through as is (e.g. ``optim``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", Path(self.data))
        object.__setattr__(self, "out", Path(self.out))
        checks = [
            (self.max_steps == -1 or self.max_steps > 0, "max_steps must be a positive number or -1"),
            (self.num_train_epochs > 0, "num_train_epochs must be > 0"),
            (self.learning_rate > 0, "learning_rate must be > 0"),
            (self.batch_size >= 1, "batch_size must be >= 1"),
            (self.gradient_accumulation_steps >= 1, "gradient_accumulation_steps must be >= 1"),
            (self.max_length is None or self.max_length >= 16, "max_length must be >= 16"),
            (not self.packing or self.max_length is not None, "packing needs max_length (the length of a pack)"),
            (0.0 <= self.val_fraction < 1.0, "val_fraction must be in [0, 1)"),
            (self.warmup >= 0, "warmup must be >= 0"),
            (self.logging_steps >= 1, "logging_steps must be >= 1"),
            (self.lora_r >= 1, "lora_r must be >= 1"),
            (0.0 <= self.lora_dropout < 1.0, "lora_dropout must be in [0, 1)"),
            (not self.merge_lora or self.lora, "merge_lora needs lora"),
            (bool(self.model), "model must not be empty"),
        ]
        for ok, message in checks:
            if not ok:
                raise TrainingInputError(message)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> SFTSettings:
        return settings_from_mapping(cls, values, required=("data", "out"))

    def to_json(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["data"], values["out"] = str(self.data), str(self.out)
        return values

