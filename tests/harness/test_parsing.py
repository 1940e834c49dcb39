"""The shared Qwen / Hermes completion parser."""

from __future__ import annotations

import json

from harness.parsing import UNPARSED_TOOL_NAME, parse_completion


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
