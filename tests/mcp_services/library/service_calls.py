"""Calling one service's tools in a test: expect success, expect a refusal that changes nothing, read every page."""

from __future__ import annotations

from typing import Any

from mcp_services.kernel import Episode, ToolResult


class ServiceCalls:
    """The calls of one service: ``calls(ep, "get_order", order_id=...)`` returns the data of a success."""

    def __init__(self, service: str) -> None:
        self.service = service

    def __call__(self, ep: Episode, tool: str, **args: Any) -> Any:
        result = ep.call(self.service, tool, args)
        assert result.success, result.envelope()
        return result.data

    def refused(self, ep: Episode, tool: str, expect: str, **args: Any) -> ToolResult:
        """A call that must fail with the error code ``expect`` and leave every store exactly as it was."""
        before = ep.dump()
        result = ep.call(self.service, tool, args)
        assert not result.success, result.envelope()
        assert result.error_code == expect, result.envelope()
        assert ep.dump() == before
        return result

    def every(self, ep: Episode, tool: str, **filters: Any) -> list[dict[str, Any]]:
        """Every item of a paged list tool, page by page."""
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = self(ep, tool, limit=100, cursor=cursor, **filters)
            items += page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return items
