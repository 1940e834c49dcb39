"""A run folder as the report reads it: trajectories, summary, manifest and the run's tasks."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessInputError
from harness.evaluate import SUMMARY_FILE, EvalOptions, read_run, summarize
from harness.manifest import read_manifest
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskFileError, TaskSpec, load_tasks

__all__ = ["RunData", "load_run", "load_runs", "overlap_warning"]

Log = Callable[[str], None]


@dataclass(frozen=True)
class RunData:
    label: str
    path: Path
    trajectories: list[Trajectory]
    summary: dict[str, Any]
    summary_source: str  # "summary.json", or "computed" when the file is missing or stale
    manifest: dict[str, Any] | None
    tasks: dict[str, TaskSpec] = field(default_factory=dict)  # empty when the run has no tasks.jsonl


def _read_summary(path: Path, n_trajectories: int) -> dict[str, Any] | None:
    """``summary.json`` if it describes exactly these trajectories (a run that grew makes it stale)."""
    file = path / SUMMARY_FILE
    if not file.exists():
        return None
    try:
        summary = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    if not isinstance(summary, dict) or summary.get("n_trajectories") != n_trajectories:
        return None
    return summary


def load_run(path: Path, label: str, log: Log | None = None) -> RunData:
    if not path.is_dir():
        raise HarnessInputError(f"{path} is not a run folder (from `harness collect --out` or `harness eval --out`)")
    trajectories = sorted(read_run(path, log), key=lambda t: t.key)
    summary = _read_summary(path, len(trajectories))
    source = SUMMARY_FILE
    if summary is None:
        summary, source = summarize(trajectories, EvalOptions()), "computed"
    tasks: dict[str, TaskSpec] = {}
    if (path / "tasks.jsonl").exists():
        try:
            tasks = {t.id: t for t in load_tasks(path / "tasks.jsonl")}
        except TaskFileError as exc:
            raise HarnessInputError(str(exc)) from None
    return RunData(label, path, trajectories, summary, source, read_manifest(path), tasks)


def _labels(paths: Sequence[Path]) -> list[str]:
    names = [p.resolve().name or str(p) for p in paths]
    if len(set(names)) == len(names):
        return names
    return [f"run {i + 1} ({name})" for i, name in enumerate(names)]


def overlap_warning(runs: Sequence[RunData]) -> str | None:
    """What to tell a reader when two runs were not over the same tasks (None: they were)."""
    if len(runs) != 2:
        return None
    first, second = ({t.task_id for t in run.trajectories} for run in runs)
    shared = first & second
    if first == second:
        return None
    names = f"{runs[0].path} and {runs[1].path}"
    if not shared:
        return f"{names} share no task: their figures are over different task sets and do not compare"
    return (
        f"{names} share {len(shared)} of their {len(first)} and {len(second)} tasks: the figures side by side "
        "are over different task sets (run both over the same --tasks file to compare them)"
    )


def load_runs(paths: Sequence[Path], log: Log | None = None) -> list[RunData]:
    """The runs; with two that cover different tasks, a warning goes to ``log``."""
    if not 1 <= len(paths) <= 2:
        raise HarnessInputError(f"give one or two run folders, not {len(paths)}")
    runs = [load_run(path, label, log) for path, label in zip(paths, _labels(paths), strict=True)]
    warning = overlap_warning(runs)
    if warning is not None and log is not None:
        log(f"harness: warning: {warning}")
    return runs
