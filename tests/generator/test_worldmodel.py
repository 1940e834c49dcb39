"""The world model: validated, cached, consistent answers; offline by default, any litellm model optionally."""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.compiler import compile_service
from generator.spec import load_spec
from generator.worldmodel import (
    DEFAULT_RESULT,
    AnswerCache,
    LiteLLMWorldModel,
    OfflineWorldModel,
    SimRequest,
    simulate,
)
from mcp_services.kernel import Episode, ToolError
from tests.generator.scripted_llm import ScriptedLLM

FAX = {"type": "object", "required": ["fax_id", "to", "status"],
       "properties": {"fax_id": {"type": "string"}, "to": {"type": "string"},
                      "status": {"type": "string", "enum": ["queued", "sent"]}, "pages": {"type": "integer"}}}


def _request(tool: str, arguments: dict[str, Any], history: list[dict[str, Any]] | None = None,
             schema: dict[str, Any] | None = None) -> SimRequest:
    return SimRequest(service="fax", tool=tool, description="Fax things.", effect="read", input_schema={"type": "object"},
                      output_schema=schema or FAX, arguments=arguments, history=history or [], world_seed=0)


def test_offline_answers_fit_the_schema_and_depend_only_on_the_call() -> None:
    model = OfflineWorldModel()
    first = model.answer(_request("get_fax", {"fax_id": "fx_1"}))
    assert first["fax_id"] == "fx_1" and first["status"] in ("queued", "sent")
    assert model.answer(_request("get_fax", {"fax_id": "fx_1"})) == first
    other = model.answer(_request("get_fax", {"fax_id": "fx_2"}))
    assert other["fax_id"] == "fx_2"


def test_offline_answers_read_their_own_writes() -> None:
    sent = {"fax_id": "fx_9", "to": "+14155550100", "status": "sent", "pages": 3}
    history = [{"tool": "send_fax", "arguments": {"to": "+14155550100"}, "answer": sent}]
    answer = OfflineWorldModel().answer(_request("get_fax", {"fax_id": "fx_9"}, history))
    assert answer == sent


class _Flaky:
    """A backend that answers badly ``failures`` times, then well."""

    name = "flaky"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.feedback: list[str | None] = []

    def answer(self, request: SimRequest, feedback: str | None = None) -> Any:
        self.calls += 1
        self.feedback.append(feedback)
        if self.calls <= self.failures:
            return {"fax_id": 7}
        return {"fax_id": "fx_1", "to": "x", "status": "queued"}


def test_an_invalid_answer_is_retried_with_the_validation_error_then_cached() -> None:
    backend, cache = _Flaky(failures=1), AnswerCache()
    answer = simulate(backend, _request("get_fax", {"fax_id": "fx_1"}), cache)
    assert answer["status"] == "queued" and backend.calls == 2
    assert "did not match the output schema" in (backend.feedback[1] or "")
    assert simulate(backend, _request("get_fax", {"fax_id": "fx_1"}), cache) == answer
    assert backend.calls == 2  # the same call is answered from the cache


def test_a_backend_that_never_answers_well_fails_the_call_with_a_clear_error() -> None:
    with pytest.raises(ToolError) as caught:
        simulate(_Flaky(failures=99), _request("get_fax", {"fax_id": "fx_1"}), AnswerCache(), attempts=3)
    assert caught.value.code == "internal_error"
    assert "gave no valid answer after 3 tries" in caught.value.message


def test_a_litellm_model_answers_through_an_openai_compatible_server() -> None:
    good = '{"fax_id": "fx_3", "to": "+14155550100", "status": "sent"}'
    with ScriptedLLM(["not json at all", f"```json\n{good}\n```"]) as server:
        model = LiteLLMWorldModel("openai/scripted", api_base=server.api_base, api_key="test", timeout=10)
        answer = simulate(model, _request("get_fax", {"fax_id": "fx_3"}), AnswerCache())
        prompts = [r["messages"] for r in server.requests]
    assert answer == {"fax_id": "fx_3", "status": "sent", "to": "+14155550100"}
    assert len(prompts) == 2 and "Arguments of this call" in prompts[0][1]["content"]
    assert "previous attempt failed" in prompts[1][-1]["content"]


def test_a_simulated_write_that_maps_onto_no_rows_is_refused_and_changes_nothing() -> None:
    spec = load_spec({
        "name": "faxes", "description": "Send and check faxes.",
        "tools": [
            {"name": "send_fax", "effect": "write", "description": "Send a fax.", "result": FAX,
             "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "fax_id": {"type": "string"}},
                            "required": ["to", "fax_id"]},
             "behaviour": {"kind": "simulated"}},
            {"name": "ping", "effect": "read", "description": "Ping.", "parameters": {"type": "object", "properties": {}},
             "behaviour": {"kind": "simulated"}},
        ],
    })
    service = compile_service(spec, world_model=OfflineWorldModel())
    assert service.tools["send_fax"].simulated and not service.tools["ping"].answers_from_state
    with Episode([service], world_seed=0) as episode:
        before = episode.dump()
        refused = episode.call("faxes", "send_fax", {"to": "+14155550100", "fax_id": "fx_5"})
        assert not refused.success and refused.error_code == "not_implemented"
        assert "Nothing was changed" in (refused.error_message or "")
        assert episode.dump() == before  # never an echo, never a record of a call that did nothing
        assert set(episode.call("faxes", "ping", {}).data) >= set(DEFAULT_RESULT["required"])


def _fax_office(result: dict[str, Any] | None = None) -> Any:
    """Faxes whose every tool is simulated: reads and writes map onto the fax rows by their paths and names."""
    fax_id = {"type": "string", "description": "The fax's id."}
    get: dict[str, Any] = {"name": "get_fax", "effect": "read", "description": "Get a fax.",
                           "http": {"method": "GET", "path": "/faxes/{fax_id}"}, "behaviour": {"kind": "simulated", "entity": "fax"},
                           "parameters": {"type": "object", "properties": {"fax_id": fax_id}, "required": ["fax_id"]}}
    if result is not None:
        get["result"] = result
    return load_spec({
        "name": "faxoffice", "description": "Faxes.",
        "entities": [{"name": "fax", "table": "faxes", "key": {"prefix": "fx"}, "label": "to",
                      "fields": [{"name": "to", "type": "string"}, {"name": "pages", "type": "integer"},
                                 {"name": "status", "type": "string", "enum": ["queued", "sent"]}]}],
        "tools": [
            {"name": "send_fax", "effect": "write", "description": "Send a fax.",
             "http": {"method": "POST", "path": "/faxes"}, "behaviour": {"kind": "simulated", "entity": "fax"},
             "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "pages": {"type": "integer"}},
                            "required": ["to"]}},
            get,
            {"name": "list_faxes", "effect": "read", "description": "List faxes.",
             "http": {"method": "GET", "path": "/faxes"}, "behaviour": {"kind": "simulated", "entity": "fax"},
             "parameters": {"type": "object", "properties": {"status": {"type": "string"}, "limit": {"type": "integer"}}}},
            {"name": "cancel_fax", "effect": "write", "description": "Cancel a fax.",
             "http": {"method": "POST", "path": "/faxes/{fax_id}/cancel"}, "behaviour": {"kind": "simulated", "entity": "fax"},
             "parameters": {"type": "object", "properties": {"fax_id": fax_id, "status": {"type": "string"}},
                            "required": ["fax_id"]}},
        ],
    })


def test_simulated_reads_answer_from_the_episodes_rows_and_show_simulated_writes() -> None:
    service = compile_service(_fax_office(), world_model=OfflineWorldModel())
    assert all(t.simulated for t in service.tools.values()) and service.tools["get_fax"].answers_from_state
    with Episode([service], world_seed=0) as episode:
        stored = episode.dump()["faxoffice"]["faxes"]
        row = stored["fx_0002"]
        assert episode.call("faxoffice", "get_fax", {"fax_id": "fx_0002"}).data["to"] == row["to"]
        missing = episode.call("faxoffice", "get_fax", {"fax_id": "fx_9999"})
        assert not missing.success and missing.error_code == "not_found"
        sent = episode.call("faxoffice", "send_fax", {"to": "+14155550100", "pages": 3}).data
        assert episode.call("faxoffice", "get_fax", {"fax_id": sent["id"]}).data["pages"] == 3  # the write shows up
        listed = episode.call("faxoffice", "list_faxes", {"limit": 100}).data
        assert sent["id"] in {i["id"] for i in listed["items"]} and listed["total"] == len(stored) + 1
        queued = episode.call("faxoffice", "list_faxes", {"status": "queued", "limit": 100}).data["items"]
        assert queued and all(i["status"] == "queued" for i in queued)  # a filter that maps applies
        episode.call("faxoffice", "cancel_fax", {"fax_id": "fx_0002", "status": "sent"})
        assert episode.call("faxoffice", "get_fax", {"fax_id": "fx_0002"}).data["status"] == "sent"


def test_a_litellm_model_presents_the_episodes_rows_and_an_invented_row_is_refused() -> None:
    shape = {"type": "object", "required": ["fax", "recipient"],
             "properties": {"fax": {"type": "string"}, "recipient": {"type": "string"}}}
    with Episode([compile_service(_fax_office(shape), world_model=OfflineWorldModel())], world_seed=0) as episode:
        row = episode.dump()["faxoffice"]["faxes"]["fx_0003"]
    invented = '{"fax": "ID32611", "recipient": "+15550000000"}'
    presented = json.dumps({"fax": "fx_0003", "recipient": row["to"]})
    with ScriptedLLM([invented, presented]) as server:
        model = LiteLLMWorldModel("openai/scripted", api_base=server.api_base, api_key="test", timeout=10)
        with Episode([compile_service(_fax_office(shape), world_model=model)], world_seed=0) as episode:
            answer = episode.call("faxoffice", "get_fax", {"fax_id": "fx_0003"})
            missing = episode.call("faxoffice", "get_fax", {"fax_id": "fx_9999"})
        prompts = [r["messages"] for r in server.requests]
    assert answer.success and answer.data == {"fax": "fx_0003", "recipient": row["to"]}
    assert len(prompts) == 2 and row["to"] in prompts[0][1]["content"]  # the model is shown the row
    assert "fx_0003" in prompts[1][-1]["content"] or "present" in prompts[1][-1]["content"]
    assert not missing.success and missing.error_code == "not_found"  # never asked about an unknown id


CHARGE_ROW = {"type": "object", "required": ["id", "amount", "status"],
              "properties": {"id": {"type": "string"}, "amount": {"type": "integer"},
                             "status": {"type": "string", "enum": ["pending", "captured", "disputed"]}}}


def _charges_spec() -> Any:
    """A charge entity with compiled reads, and simulated tools that name charges by id."""
    id_param = {"type": "object", "properties": {"charge_id": {"type": "string"}}, "required": ["charge_id"]}
    return load_spec({
        "name": "charges", "description": "Charges.",
        "entities": [{"name": "charge", "table": "charges", "key": {"prefix": "ch"}, "label": "description",
                      "fields": [{"name": "amount", "type": "integer"}, {"name": "description", "type": "string"},
                                 {"name": "status", "type": "string", "enum": ["pending", "captured", "disputed"]}]}],
        "tools": [
            {"name": "get_charge_risk", "effect": "read", "description": "The risk review of a charge.",
             "result": CHARGE_ROW, "parameters": id_param, "behaviour": {"kind": "simulated", "entity": "charge"}},
            {"name": "dispute_charge", "effect": "write", "description": "Open a dispute on a charge.",
             "result": CHARGE_ROW, "behaviour": {"kind": "simulated", "entity": "charge"},
             "parameters": {"type": "object", "required": ["charge_id", "status"],
                            "properties": {"charge_id": {"type": "string"},
                                           "status": {"type": "string", "enum": ["disputed"]}}}},
        ],
    })


@pytest.mark.parametrize("backend", ["offline", "litellm"])
def test_a_simulated_tool_refuses_an_unknown_id_whichever_model_answers(backend: str) -> None:
    if backend == "offline":
        model: Any = OfflineWorldModel()
        server = None
    else:
        server = ScriptedLLM(['{"id": "ch_0001", "amount": 5, "status": "pending"}'] * 4)
        server.__enter__()
        model = LiteLLMWorldModel("openai/scripted", api_base=server.api_base, api_key="test", timeout=10)
    try:
        with Episode([compile_service(_charges_spec(), world_model=model)], world_seed=0) as episode:
            missing = episode.call("charges", "get_charge_risk", {"charge_id": "ch_9999"})
            assert not missing.success and missing.error_code == "not_found"
            assert "ch_9999" in (missing.error_message or "")
            known = episode.call("charges", "get_charge_risk", {"charge_id": "ch_0001"})
            assert known.success
    finally:
        if server is not None:
            server.__exit__(None, None, None)
            # the known id is answered from its row, which fits the tool's schema; the unknown one never reaches it
            assert len(server.requests) == 0


def test_the_offline_model_answers_from_the_row_and_reflects_a_simulated_write() -> None:
    with Episode([compile_service(_charges_spec(), world_model=OfflineWorldModel())], world_seed=0) as episode:
        row = episode.dump()["charges"]["charges"]["ch_0002"]
        read = episode.call("charges", "get_charge_risk", {"charge_id": "ch_0002"}).data
        assert read["id"] == "ch_0002" and read["amount"] == row["amount"]  # from the episode's state
        episode.call("charges", "dispute_charge", {"charge_id": "ch_0002", "status": "disputed"})
        again = episode.call("charges", "get_charge_risk", {"charge_id": "ch_0002"}).data
        assert again["status"] == "disputed"  # the write is reflected in the later read
        other = episode.call("charges", "get_charge_risk", {"charge_id": "ch_0003"}).data
        assert other["id"] == "ch_0003"  # never another call's id
