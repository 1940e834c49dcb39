"""The gate's contract tests for one service, in process (the worker runs this in a subprocess).

Per tool: schemas valid (JSON Schema meta-schema, MCP ``Tool``); a valid call succeeds and its data
matches the tool's data schema; the same call on a fresh episode gives the same result and state;
reads change nothing; bad input (an extra argument, a missing one, a wrong type) is refused with
``invalid_argument`` and changes nothing; an unknown id is ``not_found`` and changes nothing;
create -> get round-trips; delete -> get is ``not_found``; a transition cannot be repeated.
Then the behavioural checks of ``behaviour.py`` (filters narrow, creates are listed, updates and
actions change only what they say). Per service: the seed is deterministic and consistent (tables filled, references resolve, rows
match their schemas). A tool is ``implemented`` only when every check is green.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.episode import Episode
from mcp_services.kernel.records import Query
from mcp_services.kernel.results import ToolResult
from mcp_services.kernel.service import Service
from mcp_services.kernel.tools import ToolSpec

from generator.compiler import compile_service
from generator.query.apply import with_languages
from generator.compiler.runtime import ServiceRuntime
from generator.compiler.tools import CustomFunction
from generator.compiler.validation import make_validator, problems
from generator.gate.behaviour import Failed, run_behaviour
from generator.gate.invariants import examples, ids_round_trip, run_invariants
from generator.gate.examples import (
    Example,
    NoExample,
    Rows,
    canonical,
    holds,
    missing_value,
    rows_by_entity,
    valid_example,
    wrong_type,
)
from generator.gate.report import Check, ServiceVerdict, Status, ToolVerdict
from generator.planner.scope import OUTSIDE_CORE
from generator.schemas import SchemaRejected, check_schema, mcp_tool_problems
from generator.spec import ServiceSpec, ToolDef
from generator.worldmodel import OfflineWorldModel

EXTRA = "zz_unexpected_argument"


def gate_service(
    spec: ServiceSpec,
    *,
    custom: Mapping[str, CustomFunction] | None = None,
    world_seed: int = 0,
    demote: bool = True,
) -> tuple[ServiceVerdict, ServiceSpec | None]:
    """Gate every tool of ``spec``; failing tools become simulated (when ``demote``) and are gated again.

    Returns the verdict and the spec to keep (rejected tools removed), or None if nothing survives.
    """
    started = time.perf_counter()
    spec = with_languages(spec)  # gate what the compiler runs: query parameters in their products' dialects
    verdict = ServiceVerdict(name=spec.name, source=spec.source)
    first = _gate_all(spec, custom, world_seed)
    if isinstance(first, str):
        verdict.reason = first
        verdict.tools = [ToolVerdict(t.name, "rejected", first) for t in spec.tools]
        verdict.seconds = time.perf_counter() - started
        return verdict, None
    failing = {name for name, checks in first.items() if any(not c.passed for c in checks)}
    kept = spec
    later: dict[str, list[Check]] = {}  # the checks of the last pass each failing tool went through
    if demote and failing:
        compiled = {n for n in failing if spec.tool(n).behaviour.kind != "simulated"}
        kept = demote_tools(spec, compiled, first)
        if compiled:
            later.update(_passes(kept, custom, world_seed, compiled))
        # a simulated tool that cannot answer from its entity's rows is answered without them
        unmapped = {n for n in failing if (n not in later or not _green(later[n])) and kept.tool(n).behaviour.entity}
        if unmapped:
            kept = detach_tools(kept, unmapped)
            for name, checks in _passes(kept, custom, world_seed, unmapped).items():
                later[name] = later.get(name, []) + checks
    for tool in spec.tools:
        checks = first[tool.name]
        if tool.name not in failing:
            status: Status = "simulated" if tool.behaviour.kind == "simulated" else "implemented"
            reason = _simulated_reason(tool) if status == "simulated" else ""
            verdict.tools.append(ToolVerdict(tool.name, status, reason, checks))
            continue
        failure = _summary(checks)
        again = later.get(tool.name)
        if again is not None and _green(again[-_last_pass(again):]):
            reason = (f"compiled behaviour failed the gate: {failure}" if tool.behaviour.kind != "simulated"
                      else f"{_simulated_reason(tool)}; not from its rows: {failure}")
            verdict.tools.append(ToolVerdict(tool.name, "simulated", reason, checks + again))
        else:
            why = _summary(again) if again else failure
            verdict.tools.append(ToolVerdict(tool.name, "rejected", why, checks + (again or [])))
    rejected = {t.name for t in verdict.tools if t.status == "rejected"}
    final = None
    survivors = [t for t in kept.tools if t.name not in rejected]
    if survivors:
        final = kept.model_copy(update={"tools": survivors}) if rejected else kept
    verdict.seconds = time.perf_counter() - started
    return verdict, final


def _passes(spec: ServiceSpec, custom: Mapping[str, CustomFunction] | None, world_seed: int,
            only: set[str]) -> dict[str, list[Check]]:
    """One more gate pass over ``only``; a pass that cannot run at all fails each of them with its reason."""
    found = _gate_all(spec, custom, world_seed, only=only)
    if isinstance(found, str):
        return {name: [Check("service", False, found)] for name in only}
    return {name: [Check("pass", True), *checks] for name, checks in found.items()}


def _green(checks: list[Check]) -> bool:
    return all(c.passed for c in checks)


def _last_pass(checks: list[Check]) -> int:
    """How many of ``checks`` the last gate pass added (each pass starts with a ``pass`` marker)."""
    starts = [i for i, c in enumerate(checks) if c.name == "pass"]
    return len(checks) - starts[-1] if starts else len(checks)


def detach_tools(spec: ServiceSpec, names: set[str]) -> ServiceSpec:
    """``spec`` with ``names`` answered by the world model without their entity's rows (it cannot map them)."""
    tools = []
    for tool in spec.tools:
        if tool.name in names:
            result = tool.result
            tools.append(tool.model_copy(update={
                "behaviour": tool.behaviour.model_copy(update={"entity": None, "via": None, "current": False}),
                "bindings": {}, "result": result}))
        else:
            tools.append(tool)
    return spec.model_copy(update={"tools": tools})


def _simulated_reason(tool: ToolDef) -> str:
    if tool.behaviour.planned is not None:
        return f"marked simulated by the planner: {OUTSIDE_CORE}"
    return "marked simulated by the planner: the world model answers it"


def _summary(checks: list[Check] | None) -> str:
    failed = [c for c in checks or [] if not c.passed]
    if not failed:
        return "failed"
    first = failed[0]
    return f"{first.name}: {first.detail}"[:300]


def demote_tools(spec: ServiceSpec, names: set[str], checks: dict[str, list[Check]] | None = None) -> ServiceSpec:
    """``spec`` with ``names`` answered by the world model, keeping the data schema their behaviour had."""
    service = compile_service(spec, custom=None, world_model=OfflineWorldModel()) if any(
        t.behaviour.kind not in ("simulated", "custom") for t in spec.tools if t.name in names) else None
    tools = []
    for tool in spec.tools:
        if tool.name in names and tool.behaviour.kind != "simulated":
            result = tool.result
            if result is None and service is not None and tool.name in service.tools:
                result = service.tools[tool.name].data_schema
            reads = tool.behaviour.kind in ("get", "list", "search")
            tools.append(tool.model_copy(update={
                "behaviour": tool.behaviour.model_copy(update={
                    "kind": "simulated", "transition": None, "function": None, "planned": tool.behaviour.kind,
                    "marks": None, "marks_entity": None, "children": None,  # what only the compiled create does
                    "via": tool.behaviour.via if reads else None, "current": tool.behaviour.current and reads}),
                # a read keeps what its parameters mean: the world model answers it from those rows
                "bindings": {p: b for p, b in tool.bindings.items() if reads or b.role in ("key", "parent")},
                "result": result,
            }))
        else:
            tools.append(tool)
    return spec.model_copy(update={"tools": tools})


# -- one pass over a service ---------------------------------------------------------------------------


def _gate_all(
    spec: ServiceSpec, custom: Mapping[str, CustomFunction] | None, world_seed: int, only: set[str] | None = None
) -> dict[str, list[Check]] | str:
    try:
        service = compile_service(spec, custom=custom, world_model=OfflineWorldModel())
    except Exception as exc:  # noqa: BLE001 - any compile failure rejects the service with its reason
        return f"does not compile: {type(exc).__name__}: {str(exc)[:200]}"
    try:
        episode = Episode([service], world_seed)
    except Exception as exc:  # noqa: BLE001
        return f"seeding failed: {type(exc).__name__}: {str(exc)[:200]}"
    # Freed space inside SQLite pages keeps stale bytes; zeroing it makes equal states equal images,
    # so "changed nothing" and "same state" are byte comparisons instead of full dumps.
    episode.stores[spec.name]._raw.execute("PRAGMA secure_delete=ON")  # noqa: SLF001 - gate-only setting
    try:
        runtime: ServiceRuntime = service.runtime  # type: ignore[attr-defined]
        initial = typed_dump(episode, spec.name, runtime)
        rows = rows_by_entity(runtime, initial)
        seed_problems = _seed_problems(spec, runtime, episode, initial, world_seed, reseed=only is None)
        results: dict[str, list[Check]] = {}
        shared: dict[str, Any] = {}
        gated: dict[str, ToolChecks] = {}
        for definition in spec.tools:
            if only is not None and definition.name not in only:
                continue
            tool = service.tools[definition.name]
            gated[definition.name] = ToolChecks(service, episode, runtime, definition, tool, rows, shared)
        for name, tc in gated.items():  # every valid example first: the invariants pair tools
            tc.prepare()
        for name, tc in gated.items():
            checks = tc.run()
            entity = tc.definition.behaviour.entity
            if entity in seed_problems and tc.definition.behaviour.kind != "simulated":
                checks.append(Check("seeded_state", False, seed_problems[entity]))
            if "*" in seed_problems:
                checks.append(Check("seeded_state", False, seed_problems["*"]))
            results[name] = checks
        ids_round_trip({n: tc for n, tc in gated.items() if tc.definition.behaviour.kind not in ("simulated",)})
        return results
    finally:
        episode.close()


def typed_dump(episode: Episode, service: str, runtime: ServiceRuntime) -> dict[str, dict[str, dict[str, Any]]]:
    """Like ``Episode.dump`` but with values in their column types (booleans as booleans)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    with episode.stores[service].transaction(read_only=True) as tx:
        for name, records in runtime.records.items():
            rows = [records.dump(r) for r in Query[Any](tx.conn, records).in_insertion_order().all()]
            out[records.table.name] = {str(r["id"]): r for r in rows}
    return out


def _seed_problems(spec: ServiceSpec, runtime: ServiceRuntime, episode: Episode, initial: dict[str, Any],
                   world_seed: int, reseed: bool = True) -> dict[str, str]:
    """Entity -> what is wrong with its seeded rows ("*" for the whole service)."""
    found: dict[str, str] = {}
    again = compile_service(spec, custom=None, world_model=OfflineWorldModel()) if reseed and not any(
        t.behaviour.kind == "custom" for t in spec.tools) else None
    if again is not None:
        with Episode([again], world_seed) as other:
            if canonical(typed_dump(other, spec.name, again.runtime)) != canonical(initial):  # type: ignore[attr-defined]
                found["*"] = "the same world seed gave a different seeded state"
    for entity in spec.entities:
        table_rows = list(initial.get(entity.table, {}).values())
        if not table_rows and entity.seed_rows and not entity.per_parent:
            found[entity.name] = f"table {entity.table} is empty after seeding"
            continue
        validator = make_validator(runtime.row_schema(entity.name))
        for row in table_rows:
            bad = problems(validator, row, limit=1)
            if bad:
                found[entity.name] = f"a seeded {entity.name} does not match its schema: {bad[0]}"
                break
        for f in entity.fields:
            if f.ref and f.ref in runtime.entities and f.ref != entity.name:
                ids = set(initial.get(runtime.entity(f.ref).table, {}))
                dangling = [r[f.name] for r in table_rows if r.get(f.name) is not None and str(r[f.name]) not in ids]
                if dangling:
                    found[entity.name] = f"{entity.name}.{f.name} refers to missing {f.ref} {dangling[0]!r}"
        if entity.state:
            odd = [r.get(entity.state.field) for r in table_rows if r.get(entity.state.field) not in entity.state.values]
            if odd:
                found[entity.name] = f"a seeded {entity.name} has state {odd[0]!r}, not one of its states"
    return found


class ToolChecks:
    """The contract checks of one tool against one seeded episode (reset between checks)."""

    def __init__(self, service: Service, episode: Episode, runtime: ServiceRuntime, definition: ToolDef,
                 tool: ToolSpec, rows: Rows, shared: dict[str, Any] | None = None) -> None:
        self.shared = shared if shared is not None else {}  # per service: canonical dumps of images seen
        self.service = service
        self.episode = episode
        self.runtime = runtime
        self.definition = definition
        self.tool = tool
        self.rows = rows
        self.checks: list[Check] = []
        self.example: Example | None = None
        self._no_example = "no valid example call could be built"
        self.result: ToolResult | None = None

    def prepare(self) -> None:
        """Build the valid example call (recorded for the invariants that pair this tool with others)."""
        definition = getattr(self.tool, "example_definition", self.definition)  # a simulated tool's mapping
        try:
            self.example = valid_example(self.runtime, definition, self.rows, self.episode.world)
        except NoExample as exc:
            self._no_example = str(exc)
            return
        examples(self)[self.name] = self.example

    def run(self) -> list[Check]:
        self._check("schemas", self._schemas)
        if getattr(self.tool, "refuses", False):  # a simulated write it cannot map: refused, nothing changed
            self._check("refused_not_implemented", self._refused)
            self._check("bad_input", self._bad_input)
            return self.checks
        if not self._check("valid_call", self._valid_call):
            self._check("bad_input", self._bad_input)
            examples(self).pop(self.name, None)
            return self.checks
        self._check("deterministic", self._deterministic)
        kind = self.definition.behaviour.kind
        if self.tool.effect == "read":
            self._check("read_changes_nothing", self._read_changes_nothing)
        self._check("bad_input", self._bad_input)
        if kind in ("get", "update", "delete", "transition") and self._key_param() is not None:
            self._check("unknown_id_not_found", self._not_found)
        if kind in ("create", "send"):
            self._check("create_get_round_trip", self._round_trip)
        elif kind == "update":
            self._check("update_applies", self._update_applies)
        elif kind == "delete":
            self._check("delete_then_get_not_found", self._delete_not_found)
        elif kind == "transition":
            self._check("transition_not_repeatable", self._transition)
        if kind != "simulated":
            run_behaviour(self)  # the behavioural gate: does it do what the API says?
            run_invariants(self)  # the product's invariants: does it behave like the product?
        elif self._referenced_param() is not None:
            self._check("unknown_id_not_found", lambda: self._not_found(self._referenced_param()))  # world model contract
        return self.checks

    def _check(self, name: str, fn: Callable[[], None]) -> bool:
        try:
            fn()
        except Failed as exc:
            self.checks.append(Check(name, False, str(exc)[:300]))
            return False
        except Exception as exc:  # noqa: BLE001 - a crash in a check is that check failing
            self.checks.append(Check(name, False, f"{type(exc).__name__}: {str(exc)[:250]}"))
            return False
        self.checks.append(Check(name, True))
        return True

    # -- helpers ---------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.definition.name

    def call(self, arguments: dict[str, Any]) -> ToolResult:
        return self.episode.call(self.service.name, self.name, arguments)

    def fresh(self) -> None:
        self.episode.reset()
        # a restored image starts a new database: secure_delete (see _gate_all) must be set again
        self.episode.stores[self.service.name]._raw.execute("PRAGMA secure_delete=ON")  # noqa: SLF001

    def snapshot(self) -> bytes:
        return self.episode.stores[self.service.name].snapshot()

    def same_state(self, a: bytes, b: bytes) -> bool:
        """Logically equal states: the same image, or (images can differ in layout) the same rows."""
        if a == b:
            return True
        key = (hash(a), hash(b))
        known = self.shared.setdefault("same", {})
        if key not in known:
            known[key] = self._canonical_image(a) == self._canonical_image(b)
        return bool(known[key])

    def _canonical_image(self, image: bytes) -> str:
        cache = self.shared.setdefault("canonical", {})
        if image not in cache:
            if len(cache) > 8:
                cache.clear()
            cache[image] = canonical(self.episode.stores[self.service.name].dump_image(image))
        return cache[image]

    def replay(self) -> ToolResult:
        """The valid call again on a fresh episode: the state behaviour checks start from."""
        assert self.example is not None
        self.fresh()
        return self.call(self.example.arguments)

    def expect_error(self, arguments: dict[str, Any], code: str, what: str) -> None:
        self.fresh()
        before = self.snapshot()
        result = self.call(arguments)
        if result.success:
            raise Failed(f"{what}: the call succeeded")
        if str(result.error_code) != code:
            raise Failed(f"{what}: expected {code}, got {result.error_code} ({(result.error_message or '')[:120]})")
        if not (result.error_message or "").strip():
            raise Failed(f"{what}: the error has no message")
        if not self.same_state(self.snapshot(), before):
            raise Failed(f"{what}: the failed call changed the state")

    def expect_refused(self, arguments: dict[str, Any], what: str) -> None:
        """The call fails (with any error and a message) and changes nothing."""
        self.fresh()
        before = self.snapshot()
        result = self.call(arguments)
        if result.success:
            raise Failed(f"{what}: the call succeeded")
        if not (result.error_message or "").strip():
            raise Failed(f"{what}: the error has no message")
        if not self.same_state(self.snapshot(), before):
            raise Failed(f"{what}: the failed call changed the state")

    def _find(self, entity: str | None, key: Any) -> dict[str, Any] | None:
        """A row as stored now (outside any tool call)."""
        if entity is None or key is None:
            return None
        store = self.episode.stores[self.service.name]
        with store.transaction(read_only=True) as tx:
            return self.runtime.find(ToolContext(tx, self.episode.world, self.service.name), entity, {"id": key})

    def _key_param(self) -> str | None:
        behaviour = self.definition.behaviour
        if behaviour.current:
            return None
        for param, binding in self.definition.bindings.items():
            if binding.role in ("key", "via"):
                return param
        definition = self.runtime.entities.get(behaviour.entity or "")
        if definition is not None and definition.per_parent:
            for param, binding in self.definition.bindings.items():
                if binding.role == "parent":
                    return param
        return None

    # -- checks ----------------------------------------------------------------------------------------

    def _schemas(self) -> None:
        try:
            check_schema(self.tool.input_schema)
            check_schema(self.tool.data_schema)
            check_schema(self.tool.output_schema)
        except SchemaRejected as exc:
            raise Failed(str(exc)) from None
        annotations = {"readOnlyHint": self.tool.effect == "read", "openWorldHint": False}
        found = mcp_tool_problems({
            "name": self.tool.qualified_name,
            "description": self.tool.description,
            "inputSchema": self.tool.input_schema,
            "outputSchema": self.tool.output_schema,
            "annotations": annotations,
        })
        if found:
            raise Failed(f"not a valid MCP Tool: {found[0]}")
        if len(self.tool.qualified_name) > 128:
            raise Failed("the served name service__tool is longer than 128 characters")

    def _valid_call(self) -> None:
        if self.example is None:
            self.prepare()
        if self.example is None:
            raise Failed(self._no_example)
        self.fresh()
        before = self.snapshot()
        result = self.call(self.example.arguments)
        if not result.success:
            raise Failed(f"a valid call failed: {result.error_code}: {(result.error_message or '')[:200]}")
        bad = problems(make_validator(self.tool.data_schema), result.data, limit=1)
        if bad:
            raise Failed(f"the result does not match the data schema: {bad[0]}")
        self.result = result
        self._before = before
        self._after = self.snapshot()

    def _refused(self) -> None:
        try:
            self.example = self.example or valid_example(self.runtime, self.definition, self.rows, self.episode.world)
        except NoExample as exc:
            raise Failed(str(exc)) from None
        self.expect_error(self.example.arguments, "not_implemented", "a simulated write it cannot map")

    def _deterministic(self) -> None:
        assert self.example is not None and self.result is not None
        # SQLite lays out the first write after a restore differently from later identical ones, so
        # the images of the 2nd and 3rd runs are compared; rows are compared only if those differ.
        images = []
        for _ in range(2):
            self.fresh()
            again = self.call(self.example.arguments)
            if canonical(again.envelope()) != canonical(self.result.envelope()):
                raise Failed("the same call on a fresh episode gave a different result")
            images.append(self.snapshot())
        if not self.same_state(images[0], images[1]):
            raise Failed("the same call on a fresh episode left a different state")

    def _read_changes_nothing(self) -> None:
        if not self.same_state(self._after, self._before):
            raise Failed("a read tool changed the state")

    def _bad_input(self) -> None:
        arguments = dict(self.example.arguments) if self.example else {}
        self.expect_error({**arguments, EXTRA: 1}, "invalid_argument", "an unknown argument")
        required = list(self.tool.input_schema.get("required", []))
        if required and self.example is not None:
            missing = {k: v for k, v in arguments.items() if k != required[0]}
            self.expect_error(missing, "invalid_argument", f"without the required {required[0]!r}")
        properties = self.tool.input_schema.get("properties", {})
        for param in list(arguments) or list(properties):
            wrong = wrong_type(properties.get(param, {}))
            if wrong is not None:
                self.expect_error({**arguments, param: wrong}, "invalid_argument", f"{param!r} of the wrong type")
                break

    def _not_found(self, param: str | None = None) -> None:
        """An unknown id in ``param`` (default: the key) is ``not_found`` and changes nothing."""
        assert self.example is not None
        param = param or self._key_param()
        assert param is not None
        schema = self.tool.input_schema.get("properties", {}).get(param, {})
        arguments = {**self.example.arguments, param: missing_value(schema)}
        if make_validator(self.tool.input_schema).is_valid(arguments):
            self.expect_error(arguments, "not_found", f"an unknown id in {param!r}")

    def _referenced_param(self) -> str | None:
        """The first argument of a simulated call that names a row by id (``charge_id``)."""
        from generator.compiler.simulated import reference_entity

        assert self.example is not None
        entity = self.definition.behaviour.entity
        return next((p for p in self.example.arguments
                     if reference_entity(p, entity, self.runtime.entities) is not None), None)

    def _getter(self) -> ToolDef | None:
        """The service's plain get-by-id tool for this entity (one without parent scopes first)."""
        entity = self.definition.behaviour.entity
        ordered = sorted(self.runtime.spec.tools, key=lambda t: sum(1 for b in t.bindings.values() if b.role == "parent"))
        for candidate in ordered:
            b = candidate.behaviour
            if b.kind == "get" and b.entity == entity and not b.via and not b.current and candidate.name in self.service.tools:
                keys = [p for p, x in candidate.bindings.items() if x.role == "key"]
                if len(keys) == 1 and candidate.bindings[keys[0]].column == "id":
                    if self.service.tools[candidate.name].definition.behaviour.kind == "get":  # type: ignore[attr-defined]
                        return candidate
        return None

    def _get_row(self, key: Any, row: dict[str, Any]) -> ToolResult | None:
        """Read the row ``key`` back with the service's get tool (None when it has none)."""
        getter = self._getter()
        if getter is None:
            return None
        entity = self.definition.behaviour.entity or ""
        arguments: dict[str, Any] = {}
        properties = getter.parameters.get("properties", {})
        for param, binding in getter.bindings.items():
            if binding.role == "key":
                arguments[param] = key
            elif binding.role == "parent" and binding.entity:
                parent_id = row.get(binding.column) if binding.column else None
                if parent_id is None:
                    parent_id = self._ancestor(entity, row, binding.entity)
                parent = self._find(binding.entity, parent_id)
                if parent is not None:
                    arguments[param] = parent.get(binding.lookup or "id")
            elif binding.role == "filter" and binding.column and binding.op == "eq" and param in getter.parameters.get("required", []):
                arguments[param] = row.get(binding.column)
        for param in getter.parameters.get("required", []):
            if param not in arguments:
                return None  # a getter we cannot call with what the row says: compare the state instead
        from generator.gate.examples import _fit

        arguments = {k: _fit(v, properties.get(k, {})) for k, v in arguments.items()}
        return self.episode.call(self.service.name, getter.name, arguments)

    def _ancestor(self, entity: str, row: dict[str, Any], ancestor: str, depth: int = 0) -> Any:
        """The id of the ``ancestor`` row reached through owner references (at most 3 levels up)."""
        if depth >= 3:
            return None
        definition = self.runtime.entities[entity]
        owner = definition.owner_field
        for f in ([owner] if owner is not None else []) + [f for f in definition.fields if f.ref and f is not owner]:
            if f.ref and row.get(f.name) is not None and f.ref in self.runtime.entities:
                if f.ref == ancestor:
                    return row[f.name]
        if owner is not None and owner.ref and row.get(owner.name) is not None:
            parent = self._find(owner.ref, row[owner.name])
            if parent is not None:
                return self._ancestor(owner.ref, parent, ancestor, depth + 1)
        return None

    def _written(self) -> dict[str, Any]:
        """Column -> value the example call wrote (its field bindings)."""
        assert self.example is not None
        entity = self.definition.behaviour.entity or ""
        out = {}
        for param, binding in self.definition.bindings.items():
            if binding.role == "field" and binding.column and param in self.example.arguments:
                out[binding.column] = self.runtime.coerce(entity, binding.column, self.example.arguments[param])
        return out

    def _matches(self, data: dict[str, Any], what: str) -> None:
        for column, value in self._written().items():
            if not holds(data.get(column), value):
                raise Failed(f"{what}: {column} is {data.get(column)!r}, not {value!r}")

    def _round_trip(self) -> None:
        assert self.result is not None
        self.replay()
        created = self.result.data
        if not isinstance(created, dict) or "id" not in created:
            raise Failed("create returned no id")
        self._matches(created, "the created row")
        got = self._get_row(created["id"], created)
        if got is None:
            stored = self._find(self.definition.behaviour.entity, created["id"])
            if stored is None:
                raise Failed("the created row is not in the state")
            self._matches(stored, "the stored row")
            return
        if not got.success:
            raise Failed(f"get after create failed: {got.error_code}: {(got.error_message or '')[:150]}")
        if canonical(got.data) != canonical(created):
            raise Failed("get after create returned a different row")

    def _update_applies(self) -> None:
        assert self.result is not None
        if isinstance(self.result.data, dict):
            self._matches(self.result.data, "the updated row")

    def _delete_not_found(self) -> None:
        assert self.result is not None and self.example is not None and self.example.row is not None
        self.replay()
        key = self.result.data.get("id") if isinstance(self.result.data, dict) else None
        if key != self.example.row.get("id") and not self._same_key(key):
            raise Failed("delete returned another id than the row it was asked to delete")
        got = self._get_row(key, self.example.row)
        if got is None:
            entity = self.definition.behaviour.entity
            if self._find(entity, key) is not None:  # type: ignore[attr-defined]
                raise Failed("the deleted row is still in the state")
            return
        if got.success or str(got.error_code) != "not_found":
            raise Failed(f"get after delete gave {'success' if got.success else got.error_code}, not not_found")

    def _same_key(self, key: Any) -> bool:
        """Whether row ``key`` matches the example's key arguments too (natural keys need not be unique)."""
        assert self.example is not None
        entity = self.definition.behaviour.entity or ""
        row = next((r for r in self.rows.get(entity, []) if r.get("id") == key), None)
        if row is None:
            return False
        for param, binding in self.definition.bindings.items():
            if binding.role == "key" and param in self.example.arguments:
                if canonical(self.runtime.coerce(entity, binding.column or "id", self.example.arguments[param])) != canonical(row.get(binding.column or "id")):
                    return False
        return True

    def _transition(self) -> None:
        assert self.result is not None and self.example is not None
        transition = self.definition.behaviour.transition
        assert transition is not None
        if not isinstance(self.result.data, dict) or self.result.data.get(transition.field) != transition.to:
            raise Failed(f"after the transition {transition.field} is not {transition.to!r}")
        self.replay()
        before = self.snapshot()
        again = self.call(self.example.arguments)
        if again.success or str(again.error_code) != "invalid_state":
            raise Failed(f"repeating the transition gave {'success' if again.success else again.error_code}, not invalid_state")
        if not self.same_state(self.snapshot(), before):
            raise Failed("the refused repeat changed the state")
