"""How long the tool results of reference rollouts get, against the harness's result bound.

    python bench/result_sizes.py [--tasks FILE] [--mode direct|discover]

Runs the reference agent on the default task set (or FILE) with no bound on results and prints the
size distribution of what the model would read, the largest results and the tools behind them,
and how many results ``--max-result-chars`` (default shown) would cut. The default bound is chosen
to cut none of them: a solvable task must stay solvable.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.agents import ReferenceAgent  # noqa: E402
from harness.bounds import DEFAULT_MAX_RESULT_CHARS  # noqa: E402
from harness.defaults import default_tasks  # noqa: E402
from harness.runner import RolloutJob, RunnerConfig, run_episode  # noqa: E402
from harness.tools import InProcessTransport  # noqa: E402
from mcp_services.tasks.spec import load_tasks  # noqa: E402

UNBOUNDED = 1 << 40


async def sizes(tasks_file: Path | None, mode: str) -> list[tuple[int, str]]:
    tasks = load_tasks(tasks_file) if tasks_file else default_tasks()
    transport, agent = InProcessTransport(), ReferenceAgent(tasks)
    config = RunnerConfig(mode=mode, max_result_chars=UNBOUNDED)  # type: ignore[arg-type]
    found: list[tuple[int, str]] = []
    for task in tasks:
        trajectory = await run_episode(RolloutJob(task, 0, 0), agent, transport, config)
        names = {c["id"]: c["function"]["name"] for m in trajectory.messages for c in m.get("tool_calls") or ()}
        found += [(len(m["content"]), names[m["tool_call_id"]]) for m in trajectory.messages if m["role"] == "tool"]
    transport.close()
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=None, help="a tasks.jsonl (default: the built-in task set)")
    parser.add_argument("--mode", choices=("direct", "discover"), default="direct")
    args = parser.parse_args()
    found = asyncio.run(sizes(args.tasks, args.mode))
    lengths = [n for n, _ in found]
    pick = lambda q: lengths[min(len(lengths) - 1, int(q * len(lengths)))]  # noqa: E731
    print(f"{len(found)} tool results of reference rollouts ({args.mode} mode), in characters:")
    print(f"  median {statistics.median(lengths):,.0f}  p95 {pick(0.95):,}  p99 {pick(0.99):,}  max {lengths[-1]:,}")
    print("  largest:", ", ".join(f"{name} {n:,}" for n, name in reversed(found[-5:])))
    cut = sum(n > DEFAULT_MAX_RESULT_CHARS for n in lengths)
    print(f"  cut by the default --max-result-chars {DEFAULT_MAX_RESULT_CHARS:,}: {cut} "
          f"(largest / bound = {lengths[-1] / DEFAULT_MAX_RESULT_CHARS:.2f})")


if __name__ == "__main__":
    main()
