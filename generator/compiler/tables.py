"""Typed SQLAlchemy tables for a spec's entities, on the service's own DeclarativeBase.

Each service gets a fresh ``DeclarativeBase`` subclass (so its ``MetaData`` is private), one table
per entity: ``id`` (string or integer primary key), one column per field, references as foreign
keys (owners cascade on delete, other references are set to null), and ``created_at``/``updated_at``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Column, Float, ForeignKey, Integer, String, Table, Text
from sqlalchemy.orm import DeclarativeBase

from generator.spec import TIMESTAMP_COLUMNS, EntityDef, ServiceSpec

SIMULATED_TABLE = "simulated_calls"

_TYPES: dict[str, Any] = {
    "string": String,
    "integer": Integer,
    "number": Float,
    "boolean": Boolean,
    "object": JSON,
    "array": JSON,
    "any": JSON,
}


def make_base(spec: ServiceSpec) -> type[DeclarativeBase]:
    """A new declarative base whose metadata holds only this service's tables."""
    camel = "".join(part.capitalize() for part in spec.name.split("_"))
    return type(f"{camel}Base", (DeclarativeBase,), {"__module__": __name__})


def build_tables(
    spec: ServiceSpec, base: type[DeclarativeBase], with_simulated: bool
) -> tuple[dict[str, Table], Table | None]:
    """One table per entity (by entity name), and the ``simulated_calls`` table when asked for."""
    entities = {e.name: e for e in spec.entities}
    constrained = foreign_keys(spec)
    tables: dict[str, Table] = {}
    for entity in spec.entities:
        tables[entity.name] = Table(entity.table, base.metadata, *_columns(entity, entities, constrained))
    simulated = None
    if with_simulated:
        simulated = Table(
            SIMULATED_TABLE,
            base.metadata,
            Column("id", String, primary_key=True),
            Column("tool", String, nullable=False, index=True),
            Column("arguments", JSON, nullable=False),
            Column("answer", JSON, nullable=False),
            Column("created_at", String, nullable=False),
        )
    return tables, simulated


def key_type(entity: EntityDef) -> Any:
    return Integer if entity.key.type == "integer" else String


def foreign_keys(spec: ServiceSpec) -> set[tuple[str, str]]:
    """The (entity, field) references declared as SQL foreign keys: owners first, never a cycle.

    A reference left out (it would close a cycle) is still checked by the tools that write it.
    """
    edges: dict[str, set[str]] = {e.name: set() for e in spec.entities}
    chosen: set[tuple[str, str]] = set()
    names = set(edges)
    refs = [(e.name, f) for e in spec.entities for f in e.fields if f.ref in names and f.ref != e.name]
    for entity, f in sorted(refs, key=lambda item: not item[1].owner):
        if not _reaches(edges, f.ref or "", entity):
            edges[entity].add(f.ref or "")
            chosen.add((entity, f.name))
    return chosen


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return False


def _columns(entity: EntityDef, entities: dict[str, EntityDef], constrained: set[tuple[str, str]]) -> list[Column[Any]]:
    columns: list[Column[Any]] = [Column("id", key_type(entity), primary_key=True, autoincrement=False)]
    for f in entity.fields:
        if f.ref and f.ref in entities:
            target = entities[f.ref]
            if (entity.name, f.name) in constrained:
                columns.append(
                    Column(
                        f.name,
                        key_type(target),
                        ForeignKey(f"{target.table}.id", ondelete="CASCADE" if f.owner else "SET NULL"),
                        index=True,
                        nullable=True,
                    )
                )
            else:
                columns.append(Column(f.name, key_type(target), index=True, nullable=True))
        else:
            kind = _TYPES[f.type]
            columns.append(Column(f.name, Text if f.type == "string" and f.json_schema else kind, nullable=True))
    if entity.timestamps:
        names = {f.name for f in entity.fields}
        columns.extend(Column(name, String, nullable=True) for name in TIMESTAMP_COLUMNS if name not in names)
    return columns
