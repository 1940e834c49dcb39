"""The seeded state of every library service on one world, read once, for the world's checks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_services.kernel.episode import Episode
from mcp_services.kernel.schema import FieldDef
from mcp_services.kernel.store import StateDump
from mcp_services.kernel.world import World, WorldShape
from mcp_services.registry import LIBRARY

Row = dict[str, Any]


@dataclass(frozen=True)
class Table:
    """One seeded table: its service, name, field declarations and rows (by primary key, in key order)."""

    service: str
    name: str
    fields: Mapping[str, FieldDef]
    rows: Mapping[str, Row]

    @property
    def label(self) -> str:
        return f"{self.service}.{self.name}"

    def fields_of(self, *semantics: str) -> list[str]:
        """The stored fields with one of these semantic types, in declaration order."""
        return [name for name, f in self.fields.items() if f.semantic in semantics]


@dataclass(frozen=True)
class SeededWorld:
    """A world and what every library service seeds from it."""

    world: World
    tables: Mapping[str, Table]  # "service.table" -> table
    _by_service: dict[str, list[Table]] = field(default_factory=dict, repr=False)

    def table(self, service: str, name: str) -> Table:
        return self.tables[f"{service}.{name}"]

    def rows(self, service: str, name: str) -> Mapping[str, Row]:
        found = self.tables.get(f"{service}.{name}")
        return found.rows if found is not None else {}

    def __iter__(self) -> Iterator[Table]:
        return iter(self.tables.values())


def seeded_world(seed: int, shape: WorldShape | None = None, services: Sequence[str] = LIBRARY) -> SeededWorld:
    """The world of ``seed`` (and ``shape``) with the seeded tables of ``services`` (every library service)."""
    with Episode.create(list(services), seed, shape=shape) as episode:
        return episode_state(episode)


def episode_state(episode: Episode) -> SeededWorld:
    """An episode's world and the state of its stores as they are now (a task's setup and planted events included)."""
    dumps: dict[str, StateDump] = episode.dump()
    declared = {
        (name, runtime.definition.table): {
            # The key is declared apart from the fields: an id of this entity.
            "id": FieldDef(name="id", type=runtime.definition.key.type, semantic=f"id:{name}.{runtime.definition.name}"),
            **{f.name: f for f in runtime.definition.stored_fields},
        }
        for name, service in episode.services.items()
        for runtime in service.entities.values()
    }
    tables = {
        f"{service}.{table}": Table(service, table, declared.get((service, table), {}), rows)
        for service, state in dumps.items()
        for table, rows in state.items()
    }
    return SeededWorld(episode.world, tables)
