"""Simulated tools: the world model answers them, from the episode's state.

- A read whose output is an entity's rows (the entity it was planned for) answers from those rows: the
  row its arguments name (an unknown id is not found), or the rows its parents, filters and search
  select, paged. The planner's bindings (kept when the gate demoted a tool) say which parameter is
  which; without them, parameter names do (``id``, ``charge_id``, a column's name, ``q``, ``limit``).
  When the tool's data schema is the entity's, the rows are the answer; otherwise the world model
  presents them in the tool's schema, and an answer that shows other rows is refused and retried.
- A write on a row its arguments name writes the columns named like its other arguments; a create
  (a POST to a collection, a create verb) adds a row; a DELETE of the row removes it. A write the tool
  cannot be mapped onto that way is refused with ``not_implemented``, and nothing changes.
- A read of no entity is answered by the world model from the tool's spec and the episode's earlier
  simulated calls (``answers_from_state`` is False for it).

Every simulated write is recorded in ``simulated_calls``: state that is diffed and reset with the rest.
"""

from __future__ import annotations

import json
import re
from functools import cached_property
from typing import Any, Literal

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.entity import EntityRuntime
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.records import Query

from generator.compiler.behaviours import EXECUTORS
from generator.compiler.runtime import Row, ServiceRuntime
from generator.compiler.tools import _DefTool
from generator.naming import is_plural, words
from generator.planner.lexicon import CREATE_VERBS, CURSOR_PARAMS, LIMIT_PARAMS, OFFSET_PARAMS, PAGE_PARAMS, \
    SEARCH_PARAMS, SEND_VERBS, squash
from generator.routes import method_verb, rpc_method
from generator.spec import Behaviour, Binding, ToolDef
from generator.worldmodel import (
    DEFAULT_RESULT,
    AnswerCache,
    SimRequest,
    WorldModel,
    answer_problem,
    get_world_model,
    simulate,
)

MAX_HISTORY = 20
MAX_STATE_ROWS = 5
WriteKind = Literal["create", "update", "delete"]
#: Bindings a read keeps from a demoted tool's plan (writes' field bindings name no row).
_READ_ROLES = frozenset({"key", "parent", "filter", "search", "query", "limit", "cursor", "page", "offset", "option",
                         "via"})


class SimulatedTool(_DefTool):
    simulated = True

    def __init__(self, runtime: ServiceRuntime, definition: ToolDef, cache: AnswerCache,
                 world_model: WorldModel | None = None) -> None:
        super().__init__(runtime, definition)
        self.cache = cache
        self.world_model = world_model
        self.tags = ("generated", "simulated")
        entity = definition.behaviour.entity
        self.target = entity if entity in runtime.entities else None
        self.reader = reader_of(runtime, definition) if self.target and self.effect == "read" else None
        self.write_kind = write_kind(runtime, definition) if self.target and self.effect == "write" else None
        self.answers_from_state = self.reader is not None
        self.refuses = self.effect == "write" and self.write_kind is None

    @cached_property
    def data_schema(self) -> dict[str, Any]:
        if self.definition.result is not None:
            return self.definition.result
        if self.reader is not None:
            kind = self.reader.behaviour.kind
            return self.runtime.page_schema(self.target or "") if kind in ("list", "search") else \
                self.runtime.row_schema(self.target or "")
        if self.write_kind is not None:
            return self.runtime.deleted_schema(self.target or "") if self.write_kind == "delete" else \
                self.runtime.row_schema(self.target or "")
        return DEFAULT_RESULT

    @property
    def example_definition(self) -> ToolDef:
        """The definition the gate builds a valid example call from (the reader's, for a read)."""
        if self.reader is not None:
            return self.reader
        if self.write_kind is not None:
            return writer_of(self.runtime, self.definition, self.write_kind)
        return self.definition

    def invoke(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        if self.refuses:
            raise ToolError.not_implemented(
                f"{self.service}.{self.name} is listed but not implemented here: it is simulated, and what it would "
                "change cannot be told from its documentation. Nothing was changed; use another tool.")
        history = self._history(ctx)
        self._check_references(ctx, arguments, history)  # an unknown id is not found, whichever backend answers
        rows: list[Row] | None = None
        if self.reader is not None:
            data = EXECUTORS[self.reader.behaviour.kind](self.runtime, self.reader, ctx, arguments)
            rows = data["items"] if isinstance(data, dict) and "items" in data else [data]
        elif self.write_kind is not None:
            data = self._write(ctx, arguments)
            rows = [data]
        if rows is not None and answer_problem(self.data_schema, data) is None:
            answer = data  # the tool's schema is the entity's: the rows are the answer
        else:
            answer = simulate(self.world_model or get_world_model(), self._request(ctx, arguments, history, rows),
                              self.cache)
        if self.effect == "write":
            ctx.insert(self._calls().record(
                {"id": ctx.new_id("sim"), "tool": self.name, "arguments": arguments, "answer": answer, "created_at": ctx.now_iso}
            ))
        return answer

    def _request(self, ctx: ToolContext, arguments: dict[str, Any], history: list[dict[str, Any]],
                 rows: list[Row] | None) -> SimRequest:
        return SimRequest(
            service=self.service,
            tool=self.name,
            description=self.description,
            effect=self.effect,
            input_schema=self.input_schema,
            output_schema=self.data_schema,
            arguments=arguments,
            state=rows[:MAX_STATE_ROWS * 4] if rows is not None else self._state(ctx, arguments),
            history=history,
            world_seed=ctx.world.seed,
            now=ctx.now_iso,
            rows=rows,
        )

    def _write(self, ctx: ToolContext, arguments: dict[str, Any]) -> Row:
        assert self.write_kind is not None
        definition = writer_of(self.runtime, self.definition, self.write_kind)
        return EXECUTORS[self.write_kind](self.runtime, definition, ctx, arguments)  # type: ignore[no-any-return]

    def _calls(self) -> EntityRuntime:
        assert self.runtime.simulated is not None, "a service with simulated tools has a simulated_calls table"
        return self.runtime.simulated

    def _history(self, ctx: ToolContext) -> list[dict[str, Any]]:
        calls = Query[Any](ctx.conn, self._calls()).in_insertion_order(newest_first=True).all(limit=MAX_HISTORY)
        return [{"tool": c.tool, "arguments": c.arguments, "answer": c.answer} for c in reversed(calls)]

    def references(self, arguments: dict[str, Any]) -> list[tuple[str, str, Any]]:
        """(parameter, entity, value) for each argument that names a row of this service by its id."""
        found = []
        own = self.definition.behaviour.entity
        for param, value in arguments.items():
            if not isinstance(value, (str, int)) or isinstance(value, bool) or value == "":
                continue
            entity = reference_entity(param, own, self.runtime.entities)
            if entity is not None:
                found.append((param, entity, value))
        return found

    def _check_references(self, ctx: ToolContext, arguments: dict[str, Any], history: list[dict[str, Any]]) -> None:
        known = _values_in(history)
        aliases = {p: b.aliases for p, b in self.definition.bindings.items() if b.aliases}
        own = set(_own_keys(self.runtime, self.definition)) if self.target else set()
        for param, entity, value in self.references(arguments):
            if str(value) in aliases.get(param, ()) or param in own:
                continue  # the tool's own row is looked up by its reader or writer
            if not re.search(r"(?i)(id|uuid|sid)$", param) and not _shaped_like_key(self.runtime, entity, value):
                continue  # StackExchange's site="stackoverflow": a name, not one of the site ids
            if json.dumps(value, default=str) in known or self.runtime.find(ctx, entity, {"id": value}) is not None:
                continue
            if self.runtime.comparable(entity, "id", value) or isinstance(value, str):
                raise ToolError(
                    "not_found",
                    f"No {self.runtime.noun(entity)} with {param} {value!r} exists. {self.runtime.list_hint(entity)}".strip(),
                )

    def _state(self, ctx: ToolContext, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows the arguments name by id (else, for a tool with an entity, its first few rows)."""
        rows: list[dict[str, Any]] = []
        for _, entity, value in self.references(arguments):
            row = self.runtime.find(ctx, entity, {"id": value})
            if row is not None:
                rows.append(row)
        return rows[:MAX_STATE_ROWS]


# -- how a simulated tool maps onto its entity's rows -------------------------------------------------------


def reader_of(runtime: ServiceRuntime, tool: ToolDef) -> ToolDef | None:
    """The read behaviour (``get`` or ``list``) a simulated read answers with, or None when it maps onto no rows."""
    entity = runtime.entity(tool.behaviour.entity or "")
    many = _reads_many(tool)
    kept = {p: b for p, b in tool.bindings.items() if b.role in _READ_ROLES}
    if all(b.role == "query" for b in kept.values()):  # only its language is known: the rest by name
        kept = {**derived_bindings(runtime, tool, many), **kept}
    bindings = kept
    keyed = any(b.role in ("key", "via") for b in bindings.values())
    if not many and not keyed:
        if not (entity.singleton or tool.behaviour.current or not tool.parameters.get("required")):
            return None  # one row, but no argument says which
    behaviour = Behaviour(kind="list" if many else "get", entity=entity.name,
                          current=not many and not keyed, via=tool.behaviour.via if keyed else None)
    if behaviour.via and not any(b.role == "via" for b in bindings.values()):
        behaviour.via = None
    return tool.model_copy(update={"behaviour": behaviour, "bindings": bindings})


def write_kind(runtime: ServiceRuntime, tool: ToolDef) -> WriteKind | None:
    """How a simulated write changes its entity's rows, read from its documentation: a DELETE of the row, a
    create (a POST to a collection, a create verb), or a change to the row its arguments name; else None.

    A write documented as an update, a delete or an action on a row (``/templates/update.json``,
    ``/lists/{id}/clear``) acts on the row its arguments name, by id or by natural key (a template's
    ``name``), and never inserts one: with no such row it is refused."""
    from generator.gate.surface import documented_write  # the gate imports the compiler: read it lazily

    method = (tool.http.method.upper() if tool.http else "")
    pieces = rpc_method(tool.http.path if tool.http else None, tool.source)
    first = words(tool.source or tool.name)[:1]
    verb = method_verb(pieces) if pieces else (first[0] if first else None)
    keyed = bool(_own_keys(runtime, tool))
    path = tool.http.path.split("?")[0].rstrip("/") if tool.http else ""
    ends_in_key = path.endswith("}")
    documented = documented_write(tool)
    if documented is not None:
        if not keyed and natural_key(runtime, tool) is None:
            return None
        if documented == "action" and not _writes_a_column(runtime, tool):
            return None  # Tasks' clear, eBay's contest: what it changes is not in its arguments; refused, never a no-op
        return "delete" if documented == "delete" else "update"
    if keyed and (method == "DELETE" and ends_in_key or (pieces and verb in ("delete", "destroy", "remove"))):
        return "delete"
    if not keyed and (method == "POST" and not ends_in_key and not pieces or verb in CREATE_VERBS | SEND_VERBS):
        return "create"
    if keyed:
        return "update"
    return None


def _writes_a_column(runtime: ServiceRuntime, tool: ToolDef) -> bool:
    """Whether an argument other than the row's keys is named like a stored column of its entity."""
    if (tool.behaviour.entity or "") not in runtime.entities:
        return False
    entity = runtime.entity(tool.behaviour.entity or "")
    keys = set(_own_keys(runtime, tool))
    return any(p not in keys and (f := entity.field(p)) is not None and f.stored and not f.ref
               for p in tool.parameters.get("properties", {}))


#: Columns that name a row as well as its id does, when a write takes no id (Mandrill's templates by ``name``).
_NATURAL_KEYS = ("name", "email", "slug", "handle", "username", "key", "code")


def natural_key(runtime: ServiceRuntime, tool: ToolDef) -> str | None:
    """The required parameter that names the tool's row by a natural key (its label or a unique-looking
    column such as ``email``), for a write that takes no id; None when there is none."""
    if (tool.behaviour.entity or "") not in runtime.entities:
        return None
    entity = runtime.entity(tool.behaviour.entity or "")
    required = tool.parameters.get("required", [])
    for param in tool.parameters.get("properties", {}):
        f = entity.field(param)
        if f is not None and f.stored and not f.ref and (param == entity.label or param in _NATURAL_KEYS) \
                and (param in required or len(required) == 0):
            return str(param)
    return None


def writer_of(runtime: ServiceRuntime, tool: ToolDef, kind: WriteKind) -> ToolDef:
    """The write behaviour a mapped simulated write runs: its keys, parents and the columns named like its arguments."""
    entity = runtime.entity(tool.behaviour.entity or "")
    bindings: dict[str, Binding] = {}
    keys = _own_keys(runtime, tool)
    natural = natural_key(runtime, tool) if not keys and kind != "create" else None
    for param in tool.parameters.get("properties", {}):
        if param in keys:
            kept = tool.bindings.get(param)
            bindings[param] = Binding(role="key", column="id", aliases=keys[param],
                                      alternates=kept.alternates if kept is not None else [])
            continue
        if param == natural:
            bindings[param] = Binding(role="key", column=param)
            continue
        parent = _parent_binding(runtime, tool, param)
        if parent is not None:
            bindings[param] = parent
        elif kind != "delete" and entity.field(param) is not None and entity.field(param).stored:  # type: ignore[union-attr]
            f = entity.field(param)
            if f is not None and not f.ref and (entity.state is None or f.name != entity.state.field or kind == "update"):
                bindings[param] = Binding(role="field", column=param)
            else:
                bindings[param] = Binding(role="option")
        else:
            bindings[param] = Binding(role="option")
    behaviour = Behaviour(kind=kind, entity=entity.name)
    return tool.model_copy(update={"behaviour": behaviour, "bindings": bindings})


def derived_bindings(runtime: ServiceRuntime, tool: ToolDef, many: bool) -> dict[str, Binding]:
    """What each parameter of a read means, from its name: the row's id, a parent, a column, text, paging."""
    entity = runtime.entity(tool.behaviour.entity or "")
    keys = _own_keys(runtime, tool)
    out: dict[str, Binding] = {}
    for param, schema in tool.parameters.get("properties", {}).items():
        s = squash(param)
        kind = schema.get("type") if isinstance(schema, dict) else None
        if param in keys:
            kept = tool.bindings.get(param)
            out[param] = Binding(role="filter", column="id") if many else Binding(
                role="key", column="id", aliases=keys[param], alternates=kept.alternates if kept is not None else [])
        elif (parent := _parent_binding(runtime, tool, param)) is not None:
            out[param] = parent
        elif many and s in LIMIT_PARAMS and kind in ("integer", "number", "string"):
            out[param] = Binding(role="limit")
        elif many and s in PAGE_PARAMS and kind in ("integer", "number", "string"):
            out[param] = Binding(role="page")
        elif many and s in OFFSET_PARAMS and kind in ("integer", "number"):
            out[param] = Binding(role="offset")
        elif many and s in CURSOR_PARAMS and kind in ("string", "integer"):
            out[param] = Binding(role="cursor")
        elif many and s in SEARCH_PARAMS and kind == "string":
            out[param] = Binding(role="search")
        elif (f := entity.field(param)) is not None and f.stored and f.type in ("string", "integer", "number", "boolean") \
                and kind in ("string", "integer", "number", "boolean"):
            out[param] = Binding(role="filter", column=f.name)
        else:
            out[param] = Binding(role="option")
    return out


def _own_keys(runtime: ServiceRuntime, tool: ToolDef) -> dict[str, list[str]]:
    """Parameters naming the tool's own row by id (bound as its key, ``id``, ``<entity>_id``, its path key),
    with the aliases they document."""
    entity = tool.behaviour.entity or ""
    out: dict[str, list[str]] = {}
    for param, binding in tool.bindings.items():
        if binding.role == "key" and (binding.column or "id") == "id":
            out[param] = binding.aliases
    if out:
        return out
    path_keys = re.findall(r"\{([^}]+)\}", tool.http.path) if tool.http else []
    properties = tool.parameters.get("properties", {})
    for param in properties:
        if reference_entity(param, entity, runtime.entities) == entity:
            out[param] = []
    if not out and path_keys and path_keys[-1] in properties and tool.http is not None \
            and tool.http.path.split("?")[0].rstrip("/").endswith("}"):
        out[path_keys[-1]] = []
    return out


def _parent_binding(runtime: ServiceRuntime, tool: ToolDef, param: str) -> Binding | None:
    """A parameter naming a row of another entity that this one refers to (``charge_id`` on a refund)."""
    kept = tool.bindings.get(param)
    if kept is not None and kept.role == "parent":
        return kept
    entity = runtime.entity(tool.behaviour.entity or "")
    other = reference_entity(param, entity.name, runtime.entities)
    if other is None or other == entity.name:
        return None
    column = next((f.name for f in entity.fields if f.ref == other and f.stored), None)
    return Binding(role="parent", entity=other, lookup="id", column=column) if column else None


def _reads_many(tool: ToolDef) -> bool:
    """Whether a read returns many rows: its data schema is a page, or its documentation lists a collection."""
    result = tool.result or {}
    if isinstance(result.get("properties"), dict) and isinstance(result["properties"].get("items"), dict) \
            and result["properties"]["items"].get("type") == "array":
        return True
    if tool.behaviour.planned in ("list", "search"):
        return True
    if tool.behaviour.planned in ("get",):
        return False
    pieces = rpc_method(tool.http.path if tool.http else None, tool.source)
    if pieces:
        return (method_verb(pieces) or "") in ("list", "search", "history", "members", "replies", "query", "find")
    if tool.http is not None:
        last = tool.http.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        said = words(last)
        return "{" not in last and bool(said) and (is_plural(said[-1]) or said[-1] in ("bulk", "search", "list", "query"))
    first = words(tool.source or tool.name)[:1]
    return bool(first) and first[0] in ("list", "search", "find", "query")


def _shaped_like_key(runtime: ServiceRuntime, entity: str, value: Any) -> bool:
    """Whether ``value`` has the shape of the entity's ids (its prefix, pattern or type)."""
    key = runtime.entity(entity).key
    if key.type == "integer":
        return isinstance(value, int) or (isinstance(value, str) and value.isdigit())
    text = str(value)
    if key.pattern:
        return re.match(key.pattern, text) is not None
    if key.format == "uuid":
        return re.match(r"^[0-9a-fA-F-]{36}$", text) is not None
    return not key.prefix or text.startswith(f"{key.prefix}_")


def reference_entity(param: str, own: str | None, entities: dict[str, Any]) -> str | None:
    """The entity whose id a parameter carries: ``charge_id``/``chargeId``/``charge`` -> ``charge``; ``id`` -> own."""
    snake_name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", param).lower()
    if snake_name == "id":
        return own if own in entities else None
    base = re.sub(r"_?(id|uuid|sid)$", "", snake_name)
    if base == snake_name and snake_name not in entities:
        return None  # not named like an id
    for candidate in (base, base.rsplit("_", 1)[-1]):
        if candidate in entities:
            return candidate
        if candidate.endswith("s") and candidate[:-1] in entities:
            return candidate[:-1]
    return None


def _values_in(history: list[dict[str, Any]]) -> set[str]:
    """Every scalar an earlier simulated call passed or returned (ids it made up count as existing)."""
    out: set[str] = set()

    def walk(node: Any, depth: int) -> None:
        if depth > 4:
            return
        if isinstance(node, dict):
            for value in node.values():
                walk(value, depth + 1)
        elif isinstance(node, list):
            for value in node[:50]:
                walk(value, depth + 1)
        elif isinstance(node, (str, int)) and not isinstance(node, bool):
            out.add(json.dumps(node, default=str))

    for entry in history:
        walk(entry.get("arguments"), 0)
        walk(entry.get("answer"), 0)
    return out
