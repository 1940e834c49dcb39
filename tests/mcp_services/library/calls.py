"""Calling one service of an episode in behaviour tests: successes return data, refusals must change nothing."""

from __future__ import annotations

from typing import Any

from mcp_services.kernel import Episode, ToolResult


class Calls:
    """Tool calls on ``service`` in ``episode``."""

    def __init__(self, episode: Episode, service: str) -> None:
        self.episode = episode
        self.service = service

    def __call__(self, tool: str, **args: Any) -> Any:
        result = self.episode.call(self.service, tool, args)
        assert result.success, result.envelope()
        return result.data

    def refused(self, tool: str, code: str, **args: Any) -> str:
        """Call a tool that must fail with ``code`` and leave every store exactly as it was; the error message."""
        before = self.episode.snapshot()
        result: ToolResult = self.episode.call(self.service, tool, args)
        assert not result.success, result.envelope()
        assert result.error_code == code, result.envelope()
        if self.episode.snapshot() != before:  # identical images are the fast path; otherwise compare every row
            after = self.episode.dump()
            self.episode.reset(before)
            assert after == self.episode.dump()
        return result.error_message or ""

    def all(self, tool: str, **args: Any) -> list[dict[str, Any]]:
        """Every item of a paged list tool."""
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = self(tool, limit=100, cursor=cursor, **args)
            items += page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return items


def assert_added_only(episode: Episode, service: str) -> None:
    """What happened to ``service`` only added records (as a world event must)."""
    state = episode.diff()[service]
    assert state and not any(t.changed or t.deleted for t in state.tables.values())
