"""RL with GRPO on CompoWorld tasks: every rollout is a private episode, graded by the harness, rewarded by CFRR.

Why ``rollout_func`` and not ``environment_factory``: TRL 1.16 offers both for multi-turn tool use.
``environment_factory`` runs TRL's own tool loop, which takes the tools from the *methods* of one
environment class (schemas from type hints and docstrings, one fixed set per class), parses calls
with the tokenizer's response schema and builds its own prompt. CompoWorld tasks each mount
different services whose tools come with rich JSON schemas, the harness has its own system prompt,
``<tool_call>`` parser, error results for malformed calls, turn and time limits, and grading; an
environment class would re-implement all of it and train on a conversation the harness never shows.
``rollout_func`` hands us the prompts and expects token ids back, so each rollout runs the harness's
own ``run_episode`` (``training.rl_rollout``) with the policy as the agent (``training.rl_agent``):
training rollouts are evaluation episodes, token for token, and the reward comes from
``task.grade`` through the runner. Generation goes through the trainer (transformers, or TRL's vLLM
backend in colocate or server mode, which also keeps vLLM's weights in sync).

``run_rl`` checks everything it can before the model loads (task file, rubric, batch arithmetic,
chat template, vLLM availability), then the context length, then trains and saves the model, the
tokenizer, ``training_summary.json`` and ``rollouts.jsonl`` (every graded rollout with its reward).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.agents.models import load_model, load_tokenizer
from harness.runner import RunnerConfig
from harness.tools import InProcessTransport
from training.errors import TrainingInputError
from training.model_choice import ModelChoice, announce_loaded, announce_model, require_weights, say
from training.rl_agent import TurnLimits
from training.rl_data import load_rl_tasks, prompt_dataset, prompt_messages
from training.rl_generation import Generator, default_generator
from training.rl_reward import GroupRubricReward, RolloutLog
from training.rl_rollout import EpisodeRollouts, RolloutConfig
from training.rl_settings import RLSettings
from training.rl_tokens import ChatTokens
from training.rng import global_rng_preserved
from training.sft import SUMMARY_FILE, checkpointing_field
from training.trl_cpu import completion_only_scoring_on_cpu

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from trl import GRPOTrainer

    from mcp_services.tasks.spec import TaskSpec

__all__ = ["ROLLOUTS_FILE", "GeneratorWrapper", "RLRun", "build_rl_trainer", "prepare_rl", "run_rl", "train_rl"]

ROLLOUTS_FILE = "rollouts.jsonl"

#: Wraps the default generator (tests script some turns; benchmarks time them).
GeneratorWrapper = Callable[[Generator], Generator]


@dataclass(frozen=True)
class RLRun:
    """Everything checked and loaded before training: tasks, tokenizer and its template, prompt lengths."""

    settings: RLSettings
    tasks: list[TaskSpec]
    tokenizer: PreTrainedTokenizerBase
    chat: ChatTokens
    longest_prompt: int
    longest_prompt_task: str


def _world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def _check_vllm(settings: RLSettings) -> None:
    if settings.vllm is None:
        return
    import torch

    if not torch.cuda.is_available():
        raise TrainingInputError(f"--vllm {settings.vllm} needs a GPU; on the CPU leave --vllm unset (transformers)")
    if importlib.util.find_spec("vllm") is None:
        raise TrainingInputError(f"--vllm {settings.vllm} needs vllm: pip install 'compoworld[vllm]'")


def _check_task_count(settings: RLSettings, tasks: Sequence[TaskSpec]) -> None:
    # TRL's sampler drops an incomplete last batch: with fewer tasks than one batch holds, it yields nothing.
    per_batch = settings.batch_size * settings.gradient_accumulation_steps * _world_size() // settings.group_size
    if len(tasks) < per_batch:
        raise TrainingInputError(
            f"{settings.tasks} holds {len(tasks)} task(s) but one generation batch needs {per_batch} distinct tasks "
            f"({settings.batch_size} x {settings.gradient_accumulation_steps} rollouts per process / group size "
            f"{settings.group_size}): add tasks or lower batch_size"
        )


async def _tool_lists(tasks: Sequence[TaskSpec], mode: str) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """The tools the model sees, per set of mounted services (the harness lists them from the episode)."""
    transport = InProcessTransport(reuse=False)
    lists: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for task in tasks:
        key = tuple(task.mounted_services)
        if key not in lists:
            async with transport.open(task, mode) as session:  # type: ignore[arg-type]
                lists[key] = await session.list_tools()
    return lists


def _longest_prompt(tasks: Sequence[TaskSpec], chat: ChatTokens, mode: str) -> tuple[int, str]:
    tools = asyncio.run(_tool_lists(tasks, mode))
    lengths = [
        (len(chat.prompt_ids(prompt_messages(task, mode), tools[tuple(task.mounted_services)])), task.id)
        for task in tasks
    ]
    return max(lengths)


def _checked_tasks(settings: RLSettings) -> list[TaskSpec]:
    if settings.out.exists() and not settings.out.is_dir():
        raise TrainingInputError(f"--out {settings.out} exists and is not a folder")
    tasks = load_rl_tasks(settings.tasks)
    _check_task_count(settings, tasks)
    return tasks


def prepare_rl(settings: RLSettings, *, load_from: str | None = None) -> RLRun:
    """The cheap checks, in order: output folder, vLLM, tasks, batch arithmetic, tokenizer and template.
    ``load_from`` is where the model's files are (default: ``settings.model``, a built-in name or folder)."""
    _check_vllm(settings)
    tasks = _checked_tasks(settings)
    tokenizer = load_tokenizer(load_from or settings.model, chat_template=settings.chat_template)
    tokenizer.padding_side = "left"  # GRPOTrainer pads prompts on the left
    chat = ChatTokens(tokenizer, settings.chat_template_kwargs)
    chat.check()
    longest, task_id = _longest_prompt(tasks, chat, settings.mode)
    return RLRun(settings, tasks, tokenizer, chat, longest, task_id)


def _context_length(run: RLRun, model: PreTrainedModel) -> int:
    settings = run.settings
    context = int(getattr(model.config.get_text_config(), "max_position_embeddings", 0) or 0)
    if settings.vllm_max_model_length is not None:
        context = min(context, settings.vllm_max_model_length) if context else settings.vllm_max_model_length
    if not context:
        raise TrainingInputError("the model's config states no max_position_embeddings; set vllm_max_model_length")
    needed = run.longest_prompt + settings.max_turn_tokens
    if needed > context:
        raise TrainingInputError(
            f"the prompt of task {run.longest_prompt_task} is {run.longest_prompt} tokens (tools included) and a turn "
            f"may add {settings.max_turn_tokens}, but the model's context is {context} tokens: use shorter tasks "
            "(fewer services), --mode discover, or a model with a longer context"
        )
    return context


def _grpo_config(settings: RLSettings, stop_ids: Sequence[int]) -> Any:
    import torch
    from trl import GRPOConfig

    on_gpu = torch.cuda.is_available()
    bf16 = settings.bf16 if settings.bf16 is not None else on_gpu and torch.cuda.is_bf16_supported()
    checkpointing = settings.gradient_checkpointing if settings.gradient_checkpointing is not None else on_gpu
    values: dict[str, Any] = {
        "output_dir": str(settings.out),
        "seed": settings.seed,
        "max_steps": settings.max_steps,
        "num_train_epochs": settings.num_train_epochs,
        "learning_rate": settings.learning_rate,
        "per_device_train_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.gradient_accumulation_steps,
        "num_generations": settings.group_size,
        "max_completion_length": settings.max_completion_length,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "beta": settings.kl_beta,
        "bf16": bf16,
        checkpointing_field(GRPOConfig): checkpointing,  # TRL's default is on, which only costs time on the CPU
        "logging_steps": settings.logging_steps,
        "save_strategy": "steps" if settings.save_steps else "no",
        "report_to": "none",  # no hub, no trackers: nothing leaves the machine
        "use_cpu": not on_gpu,
        "use_vllm": settings.vllm is not None,
    }
    if settings.save_steps:
        values["save_steps"] = settings.save_steps
    if settings.vllm is not None:
        values.update(
            vllm_mode=settings.vllm,
            vllm_gpu_memory_utilization=settings.vllm_gpu_memory_utilization,
            vllm_max_model_length=settings.vllm_max_model_length,
            vllm_tensor_parallel_size=settings.vllm_tensor_parallel_size,
            vllm_enable_sleep_mode=settings.vllm_enable_sleep_mode,
            # A turn ends at the chat template's end of turn, whatever the model's generation config says.
            generation_kwargs={"stop_token_ids": list(stop_ids)},
        )
        if settings.vllm_server_base_url is not None:
            values["vllm_server_base_url"] = settings.vllm_server_base_url
    clash = sorted(set(settings.extra_args) & set(values))
    if clash:
        raise TrainingInputError(f"extra_args may not override {clash}: use the settings of the same name")
    values.update(settings.extra_args)
    try:
        return GRPOConfig(**values)
    except (TypeError, ValueError) as error:
        raise TrainingInputError(f"bad GRPO setting: {error}") from None


def _peft_config(settings: RLSettings) -> Any:
    if not settings.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(
        task_type="CAUSAL_LM",
        r=settings.lora_r,
        lora_alpha=settings.lora_alpha,
        lora_dropout=settings.lora_dropout,
        target_modules=settings.lora_target_modules,
    )


def _rollouts_path(settings: RLSettings) -> Path:
    from accelerate import PartialState

    state = PartialState()
    name = ROLLOUTS_FILE if state.num_processes == 1 else f"rollouts.rank{state.process_index}.jsonl"
    return settings.out / name


def build_rl_trainer(
    run: RLRun, model: PreTrainedModel, *, wrap_generator: GeneratorWrapper | None = None
) -> tuple[GRPOTrainer, EpisodeRollouts]:
    """A GRPOTrainer whose rollouts are harness episodes (not yet trained)."""
    from trl import GRPOTrainer

    settings = run.settings
    context = _context_length(run, model)
    config = _grpo_config(settings, run.chat.stop_ids)

    def make_generator(trainer: GRPOTrainer) -> Generator:
        generator = default_generator(trainer, run.chat.stop_ids, settings.seed)
        return wrap_generator(generator) if wrap_generator is not None else generator

    rollouts = EpisodeRollouts(
        run.tasks,
        run.chat,
        RolloutConfig(
            runner=RunnerConfig(
                mode=settings.mode,  # type: ignore[arg-type]
                max_turns=settings.max_turns,
                episode_timeout=settings.episode_timeout,
            ),
            limits=TurnLimits(settings.max_turn_tokens, settings.max_completion_length, context),
            seed=settings.seed,
            agent_name=f"policy:{settings.model}",
        ),
        make_generator,
    )
    reward = GroupRubricReward(
        settings.reward,  # type: ignore[arg-type]
        settings.reward_knobs,
        RolloutLog(_rollouts_path(settings)),
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*'rollout_func', which is an experimental feature.*")
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[reward],
            args=config,
            train_dataset=prompt_dataset(run.tasks, settings.mode),
            processing_class=run.tokenizer,
            peft_config=_peft_config(settings),
            rollout_func=rollouts,
        )
    if settings.vllm is not None:
        # TRL sizes vLLM's outputs for single-turn completions; here one call is one turn.
        trainer.vllm_generation.max_completion_length = settings.max_turn_tokens
    return trainer, rollouts


def _series(log_history: list[dict[str, Any]], key: str) -> list[float]:
    return [float(entry[key]) for entry in log_history if key in entry]


def _versions() -> dict[str, str]:
    import torch
    import transformers
    import trl

    return {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__}


def train_rl(
    run: RLRun,
    model: PreTrainedModel,
    *,
    wrap_generator: GeneratorWrapper | None = None,
    resolved: ModelChoice | None = None,
) -> dict[str, Any]:
    """Train ``model`` with GRPO, save it with its tokenizer and ``training_summary.json``; return the summary.

    ``--out`` is made before training: ``rollouts.jsonl`` grows there as episodes are graded."""
    settings = run.settings
    started = time.monotonic()
    settings.out.mkdir(parents=True, exist_ok=True)
    with global_rng_preserved():
        trainer, rollouts = build_rl_trainer(run, model, wrap_generator=wrap_generator)
        try:
            with completion_only_scoring_on_cpu():
                trainer.train()
        finally:
            rollouts.close()
    trainer.save_model(str(settings.out))
    run.tokenizer.save_pretrained(str(settings.out))
    history = trainer.state.log_history
    generated = sum(s.model_tokens for s in rollouts.stats)
    rollout_seconds = sum(s.seconds for s in rollouts.stats)
    summary: dict[str, Any] = {
        "kind": "rl",
        "model": settings.model,
        "resolved_model": resolved.to_json() if resolved is not None else None,
        "saved": "lora-adapter" if settings.lora else "model",
        "steps": trainer.state.global_step,
        "n_tasks": len(run.tasks),
        "reward": settings.reward,
        "rewards": _series(history, "reward"),
        "pass_rates": _series(history, "compoworld/pass_rate"),
        "rubric_scores": _series(history, "compoworld/rubric_score"),
        "losses": _series(history, "loss"),
        "rollouts": {
            "file": ROLLOUTS_FILE,
            "episodes": sum(s.episodes for s in rollouts.stats),
            "model_tokens": generated,
            "seconds": round(rollout_seconds, 2),
            "tokens_per_second": round(generated / rollout_seconds, 2) if rollout_seconds else None,
        },
        "longest_prompt_tokens": run.longest_prompt,
        "settings": settings.to_json(),
        "versions": _versions(),
        "train_runtime_s": round(time.monotonic() - started, 2),
    }
    if trainer.accelerator.is_main_process:
        (settings.out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def run_rl(
    settings: RLSettings,
    *,
    wrap_generator: GeneratorWrapper | None = None,
    dry_run: bool = False,
    log: Callable[[str], None] = say,
) -> dict[str, Any]:
    """The whole ``training rl``: the model it names (said, and refused on a CPU when too large), the
    checks, then the model's weights, then GRPO. With ``dry_run`` it stops after the model and the task checks."""
    choice = announce_model(settings.model, log, dry_run=dry_run)
    if dry_run:
        tasks = _checked_tasks(settings)
        log(
            f"dry run: would train {choice.name} ({'LoRA' if settings.lora else 'all weights'}) with GRPO over "
            f"{len(tasks)} tasks, groups of {settings.group_size}, {settings.reward} reward, "
            f"{'vLLM ' + settings.vllm if settings.vllm else 'transformers'} generation; nothing loaded, nothing written"
        )
        return {"dry_run": True, "resolved_model": choice.to_json(), "n_tasks": len(tasks)}
    load_from = require_weights(choice)
    run = prepare_rl(settings, load_from=load_from)
    with global_rng_preserved():
        model = load_model(load_from, run.tokenizer, seed=settings.seed)
    choice = announce_loaded(choice, model, log)
    return train_rl(run, model, wrap_generator=wrap_generator, resolved=choice)
