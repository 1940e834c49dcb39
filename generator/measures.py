"""Catalog-wide measures of the compiler's root causes (issue 32), one figure each over every service.

Each measure reads the catalog as a user meets it (the spec, the seeded rows, calls on a fresh episode),
never the planner's own claims, and lists what it finds as ``service.tool`` or ``service.table.column``:

- ``plumbing``: a credential or transport parameter (``key``, ``X_Postmark_Server_Token``,
  ``x_apideck_consumer_id``: see ``generator.schemas.service_plumbing``) that a tool filters on or writes,
  or that a table holds as row data;
- ``nested_update_drops``: an update, given one key of an object column (``{"address": {"city": ...}}``),
  loses the object's other keys;
- ``inserting_writes``: a simulated write documented as an update, a delete or an action on a row adds a
  row instead;
- ``idle_actions``: an action on a row (``POST /x/{id}/verb``) that succeeds and leaves its row unchanged;
- ``placeholder_values``: a seeded value shaped like a counter (``name_0006``, ``key_0001``) outside id
  columns, or a column shaped like a query parameter (``filter_end_at``, ``fromdate``);
- ``reversed_ranges``: a seeded row whose end (``end_at``, ``ends_at``, ``end_date``...) is before its start.

A tool the catalog already marks simulated with a reason that names the cause is not counted (it is the
exception the issue allows). ``bench/bench_generator.py --causes`` prints the figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mcp_services.kernel.episode import Episode

from generator.catalog import Catalog
from generator.compiler.runtime import ServiceRuntime
from generator.planner.lexicon import MARKING_VERBS
from generator.compiler.simulated import write_kind
from generator.gate.examples import NoExample, rows_by_entity, valid_example
from generator.gate.surface import Surface, documented_write, route_of
from generator.naming import words
from generator.schemas import service_plumbing
from generator.values import range_pairs, reversed_range
from generator.spec import ServiceSpec, ToolDef

CAUSES = ("plumbing", "nested_update_drops", "inserting_writes", "idle_actions", "placeholder_values",
          "reversed_ranges")
#: A counter in place of a value (``name_0006``, ``clear_0011``): a word, an underscore, four digits.
_COUNTER = re.compile(r"^[a-z][a-z_]*_\d{4}$")
#: Arguments that say how much of a row an action takes (a partial refund's ``amount``, ``amount_money``).
_AMOUNT = re.compile(r"(?i)(^amount|_money$|^amount_)")
#: Column names that are a query's parameters, not a record's fields.
_QUERY_COLUMN = re.compile(r"^(filter_)|(_(gte|lte|gt|lt|before|after|since|until))$|"
                           r"(date|time|_at)_(from|to)$|^(fromdate|todate|datefrom|dateto)$", re.I)
#: Column names that shape a response rather than describe a record (``includetotalcount``, ``page_size``); scalars
#: only: Magento's ``page`` object is the CMS page, Spotify's ``offset`` object where playback starts.
_SHAPING_COLUMN = re.compile(r"^((include|exclude|expand|sort_?by|order_?by)[a-z_]*|page|per_?page|page_?size|"
                             r"page_?number|limit|offset|cursor)$", re.I)


@dataclass
class CauseFigures:
    service: str
    found: dict[str, list[str]] = field(default_factory=lambda: {cause: [] for cause in CAUSES})


@dataclass
class CatalogCauses:
    services: list[CauseFigures] = field(default_factory=list)

    def items(self, cause: str) -> list[str]:
        return [f"{s.service}.{item}" for s in self.services for item in s.found[cause]]

    def summary(self) -> dict[str, tuple[int, int]]:
        """Per cause: (items found, services touched)."""
        return {cause: (len(self.items(cause)), sum(1 for s in self.services if s.found[cause])) for cause in CAUSES}


def measure_catalog(catalog: Catalog, names: list[str] | None = None, world_seed: int = 0) -> CatalogCauses:
    out = CatalogCauses()
    for name in names if names is not None else catalog.names():
        out.services.append(measure_service(catalog, name, world_seed))
    return out


def measure_service(catalog: Catalog, name: str, world_seed: int = 0) -> CauseFigures:
    spec = catalog.spec(name)
    service = catalog.service(name)
    runtime: ServiceRuntime = service.runtime  # type: ignore[attr-defined]
    out = CauseFigures(name)
    out.found["plumbing"] = plumbing_uses(spec)
    with Episode([service], world_seed) as episode:
        dump = episode.dump()[name]
        out.found["placeholder_values"] = placeholder_values(spec, dump)
        out.found["reversed_ranges"] = reversed_ranges(spec, dump)
        rows = rows_by_entity(runtime, {t: dict(r) for t, r in dump.items()})
        surface = Surface(spec)
        for tool_name, tool in service.tools.items():
            definition: ToolDef = getattr(tool, "example_definition", None) or spec.tool(tool_name)
            if tool.effect == "read":
                continue
            found = _probe_write(episode, runtime, surface, spec.tool(tool_name), definition, rows, tool)
            for cause in found:
                out.found[cause].append(tool_name)
    return out


def plumbing_uses(spec: ServiceSpec) -> list[str]:
    """Tools that filter on or write a plumbing parameter, and tables that hold one as a column."""
    in_paths = frozenset(p for t in spec.tools if t.http for p in re.findall(r"\{([^}]+)\}", t.http.path))
    plumbing = service_plumbing([t.parameters.get("properties", {}) for t in spec.tools], in_paths)
    found = [f"{t.name}({p})" for t in spec.tools for p, b in t.bindings.items()
             if p in plumbing and b.role in ("filter", "field", "key", "parent")]
    found += [f"{e.table}.{f.name}" for e in spec.entities for f in e.fields if f.name in plumbing]
    return found


def placeholder_values(spec: ServiceSpec, dump: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    found: list[str] = []
    addressed = _path_keys(spec)
    for entity in spec.entities:
        query_columns = [f.name for f in entity.fields if not f.ref and (entity.name, f.name) not in addressed and (
            _QUERY_COLUMN.search(f.name) or _SHAPING_COLUMN.match(f.name) and f.type not in ("object", "array"))]
        found += [f"{entity.table}.{c} (a query parameter)" for c in query_columns]
        keyed = {f.name for f in entity.fields if f.ref} | {"id"}
        for row in dump.get(entity.table, {}).values():
            for column, value in row.items():
                if column not in keyed and isinstance(value, str) and _COUNTER.match(value):
                    found.append(f"{entity.table}.{column}={value}")
    return found


def _path_keys(spec: ServiceSpec) -> set[tuple[str, str]]:
    """(entity, column) of natural keys a documented path names a row by (Lufthansa's
    ``/getRoute/{origin}-{destination}/{fromDate}/{productCode}``): an address, not a query's parameter."""
    out: set[tuple[str, str]] = set()
    for tool in spec.tools:
        in_path = set(re.findall(r"\{([^}]+)\}", tool.http.path)) if tool.http else set()
        out |= {(tool.behaviour.entity or "", b.column or p) for p, b in tool.bindings.items()
                if b.role == "key" and p in in_path}
    return out


def reversed_ranges(spec: ServiceSpec, dump: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    found: list[str] = []
    for entity in spec.entities:
        pairs = range_pairs([f.name for f in entity.fields])
        for row in dump.get(entity.table, {}).values():
            for start, end in pairs:
                a, b = row.get(start), row.get(end)
                if reversed_range(a, b):
                    found.append(f"{entity.table}.{row.get('id')}: {end} {b!r} < {start} {a!r}")
    return found


def _probe_write(episode: Episode, runtime: ServiceRuntime, surface: Surface, planned: ToolDef, definition: ToolDef,
                 rows: dict[str, list[dict[str, Any]]], tool: Any) -> list[str]:
    """Call a write on stored rows and read what it did."""
    documented = documented_write(planned)
    kind = definition.behaviour.kind
    simulated = bool(getattr(tool, "simulated", False))
    updating = kind == "update" or (simulated and write_kind(runtime, definition) == "update")
    if documented is None and not updating:
        return []
    if simulated and getattr(tool, "refuses", False):
        return []
    try:
        example = valid_example(runtime, definition, rows, episode.world)
    except NoExample:
        return []
    found: list[str] = []
    objects = _object_columns(runtime, definition, example) if updating else {}
    episode.reset()
    before = episode.dump()[runtime.spec.name]
    arguments = dict(example.arguments)
    if documented == "action" and _verb(planned) in MARKING_VERBS:  # refund all of it: the charge is refunded
        required = set(planned.parameters.get("required", []))
        arguments = {k: v for k, v in arguments.items() if k in required or not _AMOUNT.search(k)}
    target = _target(surface, planned, arguments, before)
    if objects:
        arguments.update({param: {key: value} for param, (_, key, value) in objects.items()})
    result = episode.call(runtime.spec.name, planned.name, arguments)
    if not result.success:
        return []
    after = episode.dump()[runtime.spec.name]
    if simulated and documented is not None:
        grown = [t for t in after if t != "simulated_calls" and len(after[t]) > len(before.get(t, {}))]
        if grown:
            found.append("inserting_writes")
    if documented == "action" and target is not None and not _lists_collection(surface, planned):
        table, key = target
        marking = _verb(planned) in MARKING_VERBS  # a refund must show on the charge, not only as a refund row
        if key in after.get(table, {}) and _same(before[table][key], after[table][key]) and (
                marking or not _children_changed(runtime.spec, table, key, before, after)):
            found.append("idle_actions")
    if objects and example.row is not None:
        table = runtime.entity(definition.behaviour.entity or "").table
        row = after.get(table, {}).get(str(example.row.get("id")))
        if row is not None:
            for _, (column, key, _value) in objects.items():
                old, new = example.row.get(column), row.get(column)
                if isinstance(old, dict) and isinstance(new, dict) and set(old) - {key} - set(new):
                    found.append("nested_update_drops")
                    break
    return found


def _object_columns(runtime: ServiceRuntime, definition: ToolDef, example: Any) -> dict[str, tuple[str, str, Any]]:
    """param -> (column, one key, a new value for it) for each object column the update writes, where the
    row holds an object of at least two keys."""
    out: dict[str, tuple[str, str, Any]] = {}
    if example.row is None:
        return out
    for param, binding in definition.bindings.items():
        if binding.role != "field":
            continue
        column = binding.column or param
        old = example.row.get(column)
        schema = definition.parameters.get("properties", {}).get(param, {})
        if isinstance(old, dict) and len(old) >= 2 and schema.get("type") == "object" \
                and not schema.get("required"):
            key = next(k for k in old if isinstance(old[k], str))  if any(isinstance(v, str) for v in old.values()) \
                else None
            if key is not None:
                out[param] = (column, key, f"{old[key]} (changed)")
    return out


def _target(surface: Surface, tool: ToolDef, arguments: dict[str, Any],
            dump: dict[str, dict[str, dict[str, Any]]]) -> tuple[str, str] | None:
    entity = surface.row_entity(tool.name)
    param = surface.row_param(tool.name)
    if entity is None or param is None or param not in arguments:
        return None
    table = next(e.table for e in surface.spec.entities if e.name == entity)
    key = str(arguments[param])
    return (table, key) if key in dump.get(table, {}) else None


def _verb(tool: ToolDef) -> str | None:
    route = route_of(tool)
    return route.action if route is not None else None


def _lists_collection(surface: Surface, tool: ToolDef) -> bool:
    """``POST /projects/{id}/merge_requests`` beside ``GET /projects/{id}/merge_requests``: a create in a
    collection the service lists, not an action on the project (``merge`` is a verb, ``merge_requests`` a noun)."""
    route = surface.routes.get(tool.name)
    return route is not None and route.method == "POST" and any(
        other.method == "GET" and other.path == route.path for other in surface.routes.values())


def _children_changed(spec: ServiceSpec, table: str, key: str, before: dict[str, dict[str, dict[str, Any]]],
                      after: dict[str, dict[str, dict[str, Any]]]) -> bool:
    """Whether rows that name the row (a task's project links, a message's likes) were added, removed or changed:
    removing a tag from a task, liking a message or verifying a verification changes what belongs to it."""
    entity = next(e.name for e in spec.entities if e.table == table)
    for other in spec.entities:
        columns = [f.name for f in other.fields if f.ref == entity]
        if not columns:
            continue
        old, new = before.get(other.table, {}), after.get(other.table, {})
        for row_key in set(old) | set(new):
            rows = [r for r in (old.get(row_key), new.get(row_key)) if r is not None]
            if any(str(r.get(c)) == key for r in rows for c in columns) and (
                    len(rows) == 1 or not _same(rows[0], rows[1])):
                return True
    return False


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return {k: v for k, v in a.items() if k != "updated_at"} == {k: v for k, v in b.items() if k != "updated_at"}
