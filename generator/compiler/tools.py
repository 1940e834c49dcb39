"""Compiled tools: the kernel's ``ToolSpec`` implemented from a ``ToolDef``.

- ``CompiledTool``: a behaviour (create/get/list/...) run by ``behaviours``;
- ``CustomTool``: a function from the service's custom module (``def tool(ctx, args, api)``);
- ``SimulatedTool``: answered by the world model, validated against its data schema; writes are
  recorded in the ``simulated_calls`` table, which is also the model's memory of the episode.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cached_property
from typing import Any

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.entity import EntityRuntime
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.records import Query
from mcp_services.kernel.tools import ToolSpec

from generator.compiler.behaviours import EXECUTORS
from generator.compiler.runtime import ServiceRuntime
from generator.compiler.validation import make_validator, message, problems
from generator.spec import ToolDef
from generator.worldmodel import DEFAULT_RESULT, AnswerCache, SimRequest, WorldModel, get_world_model, simulate

CustomFunction = Callable[[ToolContext, dict[str, Any], ServiceRuntime], Any]
MAX_HISTORY = 20
MAX_STATE_ROWS = 5


class _DefTool(ToolSpec):
    """Shared by every tool built from a ``ToolDef``: surface, schemas, argument validation."""

    def __init__(self, runtime: ServiceRuntime, definition: ToolDef) -> None:
        self.runtime = runtime
        self.definition = definition
        self.service = runtime.spec.name
        self.name = definition.name
        self.effect = definition.effect
        self.description = definition.description
        self.tags = ("generated", definition.behaviour.kind)
        self.intent = definition.intent
        self.phrases = tuple(definition.phrases)

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.definition.parameters

    @cached_property
    def _validator(self) -> Any:
        return make_validator(self.definition.parameters)

    def validate_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        found = problems(self._validator, arguments)
        if found:
            raise ToolError.invalid_argument(message(self.name, found))
        return dict(arguments)


class CompiledTool(_DefTool):
    @cached_property
    def data_schema(self) -> dict[str, Any]:
        if self.definition.result is not None:
            return self.definition.result
        kind = self.definition.behaviour.kind
        entity = self.definition.behaviour.entity or ""
        if kind in ("list", "search"):
            return self.runtime.page_schema(entity)
        if kind == "delete":
            return self.runtime.deleted_schema(entity)
        if kind in ("link", "unlink"):  # the row members were added to or removed from
            owner = self.runtime.entity(entity).owner_field
            return self.runtime.row_schema(owner.ref if owner is not None and owner.ref else entity)
        return self.runtime.row_schema(entity)

    def invoke(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        return EXECUTORS[self.definition.behaviour.kind](self.runtime, self.definition, ctx, arguments)


class CustomTool(_DefTool):
    def __init__(self, runtime: ServiceRuntime, definition: ToolDef, function: CustomFunction) -> None:
        super().__init__(runtime, definition)
        self.function = function

    @cached_property
    def data_schema(self) -> dict[str, Any]:
        return self.definition.result or {"type": "object"}

    def invoke(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        return self.function(ctx, arguments, self.runtime)


class SimulatedTool(_DefTool):
    def __init__(self, runtime: ServiceRuntime, definition: ToolDef, cache: AnswerCache,
                 world_model: WorldModel | None = None) -> None:
        super().__init__(runtime, definition)
        self.cache = cache
        self.world_model = world_model
        self.tags = ("generated", "simulated")

    @cached_property
    def data_schema(self) -> dict[str, Any]:
        return self.definition.result or DEFAULT_RESULT

    def invoke(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        history = self._history(ctx)
        self._check_references(ctx, arguments, history)  # an unknown id is not found, whichever backend answers
        request = SimRequest(
            service=self.service,
            tool=self.name,
            description=self.description,
            effect=self.effect,
            input_schema=self.input_schema,
            output_schema=self.data_schema,
            arguments=arguments,
            state=self._state(ctx, arguments),
            history=history,
            world_seed=ctx.world.seed,
            now=ctx.now_iso,
        )
        answer = simulate(self.world_model or get_world_model(), request, self.cache)
        if self.effect == "write":
            ctx.insert(self._calls().record(
                {"id": ctx.new_id("sim"), "tool": self.name, "arguments": arguments, "answer": answer, "created_at": ctx.now_iso}
            ))
        return answer

    def _calls(self) -> EntityRuntime:
        assert self.runtime.simulated is not None, "a service with simulated tools has a simulated_calls table"
        return self.runtime.simulated

    def _history(self, ctx: ToolContext) -> list[dict[str, Any]]:
        calls = Query[Any](ctx.conn, self._calls()).in_insertion_order(newest_first=True).all(limit=MAX_HISTORY)
        return [{"tool": c.tool, "arguments": c.arguments, "answer": c.answer} for c in reversed(calls)]

    def references(self, arguments: dict[str, Any]) -> list[tuple[str, str, Any]]:
        """(parameter, entity, value) for each argument that names a row of this service by its id."""
        found = []
        own = self.definition.behaviour.entity
        for param, value in arguments.items():
            if not isinstance(value, (str, int)) or isinstance(value, bool) or value == "":
                continue
            entity = reference_entity(param, own, self.runtime.entities)
            if entity is not None:
                found.append((param, entity, value))
        return found

    def _check_references(self, ctx: ToolContext, arguments: dict[str, Any], history: list[dict[str, Any]]) -> None:
        known = _values_in(history)
        for param, entity, value in self.references(arguments):
            if json.dumps(value, default=str) in known or self.runtime.find(ctx, entity, {"id": value}) is not None:
                continue
            if self.runtime.comparable(entity, "id", value) or isinstance(value, str):
                raise ToolError(
                    "not_found",
                    f"No {self.runtime.noun(entity)} with {param} {value!r} exists. {self.runtime.list_hint(entity)}".strip(),
                )

    def _state(self, ctx: ToolContext, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows the arguments name by id (else, for a tool with an entity, its first few rows)."""
        rows: list[dict[str, Any]] = []
        for _, entity, value in self.references(arguments):
            row = self.runtime.find(ctx, entity, {"id": value})
            if row is not None:
                rows.append(row)
        if rows:
            return rows[:MAX_STATE_ROWS]
        entity = self.definition.behaviour.entity
        if not entity or entity not in self.runtime.records:
            return []
        records = self.runtime.records[entity]
        return [records.dump(r) for r in self.runtime.query(ctx, entity).all(limit=MAX_STATE_ROWS)]


def reference_entity(param: str, own: str | None, entities: dict[str, Any]) -> str | None:
    """The entity whose id a parameter carries: ``charge_id``/``chargeId``/``charge`` -> ``charge``; ``id`` -> own."""
    snake_name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", param).lower()
    if snake_name == "id":
        return own if own in entities else None
    base = re.sub(r"_?(id|uuid|sid)$", "", snake_name)
    if base == snake_name and snake_name not in entities:
        return None  # not named like an id
    for candidate in (base, base.rsplit("_", 1)[-1]):
        if candidate in entities:
            return candidate
        if candidate.endswith("s") and candidate[:-1] in entities:
            return candidate[:-1]
    return None


def _values_in(history: list[dict[str, Any]]) -> set[str]:
    """Every scalar an earlier simulated call passed or returned (ids it made up count as existing)."""
    out: set[str] = set()

    def walk(node: Any, depth: int) -> None:
        if depth > 4:
            return
        if isinstance(node, dict):
            for value in node.values():
                walk(value, depth + 1)
        elif isinstance(node, list):
            for value in node[:50]:
                walk(value, depth + 1)
        elif isinstance(node, (str, int)) and not isinstance(node, bool):
            out.add(json.dumps(node, default=str))

    for entry in history:
        walk(entry.get("arguments"), 0)
        walk(entry.get("answer"), 0)
    return out
