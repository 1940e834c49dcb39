"""The round-trip suite: a generated service used as a person uses it, through pairs of its own tools.

Each implemented tool takes part in trips, run on a fresh episode through ``Episode.call`` only:

- a create, then the get of the new row (it reads back what was passed), the list of its kind (under the
  parent it was created under) and an update of it (the get shows the change);
- an action on a stored row, as its path or method names it (``/x/{id}/verb``, ``x.verb(x)``), then the row
  read back: still there unless the verb deletes it, and no row of its kind made or lost (whatever the
  planner read the action as);
- an update or a membership change on a stored row, then the get of that row (it changed, as the call
  said) or the list of its members;
- a delete, then the get (not found) and the list (gone);
- a read with no such partner reads a stored row, or lists rows that are all stored.

A tool passes when every trip it is in passes. ``simulated_reads`` checks, for the tools the world
model answers, that a read's answer comes from the episode's rows. ``bench/bench_generator.py
--roundtrip`` prints both over the catalog; ``tests/generator/test_roundtrip.py`` keeps a sample true.
"""

from __future__ import annotations

from collections.abc import Iterable
import random
from dataclasses import dataclass, field
from typing import Any

from mcp_services.kernel.episode import Episode
from mcp_services.kernel.results import ToolResult
from mcp_services.kernel.service import Service

from generator.compiler.runtime import ServiceRuntime
from generator.compiler.validation import make_validator
from generator.gate.examples import Example, NoExample, _fit, _search_word, canonical, holds, rows_by_entity, \
    valid_example
from generator.gate.invariants import RPC_MEMBERSHIP
from generator.gate.surface import DELETING_VERBS, Surface
from generator.planner.lexicon import verb_class
from generator.spec import ToolDef
from generator.values import ValueMaker

_TIMESTAMPS = ("created_at", "updated_at")


@dataclass
class Trip:
    """One use of a tool with its partner: what was done, and what went wrong (empty when it passed)."""

    tools: tuple[str, ...]
    what: str
    problem: str = ""

    @property
    def passed(self) -> bool:
        return not self.problem


@dataclass
class ServiceTrips:
    name: str
    trips: list[Trip] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)  # the implemented tools the suite covers

    def failing(self) -> dict[str, str]:
        """Tool -> the first problem of a trip it is in."""
        out: dict[str, str] = {}
        for trip in self.trips:
            if not trip.passed:
                for tool in trip.tools:
                    out.setdefault(tool, f"{trip.what}: {trip.problem}")
        return out

    @property
    def share(self) -> float:
        if not self.tools:
            return 1.0
        bad = self.failing()
        return sum(1 for t in self.tools if t not in bad) / len(self.tools)


def round_trips(service: Service, implemented: Iterable[str], world_seed: int = 0) -> ServiceTrips:
    """Every trip of the service's implemented tools."""
    runtime: ServiceRuntime = service.runtime  # type: ignore[attr-defined]
    spec = runtime.spec
    chosen = [spec.tool(n) for n in implemented if n in service.tools]
    out = ServiceTrips(service.name, tools=[t.name for t in chosen])
    with Episode([service], world_seed) as episode:
        suite = _Suite(episode, runtime, service.name, {t.name for t in chosen})
        for tool in chosen:
            try:
                out.trips.extend(suite.trips_of(tool))
            except Exception as exc:  # noqa: BLE001 - a trip that cannot run is a failing trip, with its reason
                out.trips.append(Trip((tool.name,), "trip", f"could not run: {type(exc).__name__}: {str(exc)[:100]}"))
    return out


class _Suite:
    def __init__(self, episode: Episode, runtime: ServiceRuntime, service: str, implemented: set[str]) -> None:
        self.episode = episode
        self.runtime = runtime
        self.service = service
        self.implemented = implemented
        episode.reset()
        self.rows = rows_by_entity(runtime, {t: dict(rows) for t, rows in episode.dump()[service].items()})
        self.world = episode.world
        self.surface = Surface(runtime.spec)

    # -- partners, read from the spec ------------------------------------------------------------------------

    def _tools(self, kinds: tuple[str, ...], entity: str) -> list[ToolDef]:
        return [t for t in self.runtime.spec.tools if t.name in self.implemented and t.behaviour.kind in kinds
                and t.behaviour.entity == entity]

    def getter(self, entity: str, row: dict[str, Any] | None = None) -> ToolDef | None:
        """The get-by-id tool of ``entity`` (one whose parents ``row`` has, when given)."""
        return next((t for t in self._tools(("get",), entity) if not t.behaviour.via and not t.behaviour.current
                     and any(b.role == "key" and b.column == "id" for b in t.bindings.values())
                     and (row is None or self._reaches(t, row))), None)

    def _reaches(self, tool: ToolDef, row: dict[str, Any]) -> bool:
        """Whether ``row`` has every parent ``tool`` names a row by."""
        return all(row.get(b.column) is not None for b in tool.bindings.values() if b.role == "parent" and b.column)

    def lister(self, entity: str) -> ToolDef | None:
        return next(iter(sorted(self._tools(("list", "search"), entity),
                                key=lambda t: (t.behaviour.kind != "list", len(t.parameters.get("required", []))))), None)

    # -- running ---------------------------------------------------------------------------------------------

    def call(self, tool: ToolDef, arguments: dict[str, Any]) -> ToolResult:
        properties = tool.parameters.get("properties", {})
        return self.episode.call(self.service, tool.name, {k: _fit(v, properties.get(k, {})) for k, v in arguments.items()})

    def example(self, tool: ToolDef) -> Example | None:
        """A valid call, with every simple parameter named like one of its row's columns filled in (as a person
        filling in a form would), where the call stays valid."""
        try:
            example = valid_example(self.runtime, tool, self.rows, self.world)
        except NoExample:
            return None
        entity = self.runtime.entities.get(tool.behaviour.entity or "")
        if entity is None or tool.behaviour.kind not in ("create", "send"):
            return example
        maker = ValueMaker(self.world, random.Random(f"roundtrip:{tool.name}"))
        validator = make_validator(tool.parameters)
        arguments = dict(example.arguments)
        for param, schema in tool.parameters.get("properties", {}).items():
            column = entity.field(param)
            if param in arguments or column is None or column.ref or column.type not in ("string", "integer", "number"):
                continue
            candidate = {**arguments, param: maker.value(schema, param, semantic=column.semantic, entity=entity.name)}
            if validator.is_valid(candidate):
                arguments = candidate
        return Example(arguments, example.row)

    def read_row(self, getter: ToolDef, row: dict[str, Any]) -> ToolResult | None:
        """The getter called for ``row`` (its id, and the parents the row has)."""
        arguments = self.parent_arguments(getter, row)
        if any(b.role == "parent" and p not in arguments for p, b in getter.bindings.items()):
            return None
        arguments.update({p: row.get(b.column or "id") for p, b in getter.bindings.items() if b.role == "key"})
        completed = self._completed(getter, arguments)
        return self.call(getter, completed) if completed is not None else None

    def parent_arguments(self, tool: ToolDef, row: dict[str, Any]) -> dict[str, Any]:
        """The parameters ``tool`` names ``row``'s parents by, for the parents found: a parent its binding names
        a column for, or one further up (a rate limit's service, for a bucket of the rate limit)."""
        arguments: dict[str, Any] = {}
        for param, binding in tool.bindings.items():
            if binding.role != "parent" or not binding.entity:
                continue
            if binding.column:
                parent = self.runtime_row(binding.entity, row.get(binding.column))
            else:
                parent = self._ancestor(tool.behaviour.entity or "", row, binding.entity)
            if parent is not None:
                arguments[param] = parent.get(binding.lookup or "id")
        return arguments

    def _ancestor(self, entity: str, row: dict[str, Any], wanted: str, depth: int = 3) -> dict[str, Any] | None:
        """The row of kind ``wanted`` that ``row`` reaches through its references, nearest first."""
        frontier = [(entity, row)]
        for _ in range(depth):
            further: list[tuple[str, dict[str, Any]]] = []
            for kind, current in frontier:
                if kind not in self.runtime.entities:
                    continue
                for f in self.runtime.entity(kind).fields:
                    found = self.runtime_row(f.ref, current.get(f.name)) if f.ref and f.ref != kind else None
                    if found is not None and f.ref == wanted:
                        return found
                    if found is not None and f.ref:
                        further.append((f.ref, found))
            frontier = further
        return None

    def _completed(self, tool: ToolDef, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """``arguments`` with the required parameters that name no row (a tenant header, an API version) taken
        from a valid call of ``tool``; None when there is none."""
        required = tool.parameters.get("required", [])
        if all(p in arguments for p in required):
            return arguments
        if any(tool.bindings[p].role in ("key", "parent") for p in required if p not in arguments and p in tool.bindings):
            return None  # the row or its parent is not known: no call names it
        example = self.example(tool)
        if example is None or any(p not in arguments and p not in example.arguments for p in required):
            return None
        return {**{p: example.arguments[p] for p in required if p not in arguments}, **arguments}

    def list_rows(self, lister: ToolDef, row: dict[str, Any]) -> list[Any] | None:
        """The ids ``lister`` lists where ``row`` belongs (its parents as the list's scope), every page."""
        arguments = self.parent_arguments(lister, row)
        required = lister.parameters.get("required", [])
        for param, binding in lister.bindings.items():
            if binding.role == "filter" and param in required and row.get(binding.column or "") is not None:
                arguments[param] = row[binding.column or ""]  # a required scope (a tenant header): the row's own
            elif binding.role == "search" and param in required:
                arguments[param] = _search_word(self.runtime, lister.behaviour.entity or "", row)  # a word of the row
            elif binding.role == "limit":
                most = lister.parameters.get("properties", {}).get(param, {}).get("maximum")
                arguments[param] = int(min(100, most)) if isinstance(most, (int, float)) else 100
        completed = self._completed(lister, arguments)
        if completed is None:
            return None
        arguments = completed
        cursor = next((p for p, b in lister.bindings.items() if b.role in ("cursor", "offset")), None)
        ids: list[Any] = []
        for _ in range(30):
            result = self.call(lister, arguments)
            if not result.success or not isinstance(result.data, dict):
                return None
            ids += [i.get("id") for i in result.data.get("items", []) if isinstance(i, dict)]
            if not result.data.get("next_cursor") or cursor is None:
                break
            arguments[cursor] = result.data["next_cursor"]
        return ids

    def runtime_row(self, entity: str, key: Any) -> dict[str, Any] | None:
        if key is None or entity not in self.runtime.entities:
            return None
        dump = self.episode.dump()[self.service].get(self.runtime.entity(entity).table, {})
        return dump.get(str(key))

    # -- trips -----------------------------------------------------------------------------------------------

    def trips_of(self, tool: ToolDef) -> list[Trip]:
        kind = tool.behaviour.kind
        acted = self._act_then_read(tool)  # read from the documented surface, whatever the planner made of it
        if acted is not None:
            return [acted, *([self._members_change(tool)] if kind in ("link", "unlink") else [])]
        if kind in ("create", "send"):
            return self._after_create(tool)
        if kind in ("update", "transition"):
            return [self._changes_row(tool)]
        if kind == "delete":
            return [self._deletes_row(tool)]
        if kind in ("link", "unlink"):
            return [self._members_change(tool)]
        return [self._reads_state(tool)]

    def _act_then_read(self, tool: ToolDef) -> Trip | None:
        """An action on a row as documented (``/x/{id}/verb``, ``x.verb(x)``), then the row read back: it is still
        there (unless the verb deletes it), and no other row of its kind appeared or went."""
        route = self.surface.routes.get(tool.name)
        if route is None or route.action is None or route.action in DELETING_VERBS:
            return None
        if route.rpc and verb_class(route.action) in ("create", "send", "list", "get") and route.action not in RPC_MEMBERSHIP:
            return None
        entity, param = self.surface.row_entity(tool.name), self.surface.row_param(tool.name)
        if entity is None or param is None:
            return None
        table = self.runtime.entity(entity).table
        self.episode.reset()
        stored = self.episode.dump()[self.service].get(table, {})
        example = self.example(tool)
        if example is None or not stored:
            return Trip((tool.name,), f"{route.action}, then read the {entity}", "no valid call could be built")
        # the row is named as the tool names it: by its id, or by the natural key its binding reads (an
        # application by its applicationName), so a person passes that column's value, never the row's id
        binding = tool.bindings.get(param)
        column = binding.column or "id" if binding is not None and binding.role == "key" else "id"
        value = example.arguments.get(param)
        mine = str(example.row.get("id")) if example.row is not None else None
        if mine in stored and canonical(stored[mine].get(column)) == canonical(value):
            row_id = mine  # the example's own row (its parents in the call too)
        else:
            named = [k for k, r in stored.items() if value is not None and canonical(r.get(column)) == canonical(value)]
            row_id = named[0] if len(named) == 1 else (mine if mine in stored else next(iter(stored)))
            value = self.runtime.coerce(entity, column, stored[row_id].get(column))
        result = self.call(tool, {**example.arguments, param: value})
        if not result.success:
            code = str(result.error_code)
            return Trip((tool.name,), f"{route.action}, then read the {entity}",
                        "" if code == "invalid_state" else f"it failed: {code}")
        after = self.episode.dump()[self.service].get(table, {})
        what = f"{route.action} the {entity}, then read it"
        if row_id not in after:
            return Trip((tool.name,), what, f"the {entity} {value!r} it acted on is gone")
        if len(after) != len(stored):
            return Trip((tool.name,), what, f"{len(after) - len(stored):+d} {entity} rows after acting on one")
        getter = self.getter(entity, after[row_id])
        if getter is not None:
            got = self.read_row(getter, after[row_id])
            if got is not None and not got.success:
                return Trip((tool.name, getter.name), what, f"the {entity} cannot be read: {got.error_code}")
        return Trip((tool.name,), what)

    def _fresh_example(self, tool: ToolDef) -> tuple[Example | None, ToolResult | None]:
        self.episode.reset()
        example = self.example(tool)
        if example is None:
            return None, None
        return example, self.call(tool, example.arguments)

    def _after_create(self, tool: ToolDef) -> list[Trip]:
        entity = tool.behaviour.entity or ""
        example, made = self._fresh_example(tool)
        if example is None or made is None or not made.success or not isinstance(made.data, dict):
            problem = "no valid call could be built" if example is None else f"it failed: {made and made.error_code}"
            return [Trip((tool.name,), "create", problem)]
        created = made.data
        trips: list[Trip] = []
        addressing = {p for p, b in tool.bindings.items() if b.role in ("parent", "key", "via", "member")}
        lost = [k for k, v in example.arguments.items() if k in created and k != "id" and k not in addressing
                and not isinstance(v, (dict, list)) and canonical(created[k]) != canonical(self.runtime.coerce(entity, k, v))]
        if lost:  # an argument named like a column of the new row is what the row holds
            trips.append(Trip((tool.name,), "create", f"{lost[0]} is {created[lost[0]]!r}, not the {lost[0]} passed"))
        getter, lister = self.getter(entity, created), self.lister(entity)
        if getter is not None:
            got = self.read_row(getter, created)
            if got is not None:
                problem = "" if got.success and _same(got.data, created) else \
                    (f"{got.error_code}" if not got.success else "it read back another row")
                trips.append(Trip((tool.name, getter.name), "create, then get", problem))
        if lister is not None:
            ids = self.list_rows(lister, created)
            if ids is not None:
                trips.append(Trip((tool.name, lister.name), "create, then list",
                                  "" if created["id"] in ids else "the new row is not listed"))
        updater = next((u for u in self._tools(("update",), entity) if self._reaches(u, created)), None)
        if updater is not None and getter is not None:
            trips.append(self._update_of(updater, getter, created, (tool.name, updater.name, getter.name)))
        if not trips:
            stored = self.runtime_row(entity, created["id"])
            trips.append(Trip((tool.name,), "create, then look in the state", "" if stored else "no row was stored"))
        return trips

    def _update_of(self, updater: ToolDef, getter: ToolDef, row: dict[str, Any], tools: tuple[str, ...]) -> Trip:
        example = self.example(updater)
        if example is None:
            return Trip(tools, "create, then update", "no valid update call could be built")
        arguments = {**example.arguments, **self.parent_arguments(updater, row)}
        arguments.update({p: row.get(b.column or "id") for p, b in updater.bindings.items() if b.role == "key"})
        changed = self.call(updater, arguments)
        if not changed.success:
            return Trip(tools, "create, then update", f"the update failed: {changed.error_code}")
        got = self.read_row(getter, self._now(updater, row))
        if got is None or not got.success:
            return Trip(tools, "create, then update", "the updated row cannot be read")
        written = {b.column: arguments[p] for p, b in updater.bindings.items() if b.role == "field" and p in arguments}
        wrong = [c for c, v in written.items() if c and not
                 holds(got.data.get(c), self.runtime.coerce(updater.behaviour.entity or "", c, v))]
        return Trip(tools, "create, then update", f"{wrong[0]} did not change" if wrong else "")

    def _now(self, tool: ToolDef, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` as stored after ``tool`` changed it: read where it is now (a card moved to another board
        is read under that board)."""
        return self.runtime_row(tool.behaviour.entity or "", row.get("id")) or row

    def _changes_row(self, tool: ToolDef) -> Trip:
        entity = tool.behaviour.entity or ""
        getter = self.getter(entity)
        example, result = self._fresh_example(tool)
        what = "update, then get" if tool.behaviour.kind == "update" else "act, then get"
        if example is None or result is None:
            return Trip((tool.name,), what, "no valid call could be built")
        if not result.success:
            return Trip((tool.name,), what, f"it failed: {result.error_code}")
        row = example.row or (result.data if isinstance(result.data, dict) else None)
        if getter is None or row is None:
            return Trip((tool.name,), what.split(",")[0], "" if isinstance(result.data, dict) else "no row came back")
        got = self.read_row(getter, self._now(tool, row))
        if got is None:
            return Trip((tool.name,), what.split(",")[0], "")
        if not got.success:
            return Trip((tool.name, getter.name), what, f"the row cannot be read: {got.error_code}")
        transition = tool.behaviour.transition
        if transition is not None and canonical(got.data.get(transition.field)) != canonical(transition.to):
            return Trip((tool.name, getter.name), what, f"{transition.field} is {got.data.get(transition.field)!r}, "
                                                        f"not {transition.to!r}")
        written = {b.column: example.arguments[p] for p, b in tool.bindings.items()
                   if b.role == "field" and p in example.arguments and b.column}
        wrong = [c for c, v in written.items() if not holds(got.data.get(c), self.runtime.coerce(entity, c, v))]
        return Trip((tool.name, getter.name), what, f"{wrong[0]} is not what was passed" if wrong else "")

    def _deletes_row(self, tool: ToolDef) -> Trip:
        entity = tool.behaviour.entity or ""
        example, result = self._fresh_example(tool)
        if example is None or result is None or not result.success or example.row is None:
            return Trip((tool.name,), "delete", "no valid call could be built" if example is None else
                        f"it failed: {result and result.error_code}")
        getter, lister = self.getter(entity), self.lister(entity)
        tools: tuple[str, ...] = (tool.name,)
        if getter is not None:
            got = self.read_row(getter, example.row)
            tools += (getter.name,)
            if got is not None and (got.success or str(got.error_code) != "not_found"):
                return Trip(tools, "delete, then get", "the deleted row can still be read")
        if lister is not None:
            ids = self.list_rows(lister, example.row)
            tools += (lister.name,)
            if ids is not None and example.row.get("id") in ids:
                return Trip(tools, "delete, then list", "the deleted row is still listed")
        gone = self.runtime_row(entity, example.row.get("id")) is None
        return Trip(tools, "delete, then read", "" if gone else "the row is still stored")

    def _members_change(self, tool: ToolDef) -> Trip:
        entity = tool.behaviour.entity or ""
        lister = self.lister(entity)
        example, result = self._fresh_example(tool)
        if example is None or result is None or not result.success:
            return Trip((tool.name,), "change members", "no valid call could be built" if example is None else
                        f"it failed: {result and result.error_code}")
        links = self.episode.dump()[self.service].get(self.runtime.entity(entity).table, {})
        owner = self.runtime.entity(entity).owner_field
        parent_id = result.data.get("id") if isinstance(result.data, dict) else None
        if lister is None or owner is None:
            return Trip((tool.name,), "change members", "")
        ids = self.list_rows(lister, {owner.name: parent_id})
        mine = {k for k, r in links.items() if r.get(owner.name) == parent_id}
        if ids is None:
            return Trip((tool.name, lister.name), "change members, then list them", "the members cannot be listed")
        shown = {str(i) for i in ids}
        return Trip((tool.name, lister.name), "change members, then list them",
                    "" if shown == mine else "the list of members does not match who is in")

    def _reads_state(self, tool: ToolDef) -> Trip:
        example, result = self._fresh_example(tool)
        if example is None or result is None:
            return Trip((tool.name,), "read", "no valid call could be built")
        if not result.success:
            return Trip((tool.name,), "read", f"it failed: {result.error_code}")
        entity = tool.behaviour.entity or ""
        stored = {str(r.get("id")) for r in self.rows.get(entity, [])}
        data = result.data if isinstance(result.data, dict) else {}
        paged = "items" in data and "total" in data
        shown = [i.get("id") for i in data["items"] if isinstance(i, dict)] if paged else [data.get("id")]
        strays = [i for i in shown if i is not None and str(i) not in stored]
        return Trip((tool.name,), "read stored rows", f"{strays[0]!r} is not a stored row" if strays else "")


def _same(read: Any, created: dict[str, Any]) -> bool:
    """The row read back is the created one, with the values it was created with."""
    if not isinstance(read, dict):
        return False
    return all(canonical(read.get(k)) == canonical(v) for k, v in created.items() if k not in _TIMESTAMPS)


# -- simulated reads -------------------------------------------------------------------------------------------


@dataclass
class StateReads:
    """Simulated reads of a service: how many there are, and which answer from the episode's rows."""

    name: str
    reads: list[str] = field(default_factory=list)
    from_state: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    #: Simulated reads of no entity (Drive's ``about`` as the specs file gives it, an OAuth ``authorize``): the
    #: world model answers them from their specification, by design; not counted in ``reads``.
    from_spec: list[str] = field(default_factory=list)


def simulated_reads(service: Service, world_seed: int = 0) -> StateReads:
    """For each simulated read: is it answered from the rows (its answer shows stored ids, an unknown id is
    not found, a row written since shows up)?"""
    runtime: ServiceRuntime = service.runtime  # type: ignore[attr-defined]
    out = StateReads(service.name)
    with Episode([service], world_seed) as episode:
        rows = rows_by_entity(runtime, {t: dict(r) for t, r in episode.dump()[service.name].items()})
        for name, tool in service.tools.items():
            if not getattr(tool, "simulated", False) or tool.effect != "read":
                continue
            if tool.definition.behaviour.entity is None:
                out.from_spec.append(name)
                continue
            out.reads.append(name)
            problem = _answers_from_state(episode, runtime, tool, rows)
            if problem:
                out.problems[name] = problem
            else:
                out.from_state.append(name)
    return out


def _answers_from_state(episode: Episode, runtime: ServiceRuntime, tool: Any, rows: dict[str, list[dict[str, Any]]]) -> str:
    if not tool.answers_from_state:
        return "its world model answers without rows (no entity its output maps to)"
    definition = tool.example_definition
    try:
        example = valid_example(runtime, definition, rows, episode.world)
    except NoExample as exc:
        return str(exc)
    episode.reset()
    result = episode.call(runtime.spec.name, tool.name, example.arguments)
    if not result.success:
        return f"a call on stored rows failed: {result.error_code}"
    entity = definition.behaviour.entity or ""
    stored = {canonical(r.get("id")) for r in rows.get(entity, [])}
    shown = _ids_in(result.data)
    if not shown & stored and stored and (definition.behaviour.kind == "get" or shown):
        return "its answer shows none of the stored rows"
    if shown - stored:
        return f"its answer shows rows that are not stored ({sorted(shown - stored)[:2]})"
    keyed = next((p for p, b in definition.bindings.items() if b.role == "key"), None)
    if keyed is not None:
        properties = definition.parameters.get("properties", {})
        missing = 987_654_321 if properties.get(keyed, {}).get("type") == "integer" else "zz_missing_0000"
        again = episode.call(runtime.spec.name, tool.name, {**example.arguments, keyed: missing})
        if again.success or str(again.error_code) not in ("not_found", "invalid_argument"):
            return "an unknown id was answered"
    return ""


def _ids_in(data: Any) -> set[str]:
    if isinstance(data, dict):
        items = data.get("items")
        if isinstance(items, list):
            return {canonical(i.get("id")) for i in items if isinstance(i, dict) and "id" in i}
        if "id" in data:
            return {canonical(data["id"])}
        for value in data.values():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                return {canonical(v.get("id")) for v in value if "id" in v}
    return set()
