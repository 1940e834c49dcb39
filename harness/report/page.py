"""The report page: one HTML file with its styles, plots (inline SVG), data and viewer inside.

A Content-Security-Policy forbids every network request, so opening a report never fetches
anything, even if a future edit referenced an outside file by mistake.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from harness.report.assets import ERROR_HOOK_JS, STYLE_CSS, VIEWER_JS
from harness.report.plots import COLOURS, Plot
from harness.report.runs import RunData
from harness.report.viewer import ViewerData

__all__ = ["render_page"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
_METRICS = (
    ("pass_at_1", "pass@1"),
    ("pass_at_k", "pass@{k}"),
    ("pass_hat_k", "pass^{k}"),
    ("mean_rubric_score", "mean rubric score"),
)


def _script_json(value: Any) -> str:
    """JSON that cannot end the ``<script>`` element it sits in."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _metric_cell(summary: dict[str, Any], key: str) -> str:
    value = summary.get(key)
    if not isinstance(value, (int, float)):
        return '<td class="num">-</td>'
    low, high = (summary.get("ci95") or {}).get(key, (value, value))
    return f'<td class="num">{value:.3f} <span class="ci">[{low:.3f}, {high:.3f}]</span></td>'


def _config(run: RunData) -> dict[str, Any]:
    return (run.manifest or {}).get("config") or {}


Row = tuple[str, list[str], str | None]  # label, one HTML cell per run, the summary key of a metric row


def _text(value: Any) -> str:
    return f"<td>{escape(str(value))}</td>"


def _rows(runs: Sequence[RunData]) -> list[Row]:
    """The summary's rows; metric rows name their key so that two runs can be compared."""
    ks = {run.summary.get("k") for run in runs}
    k = next(iter(ks)) if len(ks) == 1 else "k"
    manifests = [run.manifest or {} for run in runs]
    configs = [_config(run) for run in runs]
    rows: list[Row] = [
        (
            "agent",
            [
                _text(r.summary.get("agent") or (c.get("agent") or {}).get("spec"))
                for r, c in zip(runs, configs, strict=True)
            ],
            None,
        ),
        (
            "tasks x rollouts",
            [
                _text(
                    f"{r.summary.get('n_tasks')} x {r.summary.get('n_rollouts')} "
                    f"({r.summary.get('n_trajectories')} trajectories)"
                )
                for r in runs
            ],
            None,
        ),
    ]
    rows += [(label.format(k=k), [_metric_cell(r.summary, key) for r in runs], key) for key, label in _METRICS]
    rows += [
        (
            "mean tool calls",
            [f'<td class="num">{float(r.summary.get("mean_tool_calls", 0.0)):.2f}</td>' for r in runs],
            "mean_tool_calls",
        ),
        (
            "stop reasons",
            [_text(", ".join(f"{a} {n}" for a, n in (r.summary.get("stop_reasons") or {}).items())) for r in runs],
            None,
        ),
        ("mode / transport", [_text(f"{c.get('mode', '?')} / {c.get('transport', '?')}") for c in configs], None),
        ("run seed", [_text(c.get("seed", "?")) for c in configs], None),
        ("run state", [_text((m.get("status") or {}).get("state", "?")) for m in manifests], None),
        (
            "started / updated",
            [_text(f"{m.get('started_at', '?')} / {m.get('updated_at', '?')}") for m in manifests],
            None,
        ),
        (
            "versions",
            [
                _text(
                    ", ".join(
                        f"{n} {v}" for n, v in (m.get("versions") or {}).items() if n in ("compoworld", "python", "mcp")
                    )
                )
                for m in manifests
            ],
            None,
        ),
        ("folder", [_text(r.path) for r in runs], None),
    ]
    return rows


def _difference(runs: Sequence[RunData], key: str | None) -> str:
    values = [run.summary.get(key) for run in runs] if key else []
    if len(values) == 2 and all(isinstance(v, (int, float)) for v in values):
        return f'<td class="num">{values[1] - values[0]:+.3f}</td>'
    return "<td></td>"


def _summary(runs: Sequence[RunData]) -> str:
    head = "".join(
        f'<th><span class="swatch" style="background:{COLOURS[i]}"></span>{escape(run.label)}</th>'
        for i, run in enumerate(runs)
    )
    if len(runs) == 2:
        head += "<th>difference (run 2 - run 1)</th>"
    body = []
    for label, cells, key in _rows(runs):
        extra = _difference(runs, key) if len(runs) == 2 else ""
        body.append(f"<tr><th>{escape(label)}</th>{''.join(cells)}{extra}</tr>")
    notes = "".join(
        f'<p class="note">{escape(run.label)}: metrics computed from the trajectories (no current summary.json).</p>'
        for run in runs
        if run.summary_source != "summary.json"
    )
    ci = "95% bootstrap confidence intervals over tasks in brackets."
    return f'<table id="summary-table"><tr><th></th>{head}</tr>{"".join(body)}</table><p class="note">{ci}</p>{notes}'


def render_page(runs: Sequence[RunData], plots: Sequence[Plot], viewer: ViewerData) -> str:
    title = "CompoWorld report: " + " vs ".join(run.label for run in runs)
    figures = "".join(f'<figure id="{pid}">{svg}</figure>' for pid, _, svg in plots)
    shown = len(viewer.items)
    limit_note = (
        f"{shown} of {viewer.n_keys} rollouts included (failures first); raise --max-trajectories for more."
        if shown < viewer.n_keys
        else f"All {shown} rollouts included."
    )
    data = {
        "runs": [{"label": run.label, "colour": COLOURS[i]} for i, run in enumerate(runs)],
        "items": viewer.items,
    }
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{STYLE_CSS}</style>
<script>{ERROR_HOOK_JS}</script>
</head>
<body>
<header><h1>{escape(title)}</h1><p>Harness runs: {escape(", ".join(str(run.path) for run in runs))}</p></header>
<section id="summary"><h2>Summary</h2>{_summary(runs)}</section>
<section id="plots"><h2>Plots</h2><div class="plots">{figures}</div></section>
<section id="trajectories"><h2>Trajectories</h2>
<p class="note">{escape(limit_note)} Criteria, messages, tool calls and results, and the state diff
(replayed into a fresh episode).</p>
<div class="viewer">
<div><div class="controls">
<input id="traj-search" type="search" placeholder="search task id or instruction">
<select id="traj-filter"><option value="all">all rollouts</option><option value="failed">failed (in any run)</option>
<option value="passed">passed (in every run)</option><option value="differ">runs disagree</option></select>
<span id="traj-count" class="note"></span></div>
<ul id="traj-list"></ul></div>
<div id="traj-detail"></div>
</div>
</section>
<script type="application/json" id="report-data">{_script_json(data)}</script>
<script>{VIEWER_JS}</script>
</body>
</html>
"""
