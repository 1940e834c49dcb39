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
import socket
from typing import Any

import anyio
from mcp import MCPError
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, Tool, ToolAnnotations
from starlette.applications import Starlette

from mcp_services.kernel.episode import Episode
from mcp_services.version import package_version
from mcp_services.serving.http import DEFAULT_HOST, DEFAULT_PORT, HttpServing, http_app
from mcp_services.serving.jsonrpc import AnsweringReadStream
from mcp_services.serving.limits import LIMIT_EXCEEDED
from mcp_services.serving.surface import Mode, SurfaceCall, ToolSurface

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "EpisodeServer", "build_server", "package_version", "serve_http",
           "serve_stdio"]

log = logging.getLogger(__name__)


class EpisodeServer(MCPServer):
    """An MCP server in front of one episode's mounted services."""

    #: The largest tool result sent, in bytes (None: any); HTTP serving sets it from its limits.
    max_result_bytes: int | None = None

    def __init__(
        self, surface: ToolSurface, *, name: str, instructions: str | None = None, description: str | None = None
    ) -> None:
        super().__init__(
            name=name, instructions=instructions, description=description, version=package_version(),
            log_level="WARNING",
        )
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
        result = self._result(call)
        self._check_size(name, call, result)
        return result

    def _result(self, call: SurfaceCall) -> CallToolResult:
        envelope = call.result.envelope()
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(envelope, ensure_ascii=False, sort_keys=True))],
            structured_content=envelope,
            is_error=not call.result.success,
        )

    def _check_size(self, name: str, call: SurfaceCall, result: CallToolResult) -> None:
        limit = self.max_result_bytes
        if limit is None:
            return
        size = sum(len(c.text.encode()) for c in result.content if isinstance(c, TextContent))
        if size <= limit:
            return
        reached = (self.surface.episode.services[call.service].tools[call.tool]
                   if call.service is not None and call.tool is not None else None)
        wrote = call.result.success and reached is not None and reached.effect == "write"
        done = "The call ran and its change is kept; only its result is withheld. " if wrote else ""
        raise MCPError(
            code=LIMIT_EXCEEDED,
            message=f"The result of {name} is {size:,} bytes, more than the {limit:,} this server sends per result "
            f"(--max-result-bytes). {done}Ask for less: a narrower query, a filter or a smaller page.",
            data={"limit": "max_result_bytes", "size": size, "max": limit},
        )

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        return self._schemas.get(name)

    def streamable_http_app_with(
        self, security: TransportSecuritySettings, auth: AuthSettings | None, verifier: TokenVerifier | None
    ) -> Starlette:
        """The SDK's streamable-HTTP app with this transport security and bearer authentication."""
        # The low-level server's method takes auth per app (MCPServer's takes it from the constructor).
        return self._lowlevel_server.streamable_http_app(
            transport_security=security, auth=auth, token_verifier=verifier
        )

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


def serve_http(server: EpisodeServer, sock: socket.socket, serving: HttpServing) -> None:
    """Serve over streamable HTTP at ``/mcp`` on ``sock`` (from ``http.listen``) until stopped."""
    import uvicorn

    app = http_app(server, serving, sock.getsockname()[1])
    # uvicorn trusts X-Forwarded-For from a proxy on this machine: limits then see the real client.
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])
