"""The service kernel: typed state, tools, the world, stores, episodes and diffs."""

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.diff import RowChange, StateDiff, TableDiff, diff_states
from mcp_services.kernel.entity import derived, field, joined
from mcp_services.kernel.episode import Episode, EpisodeSnapshot
from mcp_services.kernel.errors import ErrorCode, ToolError
from mcp_services.kernel.pagination import Cursor, Limit, Page, page_of
from mcp_services.kernel.results import ToolResult
from mcp_services.kernel.service import Service
from mcp_services.kernel.store import StateDump, Store
from mcp_services.kernel.tools import FunctionTool, ToolSpec
from mcp_services.kernel.world import World, WorldShape

__all__ = [
    "Cursor",
    "Episode",
    "EpisodeSnapshot",
    "ErrorCode",
    "FunctionTool",
    "Limit",
    "Page",
    "RowChange",
    "Service",
    "StateDiff",
    "StateDump",
    "Store",
    "TableDiff",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "World",
    "WorldShape",
    "derived",
    "diff_states",
    "field",
    "joined",
    "page_of",
]
