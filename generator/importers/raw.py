"""What importers read out of a specification, before any inference: services of raw tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RawTool:
    """One operation as the source states it."""

    name: str
    description: str = ""
    input_schema: Any = None
    output_schema: Any = None
    method: str | None = None  # HTTP verb, for REST sources
    path: str | None = None  # HTTP path template, for REST sources
    read_only: bool | None = None  # MCP readOnlyHint, where given
    #: A reason the importer already knows this tool cannot be used (e.g. an unresolvable $ref).
    problem: str | None = None
    #: Parameter names that come from the path (REST), and where they sit.
    path_params: tuple[str, ...] = ()


@dataclass
class RawService:
    name: str
    tools: list[RawTool]
    title: str = ""
    description: str = ""
    source: str = ""
    license: str | None = None
    upstream_license: str | None = None
    format: str = "mcp"
    version: str | None = None
    categories: list[str] = field(default_factory=list)
    #: A reason the whole service cannot be used (too large, unreadable...).
    problem: str | None = None
    size_bytes: int = 0


class SourceError(ValueError):
    """The file cannot be read as the requested format (one line, shown to the user)."""
