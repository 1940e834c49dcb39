"""README's figures are what their commands print (bench/bench_tokens.py, bench/result_sizes.py,
`mcp-services list`), and docs/training.md's default row agrees with the same run.

A figure README gives as "about" is checked within 10%: close enough that a stale figure fails, loose
enough that a task set's small drift does not. A count is checked exactly.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
TRAINING_DOC = (REPO / "docs" / "training.md").read_text(encoding="utf-8")
ABOUT = 0.10

pytestmark = pytest.mark.slow


def bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def token_lines() -> dict[str, list[int]]:
    """bench_tokens' line for each mode on the default task set: median, p90, max."""
    from harness.defaults import default_tasks

    tasks = default_tasks()
    measure = bench("bench_tokens").measure
    lines = {mode: measure(tasks, mode).split() for mode in ("discover", "direct")}
    return {mode: [int(value.replace(",", "")) for value in line[1:4]] for mode, line in lines.items()}


def about(stated: float, measured: float) -> bool:
    return abs(measured - stated) <= ABOUT * stated


def test_readme_token_medians_are_what_bench_tokens_prints() -> None:
    found = re.search(
        r"about ([\d.]+)K Qwen3 tokens at the median in discover mode \(the\s+default\) and about ([\d.]+)K in "
        r"direct mode \(`python bench/bench_tokens.py`",
        README,
    )
    assert found is not None, "README no longer states the token medians as the test reads them"
    discover, direct = (float(x) * 1000 for x in found.groups())
    measured = token_lines()
    assert about(discover, measured["discover"][0]), (discover, measured["discover"])
    assert about(direct, measured["direct"][0]), (direct, measured["direct"])


def test_the_training_guide_s_default_row_agrees_with_the_same_run() -> None:
    row = re.search(r"the default\*\* \| \*\*([\d,]+) / ([\d,]+)\*\* \| \*\*([\d,]+) / ([\d,]+)\*\*", TRAINING_DOC)
    assert row is not None
    discover_median, discover_max, direct_median, direct_max = (int(x.replace(",", "")) for x in row.groups())
    measured = token_lines()
    assert about(discover_median, measured["discover"][0]) and about(discover_max, measured["discover"][2])
    assert about(direct_median, measured["direct"][0]) and about(direct_max, measured["direct"][2])


def test_readme_counts_the_library_s_services_and_tools() -> None:
    from mcp_services.registry import all_services

    found = re.search(r"The library holds (\d+) hand-written services with ([\d,]+) tools \(`mcp-services list`\)", README)
    assert found is not None
    services = all_services()
    assert (int(found.group(1)), int(found.group(2).replace(",", ""))) == (
        len(services),
        sum(len(s.tools) for s in services),
    )


def test_the_result_bound_is_more_than_twice_the_largest_reference_result() -> None:
    from harness.bounds import DEFAULT_MAX_RESULT_CHARS

    found = re.search(r"\(default ([\d,]+), more than twice the largest result a reference rollout gets\)", README)
    assert found is not None and int(found.group(1).replace(",", "")) == DEFAULT_MAX_RESULT_CHARS
    largest = asyncio.run(bench("result_sizes").sizes(None, "direct"))[-1][0]
    assert 2 * largest < DEFAULT_MAX_RESULT_CHARS
