"""An episode's tool surface as an MCP server (the official SDK's ``MCPServer``).

The server keeps the SDK's transports, sessions and protocol handling, and replaces its tool layer
with the ``ToolSurface``: tool lists carry our own input/output schemas, and every result carries
the envelope as ``structuredContent`` (plus the same JSON as text), with ``isError`` on failure.
On both transports a message that is not JSON-RPC gets JSON-RPC's error answer
(``mcp_services.serving.jsonrpc``); over HTTP the host rules of ``mcp_services.serving.http`` hold.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, TextContent, Tool, ToolAnnotations

from mcp_services.kernel.episode import Episode
from mcp_services.serving.http import allowed_names, http_app
from mcp_services.serving.jsonrpc import AnsweringReadStream
from mcp_services.serving.surface import Mode, ToolSurface

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


class EpisodeServer(MCPServer):
    """An MCP server in front of one episode's mounted services."""

    def __init__(self, surface: ToolSurface, *, name: str, instructions: str | None = None) -> None:
        super().__init__(name=name, instructions=instructions, log_level="WARNING")
        self.surface = surface
        self._mcp_tools = [
            Tool(
                name=t.name,
                description=t.description,
                input_schema=t.input_schema,
                output_schema=t.output_schema,
                annotations=_annotations(t.effect),
            )
            for t in surface.list_tools()
        ]
        self._schemas = {t.name: t.input_schema for t in surface.list_tools()}

    async def list_tools(self) -> list[Tool]:
        return list(self._mcp_tools)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        call = self.surface.call(name, arguments)
        envelope = call.result.envelope()
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(envelope, ensure_ascii=False, sort_keys=True))],
            structured_content=envelope,
            is_error=not call.result.success,
        )

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        return self._schemas.get(name)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio serving, plus answers to lines that are not JSON-RPC messages."""
        async with stdio_server() as (read_stream, write_stream):
            # mcp==2.3.0 is pinned: its MCPServer.run_stdio_async does exactly this, minus the wrapper.
            lowlevel = self._lowlevel_server
            await lowlevel.run(
                AnsweringReadStream(read_stream, write_stream), write_stream, lowlevel.create_initialization_options()
            )


def _annotations(effect: str | None) -> ToolAnnotations | None:
    if effect == "read":
        return ToolAnnotations(read_only_hint=True, open_world_hint=False)
    if effect == "write":
        return ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
    return None


def build_server(
    episode: Episode, mode: Mode = "direct", *, name: str | None = None, instructions: str | None = None
) -> EpisodeServer:
    """An MCP server for ``episode`` in ``direct`` or ``discover`` mode."""
    services = ", ".join(episode.services)
    if instructions is None:
        instructions = (
            f"CompoWorld services: {services}. It is now {episode.world.now} (UTC); you act for "
            f"{episode.world.user.name} <{episode.world.user.email}>, {episode.world.user.job_title} at "
            f"{episode.world.home.name}. Every tool returns {{\"success\": true, \"data\": ...}} or "
            "{\"success\": false, \"error\": {\"code\", \"message\"}}; read error messages, they say how to fix the call."
        )
    return EpisodeServer(ToolSurface(episode, mode), name=name or f"compoworld-{'-'.join(episode.services)}"[:64], instructions=instructions)


def serve_stdio(server: MCPServer) -> None:
    """Serve over stdio (stdout carries JSON-RPC only; logs go to stderr)."""
    server.run("stdio")


def serve_http(
    server: MCPServer, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, allow_remote: Sequence[str] = ()
) -> None:
    """Serve over streamable HTTP at ``http://HOST:PORT/mcp``; a non-loopback ``host`` needs
    ``allow_remote`` (raises ``RemoteHostError`` otherwise, before listening)."""
    import uvicorn

    app = http_app(server, allowed_names(host, allow_remote))
    anyio.run(uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve)
