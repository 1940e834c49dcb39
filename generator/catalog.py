"""The catalog of generated services: what passed the gate, stored compactly, served by name.

A catalog is a folder:

- ``index.json``: per service its title, source, licences, format, categories, the tools the gate
  passed (``implemented``) and those the world model answers (``simulated``, with the reason);
- ``specs.zip``: one ``<service>.json`` spec per service (compressed, read one member at a time);
- ``custom/<service>.py``: Python only for tools whose behaviour is custom code;
- ``gate_report.json``: the gate's report of the imports that built it (the package catalog keeps it
  gzip-compressed, ``gate_report.json.gz``, to stay small).

The package's own catalog is ``generator/data/catalog/``; ``COMPOWORLD_CATALOG`` may name more folders
(separated by ``os.pathsep``). ``Catalog.service(name)`` compiles a service on first use and keeps it,
so services load lazily and a process that mounts a few of them pays for those few.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
import zipfile
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mcp_services.kernel.service import Service

from generator.compiler import compile_service
from generator.schemas import clean_text
from generator.spec import ServiceSpec, load_spec

PACKAGE_CATALOG = Path(__file__).resolve().parent / "data" / "catalog"
INDEX = "index.json"
SPECS = "specs.zip"
REPORT = "gate_report.json"
CUSTOM = "custom"
INDEX_VERSION = 1


@dataclass(frozen=True)
class ToolEntry:
    name: str
    status: str
    reason: str = ""  # why a tool is simulated


@dataclass(frozen=True)
class ServiceEntry:
    name: str
    title: str
    description: str
    source: str
    source_name: str
    format: str
    license: str | None
    upstream_license: str | None
    categories: tuple[str, ...]
    tools: tuple[ToolEntry, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "description": clean_text(self.description, 160),
            "source": self.source,
            "source_name": self.source_name,
            "format": self.format,
            "license": self.license,
            "upstream_license": self.upstream_license,
            "categories": list(self.categories),
            "implemented": [t.name for t in self.tools if t.status == "implemented"],
            "simulated": {t.name: clean_text(t.reason, 120) for t in self.tools if t.status == "simulated"},
        }

    @staticmethod
    def from_json(name: str, data: dict[str, Any]) -> ServiceEntry:
        return ServiceEntry(
            name=name,
            title=data.get("title", name),
            description=data.get("description", ""),
            source=data.get("source", ""),
            source_name=data.get("source_name", name),
            format=data.get("format", ""),
            license=data.get("license"),
            upstream_license=data.get("upstream_license"),
            categories=tuple(data.get("categories", ())),
            tools=tuple(
                [ToolEntry(t, "implemented") for t in data.get("implemented", [])]
                + [ToolEntry(t, "simulated", reason) for t, reason in data.get("simulated", {}).items()]
                # the first index format listed every tool with its status
                + [ToolEntry(t, v["status"], v.get("reason", "")) for t, v in data.get("tools", {}).items()]
            ),
        )


class Catalog:
    """One catalog folder (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._services: dict[str, Service] = {}
        self._lock = threading.Lock()
        self._index: dict[str, ServiceEntry] | None = None

    # -- reading ---------------------------------------------------------------------------------------

    @property
    def index(self) -> dict[str, ServiceEntry]:
        if self._index is None:
            path = self.root / INDEX
            if not path.exists():
                self._index = {}
            else:
                data = json.loads(path.read_text())
                self._index = {name: ServiceEntry.from_json(name, entry) for name, entry in data.get("services", {}).items()}
        return self._index

    def names(self) -> list[str]:
        return sorted(self.index)

    def __contains__(self, name: object) -> bool:
        return name in self.index

    def spec(self, name: str) -> ServiceSpec:
        if name not in self.index:
            raise KeyError(name)
        with zipfile.ZipFile(self.root / SPECS) as archive:
            return load_spec(archive.read(f"{name}.json"))

    def custom_code(self, name: str) -> str | None:
        path = self.root / CUSTOM / f"{name}.py"
        return path.read_text() if path.exists() else None

    def service(self, name: str) -> Service:
        """The compiled service (compiled once per process)."""
        with self._lock:
            if name not in self._services:
                spec = self.spec(name)
                self._services[name] = compile_service(spec, custom=load_custom_functions(name, self.custom_code(name)))
            return self._services[name]

    def counts(self) -> dict[str, Any]:
        """Services and tools by status and by source format."""
        by_status: Counter[str] = Counter()
        by_source: dict[str, Counter[str]] = {}
        services_by_source: Counter[str] = Counter()
        for entry in self.index.values():
            services_by_source[entry.format] += 1
            for tool in entry.tools:
                by_status[tool.status] += 1
                by_source.setdefault(entry.format, Counter())[tool.status] += 1
        served = sum(by_status.values())
        rejected = self.rejected_tools()
        if rejected:
            by_status["rejected"] = rejected  # in the gate report, not served
        return {
            "services": len(self.index),
            "tools": served,
            "by_status": dict(by_status),
            "simulated_because": dict(Counter(simulated_because(t.reason) for e in self.index.values()
                                              for t in e.tools if t.status == "simulated")),
            "failed_checks": dict(Counter(c for e in self.index.values() for t in e.tools
                                          if t.status == "simulated" and (c := failed_check(t.reason)))),
            "by_source": {
                fmt: {"services": services_by_source[fmt], "tools": sum(c.values()), **dict(c)}
                for fmt, c in sorted(by_source.items())
            },
        }

    def report(self) -> dict[str, Any]:
        """The gate report of the imports that built this catalog (``{"services": []}`` when there is none)."""
        for path, opener in ((self.root / f"{REPORT}.gz", gzip.open), (self.root / REPORT, open)):
            if path.exists():
                with opener(path, "rt") as handle:  # type: ignore[operator]
                    return dict(json.load(handle))
        return {"services": []}

    def rejected_tools(self) -> int:
        return sum(1 for s in self.report().get("services", []) for t in s.get("tools", []) if t.get("status") == "rejected")

    # -- writing ---------------------------------------------------------------------------------------

    def write(self, specs: dict[str, ServiceSpec], entries: dict[str, ServiceEntry], custom: dict[str, str],
              remove: frozenset[str] | set[str] = frozenset()) -> None:
        """Add or replace services (and drop ``remove``), rewriting the index and the spec archive."""
        self.root.mkdir(parents=True, exist_ok=True)
        index = {n: e for n, e in self.index.items() if n not in remove}
        index.update(entries)
        existing: dict[str, bytes] = {}
        archive_path = self.root / SPECS
        if archive_path.exists():
            with zipfile.ZipFile(archive_path) as archive:
                for member in archive.namelist():
                    name = member.removesuffix(".json")
                    if name in index and name not in specs:
                        existing[name] = archive.read(member)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_LZMA) as archive:
            for name in sorted(index):
                data = (compact_spec(specs[name]).model_dump_json(exclude_none=True, exclude_defaults=True).encode()
                        if name in specs else existing.get(name))
                if data is None:
                    continue
                info = zipfile.ZipInfo(f"{name}.json", date_time=(2025, 1, 1, 0, 0, 0))  # reproducible archive
                info.compress_type = zipfile.ZIP_LZMA
                archive.writestr(info, data)
        archive_path.write_bytes(buffer.getvalue())
        for name, code in custom.items():
            (self.root / CUSTOM).mkdir(exist_ok=True)
            (self.root / CUSTOM / f"{name}.py").write_text(code)
        payload = {"version": INDEX_VERSION, "services": {n: index[n].to_json() for n in sorted(index)}}
        lines = ",\n".join(f" {json.dumps(n)}: {json.dumps(payload['services'][n], ensure_ascii=False)}" for n in sorted(index))
        # one line per service: compact, yet a diff shows which services changed
        (self.root / INDEX).write_text(f'{{"version": {INDEX_VERSION}, "services": {{\n{lines}\n}}}}\n')
        self._index = None
        self._services.clear()


#: The checks of the behavioural gate (``generator.gate.behaviour``) and the product invariants
#: (``generator.gate.invariants``); the others are the consistency gate's.
BEHAVIOURAL_CHECKS = ("http_verb", "filters_narrow", "created_is_listed", "changes_only_what_was_passed",
                      "action_matches_description", "deletes_only_the_row")
INVARIANT_CHECKS = ("ids_round_trip", "write_visible", "action_keeps_row", "params_change_result", "aliases_resolve",
                    "amount_within_parent", "status_from_enum")


def failed_check(reason: str) -> str | None:
    """The gate check a simulated tool's compiled behaviour failed (``action_keeps_row``), if it failed one."""
    if not reason.startswith("compiled behaviour failed the gate"):
        return None
    return reason.removeprefix("compiled behaviour failed the gate:").strip().split(":", 1)[0] or None


def simulated_because(reason: str) -> str:
    """Why a tool is simulated: the planner's choice (a large API's side resources among them), or which gate
    its compiled behaviour failed."""
    if not reason.startswith("compiled behaviour failed the gate"):
        return "outside core" if "core resources" in reason else "planner"
    check = reason.removeprefix("compiled behaviour failed the gate:").strip().split(":", 1)[0]
    if check in INVARIANT_CHECKS:
        return "product invariants"
    return "behavioural gate" if check in BEHAVIOURAL_CHECKS else "consistency gate"


def compact_spec(spec: ServiceSpec) -> ServiceSpec:
    """The spec as stored: descriptions inside nested schemas shortened, nested examples dropped.

    Only text a model reads changes (top-level parameter descriptions keep 300 characters); names,
    types, constraints and behaviours are untouched, so the gate's verdict still holds.
    """

    def shrink(node: Any, depth: int) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "description" and isinstance(value, str):
                    out[key] = clean_text(value, 300 if depth <= 2 else 100)
                elif key == "examples" and depth > 2:
                    continue
                elif key in ("enum", "const", "default", "examples"):
                    out[key] = value
                else:
                    out[key] = shrink(value, depth + 1)
            return out
        if isinstance(node, list):
            return [shrink(v, depth + 1) for v in node]
        return node

    tools = [
        t.model_copy(update={
            "description": clean_text(t.description, 500),
            "parameters": shrink(t.parameters, 0),
            "result": shrink(t.result, 0) if t.result is not None else None,
        })
        for t in spec.tools
    ]
    entities = [
        e.model_copy(update={"fields": [
            f.model_copy(update={"description": clean_text(f.description, 120),
                                 "json_schema": shrink(f.json_schema, 3) if f.json_schema else None})
            for f in e.fields
        ]})
        for e in spec.entities
    ]
    return spec.model_copy(update={"tools": tools, "entities": entities})


def load_custom_functions(name: str, code: str | None) -> dict[str, Any]:
    """The functions of a service's custom-tools module (only ever code the gate has passed)."""
    if not code:
        return {}
    namespace: dict[str, Any] = {"__name__": f"generator.catalog.custom.{name}"}
    exec(compile(code, f"generator/data/catalog/custom/{name}.py", "exec"), namespace)  # noqa: S102 - gated code
    return {k: v for k, v in namespace.items() if callable(v) and not k.startswith("_")}


# -- the catalogs this process serves from -----------------------------------------------------------


@cache
def catalogs() -> tuple[Catalog, ...]:
    """The package catalog and any folders named in ``COMPOWORLD_CATALOG`` (later ones win on a name)."""
    roots = [PACKAGE_CATALOG]
    extra = os.environ.get("COMPOWORLD_CATALOG", "")
    roots += [Path(p) for p in extra.split(os.pathsep) if p.strip()]
    return tuple(Catalog(root) for root in roots if (root / INDEX).exists())


def _owner(name: str) -> Catalog | None:
    for catalog in reversed(catalogs()):
        if name in catalog:
            return catalog
    return None


def generated_names() -> list[str]:
    """Every generated service the catalogs hold."""
    names: set[str] = set()
    for catalog in catalogs():
        names.update(catalog.names())
    return sorted(names)


def generated_service(name: str) -> Service | None:
    """The generated service ``name``, or None when no catalog has it."""
    catalog = _owner(name)
    return catalog.service(name) if catalog is not None else None


class CatalogProvider:
    """The generated services of every catalog, served beside the library: the ``compoworld.services``
    entry point ``generator`` (pyproject.toml), which ``mcp_services.registry`` loads on first use."""

    def names(self) -> list[str]:
        return generated_names()

    def service(self, name: str) -> Service | None:
        return generated_service(name)


provider = CatalogProvider()


def generated_entry(name: str) -> ServiceEntry | None:
    catalog = _owner(name)
    return catalog.index[name] if catalog is not None else None
