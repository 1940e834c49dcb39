"""``harness report``: one self-contained HTML file for one run, or two runs side by side.

    harness report RUN_DIR [RUN_DIR2] --out report.html [--max-trajectories N]

The page holds a summary with 95% confidence intervals, plots (pass rate by number of services, by
plan length, by capability and by service; the rubric score distribution; tool calls per
trajectory) and a trajectory viewer (messages, tool calls and results, criteria, the state diff).
Everything is inside the file; opening it needs no network.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessInputError
from harness.report.page import render_page
from harness.report.plots import all_plots
from harness.report.runs import load_runs
from harness.report.viewer import viewer_data
from mcp_services.files import write_atomically

__all__ = ["ReportConfig", "ReportResult", "build_report"]

DEFAULT_MAX_TRAJECTORIES = 500


@dataclass(frozen=True)
class ReportConfig:
    runs: tuple[Path, ...]
    out: Path
    max_trajectories: int = DEFAULT_MAX_TRAJECTORIES  # rollouts in the viewer (failures first)

    def __post_init__(self) -> None:
        if not 1 <= len(self.runs) <= 2:
            raise HarnessInputError(f"give one or two run folders, not {len(self.runs)}")
        if self.max_trajectories < 0:
            raise HarnessInputError(f"--max-trajectories must not be negative, not {self.max_trajectories}")
        if self.out.exists() and self.out.is_dir():
            raise HarnessInputError(f"--out {self.out} is a folder; give the path of the HTML file to write")


@dataclass(frozen=True)
class ReportResult:
    out: Path
    n_trajectories: tuple[int, ...]  # per run
    n_in_viewer: int
    size_bytes: int


def build_report(config: ReportConfig, log: Callable[[str], None] | None = None) -> ReportResult:
    runs = load_runs(list(config.runs), log)
    plots = all_plots(runs)
    viewer = viewer_data(runs, config.max_trajectories)
    size = write_atomically(config.out, render_page(runs, plots, viewer))
    return ReportResult(config.out, tuple(len(r.trajectories) for r in runs), len(viewer.items), size)
