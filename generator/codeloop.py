"""The LLM coding loop: a model writes a tool the compiler cannot express; the gate judges; failures go back.

For each target tool: ask the model (any litellm model) for a Python function; gate it in a
subprocess (the tool alone, with the service's entities and seeded state); on failure send the
failed checks back and ask again, at most ``rounds`` times. Tools that pass become ``custom``
behaviours whose code lives in the catalog's ``custom/<service>.py``; the others stay simulated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from generator.gate import GateJob, TimeLimit, run_gate
from generator.spec import ServiceSpec, ToolDef
from generator.worldmodel import DEFAULT_RESULT
from generator.worldmodel.llm import import_litellm

MODULE_HEADER = '''"""Custom tools of {service}: written by the coding loop, passed by the gate."""

from mcp_services.kernel.errors import ToolError  # noqa: F401 - available to the functions below
from sqlalchemy import select  # noqa: F401
'''

SYSTEM = """You implement one tool of a stateful service for an agent-training environment, as a Python function.

Write exactly one function, named after the tool:

    def TOOL_NAME(ctx, args, api):
        ...
        return data

- ctx.db is the SQLAlchemy session of this call's transaction; ctx.now_iso is the frozen clock (ISO 8601);
  ctx.world has the world's people and organisations. Never use datetime.now, random, uuid or I/O.
- args is a dict of validated arguments (the input schema below).
- api gives the service's tables: api.find(ctx, entity, {column: value}) -> row dict or None;
  api.require(ctx, entity, {column: value}) -> row or raises not_found; api.insert(ctx, entity, values) -> row;
  api.update(ctx, entity, row_id, values) -> row; api.delete(ctx, entity, row_id); api.table(entity) -> the
  SQLAlchemy Table for select(); api.row_out(entity, row) -> the row as tools return it.
- Fail with ToolError.invalid_argument(msg), ToolError.not_found(entity, key), ToolError.invalid_state(msg)
  (already imported); a failed call must change nothing (raising does that).
- Return JSON-ready data matching the output schema. Same arguments and state -> same result.
Answer with one ```python code block and nothing else."""

Ask = Callable[[list[dict[str, str]]], str]


@dataclass
class CodeResult:
    spec: ServiceSpec | None  # the service with the tools that passed switched to custom behaviours
    code: str | None  # the custom-tools module
    implemented: list[str] = field(default_factory=list)
    rounds: dict[str, int] = field(default_factory=dict)  # tool -> rounds used
    failures: dict[str, str] = field(default_factory=dict)  # tool -> last gate failure


class CodingLoop:
    """``CodingLoop("openai/gpt-4.1-mini")``, or with ``api_base`` for a local OpenAI-compatible server."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        rounds: int = 3,
        timeout: float = 120.0,
        limit: TimeLimit = TimeLimit(base=20.0, per_tool=2.0),
        ask: Ask | None = None,
    ) -> None:
        if rounds < 1:
            raise ValueError("rounds must be at least 1")
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.rounds = rounds
        self.timeout = timeout
        self.limit = limit
        self._ask = ask or self._litellm

    def implement(self, spec: ServiceSpec, tools: list[str], progress: Callable[[str], None] | None = None) -> CodeResult:
        say = progress or (lambda message: None)
        result = CodeResult(spec=None, code=None)
        accepted: dict[str, str] = {}
        for name in tools:
            tool = spec.tool(name)
            feedback: str | None = None
            for round_number in range(1, self.rounds + 1):
                result.rounds[name] = round_number
                try:
                    source = extract_code(self._ask(messages(spec, tool, feedback)))
                except CodeLoopError as exc:
                    feedback = f"Your answer could not be used: {exc}"
                    continue
                if f"def {name}(" not in source:
                    feedback = f"Define a function named {name}(ctx, args, api)."
                    continue
                failure = self._gate(spec, tool, source)
                if failure is None:
                    accepted[name] = source
                    say(f"{spec.name}.{name}: implemented by the coding loop in {round_number} round(s)")
                    break
                feedback = f"The gate rejected your implementation: {failure}. Fix it and answer with the whole function."
                result.failures[name] = failure
            else:
                say(f"{spec.name}.{name}: still failing after {self.rounds} rounds")
        if not accepted:
            return result
        result.implemented = sorted(accepted)
        result.code = module_source(spec.name, accepted)
        result.spec = with_custom(spec, set(accepted))
        return result

    def _gate(self, spec: ServiceSpec, tool: ToolDef, source: str) -> str | None:
        """None when the tool, implemented by ``source``, passes the gate; else why not."""
        alone = with_custom(spec.model_copy(update={"tools": [tool]}), {tool.name})
        outcome = run_gate([GateJob(alone, module_source(spec.name, {tool.name: source}))], workers=1,
                           demote=False, limit=self.limit)[0]
        verdict = next((t for t in outcome.verdict.tools if t.name == tool.name), None)
        if verdict is not None and verdict.status == "implemented":
            return None
        if verdict is None:
            return outcome.verdict.reason or "no verdict"
        failed = verdict.failed
        return "; ".join(f"{c.name}: {c.detail}" for c in failed[:3]) or verdict.reason or "failed"

    def _litellm(self, chat: list[dict[str, str]]) -> str:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {"model": self.model, "messages": chat, "timeout": self.timeout, "temperature": 0.0,
                                  "num_retries": 0}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        try:
            response = litellm.completion(**kwargs)
        except Exception as exc:  # noqa: BLE001 - a model failure is one round lost, reported as feedback
            raise CodeLoopError(f"the model call failed: {type(exc).__name__}: {str(exc)[:200]}") from exc
        return response.choices[0].message.content or ""


class CodeLoopError(RuntimeError):
    pass


def messages(spec: ServiceSpec, tool: ToolDef, feedback: str | None) -> list[dict[str, str]]:
    entities = [
        {"entity": e.name, "columns": ["id", *[f.name for f in e.fields], *(["created_at", "updated_at"] if e.timestamps else [])],
         **({"states": e.state.values} if e.state else {})}
        for e in spec.entities
    ]
    user = "\n".join([
        f"Service: {spec.name} — {spec.description}",
        f"Entities (tables): {json.dumps(entities)[:6000]}",
        f"Tool: {tool.name} ({tool.effect}). {tool.description}",
        f"Input schema: {json.dumps(tool.parameters)[:4000]}",
        f"Output schema: {json.dumps(tool.result or DEFAULT_RESULT)[:4000]}",
        f"Write def {tool.name}(ctx, args, api).",
    ])
    chat = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    if feedback:
        chat.append({"role": "user", "content": feedback})
    return chat


def extract_code(text: str) -> str:
    fenced = re.findall(r"```(?:python)?\s*\n(.*?)```", text, re.S)
    source = fenced[0] if fenced else text
    source = source.strip()
    if "def " not in source:
        raise CodeLoopError("no function definition in the answer")
    try:
        compile(source, "<answer>", "exec")
    except SyntaxError as exc:
        raise CodeLoopError(f"the code does not parse: {exc.msg} (line {exc.lineno})") from None
    return source + "\n"


def module_source(service: str, functions: dict[str, str]) -> str:
    body = "\n\n".join(functions[name].rstrip() for name in sorted(functions))
    return MODULE_HEADER.format(service=service) + "\n\n" + body + "\n"


def with_custom(spec: ServiceSpec, names: set[str]) -> ServiceSpec:
    tools = []
    for tool in spec.tools:
        if tool.name in names:
            tools.append(tool.model_copy(update={
                "behaviour": tool.behaviour.model_copy(update={"kind": "custom", "function": tool.name, "transition": None,
                                                               "via": None, "current": False}),
                "bindings": {},
                "result": tool.result or DEFAULT_RESULT,
            }))
        else:
            tools.append(tool)
    return spec.model_copy(update={"tools": tools})
