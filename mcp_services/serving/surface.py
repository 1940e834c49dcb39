"""The tool surface of an episode: what an agent sees and calls, in ``direct`` or ``discover`` mode.

It is the single definition of the agent's channel. The MCP server (``mcp_services.serving.server``)
is a thin adapter over it, and the harness calls it in process, so both paths give the same tool
lists and the same results by construction.

- ``direct``: every tool of every mounted service as ``service__tool``.
- ``discover``: four meta-tools (``list_services``, ``list_tools``, ``describe_tool``,
  ``call_tool``) that scale to hundreds of tools.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from mcp_services.kernel.bounds import abridge
from mcp_services.kernel.episode import Episode
from mcp_services.kernel.errors import ErrorCode
from mcp_services.kernel.results import ToolResult, envelope_schema
from mcp_services.serving.model_view import model_summary, model_tool, tool_card

log = logging.getLogger(__name__)

Mode = Literal["direct", "discover"]
MODES: tuple[Mode, ...] = ("direct", "discover")
SEPARATOR = "__"


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """One tool as an agent sees it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    effect: Literal["read", "write"] | None  # None for discover-mode meta-tools

    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI / litellm ``tools`` entry for this tool: the model's view (``model_view``)."""
        return model_tool(self.name, self.description, self.input_schema)


@dataclass(frozen=True, slots=True)
class SurfaceCall:
    """The result of one call, and which service tool it reached (None for a meta-tool or an error)."""

    result: ToolResult
    service: str | None = None
    tool: str | None = None


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_SERVICE_PARAM = {"type": "string", "description": "A service name, as list_services returns it."}
_TOOL_PARAM = {"type": "string", "description": "A tool name of that service, as list_tools returns it."}

_META_TOOLS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "list_services": (
        "List the services available here, with what each one is for and how many tools it has. "
        "Start here, then use list_tools on the service you need.",
        _object({}, []),
        {"type": "array", "items": {"type": "object"}},
    ),
    "list_tools": (
        "List one service's tools: each tool's name, whether it reads or writes, and its description. "
        "Use describe_tool to see a tool's parameters before calling it.",
        _object({"service": _SERVICE_PARAM}, ["service"]),
        {"type": "array", "items": {"type": "object"}},
    ),
    "describe_tool": (
        "Show one tool's description, the JSON schema of its arguments and the shape of its result.",
        _object({"service": _SERVICE_PARAM, "tool": _TOOL_PARAM}, ["service", "tool"]),
        {"type": "object"},
    ),
    "call_tool": (
        "Call one tool of a service with its arguments (a JSON object matching the tool's input schema, "
        "see describe_tool). Returns the tool's result.",
        _object(
            {
                "service": _SERVICE_PARAM,
                "tool": _TOOL_PARAM,
                "arguments": {"type": "object", "description": "The tool's arguments.", "default": {}},
            },
            ["service", "tool"],
        ),
        {},
    ),
}


class ToolSurface:
    """The agent's view of an episode's mounted services."""

    def __init__(self, episode: Episode, mode: Mode = "direct") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.episode = episode
        self.mode = mode
        self._tools = self._build_tools()
        self._by_name = {t.name: t for t in self._tools}

    def _build_tools(self) -> list[ToolInfo]:
        if self.mode == "discover":
            return [
                ToolInfo(name, description, input_schema, envelope_schema(data_schema), None)
                for name, (description, input_schema, data_schema) in _META_TOOLS.items()
            ]
        tools = []
        for service in self.episode.services.values():
            for spec in service.tools.values():
                tools.append(
                    ToolInfo(
                        name=spec.qualified_name,
                        description=spec.description,
                        input_schema=spec.input_schema,
                        output_schema=spec.output_schema,
                        effect=spec.effect,
                    )
                )
        return tools

    def list_tools(self) -> list[ToolInfo]:
        return list(self._tools)

    def openai_tools(self) -> list[dict[str, Any]]:
        return [t.openai_schema() for t in self._tools]

    def call(self, name: str, arguments: Any) -> SurfaceCall:
        """Call a tool by the name the agent sees. Never raises: bad calls become error results, and
        an exception that escapes a service (a bug) becomes an ``internal_error`` result."""
        try:
            return self._call(name, arguments)
        except Exception as exc:  # noqa: BLE001 - one bad call must not end the episode or the server
            # Services validate before their transaction and roll back inside it: nothing changed.
            log.exception("tool call %s failed", abridge(name))
            return SurfaceCall(
                ToolResult.fail(
                    ErrorCode.INTERNAL_ERROR,
                    f"{abridge(name)} failed because of an internal error ({type(exc).__name__}); nothing was "
                    "changed. Try different arguments or another tool.",
                )
            )

    def _call(self, name: str, arguments: Any) -> SurfaceCall:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return SurfaceCall(
                ToolResult.fail(
                    ErrorCode.INVALID_ARGUMENT,
                    f"Arguments for {abridge(name)} must be a JSON object, not {type(arguments).__name__}.",
                )
            )
        if self.mode == "discover":
            return self._call_meta(name, arguments)
        service, sep, tool = name.partition(SEPARATOR)
        if not sep or name not in self._by_name:
            return SurfaceCall(ToolResult.fail(ErrorCode.UNKNOWN_TOOL, self._unknown_tool(name)))
        return SurfaceCall(self.episode.call(service, tool, arguments), service, tool)

    # -- discover mode ---------------------------------------------------------------------------------

    def _call_meta(self, name: str, arguments: dict[str, Any]) -> SurfaceCall:
        if name not in _META_TOOLS:
            return SurfaceCall(ToolResult.fail(ErrorCode.UNKNOWN_TOOL, self._unknown_tool(name)))
        allowed = set(_META_TOOLS[name][1]["properties"])
        extra = sorted(set(arguments) - allowed)
        if extra:
            shown = ", ".join(abridge(key) for key in extra[:5])
            more = f" and {len(extra) - 5:,} more" if len(extra) > 5 else ""
            return SurfaceCall(
                ToolResult.fail(
                    ErrorCode.INVALID_ARGUMENT,
                    f"{name} takes {', '.join(sorted(allowed)) or 'no arguments'}; unexpected: {shown}{more}.",
                )
            )
        for required in _META_TOOLS[name][1]["required"]:
            if not isinstance(arguments.get(required), str):
                return SurfaceCall(
                    ToolResult.fail(ErrorCode.INVALID_ARGUMENT, f"{name} needs '{required}' as a string.")
                )
        if name == "list_services":
            return SurfaceCall(
                ToolResult.ok(
                    [
                        {"name": s.name, "title": s.title, "description": s.description, "n_tools": len(s.tools)}
                        for s in self.episode.services.values()
                    ]
                )
            )
        service = self.episode.services.get(arguments["service"])
        if service is None:
            return SurfaceCall(
                ToolResult.fail(
                    ErrorCode.UNKNOWN_SERVICE,
                    f"No service {abridge(arguments['service'])} here. Available: {', '.join(self.episode.services)}.",
                )
            )
        if name == "list_tools":
            return SurfaceCall(
                ToolResult.ok(
                    [
                        {"name": t.name, "effect": t.effect, "description": model_summary(t.description)}
                        for t in service.tools.values()
                    ]
                )
            )
        spec = service.tools.get(arguments["tool"])
        if spec is None:
            return SurfaceCall(ToolResult.fail(ErrorCode.UNKNOWN_TOOL, service.unknown_tool_message(arguments["tool"])))
        if name == "describe_tool":
            # The model's view of the tool; the full schemas stay on the wire (tools/list in direct mode).
            card = tool_card(service.name, spec.name, spec.effect, spec.description, spec.input_schema, spec.data_schema)
            return SurfaceCall(ToolResult.ok(card))
        result = self.episode.call(service.name, spec.name, arguments.get("arguments") or {})
        return SurfaceCall(result, service.name, spec.name)

    def _unknown_tool(self, name: str) -> str:
        from difflib import get_close_matches

        close = get_close_matches(name, list(self._by_name), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        if self.mode == "discover":
            return f"No tool {abridge(name)} here.{hint} The tools are {', '.join(self._by_name)}."
        return f"No tool {abridge(name)} here.{hint} Tool names have the form service__tool."
