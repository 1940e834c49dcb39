"""The report's plots as inline SVG, drawn with matplotlib (no pyplot: no global figure state).

Text stays text (``svg.fonttype: none``) and ids are salted deterministically and prefixed per
figure, so the page is small, searchable, identical for the same runs, and free of id clashes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from harness.errors import HarnessInputError
from harness.report.runs import RunData
from harness.report.stats import BREAKDOWNS, Breakdown, histogram, pass_rates

__all__ = ["COLOURS", "Plot", "all_plots"]

COLOURS = ("#3b6ea5", "#e07b39")  # run 1, run 2 (the report's legend and the tests read these)
_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "compoworld-report",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
}

Plot = tuple[str, str, str]  # (id, title, svg markup)


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise HarnessInputError("harness report needs matplotlib: pip install 'compoworld[report]'") from None
    return matplotlib


def _svg(figure: Any, figure_id: str, title: str) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    for old in sorted(ids, key=len, reverse=True):
        text = text.replace(f'id="{old}"', f'id="{figure_id}-{old}"').replace(f"#{old})", f"#{figure_id}-{old})")
        text = text.replace(f'href="#{old}"', f'href="#{figure_id}-{old}"')
    # Size from CSS, shape from the viewBox: the figure fills its card at any window width.
    head_end = text.index(">")
    head = re.sub(r'\s(width|height)="[^"]*"', "", text[:head_end])
    return f'{head} role="img" aria-label="{title}"{text[head_end:]}'


def _new_figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _rates_plot(runs: Sequence[RunData], breakdown: Breakdown) -> Any:
    rates = [
        {r.group: r for r in pass_rates(run.trajectories, breakdown.key, seed=f"report:{breakdown.name}")}
        for run in runs
    ]
    groups = sorted(
        {g for per_run in rates for g in per_run}, key=lambda g: (0, int(g), "") if g.isdigit() else (1, 0, g)
    )
    height = 1.2 + 0.32 * max(len(groups), 1) * (1 + 0.6 * (len(runs) - 1))
    figure = _new_figure(6.0, min(height, 9.0))
    axes = figure.add_subplot()
    bar = 0.8 / len(runs)
    for i, (run, per_run) in enumerate(zip(runs, rates, strict=True)):
        ys, values, low, high = [], [], [], []
        for y, group in enumerate(groups):
            rate = per_run.get(group)
            if rate is None:
                continue
            ys.append(y - 0.4 + bar * (i + 0.5))
            values.append(rate.pass_rate)
            low.append(rate.pass_rate - rate.ci[0])
            high.append(rate.ci[1] - rate.pass_rate)
        axes.barh(
            ys,
            values,
            height=bar * 0.92,
            color=COLOURS[i],
            label=run.label,
            xerr=[low, high],
            error_kw={"ecolor": "#333333", "capsize": 2, "elinewidth": 0.8},
        )
        for y, value, up in zip(ys, values, high, strict=True):
            # The value in words: a zero bar is otherwise invisible.
            axes.text(value + up + 0.015, y, f"{value:.2f}", va="center", fontsize=7, color="#333333")
    counts = [max((per_run[g].n_tasks for per_run in rates if g in per_run), default=0) for g in groups]
    axes.set_yticks(range(len(groups)), [f"{g}  (n={n})" for g, n in zip(groups, counts, strict=True)])
    axes.invert_yaxis()
    axes.set_xlim(0, 1.12)
    axes.set_xticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.set_xlabel("pass@1 (mean over tasks), 95% bootstrap CI")
    axes.set_ylabel(breakdown.axis)
    axes.set_title(breakdown.title)
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    if len(runs) > 1:
        figure.legend(loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return figure


def _distribution_plot(
    runs: Sequence[RunData],
    values: Sequence[Sequence[float]],
    edges: Sequence[float],
    labels: Sequence[str],
    title: str,
    xlabel: str,
) -> Any:
    figure = _new_figure(6.0, 3.0)
    axes = figure.add_subplot()
    width = 0.8 / len(runs)
    for i, (run, series) in enumerate(zip(runs, values, strict=True)):
        shares = histogram(series, edges)
        xs = [x - 0.4 + width * (i + 0.5) for x in range(len(shares))]
        axes.bar(xs, shares, width=width * 0.92, color=COLOURS[i], label=f"{run.label} (n={len(series)})")
    axes.set_xticks(
        range(len(labels)), labels, rotation=45 if len(labels) > 12 else 0, ha="right" if len(labels) > 12 else "center"
    )
    axes.set_ylim(0, 1.0)
    axes.set_ylabel("share of trajectories")
    axes.set_xlabel(xlabel)
    axes.set_title(title)
    axes.grid(axis="y", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    figure.legend(loc="outside lower center", ncols=len(runs), fontsize=8, frameon=False)
    return figure


def _rubric_plot(runs: Sequence[RunData]) -> Any:
    edges = [i / 10 for i in range(11)]
    labels = [f"{edges[i]:.1f}-{edges[i + 1]:.1f}" for i in range(10)]
    values = [[t.rubric_score for t in run.trajectories] for run in runs]
    return _distribution_plot(runs, values, edges, labels, "Rubric score distribution", "rubric score")


def _tool_call_plot(runs: Sequence[RunData]) -> Any:
    values = [[float(t.n_tool_calls) for t in run.trajectories] for run in runs]
    top = int(max((max(v, default=0) for v in values), default=0))
    step = max(1, -(-(top + 1) // 20))  # at most 20 bins
    edges = [float(x) for x in range(0, top + step + 1, step)]
    if step == 1:
        labels = [str(int(e)) for e in edges[:-1]]
        edges = [e - 0.5 for e in edges[:-1]] + [edges[-2] + 0.5]
    else:
        labels = [f"{int(edges[i])}-{int(edges[i + 1]) - 1}" for i in range(len(edges) - 1)]
    return _distribution_plot(runs, values, edges, labels, "Tool calls per trajectory", "tool calls")


def all_plots(runs: Sequence[RunData]) -> list[Plot]:
    """Every plot of the report, in page order."""
    matplotlib = _matplotlib()
    plots: list[Plot] = []
    with matplotlib.rc_context(_RC):
        for breakdown in BREAKDOWNS:
            figure_id = f"plot-{breakdown.name.replace('_', '-')}"
            plots.append((figure_id, breakdown.title, _svg(_rates_plot(runs, breakdown), figure_id, breakdown.title)))
        for figure_id, title, draw in (
            ("plot-rubric", "Rubric score distribution", _rubric_plot),
            ("plot-tool-calls", "Tool calls per trajectory", _tool_call_plot),
        ):
            plots.append((figure_id, title, _svg(draw(runs), figure_id, title)))
    return plots
