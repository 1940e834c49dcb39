"""Importers: MCP tools/list dumps, OpenAPI 3 / Swagger 2 documents, the shared specs file, our spec.

Every importer yields ``RawService``s (or, for our own format, ``ServiceSpec``s) and never raises for
one bad service or tool: those carry a ``problem`` that ends up as a reason in the gate report.
A ``SourceError`` means the file as a whole cannot be read as the format asked for.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal, get_args

from generator.importers.mcp import read_mcp
from generator.importers.openapi import read_openapi
from generator.importers.raw import RawService, RawTool, SourceError
from generator.importers.specs_jsonl import read_specs_jsonl
from generator.importers.text import read_text
from generator.spec import ServiceSpec, SpecError, load_spec

Format = Literal["auto", "mcp", "openapi", "specs-jsonl", "spec"]
FORMATS: tuple[str, ...] = get_args(Format)

__all__ = ["FORMATS", "Format", "RawService", "RawTool", "SourceError", "detect_format", "read_source"]


def detect_format(path: Path) -> Format:
    """Guess a file's format from its name and first bytes."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return "openapi"
    try:
        with (gzip.open(path, "rb") if _gzip(path) else open(path, "rb")) as handle:
            head = handle.read(1_000_000).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None
    stripped = head.lstrip()
    first_line = stripped.split("\n", 1)[0]
    try:
        record = json.loads(first_line)
    except json.JSONDecodeError:
        record = None
    if isinstance(record, dict) and "\n" in stripped.strip():
        return "spec" if "spec_version" in record else "specs-jsonl" if "tools" in record else "mcp"
    if stripped.startswith("{"):
        if '"openapi"' in head[:4000] or '"swagger"' in head[:4000]:
            return "openapi"
        if '"spec_version"' in head[:2000]:
            return "spec"
        return "mcp"
    if stripped.startswith(("openapi:", "swagger:")) or "\nopenapi:" in head or "\nswagger:" in head:
        return "openapi"
    raise SourceError(f"cannot tell the format of {path}; pass --format mcp|openapi|specs-jsonl|spec")


def read_source(
    path: Path, fmt: Format = "auto", keep: Callable[[str], bool] | None = None
) -> Iterator[RawService | ServiceSpec]:
    """The services of ``path``; ``keep(name)`` (the source's service name) filters early."""
    if not path.exists():
        raise SourceError(f"no such file: {path}")
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "specs-jsonl":
        yield from read_specs_jsonl(path, keep)
        return
    if fmt == "spec":
        yield from _read_specs(path, keep)
        return
    services = read_mcp(path) if fmt == "mcp" else read_openapi(path)
    for service in services:
        if keep is None or keep(service.name):
            yield service


def _read_specs(path: Path, keep: Callable[[str], bool] | None) -> Iterator[RawService | ServiceSpec]:
    text = read_text(path).strip()
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, list):
        chunks = [json.dumps(item) for item in whole]
    else:
        chunks = [text] if isinstance(whole, dict) else [line for line in text.splitlines() if line.strip()]
    for number, chunk in enumerate(chunks, start=1):
        try:
            data = json.loads(chunk)
        except json.JSONDecodeError as exc:
            yield RawService(name=f"spec_{number}", tools=[], problem=f"spec {number} is not JSON ({exc.msg})")
            continue
        name = str(data.get("name", f"spec_{number}")) if isinstance(data, dict) else f"spec_{number}"
        if keep is not None and not keep(name):
            continue
        try:
            yield load_spec(data)
        except SpecError as exc:
            yield RawService(name=name, tools=[], format="spec", problem=str(exc))


def _gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"
