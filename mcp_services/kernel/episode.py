"""The Episode: a world plus the stores of its mounted services, for one rollout.

Its control API (reset, snapshot, dump, diff, setup) is Python only: it is never exposed as an
MCP tool, so an agent cannot reach it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp_services.kernel.bounds import abridge
from mcp_services.kernel.diff import StateDiff, diff_states
from mcp_services.kernel.errors import ErrorCode
from mcp_services.kernel.results import ToolResult
from mcp_services.kernel.service import Service
from mcp_services.kernel.store import StateDump, Store
from mcp_services.kernel.world import World, WorldShape

EpisodeSnapshot = dict[str, bytes]  # service name -> store image


class Episode:
    """Private state for one rollout. Build it with ``Episode.create(["crm", "mailbox"], world_seed=0)``.

    ``shape`` sizes the world (``WorldShape``: organisations, people, months, industry); default: the default shape.
    """

    def __init__(
        self,
        services: Sequence[Service],
        world_seed: int = 0,
        *,
        shape: WorldShape | None = None,
        db_dir: Path | None = None,
        db_paths: Mapping[str, Path] | None = None,
    ) -> None:
        names = [s.name for s in services]
        if len(set(names)) != len(names):
            raise ValueError(f"a service is mounted twice: {names}")
        self.world = World.from_seed(world_seed, shape)
        self.services: dict[str, Service] = {s.name: s for s in services}
        self.stores: dict[str, Store] = {}
        try:
            for service in services:
                path = db_paths.get(service.name) if db_paths else None
                if path is None and db_dir is not None:
                    path = Path(db_dir) / f"{service.name}.sqlite"
                self.stores[service.name] = service.new_store(world_seed, path, self.world.shape)
        except BaseException:
            self.close()
            raise
        self._mark_initial()

    def _mark_initial(self) -> None:
        self._initial = self.snapshot()
        self._initial_dumps: dict[str, StateDump] = {}
        self._initial_writes = {name: store.write_count for name, store in self.stores.items()}

    @classmethod
    def create(
        cls,
        service_names: Iterable[str],
        world_seed: int = 0,
        *,
        shape: WorldShape | None = None,
        db_dir: Path | None = None,
        db_paths: Mapping[str, Path] | None = None,
    ) -> Episode:
        from mcp_services.registry import get_services

        return cls(get_services(tuple(service_names)), world_seed, shape=shape, db_dir=db_dir, db_paths=db_paths)

    # -- the agent's channel ------------------------------------------------------------------------

    def call(self, service: str, tool: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call ``service``'s ``tool``; bad input gives an error result, never an exception."""
        svc = self.services.get(service) if isinstance(service, str) else None
        if svc is None:
            mounted = ", ".join(self.services)
            return ToolResult.fail(
                ErrorCode.UNKNOWN_SERVICE, f"No service {abridge(service)} is available here. Available: {mounted}."
            )
        args = dict(arguments) if isinstance(arguments, Mapping) else arguments
        return svc.call(self.stores[service], self.world, tool, args)

    # -- the control API ------------------------------------------------------------------------------

    def run_event(self, service: str, event: str, /, **arguments: Any) -> Any:
        """Make a world event happen in ``service`` (an inbound email, a new ticket); returns what it created."""
        svc = self.services.get(service)
        if svc is None:
            raise KeyError(f"service {service!r} is not mounted in this episode")
        return svc.run_event(self.stores[service], self.world, event, arguments)

    def apply_setup(self, records: Iterable[Mapping[str, Any]], *, marker: str | None = None) -> None:
        """Insert task setup records ``{"service", "table", "row"}``; they become the initial state.

        ``marker`` (e.g. the task id) is recorded in every store, so a reopened file-backed
        episode can tell that its setup was applied (``setup_marker``) and never applies it twice.
        """
        by_target: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for record in records:
            service = record.get("service")
            if service not in self.stores:
                raise ValueError(f"setup record names service {service!r}, which is not mounted")
            by_target.setdefault((str(service), str(record.get("table"))), []).append(dict(record["row"]))
        for service in dict.fromkeys(s for s, _ in by_target):
            store = self.stores[service]
            for table in store.insert_order(t for s, t in by_target if s == service):
                store.insert_rows(table, by_target[(service, table)])
        for service, table in by_target:
            self.stores[service].advance_counters([table])
        if marker is not None:
            for store in self.stores.values():
                store.set_meta("setup", marker)
        self._mark_initial()

    def setup_marker(self) -> str | None:
        """The marker of the setup applied to this episode's stores, if any (and if they agree)."""
        markers = {store.meta().get("setup") for store in self.stores.values()}
        return markers.pop() if len(markers) == 1 else None

    def snapshot(self) -> EpisodeSnapshot:
        return {name: store.snapshot() for name, store in self.stores.items()}

    def reset(self, snapshot: EpisodeSnapshot | None = None) -> None:
        """Back to ``snapshot`` (by default the initial state, setup records included)."""
        target = self._initial if snapshot is None else snapshot
        for name, store in self.stores.items():
            store.restore(target[name])
        if snapshot is None:  # back at the initial state: nothing to dump for a diff
            self._initial_writes = {name: store.write_count for name, store in self.stores.items()}

    @property
    def initial_snapshot(self) -> EpisodeSnapshot:
        return dict(self._initial)

    def dump(self) -> dict[str, StateDump]:
        return {name: store.dump() for name, store in self.stores.items()}

    def initial_dump(self, service: str | None = None) -> dict[str, StateDump]:
        """The dump of the initial state (of one service, or of all); cached."""
        names = list(self.stores) if service is None else [service]
        for name in names:
            if name not in self._initial_dumps:
                self._initial_dumps[name] = self.stores[name].dump_image(self._initial[name])
        return {name: self._initial_dumps[name] for name in names}

    def changed_services(self) -> list[str]:
        """Services whose store committed a write since the initial state (others are unchanged)."""
        return [n for n, store in self.stores.items() if store.write_count != self._initial_writes[n]]

    def diff(self, before: Mapping[str, StateDump] | None = None) -> dict[str, StateDiff]:
        """Per service: what changed from ``before`` (default: the initial state) to now.

        With the default, services that never committed a write are not dumped at all.
        """
        if before is not None:
            return {name: diff_states(before.get(name, {}), store.dump()) for name, store in self.stores.items()}
        changed = set(self.changed_services())
        diffs = {}
        for name, store in self.stores.items():
            if name in changed:
                diffs[name] = diff_states(*store.changed_rows_since(self._initial[name]))
            else:
                diffs[name] = StateDiff({})
        return diffs

    def close(self) -> None:
        for store in self.stores.values():
            store.close()
        self.stores.clear()

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
