"""CompoWorld training: SFT on verified trajectories, and GRPO with the Completion-Focused Rubric Reward.

- ``training.rewards``: CFRR and its baselines (pure Python);
- ``training.sft_data``: ``trajectories.jsonl`` → conversational ``datasets.Dataset``;
- ``harness.agents.models`` (shared with the harness): ``--model`` names → model and tokenizer (tiny-qwen3, smollm2, local folders);
- ``training.sft``: TRL ``SFTTrainer`` with assistant-only loss;
- ``training.rl``: TRL ``GRPOTrainer`` whose rollouts are private harness episodes (``rl_rollout``,
  ``rl_agent``, ``rl_tokens``, ``rl_generation``), rewarded by ``rl_reward`` with groups by task id;
- ``training.experiments``: the offline learning experiment and the GPU check;
- ``training.cli``: the ``training`` command (``sft``, ``rl``).

Importing this package imports no torch: the heavy libraries load inside the functions that use them.
See docs/training.md.
"""
