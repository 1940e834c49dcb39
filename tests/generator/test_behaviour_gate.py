"""The behavioural gate: per tool, does it do what its API says? It runs in the gate's worker subprocesses."""

from __future__ import annotations

import copy
from typing import Any

from generator.gate import GateJob, TimeLimit, run_gate
from generator.gate.behaviour import declared_filters
from generator.gate.contracts import gate_service
from generator.spec import load_spec
from tests.generator.conftest import notes_spec_data


def _statuses(data: dict[str, Any]) -> dict[str, Any]:
    outcome = run_gate([GateJob(load_spec(data))], workers=1, limit=TimeLimit(base=60.0))[0]
    return {t.name: t for t in outcome.verdict.tools}


def _tool(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["tools"] if t["name"] == name)


def test_a_sound_service_passes_the_behavioural_checks_in_the_worker_subprocess() -> None:
    tools = _statuses(notes_spec_data())
    listing = tools["list_notes"]
    assert listing.status == "implemented"
    assert {c.name for c in listing.checks} >= {"filters_narrow", "http_verb"}
    assert all(c.passed for c in listing.checks)
    assert any(c.name == "created_is_listed" and c.passed for c in tools["create_note"].checks)
    assert any(c.name == "action_matches_description" and c.passed for c in tools["archive_note"].checks)


def test_a_list_that_ignores_its_filter_is_not_implemented() -> None:
    data = notes_spec_data()
    _tool(data, "list_notes")["bindings"]["status"] = {"role": "option"}
    assert declared_filters(load_spec(data).tool("list_notes")) == ["status"]
    listing = _statuses(data)["list_notes"]
    assert listing.status == "simulated"
    assert "filters_narrow" in listing.reason and "'status'" in listing.reason


def test_an_update_that_changes_what_was_not_passed_is_not_implemented() -> None:
    data = notes_spec_data()
    update = _tool(data, "update_note")
    update["bindings"]["title"] = {"role": "field", "column": "body"}  # writes the title into the body
    update["bindings"]["body"] = {"role": "option"}
    verdict, _ = gate_service(load_spec(data))
    tool = next(t for t in verdict.tools if t.name == "update_note")
    assert tool.status == "simulated"


def test_an_action_its_description_does_not_name_is_not_implemented() -> None:
    data = copy.deepcopy(notes_spec_data())
    archive = _tool(data, "archive_note")
    archive["name"], archive["description"] = "tidy_note", "Tidy a note away."  # sets status=archived, says "tidy"
    verdict, _ = gate_service(load_spec(data))
    tool = next(t for t in verdict.tools if t.name == "tidy_note")
    assert tool.status == "simulated" and "action_matches_description" in tool.reason
