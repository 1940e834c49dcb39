"""The shared specs file (``tool_specs.jsonl.gz``): one service per line, OpenAPI-derived or Composio tools.

OpenAPI tools carry ``http: {method, path}`` (the REST resource and verb the planner reads);
Composio tools carry an ``outputSchema``. Lines are streamed and filtered by name before parsing,
because the file is 110 MB unpacked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from generator.importers.mcp import service_from_dump
from generator.importers.raw import RawService
from generator.importers.text import iter_lines

#: A service whose line is larger than this is refused as a whole ("huge spec").
MAX_SERVICE_BYTES = 3_000_000
_NAME = re.compile(r'^\{\s*"service"\s*:\s*"((?:[^"\\]|\\.)*)"')


def read_specs_jsonl(path: Path, keep: Callable[[str], bool] | None = None) -> Iterator[RawService]:
    """The services of the specs file, one at a time; ``keep(name)`` filters before a line is parsed."""
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            continue
        match = _NAME.match(line)
        if keep is not None and match and not keep(json.loads(f'"{match.group(1)}"')):
            continue
        if len(line) > MAX_SERVICE_BYTES:
            name = json.loads(f'"{match.group(1)}"') if match else f"line_{number}"
            if keep is not None and not keep(name):
                continue
            yield RawService(
                name=name,
                tools=[],
                problem=f"huge spec: {len(line) // 1_000_000} MB on one line (the limit is {MAX_SERVICE_BYTES // 1_000_000} MB)",
                size_bytes=len(line),
            )
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield RawService(name=f"line_{number}", tools=[], problem=f"line {number} is not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            yield RawService(name=f"line_{number}", tools=[], problem=f"line {number} is not a JSON object")
            continue
        if keep is not None and not keep(str(record.get("service", ""))):
            continue
        service = service_from_dump(record, default_name=f"line_{number}")
        service.size_bytes = len(line)
        yield service
