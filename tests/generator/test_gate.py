"""The gate: contract checks per tool, demotion to the world model, subprocess time limits, the report."""

from __future__ import annotations

from generator.codeloop import module_source, with_custom
from generator.gate import GateJob, GateReport, TimeLimit, run_gate
from generator.gate.contracts import gate_service
from generator.spec import ServiceSpec, load_spec
from tests.generator.conftest import notes_spec_data

GOOD_CUSTOM = '''
def count_notes(ctx, args, api):
    rows = ctx.db.execute(select(api.table("note"))).mappings().all()
    return {"status": "ok", "message": f"{len(rows)} notes", "result": {"count": len(rows)}}
'''
CRASHING_CUSTOM = '''
def count_notes(ctx, args, api):
    raise RuntimeError("boom")
'''
LOOPING_CUSTOM = '''
def count_notes(ctx, args, api):
    while True:
        pass
'''


def _with_count_tool(code_name: str = "count_notes") -> ServiceSpec:
    data = notes_spec_data()
    data["tools"].append({"name": code_name, "effect": "read", "description": "Count the notes.",
                          "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
                          "behaviour": {"kind": "simulated"}})
    return with_custom(load_spec(data), {code_name})


def test_every_tool_of_a_sound_spec_is_implemented_with_every_check_green(notes_spec: ServiceSpec) -> None:
    verdict, kept = gate_service(notes_spec)
    statuses = {t.name: t.status for t in verdict.tools}
    assert statuses.pop("suggest_title") == "simulated"
    assert set(statuses.values()) == {"implemented"}
    create = next(t for t in verdict.tools if t.name == "create_note")
    names = {c.name for c in create.checks}
    assert {"schemas", "valid_call", "deterministic", "bad_input", "create_get_round_trip"} <= names
    archive = next(t for t in verdict.tools if t.name == "archive_note")
    assert {"unknown_id_not_found", "transition_not_repeatable"} <= {c.name for c in archive.checks}
    assert all(c.passed for t in verdict.tools for c in t.checks)
    assert kept == notes_spec


def test_a_tool_that_fails_its_contract_goes_to_the_world_model_with_the_reason() -> None:
    data = notes_spec_data()
    # a get whose key is an integer matched against text titles: no valid call can be built
    data["tools"].append({"name": "get_note_by_title", "effect": "read", "description": "Get a note by title.",
                          "parameters": {"type": "object", "additionalProperties": False, "required": ["title"],
                                         "properties": {"title": {"type": "integer"}}},
                          "behaviour": {"kind": "get", "entity": "note"},
                          "bindings": {"title": {"role": "key", "column": "title"}}})
    verdict, kept = gate_service(load_spec(data))
    tool = next(t for t in verdict.tools if t.name == "get_note_by_title")
    assert tool.status == "simulated"
    assert tool.reason.startswith("compiled behaviour failed the gate: valid_call:")
    assert kept is not None and kept.tool("get_note_by_title").behaviour.kind == "simulated"
    assert kept.tool("get_note_by_title").result["properties"]["id"]  # keeps the row shape it had


def test_custom_code_is_implemented_only_when_it_passes_and_demoted_when_it_crashes() -> None:
    spec = _with_count_tool()
    good = run_gate([GateJob(spec, module_source("notes", {"count_notes": GOOD_CUSTOM}))], workers=1)[0]
    assert {t.name: t.status for t in good.verdict.tools}["count_notes"] == "implemented"
    bad = run_gate([GateJob(spec, module_source("notes", {"count_notes": CRASHING_CUSTOM}))], workers=1)[0]
    tool = next(t for t in bad.verdict.tools if t.name == "count_notes")
    assert tool.status == "simulated" and "internal_error" in tool.reason


def test_generated_code_that_never_returns_is_stopped_by_the_time_limit() -> None:
    spec = _with_count_tool()
    outcome = run_gate([GateJob(spec, module_source("notes", {"count_notes": LOOPING_CUSTOM}))], workers=1,
                       limit=TimeLimit(base=4.0, per_tool=0.0))[0]
    assert outcome.spec is None
    # 4 CPU seconds; on a machine so loaded that the loop gets less CPU than that, the wall-clock
    # backstop (wall_factor x 4 s) stops it instead.
    assert outcome.verdict.reason.startswith(("the gate timed out after 4 s", "the gate timed out after 16 s"))
    assert {t.status for t in outcome.verdict.tools} == {"rejected"}


def test_the_report_has_exactly_the_agreed_shape(notes_spec: ServiceSpec) -> None:
    verdict, _ = gate_service(notes_spec)
    payload = GateReport([verdict]).to_json()
    assert list(payload) == ["services"]
    service = payload["services"][0]
    assert set(service) == {"name", "tools"}
    assert all(set(t) == {"name", "status", "reason"} for t in service["tools"])
    assert {t["status"] for t in service["tools"]} <= {"implemented", "simulated", "rejected"}
