"""The ``harness`` command: a thin layer that turns options into configs and calls the library.

    harness collect [--tasks FILE] [--agent SPEC] [--rollouts K] [--concurrency C] [--mode M] [--max-turns T] --out DIR
    harness eval    [--tasks FILE] [--agent SPEC] [--rollouts K] --out DIR      (collect, then evaluate)
    harness eval    --run DIR                                                   (evaluate a collected run)
    harness regrade --run DIR                                                   (replay and re-grade every trajectory)
    harness serve | claude-config | grade | report ...                          (see harness.commands)
    harness collect|eval ... --backend ray [--address auto|HOST:PORT|ray://HOST:PORT]

Bad input gives one error line and exit code 2; a model that cannot be reached, exit code 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.bounds import DEFAULT_MAX_RESULT_CHARS
from harness.commands import add_backend_options, make_backend, register
from harness.defaults import DEFAULT_MAX_TURNS, DEFAULT_MODE
from harness.errors import AgentUnavailableError, HarnessInputError, ToolTransportError
from mcp_services.command_line import Parser, command_parser, configure_logging, run_command

__all__ = ["main"]

PROG = "harness"
DEFAULT_OUT = Path("runs/default")


def _run_options(parser: argparse.ArgumentParser, *, out_default: Path | None) -> None:
    parser.add_argument("--tasks", type=Path, default=None,
                        help="tasks.jsonl from `composer generate` (default: compose the built-in task set)")
    parser.add_argument("--agent", default="reference",
                        help="reference | null | litellm:<model> | vllm:<model path> | hf:<path|smollm2|tiny-qwen3>")
    parser.add_argument("--rollouts", type=int, default=1, help="rollouts per task (default 1)")
    parser.add_argument("--concurrency", type=int, default=8, help="episodes at once (default 8)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes running episodes, e.g. one per core (default 1: this process)")
    parser.add_argument("--mode", choices=("direct", "discover"), default=DEFAULT_MODE, help=f"tool mode (default {DEFAULT_MODE})")
    parser.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help=f"model turns per episode (default {DEFAULT_MAX_TURNS})")
    parser.add_argument("--out", type=Path, default=out_default, help=f"run folder (default {out_default})")
    parser.add_argument("--transport", choices=("inprocess", "stdio", "http"), default="inprocess",
                        help="how tools are reached: in process (fast) or an MCP task server per episode")
    parser.add_argument("--seed", type=int, default=0, help="run seed: sampling seeds derive from it (default 0)")
    parser.add_argument("--call-timeout", type=float, default=120.0, help="seconds per model request or tool call")
    parser.add_argument("--episode-timeout", type=float, default=1800.0, help="seconds per episode")
    parser.add_argument("--max-result-chars", type=int, default=DEFAULT_MAX_RESULT_CHARS,
                        help="the most of one tool result the model reads; longer ones are cut, with a note saying so "
                        f"(default {DEFAULT_MAX_RESULT_CHARS:,})")
    parser.add_argument("--default-tasks", type=int, default=50,
                        help="candidates composed for the default task set (default 50; the verified ones are kept)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--repair", action="store_true",
                        help="move corrupt lines of an existing run aside and collect those rollouts again")
    model = parser.add_argument_group("model options (litellm, vllm, hf)")
    model.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    model.add_argument("--api-key-env", default=None, help="name of the environment variable holding the API key")
    model.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    model.add_argument("--max-tokens", type=int, default=2048, help="tokens per model turn (default 2048)")
    model.add_argument("--retries", type=int, default=4, help="retries of a failed request, with backoff")
    model.add_argument("--extra-body", default=None,
                       help="JSON sent with each litellm request, e.g. "
                       '\'{"chat_template_kwargs": {"enable_thinking": false}}\'')
    model.add_argument("--device", default=None, help="hf: cpu or cuda (default: cuda if available)")
    add_backend_options(parser)


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(PROG, "Run agents on CompoWorld tasks, collect and grade trajectories.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    collect = commands.add_parser("collect", help="tasks x agent x rollouts -> OUT/trajectories.jsonl (resumable)")
    _run_options(collect, out_default=DEFAULT_OUT)
    collect.set_defaults(func=_collect)
    evaluate = commands.add_parser("eval", help="pass@1, pass@k, pass^k, rubric score with 95%% CIs")
    _run_options(evaluate, out_default=None)
    evaluate.add_argument("--run", type=Path, default=None, help="evaluate this collected run instead of running")
    evaluate.add_argument("--k", type=int, default=None, help="k of pass@k and pass^k (default: rollouts per task)")
    evaluate.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    evaluate.set_defaults(func=_eval)
    regrade = commands.add_parser("regrade", help="replay every trajectory of a run into a fresh episode and re-grade")
    regrade.add_argument("--run", type=Path, required=True, help="a run folder from `harness collect`")
    regrade.add_argument("--tasks", type=Path, default=None, help="task file (default: RUN/tasks.jsonl)")
    regrade.set_defaults(func=_regrade)
    register(commands)  # serve, claude-config, grade, report
    return parser


def _extra_body(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HarnessInputError(f"--extra-body is not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise HarnessInputError("--extra-body must be a JSON object")
    return value


def _collect_config(args: argparse.Namespace, out: Path) -> Any:
    from harness.agents import AgentConfig
    from harness.collect import CollectConfig
    from harness.runner import RunnerConfig

    try:
        runner = RunnerConfig(args.mode, args.max_turns, args.call_timeout, args.episode_timeout, args.max_result_chars)
    except ValueError as exc:
        raise HarnessInputError(str(exc)) from None
    agent = AgentConfig(
        args.agent,
        api_base=args.api_base,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        request_timeout=args.call_timeout,
        retries=args.retries,
        extra_body=_extra_body(args.extra_body),
        device=args.device,
    )
    if args.tasks is not None and not args.tasks.is_file():
        raise HarnessInputError(f"--tasks {args.tasks} is not a file", "give a tasks.jsonl from `composer generate`")
    return CollectConfig(
        out=out,
        agent=agent,
        tasks_file=args.tasks,
        rollouts=args.rollouts,
        concurrency=args.concurrency,
        runner=runner,
        transport=args.transport,
        seed=args.seed,
        progress=not args.no_progress,
        repair=args.repair,
        default_tasks=args.default_tasks,
        workers=args.workers,
    )


def _collect(args: argparse.Namespace) -> int:
    from harness.collect import TRAJECTORIES_FILE, collect

    config = _collect_config(args, args.out)
    report = collect(config, backend=make_backend(args, config))
    passed = f"{report.n_passed_new} of {report.n_new} new rollouts passed" if report.n_new else "nothing left to run"
    print(
        f"harness: {report.n_total} trajectories ({report.n_tasks} tasks x {report.rollouts} rollouts) in "
        f"{report.out / TRAJECTORIES_FILE}; {passed}; {report.elapsed_s:.1f} s"
    )
    return 0


def _eval(args: argparse.Namespace) -> int:
    from harness.evaluate import EvalOptions, read_run, render_table, summarize, write_summary

    def log(message: str) -> None:
        print(message, file=sys.stderr)

    if args.run is not None:
        if args.tasks is not None:
            raise HarnessInputError("give either --run DIR (evaluate a run) or --tasks/--agent (run, then evaluate)")
        run_dir: Path = args.run
        if not run_dir.is_dir():
            raise HarnessInputError(f"--run {run_dir} is not a folder", "give the --out folder of a `harness collect` run")
        out = args.out or run_dir
    else:
        if args.out is None:
            raise HarnessInputError("--out DIR is required to run an evaluation (or give --run DIR)")
        from harness.collect import collect

        config = _collect_config(args, args.out)
        collect(config, backend=make_backend(args, config))
        run_dir = out = args.out
    if args.resamples < 1:
        raise HarnessInputError("--resamples must be at least 1")
    summary = summarize(read_run(run_dir, log), EvalOptions(k=args.k, resamples=args.resamples, seed=args.seed))
    out.mkdir(parents=True, exist_ok=True)
    path = write_summary(out, summary)
    print(render_table(summary))
    print(f"\nsummary: {path}")
    return 0


def _regrade(args: argparse.Namespace) -> int:
    from harness.evaluate import read_run
    from harness.grading import regrade
    from mcp_services.tasks.spec import load_tasks

    run_dir: Path = args.run
    if not run_dir.is_dir():
        what = "does not exist" if not run_dir.exists() else "is not a folder"
        raise HarnessInputError(f"--run {run_dir} {what}", "give the --out folder of a `harness collect` run")
    tasks_file = args.tasks or run_dir / "tasks.jsonl"
    if args.tasks is None and not tasks_file.exists():
        raise HarnessInputError(
            f"{run_dir} holds no tasks.jsonl", "pass --tasks FILE, the task file the run was collected from"
        )
    tasks = {t.id: t for t in load_tasks(tasks_file)}
    trajectories = read_run(args.run, lambda m: print(m, file=sys.stderr))
    differ = 0
    for t in trajectories:
        task = tasks.get(t.task_id)
        if task is None:
            raise HarnessInputError(
                f"task {t.task_id} of the run is not in {tasks_file}", "pass --tasks FILE, the file the run was collected from"
            )
        result = regrade(t, task)
        if not result.agrees_with(t) or result.mismatches:
            differ += 1
            detail = "; ".join(result.mismatches[:3]) or f"grade now {result.grade.criteria}, recorded {t.criteria}"
            print(f"differs: task {t.task_id} rollout {t.rollout}: {detail}")
    print(f"harness: re-graded {len(trajectories)} trajectories: {len(trajectories) - differ} agree, {differ} differ")
    return 1 if differ else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(args.verbose)
    return run_command(
        PROG,
        lambda: int(args.func(args)),
        unavailable=(AgentUnavailableError, ToolTransportError),
        interrupted="interrupted; run the same command again to resume",
    )


if __name__ == "__main__":
    sys.exit(main())
