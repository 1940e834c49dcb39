"""Reading what a model wrote: JSON values, and Qwen / Hermes completions.

``read_json`` is the one way model-written JSON is decoded (tool-call arguments, ``<tool_call>``
blocks, chat-template rendering). It never raises anything but ``UnreadableJson``, whatever the
text: invalid JSON, nesting deep enough to exhaust the recursion limit, integers too long to
convert, ``NaN``, unpaired UTF-16 surrogates, or text too large for memory. Its message says what
to fix and never echoes the text.

``parse_completion`` splits a raw completion (vLLM offline, transformers, the RL policy) into
``<think>`` reasoning, visible content and ``<tool_call>{json}</tool_call>`` blocks. A block that
cannot be read still becomes a tool call (with ``error`` set) so the runner answers it with an error
result the model can read, instead of silently treating the text as a final answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.agents.base import AgentTurn, ToolCallRequest

__all__ = ["MAX_JSON_DEPTH", "UNPARSED_TOOL_NAME", "UnreadableJson", "parse_completion", "read_json", "valid_text"]

UNPARSED_TOOL_NAME = "unparsed_tool_call"  # the recorded name of a call whose name could not be read

#: Containers nested deeper than this are refused. The library's tool arguments nest 2-3 levels;
#: far below this the kernel, pydantic and ``repr`` are all safe from the recursion limit.
MAX_JSON_DEPTH = 32

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]{1,200})"')
_CALL_FORMAT = '<tool_call>{"name": "<tool name>", "arguments": {<arguments as a JSON object>}}</tool_call>'


class UnreadableJson(ValueError):
    """Model-written text that is not a JSON value the harness accepts; ``str()`` says why."""


def _refuse_constant(name: str) -> Any:
    raise UnreadableJson(f"{name} is not a JSON number; write a finite number or null")


def read_json(text: str) -> Any:
    """The JSON value ``text`` holds, or ``UnreadableJson`` (with a bounded message)."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except UnreadableJson:
        raise
    except json.JSONDecodeError as exc:
        raise UnreadableJson(f"not valid JSON ({exc.msg} at character {exc.pos})") from None
    except RecursionError:
        raise UnreadableJson(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    except MemoryError:
        raise UnreadableJson(f"too large to read ({len(text):,} characters)") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python converts
        raise UnreadableJson(f"not readable JSON ({str(exc).split(':')[0][:200]})") from None
    _check(value)
    return value


def _check(value: Any) -> None:
    """Depth and text validity, without recursion (the value may be ~1,000 levels deep)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not valid_text(item):
                raise UnreadableJson("a string holds an unpaired surrogate (a lone \\ud800-\\udfff escape)")
            continue
        if not isinstance(item, dict | list):
            continue
        if depth >= MAX_JSON_DEPTH:
            raise UnreadableJson(f"nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(item, dict):
            stack.extend((key, depth + 1) for key in item)
            stack.extend((child, depth + 1) for child in item.values())
        else:
            stack.extend((child, depth + 1) for child in item)


def valid_text(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (Python strings may hold lone surrogates; files cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_completion(text: str) -> AgentTurn:
    """Split a raw completion into reasoning, visible content and tool calls."""
    if not valid_text(text):
        text = text.encode("utf-8", "replace").decode("utf-8")
    reasoning: str | None = None
    if "</think>" in text:
        head, _, text = text.partition("</think>")
        reasoning = head.split("<think>")[-1].strip() or None
    elif text.lstrip().startswith("<think>"):
        # Cut off while thinking: everything is reasoning, nothing was said.
        return AgentTurn(content="", reasoning=text.lstrip()[len("<think>") :].strip() or None)
    calls = tuple(_parse_block(block) for block in _BLOCK.findall(text))
    content = _BLOCK.sub("", text).strip()
    return AgentTurn(content=content, tool_calls=calls, reasoning=reasoning)


def _parse_block(block: str) -> ToolCallRequest:
    raw = block.strip()
    try:
        value = read_json(raw)
    except UnreadableJson as exc:
        found = _NAME.search(raw)
        return ToolCallRequest(
            name=found.group(1) if found else UNPARSED_TOOL_NAME,
            arguments=raw,
            error=f"Your tool call is {exc}. Write {_CALL_FORMAT}.",
        )
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return ToolCallRequest(
            name=UNPARSED_TOOL_NAME,
            arguments=raw,
            error=f"A tool call needs a \"name\" string and an \"arguments\" object. Write {_CALL_FORMAT}.",
        )
    arguments = value.get("arguments", value.get("parameters", {}))
    # A string is kept as written (models sometimes double-encode): the runner decodes or rejects it.
    # Anything else re-encodes safely: ``read_json`` bounded its depth.
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCallRequest(name=value["name"], arguments=text)
