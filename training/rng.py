"""Keep the process's global random state as it was: trainers seed it, callers must not notice."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["global_rng_preserved"]


@contextmanager
def global_rng_preserved() -> Iterator[None]:
    """Restore Python, NumPy and torch (CPU and CUDA) global RNG state on exit.

    Transformers' ``Trainer`` and TRL call ``set_seed`` on the global generators; same seed, same
    output must not depend on whether a training run happened earlier in the process.
    """
    import numpy
    import torch

    python_state = random.getstate()
    numpy_state = numpy.random.get_state()
    with torch.random.fork_rng():
        try:
            yield
        finally:
            random.setstate(python_state)
            numpy.random.set_state(numpy_state)
