"""A CPU speed fix for TRL 1.16's SFT and GRPO losses: score only labelled positions, as TRL does on CUDA.

TRL's fused log-prob head scores every position of the sequence on devices without Triton, to keep
tile shapes fixed for compilers such as Neuron's. On the CPU that only wastes time: with Qwen3's
151k-token vocabulary and multi-turn prompts of thousands of tokens it makes a GRPO step 5-10x
slower than scoring the completion alone, and an SFT step on a 10k-token trajectory (assistant-only
loss on ~700 of its tokens) about 30x slower. The result is the same either way (positions
outside the completion are masked to zero); this changes which branch TRL takes, for the duration
of a training run only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["completion_only_scoring_on_cpu"]


@contextmanager
def completion_only_scoring_on_cpu() -> Iterator[None]:
    """Within the block, TRL's fused log-prob head scores only labelled positions on the CPU too."""
    from trl.trainer import utils

    original: Callable[[Any], bool] | None = getattr(utils, "_use_triton", None)
    if original is None:  # another TRL version: leave it alone
        yield
        return

    def compact(device: Any) -> bool:
        # Only the "compact" branch in trl.trainer.utils reads this name; the kernels keep their own check.
        return bool(original(device)) or device.type == "cpu"

    utils._use_triton = compact
    try:
        yield
    finally:
        utils._use_triton = original
