"""A Service: typed state (SQLAlchemy models), tools, and a seed function that reads the World."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from difflib import get_close_matches
from pathlib import Path
from typing import Any, TypeVar, dataclass_transform

from pydantic import ValidationError
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

from mcp_services.kernel.bounds import abridge, argument_problem
from mcp_services.kernel.context import META_TABLE, ToolContext, add_kernel_tables
from mcp_services.kernel.entity import (
    Derived,
    EntityRuntime,
    as_record_class,
    build_table,
    definition_from_class,
    field,
)
from mcp_services.kernel.schema import EntityDef, StateDef, entity_problems
from mcp_services.kernel.errors import ErrorCode, ToolError
from mcp_services.kernel.results import ToolResult
from mcp_services.kernel.store import Store
from mcp_services.kernel.intents import Effect
from mcp_services.kernel.tools import ToolSpec, build_tool, describe_validation_error
from mcp_services.kernel.world import World, WorldShape, shape_text

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
SeedFunction = Callable[[ToolContext], None]


class Service:
    """A named service: its entities (tables), tools and seed. ``base``: ORM models declared the SQLAlchemy way."""

    def __init__(
        self, name: str, description: str, base: type[DeclarativeBase] | None = None, *, title: str | None = None
    ) -> None:
        if not name.isidentifier() or "__" in name or name != name.lower():
            raise ValueError(f"service name {name!r} must be a lowercase identifier without '__'")
        self.name = name
        self.title = title or name.replace("_", " ").title()
        self.description = description
        self.base = base
        self.metadata: MetaData = base.metadata if base is not None else MetaData()
        add_kernel_tables(self.metadata)
        self.tools: dict[str, ToolSpec] = {}
        #: Entities by name (declared with ``@service.entity`` or from an ``EntityDef``).
        self.entities: dict[str, EntityRuntime] = {}
        self._seed: SeedFunction | None = None
        #: World events (see ``event``): name -> function.
        self.events: dict[str, Callable[..., Any]] = {}
        self._images: dict[tuple[int, WorldShape], bytes] = {}
        self._checked = False

    # -- declaration ---------------------------------------------------------------------------------

    @dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
    def entity(
        self,
        *,
        table: str,
        prefix: str,
        width: int = 4,
        noun: str | None = None,
        label: str | None = None,
        search: tuple[str, ...] = (),
        state: StateDef | None = None,
    ) -> Callable[[type[T]], type[T]]:
        """Declare an entity as a class: ``@service.entity(table="contacts", prefix="ct", label="name")``."""

        def register(cls: type[T]) -> type[T]:
            definition, extras = definition_from_class(
                cls, self.name, table=table, prefix=prefix, width=width, noun=noun, label=label, search=search, state=state
            )
            record_cls = as_record_class(cls)
            self.add_entity(record_cls, definition, extras)
            return record_cls

        return register

    def add_entity(
        self,
        cls: type[Any],
        definition: EntityDef,
        extras: dict[str, Derived] | None = None,
        constrained: set[str] | None = None,
        *,
        related: Mapping[str, EntityDef] | None = None,
    ) -> EntityRuntime:
        """Register an entity given as data with its record class (``entity_class``) and make its table.

        ``related``: entities it may refer to that are registered after it (a spec's forward refs).
        """
        if definition.name in self.entities:
            raise ValueError(f"service {self.name!r} already has an entity named {definition.name!r}")
        known = dict(related or {}) | {name: rt.definition for name, rt in self.entities.items()} | {definition.name: definition}
        table = build_table(definition, known, self.metadata, constrained)
        runtime = EntityRuntime(self.name, cls, definition, extras or {}, table)
        runtime.siblings = self.entities
        setattr(cls, "__entity__", runtime)  # the record class carries its runtime (see entity.runtime_of)
        self.entities[definition.name] = runtime
        return runtime

    def entity_problems(self) -> list[str]:
        """Problems of the declared entities, checked together (refs may point forward)."""
        known = {name: rt.definition for name, rt in self.entities.items()}
        return [p for rt in self.entities.values() for p in entity_problems(rt.definition, known)]

    def add_tool(self, spec: ToolSpec) -> None:
        """Register a tool built elsewhere (e.g. compiled by the generator)."""
        if spec.service != self.name:
            raise ValueError(f"tool {spec.name!r} belongs to service {spec.service!r}, not {self.name!r}")
        if spec.name in self.tools:
            raise ValueError(f"service {self.name!r} already has a tool named {spec.name!r}")
        self.tools[spec.name] = spec
        runtime = self.entities.get(spec.entity) if spec.entity else None
        if runtime is not None and runtime.list_tool is None and spec.effect == "read" and spec.intent == "find":
            runtime.list_tool = spec.name

    def tool(
        self,
        effect: Effect,
        *,
        name: str | None = None,
        tags: tuple[str, ...] = (),
        intent: str | None = None,
        phrases: tuple[str, ...] = (),
    ) -> Callable[[F], F]:
        """Register a function as a tool: ``@service.tool("write", intent="refund", phrases=("refund {charge_id}",))``."""

        def register(fn: F) -> F:
            self.add_tool(
                build_tool(self.name, fn, effect=effect, name=name, tags=tags, intent=intent, phrases=phrases)
            )
            return fn

        return register

    def seeder(self, fn: SeedFunction) -> SeedFunction:
        """Register the function that fills a fresh store from the world."""
        self._seed = fn
        return fn

    def event(self, name: str) -> Callable[[F], F]:
        """Register a world event: something that happens to the service from outside (``@service.event("email_received")``).

        An event function takes ``ctx`` and keyword arguments, writes what arrives (an inbound email
        and its thread, a new ticket and its requester, a voicemail) and returns the new record's id.
        Events are the composer's way to plant a task's trigger; like reset and snapshot they are
        control operations, never tools an agent can call.
        """

        def register(fn: F) -> F:
            if not name.isidentifier():
                raise ValueError(f"event name {name!r} must be an identifier")
            self.events[name] = fn
            return fn

        return register

    def run_event(self, store: Store, world: World, name: str, arguments: dict[str, Any]) -> Any:
        """Run a world event in one transaction; raises ``KeyError`` or the event's ``ToolError`` on bad input."""
        fn = self.events.get(name)
        if fn is None:
            raise KeyError(f"service {self.name!r} has no event {name!r}; its events: {', '.join(sorted(self.events)) or 'none'}")
        with store.transaction() as tx:
            return fn(ToolContext(tx, world, self.name), **arguments)

    # -- stores ----------------------------------------------------------------------------------------

    def image(self, world_seed: int, shape: WorldShape | None = None) -> bytes:
        """The seeded state of the world of ``world_seed`` and ``shape`` as a snapshot image (computed once per process)."""
        world = World.from_seed(world_seed, shape)
        image = self._images.get(world.key)
        if image is None:
            if not self._checked:
                problems = self.entity_problems()
                if problems:
                    raise ValueError(f"service {self.name!r}: " + "; ".join(problems))
                self._checked = True
            store = Store.in_memory(self.metadata)
            try:
                with store.transaction() as tx:
                    if self._seed is not None:
                        self._seed(ToolContext(tx, world, self.name))
                    tx.conn.executemany(
                        f"INSERT INTO {META_TABLE} (key, value) VALUES (?, ?)",
                        [("service", self.name), ("world_seed", str(world.seed)), ("world_shape", shape_text(world.shape))],
                    )
                image = store.snapshot()
            finally:
                store.close()
            if len(self._images) >= 32:
                self._images.pop(next(iter(self._images)))
            self._images[world.key] = image
        return image

    def new_store(self, world_seed: int, path: Path | None = None, shape: WorldShape | None = None) -> Store:
        """A store seeded from the world: private and in memory, or file-backed (reopened if it exists)."""
        if path is None:
            return Store.in_memory(self.metadata, self.image(world_seed, shape))
        store, is_new = Store.open_file(self.metadata, path, self.image(world_seed, shape))
        if not is_new:
            meta = store.meta()
            wanted = shape_text(shape or WorldShape())
            found = (meta.get("service"), meta.get("world_seed"), meta.get("world_shape", shape_text(WorldShape())))
            if found != (self.name, str(world_seed), wanted):
                store.close()
                raise ValueError(
                    f"database file {path} holds service {found[0]!r} of world seed {found[1]!r} (shape {found[2]}), "
                    f"not {self.name!r} of seed {world_seed} (shape {wanted}); pass the matching --seed, another --db "
                    "path, or delete the file to start fresh"
                )
        return store

    # -- calls -------------------------------------------------------------------------------------------

    def call(self, store: Store, world: World, tool_name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Run one tool call in one transaction. Never raises for bad input: returns an error result."""
        try:
            return self._call(store, world, tool_name, arguments)
        except Exception:  # noqa: BLE001 - a crash in validation or a tool is a result, never an exception
            log.exception("tool %s.%s failed", self.name, abridge(tool_name))
            return ToolResult.fail(ErrorCode.INTERNAL_ERROR, _internal_message(self.name, tool_name))

    def _call(self, store: Store, world: World, tool_name: str, arguments: dict[str, Any] | None) -> ToolResult:
        tool = self.tools.get(tool_name) if isinstance(tool_name, str) else None
        if tool is None:
            return ToolResult.fail(ErrorCode.UNKNOWN_TOOL, self.unknown_tool_message(tool_name))
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                f"Arguments for {self.name}.{tool_name} must be a JSON object, not {type(arguments).__name__}.",
            )
        problem = argument_problem(arguments)
        if problem is not None:
            return ToolResult.fail(ErrorCode.INVALID_ARGUMENT, f"Invalid arguments for {tool.name}: {problem}.")
        try:
            kwargs = tool.validate_arguments(arguments)
        except ValidationError as exc:
            return ToolResult.fail(ErrorCode.INVALID_ARGUMENT, describe_validation_error(tool.name, exc))
        except ToolError as exc:
            return ToolResult.fail(exc.code, exc.message)
        try:
            with store.transaction(read_only=tool.effect == "read") as tx:
                data = tool.invoke(ToolContext(tx, world, self.name), kwargs)
        except ToolError as exc:
            return ToolResult.fail(exc.code, exc.message)
        except Exception:  # noqa: BLE001 - a bug in a tool: rolled back, reported without internals
            log.exception("tool %s.%s failed", self.name, tool_name)
            return ToolResult.fail(ErrorCode.INTERNAL_ERROR, _internal_message(self.name, tool_name))
        return ToolResult.ok(data)

    def unknown_tool_message(self, tool_name: object) -> str:
        name = tool_name if isinstance(tool_name, str) and len(tool_name) <= 100 else None
        close = get_close_matches(name, list(self.tools), n=3) if name else []
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        return f"Service {self.name!r} has no tool {abridge(tool_name)}.{hint} Its tools: {', '.join(sorted(self.tools))}."

    def __repr__(self) -> str:
        return f"Service({self.name!r}, {len(self.tools)} tools)"


def _internal_message(service: str, tool: object) -> str:
    return (
        f"{service}.{abridge(tool)} failed because of an internal error; nothing was changed. "
        "Try different arguments or another tool."
    )
