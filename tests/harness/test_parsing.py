"""Reading what a model wrote: the JSON reader and the shared Qwen / Hermes completion parser."""

from __future__ import annotations

import json

import pytest

from harness.agents.generation import template_messages
from harness.parsing import UNPARSED_TOOL_NAME, UnreadableJson, parse_completion, read_json


def test_plain_text_is_a_final_answer() -> None:
    turn = parse_completion("The deal is worth 21,600 USD.")
    assert turn.content == "The deal is worth 21,600 USD."
    assert turn.tool_calls == ()


def test_tool_call_blocks_become_calls_and_leave_the_text() -> None:
    text = (
        'Let me look.\n<tool_call>\n{"name": "crm__get_deal", "arguments": {"deal_id": "dl_0002"}}\n</tool_call>\n'
        '<tool_call>{"name": "crm__list_notes", "arguments": {"entity_type": "deal", "entity_id": "dl_0002"}}'
        "</tool_call>"
    )
    turn = parse_completion(text)
    assert turn.content == "Let me look."
    assert [c.name for c in turn.tool_calls] == ["crm__get_deal", "crm__list_notes"]
    assert json.loads(turn.tool_calls[0].arguments) == {"deal_id": "dl_0002"}
    assert all(c.error is None for c in turn.tool_calls)


def test_reasoning_is_split_from_the_content() -> None:
    turn = parse_completion('<think>\nI need the deal.\n</think>\n\n<tool_call>{"name": "a", "arguments": {}}</tool_call>')
    assert turn.reasoning == "I need the deal."
    assert turn.content == ""
    assert turn.tool_calls[0].name == "a"


def test_completion_cut_off_while_thinking_has_no_content() -> None:
    turn = parse_completion("<think>still thinking")
    assert turn.content == "" and turn.tool_calls == () and turn.reasoning == "still thinking"


def test_bad_json_in_a_block_is_a_call_with_an_error_the_model_can_read() -> None:
    turn = parse_completion('<tool_call>{"name": "crm__get_deal", "arguments": {"deal_id": }</tool_call>')
    (call,) = turn.tool_calls
    assert call.name == "crm__get_deal"
    assert call.error is not None and "not valid JSON" in call.error and "<tool_call>" in call.error


def test_block_without_a_name_is_reported() -> None:
    (call,) = parse_completion('<tool_call>["x"]</tool_call>').tool_calls
    assert call.name == UNPARSED_TOOL_NAME and call.error is not None


def test_unterminated_block_at_the_end_still_counts() -> None:
    (call,) = parse_completion('<tool_call>{"name": "a", "arguments": {"x": 1}}').tool_calls
    assert call.name == "a" and json.loads(call.arguments) == {"x": 1}


def test_string_arguments_are_kept_as_written() -> None:
    (call,) = parse_completion('<tool_call>{"name": "a", "arguments": "{\\"x\\": 1}"}</tool_call>').tool_calls
    assert call.arguments == '{"x": 1}'


# -- hostile model output: every case is an error the model reads, never an exception ---------------

DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE_JSON = {
    "100,000 levels deep": (DEEP, "nested deeper than 32 levels"),
    "33 levels deep": ("[" * 33 + "]" * 33, "nested deeper than 32 levels"),
    "invalid": ('{"deal_id": ', "not valid JSON"),
    "a 5,000-digit integer": ("1" * 5000, "not readable JSON"),
    "NaN": ('{"amount": NaN}', "NaN is not a JSON number"),
    "Infinity": ("[-Infinity]", "-Infinity is not a JSON number"),
    "a lone surrogate": ('{"name": "\\ud800"}', "unpaired surrogate"),
}


@pytest.mark.parametrize("text, reason", HOSTILE_JSON.values(), ids=HOSTILE_JSON)
def test_hostile_json_is_refused_with_a_short_reason(text: str, reason: str) -> None:
    with pytest.raises(UnreadableJson) as caught:
        read_json(text)
    assert reason in str(caught.value) and len(str(caught.value)) < 200


def test_deep_but_allowed_and_huge_json_is_read() -> None:
    assert read_json("[" * 32 + "]" * 32) is not None
    assert read_json(json.dumps({"body": "x" * 5_000_000})) == {"body": "x" * 5_000_000}


@pytest.mark.parametrize("text, reason", HOSTILE_JSON.values(), ids=HOSTILE_JSON)
def test_a_hostile_tool_call_block_becomes_a_call_with_an_error(text: str, reason: str) -> None:
    block = f'<tool_call>{{"name": "crm__get_deal", "arguments": {text}}}</tool_call>'
    (call,) = parse_completion(block).tool_calls
    assert call.error is not None and reason in call.error and "<tool_call>" in call.error
    assert call.name in ("crm__get_deal", UNPARSED_TOOL_NAME)


def test_a_completion_with_a_lone_surrogate_becomes_writable_text() -> None:
    turn = parse_completion("Done \ud83d.")
    assert turn.content == "Done ?." and turn.content.encode("utf-8")


def test_chat_templates_get_unreadable_arguments_as_the_text_the_model_wrote() -> None:
    messages = [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_0_0", "type": "function", "function": {"name": "a", "arguments": DEEP}},
            {"id": "call_0_1", "type": "function", "function": {"name": "b", "arguments": '{"x": 1}'}},
        ]}
    ]
    deep, fine = template_messages(messages)[0]["tool_calls"]
    assert deep["function"]["arguments"] == DEEP and fine["function"]["arguments"] == {"x": 1}
