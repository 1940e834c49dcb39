"""One parser for Qwen / Hermes completions: ``<think>`` reasoning and ``<tool_call>{json}</tool_call>`` blocks.

Used by every agent that gets raw text back (vLLM offline, transformers). A block that cannot be
read still becomes a tool call (with ``error`` set) so the runner answers it with an error result
the model can read, instead of silently treating the text as a final answer.
"""

from __future__ import annotations

import json
import re

from harness.agents.base import AgentTurn, ToolCallRequest

__all__ = ["UNPARSED_TOOL_NAME", "parse_completion"]

UNPARSED_TOOL_NAME = "unparsed_tool_call"  # the recorded name of a call whose name could not be read

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')
_CALL_FORMAT = '<tool_call>{"name": "<tool name>", "arguments": {<arguments as a JSON object>}}</tool_call>'


def parse_completion(text: str) -> AgentTurn:
    """Split a raw completion into reasoning, visible content and tool calls."""
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
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        found = _NAME.search(raw)
        return ToolCallRequest(
            name=found.group(1) if found else UNPARSED_TOOL_NAME,
            arguments=raw,
            error=f"Your tool call is not valid JSON ({exc.msg} at character {exc.pos}). Write {_CALL_FORMAT}.",
        )
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return ToolCallRequest(
            name=UNPARSED_TOOL_NAME,
            arguments=raw,
            error=f"A tool call needs a \"name\" string and an \"arguments\" object. Write {_CALL_FORMAT}.",
        )
    arguments = value.get("arguments", value.get("parameters", {}))
    # A string is kept as written (models sometimes double-encode): the runner decodes or rejects it.
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCallRequest(name=value["name"], arguments=text)
