"""Statistics of a task set: services, lengths, capabilities, tool coverage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from mcp_services.tasks.spec import CAPABILITIES, TaskSpec


def task_stats(tasks: Sequence[TaskSpec], library_tools: int | None = None) -> dict[str, Any]:
    n = len(tasks)
    services = Counter(s for t in tasks for s in t.services)
    tools = Counter(f"{p.service}.{p.tool}" for t in tasks for p in t.plan)
    calls = Counter(len(t.plan) for t in tasks)
    n_services = Counter(len(t.services) for t in tasks)
    capabilities = Counter(c for t in tasks for c in t.capabilities)
    kinds = Counter(str(t.stats.get("kind", "act" if t.answer is None else "ask")) for t in tasks)
    out: dict[str, Any] = {
        "tasks": n,
        "mean_services": round(sum(len(t.services) for t in tasks) / n, 3) if n else 0.0,
        "mean_calls": round(sum(len(t.plan) for t in tasks) / n, 3) if n else 0.0,
        "mean_criteria": round(sum(len(t.rubric) for t in tasks) / n, 3) if n else 0.0,
        "capability_share": {c: round(capabilities[c] / n, 3) if n else 0.0 for c in CAPABILITIES},
        "kinds": dict(sorted(kinds.items())),
        "calls_histogram": {str(k): v for k, v in sorted(calls.items())},
        "services_histogram": {str(k): v for k, v in sorted(n_services.items())},
        "services": dict(sorted(services.items())),
        "distractor_records": sum(len(t.setup) for t in tasks),
        "world_seeds": sorted({t.world_seed for t in tasks}),
        "tools_used": len(tools),
        "top_tools": dict(tools.most_common(10)),
    }
    if library_tools:
        out["tool_coverage"] = round(len(tools) / library_tools, 3)
    return out


def format_stats(stats: dict[str, Any]) -> str:
    lines = [
        f"tasks              {stats['tasks']}",
        f"mean services      {stats['mean_services']}",
        f"mean calls         {stats['mean_calls']}",
        f"mean criteria      {stats['mean_criteria']}",
        f"kinds              {', '.join(f'{k} {v}' for k, v in stats['kinds'].items())}",
        f"distractor records {stats['distractor_records']}",
        f"tools used         {stats['tools_used']}" + (f" ({stats['tool_coverage']:.0%} of the library)" if "tool_coverage" in stats else ""),
        "capabilities:",
    ]
    lines += [f"  {c:<26} {share:6.1%}" for c, share in stats["capability_share"].items()]
    lines.append("calls per task:    " + ", ".join(f"{k}: {v}" for k, v in stats["calls_histogram"].items()))
    lines.append("services per task: " + ", ".join(f"{k}: {v}" for k, v in stats["services_histogram"].items()))
    lines.append("tasks per service: " + ", ".join(f"{k} {v}" for k, v in stats["services"].items()))
    lines.append("most used tools:   " + ", ".join(f"{k} {v}" for k, v in stats["top_tools"].items()))
    return "\n".join(lines)
