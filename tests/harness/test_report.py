"""`harness report`: one self-contained HTML file; it renders in headless Chromium with no console errors."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.agents import AgentConfig, AgentTurn, ReferenceAgent, ScriptedAgent
from harness.collect import CollectConfig, collect
from harness.errors import HarnessInputError
from harness.evaluate import read_run, summarize, write_summary
from mcp_services.tasks.spec import TaskSpec, write_tasks

pytest.importorskip("matplotlib")

from harness.report import ReportConfig, build_report  # noqa: E402
from harness.report.plots import COLOURS  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
_HOSTILE = "</script><script>document.title='owned'</script><!--"  # must stay text in the page


def _multi_service(task: TaskSpec) -> TaskSpec:
    """The same task with more services mounted and named: a second group for the plots."""
    fields = task.model_dump(exclude={"id"})
    return TaskSpec.build(
        **{
            **fields,
            "services": ["crm", "mailbox"],
            "distractor_services": ["calendar"],
            "capabilities": ["cross-service-constraint"],
        }
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, tasks: list[TaskSpec]) -> Iterator[tuple[Path, Path]]:
    """Two runs of the same four tasks: the reference agent, and an agent that gives up with a hostile answer."""
    root = tmp_path_factory.mktemp("runs")
    task_set = [*tasks, _multi_service(tasks[0])]
    write_tasks(root / "tasks.jsonl", task_set)
    quitter = ScriptedAgent([AgentTurn(content=f"I give up {_HOSTILE}")], name="quitter")
    for name, agent in (("reference", ReferenceAgent(task_set)), ("quitter", quitter)):
        config = CollectConfig(
            out=root / name, agent=AgentConfig("reference"), tasks_file=root / "tasks.jsonl", rollouts=2, progress=False
        )
        collect(config, agent=agent, log=lambda m: None)
    write_summary(root / "reference", summarize(read_run(root / "reference")))  # the other run's is computed
    yield root / "reference", root / "quitter"


def _data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_the_report_is_one_file_that_references_nothing_outside_itself(runs: tuple[Path, Path], tmp_path: Path) -> None:
    result = build_report(ReportConfig((runs[0],), tmp_path / "report.html"))
    html = result.out.read_text(encoding="utf-8")
    assert result.n_trajectories == (8,) and result.n_in_viewer == 8
    assert "default-src 'none'" in html  # the browser may not fetch anything, whatever the page says
    assert not re.search(r'(?:src|href)\s*=\s*"(?!#|data:)', html)
    assert not re.search(r"url\((?!#)", html) and "@import" not in html
    assert html.count("<figure") == 6 and html.count("<svg") == 6
    for title in (
        "Pass rate by number of services",
        "Pass rate by plan length",
        "Pass rate by capability",
        "Pass rate by service",
        "Rubric score distribution",
        "Tool calls per trajectory",
    ):
        assert title in html
    assert re.search(r"pass@1</th><td class=\"num\">1\.000 <span class=\"ci\">\[1\.000, 1\.000\]", html)


def test_the_viewer_holds_messages_criteria_and_the_replayed_state_diff(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    html = build_report(ReportConfig((runs[0],), tmp_path / "report.html")).out.read_text(encoding="utf-8")
    items = _data(html)["items"]
    note = next(i for i in items if i["task_info"]["plan_length"] == 2 and "note" in i["instruction"])
    view = note["runs"][0]
    assert view["passed"] and view["regrade_agrees"] is True
    assert [c["id"] for c in note["rubric"]] == list(view["criteria"])
    added = view["diff"]["crm"]["notes"]["added"]
    assert [row["body"] for row in added.values()] == ["Renewal call booked"]
    assert view["messages"][2]["tool_calls"][0]["name"] == "crm__search_contacts"


def test_two_runs_sit_side_by_side_and_hostile_text_stays_text(runs: tuple[Path, Path], tmp_path: Path) -> None:
    html = build_report(ReportConfig(runs, tmp_path / "both.html")).out.read_text(encoding="utf-8")
    assert "difference (run 2 - run 1)" in html and "-1.000" in html
    assert "metrics computed from the trajectories" in html  # the quitter run has no summary.json
    assert _HOSTILE not in html
    data = _data(html)
    assert [r["label"] for r in data["runs"]] == ["reference", "quitter"]
    assert all(len(item["runs"]) == 2 for item in data["items"])
    assert _HOSTILE in data["items"][0]["runs"][1]["answer"]


def test_the_viewer_keeps_failures_first_within_its_limit(runs: tuple[Path, Path], tmp_path: Path) -> None:
    result = build_report(ReportConfig(runs, tmp_path / "few.html", max_trajectories=3))
    assert result.n_in_viewer == 3
    assert "3 of 8 rollouts included" in result.out.read_text(encoding="utf-8")


def test_bad_run_folders_are_clear_errors(runs: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(HarnessInputError, match="is not a run folder"):
        build_report(ReportConfig((tmp_path / "missing",), tmp_path / "r.html"))
    with pytest.raises(HarnessInputError, match="one or two run folders"):
        ReportConfig((runs[0], runs[1], runs[0]), tmp_path / "r.html")
    (tmp_path / "empty").mkdir()
    with pytest.raises(HarnessInputError, match="no trajectories.jsonl"):
        build_report(ReportConfig((tmp_path / "empty",), tmp_path / "r.html"))


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
    ]
    return subprocess.run([str(CHROMIUM), *flags, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.e2e
@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium package (/usr/bin/chromium): apt-get install chromium"
)
def test_the_report_renders_in_headless_chromium_with_no_console_errors(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    from PIL import Image

    page = build_report(ReportConfig(runs, tmp_path / "report.html")).out
    url = page.absolute().as_uri()
    dom = _chromium("--dump-dom", url, profile=tmp_path / "profile-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    # Every console message (errors, CSP refusals of a fetch, logs) is logged as CONSOLE: the page makes none.
    assert ":CONSOLE" not in dom.stderr, [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    root = re.search(r"<html[^>]*>", dom.stdout)
    assert root is not None and 'data-ready="1"' in root.group(0) and "data-errors" not in root.group(0), root
    assert '<li class="selected">' in dom.stdout and "Task " in dom.stdout  # the viewer opened the first rollout
    assert "<title>CompoWorld report: reference vs quitter</title>" in dom.stdout  # hostile text did not run

    shot = tmp_path / "report.png"
    run = _chromium(f"--screenshot={shot}", "--window-size=1280,1600", url, profile=tmp_path / "profile-shot")
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    assert ":CONSOLE" not in run.stderr
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 1600) and shot.stat().st_size > 30_000
    # The summary sits on top, the first plots below it: their bars (the run colours) are on screen.
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}
    for hex_colour in COLOURS:
        rgb = tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
        assert rgb in colours, hex_colour
    pixels = image.load()
    bar = tuple(int(COLOURS[0][i : i + 2], 16) for i in (1, 3, 5))
    assert sum(pixels[x, y] == bar for x in range(0, 1280, 4) for y in range(0, 1600, 4)) > 300
    assert len(colours) > 50  # text, lines and fills, not a blank page


def test_harness_report_writes_the_file_and_bad_input_is_one_error_line(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    out = tmp_path / "sub" / "report.html"
    assert main(["report", str(runs[0]), str(runs[1]), "--out", str(out), "--max-trajectories", "2"]) == 0
    assert out.is_file() and "report of 8 and 8 trajectories (2 rollouts in the viewer)" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "nope"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("harness: error: ") and "is not a run folder" in err and "\n" not in err


def test_two_runs_over_different_tasks_are_compared_with_a_warning(
    runs: tuple[Path, Path], tasks: list[TaskSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    def run_over(name: str, task_set: list[TaskSpec]) -> Path:
        write_tasks(tmp_path / f"{name}.jsonl", task_set)
        config = CollectConfig(out=tmp_path / name, tasks_file=tmp_path / f"{name}.jsonl", progress=False)
        collect(config, log=lambda m: None)
        return tmp_path / name

    some, other = run_over("some", tasks[:2]), run_over("other", [_multi_service(tasks[0])])
    out = tmp_path / "report.html"
    assert main(["report", str(runs[0]), str(runs[1]), "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err  # the same tasks: nothing to say
    assert main(["report", str(runs[0]), str(some), "--out", str(out)]) == 0
    assert f"harness: warning: {runs[0]} and {some} share 2 of their 4 and 2 tasks" in capsys.readouterr().err
    assert main(["report", str(some), str(other), "--out", str(out)]) == 0
    assert f"harness: warning: {some} and {other} share no task" in capsys.readouterr().err


def test_the_report_file_gets_the_umask_s_mode(runs: tuple[Path, Path], tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        result = build_report(ReportConfig((runs[0],), tmp_path / "report.html"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(result.out.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left behind
