"""A world model backed by any litellm model (hosted, or an OpenAI-compatible local server).

litellm is imported on first use, with its cost map kept local (no network at import); every
request carries a timeout. The prompt gives the tool's spec, the arguments, the relevant state and
the model's own earlier answers in this episode; the answer must be one JSON value.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from generator.worldmodel.base import SimRequest, WorldModelError

SYSTEM = (
    "You simulate one tool of a software service for an agent-training environment. Answer with the JSON the "
    "tool returns for this call and nothing else: no prose, no code fences. The answer must match the output "
    "schema exactly. Be consistent with the state and with your earlier answers in this episode (ids, "
    "statuses and values you returned before stay the same). Invent plausible, specific values where needed."
)


def import_litellm() -> Any:
    """litellm, configured to stay offline at import (no cost-map download) and quiet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class LiteLLMWorldModel:
    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        temperature: float = 0.0,
        max_tokens: int = 1500,
    ) -> None:
        self.model = model
        self.name = f"litellm:{model}"
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens

    def answer(self, request: SimRequest, feedback: str | None = None) -> Any:
        litellm = import_litellm()
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt(request)}]
        if feedback:
            messages.append({"role": "user", "content": feedback})
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "timeout": self.timeout,
                                  "temperature": self.temperature, "max_tokens": self.max_tokens, "num_retries": 0}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        try:
            response = litellm.completion(**kwargs)
            text = response.choices[0].message.content or ""
        except Exception as exc:  # noqa: BLE001 - any backend failure is one kind of error for the caller
            raise WorldModelError(f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        return parse_json(text)


def prompt(request: SimRequest) -> str:
    parts = [
        f"Service: {request.service}. Tool: {request.tool} ({request.effect}).",
        f"Description: {request.description}",
        f"Input schema: {json.dumps(request.input_schema, ensure_ascii=False)[:4000]}",
        f"Output schema: {json.dumps(request.output_schema, ensure_ascii=False)[:4000]}",
        f"Current time: {request.now}.",
    ]
    if request.state:
        parts.append(f"Relevant state: {json.dumps(request.state, ensure_ascii=False, default=str)[:4000]}")
    if request.history:
        parts.append(f"Your earlier answers in this episode: {json.dumps(request.history[-10:], ensure_ascii=False, default=str)[:6000]}")
    parts.append(f"Arguments of this call: {json.dumps(request.arguments, ensure_ascii=False, default=str)}")
    parts.append("Answer with the JSON result only.")
    return "\n".join(parts)


def parse_json(text: str) -> Any:
    """The first JSON value in ``text`` (tolerating code fences and prose around it)."""
    stripped = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", stripped, re.S)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    start = min((i for i in (stripped.find("{"), stripped.find("[")) if i >= 0), default=-1)
    if start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(stripped[start:])
            return value
        except json.JSONDecodeError:
            pass
    raise WorldModelError(f"the answer is not JSON: {text[:120]!r}")
