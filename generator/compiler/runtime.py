"""A compiled service's runtime: its entities on the kernel, how rows are found, keyed, written and shown.

Rows are read and written through the kernel's records API (``Query``, ``insert``, ``update``) on
the entities ``tables.add_entities`` registered; behaviours see them as dicts keyed by column.
``ServiceRuntime`` is also the API a custom (hand- or LLM-written) tool function receives as
``api``: ``api.find(ctx, "card", {"id": ...})``, ``api.insert(ctx, "card", {...})``, ``api.row_out``...
so custom code never builds SQL for the common cases.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Table

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.entity import EntityRuntime
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.records import Query

from generator.regexgen import string_matching
from generator.spec import TIMESTAMP_COLUMNS, EntityDef, ServiceSpec

Row = dict[str, Any]

_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
               "object": "object", "array": "array"}


class ServiceRuntime:
    """Everything a compiled service's tools share."""

    def __init__(self, spec: ServiceSpec, records: Mapping[str, EntityRuntime], simulated: EntityRuntime | None = None) -> None:
        self.spec = spec
        self.records: dict[str, EntityRuntime] = dict(records)  # the kernel's runtime of each entity
        self.simulated = simulated  # the simulated_calls records, when the service has simulated tools
        self.entities: dict[str, EntityDef] = {name: rt.definition for name, rt in self.records.items()}
        self.tables: dict[str, Table] = {name: rt.table for name, rt in self.records.items()}
        self._column_types: dict[str, dict[str, str]] = {}
        for entity in self.entities.values():
            types = {"id": entity.key.type}
            for f in entity.fields:
                types[f.name] = self.entities[f.ref].key.type if f.ref and f.ref in self.entities else f.type
            if entity.timestamps:
                for name in TIMESTAMP_COLUMNS:
                    types.setdefault(name, "string")
            self._column_types[entity.name] = types
        self._list_tools: dict[str, str] = {}
        for tool in spec.tools:
            if tool.behaviour.kind in ("list", "search") and tool.behaviour.entity:
                self._list_tools.setdefault(tool.behaviour.entity, tool.name)

    # -- schema facts --------------------------------------------------------------------------------

    def entity(self, name: str) -> EntityDef:
        return self.entities[name]

    def table(self, name: str) -> Table:
        return self.tables[name]

    def columns(self, entity: str) -> dict[str, str]:
        """Column name -> field type (``string``, ``integer``...), ``id`` first."""
        return self._column_types[entity]

    def noun(self, entity: str) -> str:
        return entity.replace("_", " ")

    def list_hint(self, entity: str) -> str:
        tool = self._list_tools.get(entity)
        return f"Use {tool} to find one." if tool else ""

    # -- values ----------------------------------------------------------------------------------------

    def coerce(self, entity: str, column: str, value: Any) -> Any:
        """``value`` in the column's type where the conversion is lossless; else unchanged."""
        kind = self._column_types[entity].get(column)
        if value is None:
            return None
        if kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            return int(value)
        if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value

    def comparable(self, entity: str, column: str, value: Any) -> bool:
        """Whether ``value`` can equal a stored value of the column (an id 'abc' never equals an integer key)."""
        kind = self._column_types[entity].get(column)
        coerced = self.coerce(entity, column, value)
        if kind == "integer":
            return isinstance(coerced, int) and not isinstance(coerced, bool)
        if kind == "string":
            return isinstance(coerced, str)
        return True

    # -- reading ---------------------------------------------------------------------------------------

    def query(self, ctx: ToolContext, entity: str) -> Query[Any]:
        """A kernel query over ``entity``, in insertion order (as rows were created)."""
        return Query[Any](ctx.conn, self.records[entity]).in_insertion_order()

    def find(self, ctx: ToolContext, entity: str, conditions: dict[str, Any]) -> Row | None:
        """The first row of ``entity`` whose columns equal ``conditions`` (in insertion order), or None."""
        runtime = self.records[entity]
        query = self.query(ctx, entity)
        for column, value in conditions.items():
            if column not in runtime.column_set or not self.comparable(entity, column, value):
                return None
            query.where(**{column: self.coerce(entity, column, value)})
        record = query.first()
        return None if record is None else runtime.dump(record)

    def require(self, ctx: ToolContext, entity: str, conditions: dict[str, Any], shown: str | None = None) -> Row:
        row = self.find(ctx, entity, conditions)
        if row is None:
            what = shown or ", ".join(f"{k} {v!r}" for k, v in conditions.items())
            raise ToolError(
                "not_found", f"No {self.noun(entity)} with {what} exists. {self.list_hint(entity)}".strip()
            )
        return row

    def count(self, ctx: ToolContext, entity: str) -> int:
        return self.query(ctx, entity).count()

    # -- writing ---------------------------------------------------------------------------------------

    def new_key(self, ctx: ToolContext, entity: str) -> Any:
        """A fresh id for ``entity``: the next of its sequence, in the form its key declares."""
        definition = self.entities[entity]
        runtime = self.records[entity]
        for _ in range(50):
            number = int(ctx.new_id(f"k_{entity}")[len(f"k_{entity}") + 1 :])
            key = self.key_for(definition, number)
            if ctx.fetch(runtime.cls, key) is None:
                return key
        raise ToolError("conflict", f"Could not allocate a new {self.noun(entity)} id; try again.")

    def key_for(self, definition: EntityDef, number: int) -> Any:
        key = definition.key
        if key.type == "integer":
            return number
        if key.format == "uuid":
            digest = hashlib.sha256(f"{self.spec.name}:{definition.name}:{number}".encode()).digest()
            return str(uuid.UUID(bytes=digest[:16], version=4))
        if key.pattern:
            made = string_matching(key.pattern, random.Random(f"{self.spec.name}:{definition.name}:{number}"))
            if made is not None:
                return made
        return f"{key.prefix}_{number:0{key.width}d}" if key.prefix else f"{number:0{key.width}d}"[-key.width :]

    def storable(self, entity: str, values: Row) -> Row:
        """``values`` of the entity's columns, coerced to their types; a value its column cannot hold is refused."""
        runtime = self.records[entity]
        row = {k: self.coerce(entity, k, v) for k, v in values.items() if k in runtime.column_set}
        for name, value in row.items():
            if runtime.kinds[name] == "boolean" and value not in (None, True, False):
                raise ToolError.invalid_argument(f"A value could not be stored: Not a boolean value: {value!r}")
        return row

    def insert(self, ctx: ToolContext, entity: str, values: Row) -> Row:
        """Insert a row (``id`` chosen when missing, timestamps set) and return it as a tool shows it."""
        definition = self.entities[entity]
        runtime = self.records[entity]
        row = self.storable(entity, values)
        if row.get("id") is None:
            row["id"] = self.new_key(ctx, entity)
        if definition.timestamps:
            for name in TIMESTAMP_COLUMNS:
                if name in runtime.column_set and row.get(name) is None and definition.field(name) is None:
                    row[name] = ctx.now_iso
        ctx.insert(runtime.record(row))
        return self.require(ctx, entity, {"id": row["id"]})

    def update(self, ctx: ToolContext, entity: str, key: Any, values: Row) -> Row:
        runtime = self.records[entity]
        changes = self.storable(entity, {k: v for k, v in values.items() if k != "id"})
        definition = self.entities[entity]
        if definition.timestamps and "updated_at" in runtime.column_set and definition.field("updated_at") is None:
            changes["updated_at"] = ctx.now_iso
        record = ctx.fetch(runtime.cls, key)
        if changes and record is not None:
            ctx.update(record, **changes)
        return self.require(ctx, entity, {"id": key})

    def delete(self, ctx: ToolContext, entity: str, key: Any) -> None:
        runtime = self.records[entity]
        record = ctx.fetch(runtime.cls, key)
        if record is not None:
            ctx.delete(record)

    # -- showing ---------------------------------------------------------------------------------------

    def row_out(self, entity: str, row: Row) -> Row:
        """A row as tools return it: its columns in declaration order."""
        return {name: row.get(name) for name in self.records[entity].columns}

    def row_schema(self, entity: str) -> dict[str, Any]:
        """The JSON schema of one row of ``entity`` in tool results."""
        definition = self.entities[entity]
        props: dict[str, Any] = {
            "id": {"type": _JSON_TYPES[definition.key.type], "x-semantic-type": f"id:{self.spec.name}.{entity}",
                   "description": f"The {self.noun(entity)}'s id."}
        }
        for f in definition.fields:
            kind = self._column_types[entity][f.name]
            schema: dict[str, Any] = {} if kind == "any" else {"type": [_JSON_TYPES[kind], "null"]}
            if f.enum and kind in ("string", "integer", "number", "boolean"):
                schema["enum"] = [*f.enum, None]
            if f.semantic:
                schema["x-semantic-type"] = f.semantic
                if f.format in ("email", "date-time", "date", "uri") and kind == "string":
                    schema["format"] = f.format
            if f.description:
                schema["description"] = f.description[:200]
            props[f.name] = schema
        if definition.timestamps:
            for name in TIMESTAMP_COLUMNS:
                if name not in props:
                    props[name] = {"type": ["string", "null"], "x-semantic-type": "datetime",
                                   "description": "When it was created." if name == "created_at" else "When it last changed."}
        return {"type": "object", "properties": props, "required": ["id"]}

    def page_schema(self, entity: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": self.row_schema(entity)},
                "total": {"type": "integer", "description": "How many items match in all pages"},
                "next_cursor": {"type": ["string", "null"],
                                "description": "Cursor for the next page, or null if this is the last"},
            },
            "required": ["items", "total", "next_cursor"],
        }

    def deleted_schema(self, entity: str) -> dict[str, Any]:
        key = self.entities[entity].key.type
        return {
            "type": "object",
            "properties": {
                "id": {"type": _JSON_TYPES[key], "x-semantic-type": f"id:{self.spec.name}.{entity}"},
                "deleted": {"type": "boolean", "const": True},
            },
            "required": ["id", "deleted"],
        }
