"""Statistics of a task set: how much of the task space it covers, and how hard its tasks are.

Breadth: distinct plan tool sequences and mounted service sets, tool coverage per service (against
the catalog the tasks were composed over), stages and channels, worlds, plan lengths, families and
archetypes, walks and chains. Grounding: triggers and policies in the data, traps, references.
Grading: how many message steps have checks on what they say, and which near misses and shortcuts
every task was verified to fail. Difficulty: records combined, hops, traps, rule branches and
distractor candidates per task. The names most often named across requests (people and companies
of each task's world), so a large set can be checked for spread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcp_services.tasks.spec import CAPABILITIES, TaskSpec

from composer.decisions import decision_stats, format_decisions, stock_follow_up
from composer.literal import literal_share

#: The shortcuts and near misses a kept task was verified to fail, by the prefix of their counterfactual id.
NEAR_MISSES = ("trap", "ignores-policy", "empty-report", "list-answer", "first-match", "claims-without-acting", "wrong-outcome")
#: The near misses a kept task was verified to pass (recorded in its stats: a correct solution in other words).
PASSED_NEAR_MISSES = ("natural_report",)


def _share(count: int, total: int) -> float:
    return round(count / total, 3) if total else 0.0


def _near_miss(cf_id: str) -> str:
    return next((kind for kind in NEAR_MISSES if cf_id.startswith(kind)), cf_id)


def named_shares(tasks: Sequence[TaskSpec], top: int = 5) -> list[tuple[str, float]]:
    """The people and companies named in the most requests (of each task's own world), with their share."""
    from mcp_services.kernel.world import World, WorldShape

    counts: Counter[str] = Counter()
    names_of: dict[tuple[int, WorldShape], list[str]] = {}
    for task in tasks:
        key = (task.world_seed, task.world_shape)
        if key not in names_of:
            world = World.from_seed(task.world_seed, task.world_shape)
            names_of[key] = sorted({p.name for p in world.people} | {o.name for o in world.organisations})
        counts.update(name for name in names_of[key] if name in task.instruction)
    return [(name, _share(n, len(tasks))) for name, n in counts.most_common(top)]


def task_stats(tasks: Sequence[TaskSpec], tools_by_service: Mapping[str, Iterable[str]] | None = None) -> dict[str, Any]:
    """The figures of a task set; ``tools_by_service``: every tool of the catalog, for coverage."""
    from mcp_services.registry import LIBRARY

    n = len(tasks)
    beyond = [{p.service for p in t.plan} - set(LIBRARY) for t in tasks]  # generated services a plan calls
    plans = [[(p.service, p.tool) for p in t.plan] for t in tasks]
    lengths = [len(p) for p in plans]
    used = Counter(step for plan in plans for step in plan)
    scenarios = [t.scenario for t in tasks]
    channels = Counter(s.channel for s in scenarios if s is not None and s.channel)
    stages = Counter(stage for s in scenarios if s is not None for stage in set(s.stages))
    walks = [len(s.walk) for s in scenarios if s is not None]
    near = Counter(_near_miss(cf.id) for t in tasks for cf in {c.id: c for c in t.counterfactuals}.values())
    near_tasks = Counter(kind for t in tasks for kind in {_near_miss(cf.id) for cf in t.counterfactuals})
    difficulty = [t.stats.get("difficulty", {}) for t in tasks]
    out: dict[str, Any] = {
        "tasks": n,
        "worlds": len({t.world_seed for t in tasks}),
        "distinct_tool_sequences": len({tuple(p) for p in plans}),
        "distinct_service_sets": len({tuple(sorted(t.services)) for t in tasks}),
        "mean_services": round(sum(len(t.services) for t in tasks) / n, 3) if n else 0.0,
        "mean_calls": round(sum(lengths) / n, 3) if n else 0.0,
        "share_8_calls_or_more": _share(sum(1 for x in lengths if x >= 8), n),
        "share_single_call": _share(sum(1 for x in lengths if x == 1), n),
        "calls_histogram": {str(k): v for k, v in sorted(Counter(lengths).items())},
        "mean_criteria": round(sum(len(t.rubric) for t in tasks) / n, 3) if n else 0.0,
        "families": dict(sorted(Counter(s.family for s in scenarios if s is not None).items())),
        "archetypes": dict(sorted(Counter(s.archetype for s in scenarios if s is not None).items())),
        "phrasing": dict(sorted(Counter(s.phrasing for s in scenarios if s is not None).items())),
        "channels": {c: _share(channels[c], n) for c in sorted(channels)},
        "stages": {s: _share(stages[s], n) for s in sorted(stages)},
        "from_trigger_in_data": _share(sum(1 for s in scenarios if s is not None and s.trigger is not None), n),
        "policy_in_data": _share(sum(1 for s in scenarios if s is not None and s.policy_in_data), n),
        "with_trap": _share(sum(1 for t in tasks if t.traps), n),
        "with_walk": _share(sum(1 for w in walks if w), n),
        "mean_walk_steps": round(sum(walks) / n, 3) if n else 0.0,
        "chained": _share(sum(1 for s in scenarios if s is not None and (s.chained or s.archetype == "request-pair")), n),
        "capability_share": {c: _share(sum(1 for t in tasks if c in t.capabilities), n) for c in CAPABILITIES},
        "kinds": dict(sorted(Counter(str(t.stats.get("kind", "act" if t.answer is None else "ask")) for t in tasks).items())),
        "message_steps": sum(t.stats.get("message_steps", 0) for t in tasks),
        "message_steps_checked": sum(t.stats.get("message_steps_checked", 0) for t in tasks),
        "near_misses": {k: near[k] for k in NEAR_MISSES if near[k]},
        "tasks_with_near_miss": {k: _share(near_tasks[k], n) for k in NEAR_MISSES if near_tasks[k]},
        "near_misses_passed": {k.replace("_", "-"): sum(1 for t in tasks if t.stats.get(k) == "passed") for k in PASSED_NEAR_MISSES},
        "difficulty": {
            key: round(sum(float(d.get(key, 0)) for d in difficulty) / n, 3) if n else 0.0
            for key in ("records_combined", "hops", "traps", "rule_branches", "distractor_candidates")
        },
        "services": dict(sorted(Counter(s for t in tasks for s in t.services).items())),
        "beyond_library": {"services": len(set().union(*beyond)) if beyond else 0, "tasks": sum(1 for b in beyond if b)},
        "decisions": decision_stats([t.stats.get("decisions", []) for t in tasks], sum(
            1 for t in tasks if stock_follow_up(t.instruction, t.scenario.walk if t.scenario else [], t.stats.get("decisions", []))),
            literal_share(tasks)),
        "requests": request_stats(tasks),
        "tools_used": len(used),
        "top_tools": {f"{a}.{b}": c for (a, b), c in used.most_common(10)},
    }
    if tools_by_service:
        per: dict[str, dict[str, Any]] = {}
        total = hit = 0
        for service, names in sorted(tools_by_service.items()):
            names = set(names)
            found = {tool for svc, tool in used if svc == service} & names
            per[service] = {"used": len(found), "tools": len(names), "share": _share(len(found), len(names))}
            total, hit = total + len(names), hit + len(found)
        out["tool_coverage"] = _share(hit, total)
        out["tool_coverage_by_service"] = per
    return out


def request_stats(tasks: Sequence[TaskSpec]) -> dict[str, Any]:
    """Figures of the generic requests (``request-*`` workflows but the questions): how many there are, the share whose
    every reason lives in the data (``stats["reasons"]``: where each lives), with a decision, with a false premise, and
    that the literal agent fails."""
    generic = [t for t in tasks if t.scenario is not None and t.scenario.archetype.startswith("request-")
               and t.scenario.archetype != "request-question"]
    n = len(generic)
    decisions = [t.stats.get("decisions", []) for t in generic]
    return {
        "tasks": n,
        "grounded_reason": _share(sum(1 for t in generic if t.stats.get("reasons")), n),
        "with_decision": _share(sum(1 for d in decisions if d), n),
        "premise_false": _share(sum(1 for d in decisions if any(x.get("kind") == "premise" and x.get("default") is False
                                                                 for x in d)), n),
        "literal_fails": _share(sum(1 for t in generic if t.stats.get("literal_fails")), n),
    }


def format_stats(stats: Mapping[str, Any]) -> str:
    def shares(mapping: Mapping[str, Any]) -> str:
        return ", ".join(f"{k} {v:.0%}" if isinstance(v, float) else f"{k} {v}" for k, v in mapping.items()) or "none"

    lines = [
        f"tasks                  {stats['tasks']} over {stats['worlds']} world(s)",
        f"distinct plans         {stats['distinct_tool_sequences']} tool sequences, {stats['distinct_service_sets']} service sets",
        f"plan length            mean {stats['mean_calls']}, {stats['share_8_calls_or_more']:.0%} with 8 calls or more, "
        f"{stats['share_single_call']:.1%} single-call",
        "calls per task         " + ", ".join(f"{k}: {v}" for k, v in stats["calls_histogram"].items()),
        f"mean services          {stats['mean_services']}",
        f"mean criteria          {stats['mean_criteria']}",
        f"grounding              trigger in the data {stats['from_trigger_in_data']:.0%}, policy in the data "
        f"{stats['policy_in_data']:.0%}, trap {stats['with_trap']:.0%}",
        f"walks                  {stats['with_walk']:.0%} extended (mean {stats['mean_walk_steps']} follow-ups), "
        f"{stats['chained']:.0%} two things in one request",
        "channels               " + shares(stats["channels"]),
        "stages                 " + shares(stats["stages"]),
        "phrasing               " + shares(stats["phrasing"]),
        "families               " + shares(stats["families"]),
        f"messages checked       {stats['message_steps_checked']} of {stats['message_steps']} message steps have checks on what they say",
        "near misses failed     " + shares(stats["near_misses"]),
        "near misses passed     " + shares(stats.get("near_misses_passed", {})),
        "difficulty (per task)  " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in stats["difficulty"].items()),
        *format_decisions(stats["decisions"]),
        *([f"generic requests       {r['tasks']}: reason in the data {r['grounded_reason']:.0%}, a decision {r['with_decision']:.0%}, "
           f"premise false {r['premise_false']:.0%}, literal agent fails {r['literal_fails']:.0%}"]
          if (r := stats.get("requests", {})).get("tasks") else []),
        f"tools used             {stats['tools_used']}" + (f" ({stats['tool_coverage']:.0%} of the catalog)" if "tool_coverage" in stats else ""),
    ]
    if stats["beyond_library"]["services"]:
        lines.append(f"beyond the library     {stats['beyond_library']['services']} generated services called in kept plans, "
                     f"by {stats['beyond_library']['tasks']} tasks")
    if "tool_coverage_by_service" in stats:
        lines.append("tools per service      " + ", ".join(
            f"{k} {v['used']}/{v['tools']}" for k, v in stats["tool_coverage_by_service"].items()))
    lines.append("archetypes             " + ", ".join(f"{k} {v}" for k, v in stats["archetypes"].items()))
    lines.append("capabilities           " + shares(stats["capability_share"]))
    lines.append("most used tools        " + ", ".join(f"{k} {v}" for k, v in stats["top_tools"].items()))
    if "most_named" in stats:
        lines.append("most named             " + ", ".join(f"{name} {share:.1%}" for name, share in stats["most_named"]))
    return "\n".join(lines)


__all__ = ["NEAR_MISSES", "format_stats", "named_shares", "task_stats"]
