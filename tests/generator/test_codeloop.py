"""The LLM coding loop against a scripted local OpenAI-compatible server: write, gate, feed back, repeat."""

from __future__ import annotations

from generator.codeloop import CodingLoop
from generator.spec import load_spec
from tests.generator.conftest import notes_spec_data
from tests.generator.scripted_llm import ScriptedLLM

BROKEN = '''```python
def count_notes(ctx, args, api):
    return {"count": "many"}
```'''
FIXED = '''Here it is:
```python
def count_notes(ctx, args, api):
    rows = ctx.db.execute(select(api.table("note"))).mappings().all()
    archived = sum(1 for r in rows if r["status"] == "archived")
    return {"status": "ok", "message": f"{len(rows)} notes, {archived} archived", "result": {"count": len(rows)}}
```'''


def _spec_with_count() -> object:
    data = notes_spec_data()
    data["tools"].append({"name": "count_notes", "effect": "read", "description": "Count the notes and the archived ones.",
                          "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
                          "behaviour": {"kind": "simulated"}})
    return load_spec(data)


def test_the_loop_feeds_gate_failures_back_until_the_tool_passes() -> None:
    spec = _spec_with_count()
    with ScriptedLLM([BROKEN, FIXED]) as server:
        loop = CodingLoop("openai/scripted", api_base=server.api_base, api_key="test", rounds=3, timeout=20)
        result = loop.implement(spec, ["count_notes"])  # type: ignore[arg-type]
        shown = [r["messages"] for r in server.requests]
    assert result.implemented == ["count_notes"] and result.rounds["count_notes"] == 2
    assert "valid_call" in result.failures["count_notes"] or "schema" in result.failures["count_notes"]
    assert "The gate rejected your implementation" in shown[1][-1]["content"]
    assert "def count_notes(ctx, args, api)" in (result.code or "")
    assert result.spec is not None and result.spec.tool("count_notes").behaviour.kind == "custom"


def test_the_loop_stops_after_its_rounds_and_leaves_the_tool_simulated() -> None:
    spec = _spec_with_count()
    with ScriptedLLM([BROKEN, "no code here", BROKEN]) as server:
        loop = CodingLoop("openai/scripted", api_base=server.api_base, api_key="test", rounds=3, timeout=20)
        result = loop.implement(spec, ["count_notes"])  # type: ignore[arg-type]
    assert result.implemented == [] and result.code is None and result.spec is None
    assert result.rounds["count_notes"] == 3


def test_an_import_with_a_coding_model_keeps_the_code_that_passed_and_serves_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from generator.catalog import Catalog
    from generator.pipeline import ImportConfig, import_file
    from mcp_services.kernel import Episode

    spec = _spec_with_count()
    source = tmp_path / "notes.json"
    source.write_text(spec.model_dump_json(exclude_none=True))  # type: ignore[attr-defined]
    out = tmp_path / "catalog"
    def reply(body: dict) -> str:  # type: ignore[type-arg]
        return FIXED if "def count_notes(ctx" in body["messages"][1]["content"] else "I cannot write this one."

    with ScriptedLLM([reply, reply]) as server:
        coder = CodingLoop("openai/scripted", api_base=server.api_base, api_key="test", rounds=1, timeout=20)
        result = import_file(source, ImportConfig(out=out, fmt="spec", coder=coder))
    statuses = {t.name: t.status for s in result.report.services for t in s.tools}
    assert statuses["count_notes"] == "implemented" and statuses["suggest_title"] == "simulated"
    assert (out / "custom" / "notes.py").exists()
    report = json.loads((out / "gate_report.json").read_text())
    assert {t["name"]: t["status"] for t in report["services"][0]["tools"]}["count_notes"] == "implemented"
    service = Catalog(out).service("notes")
    with Episode([service], world_seed=0) as episode:
        answer = episode.call("notes", "count_notes", {})
    assert answer.success and answer.data["result"]["count"] == 10
