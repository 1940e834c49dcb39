"""CompoWorld tasks inside the RL frameworks people train with.

- ``harness.adapters.verifiers``: ``load_environment(tasks=..., mode=..., reward="cfrr")`` returns a
  ``verifiers`` environment (extra ``verifiers``); ``vf-eval harness.adapters.verifiers`` runs it.
- ``harness.adapters.openenv``: ``create_app(tasks=...)`` is an OpenEnv server (many concurrent
  sessions in one process) and ``CompoWorldClient`` its typed client (extra ``openenv``).

Both run every rollout in its own private episode through the harness's tool seam and grade it
with the task's own checks (``harness.adapters.episodes``), so a rollout driven through an adapter
gets the grade ``harness collect`` gives the same actions. The frameworks are imported only by the
module that adapts to them: ``import harness.adapters`` loads neither. See docs/rl-frameworks.md.
"""

from __future__ import annotations
