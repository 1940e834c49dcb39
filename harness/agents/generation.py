"""What the offline model agents (transformers, vLLM) share: chat-template messages and end markers."""

from __future__ import annotations

from typing import Any

from harness.agents.base import Message
from harness.parsing import UnreadableJson, read_json

__all__ = ["END_MARKERS", "cut_at_end", "template_messages"]

#: Text after which a ChatML / Qwen completion is over (decoding keeps special tokens: ``<tool_call>`` is one).
END_MARKERS = ("<|im_end|>", "<|endoftext|>", "</s>", "<|eot_id|>")


def cut_at_end(text: str, extra: tuple[str, ...] = ()) -> str:
    """The completion up to its first end marker."""
    for marker in END_MARKERS + tuple(m for m in extra if m):
        index = text.find(marker)
        if index >= 0:
            text = text[:index]
    return text


def template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages for a chat template: tool-call arguments as objects where they are valid JSON.

    Templates render an object with ``tojson`` and a string as is; vLLM's own preprocessing would
    ``json.loads`` strings and fail on a malformed call, so only invalid JSON stays a string (and
    renders exactly as the model wrote it); so does JSON ``read_json`` refuses (e.g. nested too deep
    for the template's own ``tojson``).
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if not message.get("tool_calls"):
            out.append(message)
            continue
        calls = []
        for call in message["tool_calls"]:
            arguments = call["function"]["arguments"]
            try:
                parsed = read_json(arguments) if isinstance(arguments, str) else arguments
            except UnreadableJson:
                parsed = arguments
            calls.append({**call, "function": {"name": call["function"]["name"], "arguments": parsed}})
        out.append({**message, "tool_calls": calls})
    return out
