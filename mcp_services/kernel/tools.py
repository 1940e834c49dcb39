"""Tool declarations: a typed Python function becomes a tool with JSON schemas and an effect.

A tool function takes a ``ToolContext`` first, then its parameters with type annotations; it
returns a pydantic model. The docstring is the description a model reads; an ``Args:`` section
(Google style) gives each parameter's description in the input schema.
"""

from __future__ import annotations

import inspect
import re
from abc import ABC, abstractmethod
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from mcp_services.kernel.bounds import abridge
from mcp_services.kernel.intents import Effect, intent_problems
from mcp_services.kernel.present import ResultCodec, result_codec
from mcp_services.kernel.results import envelope_schema

#: MCP tool names (and OpenAI function names) allow these characters; we also keep them short.
TOOL_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,47}$")

#: Problems listed in one validation error message (the rest are counted).
MAX_PROBLEMS = 5

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$", re.MULTILINE)
_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into the description and the per-argument descriptions of ``Args:``."""
    doc = inspect.cleandoc(doc or "")
    match = _ARGS_HEADER.search(doc)
    if not match:
        return doc.strip(), {}
    description = doc[: match.start()].strip()
    args: dict[str, str] = {}
    current: str | None = None
    for line in doc[match.end() :].splitlines():
        if not line.strip():
            continue
        arg = _ARG_LINE.match(line)
        if arg and (line.startswith("    ") and not line.startswith("        ")):
            current = arg.group(1)
            args[current] = arg.group(2).strip()
        elif current is not None and line.startswith("        "):
            args[current] = f"{args[current]} {line.strip()}".strip()
        elif not line.startswith(" "):
            break  # another section (Returns:, Raises:) ends Args
    return description, args


class ToolSpec(ABC):
    """One tool of a service: name, effect, description, schemas, and how to run it.

    ``FunctionTool`` (a typed Python function) is how hand-written services declare tools; the
    generator adds tools compiled from declarative specs. The kernel only uses this interface.
    """

    service: str
    name: str
    effect: Effect
    description: str
    tags: tuple[str, ...] = ()
    #: What the tool is for (see ``mcp_services.kernel.intents``) and how a person asks for it.
    intent: str | None = None
    phrases: tuple[str, ...] = ()
    #: The kind of record the tool returns (an entity of its service), where it returns records.
    entity: str | None = None
    #: True for a tool a world model answers instead of the service's own logic (generated services): a
    #: simulated read answers from the episode's rows when ``answers_from_state``; a simulated write may
    #: be refused (``not_implemented``). Composed tasks read only through such reads and never write.
    simulated: bool = False
    answers_from_state: bool = True

    @property
    @abstractmethod
    def input_schema(self) -> dict[str, Any]: ...

    @property
    @abstractmethod
    def data_schema(self) -> dict[str, Any]:
        """The JSON schema of ``data`` in a successful result."""

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        return envelope_schema(self.data_schema)

    @property
    def qualified_name(self) -> str:
        return f"{self.service}__{self.name}"

    @abstractmethod
    def validate_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments; raises pydantic ``ValidationError`` or ``ToolError``."""

    @abstractmethod
    def invoke(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        """Run the tool inside the call's transaction; returns JSON-ready data."""


@dataclass(eq=False)
class FunctionTool(ToolSpec):
    """A tool declared as a typed Python function (``@service.tool``)."""

    service: str
    name: str
    effect: Effect
    description: str
    fn: Callable[..., Any]
    arg_model: type[BaseModel]
    result_type: Any
    tags: tuple[str, ...] = field(default=())
    intent: str | None = None
    phrases: tuple[str, ...] = field(default=())

    @cached_property
    def result(self) -> ResultCodec:
        return result_codec(self.result_type)

    @property
    def entity(self) -> str | None:  # type: ignore[override]
        """The kind of record the tool returns (an entity of its service), if it returns records."""
        runtime = self.result.entity
        return runtime.name if runtime is not None else None

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        schema = self.arg_model.model_json_schema()
        schema.pop("title", None)
        return schema

    @cached_property
    def data_schema(self) -> dict[str, Any]:
        return self.result.schema()

    def validate_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        model = self.arg_model.model_validate(arguments)
        return {name: getattr(model, name) for name in self._field_names}

    @cached_property
    def _field_names(self) -> tuple[str, ...]:
        return tuple(self.arg_model.model_fields)

    def invoke(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        return self.result.present(ctx.conn, self.fn(ctx, **arguments))


def build_tool(
    service: str,
    fn: Callable[..., Any],
    *,
    effect: Effect,
    name: str | None = None,
    tags: tuple[str, ...] = (),
    intent: str | None = None,
    phrases: tuple[str, ...] = (),
) -> FunctionTool:
    """Read a tool function's signature and docstring into a ``FunctionTool``."""
    tool_name = name or fn.__name__
    if not TOOL_NAME_PATTERN.match(tool_name):
        raise ValueError(f"tool name {tool_name!r} must match {TOOL_NAME_PATTERN.pattern}")
    if effect not in ("read", "write"):
        raise ValueError(f"tool {tool_name!r}: effect must be 'read' or 'write', not {effect!r}")
    description, arg_docs = parse_docstring(fn.__doc__ or "")
    if not description:
        raise ValueError(f"tool {service}.{tool_name} needs a docstring: it is the description a model reads")
    hints = typing.get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].name != "ctx":
        raise ValueError(f"tool {service}.{tool_name}: the first parameter must be 'ctx: ToolContext'")
    fields: dict[str, Any] = {}
    for param in params[1:]:
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise ValueError(f"tool {service}.{tool_name}: *args/**kwargs are not allowed")
        if param.name not in hints:
            raise ValueError(f"tool {service}.{tool_name}: parameter {param.name!r} needs a type annotation")
        default = ... if param.default is inspect.Parameter.empty else param.default
        info: FieldInfo = Field(default, description=arg_docs.get(param.name))
        fields[param.name] = (hints[param.name], info)
    if "return" not in hints:
        raise ValueError(f"tool {service}.{tool_name} needs a return type annotation")
    # Strict: JSON input keeps its types (no bool for a number, no "yes" for a bool, no 5 for a string).
    arg_model = create_model(
        f"{_camel(service)}{_camel(tool_name)}Arguments",
        __config__=ConfigDict(extra="forbid", strict=True),
        **fields,
    )
    problems = intent_problems(intent, effect, phrases, fields)
    if problems:
        raise ValueError(f"tool {service}.{tool_name}: " + "; ".join(problems))
    return FunctionTool(
        service=service,
        name=tool_name,
        effect=effect,
        description=description,
        fn=fn,
        arg_model=arg_model,
        result_type=hints["return"],
        tags=tags,
        intent=intent,
        phrases=tuple(phrases),
    )


def describe_validation_error(tool: str, error: ValidationError) -> str:
    """A short, model-readable account of what is wrong with a call's arguments (bounded in length)."""
    problems = []
    errors = error.errors(include_url=False, include_context=False)
    for err in errors[:MAX_PROBLEMS]:
        where = ".".join(str(p)[:60] for p in err["loc"]) or "(arguments)"
        kind = err["type"]
        if kind == "missing":
            problems.append(f"'{where}' is required but missing")
        elif kind == "extra_forbidden":
            problems.append(f"'{where}' is not a parameter of this tool")
        else:
            message = err["msg"].removeprefix("Value error, ")
            problems.append(f"'{where}': {message} (got {abridge(err.get('input'))})")
    if len(errors) > MAX_PROBLEMS:
        problems.append(f"and {len(errors) - MAX_PROBLEMS} more problem(s)")
    return f"Invalid arguments for {tool}: " + "; ".join(problems) + ". Check the tool's input schema and retry."


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[_\W]+", name) if part)
