"""The settings of one RL (GRPO) run: a frozen value object, loadable from a JSON or YAML config file.

A config file holds any subset of the fields below (see ``training/configs/*-grpo.yaml``);
command-line flags override it. Unknown keys and out-of-range values are errors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.defaults import DEFAULT_MODE
from training.config_files import settings_from_mapping
from training.errors import TrainingInputError

__all__ = ["REWARD_KINDS", "VLLM_MODES", "RLSettings"]

REWARD_KINDS = ("cfrr", "binary", "rubric")
VLLM_MODES = ("colocate", "server")
_TOOL_MODES = ("direct", "discover")


@dataclass(frozen=True)
class RLSettings:
    """What to train, on which tasks, how rollouts run and how they are rewarded.

    Batch arithmetic (TRL's): one generation batch holds ``batch_size * gradient_accumulation_steps
    * n_processes`` rollouts, that is that many divided by ``group_size`` tasks, each rolled out
    ``group_size`` times. ``None`` for bf16/gradient_checkpointing means: on a GPU only.
    """

    tasks: Path
    """``tasks.jsonl`` from ``composer generate``."""
    out: Path
    """Where the model, the tokenizer, ``training_summary.json`` and ``rollouts.jsonl`` are written."""
    model: str = "tiny-qwen3"
    """``tiny-qwen3``, ``smollm2`` or a local folder written by ``save_pretrained`` (e.g. ``training sft``)."""
    chat_template: str | None = None
    """Replace the tokenizer's template: ``qwen3`` (TRL's), ``chatml-tools`` (ours) or a ``.jinja`` file."""
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    """Passed to the chat template, e.g. ``{"enable_thinking": false}`` for Qwen3."""
    seed: int = 0
    reward: str = "cfrr"
    """``cfrr`` (docs/design.md, Training), ``binary`` (all criteria passed) or ``rubric`` (plain mean)."""
    cfrr_beta: float = 1.0
    cfrr_lam: float = 0.5
    cfrr_eps: float = 0.05
    group_size: int = 4
    """Rollouts per task in one group (TRL's ``num_generations``)."""
    batch_size: int = 4
    """Rollouts per device per micro-batch (TRL's ``per_device_train_batch_size``)."""
    gradient_accumulation_steps: int = 1
    max_steps: int = -1
    """Optimizer steps; -1 trains for ``num_train_epochs`` over the tasks instead."""
    num_train_epochs: float = 1.0
    learning_rate: float = 1e-6
    kl_beta: float = 0.0
    """GRPO's KL coefficient (TRL's ``beta``); above 0 keeps a reference model in memory."""
    mode: str = DEFAULT_MODE
    """The tool surface: ``discover`` (four meta-tools; `harness collect`'s default too) or ``direct``
    (every tool as ``service__tool``: a prompt of ~3K tokens per mounted service)."""
    max_turns: int = 8
    """Model turns per episode (the runner's limit)."""
    max_turn_tokens: int = 512
    """Tokens the model may write in one turn."""
    max_completion_length: int = 4096
    """Tokens of a whole episode after the prompt: the model's turns and the tool results between them."""
    temperature: float = 1.0
    top_p: float = 1.0
    episode_timeout: float = 600.0
    """Seconds one episode may take (it is then graded as it stands)."""
    vllm: str | None = None
    """Generate with vLLM on a GPU: ``colocate`` (in the trainer's process) or ``server`` (``trl vllm-serve``)."""
    vllm_gpu_memory_utilization: float = 0.3
    vllm_max_model_length: int | None = None
    vllm_tensor_parallel_size: int = 1
    vllm_server_base_url: str | None = None
    vllm_enable_sleep_mode: bool = False
    bf16: bool | None = None
    gradient_checkpointing: bool | None = None
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: str | list[str] = "all-linear"
    logging_steps: int = 1
    save_steps: int = 0
    """Save a checkpoint every N steps (0: only the final model)."""
    extra_args: dict[str, Any] = field(default_factory=dict)
    """Further ``GRPOConfig`` keyword arguments, passed through as is (e.g. ``loss_type``, ``num_iterations``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", Path(self.tasks))
        object.__setattr__(self, "out", Path(self.out))
        checks = [
            (bool(self.model), "model must not be empty"),
            (self.reward in REWARD_KINDS, f"reward must be one of {', '.join(REWARD_KINDS)}, got {self.reward!r}"),
            (self.cfrr_beta >= 0, "cfrr_beta must be >= 0"),
            (0.0 <= self.cfrr_lam <= 1.0, "cfrr_lam must be in [0, 1]"),
            (self.cfrr_eps >= 0, "cfrr_eps must be >= 0"),
            (self.group_size >= 2, f"group_size must be at least 2 (GRPO compares rollouts), got {self.group_size}"),
            (self.batch_size >= 1, "batch_size must be >= 1"),
            (self.gradient_accumulation_steps >= 1, "gradient_accumulation_steps must be >= 1"),
            (self.max_steps == -1 or self.max_steps > 0, "max_steps must be a positive number or -1"),
            (self.num_train_epochs > 0, "num_train_epochs must be > 0"),
            (self.learning_rate > 0, "learning_rate must be > 0"),
            (self.kl_beta >= 0, "kl_beta must be >= 0"),
            (self.mode in _TOOL_MODES, f"mode must be one of {', '.join(_TOOL_MODES)}, got {self.mode!r}"),
            (self.max_turns >= 1, "max_turns must be >= 1"),
            (self.max_turn_tokens >= 1, "max_turn_tokens must be >= 1"),
            (
                self.max_completion_length >= self.max_turn_tokens,
                "max_completion_length must be at least max_turn_tokens",
            ),
            (self.temperature > 0, "temperature must be > 0 (GRPO needs different rollouts of a task)"),
            (0.0 < self.top_p <= 1.0, "top_p must be in (0, 1]"),
            (self.episode_timeout > 0, "episode_timeout must be > 0"),
            (
                self.vllm is None or self.vllm in VLLM_MODES,
                f"vllm must be one of {', '.join(VLLM_MODES)} or unset, got {self.vllm!r}",
            ),
            (0.0 < self.vllm_gpu_memory_utilization <= 1.0, "vllm_gpu_memory_utilization must be in (0, 1]"),
            (self.vllm_tensor_parallel_size >= 1, "vllm_tensor_parallel_size must be >= 1"),
            (self.lora_r >= 1, "lora_r must be >= 1"),
            (0.0 <= self.lora_dropout < 1.0, "lora_dropout must be in [0, 1)"),
            (self.logging_steps >= 1, "logging_steps must be >= 1"),
            (self.save_steps >= 0, "save_steps must be >= 0"),
        ]
        for ok, message in checks:
            if not ok:
                raise TrainingInputError(message)
        rollouts = self.batch_size * self.gradient_accumulation_steps
        if rollouts % self.group_size:
            raise TrainingInputError(
                f"group size {self.group_size} does not divide the {rollouts} rollouts of a generation batch "
                f"(batch_size {self.batch_size} x gradient_accumulation_steps {self.gradient_accumulation_steps}): "
                "every group of a task must fit in one batch"
            )

    @property
    def reward_knobs(self) -> dict[str, float]:
        """CFRR's knobs (the baselines take none)."""
        if self.reward != "cfrr":
            return {}
        return {"beta": self.cfrr_beta, "lam": self.cfrr_lam, "eps": self.cfrr_eps}

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RLSettings:
        return settings_from_mapping(cls, values, required=("tasks", "out"))

    def to_json(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["tasks"], values["out"] = str(self.tasks), str(self.out)
        return values
