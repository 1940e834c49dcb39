"""Running plans on a world: one episode per world seed, restored to a fresh state for every run.

Restoring the seeded snapshot images gives a state byte-identical to a newly created episode, at a
fraction of the cost; setup records go in on top and become the baseline. Diffs come from the
kernel's one change tracker (``Store.changed_rows_since``: SQLite compares a store with an image of
it), per step for writes and for the whole run. Every run of the composer (building a scenario,
the reference run, each counterfactual, ``composer verify``) goes through here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table

from mcp_services.kernel.diff import StateDiff, diff_states
from mcp_services.kernel.episode import Episode
from mcp_services.kernel.results import ToolResult
from mcp_services.kernel.world import WorldShape
from mcp_services.tasks.spec import PlanStep, SetupRecord, TaskSpec

from composer.catalog import Catalog, ToolInfo
from composer.plan import MissingValue, StepSpec, field_value, resolve


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
    #: For a run that records them (the reference run): before each step, the images of the stores the steps
    #: before it wrote. A replay that shares the run's first steps starts from there instead of from the start.
    checkpoints: list[dict[str, bytes]] = field(default_factory=list)

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


def runner_for(runners: dict[tuple[int, WorldShape], Runner], catalog: Catalog, task: TaskSpec) -> Runner:
    """The runner of a task's world (seed and shape) from ``runners``, made on first use."""
    key = (task.world_seed, task.world_shape)
    if key not in runners:
        runners[key] = Runner(catalog, task.world_seed, task.world_shape)
    return runners[key]


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


class Runner:
    """An episode of every catalog service for one world (its seed and shape), reusable run after run."""

    def __init__(self, catalog: Catalog, world_seed: int, shape: WorldShape | None = None) -> None:
        self.catalog = catalog
        self.world_seed = world_seed
        self.episode = Episode(list(catalog.services.values()), world_seed, shape=shape)
        self.shape: WorldShape = self.episode.world.shape
        self._pristine = self.episode.snapshot()
        self._baseline: dict[str, bytes] = {}  # stores whose baseline is not the pristine image
        self._baseline_writes: dict[str, int] = {}  # their write counts then: unchanged since, nothing to diff
        self._dirty: set[str] = set()  # stores that differ from the pristine image
        self.calls = 0
        #: The composer's reads (StateView.records) of stores in their seeded state, which never changes.
        self.seeded_reads: dict[Any, Any] = {}
        #: Each service's tables by name (checks name them).
        self.tables: dict[str, dict[str, Table]] = {
            name: {t.name: t for t in store.metadata.tables.values() if not t.name.startswith("_")}
            for name, store in self.episode.stores.items()
        }

    @property
    def world(self) -> Any:
        return self.episode.world

    def fresh(self, setup: Sequence[SetupRecord] = ()) -> None:
        """Back to the seeded state of the world, plus ``setup`` records."""
        for name in sorted(self._dirty):
            self.episode.stores[name].restore(self._pristine[name])
        self._dirty = set()
        self._baseline = {}
        self._baseline_writes = {}
        self.insert(setup)

    def is_seeded(self, service: str) -> bool:
        """Whether ``service``'s store is in the world's seeded state (nothing planted or written since ``fresh``)."""
        return service not in self._dirty

    def insert(self, records: Iterable[SetupRecord]) -> None:
        """Add records to the current state; the baseline moves with them."""
        by_target: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for record in records:
            by_target.setdefault((record.service, record.table), []).append(dict(record.row))
        for service in dict.fromkeys(s for s, _ in by_target):
            store = self.episode.stores[service]
            for table in store.insert_order(t for s, t in by_target if s == service):
                store.insert_rows(table, by_target[(service, table)])
        for service in sorted({service for service, _ in by_target}):
            self.planted(service, [table for s, table in by_target if s == service])

    def planted(self, service: str, tables: Sequence[str]) -> None:
        """Rows were added to ``tables`` of ``service`` outside a tool call (setup): they are part of the new baseline."""
        store = self.episode.stores[service]
        store.advance_counters(tables)  # as Episode.apply_setup does, so both mint the same ids afterwards
        self._dirty.add(service)
        self._baseline[service] = store.snapshot()
        self._baseline_writes[service] = store.write_count

    def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        self.calls += 1
        result = self.episode.call(service, tool, dict(arguments))
        if result.success and self.catalog.tools[f"{service}.{tool}"].is_write:
            self._dirty.add(service)
        return result

    def execute(self, specs: Sequence[StepSpec], overrides: Mapping[int, Any] | None = None, *, per_step: bool = True) -> Run:
        """Run ``specs`` in order on the current state; stop at the first failure.

        ``per_step``: record what each write changed, and the checkpoints (the reference run needs them; replays
        only need ``diff``).
        """
        return self._run_from(Run(), specs, overrides or {}, per_step)

    def replay(self, reference_specs: Sequence[StepSpec], reference: Run, reference_diff: Mapping[str, StateDiff],
               specs: Sequence[StepSpec], overrides: Mapping[int, Any] | None = None) -> tuple[Run, dict[str, StateDiff]]:
        """Run ``specs`` on the current state (fresh, with the setup) as ``execute`` would, and what the run changed
        (as ``diff``). The run starts after the first steps it shares with the reference run, from its checkpoint:
        the state and the items those steps left are the reference's, byte for byte; a store that neither run
        wrote after them ends as the reference's did, so its diff is the reference's."""
        overrides = overrides or {}
        shared = 0
        limit = min(len(specs), len(reference_specs), len(reference.steps), len(reference.checkpoints) - 1)
        while shared < limit and shared not in overrides and specs[shared] == reference_specs[shared] and reference.steps[shared].ok:
            shared += 1
        at = reference.checkpoints[shared] if reference.checkpoints else {}
        for name, image in at.items():
            self.episode.stores[name].restore(image)
            self._dirty.add(name)
        counts = {name: store.write_count for name, store in self.episode.stores.items()}
        run = self._run_from(Run(steps=list(reference.steps[:shared])), specs, overrides, False)
        final = reference.checkpoints[-1] if reference.checkpoints else {}
        settled = {name: reference_diff[name] for name in at
                   if name in reference_diff and final.get(name) is at[name] and self.episode.stores[name].write_count == counts[name]}
        return run, self.diff(settled)

    def _run_from(self, run: Run, specs: Sequence[StepSpec], overrides: Mapping[int, Any], per_step: bool) -> Run:
        items: list[dict[str, Any] | None] = [step.item for step in run.steps]
        written: dict[str, bytes] = {}
        for index in range(len(run.steps), len(specs)):
            spec = specs[index]
            if per_step:
                run.checkpoints.append(dict(written))
            try:
                arguments = {name: resolve(expr, items) for name, expr in spec.args}
            except MissingValue as exc:
                run.complete, run.failure = False, f"step {index + 1}: {exc}"
                return run
            step = self.run_step(spec, arguments, overrides.get(index, spec.select_value), per_step=per_step)
            run.steps.append(step)
            items.append(step.item)
            if not step.ok:
                run.complete, run.failure = False, f"step {index + 1} ({spec.service}.{spec.tool}): {step.error}"
                return run
            if per_step and step.changes is not None:
                written[spec.service] = self.episode.stores[spec.service].snapshot()
        if per_step:
            run.checkpoints.append(dict(written))
        return run

    def run_step(self, spec: StepSpec, arguments: dict[str, Any], select_value: Any, *, per_step: bool = True) -> StepRun:
        info = self.catalog.tools[f"{spec.service}.{spec.tool}"]
        store = self.episode.stores[spec.service]
        before = store.snapshot() if info.is_write and per_step else None
        result = self.call(spec.service, spec.tool, arguments)
        call = PlanStep(service=spec.service, tool=spec.tool, arguments=arguments)
        if not result.success:
            return StepRun(call, False, f"{result.error_code}: {result.error_message}")
        item = select_item(info, result.data, spec.select_key, select_value)
        changes = diff_states(*store.changed_rows_since(before)) if before is not None else None
        if item is None:
            return StepRun(call, False, "the item to continue with is not in the result", result.data, None, changes)
        return StepRun(call, True, None, result.data, item, changes)

    def diff(self, known: Mapping[str, StateDiff] | None = None) -> dict[str, StateDiff]:
        """What changed since the baseline (the seeded state plus setup), per service; ``known``: stores whose
        diff is already known (a replay's stores that ended as the reference's)."""
        out: dict[str, StateDiff] = dict(known or {})
        for name, store in self.episode.stores.items():
            if name in out:
                continue
            if name not in self._dirty or self._baseline_writes.get(name) == store.write_count:
                out[name] = StateDiff({})
                continue
            base = self._baseline.get(name, self._pristine[name])
            out[name] = diff_states(*store.changed_rows_since(base))
        return out
