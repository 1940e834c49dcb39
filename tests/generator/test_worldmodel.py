"""The world model: validated, cached, consistent answers; offline by default, any litellm model optionally."""

from __future__ import annotations

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


def test_simulated_writes_are_state_and_the_models_memory(tmp_path: Any) -> None:
    spec = load_spec({
        "name": "faxes", "description": "Send and check faxes.",
        "tools": [
            {"name": "send_fax", "effect": "write", "description": "Send a fax.", "result": FAX,
             "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "fax_id": {"type": "string"}},
                            "required": ["to", "fax_id"]},
             "behaviour": {"kind": "simulated"}},
            {"name": "get_fax", "effect": "read", "description": "Get a fax.", "result": FAX,
             "parameters": {"type": "object", "properties": {"fax_id": {"type": "string"}}, "required": ["fax_id"]},
             "behaviour": {"kind": "simulated"}},
            {"name": "ping", "effect": "read", "description": "Ping.", "parameters": {"type": "object", "properties": {}},
             "behaviour": {"kind": "simulated"}},
        ],
    })
    with Episode([compile_service(spec, world_model=OfflineWorldModel())], world_seed=0) as episode:
        sent = episode.call("faxes", "send_fax", {"to": "+14155550100", "fax_id": "fx_5"}).data
        calls = episode.dump()["faxes"]["simulated_calls"]
        assert [c["tool"] for c in calls.values()] == ["send_fax"]
        got = episode.call("faxes", "get_fax", {"fax_id": "fx_5"}).data
        assert got == sent  # read-your-writes through the recorded call
        assert set(episode.call("faxes", "ping", {}).data) >= set(DEFAULT_RESULT["required"])
        episode.reset()
        assert episode.dump()["faxes"]["simulated_calls"] == {}


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
            assert len(server.requests) == 1  # the unknown id never reached the model; the known one did, once


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
