"""Agents, chosen by a spec string: ``name`` or ``name:<target>``, one row of ``AGENTS`` per kind.

- ``reference``: replays the task's plan; ``null``: answers without a tool;
- ``litellm:<model>``: hosted APIs and OpenAI-compatible servers (``--api-base``);
- ``vllm:<model path>``: vLLM offline on a GPU;
- ``hf:<model path | smollm2 | tiny-qwen3>``: transformers, on the CPU or a GPU.

Adding a kind is one row: its name, what its target reads like, and the class whose
``from_config(target, config, tasks)`` builds it. ``ScriptedAgent`` (tests, benchmarks) is built
in code. Heavy libraries load only when an agent that needs them is made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.agents.base import Agent, AgentTurn, Message, TaskBook, ToolCallRequest, ToolSchema, TurnContext
from harness.agents.hf_agent import HFAgent
from harness.agents.litellm_agent import LiteLLMAgent
from harness.agents.reference import NullAgent, ReferenceAgent, reference_answer
from harness.agents.scripted import ScriptedAgent
from harness.agents.vllm_agent import VLLMAgent
from harness.errors import HarnessInputError

__all__ = [
    "AGENTS",
    "Agent",
    "AgentConfig",
    "AgentKind",
    "AgentTurn",
    "Message",
    "NullAgent",
    "ReferenceAgent",
    "ScriptedAgent",
    "TaskBook",
    "ToolCallRequest",
    "ToolSchema",
    "TurnContext",
    "check_agent",
    "make_agent",
    "parse_agent_spec",
    "reference_answer",
]

AgentBuilder = Callable[[str, "AgentConfig", TaskBook], Agent]
"""Builds an agent from its spec's target, the run's agent options and the tasks the host runs."""
AgentCheck = Callable[[str, "AgentConfig"], None]
"""Refuses, cheaply and before a run writes anything, a target or options the agent could never use."""


@dataclass(frozen=True, slots=True)
class AgentKind:
    """One kind of agent. ``target``: how the part after ``name:`` reads (None: the kind takes none);
    ``check``: what can be refused before a run starts (a model folder that does not exist, a missing
    library or key) without loading anything heavy."""

    name: str
    build: AgentBuilder
    target: str | None = None
    check: AgentCheck | None = None

    @property
    def form(self) -> str:
        return self.name if self.target is None else f"{self.name}:{self.target}"


AGENTS: dict[str, AgentKind] = {
    kind.name: kind
    for kind in (
        AgentKind("reference", ReferenceAgent.from_config),
        AgentKind("null", NullAgent.from_config),
        AgentKind("litellm", LiteLLMAgent.from_config, "<model>", LiteLLMAgent.check),
        AgentKind("vllm", VLLMAgent.from_config, "<model path>", VLLMAgent.check),
        AgentKind("hf", HFAgent.from_config, "<model path|smollm2|tiny-qwen3>", HFAgent.check),
    )
}


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


def _forms() -> str:
    forms = [kind.form for kind in AGENTS.values()]
    return ", ".join(forms[:-1]) + f" or {forms[-1]}" if len(forms) > 1 else "".join(forms)


def parse_agent_spec(spec: str) -> tuple[str, str]:
    """``(kind, target)``; a clear ``HarnessInputError`` for anything else."""
    name, sep, target = spec.partition(":")
    kind = AGENTS.get(name)
    if kind is None:
        raise HarnessInputError(f"unknown agent {spec!r}; use {_forms()}")
    if kind.target is None:
        if sep:
            raise HarnessInputError(f"agent {name!r} takes no ':<target>' (got {spec!r})")
        return name, ""
    if not target.strip():
        raise HarnessInputError(f"agent spec {spec!r} needs a model after '{name}:' ({_forms()})")
    return name, target.strip()


def check_agent(config: AgentConfig) -> None:
    """``HarnessInputError`` now for an agent that could never run (``harness collect`` calls it before it
    writes anything to ``--out``); cheap: no model is loaded, no request sent."""
    name, target = parse_agent_spec(config.spec)
    check = AGENTS[name].check
    if check is not None:
        check(target, config)


def make_agent(config: AgentConfig, tasks: TaskBook) -> Agent:
    """The agent ``config.spec`` names; ``tasks`` (by id) are the tasks it will run (only the
    reference agent reads them: every other agent sees the messages and tools alone)."""
    name, target = parse_agent_spec(config.spec)
    return AGENTS[name].build(target, config, tasks)
