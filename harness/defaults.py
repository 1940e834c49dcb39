"""The defaults of the main job: the task set (composed from the built-in library with a fixed seed)
and the tool mode.

``harness collect`` with no ``--tasks`` runs on it, so the first command of the README needs no
file, network, key or GPU. Generation is the composer's (imported lazily).

Each task mounts its own services plus ``DEFAULT_DISTRACTOR_SERVICES`` others it does not need
(docs/training.md, "Defaults", says how that number and collect's default mode were chosen).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from harness.errors import HarnessInputError
from mcp_services.tasks.spec import TaskFileError, TaskSpec, load_tasks

__all__ = [
    "DEFAULT_DISTRACTOR_SERVICES",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODE",
    "DEFAULT_N_TASKS",
    "DEFAULT_TASK_SEED",
    "default_tasks",
    "load_task_set",
]

DEFAULT_TASK_SEED = 0
DEFAULT_N_TASKS = 50
#: Services mounted beside each task's own, so that discover mode means choosing among services: two,
#: the most that keeps the default run's direct-mode median under the 20K budget with a service to
#: spare (each mounted service adds ~2.8K tokens of tool list there; docs/training.md, "Defaults").
DEFAULT_DISTRACTOR_SERVICES = 2
#: The tool mode of `harness collect` and `harness eval` when --mode is not given: the paper's.
DEFAULT_MODE: Literal["direct", "discover"] = "discover"
#: Model turns per episode. A composed plan runs to 17 calls, and in discover mode an agent first lists the
#: services and describes each new tool: the reference needs more than 32 turns on such a plan.
DEFAULT_MAX_TURNS = 48


def default_tasks(
    seed: int = DEFAULT_TASK_SEED,
    n_tasks: int = DEFAULT_N_TASKS,
    distractor_services: int = DEFAULT_DISTRACTOR_SERVICES,
) -> list[TaskSpec]:
    """The verified tasks among ``n_tasks`` candidates composed from the whole library with ``seed``."""
    try:
        from composer.errors import ComposerError
        from composer.generate import GenerateConfig, generate
    except ImportError as exc:
        raise HarnessInputError(
            f"no --tasks given, and the composer cannot compose the default task set here ({exc}); "
            "pass --tasks FILE (from `composer generate`)"
        ) from None
    try:
        tasks, _ = generate(GenerateConfig(n=n_tasks, seed=seed, distractor_services=distractor_services))
    except ComposerError as exc:
        raise HarnessInputError(f"cannot compose the default task set: {exc}") from None
    if not tasks:
        raise HarnessInputError(f"the composer kept none of {n_tasks} candidate tasks (seed {seed}); pass --tasks FILE")
    return tasks


def load_task_set(
    path: Path | None,
    *,
    seed: int = DEFAULT_TASK_SEED,
    n_tasks: int = DEFAULT_N_TASKS,
    composed: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> list[TaskSpec]:
    """The tasks of ``path``; or the default set: read from ``composed`` (a run's own copy, on a
    restart) if that file exists, else composed now."""
    if path is None:
        if composed is not None and composed.exists():
            return load_task_set(composed)
        if log is not None:
            log(f"harness: composing the default task set ({n_tasks} candidates, seed {seed}) ...")
        return default_tasks(seed, n_tasks)
    try:
        return load_tasks(path)
    except TaskFileError as exc:
        raise HarnessInputError(str(exc)) from None
