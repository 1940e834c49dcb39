"""vLLM offline (``LLM.chat`` with tools) on a GPU, parsing Qwen's ``<tool_call>`` blocks.

Concurrent episodes' requests are gathered into batches (that is where vLLM's throughput comes
from): requests arriving within a short window go to one ``LLM.chat`` call per distinct tool list,
each with its own seeded ``SamplingParams``. vLLM is imported lazily, only when the agent first
generates; ``llm`` and ``sampling_params`` can be injected (tests run the batching on the CPU).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.agents.base import AgentTurn, Message, TaskBook, ToolSchema, TurnContext
from harness.agents.generation import cut_at_end, template_messages
from harness.errors import HarnessInputError
from harness.parsing import parse_completion

if TYPE_CHECKING:
    from harness.agents import AgentConfig

__all__ = ["Batcher", "GenerationRequest", "VLLMAgent"]


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    messages: list[dict[str, Any]]
    tools: list[ToolSchema]
    seed: int


@dataclass(slots=True)
class Batcher:
    """Collects concurrent requests and runs them together in a worker thread, one batch at a time."""

    run_batch: Callable[[list[GenerationRequest]], list[str]]
    window: float = 0.005
    max_batch: int = 256
    _pending: list[tuple[GenerationRequest, asyncio.Future[str]]] = field(default_factory=list)
    _worker: asyncio.Task[None] | None = None

    async def submit(self, request: GenerationRequest) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            await asyncio.sleep(self.window)  # let the other episodes of this step join the batch
            batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
            try:
                texts = await asyncio.to_thread(self.run_batch, [request for request, _ in batch])
            except Exception as exc:  # noqa: BLE001 - handed to every waiting episode
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), text in zip(batch, texts, strict=True):
                if not future.done():
                    future.set_result(text)


class VLLMAgent:
    def __init__(
        self,
        model_path: str,
        *,
        max_tokens: int = 2048,
        temperature: float = 0.7,
        engine_kwargs: dict[str, Any] | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        llm: Any = None,
        sampling_params: Callable[..., Any] | None = None,
        window: float = 0.005,
        max_batch: int = 256,
    ) -> None:
        self.name = f"vllm:{model_path}"
        self.model_path = model_path
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.engine_kwargs = dict(engine_kwargs or {})
        self.chat_template_kwargs = chat_template_kwargs
        self._llm = llm
        self._sampling_params = sampling_params
        self._batcher = Batcher(self._run_batch, window=window, max_batch=max_batch)

    @staticmethod
    def check(target: str, config: AgentConfig) -> None:
        if importlib.util.find_spec("vllm") is None:
            raise HarnessInputError(
                f"agent vllm:{target} needs vLLM, which is not installed here",
                "on a GPU machine: pip install -e '.[vllm]'; or serve the model with `vllm serve` and use "
                "--agent litellm:hosted_vllm/MODEL --api-base URL",
            )

    @classmethod
    def from_config(cls, target: str, config: AgentConfig, tasks: TaskBook) -> VLLMAgent:
        return cls(target, max_tokens=config.max_tokens, temperature=config.temperature)

    def _ensure_engine(self) -> None:
        if self._llm is not None and self._sampling_params is not None:
            return
        try:
            from vllm import LLM, SamplingParams
        except ImportError as exc:
            raise HarnessInputError(f"vllm agents need the vllm extra and a GPU: {exc}") from None
        if self._llm is None:
            self._llm = LLM(model=self.model_path, **self.engine_kwargs)
        self._sampling_params = self._sampling_params or SamplingParams

    def _run_batch(self, requests: list[GenerationRequest]) -> list[str]:
        self._ensure_engine()
        assert self._sampling_params is not None
        texts: list[str] = [""] * len(requests)
        groups: dict[str, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(json.dumps(request.tools, sort_keys=True), []).append(index)
        for indices in groups.values():  # LLM.chat takes one tool list per call
            params = [
                self._sampling_params(temperature=self.temperature, max_tokens=self.max_tokens, seed=requests[i].seed)
                for i in indices
            ]
            kwargs: dict[str, Any] = {"sampling_params": params, "use_tqdm": False}
            if requests[indices[0]].tools:
                kwargs["tools"] = requests[indices[0]].tools
            if self.chat_template_kwargs:
                kwargs["chat_template_kwargs"] = self.chat_template_kwargs
            outputs = self._llm.chat([requests[i].messages for i in indices], **kwargs)
            for i, output in zip(indices, outputs, strict=True):
                texts[i] = cut_at_end(output.outputs[0].text)
        return texts

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        text = await self._batcher.submit(GenerationRequest(template_messages(messages), tools, context.seed))
        return parse_completion(text)

    async def aclose(self) -> None:
        self._llm = None
