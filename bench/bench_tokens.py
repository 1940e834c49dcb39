"""Tokens per trajectory: the context a model needs for the reference rollouts of a task set.

    python bench/bench_tokens.py [--tasks FILE | --distractors 5,2,0] [--modes direct,discover]

Composes the default task set (``harness.defaults``; ``--distractors`` composes it again with that
many distractor services mounted beside each task's own), runs the reference agent over it in each
mode through ``harness collect``, and prints, per task set and mode, the median, 90th percentile and
maximum tokens per trajectory, the prompt alone (system prompt, instruction and tool list) and how
many rollouts passed; then the tokens a tool of the library takes in a prompt, in the model's
view (``mcp_services.serving.model_view``) and with its full schema. Counts come from
``harness.tokens`` (the Qwen3 tokenizer where installed, else a byte estimate; the header says
which). docs/design.md's budget on the default run: median under 12K in discover mode and 20K in direct
mode. Figures only, nothing asserted (README's figures are checked against ``measure`` by
``tests/test_readme_figures.py``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp_services.tasks.spec import TaskSpec, load_tasks  # noqa: E402
from harness.collect import CollectConfig, collect  # noqa: E402
from harness.defaults import DEFAULT_DISTRACTOR_SERVICES, default_tasks  # noqa: E402
from harness.evaluate import read_run  # noqa: E402
from harness.metrics import token_figures  # noqa: E402
from harness.runner import RunnerConfig  # noqa: E402
from harness.tokens import token_counter  # noqa: E402


def measure(tasks: list[TaskSpec], mode: str) -> str:
    counter = token_counter()
    with tempfile.TemporaryDirectory(prefix="bench-tokens-") as folder:
        started = time.perf_counter()
        report = collect(
            CollectConfig(out=Path(folder), runner=RunnerConfig(mode=mode), progress=False),  # type: ignore[arg-type]
            tasks=tasks,
            log=lambda _: None,
        )
        elapsed = time.perf_counter() - started
        trajectories = read_run(Path(folder))
    figures = token_figures((t.n_tokens, t.token_counter) for t in trajectories)
    assert figures is not None
    prompts = [counter.count(t.messages[:2], t.tools) for t in trajectories]
    return (
        f"{mode:<9} {figures.median:>8,.0f} {figures.p90:>8,} {figures.max:>8,} {statistics.median(prompts):>8,.0f}"
        f"  {report.n_passed_new:>3}/{report.n_new:<3} {elapsed:>7.1f}"
    )


def per_tool() -> str:
    """Mean tokens one tool of the library adds to a prompt: its model view, and its full MCP schema."""
    from mcp_services.registry import all_services
    from mcp_services.serving.model_view import model_tool

    counter = token_counter()
    tools = [(f"{s.name}__{t.name}", t) for s in all_services() for t in s.tools.values()]
    # What a tool adds to a list that already has one (the tool-list preamble is not the tool's).
    anchor = {"type": "function", "function": {"name": "anchor", "description": "", "parameters": {}}}
    base = counter.count([], [anchor])

    def added(entry: dict[str, object]) -> int:
        return counter.count([], [anchor, entry]) - base

    view = [added(model_tool(name, t.description, t.input_schema)) for name, t in tools]
    full = [
        added({"type": "function", "function": {"name": name, "description": t.description,
                                                 "parameters": t.input_schema}})
        for name, t in tools
    ]  # fmt: skip
    return (f"per tool of the library ({len(tools)} tools): model view {statistics.mean(view):,.0f} tokens at the "
            f"mean, full schema {statistics.mean(full):,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, default=None, help="a task file instead of the default task set")
    parser.add_argument("--distractors", default=str(DEFAULT_DISTRACTOR_SERVICES),
                        help="distractor services per task for the composed default set, comma-separated")
    parser.add_argument("--modes", default="discover,direct", help="tool modes, comma-separated")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if args.tasks is not None:
        sets = [(str(args.tasks), load_tasks(args.tasks))]
    else:
        sets = [(f"default set, {d} distractor services", default_tasks(distractor_services=int(d)))
                for d in args.distractors.split(",")]
    print(f"tokens per trajectory, reference agent, counted by {token_counter().name}")
    for name, tasks in sets:
        mounted = statistics.median(len(t.mounted_services) for t in tasks)
        print(f"\n{name}: {len(tasks)} tasks, median {mounted:.0f} services mounted")
        print(f"{'mode':<9} {'median':>8} {'p90':>8} {'max':>8} {'prompt':>8}  passed {'secs':>7}")
        for mode in modes:
            print(measure(tasks, mode))
    print(f"\n{per_tool()}")


if __name__ == "__main__":
    main()
