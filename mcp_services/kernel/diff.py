"""Row-level differences between two states of a store: what grading reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_services.kernel.store import Row, StateDump


@dataclass(frozen=True, slots=True)
class RowChange:
    before: Row
    after: Row

    @property
    def fields(self) -> list[str]:
        """The columns whose values differ."""
        return sorted(k for k in self.after if self.before.get(k) != self.after.get(k))


@dataclass(frozen=True, slots=True)
class TableDiff:
    added: dict[str, Row] = field(default_factory=dict)
    changed: dict[str, RowChange] = field(default_factory=dict)
    deleted: dict[str, Row] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.deleted)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "changed": {
                pk: {"before": c.before, "after": c.after, "fields": c.fields} for pk, c in self.changed.items()
            },
            "deleted": self.deleted,
        }


@dataclass(frozen=True, slots=True)
class StateDiff:
    """Per table: rows added, changed and deleted between ``before`` and ``after``."""

    tables: dict[str, TableDiff]

    def __bool__(self) -> bool:
        return any(self.tables.values())

    def table(self, name: str) -> TableDiff:
        return self.tables.get(name, TableDiff())

    def to_dict(self) -> dict[str, Any]:
        """Only the tables that changed."""
        return {name: t.to_dict() for name, t in sorted(self.tables.items()) if t}


def diff_states(before: StateDump, after: StateDump) -> StateDiff:
    tables: dict[str, TableDiff] = {}
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, {}), after.get(name, {})
        added = {pk: row for pk, row in new.items() if pk not in old}
        deleted = {pk: row for pk, row in old.items() if pk not in new}
        changed = {
            pk: RowChange(old[pk], row) for pk, row in new.items() if pk in old and old[pk] != row
        }
        tables[name] = TableDiff(added, changed, deleted)
    return StateDiff(tables)
