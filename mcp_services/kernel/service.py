"""A Service: typed state (SQLAlchemy models), tools, and a seed function that reads the World."""

from __future__ import annotations

import logging
from collections.abc import Callable
from difflib import get_close_matches
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

from sqlalchemy import text

from mcp_services.kernel.context import META_TABLE, ToolContext, add_kernel_tables
from mcp_services.kernel.errors import ErrorCode, ToolError
from mcp_services.kernel.results import ToolResult
from mcp_services.kernel.store import Store
from mcp_services.kernel.tools import Effect, ToolSpec, build_tool, describe_validation_error
from mcp_services.kernel.world import World

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
SeedFunction = Callable[[ToolContext], None]


class Service:
    """A named service: ``base`` is the DeclarativeBase its tables are declared on."""

    def __init__(self, name: str, description: str, base: type[DeclarativeBase], *, title: str | None = None) -> None:
        if not name.isidentifier() or "__" in name or name != name.lower():
            raise ValueError(f"service name {name!r} must be a lowercase identifier without '__'")
        self.name = name
        self.title = title or name.replace("_", " ").title()
        self.description = description
        self.base = base
        add_kernel_tables(base.metadata)
        self.tools: dict[str, ToolSpec] = {}
        self._seed: SeedFunction | None = None
        self._images: dict[int, bytes] = {}

    @property
    def metadata(self) -> MetaData:
        return self.base.metadata

    # -- declaration ---------------------------------------------------------------------------------

    def add_tool(self, spec: ToolSpec) -> None:
        """Register a tool built elsewhere (e.g. compiled by the generator)."""
        if spec.service != self.name:
            raise ValueError(f"tool {spec.name!r} belongs to service {spec.service!r}, not {self.name!r}")
        if spec.name in self.tools:
            raise ValueError(f"service {self.name!r} already has a tool named {spec.name!r}")
        self.tools[spec.name] = spec

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

    # -- stores ----------------------------------------------------------------------------------------

    def image(self, world_seed: int) -> bytes:
        """The seeded state for ``world_seed`` as a snapshot image (computed once per process)."""
        image = self._images.get(world_seed)
        if image is None:
            store = Store.in_memory(self.metadata)
            try:
                with store.transaction() as session:
                    if self._seed is not None:
                        self._seed(ToolContext(session, World.from_seed(world_seed), self.name))
                    session.execute(
                        text(f"INSERT INTO {META_TABLE} (key, value) VALUES ('service', :s), ('world_seed', :w)"),
                        {"s": self.name, "w": str(world_seed)},
                    )
                image = store.snapshot()
            finally:
                store.close()
            if len(self._images) >= 32:
                self._images.pop(next(iter(self._images)))
            self._images[world_seed] = image
        return image

    def new_store(self, world_seed: int, path: Path | None = None) -> Store:
        """A store seeded from the world: private and in memory, or file-backed (reopened if it exists)."""
        if path is None:
            return Store.in_memory(self.metadata, self.image(world_seed))
        store, is_new = Store.open_file(self.metadata, path, self.image(world_seed))
        if not is_new:
            meta = store.meta()
            if meta.get("service") != self.name or meta.get("world_seed") != str(world_seed):
                store.close()
                raise ValueError(
                    f"database file {path} holds service {meta.get('service')!r} with world seed "
                    f"{meta.get('world_seed')!r}, not {self.name!r} with seed {world_seed}; pass the matching "
                    "--seed, another --db path, or delete the file to start fresh"
                )
        return store

    # -- calls -------------------------------------------------------------------------------------------

    def call(self, store: Store, world: World, tool_name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Run one tool call in one transaction. Never raises for bad input: returns an error result."""
        tool = self.tools.get(tool_name)
        if tool is None:
            return ToolResult.fail(ErrorCode.UNKNOWN_TOOL, self.unknown_tool_message(tool_name))
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                f"Arguments for {self.name}.{tool_name} must be a JSON object, not {type(arguments).__name__}.",
            )
        try:
            kwargs = tool.validate_arguments(arguments)
        except ValidationError as exc:
            return ToolResult.fail(ErrorCode.INVALID_ARGUMENT, describe_validation_error(tool.name, exc))
        except ToolError as exc:
            return ToolResult.fail(exc.code, exc.message)
        try:
            with store.transaction(read_only=tool.effect == "read") as session:
                data = tool.invoke(ToolContext(session, world, self.name), kwargs)
        except ToolError as exc:
            return ToolResult.fail(exc.code, exc.message)
        except Exception:
            log.exception("tool %s.%s failed", self.name, tool_name)
            return ToolResult.fail(
                ErrorCode.INTERNAL_ERROR,
                f"{self.name}.{tool_name} failed because of an internal error; nothing was changed. "
                "Try different arguments or another tool.",
            )
        return ToolResult.ok(data)

    def unknown_tool_message(self, tool_name: str) -> str:
        close = get_close_matches(tool_name, list(self.tools), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        return f"Service {self.name!r} has no tool {tool_name!r}.{hint} Its tools: {', '.join(sorted(self.tools))}."

    def __repr__(self) -> str:
        return f"Service({self.name!r}, {len(self.tools)} tools)"
