"""Running plans on a world: one episode per world seed, restored to a fresh state for every run.

Restoring the seeded snapshot images gives a state byte-identical to a newly created episode, at a
fraction of the cost; setup records are inserted on top, and the change tracker makes the run's diff
cheap. Every run of the composer (exploration, reference, counterfactual) goes through here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_services.kernel.diff import StateDiff
from mcp_services.kernel.episode import Episode
from mcp_services.kernel.results import ToolResult
from mcp_services.tasks.spec import PlanStep, SetupRecord

from composer.catalog import Catalog, ToolInfo
from composer.plan import MissingValue, StepSpec, field_value, resolve
from composer.tracking import ChangeTracker


@dataclass(slots=True)
class StepRun:
    call: PlanStep
    ok: bool
    error: str | None = None
    data: Any = None
    item: dict[str, Any] | None = None
    changes: StateDiff | None = None  # what this step changed in its service (writes only)


@dataclass(slots=True)
class Run:
    steps: list[StepRun] = field(default_factory=list)
    complete: bool = True
    failure: str | None = None

    @property
    def items(self) -> list[dict[str, Any] | None]:
        return [s.item for s in self.steps]

    @property
    def calls(self) -> list[PlanStep]:
        return [s.call for s in self.steps]


def result_items(tool: ToolInfo, data: Any) -> list[dict[str, Any]]:
    """The items of a result: a page's or a list's items, or the object itself."""
    if tool.result_kind == "page" and isinstance(data, Mapping):
        return [i for i in data.get("items", []) if isinstance(i, dict)]
    if tool.result_kind == "list" and isinstance(data, list):
        return [i for i in data if isinstance(i, dict)]
    return [data] if isinstance(data, dict) else []


def select_item(tool: ToolInfo, data: Any, key: str | None, value: Any) -> dict[str, Any] | None:
    items = result_items(tool, data)
    if tool.result_kind == "object":
        return items[0] if items else None
    if key is None:
        return items[0] if len(items) == 1 else None
    for item in items:
        if field_value(item, key) == value:
            return item
    return None


Checkpoint = tuple[bytes, int]  # a store's image and its state fingerprint


class Runner:
    """An episode of every catalog service for one world seed, reusable run after run.

    With ``memo``, tool calls are memoised by the state they run on: each store carries a
    fingerprint (its seed, the setup rows and the writes applied since, in order), and a call on a
    state it has seen returns the recorded result; a recorded write restores the state it left.
    Services are deterministic, so this changes nothing but the time (``composer verify`` runs
    without it, as an independent check).
    """

    #: Most recorded writes kept (each holds a store image of a few hundred kB).
    MAX_WRITES = 384
    MAX_READS = 200_000

    def __init__(self, catalog: Catalog, world_seed: int, *, memo: bool = False) -> None:
        self.catalog = catalog
        self.world_seed = world_seed
        self.episode = Episode(list(catalog.services.values()), world_seed)
        self.tracker = ChangeTracker(self.episode)
        self._pristine = self.episode.snapshot()
        self._dirty: set[str] = set()
        self.memo = memo
        self._fp: dict[str, int] = {name: hash(("seed", world_seed, name)) for name in self.episode.stores}
        self._reads: dict[tuple[int, str, str], ToolResult] = {}
        self._writes: dict[tuple[int, str, str], tuple[ToolResult, bytes | None]] = {}
        self.calls = 0  # tool calls actually run (memo hits excluded)
        self.hits = 0

    @property
    def world(self) -> Any:
        return self.episode.world

    def fresh(self, setup: Sequence[SetupRecord] = ()) -> None:
        """Back to the seeded state of the world, plus ``setup`` records."""
        for name in sorted(self._dirty):
            self.episode.stores[name].restore(self._pristine[name])  # its change log is empty there
            self._fp[name] = hash(("seed", self.world_seed, name))
        self._dirty = set()
        self.insert(setup)

    def insert(self, records: Iterable[SetupRecord]) -> None:
        """Add records to the current state (the baseline moves with them)."""
        by_target: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for record in records:
            by_target.setdefault((record.service, record.table), []).append(dict(record.row))
        for (service, table), rows in by_target.items():
            self.episode.stores[service].insert_rows(table, rows)
            self.episode.stores[service].advance_counters()  # as Episode.apply_setup does: the same ids follow
            self._dirty.add(service)
            self._fp[service] = hash((self._fp[service], "insert", table, json.dumps(rows, sort_keys=True, default=str)))
        # The inserted rows are part of the baseline, not changes; the log is part of the state the
        # fingerprint names, so it is cleared exactly where rows went in.
        self.tracker.reset(sorted({service for service, _ in by_target}))

    def planted(self, service: str) -> None:
        """Rows were added to ``service`` outside a tool call (a scenario's setup): they are the new baseline."""
        self._dirty.add(service)
        self._fp[service] = hash((self._fp[service], "planted", self.episode.stores[service].snapshot()))
        self.tracker.reset([service])

    def checkpoint(self, service: str) -> Checkpoint:
        return self.episode.stores[service].snapshot(), self._fp[service]

    def rollback(self, service: str, checkpoint: Checkpoint) -> None:
        """Back to a checkpoint of one store (its change log included)."""
        image, fp = checkpoint
        self.episode.stores[service].restore(image)
        self._fp[service] = fp

    def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        info = self.catalog.tools[f"{service}.{tool}"]
        if not self.memo:
            self.calls += 1
            result = self.episode.call(service, tool, arguments)
            if info.is_write and result.success:
                self._dirty.add(service)
            return result
        key = (self._fp[service], tool, json.dumps(arguments, sort_keys=True, default=str))
        if not info.is_write:
            cached = self._reads.get(key)
            if cached is None:
                self.calls += 1
                cached = self.episode.call(service, tool, arguments)
                if len(self._reads) >= self.MAX_READS:
                    self._reads.pop(next(iter(self._reads)))
                self._reads[key] = cached
            else:
                self.hits += 1
            return cached
        recorded = self._writes.get(key)
        store = self.episode.stores[service]
        if recorded is not None:
            self.hits += 1
            result, image = recorded
            if result.success and image is not None:
                store.restore(image)
        else:
            self.calls += 1
            result = self.episode.call(service, tool, arguments)
            image = store.snapshot() if result.success else None
            if len(self._writes) >= self.MAX_WRITES:
                self._writes.pop(next(iter(self._writes)))
            self._writes[key] = (result, image)
        if result.success:
            self._dirty.add(service)
            self._fp[service] = hash((key, "done"))
        return result

    def execute(self, specs: Sequence[StepSpec], overrides: Mapping[int, Any] | None = None) -> Run:
        """Run ``specs`` in order on the current state; stop at the first failure."""
        overrides = overrides or {}
        run = Run()
        items: list[dict[str, Any] | None] = []
        for index, spec in enumerate(specs):
            try:
                arguments = {name: resolve(expr, items) for name, expr in spec.args}
            except MissingValue as exc:
                run.complete, run.failure = False, f"step {index + 1}: {exc}"
                return run
            step = self.run_step(spec, arguments, overrides.get(index, spec.select_value))
            run.steps.append(step)
            items.append(step.item)
            if not step.ok:
                run.complete, run.failure = False, f"step {index + 1} ({spec.service}.{spec.tool}): {step.error}"
                return run
        return run

    def run_step(self, spec: StepSpec, arguments: dict[str, Any], select_value: Any) -> StepRun:
        info = self.catalog.tools[f"{spec.service}.{spec.tool}"]
        since = self.tracker.position(spec.service) if info.is_write else 0
        result = self.call(spec.service, spec.tool, arguments)
        call = PlanStep(service=spec.service, tool=spec.tool, arguments=arguments)
        if not result.success:
            return StepRun(call, False, f"{result.error_code}: {result.error_message}")
        item = select_item(info, result.data, spec.select_key, select_value)
        changes = self.tracker.service_diff(spec.service, since) if info.is_write else None
        if item is None:
            return StepRun(call, False, "the item to continue with is not in the result", result.data, None, changes)
        return StepRun(call, True, None, result.data, item, changes)

    def diff(self) -> dict[str, StateDiff]:
        return self.tracker.diff()
