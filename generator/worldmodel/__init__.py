"""The world model: answers for tools marked ``simulated``.

Backends: ``OfflineWorldModel`` (default; deterministic, no network) and ``LiteLLMWorldModel`` (any
litellm model). Choose one in code with ``set_world_model``, or with the environment variable
``COMPOWORLD_WORLD_MODEL=offline|litellm:<model>`` (``COMPOWORLD_WORLD_MODEL_API_BASE`` for a local
OpenAI-compatible server).
"""

from __future__ import annotations

import os

from generator.worldmodel.base import (
    DEFAULT_RESULT,
    AnswerCache,
    SimRequest,
    WorldModel,
    WorldModelError,
    answer_problem,
    simulate,
)
from generator.worldmodel.llm import LiteLLMWorldModel
from generator.worldmodel.offline import OfflineWorldModel

__all__ = [
    "DEFAULT_RESULT",
    "AnswerCache",
    "LiteLLMWorldModel",
    "OfflineWorldModel",
    "SimRequest",
    "WorldModel",
    "WorldModelError",
    "answer_problem",
    "get_world_model",
    "set_world_model",
    "simulate",
]

_configured: WorldModel | None = None


def set_world_model(model: WorldModel | None) -> None:
    """Use ``model`` for every simulated tool compiled from now on (None: back to the environment's choice)."""
    global _configured
    _configured = model


def get_world_model() -> WorldModel:
    """The configured backend: ``set_world_model``'s, else ``COMPOWORLD_WORLD_MODEL``, else offline."""
    if _configured is not None:
        return _configured
    choice = os.environ.get("COMPOWORLD_WORLD_MODEL", "offline").strip()
    if choice.startswith("litellm:"):
        return LiteLLMWorldModel(choice.removeprefix("litellm:"), api_base=os.environ.get("COMPOWORLD_WORLD_MODEL_API_BASE"))
    return OfflineWorldModel()
