"""Agents, chosen by a spec string.

- ``reference``: replays the task's plan; ``null``: answers without a tool;
- ``litellm:<model>``: hosted APIs and OpenAI-compatible servers (``--api-base``);
- ``vllm:<model path>``: vLLM offline on a GPU;
- ``hf:<model path | smollm2 | tiny-qwen3>``: transformers, on the CPU or a GPU.

``ScriptedAgent`` (tests, benchmarks) is built in code. Heavy libraries load only when an agent
that needs them is made.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from harness.agents.base import Agent, AgentTurn, Message, ToolCallRequest, ToolSchema, TurnContext
from harness.agents.reference import NullAgent, ReferenceAgent, reference_answer
from harness.agents.scripted import ScriptedAgent
from harness.errors import HarnessInputError

__all__ = [
    "AGENT_KINDS",
    "Agent",
    "AgentConfig",
    "AgentTurn",
    "Message",
    "NullAgent",
    "ReferenceAgent",
    "ScriptedAgent",
    "ToolCallRequest",
    "ToolSchema",
    "TurnContext",
    "make_agent",
    "parse_agent_spec",
    "reference_answer",
]

AGENT_KINDS = ("reference", "null", "litellm", "vllm", "hf")
_FORMS = "reference, null, litellm:<model>, vllm:<model path> or hf:<model path|smollm2|tiny-qwen3>"


@dataclass(frozen=True)
class AgentConfig:
    """An agent spec and the options of model-backed agents (ignored by reference and null)."""

    spec: str
    api_base: str | None = None
    api_key_env: str | None = None  # the name of the environment variable that holds the key
    temperature: float = 0.7
    max_tokens: int = 2048
    request_timeout: float = 120.0
    retries: int = 4
    retry_wait: float = 1.0  # backoff multiplier in seconds: waits 1, 2, 4, ... (at most 60)
    extra_body: dict[str, Any] = field(default_factory=dict)  # litellm: sent as is (e.g. chat_template_kwargs)
    device: str | None = None  # hf: cpu, cuda, cuda:1 (default: cuda if available)

    def __post_init__(self) -> None:
        parse_agent_spec(self.spec)
        if self.max_tokens < 1:
            raise HarnessInputError(f"max tokens must be at least 1, not {self.max_tokens}")
        if self.temperature < 0:
            raise HarnessInputError(f"temperature must not be negative, not {self.temperature}")
        if self.retries < 0:
            raise HarnessInputError(f"retries must not be negative, not {self.retries}")

    def to_dict(self) -> dict[str, Any]:
        """For the manifest: never the key itself, only where it comes from."""
        return {
            "spec": self.spec,
            "api_base": self.api_base,
            "api_key_env": self.api_key_env,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "request_timeout": self.request_timeout,
            "retries": self.retries,
            "extra_body": self.extra_body,
        }


def parse_agent_spec(spec: str) -> tuple[str, str]:
    """``(kind, target)``; a clear ``HarnessInputError`` for anything else."""
    kind, sep, target = spec.partition(":")
    if kind in ("reference", "null"):
        if sep:
            raise HarnessInputError(f"agent {kind!r} takes no ':<target>' (got {spec!r})")
        return kind, ""
    if kind in ("litellm", "vllm", "hf"):
        if not target.strip():
            raise HarnessInputError(f"agent spec {spec!r} needs a model after '{kind}:' ({_FORMS})")
        return kind, target.strip()
    raise HarnessInputError(f"unknown agent {spec!r}; use {_FORMS}")


def make_agent(config: AgentConfig) -> Agent:
    kind, target = parse_agent_spec(config.spec)
    if kind == "reference":
        return ReferenceAgent()
    if kind == "null":
        return NullAgent()
    if kind == "litellm":
        from harness.agents.litellm_agent import LiteLLMAgent

        api_key = None
        if config.api_key_env:
            api_key = os.environ.get(config.api_key_env)
            if not api_key:
                raise HarnessInputError(f"environment variable {config.api_key_env} (from --api-key-env) is not set")
        return LiteLLMAgent(
            target,
            api_base=config.api_base,
            api_key=api_key,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            timeout=config.request_timeout,
            retries=config.retries,
            retry_wait=config.retry_wait,
            extra_body=config.extra_body or None,
        )
    if kind == "vllm":
        from harness.agents.vllm_agent import VLLMAgent

        return VLLMAgent(target, max_tokens=config.max_tokens, temperature=config.temperature)
    from harness.agents.hf_agent import HFAgent

    return HFAgent(target, max_tokens=config.max_tokens, temperature=config.temperature, device=config.device)
