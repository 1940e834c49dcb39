"""``harness eval``: pass@1, pass@k, pass^k and mean rubric score, with 95% bootstrap intervals,
overall and broken down by service, capability and plan length, and the tokens per trajectory (the
context budget); a terminal table and ``summary.json``."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import RunFileError
from harness.metrics import TaskOutcome, TokenFigures, bootstrap_ci, pass_at_k, pass_hat_k, token_figures
from harness.runfile import scan_run
from harness.tokens import counts_by, token_counter
from harness.trajectory import Trajectory

__all__ = ["SUMMARY_FILE", "EvalOptions", "read_run", "render_table", "summarize", "write_summary"]

SUMMARY_FILE = "summary.json"
_METRICS = ("pass_at_1", "pass_at_k", "pass_hat_k", "mean_rubric_score")


@dataclass(frozen=True)
class EvalOptions:
    k: int | None = None  # default: the number of rollouts per task
    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95


def read_run(run_dir: Path, log: Callable[[str], None] | None = None) -> list[Trajectory]:
    """The trajectories of a run folder. A torn final line is reported; corrupt lines are an error."""
    path = run_dir / "trajectories.jsonl"
    if not path.exists():
        raise RunFileError(f"no trajectories.jsonl in {run_dir}", f"run `harness collect --out {run_dir}` first")
    scan = scan_run(path)
    if scan.problems:
        listed = "; ".join(p.describe(path) for p in scan.problems[:5])
        raise RunFileError(
            f"{len(scan.problems)} bad line(s) in {path}: {listed}. `harness collect ... --repair` with the run's "
            "arguments moves them aside and collects those rollouts again"
        )
    if scan.torn_offset is not None and log is not None:
        log(f"harness: {path}: ignoring a torn final line ({scan.torn_bytes} bytes; the run was interrupted)")
    if not scan.trajectories:
        raise RunFileError(
            f"{path} holds no trajectories", f"the run stopped before its first episode; collect it with --out {run_dir}"
        )
    return scan.trajectories


def _outcomes(trajectories: Iterable[Trajectory]) -> list[TaskOutcome]:
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        by_task[t.task_id].append(t)
    return [
        TaskOutcome(
            task_id,
            len(group),
            sum(t.passed for t in group),
            sum(t.rubric_score for t in group) / len(group),
        )
        for task_id, group in sorted(by_task.items())
    ]


def _metrics(outcomes: Sequence[TaskOutcome], k: int, options: EvalOptions, label: str) -> dict[str, Any]:
    values = {
        "pass_at_1": [o.c / o.n for o in outcomes],
        "pass_at_k": [pass_at_k(o.n, o.c, k) for o in outcomes],
        "pass_hat_k": [pass_hat_k(o.n, o.c, k) for o in outcomes],
        "mean_rubric_score": [o.rubric for o in outcomes],
    }
    result: dict[str, Any] = {"n_tasks": len(outcomes), "n_trajectories": sum(o.n for o in outcomes)}
    ci: dict[str, list[float]] = {}
    for name in _METRICS:
        series = values[name]
        result[name] = sum(series) / len(series) if series else 0.0
        low, high = bootstrap_ci(
            series, seed=f"{options.seed}:{label}:{name}", resamples=options.resamples, confidence=options.confidence
        )
        ci[name] = [low, high]
    result["ci95"] = ci
    return result


def _breakdown(
    trajectories: Sequence[Trajectory],
    key: Callable[[Trajectory], Iterable[str]],
    k: int,
    options: EvalOptions,
    name: str,
) -> dict[str, Any]:
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        for value in key(t):
            groups[value].append(t)
    return {
        value: _metrics(_outcomes(group), k, options, f"{name}={value}")
        for value, group in sorted(groups.items(), key=lambda item: _sort_key(item[0]))
    }


def _sort_key(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isdigit() else (10**9, value)


def summarize(trajectories: Sequence[Trajectory], options: EvalOptions = EvalOptions()) -> dict[str, Any]:
    """The summary of a set of trajectories (``summary.json``)."""
    outcomes = _outcomes(trajectories)
    if not outcomes:
        raise RunFileError("no trajectories to evaluate")
    per_task = min(o.n for o in outcomes)
    k = options.k if options.k is not None else per_task
    if not 1 <= k <= per_task:
        raise RunFileError(f"k={k} needs at least {k} rollouts of every task; the fewest here is {per_task}")
    summary = _metrics(outcomes, k, options, "all")
    tokens = token_figures(counts_by(token_counter(), trajectories))
    agents = sorted({t.agent for t in trajectories})
    return {
        "agent": agents[0] if len(agents) == 1 else agents,
        "n_tasks": summary.pop("n_tasks"),
        "n_rollouts": per_task,
        "n_trajectories": summary.pop("n_trajectories"),
        "k": k,
        **summary,
        "mean_tool_calls": sum(t.n_tool_calls for t in trajectories) / len(trajectories),
        "stop_reasons": dict(sorted(Counter(t.stop_reason for t in trajectories).items())),
        "tokens": tokens.to_dict() if tokens is not None else None,
        "by_service": _breakdown(trajectories, lambda t: t.task_info.get("services", []), k, options, "service"),
        "by_capability": _breakdown(
            trajectories, lambda t: t.task_info.get("capabilities", []) or ["(none)"], k, options, "capability"
        ),
        "by_plan_length": _breakdown(
            trajectories, lambda t: [str(t.task_info.get("plan_length", "?"))], k, options, "plan_length"
        ),
        "bootstrap": {"resamples": options.resamples, "confidence": options.confidence, "seed": options.seed,
                      "unit": "task"},
    }


def write_summary(out: Path, summary: dict[str, Any]) -> Path:
    path = out / SUMMARY_FILE
    tmp = out / f".{SUMMARY_FILE}.tmp"
    tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _ci(pair: Sequence[float]) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def render_table(summary: dict[str, Any]) -> str:
    """The summary as a plain-text table for the terminal."""
    k = summary["k"]
    lines = [
        f"agent {summary['agent']}: {summary['n_tasks']} tasks x {summary['n_rollouts']} rollouts "
        f"({summary['n_trajectories']} trajectories), k={k}, 95% bootstrap CIs over tasks",
        "",
        f"{'metric':<20}{'value':>8}  95% CI",
    ]
    names = {"pass_at_1": "pass@1", "pass_at_k": f"pass@{k}", "pass_hat_k": f"pass^{k}",
             "mean_rubric_score": "mean rubric score"}
    if k == 1:  # pass@1 and pass^1 are pass@1
        names = {key: label for key, label in names.items() if key in ("pass_at_1", "mean_rubric_score")}
    for key, label in names.items():
        lines.append(f"{label:<20}{summary[key]:>8.3f}  {_ci(summary['ci95'][key])}")
    for title, field in (("service", "by_service"), ("capability", "by_capability"), ("plan length", "by_plan_length")):
        groups = summary[field]
        if not groups:
            continue
        width = max(len(title), *(len(str(g)) for g in groups)) + 2
        lines += ["", f"{'by ' + title:<{width + 3}}{'tasks':>6}{'pass@1':>9}  {'95% CI':<16}{'rubric':>8}"]
        for group, m in groups.items():
            lines.append(
                f"{group:<{width + 3}}{m['n_tasks']:>6}{m['pass_at_1']:>9.3f}  {_ci(m['ci95']['pass_at_1']):<16}"
                f"{m['mean_rubric_score']:>8.3f}"
            )
    reasons = ", ".join(f"{r} {n}" for r, n in summary["stop_reasons"].items())
    lines += ["", f"stop reasons: {reasons}; mean tool calls {summary['mean_tool_calls']:.2f}"]
    if summary.get("tokens"):  # summaries written before token figures existed have none
        lines.append(TokenFigures(**summary["tokens"]).describe())
    return "\n".join(lines)
