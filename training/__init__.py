"""CompoWorld training: SFT on verified trajectories and the rubric rewards for RL.

- ``training.rewards``: CFRR and its baselines (pure Python);
- ``training.sft_data``: ``trajectories.jsonl`` → conversational ``datasets.Dataset``;
- ``training.models``: ``--model`` names → model and tokenizer (tiny-qwen3, smollm2, local folders);
- ``training.sft``: TRL ``SFTTrainer`` with assistant-only loss; ``training.cli``: the ``training`` command.

Importing this package imports no torch: the heavy libraries load inside the functions that use them.
"""
