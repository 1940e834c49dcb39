"""Serving episodes to agents: the tool surface (in process) and MCP servers (stdio, HTTP)."""

from mcp_services.serving.surface import MODES, Mode, SurfaceCall, ToolInfo, ToolSurface

__all__ = ["MODES", "Mode", "SurfaceCall", "ToolInfo", "ToolSurface"]
