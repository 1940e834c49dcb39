"""The GPU check: SFT, then a few GRPO steps with vLLM generation, on the SmolLM2-135M weights; prints throughput.

    python -m training.experiments.gpu_check [--out DIR] [--no-vllm]

Runs in one go on one GPU in a few minutes (budget: under 10) and needs no network:

1. compose 48 short crm tasks (composer, fixed seed) and replay their reference plans through the
   harness (``reference/trajectories.jsonl``);
2. ``training sft`` on those trajectories: SmolLM2-135M-Instruct (``smollm2``), full weights,
   bf16, ``--sft-steps`` steps; prints the training throughput in tokens/s;
3. ``training rl`` from the SFT model: GRPO, vLLM colocated in the trainer's process (TRL's
   backend, weights synced every step), groups of 4 rollouts, each a private harness episode
   through the task's tools, graded by the harness and rewarded by CFRR; prints the rollout
   throughput (generated tokens/s, episodes/s) and the rewards.

It needs the ``train`` and ``vllm`` extras on a CUDA machine (vLLM is not installable on the
CPU machines). ``--no-vllm`` runs the GRPO steps with transformers generation on the GPU instead,
to separate a vLLM problem from a training one. It is never part of the test suite: it lives
outside ``tests/`` and refuses to start without a GPU. ``summary.json`` in ``--out`` holds the figures.
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

__all__ = ["main"]

_TASKS = 48
_SEED = 0


def _log(message: str) -> None:
    print(f"[gpu-check {time.strftime('%H:%M:%S')}] {message}", flush=True)


def _compose(out: Path) -> Path:
    from composer.generate import GenerateConfig, generate
    from mcp_services.tasks.spec import write_tasks

    tasks, report = generate(
        GenerateConfig(n=_TASKS, seed=_SEED, services=("crm",), min_services=1, max_calls=2, distractor_services=0)
    )
    path = out / "tasks.jsonl"
    write_tasks(path, tasks)
    _log(f"composed {len(tasks)} tasks ({report.summary()})")
    return path


def _reference(out: Path, tasks_file: Path) -> Path:
    from harness.collect import CollectConfig, collect_async

    run_dir = out / "reference"
    report = asyncio.run(collect_async(CollectConfig(out=run_dir, tasks_file=tasks_file, progress=False)))
    _log(f"reference trajectories: {report.n_new} ({report.n_passed_new} passed)")
    return run_dir


def _sft_tokens(run_dir: Path, steps: int, batch_size: int) -> float:
    """Mean tokens of a training conversation, times the conversations seen: SFT's token count."""
    from harness.agents.generation import template_messages
    from harness.evaluate import read_run
    from harness.agents.models import load_tokenizer

    tokenizer = load_tokenizer("smollm2")
    lengths = [
        len(
            tokenizer.apply_chat_template(
                template_messages(t.messages), tools=t.tools, tokenize=True, return_dict=False
            )
        )
        for t in read_run(run_dir)
        if t.passed
    ]
    return sum(lengths) / len(lengths) * steps * batch_size


def _sft(out: Path, run_dir: Path, steps: int) -> tuple[Path, dict[str, Any]]:
    from training.sft import run_sft
    from training.sft_settings import SFTSettings

    model_dir = out / "sft"
    batch_size = 4
    settings = SFTSettings(
        data=run_dir,
        out=model_dir,
        model="smollm2",
        max_steps=steps,
        batch_size=batch_size,
        learning_rate=1e-4,
        warmup=0.1,
        max_length=8192,
        val_fraction=0.0,
        logging_steps=5,
    )
    started = time.perf_counter()
    summary = run_sft(settings)
    seconds = time.perf_counter() - started
    tokens = _sft_tokens(run_dir, summary["steps"], batch_size)
    train_s = summary["train_runtime_s"]
    figures = {
        "steps": summary["steps"],
        "final_loss": summary["final_loss"],
        "seconds_total": round(seconds, 1),
        "seconds_training": train_s,
        "tokens_per_second": round(tokens / train_s, 1) if train_s else None,
    }
    _log(f"SFT: {figures['steps']} steps, loss {figures['final_loss']}, ~{figures['tokens_per_second']} tokens/s")
    return model_dir, figures


def _grpo(out: Path, tasks_file: Path, model_dir: Path, steps: int, vllm: bool) -> dict[str, Any]:
    from training.rl import run_rl
    from training.rl_settings import RLSettings

    settings = RLSettings(
        tasks=tasks_file,
        out=out / "grpo",
        model=str(model_dir),
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
    started = time.perf_counter()
    summary = run_rl(settings)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.experiments.gpu_check", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=Path("runs/gpu-check"), help="a new folder")
    parser.add_argument("--sft-steps", type=int, default=40)
    parser.add_argument("--grpo-steps", type=int, default=4)
    parser.add_argument("--no-vllm", action="store_true", help="GRPO with transformers generation on the GPU")
    args = parser.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("gpu_check: error: no CUDA GPU here; this check runs on a GPU machine only", file=sys.stderr)
        return 2
    if not args.no_vllm and importlib.util.find_spec("vllm") is None:
        message = "vllm is not installed (pip install 'compoworld[vllm]'), or pass --no-vllm"
        print(f"gpu_check: error: {message}", file=sys.stderr)
        return 2
    if args.out.exists() and any(args.out.iterdir()):
        print(f"gpu_check: error: --out {args.out} is not empty", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    _log(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    tasks_file = _compose(args.out)
    run_dir = _reference(args.out, tasks_file)
    model_dir, sft = _sft(args.out, run_dir, args.sft_steps)
    grpo = _grpo(args.out, tasks_file, model_dir, args.grpo_steps, vllm=not args.no_vllm)
    summary = {
        "device": torch.cuda.get_device_name(0),
        "sft": sft,
        "grpo": grpo,
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    _log(f"done in {summary['total_seconds']} s; figures in {args.out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
