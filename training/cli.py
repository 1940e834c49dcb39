"""``training``: the command line over the training library (thin: parse, build settings, call).

    training sft --data RUN_DIR --out DIR [--model tiny-qwen3|smollm2|PATH] [--config FILE] [--lora] ...
    training rl --tasks FILE --out DIR [--model ...] [--reward cfrr|binary|rubric] [--group-size G] [--vllm MODE] ...

Bad input (a missing run, a corrupt line, an unknown model, a bad config) prints one line and
exits with code 2; only a bug shows a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from mcp_services.command_line import Parser, command_parser, configure_logging, run_command

__all__ = ["main"]

_PROG = "training"


def _add_sft_parser(subparsers: Any) -> None:
    sft = subparsers.add_parser(
        "sft",
        help="supervised fine-tuning on the passing trajectories of a collected run",
        description="Fine-tune on the passing trajectories of RUN_DIR/trajectories.jsonl (assistant-only loss). "
        "Flags override the values of --config.",
    )
    add = sft.add_argument
    add("--data", required=True, metavar="RUN_DIR", help="run folder written by `harness collect`")
    add("--out", required=True, metavar="DIR", help="where to save the model and training_summary.json")
    add("--model", metavar="NAME|PATH",
        help="tiny-qwen3, smollm2, Qwen/Qwen3-8B, Qwen/Qwen3-0.6B or a local model folder (or the config's model:)")
    add("--dry-run", action="store_true", help="say the model it resolves and check the data, then stop")
    add("--chat-template", metavar="NAME", help="replace the tokenizer's template: qwen3, chatml-tools or a .jinja")
    add("--config", metavar="FILE", help="JSON or YAML settings, e.g. training/configs/qwen3-8b-sft.yaml")
    add("--lora", action="store_true", default=None, help="train a LoRA adapter instead of all weights")
    add("--merge-lora", action="store_true", default=None, help="save the merged model, not the adapter")
    add("--max-steps", type=int, metavar="N", help="optimizer steps (default: one epoch)")
    add("--epochs", type=float, dest="num_train_epochs", metavar="N", help="epochs when --max-steps is not set")
    add("--lr", type=float, dest="learning_rate", metavar="LR", help="learning rate (default 2e-5)")
    add("--batch-size", type=int, metavar="N", help="per-device batch size (default 1)")
    add("--grad-accum", type=int, dest="gradient_accumulation_steps", metavar="N", help="gradient accumulation")
    add("--max-length", type=int, metavar="N",
        help="tokens per example; longer ones are dropped, not cut (default: the longest, within the model's context)")
    add("--cut-long-examples", action="store_true", default=None,
        help="cut a longer example at the end of its last assistant turn that fits, instead of dropping it")
    add("--val-fraction", type=float, metavar="F", help="share of tasks held out for validation (default 0.1)")
    add("--seed", type=int, metavar="N", help="seed for model init, data split and order (default 0)")
    sft.set_defaults(handler=_run_sft)


# --- rl ------------------------------------------------------------------------------------------
# `training rl`: GRPOTrainer, one private episode per rollout, reward from training.rewards.group_rewards.
# Library code in training/rl*.py.
# -------------------------------------------------------------------------------------------------
def _add_rl_parser(subparsers: Any) -> None:
    from training.rl_settings import REWARD_KINDS, VLLM_MODES

    rl = subparsers.add_parser(
        "rl",
        help="GRPO on composed tasks: each rollout is a private episode, graded by the harness",
        description="Train with GRPO on the tasks of FILE: every rollout runs one private episode through the task's "
        "tools, is graded by the harness and rewarded by --reward over groups of the same task. "
        "Flags override the values of --config.",
    )
    add = rl.add_argument
    add("--tasks", required=True, metavar="FILE", help="tasks.jsonl from `composer generate`")
    add("--out", required=True, metavar="DIR", help="where to save the model, training_summary.json, rollouts.jsonl")
    add("--model", metavar="NAME|PATH",
        help="tiny-qwen3, smollm2, Qwen/Qwen3-8B, Qwen/Qwen3-0.6B or a local model folder, e.g. from sft "
        "(or the config's model:)")
    add("--dry-run", action="store_true", help="say the model it resolves and check the tasks, then stop")
    add("--chat-template", metavar="NAME", help="replace the tokenizer's template: qwen3, chatml-tools or a .jinja")
    add("--config", metavar="FILE", help="JSON or YAML settings, e.g. training/configs/qwen3-8b-grpo.yaml")
    add("--reward", choices=REWARD_KINDS, help="cfrr (default), binary or rubric")
    add("--group-size", type=int, metavar="G", help="rollouts per task in a group (default 4)")
    add("--batch-size", type=int, metavar="N", help="rollouts per device per micro-batch (default 4)")
    add("--grad-accum", type=int, dest="gradient_accumulation_steps", metavar="N", help="gradient accumulation")
    add("--max-steps", type=int, metavar="N", help="optimizer steps (default: one pass over the tasks)")
    add("--lr", type=float, dest="learning_rate", metavar="LR", help="learning rate (default 1e-6)")
    add("--seed", type=int, metavar="N", help="seed for model init, task order and sampling (default 0)")
    add("--mode", choices=("direct", "discover"), help="tool surface: discover (default, as harness collect) or direct")
    add("--max-turns", type=int, metavar="N", help="model turns per episode (default 8)")
    add("--max-turn-tokens", type=int, metavar="N", help="tokens per model turn (default 512)")
    add("--max-completion-length", type=int, metavar="N", help="tokens per episode after the prompt (default 4096)")
    add("--vllm", choices=VLLM_MODES, help="generate with vLLM on a GPU (default: transformers)")
    add("--lora", action="store_true", default=None, help="train a LoRA adapter instead of all weights")
    rl.set_defaults(handler=_run_rl)


def _run_rl(args: argparse.Namespace) -> int:
    from training.config_files import settings_values
    from training.rl import run_rl
    from training.rl_settings import RLSettings

    values = settings_values(args.config, vars(args), RLSettings.field_names())
    summary = run_rl(RLSettings.from_mapping(values), dry_run=args.dry_run)
    if args.dry_run:
        return 0
    rollouts = summary["rollouts"]
    last_reward = f"{summary['rewards'][-1]:.4f}" if summary["rewards"] else "not logged"
    print(
        f"saved {summary['saved']} to {values['out']}: {summary['steps']} GRPO steps on {summary['n_tasks']} tasks, "
        f"{rollouts['episodes']} episodes ({rollouts['tokens_per_second']} generated tokens/s), "
        f"last mean {summary['reward']} reward {last_reward}"
    )
    return 0


def _run_sft(args: argparse.Namespace) -> int:
    from training.config_files import settings_values
    from training.sft import run_sft, summary_line
    from training.sft_settings import SFTSettings

    values = settings_values(args.config, vars(args), SFTSettings.field_names())
    summary = run_sft(SFTSettings.from_mapping(values), dry_run=args.dry_run)
    if not args.dry_run:
        print(summary_line(summary))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(_PROG, "Train tool-using agents on CompoWorld trajectories.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    _add_sft_parser(subparsers)
    _add_rl_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``training`` console script; returns the exit code."""
    args = _parser().parse_args(argv)  # a bad command line: one error line, exit code 2
    configure_logging(args.verbose)
    return run_command(_PROG, lambda: int(args.handler(args)))


if __name__ == "__main__":
    sys.exit(main())
