"""The figures that say whether a catalog is honest (issues 13 and 23), measured on the catalog itself.

- services and tools by status (implemented / simulated, and rejected from the gate report);
- the share of services that are business or consumer products people automate (``selection``);
- seeded string values shaped like filler rather than data (``filler_shape``: ``desc-1``, "Quarterly city",
  "Pilot Audit 1", "TRA84846"), at every depth of every seeded row;
- entities with a display name (a label field that every seeded row fills);
- list/search tools marked implemented that ignore a declared filter parameter.

``bench/bench_generator.py`` prints them; ``tests/generator/test_catalog_figures.py`` keeps them true.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp_services.kernel.episode import Episode
from mcp_services.kernel.world import World

from generator.catalog import REPORT, Catalog
from generator.gate.behaviour import declared_filters
from generator.naming import words
from generator.selection import Candidate, classify
from generator.shapes import filler_shape, is_placeholder
from generator.spec import ServiceSpec


def world_names(world: World) -> frozenset[str]:
    """Names the World gives (companies, people, places, products): data, whatever words they end in."""
    return frozenset([o.name for o in world.organisations] + [p.name for p in world.people]
                     + [p.name for p in world.places] + [p.name for p in world.products])


def filler_values(row: dict[str, Any], entity: str, known: frozenset[str] = frozenset()) -> list[tuple[str, str, str]]:
    """(column, value, shape) of every filler-shaped string in a row, nested values included (``known``:
    the World's names, which are data)."""
    found: list[tuple[str, str, str]] = []

    def walk(node: Any, column: str, level: int) -> None:
        if level > 6:
            return
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, str(key), level + 1)
        elif isinstance(node, list):
            for value in node[:50]:
                walk(value, column, level + 1)
        elif node not in known:
            shape = filler_shape(node, column, entity)
            if shape is not None:
                found.append((column, str(node), shape))

    for column, value in row.items():
        if column not in ("id", "created_at", "updated_at"):
            walk(value, column, 0)
    return found


def string_values(row: dict[str, Any]) -> int:
    """How many string values a row holds, nested values included."""
    count = 0
    stack: list[Any] = [v for k, v in row.items() if k not in ("id", "created_at", "updated_at")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node[:50])
        elif isinstance(node, str):
            count += 1
    return count


@dataclass
class ServiceFigures:
    name: str
    kind: str
    tools: dict[str, int]
    entities: int = 0
    named_entities: int = 0
    string_cells: int = 0
    placeholder_cells: list[str] = field(default_factory=list)  # "table.column=value"
    string_values: int = 0  # strings at every depth of every seeded row
    filler_values: list[str] = field(default_factory=list)  # "table.column=value (shape)"
    unnamed: list[str] = field(default_factory=list)
    ignored_filters: list[str] = field(default_factory=list)  # "tool(param, ...)"


@dataclass
class CatalogFigures:
    services: list[ServiceFigures]
    rejected_tools: int = 0
    rejected_services: int = 0

    def total(self, status: str) -> int:
        return sum(s.tools.get(status, 0) for s in self.services)

    @property
    def tools(self) -> int:
        return self.total("implemented") + self.total("simulated")

    def share(self, kind: str) -> float:
        return sum(1 for s in self.services if s.kind == kind) / max(1, len(self.services))

    @property
    def entities(self) -> int:
        return sum(s.entities for s in self.services)

    @property
    def named_share(self) -> float:
        return sum(s.named_entities for s in self.services) / max(1, self.entities)

    @property
    def placeholder_cells(self) -> list[str]:
        return [f"{s.name}.{c}" for s in self.services for c in s.placeholder_cells]

    @property
    def filler_values(self) -> list[str]:
        return [f"{s.name}.{c}" for s in self.services for c in s.filler_values]

    @property
    def ignored_filters(self) -> list[str]:
        return [f"{s.name}.{t}" for s in self.services for t in s.ignored_filters]

    def summary(self) -> dict[str, Any]:
        implemented = self.total("implemented")
        return {
            "services": len(self.services),
            "tools": self.tools,
            "implemented": implemented,
            "simulated": self.total("simulated"),
            "rejected": self.rejected_tools,
            "implemented_share": round(implemented / max(1, self.tools), 4),
            "business_share": round(self.share("business"), 4),
            "reference_share": round(self.share("reference"), 4),
            "entities": self.entities,
            "named_entity_share": round(self.named_share, 4),
            "string_cells": sum(s.string_cells for s in self.services),
            "placeholder_cells": len(self.placeholder_cells),
            "string_values": sum(s.string_values for s in self.services),
            "filler_values": len(self.filler_values),
            "implemented_list_tools_ignoring_a_filter": len(self.ignored_filters),
        }


def service_kind(source_name: str, tools: int, categories: Iterable[str]) -> str:
    return classify(Candidate(source_name, tools, tuple(categories))).kind


def audit_catalog(catalog: Catalog, names: Iterable[str] | None = None, *, seed: bool = True,
                  world_seed: int = 0) -> CatalogFigures:
    """Figures for ``names`` (default: every service); ``seed`` also seeds each one to read its rows."""
    chosen = list(names) if names is not None else catalog.names()
    figures = CatalogFigures([])
    for name in chosen:
        entry = catalog.index[name]
        counts: dict[str, int] = {}
        for tool in entry.tools:
            counts[tool.status] = counts.get(tool.status, 0) + 1
        out = ServiceFigures(name, service_kind(entry.source_name, len(entry.tools), entry.categories), counts)
        spec = catalog.spec(name)
        implemented = {t.name for t in entry.tools if t.status == "implemented"}
        out.ignored_filters = _ignored_filters(spec, implemented)
        out.entities = len(spec.entities)
        if seed:
            _seeded_figures(catalog, name, spec, out, world_seed)
        else:
            out.named_entities = sum(1 for e in spec.entities if e.label)
        figures.services.append(out)
    figures.rejected_tools, figures.rejected_services = _rejected(catalog, set(chosen) if names is not None else None)
    return figures


def _ignored_filters(spec: ServiceSpec, implemented: set[str]) -> list[str]:
    tables = frozenset(e.table for e in spec.entities)
    found = []
    for tool in spec.tools:
        if tool.name in implemented:
            ignored = declared_filters(tool, tables)
            if ignored:
                found.append(f"{tool.name}({', '.join(ignored)})")
    return found


def _seeded_figures(catalog: Catalog, name: str, spec: ServiceSpec, out: ServiceFigures, world_seed: int) -> None:
    service = catalog.service(name)
    known = world_names(World.from_seed(world_seed))
    with Episode([service], world_seed) as episode:
        dump = episode.dump()[name]
    for entity in spec.entities:
        rows = list(dump.get(entity.table, {}).values())
        if entity.label and all(isinstance(r.get(entity.label), str) and r[entity.label].strip() for r in rows):
            out.named_entities += 1
        else:
            out.unnamed.append(entity.name)
        columns = {f.name for f in entity.fields if f.type in ("string", "any") and not f.ref}
        refs = {f.name for f in entity.fields if f.ref}
        for row in rows:
            plain = {k: v for k, v in row.items() if k not in refs}
            out.string_values += string_values(plain)
            out.filler_values += [f"{entity.table}.{c}={v} ({shape})" for c, v, shape in filler_values(plain, entity.name, known)]
            for column in columns:
                value = row.get(column)
                if isinstance(value, str):
                    out.string_cells += 1
                    if is_placeholder(value, column, entity.name):
                        out.placeholder_cells.append(f"{entity.table}.{column}={value}")


def _rejected(catalog: Catalog, only: set[str] | None) -> tuple[int, int]:
    for path, opener in ((catalog.root / f"{REPORT}.gz", gzip.open), (catalog.root / REPORT, open)):
        if path.exists():
            with opener(path, "rt") as handle:  # type: ignore[operator]
                report = json.load(handle)
            break
    else:
        return 0, 0
    tools = services = 0
    for service in report.get("services", []):
        if only is not None and service["name"] not in only:
            continue
        tools += sum(1 for t in service.get("tools", []) if t.get("status") == "rejected")
        if service.get("reason") and not any(t.get("status") != "rejected" for t in service.get("tools", [])):
            services += 1
    return tools, services
