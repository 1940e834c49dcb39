"""The GPU check: SFT, then a few GRPO steps with vLLM generation, on the SmolLM2-135M weights; prints throughput.

    python -m training.experiments.gpu_check [--out DIR] [--vllm] [--dry-run]

Runs in one go on one GPU in a few minutes (budget: under 10) and needs no network:

1. compose short tasks from 200 candidates over accounting and chat (composer, fixed seed; those of
   at most four calls, ``training.experiments.short_tasks``) and replay their reference plans
   through the harness in discover mode, as GRPO runs (``reference/trajectories.jsonl``);
2. ``training sft`` on those trajectories: SmolLM2-135M-Instruct (``smollm2``), full weights,
   bf16, ``--sft-steps`` steps, conversations longer than SmolLM2's 8,192 tokens cut at the end of
   their last assistant turn that fits; prints the training throughput in tokens/s (of the tokens
   trained on: kept examples, cut ones as cut);
3. ``training rl`` from the SFT model: GRPO with transformers generation on the GPU (``--vllm``:
   vLLM colocated in the trainer's process, TRL's backend, weights synced every step), groups of 4
   rollouts, each a private harness episode through the task's tools, graded by the harness and
   rewarded by CFRR; prints the rollout throughput (generated tokens/s, episodes/s) and the rewards.

It needs the ``train`` extra on a CUDA machine; ``--vllm`` also the ``vllm`` extra (the lent GPU
machine has no vLLM: ``training.experiments.gpu_bundle`` carries the rest there). ``--dry-run`` does everything but the GPU work, on
any machine with the ``train`` extra: it composes, collects the reference trajectories, builds the
SFT data and runs the GRPO checks (tasks, batch arithmetic, tokenizer and template, prompt
lengths), then says what the real run would train. Without it the check refuses to start without
a GPU; it is never part of the test suite. ``summary.json`` in ``--out`` holds the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

from mcp_services.command_line import InputError, Parser, run_command
from training.experiments.short_tasks import SHORT_TASK_SERVICES, compose_short_tasks

__all__ = ["compose_and_collect", "main"]

_CANDIDATES = 200
_SEED = 0
_MAX_CALLS = 4
_SFT_BATCH = 4
_SFT_MAX_LENGTH = 8192  # SmolLM2-135M's context


def _log(message: str) -> None:
    print(f"[gpu-check {time.strftime('%H:%M:%S')}] {message}", flush=True)


def _compose(out: Path) -> Path:
    from mcp_services.tasks.spec import write_tasks

    tasks = compose_short_tasks(_CANDIDATES, _SEED, SHORT_TASK_SERVICES, _MAX_CALLS, _log)
    path = out / "tasks.jsonl"
    write_tasks(path, tasks)
    return path


def _reference(out: Path, tasks_file: Path) -> Path:
    from harness.collect import CollectConfig, collect_async
    from harness.runner import RunnerConfig

    run_dir = out / "reference"
    # Discover mode, as GRPO runs: in direct mode every tool of the task's services is in every prompt,
    # and the conversations pass SmolLM2's 8,192-token context.
    config = CollectConfig(out=run_dir, tasks_file=tasks_file, runner=RunnerConfig(mode="discover"), progress=False)
    report = asyncio.run(collect_async(config, log=_log))
    _log(f"reference trajectories: {report.n_new} ({report.n_passed_new} passed)")
    return run_dir


def compose_and_collect(out: Path) -> tuple[Path, Path]:
    """Step 1, on the CPU: ``out/tasks.jsonl`` and the reference run ``out/reference``."""
    tasks_file = _compose(out)
    return tasks_file, _reference(out, tasks_file)


def _sft_examples(run_dir: Path) -> tuple[list[int], list[list[bool]]]:
    """SmolLM2 tokens of each conversation SFT trains on (passing, duplicates dropped as SFT drops them),
    tools included, and which of them the loss covers (the assistant's turns)."""
    from harness.agents.generation import template_messages
    from harness.agents.models import load_tokenizer
    from training.sft_data import normalize_trajectory, read_trajectories

    tokenizer = load_tokenizer("smollm2")
    seen: set[str] = set()
    lengths: list[int] = []
    trained: list[list[bool]] = []
    for _, record in read_trajectories(run_dir):
        if not record["passed"]:
            continue
        key = json.dumps(normalize_trajectory(record), sort_keys=True, ensure_ascii=False)
        if key in seen:
            continue
        seen.add(key)
        rendered = tokenizer.apply_chat_template(
            template_messages(record["messages"]), tools=record["tools"], tokenize=True, return_dict=True,
            return_assistant_tokens_mask=True,
        )
        lengths.append(len(rendered["input_ids"]))
        trained.append([bool(bit) for bit in rendered["assistant_masks"]])
    return lengths, trained


def _sft_tokens(kept_mean_tokens: float, steps: int) -> float:
    """Mean tokens of a conversation trained on (kept examples, cut ones as cut), times those seen."""
    return kept_mean_tokens * steps * _SFT_BATCH


def _sft_settings(out: Path, run_dir: Path, steps: int) -> Any:
    from training.sft_settings import SFTSettings

    return SFTSettings(
        data=run_dir,
        out=out / "sft",
        model="smollm2",
        max_steps=steps,
        batch_size=_SFT_BATCH,
        learning_rate=1e-4,
        warmup=0.1,
        max_length=_SFT_MAX_LENGTH,
        cut_long_examples=True,  # most conversations read a page of channel history and pass 8,192 tokens
        val_fraction=0.0,
        logging_steps=5,
    )


def _sft(out: Path, run_dir: Path, steps: int) -> tuple[Path, dict[str, Any]]:
    from training.sft import run_sft

    settings = _sft_settings(out, run_dir, steps)
    started = time.perf_counter()
    summary = run_sft(settings, log=_log)
    seconds = time.perf_counter() - started
    tokens = _sft_tokens(summary["lengths"]["kept_mean_tokens"], summary["steps"])
    train_s = summary["train_runtime_s"]
    figures = {
        "steps": summary["steps"],
        "final_loss": None if summary["final_loss"] is None else round(summary["final_loss"], 4),
        "seconds_total": round(seconds, 1),
        "seconds_training": train_s,
        "tokens_per_second": round(tokens / train_s, 1) if train_s else None,
    }
    _log(f"SFT: {figures['steps']} steps, loss {figures['final_loss']}, ~{figures['tokens_per_second']} tokens/s")
    return settings.out, figures


def _grpo_settings(out: Path, tasks_file: Path, model: str, steps: int, vllm: bool) -> Any:
    from training.rl_settings import RLSettings

    return RLSettings(
        tasks=tasks_file,
        out=out / "grpo",
        model=model,
        reward="cfrr",
        group_size=4,
        batch_size=16,  # 4 tasks x 4 rollouts per step
        max_steps=steps,
        learning_rate=1e-6,
        max_turns=4,
        max_turn_tokens=256,
        max_completion_length=2048,
        temperature=1.0,
        vllm="colocate" if vllm else None,
        vllm_gpu_memory_utilization=0.3,
        vllm_max_model_length=8192,
        logging_steps=1,
    )


def _grpo(out: Path, tasks_file: Path, model_dir: Path, steps: int, vllm: bool) -> dict[str, Any]:
    from training.rl import run_rl

    settings = _grpo_settings(out, tasks_file, str(model_dir), steps, vllm)
    started = time.perf_counter()
    summary = run_rl(settings, log=_log)
    seconds = time.perf_counter() - started
    rollouts = summary["rollouts"]
    figures = {
        "generation": "vllm-colocate" if vllm else "transformers",
        "steps": summary["steps"],
        "episodes": rollouts["episodes"],
        "generated_tokens": rollouts["model_tokens"],
        "rollout_seconds": rollouts["seconds"],
        "generated_tokens_per_second": rollouts["tokens_per_second"],
        "episodes_per_second": round(rollouts["episodes"] / rollouts["seconds"], 2) if rollouts["seconds"] else None,
        "seconds_total": round(seconds, 1),
        "seconds_per_step": round(summary["train_runtime_s"] / max(summary["steps"], 1), 1),
        "rewards": summary["rewards"],
        "pass_rates": summary["pass_rates"],
    }
    _log(
        f"GRPO ({figures['generation']}): {figures['steps']} steps, {figures['episodes']} episodes, "
        f"{figures['generated_tokens_per_second']} generated tokens/s, {figures['episodes_per_second']} episodes/s, "
        f"{figures['seconds_per_step']} s/step; rewards {figures['rewards']}; pass rates {figures['pass_rates']}"
    )
    return figures


def _dry_run(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Everything but the GPU work: the data and the checks the real run starts with, and what it would train."""
    from training.rl import prepare_rl
    from training.sft import sft_config, fit_lengths
    from training.sft_data import build_sft_data

    tasks_file, run_dir = compose_and_collect(out)
    data = build_sft_data(run_dir, val_fraction=0.0, seed=_SEED)
    lengths, trained = _sft_examples(run_dir)
    # The SFT run's own fit (cut at turn boundaries): an error if it keeps nothing.
    fit = fit_lengths(lengths, _SFT_MAX_LENGTH, None, trained)
    tokens = _sft_tokens(fit.kept_mean_tokens, args.sft_steps)
    # The settings the real run builds, checked against the TRL and transformers installed here.
    sft_config(_sft_settings(out, run_dir, args.sft_steps), str(out))
    # The real GRPO starts from the SFT model; its tokenizer is SmolLM2's, which the checks load here.
    # vLLM is left out of the checks: it needs the GPU.
    run = prepare_rl(_grpo_settings(out, tasks_file, "smollm2", args.grpo_steps, vllm=False))
    vllm_found = importlib.util.find_spec("vllm") is not None
    plan = {
        "dry_run": True,
        "sft": {"examples": len(data.train), "kept": fit.n_examples - fit.n_dropped, "cut": fit.n_cut,
                "steps": args.sft_steps, "batch_size": _SFT_BATCH, "mean_tokens_trained": fit.kept_mean_tokens,
                "tokens_to_train_on": round(tokens), "lengths": fit.describe()},
        "grpo": {"tasks": len(run.tasks), "steps": args.grpo_steps, "longest_prompt_tokens": run.longest_prompt,
                 "generation": "vllm-colocate" if args.vllm else "transformers",
                 "vllm_installed": vllm_found},
    }
    _log(
        f"dry run: SFT would train {args.sft_steps} steps on {len(data.train)} examples (~{round(tokens):,} tokens, "
        f"{fit.kept_mean_tokens:,.0f} per example trained on; {fit.describe()}), "
        f"GRPO {args.grpo_steps} steps over {len(run.tasks)} tasks (longest prompt {run.longest_prompt:,} tokens) "
        f"with {plan['grpo']['generation']} generation"
        + ("; vllm is not installed here: --vllm needs it" if args.vllm and not vllm_found else "")
    )
    return plan


def _check(args: argparse.Namespace) -> int:
    import torch

    if not args.dry_run:
        if not torch.cuda.is_available():
            raise InputError("no CUDA GPU here", "this check runs on a GPU machine; --dry-run runs the rest anywhere")
        if args.vllm and importlib.util.find_spec("vllm") is None:
            raise InputError("vllm is not installed", "pip install 'compoworld[vllm]', or leave --vllm out")
    if args.out.exists() and any(args.out.iterdir()):
        raise InputError(f"--out {args.out} is not empty", "pass a new folder")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if args.dry_run:
        summary = _dry_run(args.out, args)
    else:
        _log(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
        tasks_file, run_dir = compose_and_collect(args.out)
        model_dir, sft = _sft(args.out, run_dir, args.sft_steps)
        grpo = _grpo(args.out, tasks_file, model_dir, args.grpo_steps, vllm=args.vllm)
        summary = {"device": torch.cuda.get_device_name(0), "sft": sft, "grpo": grpo}
    summary["total_seconds"] = round(time.perf_counter() - started, 1)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    _log(f"done in {summary['total_seconds']} s; figures in {args.out / 'summary.json'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        prog="python -m training.experiments.gpu_check",
        command="gpu_check",
        description=(__doc__ or "").split("\n")[0],
    )
    parser.add_argument("--out", type=Path, default=Path("runs/gpu-check"), help="a new folder")
    parser.add_argument("--sft-steps", type=int, default=40)
    parser.add_argument("--grpo-steps", type=int, default=4)
    parser.add_argument("--vllm", action="store_true", help="GRPO with vLLM colocated (default: transformers generation)")
    parser.add_argument("--dry-run", action="store_true", help="everything but the GPU work (compose, collect, checks)")
    args = parser.parse_args(argv)
    return run_command("gpu_check", lambda: _check(args))


if __name__ == "__main__":
    sys.exit(main())
