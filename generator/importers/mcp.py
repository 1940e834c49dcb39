"""MCP ``tools/list`` dumps: ``{"tools": [...]}`` (one service), or JSON Lines of ``{"service", "description", "tools"}``.

The JSON Lines shape is also the shape of the shared specs file, so this reader takes either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from generator.importers.raw import RawService, RawTool, SourceError
from generator.importers.text import read_text
from generator.naming import MCP_TOOL_NAME

_PATH_PARAM = re.compile(r"\{([^}/]+)\}")


def read_mcp(path: Path) -> list[RawService]:
    """Every service of an MCP tools/list dump (a bad line is a service with a problem, never a crash)."""
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = None  # maybe JSON Lines
        if isinstance(document, dict):
            return [service_from_dump(document, default_name=_stem(path))]
        if isinstance(document, list):
            return [service_from_dump({"tools": document}, default_name=_stem(path))]
    return list(read_json_lines(text, source=path.name))


def read_json_lines(text: str, *, source: str) -> list[RawService]:
    services: list[RawService] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            services.append(RawService(name=f"line_{number}", tools=[], problem=f"line {number} of {source} is not JSON ({exc.msg})"))
            continue
        if not isinstance(record, dict):
            services.append(RawService(name=f"line_{number}", tools=[], problem=f"line {number} of {source} is not a JSON object"))
            continue
        service = service_from_dump(record, default_name=f"line_{number}")
        service.size_bytes = len(line)
        services.append(service)
    if not services:
        raise SourceError(f"{source} holds no services: expected {{\"tools\": [...]}} or JSON Lines of {{\"service\", \"tools\"}}")
    return services


def service_from_dump(record: dict[str, Any], *, default_name: str) -> RawService:
    """One service from ``{"tools": [...]}`` (optionally with service/description/...), or a JSON-RPC result."""
    if "tools" not in record and isinstance(record.get("result"), dict):
        record = {**record, **record["result"]}
    name = str(record.get("service") or record.get("name") or default_name)
    tools_in = record.get("tools")
    service = RawService(
        name=name,
        tools=[],
        title=str(record.get("title") or ""),
        description=str(record.get("description") or ""),
        source=str(record.get("source") or ""),
        license=record.get("license"),
        upstream_license=record.get("upstream_license"),
        format=str(record.get("format") or "mcp"),
        version=record.get("version"),
        categories=[str(c) for c in record.get("categories") or [] if isinstance(c, str)],
    )
    if not isinstance(tools_in, list):
        service.problem = "no 'tools' list in this dump"
        return service
    for index, entry in enumerate(tools_in):
        service.tools.append(tool_from_dump(entry, index))
    return service


def tool_from_dump(entry: Any, index: int) -> RawTool:
    if not isinstance(entry, dict):
        return RawTool(name=f"tool_{index}", problem=f"tool #{index} is not a JSON object")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        return RawTool(name=f"tool_{index}", problem=f"tool #{index} has no name")
    http = entry.get("http") if isinstance(entry.get("http"), dict) else {}
    annotations = entry.get("annotations") if isinstance(entry.get("annotations"), dict) else {}
    read_only = annotations.get("readOnlyHint")
    path = http.get("path") if isinstance(http.get("path"), str) else None
    tool = RawTool(
        name=name,
        description=str(entry.get("description") or ""),
        input_schema=entry.get("inputSchema", entry.get("input_schema", entry.get("parameters"))),
        output_schema=entry.get("outputSchema", entry.get("output_schema")),
        method=str(http["method"]).upper() if isinstance(http.get("method"), str) else None,
        path=path,
        read_only=read_only if isinstance(read_only, bool) else None,
        path_params=tuple(_PATH_PARAM.findall(path)) if path else (),
    )
    if not MCP_TOOL_NAME.match(name):
        tool.problem = f"{name[:60]!r} is not a valid MCP tool name (1-128 characters: letters, digits, _ - .)"
    return tool


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name or "service"
