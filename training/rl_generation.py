"""Generating the next turn of many episodes at once: transformers (CPU or GPU) or vLLM (GPU).

A ``Generator`` maps a batch of ``GenerationRequest`` (an episode's whole token context and how many
tokens it may add) to ``Generated`` turns. ``TurnBatcher`` gathers the requests of concurrent
episodes into such batches: it runs a batch exactly when every live episode is waiting for its next
turn, so batches (and hence samples) do not depend on timing.

vLLM is reached through the trainer's own ``vllm_generation`` (TRL builds it for ``use_vllm``, in
colocate or server mode, and syncs the weights before each rollout); nothing here imports vllm.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from trl import GRPOTrainer

__all__ = [
    "Generated",
    "GenerationRequest",
    "Generator",
    "TransformersGenerator",
    "TurnBatcher",
    "VLLMGenerator",
    "default_generator",
]

EpisodeKey = tuple[str, int]  # (task id, rollout)


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """One episode's next turn: ``context_ids`` is the prompt and every turn so far."""

    key: EpisodeKey
    turn: int
    context_ids: list[int]
    max_new_tokens: int


@dataclass(frozen=True, slots=True)
class Generated:
    """A turn as sampled: its token ids (ending at the stop token, if one came) and their logprobs (vLLM only)."""

    ids: list[int]
    logprobs: list[float] | None = None


class Generator(Protocol):
    def __call__(self, requests: Sequence[GenerationRequest]) -> list[Generated]: ...


def _cut(ids: Sequence[int], stop_ids: Sequence[int], limit: int) -> list[int]:
    """Up to and including the first stop token, and at most ``limit`` tokens."""
    out: list[int] = []
    for token in ids[:limit]:
        out.append(int(token))
        if token in stop_ids:
            break
    return out


class TransformersGenerator:
    """``model.generate`` on the trainer's (unwrapped) policy, left-padded batches, seeded per call."""

    def __init__(self, trainer: GRPOTrainer, stop_ids: Sequence[int], seed: int) -> None:
        self._trainer = trainer
        self._stop_ids = tuple(stop_ids)
        self._seed = seed
        self._calls = 0

    def _call_seed(self) -> int:
        # Same run seed, same sequence of batches -> same samples; the global RNG is never touched.
        rank = self._trainer.accelerator.process_index
        digest = hashlib.sha256(f"{self._seed}:{rank}:{self._calls}".encode()).digest()
        self._calls += 1
        return int.from_bytes(digest[:4], "big")

    def __call__(self, requests: Sequence[GenerationRequest]) -> list[Generated]:
        import torch
        from trl.models import unwrap_model_for_generation

        if not requests:
            return []
        trainer = self._trainer
        pad_id = trainer.processing_class.pad_token_id
        width = max(len(request.context_ids) for request in requests)
        input_ids = torch.full((len(requests), width), pad_id, dtype=torch.long)
        attention = torch.zeros((len(requests), width), dtype=torch.long)
        for row, request in enumerate(requests):
            length = len(request.context_ids)
            input_ids[row, width - length :] = torch.tensor(request.context_ids, dtype=torch.long)
            attention[row, width - length :] = 1
        device = trainer.accelerator.device
        config = copy.deepcopy(trainer.generation_config)  # TRL's sampling settings (temperature, top_p, ...)
        config.max_new_tokens = max(request.max_new_tokens for request in requests)
        config.eos_token_id = list(self._stop_ids)
        devices = [device.index or 0] if device.type == "cuda" else []
        with (
            unwrap_model_for_generation(
                trainer.model_wrapped,
                trainer.accelerator,
                gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
                generation_kwargs=trainer.generation_kwargs,
                gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
            ) as model,
            torch.no_grad(),
            torch.random.fork_rng(devices=devices),
        ):
            torch.manual_seed(self._call_seed())
            output = model.generate(
                input_ids=input_ids.to(device), attention_mask=attention.to(device), generation_config=config
            )
        new_tokens = output[:, width:].tolist()
        return [
            Generated(_cut(tokens, self._stop_ids, request.max_new_tokens))
            for tokens, request in zip(new_tokens, requests, strict=True)
        ]


class VLLMGenerator:
    """TRL's vLLM backend (colocate or server) on token ids; returns the sampled tokens' logprobs.

    Where vLLM calls are collective across training processes (server mode, or colocate with tensor
    parallelism), every process must make the same calls with batches of the same size; ``lockstep``
    pads batches to the widest process's and ``drain`` keeps a process that has finished its episodes
    taking part until every process has.
    """

    def __init__(self, trainer: GRPOTrainer, stop_ids: Sequence[int], lockstep: bool) -> None:
        self._trainer = trainer
        self._stop_ids = tuple(stop_ids)
        self._lockstep = lockstep
        self._filler = [int(stop_ids[0])]  # a one-token prompt whose output is thrown away

    def _width(self, n: int) -> int:
        if not self._lockstep:
            return n
        from accelerate.utils import gather_object

        return max(gather_object([n]))

    def _generate(self, prompts: list[list[int]]) -> tuple[list[list[int]], list[list[float]]]:
        _, completion_ids, logprobs, _ = self._trainer.vllm_generation.generate(
            prompts=prompts, images=None, num_generations=1
        )
        # TRL asks vLLM for the sampled token's logprob only: one value per position (None where vLLM had NaN,
        # which TRL leaves out of its importance-sampling correction).
        values = [[math.nan if lp[0] is None else float(lp[0]) for lp in row] for row in logprobs]
        return [[int(token) for token in ids] for ids in completion_ids], values

    def __call__(self, requests: Sequence[GenerationRequest]) -> list[Generated]:
        width = self._width(len(requests))
        if width == 0:
            return []
        prompts = [list(request.context_ids) for request in requests]
        prompts += [self._filler] * (width - len(prompts))
        all_ids, all_logprobs = self._generate(prompts)
        out: list[Generated] = []
        for request, ids, logprobs in zip(requests, all_ids, all_logprobs, strict=False):
            kept = _cut(ids, self._stop_ids, request.max_new_tokens)
            out.append(Generated(kept, logprobs[: len(kept)]))
        return out

    def drain(self) -> None:
        """Take part in other processes' vLLM calls until none has an episode left (lockstep only)."""
        while self._lockstep:
            width = self._width(0)
            if width == 0:
                return
            self._generate([self._filler] * width)


def default_generator(trainer: GRPOTrainer, stop_ids: Sequence[int], seed: int) -> Generator:
    """vLLM when the trainer was configured for it, else transformers."""
    if trainer.args.use_vllm:
        lockstep = trainer.accelerator.num_processes > 1 and (
            trainer.args.vllm_mode == "server" or trainer.args.vllm_tensor_parallel_size > 1
        )
        return VLLMGenerator(trainer, stop_ids, lockstep)
    return TransformersGenerator(trainer, stop_ids, seed)


class TurnBatcher:
    """Collects the next-turn requests of concurrent episodes; generates once all live episodes wait.

    Episodes run in one event loop and reach their tools in process, so between two turns an
    episode never waits on anything but the model: when the number of waiting requests equals the
    number of live episodes, the batch is complete. It is sorted by episode, so its order does not
    depend on scheduling either.
    """

    def __init__(self, generate: Callable[[Sequence[GenerationRequest]], list[Generated]], episodes: int) -> None:
        self._generate = generate
        self._live = episodes
        self._pending: list[tuple[GenerationRequest, asyncio.Future[Generated]]] = []
        self.batches: list[int] = []  # the size of each batch run, for throughput logs and tests

    async def submit(self, request: GenerationRequest) -> Generated:
        future: asyncio.Future[Generated] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        self._flush_if_ready()
        return await future

    def episode_done(self) -> None:
        self._live -= 1
        self._flush_if_ready()

    def _flush_if_ready(self) -> None:
        if not self._pending or len(self._pending) < self._live:
            return
        batch = sorted(self._pending, key=lambda item: (item[0].key, item[0].turn))
        self._pending = []
        self.batches.append(len(batch))
        try:
            results = self._generate([request for request, _ in batch])
        except BaseException as error:  # noqa: BLE001 - every waiting episode gets the failure, none hangs
            for _, future in batch:
                future.set_exception(error)
            return
        for (_, future), result in zip(batch, results, strict=True):
            future.set_result(result)
