"""Decisions: what the data decides in a task, beside what the request says.

A task teaches judgment only where something in the data changes the right work. The kinds:

- ``rule``: a rule written in the data (a policy page, a manager's email) changes what is done;
- ``premise``: the asker's premise is checked against the data (and may be false: then nothing is changed and the
  asker is told why);
- ``pick``: two or more plausible records, one picked by a relation or a clue in the data;
- ``figure``: a value worked out from several records;
- ``procedure``: the company's written procedure says what else to do.

A workflow records each decision it makes on its scenario (``Scenario.decide``); the stages that read rules, plant
traps or ask questions record theirs themselves. A kept task carries them in ``stats["decisions"]`` and a candidate
with none is dropped (``composer generate`` counts it as ``no-decision``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

DecisionKind = Literal["rule", "premise", "pick", "figure", "procedure"]
DECISION_KINDS: tuple[DecisionKind, ...] = ("rule", "premise", "pick", "figure", "procedure")
#: A deciding value this close to its threshold (a share of the threshold) is "near" it.
NEAR = 0.10


def near_threshold(value: float, threshold: float) -> bool:
    """Whether ``value`` lies within ``NEAR`` of ``threshold`` (either side)."""
    if threshold == 0:
        return value == 0
    return abs(float(value) - float(threshold)) <= NEAR * abs(float(threshold))


@dataclass(frozen=True)
class Decision:
    """One decision the data makes in a task.

    ``default``: for a rule, whether the outcome is the one the request's words alone would give (the rule applies but
    changes nothing); for a premise, whether it holds. ``near``: for a rule with a threshold, whether the deciding
    value lies within ``NEAR`` of it.
    """

    kind: DecisionKind
    what: str
    default: bool | None = None
    near: bool | None = None

    def as_stats(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def merged(decisions: Sequence[Decision]) -> list[Decision]:
    """The decisions of a task, one per kind and subject (a rule read and then applied is one decision, applied)."""
    out: dict[tuple[str, str], Decision] = {}
    for d in decisions:
        key = (d.kind, d.what)
        before = out.get(key)
        if before is None:
            out[key] = d
            continue
        out[key] = Decision(
            d.kind, d.what,
            default=d.default if d.default is not None else before.default,
            near=bool(d.near) or bool(before.near) if (d.near is not None or before.near is not None) else None,
        )
    return list(out.values())


#: The stock chores a walk used to add, as requests said them: a check-in hold, a follow-up task in a fixed project, a
#: reaction, a word to a colleague with no reason.
_STOCK = re.compile(r'called "Check in with |add a task "Follow up with |react to .{1,80} with a ✅|\blet [A-Z][a-z]+ [A-Z][a-z]+ know the ')


def stock_follow_up(instruction: str, walk: Sequence[str], decisions: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a task has a follow-up no procedure in the data asks for: a walk's steps with no procedure decision, or
    a request that says one of the stock chores."""
    return bool(_STOCK.search(instruction)) or (bool(walk) and "procedure" not in kinds_of(decisions))


def kinds_of(decisions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The kinds among a kept task's recorded decisions (``stats["decisions"]``), in the usual order."""
    found = {str(d.get("kind")) for d in decisions}
    return [k for k in DECISION_KINDS if k in found]


def decision_stats(recorded: Sequence[Sequence[Mapping[str, Any]]], stock: int = 0, literal: float = 0.0) -> dict[str, Any]:
    """The figures ``composer stats`` prints about decisions, from each task's ``stats["decisions"]`` (``stock``: how many
    tasks have a stock follow-up; ``literal``: the share of tasks the literal agent fails)."""
    n = len(recorded)

    def share(count: int, total: int) -> float:
        return round(count / total, 3) if total else 0.0

    kinds = [set(kinds_of(d)) for d in recorded]
    rules = [[x for x in d if x.get("kind") == "rule"] for d in recorded]
    rule_tasks = [r for r in rules if r]
    premises = [[x for x in d if x.get("kind") == "premise"] for d in recorded]
    return {
        "with_decision": share(sum(1 for k in kinds if k), n),
        "kinds": {k: share(sum(1 for found in kinds if k in found), n) for k in DECISION_KINDS},
        "rule_tasks": len(rule_tasks),
        "rule_non_default": share(sum(1 for r in rule_tasks if any(x.get("default") is False for x in r)), len(rule_tasks)),
        "rule_near_threshold": share(sum(1 for r in rule_tasks if any(x.get("near") for x in r)), len(rule_tasks)),
        "stock_follow_ups": stock,
        "literal_agent_fails": literal,
        "premise_false": share(sum(1 for p in premises if any(x.get("default") is False for x in p)), n),
    }


def format_decisions(stats: Mapping[str, Any]) -> list[str]:
    kinds = ", ".join(f"{k} {v:.0%}" for k, v in stats["kinds"].items())
    return [
        f"decisions              {stats['with_decision']:.0%} of tasks have one; kinds: {kinds}",
        f"rules                  {stats['rule_tasks']} rule tasks, non-default outcome {stats['rule_non_default']:.0%}, "
        f"near the threshold {stats['rule_near_threshold']:.0%}; premise false {stats['premise_false']:.0%} of tasks; "
        f"{stats['stock_follow_ups']} stock follow-ups",
        f"literal agent          fails {stats['literal_agent_fails']:.0%} of tasks (does what the words say, default branch, "
        "first match, no premise checked, no procedure read)",
    ]


__all__ = ["DECISION_KINDS", "NEAR", "Decision", "DecisionKind", "decision_stats", "format_decisions", "kinds_of", "merged",
           "near_threshold"]
