"""CompoWorld's services: the kernel (``mcp_services.kernel``), the library and MCP serving."""

from mcp_services.kernel import Episode, Service, ToolContext, ToolError, ToolResult, World, WorldShape
from mcp_services.registry import all_services, get_service, service_names

__all__ = [
    "Episode",
    "Service",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "World",
    "WorldShape",
    "all_services",
    "get_service",
    "service_names",
]
