"""The settings of one SFT run: a frozen value object, loadable from a JSON or YAML config file.

A config file holds any subset of the fields below (see ``training/configs/``); command-line
flags override it. Unknown keys and out-of-range values are errors, not silently ignored.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    max_length: int = 4096
    """Tokens per example; longer conversations are truncated at the end."""
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
            (self.max_length >= 16, "max_length must be >= 16"),
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
        unknown = sorted(set(values) - set(cls.field_names()))
        if unknown:
            raise TrainingInputError(
                f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(cls.field_names())}"
            )
        missing = [name for name in ("data", "out") if values.get(name) is None]
        if missing:
            raise TrainingInputError(f"missing setting(s): {', '.join(missing)}")
        hints = typing.get_type_hints(cls)
        return cls(**{name: _typed(name, value, hints[name]) for name, value in values.items()})

    def to_json(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["data"], values["out"] = str(self.data), str(self.out)
        return values


def _typed(name: str, value: Any, hint: Any) -> Any:
    """``value`` checked against the field's type; numeric strings become floats (YAML reads 1e-4 as a string)."""
    members = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    kinds = {typing.get_origin(member) or member for member in members}  # list[str] -> list, dict[...] -> dict
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if value is None and type(None) in kinds:
        return None
    if float in kinds and (is_number or isinstance(value, str)):
        try:
            return float(value)
        except ValueError:
            pass
    elif int in kinds and isinstance(value, int) and not isinstance(value, bool):
        return value
    elif Path in kinds and isinstance(value, str | Path):
        return Path(value)
    elif list in kinds and isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    elif any(kind in kinds and isinstance(value, kind) for kind in (bool, str, dict)):
        return value
    expected = " or ".join(sorted(getattr(kind, "__name__", str(kind)) for kind in kinds))
    raise TrainingInputError(f"setting {name} must be {expected}, got {value!r}")


def load_config_file(path: str | Path) -> dict[str, Any]:
    """The settings in a ``.json``, ``.yaml`` or ``.yml`` file, as a mapping (validated later)."""
    path = Path(path)
    if not path.is_file():
        raise TrainingInputError(f"config file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            raise TrainingInputError(f"config file {path} is not valid JSON: {error}") from None
    elif path.suffix in (".yaml", ".yml"):
        import yaml  # a dependency of transformers and accelerate, so present with the train extra

        try:
            values = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise TrainingInputError(f"config file {path} is not valid YAML: {error}") from None
    else:
        raise TrainingInputError(f"config file {path} must end in .json, .yaml or .yml")
    if not isinstance(values, dict):
        raise TrainingInputError(f"config file {path} must hold a mapping of setting names to values")
    return values
