"""Supervised fine-tuning on passing trajectories with TRL's ``SFTTrainer``.

Assistant-only loss: the labels cover what the assistant wrote (its tool calls and answers),
never the system prompt, the user or the tool results. TRL swaps in the training variant of a
known template (for Qwen3: ``qwen3_training.jinja``, with ``{% generation %}`` markers); a
template that already has markers (our ChatML one for SmolLM2) is used as is.

Lengths: every example is tokenized whole (TRL's own tokenization, no truncation), then
``max_length`` is the longest example's (within the model's context) unless a setting gives it;
examples longer than it are dropped, or with ``cut_long_examples`` cut at the end of their last
assistant turn that fits (never in the middle of a turn), and ``training_summary.json`` says how
many and why (``lengths``).

Everything is checked (data, model name, template) before any training step, and every
user-facing problem is a ``TrainingInputError``.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from harness.agents.models import load_model, load_tokenizer
from training.errors import TrainingInputError
from training.model_choice import ModelChoice, announce_loaded, announce_model, require_weights, say
from training.rng import global_rng_preserved
from training.sft_data import SFTData, build_sft_data
from training.sft_settings import SFTSettings
from training.trl_cpu import completion_only_scoring_on_cpu

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from trl import SFTTrainer

__all__ = [
    "SUMMARY_FILE",
    "LengthFit",
    "build_trainer",
    "check_chat_template",
    "checkpointing_field",
    "dry_run_line",
    "fit_lengths",
    "format_loss",
    "run_sft",
    "sft_config",
    "summary_line",
    "train_and_save",
    "turn_cut",
]

SUMMARY_FILE = "training_summary.json"

# A probe conversation: arguments as a JSON string, exactly as the dataset stores them.
_PROBE_ARGUMENTS = '{"probe_key": "probe_value"}'
_PROBE_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "probe_question"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "probe_tool", "arguments": _PROBE_ARGUMENTS}}
        ],
    },
    {"role": "tool", "tool_call_id": "c0", "name": "probe_tool", "content": "probe_result"},
    {"role": "assistant", "content": "probe_answer"},
]
_PROBE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "probe_tool",
            "description": "A probe.",
            "parameters": {"type": "object", "properties": {"probe_key": {"type": "string"}}},
        },
    }
]


def check_chat_template(tokenizer: PreTrainedTokenizerBase) -> str | None:
    """The template SFTTrainer will mask with (None: the tokenizer's own), after checking it renders tool calls.

    Mirrors SFTTrainer's choice so that an unusable template fails here, before the model loads.
    """
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    if not tokenizer.chat_template:
        raise TrainingInputError("tokenizer has no chat template; pass a model whose tokenizer has one")
    template: str | None = None
    if not has_generation_markers(tokenizer.chat_template):
        try:
            template = get_training_chat_template(tokenizer)
        except ValueError:
            raise TrainingInputError(
                "the tokenizer's chat template has no {% generation %} markers and TRL has no training variant "
                "of it, so assistant-only loss is impossible; pass a model with a Qwen3 (or other TRL-known) template"
            ) from None
    rendered = tokenizer.apply_chat_template(
        _PROBE_MESSAGES, tools=_PROBE_TOOLS, chat_template=template, tokenize=False
    )
    expected = ("probe_tool", _PROBE_ARGUMENTS, "probe_result", "probe_answer")
    missing = [part for part in expected if part not in rendered]
    if missing:
        raise TrainingInputError(
            "the chat template drops tool calls or tool results, or re-encodes arguments given as JSON strings "
            f"(missing from the rendered probe: {missing}); pass a model with a tool-calling template such as Qwen3's"
        )
    return template


def checkpointing_field(config_class: type) -> str:
    """The name of gradient checkpointing in a TRL config: transformers 5.24 renamed it (TRL's default is
    on) to ``activation_checkpointing``, which wins while the old name mirrors it; older versions (the
    lent GPU machine has 5.17) know only ``gradient_checkpointing``."""
    names = {field.name for field in dataclasses.fields(config_class)}
    return "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"


def sft_config(settings: SFTSettings, scratch: str) -> Any:
    """TRL's ``SFTConfig`` for ``settings`` (the Trainer's own files in ``scratch``); a bad setting is one line."""
    import torch
    from trl import SFTConfig

    on_gpu = torch.cuda.is_available()
    bf16 = settings.bf16 if settings.bf16 is not None else on_gpu and torch.cuda.is_bf16_supported()
    # TRL turns gradient checkpointing on by default; on the CPU it only costs time.
    checkpointing = settings.gradient_checkpointing if settings.gradient_checkpointing is not None else on_gpu
    values: dict[str, Any] = {
        # The Trainer creates its output_dir when it is built: a scratch folder, so that a run killed
        # before the end leaves no empty --out behind (the model is saved to --out at the end).
        "output_dir": scratch,
        "seed": settings.seed,
        "max_steps": settings.max_steps,
        "num_train_epochs": settings.num_train_epochs,
        "learning_rate": settings.learning_rate,
        "per_device_train_batch_size": settings.batch_size,
        "per_device_eval_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.gradient_accumulation_steps,
        # Packs need a length; otherwise nothing is truncated: too-long examples are dropped whole (fit_lengths).
        "max_length": settings.max_length if settings.packing else None,
        "warmup_steps": settings.warmup,
        "lr_scheduler_type": settings.lr_scheduler_type,
        "weight_decay": settings.weight_decay,
        "logging_steps": settings.logging_steps,
        "packing": settings.packing,
        "bf16": bf16,
        checkpointing_field(SFTConfig): checkpointing,
        "assistant_only_loss": True,
        "report_to": "none",  # no hub, no trackers: nothing leaves the machine
        "save_strategy": "no",  # the final model is saved explicitly below
        "eval_strategy": "no",  # validation loss is computed once, after training
        "use_cpu": not on_gpu,
    }
    clash = sorted(set(settings.extra_args) & set(values))
    if clash:
        raise TrainingInputError(f"extra_args may not override {clash}: use the settings of the same name")
    values.update(settings.extra_args)
    try:
        return SFTConfig(**values)
    except (TypeError, ValueError) as error:
        raise TrainingInputError(f"bad SFT setting: {error}") from None


@dataclass(frozen=True)
class LengthFit:
    """How ``max_length`` was chosen and what it dropped (``training_summary.json``'s ``lengths``)."""

    max_length: int
    chosen_by: str  # "longest example", "max_length setting", "model context" or "packing"
    n_examples: int  # training and validation examples before the cut
    n_dropped: int  # longer than max_length and not cut: dropped whole
    median_tokens: float
    longest_tokens: int
    context: int | None  # the model's max_position_embeddings, when it states one
    n_cut: int = 0  # longer than max_length: cut at the end of their last assistant turn that fits
    kept_mean_tokens: float = 0.0  # mean tokens of what is trained: the kept examples, cut ones as cut

    def describe(self) -> str:
        kept = f"{self.n_examples - self.n_dropped} of {self.n_examples} examples kept"
        changes = [f"{verb} {n}" for verb, n in (("cuts", self.n_cut), ("drops", self.n_dropped)) if n]
        if not changes:
            return f"max_length {self.max_length:,} tokens ({self.chosen_by}); {kept}"
        how = "; cut ones end with their last assistant turn that fits" if self.n_cut else ""
        return (
            f"max_length {self.max_length:,} tokens ({self.chosen_by}) {' and '.join(changes)} of {self.n_examples} "
            f"examples longer than it (longest {self.longest_tokens:,}{how}); {kept}"
        )


def turn_cut(trained: Sequence[bool], max_length: int) -> int | None:
    """The longest prefix of at most ``max_length`` tokens that ends where an assistant turn ends (its
    end-of-turn token included: the template's generation span), or None when not even the first one fits.

    A prefix that ends after one of the model's turns is a conversation the model really had: it
    learns every turn it sees, and never a turn cut in the middle.
    """
    best = None
    for end in range(1, min(len(trained), max_length) + 1):
        if trained[end - 1] and (end == len(trained) or not trained[end]):
            best = end
    return best


def fit_lengths(
    lengths: list[int],
    max_length: int | None,
    context: int | None,
    trained: Sequence[Sequence[bool]] | None = None,
) -> LengthFit:
    """Choose ``max_length`` for examples of ``lengths`` tokens; refuse a cut that keeps nothing.

    With ``trained`` (per example, which tokens the loss covers) a longer example is cut at a turn
    boundary (``turn_cut``) rather than dropped, where one fits.
    """
    longest = max(lengths)
    if max_length is not None:
        limit, chosen_by = max_length, "max_length setting"
    elif context is not None and longest > context:
        limit, chosen_by = context, "model context"
    else:
        limit, chosen_by = longest, "longest example"
    kept = [n if n <= limit else (turn_cut(trained[i], limit) if trained is not None else None)
            for i, n in enumerate(lengths)]
    n_over = sum(1 for n in lengths if n > limit)
    trained_lengths = [n for n in kept if n is not None]
    if not trained_lengths:
        fix = "leave --max-length out to fit the longest" if max_length is not None else "use a model with a longer context"
        raise TrainingInputError(
            f"every example is longer than max_length {limit:,} ({chosen_by}): the shortest is {min(lengths):,} tokens, "
            f"the longest {longest:,}; {fix}, or collect shorter trajectories (--mode discover, fewer services)"
        )
    dropped = len(lengths) - len(trained_lengths)
    return LengthFit(
        limit, chosen_by, len(lengths), dropped, float(statistics.median(lengths)), longest, context,
        n_cut=n_over - dropped, kept_mean_tokens=round(statistics.fmean(trained_lengths), 1),
    )


def _context(model: PreTrainedModel) -> int | None:
    value = getattr(model.config.get_text_config(), "max_position_embeddings", None)
    return int(value) if value else None


def _trained(labels: Sequence[int]) -> list[bool]:
    return [label != -100 for label in labels]


def _fit_dataset(dataset: Any, max_length: int, cut: bool) -> Any:
    """``dataset`` with its longer examples cut at a turn boundary (``cut``), then those still too long dropped."""
    if cut:

        def shorten(example: dict[str, Any]) -> dict[str, Any]:
            n = len(example["input_ids"])
            end = turn_cut(_trained(example["labels"]), max_length) if n > max_length else None
            if end is None:
                return example
            return {key: value[:end] if isinstance(value, list) and len(value) == n else value
                    for key, value in example.items()}

        dataset = dataset.map(shorten, desc="Cutting long examples at a turn boundary")
    keep = [i for i, ids in enumerate(dataset["input_ids"]) if len(ids) <= max_length]
    return dataset if len(keep) == len(dataset) else dataset.select(keep)


def build_trainer(
    settings: SFTSettings,
    data: SFTData,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    scratch: str,
) -> tuple[SFTTrainer, LengthFit]:
    """An SFTTrainer over ``data`` (tokenised, labelled and fitted to ``max_length``; not yet trained),
    whose Trainer-managed files go to the folder ``scratch``."""
    from trl import SFTTrainer

    peft_config = None
    if settings.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(
            task_type="CAUSAL_LM",
            r=settings.lora_r,
            lora_alpha=settings.lora_alpha,
            lora_dropout=settings.lora_dropout,
            target_modules=settings.lora_target_modules,
        )
    trainer = SFTTrainer(
        model=model,
        args=sft_config(settings, scratch),
        train_dataset=data.train,
        eval_dataset=data.validation,
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    if settings.packing:  # TRL packed the examples into sequences of max_length: nothing to fit
        assert settings.max_length is not None  # SFTSettings requires it
        n = len(data.train) + (len(data.validation) if data.validation is not None else 0)
        return trainer, LengthFit(settings.max_length, "packing", n, 0, 0.0, 0, _context(model))
    datasets = [trainer.train_dataset] + ([trainer.eval_dataset] if trainer.eval_dataset is not None else [])
    lengths = [len(ids) for dataset in datasets for ids in dataset["input_ids"]]
    trained = [_trained(labels) for dataset in datasets for labels in dataset["labels"]] if settings.cut_long_examples else None
    fit = fit_lengths(lengths, settings.max_length, _context(model), trained)
    train = _fit_dataset(trainer.train_dataset, fit.max_length, settings.cut_long_examples)
    trainer.train_dataset = train
    if len(train) == 0:
        raise TrainingInputError(
            f"{fit.describe()}, but none of them is a training example (all kept ones are validation): "
            "raise --max-length or lower --val-fraction"
        )
    if trainer.eval_dataset is not None:
        evaluation = _fit_dataset(trainer.eval_dataset, fit.max_length, settings.cut_long_examples)
        trainer.eval_dataset = evaluation if len(evaluation) else None
    return trainer, fit


def _final_loss(log_history: list[dict[str, Any]]) -> float | None:
    losses = [entry["loss"] for entry in log_history if "loss" in entry]
    return float(losses[-1]) if losses else None


def _save(trainer: SFTTrainer, tokenizer: PreTrainedTokenizerBase, settings: SFTSettings) -> str:
    if settings.lora and settings.merge_lora:
        trainer.model.merge_and_unload().save_pretrained(str(settings.out))
        saved = "merged-model"
    else:
        trainer.save_model(str(settings.out))
        saved = "lora-adapter" if settings.lora else "model"
    tokenizer.save_pretrained(str(settings.out))
    return saved


def _versions() -> dict[str, str]:
    import peft
    import torch
    import transformers
    import trl

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "trl": trl.__version__,
        "peft": peft.__version__,
    }


def train_and_save(
    settings: SFTSettings,
    data: SFTData,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    *,
    resolved: ModelChoice | None = None,
) -> dict[str, Any]:
    """Train ``model`` on ``data``, save model + tokenizer + ``training_summary.json``, return the summary.

    ``--out`` is created only when the model is saved: a run stopped earlier leaves no folder.
    """
    if settings.out.exists() and not settings.out.is_dir():
        raise TrainingInputError(f"--out {settings.out} exists and is not a folder")
    started = time.monotonic()
    check_chat_template(tokenizer)
    with global_rng_preserved(), tempfile.TemporaryDirectory(prefix="compoworld-sft-") as scratch:
        trainer, lengths = build_trainer(settings, data, model, tokenizer, scratch)
        with completion_only_scoring_on_cpu():  # score assistant tokens only: long agent trajectories on the CPU
            result = trainer.train()
            eval_loss = trainer.evaluate().get("eval_loss") if trainer.eval_dataset is not None else None
    settings.out.mkdir(parents=True, exist_ok=True)
    saved = _save(trainer, tokenizer, settings)
    summary: dict[str, Any] = {
        "kind": "sft",
        "model": settings.model,
        "resolved_model": resolved.to_json() if resolved is not None else None,
        "saved": saved,
        "steps": trainer.state.global_step,
        "final_loss": _final_loss(trainer.state.log_history),
        "train_loss": float(result.training_loss),
        "eval_loss": None if eval_loss is None else float(eval_loss),
        "n_examples": data.stats["n_examples"],
        "n_train_examples_after_length_fit": len(trainer.train_dataset),
        "n_validation_examples_after_length_fit": len(trainer.eval_dataset) if trainer.eval_dataset is not None else 0,
        "lengths": asdict(lengths),  # tokens per example with this model's tokenizer and template
        "split": data.stats,
        # SFTTrainer keeps the template it masks with: TRL's training variant, or None for the tokenizer's own.
        "chat_template": "trl-training-variant" if trainer.chat_template is not None else "tokenizer",
        "settings": settings.to_json(),
        "versions": _versions(),
        "train_runtime_s": round(time.monotonic() - started, 2),
    }
    (settings.out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def format_loss(loss: float | None) -> str:
    """A loss as people read it: four significant digits (``11.94``, ``6.013e-05``), or "not logged"."""
    return "not logged" if loss is None else f"{loss:.4g}"


def summary_line(summary: dict[str, Any]) -> str:
    """What ``training sft`` prints when it ends: one sentence whose counts agree with each other."""
    split = summary["split"]
    kept_validation = summary.get("n_validation_examples_after_length_fit", split["n_validation_examples"])
    return (
        f"saved {summary['saved']} to {summary['settings']['out']}: {summary['steps']} steps, final loss "
        f"{format_loss(summary['final_loss'])}; {LengthFit(**summary['lengths']).describe()}: "
        f"{summary['n_train_examples_after_length_fit']} of {split['n_train_examples']} training and "
        f"{kept_validation} of {split['n_validation_examples']} validation examples"
    )


def dry_run_line(choice: ModelChoice, settings: SFTSettings, data: SFTData) -> str:
    """What ``training sft --dry-run`` prints after the model line: what the real run would train."""
    weights = f"LoRA r={settings.lora_r}" if settings.lora else "all weights"
    length = f"max_length {settings.max_length:,}" if settings.max_length else "max_length from the data"
    steps = f"{settings.max_steps} steps" if settings.max_steps > 0 else f"{settings.num_train_epochs:g} epoch(s)"
    return (
        f"dry run: would train {choice.name} ({weights}) for {steps} on {data.stats['n_train_examples']} training "
        f"and {data.stats['n_validation_examples']} validation examples ({length}); nothing loaded, nothing written"
    )


def run_sft(settings: SFTSettings, *, dry_run: bool = False, log: Callable[[str], None] = say) -> dict[str, Any]:
    """The whole ``training sft``: the model it names (said, and refused on a CPU when too large), the
    data, then tokenizer and template, then the model's weights, then training.

    Cheap checks come first so that bad input fails in seconds, before the model loads. With
    ``dry_run`` it stops after the model and the data checks, and returns the plan.
    """
    if settings.out.exists() and not settings.out.is_dir():
        raise TrainingInputError(f"--out {settings.out} exists and is not a folder")
    choice = announce_model(settings.model, log, dry_run=dry_run)
    data = build_sft_data(settings.data, val_fraction=settings.val_fraction, seed=settings.seed)
    if dry_run:
        log(dry_run_line(choice, settings, data))
        return {"dry_run": True, "resolved_model": choice.to_json(), "split": data.stats}
    load_from = require_weights(choice)
    tokenizer = load_tokenizer(load_from, chat_template=settings.chat_template)
    check_chat_template(tokenizer)
    with global_rng_preserved():
        model = load_model(load_from, tokenizer, seed=settings.seed)
    choice = announce_loaded(choice, model, log)
    return train_and_save(settings, data, model, tokenizer, resolved=choice)
