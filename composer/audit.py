"""``composer audit``: a task set as its reviewers read it, with every referring expression re-proved.

For each task: its scenario (archetype, family, phrasing), the trigger it starts from, each referring
expression with the relation it follows and how many records it picks out on a fresh world with the
task's setup (it must be exactly its own), the information flows, the traps, the checks and the rubric.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from mcp_services.kernel.world import WorldShape
from mcp_services.tasks.checks import InfoFlow
from mcp_services.tasks.spec import TaskSpec

from composer.catalog import Catalog
from composer.resolve import resolve
from composer.runner import Runner, runner_for
from composer.scenario import Rec, Reference, Skip, StateView


def audit_records(tasks: Sequence[TaskSpec], catalog: Catalog) -> Iterator[dict[str, Any]]:
    """One JSON-ready record per task (see the module docstring)."""
    runners: dict[tuple[int, WorldShape], Runner] = {}
    for task in tasks:
        runner = runner_for(runners, catalog, task)
        runner.fresh(task.setup)
        view = StateView(catalog, runner)
        references = []
        for ref in task.scenario.references if task.scenario else []:
            try:
                entity = view.entity_of_table(ref.service, ref.table)
                # "any of these" conditions come back from JSON as lists
                where = {k: tuple(v) if isinstance(v, list) else v for k, v in ref.where.items()}
                keys = resolve(view, Reference(ref.text, Rec(ref.service, entity, ref.table, ref.key, {}), ref.relation, where, ref.latest))
            except Skip as exc:
                keys, entity = [], f"({exc.reason})"
            references.append(
                {"text": ref.text, "service": ref.service, "table": ref.table, "key": ref.key, "relation": ref.relation,
                 "matches": keys, "resolved": keys == [ref.key]}
            )
        scenario = task.scenario
        yield {
            "id": task.id,
            "archetype": scenario.archetype if scenario else None,
            "family": scenario.family if scenario else None,
            "phrasing": scenario.phrasing if scenario else None,
            "instruction": task.instruction,
            "trigger": scenario.trigger.model_dump() if scenario and scenario.trigger else None,
            "policy_in_data": bool(scenario and scenario.policy_in_data),
            "references": references,
            "flows": [
                {"value": c.value, "from": f"{c.source_service}.{c.source_tool}", "to": f"{c.service}.{c.table}.{c.column}"}
                for c in task.checks if isinstance(c, InfoFlow)
            ],
            "traps": [t.model_dump() for t in task.traps],
            "checks": [c.model_dump(mode="json") for c in task.checks],
            "rubric": [r.model_dump(mode="json") for r in task.rubric],
            "near_misses": [
                {"id": cf.id, "description": cf.description, "must": "fail", "criteria": list(cf.criteria)} for cf in task.counterfactuals
            ] + [{"id": "natural-report", "description": "every message names its records by another identifying form",
                  "must": "pass", "criteria": []} for _ in range(task.stats.get("natural_report") == "passed")],
        }


def format_audit(record: dict[str, Any]) -> str:
    lines = [f"task {record['id']}  [{record['archetype']} / {record['family']} / {record['phrasing']}]"]
    lines.append("  request: " + record["instruction"].replace("\n", "\n           "))
    trigger = record["trigger"]
    lines.append(f"  trigger: {trigger['service']}.{trigger['table']} {trigger['key']}" if trigger else "  trigger: none")
    lines.append(f"  policy in the data: {'yes' if record['policy_in_data'] else 'no'}")
    for ref in record["references"]:
        verdict = "exactly this record" if ref["resolved"] else f"NOT RESOLVED ({len(ref['matches'])} matches)"
        lines.append(f"  refers to {ref['text']!r}: {ref['service']}.{ref['table']} {ref['key']} via {ref['relation']} -> {verdict}")
    for flow in record["flows"]:
        lines.append(f"  flow: {flow['value']!r} from {flow['from']} to {flow['to']}")
    for trap in record["traps"]:
        lines.append(f"  trap ({trap['kind']}): {trap['description']} = {trap['service']}.{trap['table']} {trap['key']}")
    for miss in record.get("near_misses", []):
        caught = f" (caught by {', '.join(miss['criteria'])})" if miss["criteria"] else ""
        lines.append(f"  near miss {miss['id']}: {miss['description']} -> must {miss['must']}, verified{caught}")
    for item in record["rubric"]:
        lines.append(f"  criterion {item['id']}: {item['description']}  [{', '.join(item['checks'])}]")
    return "\n".join(lines)


def audit_json(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)
