"""Token bookkeeping of a multi-turn episode: what the model wrote, and what the template put between.

GRPO needs, per rollout, the prompt's token ids and one completion sequence whose loss covers only
the model's own tokens. An episode is many turns, so the completion is built by concatenation, never
by re-tokenising text (that would train on tokens the model never sampled):

    prompt = template(system, user, tools) + generation prompt
    completion = turn 1 (model) | tool results + next generation prompt (template) | turn 2 (model) | ...

``env_mask`` is 1 on the model's tokens and 0 on the template's. The template's tokens between two
turns are rendered as TRL does for its own tool loop: a dummy conversation with and without the
tool messages, the difference being the suffix. That needs a prefix-preserving template (one that
renders earlier turns the same whatever follows); Qwen3's is not (it drops the empty think block of
earlier turns), so, like TRL, the suffix is rendered with TRL's training variant of such templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.agents.generation import cut_at_end, template_messages
from training.errors import TrainingInputError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = ["ChatTokens", "Transcript"]

_END_OF_TURN = "<|im_end|>"  # ChatML's end of turn: Qwen3's and our SmolLM2 template's
_DUMMY_CALL = {"id": "call_0", "type": "function", "function": {"name": "probe_tool", "arguments": {}}}
_DUMMY_TURNS: list[dict[str, Any]] = [
    {"role": "user", "content": "probe"},
    {"role": "assistant", "content": "", "tool_calls": [_DUMMY_CALL]},
]
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "probe_tool",
        "description": "A probe.",
        "parameters": {"type": "object", "properties": {"probe_key": {"type": "string"}}},
    },
}


@dataclass(slots=True)
class Transcript:
    """One episode's tokens: the prompt, then the completion with its mask and sampling logprobs."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)  # 0.0 where unknown (template tokens, transformers)

    def context(self) -> list[int]:
        """Everything so far: what the next turn is generated from."""
        return self.prompt_ids + self.completion_ids

    def add_template(self, ids: Sequence[int]) -> None:
        self.completion_ids.extend(ids)
        self.env_mask.extend([0] * len(ids))
        self.logprobs.extend([0.0] * len(ids))  # masked out of the loss and of vLLM's importance sampling

    def add_model(self, ids: Sequence[int], logprobs: Sequence[float] | None) -> None:
        self.completion_ids.extend(ids)
        self.env_mask.extend([1] * len(ids))
        self.logprobs.extend([0.0] * len(ids) if logprobs is None else logprobs)


def _suffix_template(tokenizer: PreTrainedTokenizerBase) -> str | None:
    """None to use the tokenizer's own template; else TRL's prefix-preserving variant of it."""
    from trl.chat_template_utils import get_training_chat_template, is_chat_template_prefix_preserving

    if not tokenizer.chat_template or is_chat_template_prefix_preserving(tokenizer):
        return None
    try:
        return get_training_chat_template(tokenizer)
    except ValueError:
        raise TrainingInputError(
            "the chat template is not prefix-preserving (it renders earlier turns differently once more follow) and "
            "TRL has no variant of it that is; pass a template such as qwen3 or chatml-tools"
        ) from None


class ChatTokens:
    """The chat template as token ids: the opening prompt, the suffix after tool results, decoding."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, template_kwargs: dict[str, Any] | None = None) -> None:
        self.tokenizer = tokenizer
        self.template_kwargs = dict(template_kwargs or {})
        token_id = tokenizer.convert_tokens_to_ids(_END_OF_TURN)
        unknown = tokenizer.unk_token_id
        known = isinstance(token_id, int) and token_id != unknown
        self.end_of_turn: int = token_id if known else tokenizer.eos_token_id
        self.stop_ids: tuple[int, ...] = tuple(
            sorted({self.end_of_turn, tokenizer.eos_token_id} - {None})  # type: ignore[arg-type]
        )
        self._suffix_template = _suffix_template(tokenizer)

    def _render(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        generation: bool,
        template: str | None = None,
    ) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            template_messages(messages),
            tools=tools or None,
            add_generation_prompt=generation,
            tokenize=True,
            return_dict=False,
            chat_template=template,
            **self.template_kwargs,
        )
        return [int(token) for token in ids]

    def prompt_ids(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[int]:
        """The opening prompt exactly as the harness's transformers agent renders it."""
        return self._render(messages, tools, generation=True)

    def tool_suffix_ids(self, tool_messages: list[dict[str, Any]]) -> list[int]:
        """The tokens after the model's end of turn: the tool results, then the next generation prompt."""
        prefix = self._render(list(_DUMMY_TURNS), None, False, self._suffix_template)
        full = self._render(list(_DUMMY_TURNS) + list(tool_messages), None, True, self._suffix_template)
        # Templates close a turn with "<|im_end|>\n": the model stops at <|im_end|>, the newline is the template's.
        ends = [i for i, token in enumerate(prefix) if token == self.end_of_turn]
        if ends:
            prefix = prefix[: ends[-1] + 1]
        if full[: len(prefix)] != prefix:
            raise TrainingInputError(
                "the chat template renders a conversation with tool results differently from its first turns, so the "
                "tokens between turns cannot be known; pass a prefix-preserving template (e.g. chatml-tools)"
            )
        return full[len(prefix) :]

    def decode(self, ids: Sequence[int]) -> str:
        """A turn as text (special tokens kept: ``<tool_call>`` is one in Qwen's vocabulary), cut at its end."""
        text = self.tokenizer.decode(list(ids), skip_special_tokens=False)
        return cut_at_end(text, (self.tokenizer.eos_token or "",))

    def check(self) -> None:
        """Fail before training if the template drops the tool list or tool results, or is not prefix-preserving."""
        prompt = self.tokenizer.decode(self.prompt_ids([{"role": "user", "content": "probe"}], [_PROBE_TOOL]))
        if "probe_tool" not in prompt:
            raise TrainingInputError("the chat template does not render the tool list; pass a tool-calling template")
        suffix = self.tokenizer.decode(
            self.tool_suffix_ids([{"role": "tool", "tool_call_id": "call_0", "content": "probe_result"}])
        )
        if "probe_result" not in suffix:
            raise TrainingInputError("the chat template drops tool results; pass a tool-calling template")
