"""Compiled tools: the kernel's ``ToolSpec`` implemented from a ``ToolDef``.

- ``CompiledTool``: a behaviour (create/get/list/...) run by ``behaviours``;
- ``CustomTool``: a function from the service's custom module (``def tool(ctx, args, api)``);
- ``SimulatedTool`` (``simulated.py``): answered by the world model, from the episode's state.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.tools import ToolSpec

from generator.compiler.behaviours import EXECUTORS
from generator.compiler.runtime import ServiceRuntime
from generator.compiler.validation import as_sent, make_validator, message, path_params, problems
from generator.spec import ToolDef

CustomFunction = Callable[[ToolContext, dict[str, Any], ServiceRuntime], Any]


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

    @cached_property
    def _path_params(self) -> frozenset[str]:
        http = self.definition.http
        return path_params(http.path, self.definition.parameters.get("properties", {})) if http else frozenset()

    def validate_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        arguments = as_sent(arguments, self._path_params, self.definition.parameters.get("properties", {}))
        found = problems(self._validator, arguments)
        if found:
            raise ToolError.invalid_argument(message(self.name, found))
        return arguments


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
