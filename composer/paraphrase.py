"""Optional LLM paraphrase of an instruction (litellm, imported lazily), kept only if nothing is lost.

A paraphrase is rejected when it drops a stated anchor or literal (a name, a quoted subject, the
date), or when it states a value the agent must look up; the template text is kept then.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

Complete = Callable[[str, str], str]  # (system prompt, user text) -> model reply

SYSTEM_PROMPT = (
    "Rewrite the user's task instruction so it reads naturally, as a colleague would write it. Keep every "
    "name, email address, phone number, quoted text, amount, date and rule exactly as written. Do not add "
    "facts, ids or values. Reply with the rewritten instruction only."
)


def litellm_complete(model: str, *, timeout: float = 60.0) -> Complete:
    """A ``Complete`` backed by any litellm model (``openai/...``, ``hosted_vllm/...``)."""

    def complete(system: str, text: str) -> str:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm  # noqa: PLC0415 - heavy optional dependency, only when a paraphrase is asked for

        litellm.suppress_debug_info = True
        response = litellm.completion(
            model=model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": text}],
            temperature=0.0,
            timeout=timeout,
        )
        return str(response.choices[0].message.content or "")

    return complete


def accept(paraphrase: str, keep: Sequence[str], forbid: Sequence[str]) -> bool:
    text = paraphrase.lower()
    if not paraphrase.strip():
        return False
    if any(k and k.lower() not in text for k in keep):
        return False
    return not any(f and f.lower() in text for f in forbid)


def paraphrase(instruction: str, keep: Sequence[str], forbid: Sequence[str], complete: Complete) -> str | None:
    """The paraphrased instruction, or None if the model failed or lost an anchor."""
    try:
        candidate = complete(SYSTEM_PROMPT, instruction).strip()
    except Exception:  # noqa: BLE001 - any model failure means: keep the template text
        return None
    return candidate if accept(candidate, keep, forbid) else None
