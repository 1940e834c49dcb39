"""Scenarios: the work people do, built live on a world, step by step, into a task with a purpose.

An archetype (``composer.archetypes``) is a short function over a ``Scenario``. It picks real records
of the world (a customer with a paid invoice, her open ticket), plants what starts the work (an
inbound email, a chat message, a voicemail) and the traps real data has (a near-duplicate, a policy
document), then calls tools the way a careful colleague would: each call runs at once on the world,
so later steps use what earlier ones found. Tools are chosen by intent (``act("refund", on=charge)``)
among every mounted service that declares it, so any service whose tools carry intents can fill an
archetype. What the archetype says about each step (why, to whom, what goes in it) becomes the
instruction; what the steps change becomes the checks (``composer.compose``).

Every referring expression the instruction uses ("her open ticket") is recorded with the relation
and the conditions that pick its record out (``refer``); ``composer.resolve`` proves, before a task is
kept, that each one picks exactly that record.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.diff import StateDiff
from mcp_services.kernel.entity import EntityRuntime
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import Query
from mcp_services.kernel.world import Person, World
from mcp_services.tasks.spec import SetupRecord
from mcp_services.tasks.surface import FactKind

from composer.catalog import Catalog, ToolInfo
from composer.decisions import Decision, DecisionKind, merged, near_threshold
from composer.kinds import Kinds, kinds_of
from composer.plan import Composed, Expr, ListOf, Lit, Ref, StepSpec, field_value
from composer.runner import Runner, StepRun

T = TypeVar("T")


def service_key(service: str) -> str:
    """The key under which ``Scenario.used`` counts a service's calls (beside each tool's ``service.tool``): among
    tools used equally often, those of the less used services come first (a catalog of 243 services is spread over)."""
    return f"service:{service}"


#: Kept plans that must call a tool before a request with it may be one that need not be done (``Scenario.reached``).
REACHED_AFTER = 2


def channel_key(channel: str) -> str:
    """The key under which ``Scenario.used`` counts the kept tasks whose request came in on ``channel``: a request
    comes in more often on the channels fewer kept tasks used (every channel keeps a share of the set)."""
    return f"channel:{channel}"


def kept_key(tool_key: str) -> str:
    """The key under which ``Scenario.used`` counts the kept plans that call a tool (``used`` itself also counts the tries
    that failed): a request asks for what need not be done (a false premise) only with a tool some kept plan calls."""
    return f"kept:{tool_key}"

Family = Literal["support", "sales", "finance", "operations", "hr", "marketing"]
FAMILIES: tuple[Family, ...] = ("support", "sales", "finance", "operations", "hr", "marketing")
Phrasing = Literal["guided", "goal"]

#: Parameter names that carry the main text of a write, best first (when no param is typed ``text``).
TEXT_PARAMS = ("body", "text", "message", "note", "comment", "content", "description", "reason")
SUBJECT_PARAMS = ("subject", "title", "summary", "name", "topic")


class Skip(Exception):
    """The archetype cannot be filled on this world (no suitable record): the candidate is dropped."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Archetype:
    """A business workflow: who starts it, what each step is for, what the person wants in the end."""

    id: str
    family: Family
    title: str
    services: tuple[str, ...]
    build: Callable[[Scenario], None]
    weight: float = 1.0
    #: Whether a catalog can serve it beyond naming its services (an archetype that fills from any service).
    fits: Callable[[Catalog], bool] | None = None
    #: Its weight for a catalog, where it grows with the catalog (a request any service can fill); None: ``weight``.
    weigh: Callable[[Catalog], float] | None = None

    def serves(self, catalog: Catalog) -> bool:
        return all(s in catalog.services for s in self.services) and (self.fits is None or self.fits(catalog))

    def weight_for(self, catalog: Catalog) -> float:
        return self.weigh(catalog) if self.weigh is not None else self.weight


ARCHETYPES: dict[str, Archetype] = {}


def archetype(
    id: str,  # noqa: A002 - reads as data
    *,
    family: Family,
    title: str,
    services: Sequence[str],
    weight: float = 1.0,
    fits: Callable[[Catalog], bool] | None = None,
    weigh: Callable[[Catalog], float] | None = None,
) -> Callable[[Callable[[Scenario], None]], Callable[[Scenario], None]]:
    """Register an archetype: ``@archetype("duplicate-charge-refund", family="finance", ...)``."""

    def register(fn: Callable[[Scenario], None]) -> Callable[[Scenario], None]:
        if id in ARCHETYPES:
            raise ValueError(f"archetype {id!r} is declared twice")
        if family not in FAMILIES:
            raise ValueError(f"archetype {id!r}: unknown family {family!r}")
        ARCHETYPES[id] = Archetype(id, family, title, tuple(services), fn, weight, fits, weigh)
        return fn

    return register


# -- what a scenario talks about ----------------------------------------------------------------------


@dataclass(frozen=True)
class Rec:
    """A record of the world, as its service's tools return it."""

    service: str
    entity: str
    table: str
    key: str
    row: Mapping[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.row[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.row.get(name, default)


@dataclass(frozen=True)
class Reference:
    """A referring expression of the instruction and how it picks out its record."""

    text: str
    rec: Rec
    relation: str
    where: Mapping[str, Any]
    latest: str | None = None  # pick the row with the greatest value of this column among the matches


@dataclass(frozen=True)
class Trap:
    """A record that looks like the target but must be left alone (or a rule that must not be broken)."""

    kind: str
    rec: Rec
    description: str
    step: int | None = None  # the plan step that would select the trap instead of the target


@dataclass(frozen=True)
class PolicyUse:
    """A rule that lives in the data (a document, a manager's email) and changes what the plan does.

    Either it decides one argument of one step (``param``: the compliant value, and what an agent
    that ignores the rule passes), or it forbids something the request seems to ask for
    (``violation``: the plan of an agent that does it anyway; ``absent``: the row that must not
    appear, as (service, table, match)); ``step`` is the step that does what the rule wants.
    """

    document: Rec
    rule: str
    step: int
    description: str
    param: str | None = None
    compliant: Expr | None = None
    violating: Expr | None = None
    violation: tuple[StepSpec, ...] = ()
    absent: tuple[str, str, dict[str, Any]] | None = None
    required: bool = False  # the rule asks for the step itself (tell the finance lead): leaving it out breaks it


@dataclass(frozen=True)
class Answer:
    """What the person asked, the value that answers it, and values that must not be given instead."""

    question: str
    value: Any
    forbidden: tuple[Any, ...] = ()


Stage = Literal["trigger", "identify", "consult", "decide", "act", "report", "follow-up"]
STAGES: tuple[Stage, ...] = ("trigger", "identify", "consult", "decide", "act", "report", "follow-up")


@dataclass(frozen=True)
class Said:
    """A fact a message must state: what it is ("the refund id"), its value, and how it reads (``surface``)."""

    noun: str
    value: Expr
    kind: FactKind | None = None  # None: read as the value's type says (an amount, a date, an id)
    exact: bool = False  # the value itself is what was asked (a carrier's code): no other form of its record will do


@dataclass
class StepNote:
    """What the instruction and the rubric say about one step."""

    say: str  # the step in plain words (a manager's clause when ``guided``)
    needed: bool = True  # a step the task needs (reads that only explore are not)
    mentions: list[tuple[Ref, str]] = field(default_factory=list)  # values this step passes on, and how they are named
    accept: dict[str, list[Any]] = field(default_factory=dict)  # parameters where any of several values is right
    stage: Stage = "act"
    guided: bool = True  # the clause a guided request states (lookups and reads are the agent's to plan)
    facts: list[Said] = field(default_factory=list)  # what the message this step writes must state
    opens: int | None = None  # the search step whose pick this step opens by id (a trap belongs to that search)
    told: str | None = None  # the colleague (by address) this message tells: any channel that reaches them will do
    #: What the message must not state: the other candidates (another article's link, another manager's name), so a
    #: message that lists every candidate, the right one among them, fails.
    unsaid: list[Said] = field(default_factory=list)
    #: Tables where this step's changes are a tool default the request never asks for (guests' responses reset by a
    #: move): allowed, never demanded, so a run that passes the other value of the default passes too.
    incidental: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    """A call in the plan, run already: its item is what later steps read."""

    index: int
    service: str
    tool: str
    item: Mapping[str, Any] | None

    def ref(self, name: str) -> Ref:
        return Ref(self.index, name)

    def value(self, name: str) -> Any:
        return field_value(self.item, name)


@dataclass
class Brief:
    """What the request says, apart from the steps."""

    intro: str = ""  # how the work came up ("Ana Ruiz emailed this morning about a double charge.")
    goal: str = ""  # the outcome, as a person asks for it (goal phrasing)
    constraints: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)  # facts the text must state (names, dates)
    needs_date: bool = False
    also: list[str] = field(default_factory=list)  # follow-ups a walk added, as the goal says them ("note it on her contact")


class StateView:
    """The composer's own read access to the records of a runner's current state (never the agent's)."""

    def __init__(self, catalog: Catalog, runner: Runner) -> None:
        self.catalog = catalog
        self.runner = runner

    def runtime(self, service: str, entity: str) -> EntityRuntime:
        svc = self.catalog.services.get(service)
        if svc is None or entity not in svc.entities:
            raise Skip(f"needs {service}.{entity}")
        return svc.entities[entity]

    def entity_of_table(self, service: str, table: str) -> str:
        svc = self.catalog.services.get(service)
        for name, runtime in (svc.entities.items() if svc is not None else ()):
            if runtime.table.name == table:
                return name
        raise Skip(f"no entity of {service} has the table {table}")

    def records(
        self, service: str, entity: str, *, where: Mapping[str, Any] | None = None, order: Sequence[str] = (), fold: bool = False
    ) -> list[Rec]:
        """Records of an entity, as its tools return them, filtered by equality (a tuple value: any of these).

        ``fold``: text compares case-insensitively (ASCII), as people read names and addresses.
        """
        runtime = self.runtime(service, entity)
        # Candidate after candidate reads the same seeded records: reads of a store still in its seeded
        # state are kept (that state never changes); reads of a store the candidate changed are not.
        key: Any = None
        if self.runner.is_seeded(service):
            try:
                key = (service, entity, tuple(sorted((where or {}).items())), tuple(order), fold)
                hash(key)
            except TypeError:
                key = None
        if key is not None and key in self.runner.seeded_reads:
            return list(self.runner.seeded_reads[key])
        conn = self.runner.episode.stores[service]._raw  # noqa: SLF001 - the composer reads its own episode
        query: Query[Any] = Query(conn, runtime)
        for name, value in (where or {}).items():
            values = value if isinstance(value, tuple) else (value,)
            if fold and any(isinstance(v, str) for v in values):
                column = '"' + name.replace('"', '""') + '"'
                query.where_sql(" OR ".join(f"{column} = ? COLLATE NOCASE" for _ in values), *values)
            elif isinstance(value, tuple):
                query.where_in(name, value)
            else:
                query.where(**{name: value})
        if order:
            query.order_by(*order)
        rows = present_records(conn, runtime, query.all())
        found = [Rec(service, entity, runtime.table.name, str(row["id"]), row) for row in rows]
        if key is not None:
            self.runner.seeded_reads[key] = tuple(found)
        return found

    def record(self, service: str, entity: str, key: Any) -> Rec:
        found = self.records(service, entity, where={"id": key})
        if not found:
            raise Skip(f"no {service}.{entity} {key}")
        return found[0]


class Scenario:
    """One candidate task being built on a live world (see the module docstring)."""

    def __init__(
        self, catalog: Catalog, runner: Runner, rng: random.Random, archetype: Archetype, *, used: Counter[str] | None = None
    ) -> None:
        self.catalog = catalog
        #: Kept plans of the set so far that call each tool (``service.tool``), and tries of it that failed;
        #: see ``less_used_first``.
        self.used: Counter[str] = used if used is not None else Counter()
        #: The tools a request chose to act with (``requests.find_request``): tried in vain if the task is dropped.
        self.intended: list[ToolInfo] = []
        self.runner = runner
        self.rng = rng
        self.archetype = archetype
        self.world: World = runner.world
        self.view = StateView(catalog, runner)
        self.kinds: Kinds = kinds_of(catalog)
        self.setup: list[SetupRecord] = []
        self.specs: list[StepSpec] = []
        self.notes: list[StepNote] = []
        self.items: list[Mapping[str, Any] | None] = []
        self.references: list[Reference] = []
        self.traps: list[Trap] = []
        self.policy: PolicyUse | None = None
        self.policy_documents: list[Rec] = []  # where the rules the task must follow live (applied or not)
        self.answer: Answer | None = None
        self.trigger: Rec | None = None
        self.subject: Person | None = None
        #: What the data decides in this task (``decide``; rules read, traps and questions record theirs themselves).
        self.decisions: list[Decision] = []
        #: The rules the work reads (their titles): a rule read that changes nothing is a rule decision at its default.
        self.rules_read: list[str] = []
        #: What a literal agent writes that the plan does not (the refund a false premise asks for): ``composer.literal``.
        self.literal_writes: list[StepSpec] = []
        #: Where each reason a colleague's request gives lives in the data ("mailbox.message", "files.folder"): a generic
        #: request gives none that nothing bears out (``composer.archetypes.reasons``).
        self.reasons: list[str] = []
        #: Steps a literal agent does otherwise (its reply says it did what was asked), by their index in the plan.
        self.literal_steps: dict[int, StepSpec] = {}
        #: The trigger as it arrived (channel, the step that found it), when the workflow used ``stages.channels``.
        self.arrival: Any = None
        #: What the work is about, in a few words (the trigger's subject line): notes and follow-ups cite it.
        self.topic: str = ""
        #: How the request names records the plan has found or made, by step: "the ticket Ana opened".
        self.names: dict[int, str] = {}
        self._attempts: list[dict[str, bytes]] = []
        self.brief = Brief()
        #: Services the plan has written to: setup may still be planted in the others (a procedure a walk writes down).
        self._written: set[str] = set()

    # -- reading the world (the composer's own view, never the agent's) ----------------------------------

    def runtime(self, service: str, entity: str) -> EntityRuntime:
        return self.view.runtime(service, entity)

    def records(self, service: str, entity: str, *, where: Mapping[str, Any] | None = None, order: Sequence[str] = ()) -> list[Rec]:
        return self.view.records(service, entity, where=where, order=order)

    def less_used_first(self, items: list[T], tools: Callable[[T], Iterable[ToolInfo]]) -> list[T]:
        """``items`` (already in a seeded order), those whose tools the set's kept plans call least first: a set
        spreads over every tool it can reach. The order within equal use stays the seeded one."""
        def use(item: T) -> tuple[int, int]:
            return min(((self.used.get(t.key, 0), self.used.get(service_key(t.service), 0)) for t in tools(item)),
                       default=(0, 0))

        return sorted(items, key=use)

    def reached(self, tool: ToolInfo) -> bool:
        """Whether the set's kept plans call ``tool`` often enough (``REACHED_AFTER``) for a request with it to be one
        that need not be done (a false premise): the set reaches every tool by requests that are done, and a rare tool
        keeps its few tasks."""
        return self.used.get(kept_key(tool.key), 0) >= REACHED_AFTER

    def tried_in_vain(self, *tools: ToolInfo) -> None:
        """Tools no record let a request use (a kind's reads, tried together): each counts as used, and its service
        once, so a set does not try them first every time."""
        for tool in tools:
            self.used[tool.key] += 1
        for service in dict.fromkeys(service_key(tool.service) for tool in tools):
            self.used[service] += 1

    def record(self, service: str, entity: str, key: Any) -> Rec:
        return self.view.record(service, entity, key)

    def pick(self, candidates: Sequence[T], reason: str) -> T:
        """One of ``candidates`` at random (``Skip`` with ``reason`` when there is none)."""
        if not candidates:
            raise Skip(reason)
        return candidates[self.rng.randrange(len(candidates))]

    def person(self, email: str) -> Person:
        for person in self.world.people:
            if person.email == email:
                return person
        raise Skip(f"no person with email {email}")

    def has(self, service: str) -> bool:
        return service in self.catalog.services

    def written(self, service: str) -> bool:
        """Whether the plan wrote to ``service`` already (no setup can be planted there any more)."""
        return service in self._written

    # -- planting the setup: what has happened before the request ----------------------------------------

    def _plant(self, service: str, action: Callable[[ToolContext], Any]) -> Any:
        if service in self._written:
            raise RuntimeError(f"plant the setup in {service} before the plan's first write there")
        if service not in self.runner.episode.stores:
            raise Skip(f"needs {service}")
        store = self.runner.episode.stores[service]
        image = store.snapshot()
        if self._attempts:  # an attempt that fails takes what it planted back
            self._attempts[-1].setdefault(service, image)
        with store.transaction() as tx:
            result = action(ToolContext(tx, self.world, service))
        before, after = store.changed_rows_since(image)
        if any(before.values()):
            raise RuntimeError(f"planting in {service} changed existing rows; setup may only add records")
        for table, rows in after.items():
            for row in rows.values():
                self.setup.append(SetupRecord(service=service, table=table, row=row))
        self.runner.planted(service, [table for table, rows in after.items() if rows])
        return result

    def event(self, service: str, event: str, entity: str, /, **arguments: Any) -> Rec:
        """Make a world event happen (an inbound email, a new ticket) and return the record it made."""
        svc = self.catalog.services.get(service)
        if svc is None or event not in svc.events:
            raise Skip(f"needs the {service} event {event}")
        try:
            key = self._plant(service, lambda ctx: svc.events[event](ctx, **arguments))
        except ToolError as exc:  # the event cannot happen in this state of the world: the candidate does not fit
            raise Skip(f"the {service} event {event} was refused: {exc.message}") from None
        return self.record(service, entity, key)

    def copy(self, rec: Rec, **changes: Any) -> Rec:
        """A near-duplicate of a record: the same row with a new id and ``changes`` (keep its invariants!)."""
        runtime = self.runtime(rec.service, rec.entity)
        prefix = runtime.definition.key.prefix or rec.entity[:3]

        def clone(ctx: ToolContext) -> str:
            original = ctx.get(runtime.cls, rec.key)
            new_id = ctx.new_id(prefix, runtime.definition.key.width)
            ctx.insert(dataclasses.replace(original, id=new_id, **changes))
            return new_id

        return self.record(rec.service, rec.entity, self._plant(rec.service, clone))

    # -- the plan: calls a careful colleague would make -----------------------------------------------

    def tool_for(self, intent: str, *, accepts: str | None = None, service: str | None = None) -> ToolInfo:
        """The tool that does ``intent`` (and takes an id of type ``accepts``), preferring ``service``."""
        candidates = [
            t
            for t in self.catalog.tools.values()
            if t.intent == intent
            and (service is None or t.service == service)
            and (accepts is None or any(p.semtype == accepts for p in t.params))
        ]
        if not candidates:
            raise Skip(f"no tool does {intent!r}" + (f" on {accepts}" if accepts else ""))
        candidates.sort(key=lambda t: (len(t.params), t.key))
        return candidates[0]

    def call(
        self,
        service: str,
        tool: str,
        args: Mapping[str, Any],
        *,
        say: str,
        select: Rec | str | None = None,
        needed: bool = True,
        mentions: Sequence[tuple[Ref, str]] = (),
        accept: Mapping[str, Sequence[Any]] | None = None,
        stage: Stage | None = None,
        guided: bool | None = None,
        facts: Sequence[Said] = (),
        require_change: bool = False,
        incidental: Sequence[str] = (),
        select_by: tuple[str, Any] | None = None,
    ) -> Step:
        """Run one call now and add it to the plan. ``args`` values are expressions or plain values.

        ``stage`` says which part of the workflow the call is (reads default to ``identify``, writes to
        ``act``); a guided request states the clauses of writes and of the calls marked ``guided``.
        ``facts``: what the message the call writes must state (checked in its text, in any usual form).
        ``require_change``: a write that changes nothing but timestamps (an owner it already had) is a ``Skip``.
        ``incidental``: tables whose changes by this step come from a tool default (allowed, not checked).
        ``select_by``: (field, value) of the item a list without ids continues with (a carrier's rate by its service code)."""
        info = self.catalog.tools.get(f"{service}.{tool}")
        if info is None:
            raise Skip(f"needs {service}.{tool}")
        exprs = tuple((name, _expr(value)) for name, value in args.items())
        key = select.key if isinstance(select, Rec) else select
        spec = (StepSpec(service, tool, exprs, select_by[0], select_by[1]) if select_by is not None
                else StepSpec(service, tool, exprs, "id" if key is not None else None, key))
        index = len(self.specs)
        arguments = {name: self._value(expr) for name, expr in exprs}
        if self._attempts and info.is_write and service not in self._attempts[-1]:
            self._attempts[-1][service] = self.runner.episode.stores[service].snapshot()
        run: StepRun = self.runner.run_step(spec, arguments, spec.select_value, per_step=require_change and info.is_write)
        if not run.ok:
            raise Skip(f"{service}.{tool} failed while building: {run.error}")
        if run.changes is not None and not _meaningful(run.changes):
            raise Skip(f"{service}.{tool} changes nothing that matters here")
        if info.is_write:
            self._written.add(service)
        self.specs.append(spec)
        self.items.append(run.item)
        self.notes.append(
            StepNote(
                say=say, needed=needed, mentions=list(mentions), accept={k: list(v) for k, v in (accept or {}).items()},
                stage=stage or ("act" if info.is_write else "identify"),
                guided=info.is_write if guided is None else guided,
                facts=list(facts),
                incidental=list(incidental),
            )
        )
        return Step(index, service, tool, run.item)

    @contextmanager
    def attempt(self) -> Iterator[None]:
        """Steps added inside either all stay or, when the block raises ``Skip``, leave no trace (plan and world)."""
        sizes = (len(self.specs), len(self.notes), len(self.items), len(self.references), len(self.traps), len(self.brief.also),
                 len(self.decisions), len(self.setup))
        images: dict[str, bytes] = {}
        self._attempts.append(images)
        try:
            yield
        except Skip:
            for service, image in images.items():
                self.runner.episode.stores[service].restore(image)
            del self.specs[sizes[0]:], self.notes[sizes[1]:], self.items[sizes[2]:]
            del self.references[sizes[3]:], self.traps[sizes[4]:], self.brief.also[sizes[5]:]
            del self.decisions[sizes[6]:], self.setup[sizes[7]:]
            for index in [i for i in self.names if i >= sizes[0]]:
                del self.names[index]
            raise
        finally:
            self._attempts.pop()
            if self._attempts:  # an enclosing attempt must be able to undo what this one kept
                for service, image in images.items():
                    self._attempts[-1].setdefault(service, image)

    def would_succeed(self, service: str, tool: str, args: Mapping[str, Any]) -> bool:
        """Whether a call would succeed now, leaving nothing behind (for choosing among possible targets)."""
        store = self.runner.episode.stores[service]
        image = store.snapshot()
        arguments = {name: self._value(_expr(value)) for name, value in args.items()}
        try:
            return self.runner.episode.call(service, tool, arguments).success
        finally:
            store.restore(image)

    def already(self, service: str, tool: str, args: Mapping[str, Any]) -> str | None:
        """Whether a call may find its work done already: the service's refusal ("Meeting mtg_0019 is cancelled; only
        scheduled ones can be cancelled"), for the caller to read, or "" where the call would change nothing that matters
        (a closed ticket closed again); None where it would do the work. Leaves nothing behind."""
        store = self.runner.episode.stores[service]
        image = store.snapshot()
        arguments = {name: self._value(_expr(value)) for name, value in args.items()}
        try:
            result = self.runner.episode.call(service, tool, arguments)
            if not result.success:
                return str(result.error_message)
            before, after = store.changed_rows_since(image)
            changed = any(_differs(before.get(table, {}).get(key), row) for table, rows in after.items() for key, row in rows.items())
            gone = any(key not in after.get(table, {}) for table, rows in before.items() for key in rows)
            return None if changed or gone else ""
        finally:
            store.restore(image)

    def _value(self, expr: Expr) -> Any:
        from composer.plan import resolve

        return resolve(expr, self.items)

    def text(self, *parts: str | Ref) -> Composed:
        """Text a person would write, with looked-up values inside (``s.text("Refund ", step.ref("id"), " done.")``)."""
        return Composed(tuple(parts))

    # -- what the request says ------------------------------------------------------------------------

    def refer(self, rec: Rec, text: str, *, relation: str, where: Mapping[str, Any], latest: str | None = None) -> str:
        """A referring expression for ``rec``; ``where`` (and ``latest``) must pick it out uniquely."""
        self.references.append(Reference(text, rec, relation, dict(where), latest))
        return text

    def trap(self, kind: str, rec: Rec, description: str, *, step: Step) -> None:
        """``rec`` looks like what ``step`` selects but must be left alone; a replay that picks it must fail.

        A step that only opened what a search found (``StepNote.opens``) hands the trap to that search: the search
        is where an agent picks the wrong record."""
        index = step.index
        while (opened := self.notes[index].opens) is not None:
            index = opened
        self.traps.append(Trap(kind, rec, description, index))

    def set_policy(
        self, document: Rec, rule: str, step: Step, param: str, compliant: Any, violating: Any, description: str
    ) -> None:
        def expr(value: Any) -> Expr:
            return value if isinstance(value, (Lit, Ref, Composed, ListOf)) else Lit(value)

        self.policy = PolicyUse(document, rule, step.index, description, param, expr(compliant), expr(violating))
        if document not in self.policy_documents:
            self.policy_documents.append(document)

    def forbid_by_policy(
        self, document: Rec, rule: str, step: Step, violation: Sequence[StepSpec], absent: tuple[str, str, dict[str, Any]],
        description: str,
    ) -> None:
        """The rule forbids what a careless agent would do (``violation``); ``step`` does what the rule asks instead."""
        self.policy = PolicyUse(document, rule, step.index, description, violation=tuple(violation), absent=absent)
        if document not in self.policy_documents:
            self.policy_documents.append(document)

    def require_by_policy(self, document: Rec, rule: str, step: Step, description: str) -> None:
        """The rule asks for ``step`` (a word to the finance lead): an agent that skips it breaks the rule."""
        self.notes[step.index].guided = False  # a guided request does not say what the rule asks: the agent reads it
        self.policy = PolicyUse(document, rule, step.index, description, required=True)
        if document not in self.policy_documents:
            self.policy_documents.append(document)

    def spec(self, service: str, tool: str, args: Mapping[str, Any]) -> StepSpec:
        """A call that is not run (for a counterfactual plan), arguments as expressions or plain values."""
        return StepSpec(service, tool, tuple((name, _expr(value)) for name, value in args.items()))

    def ask(self, question: str, value: Any, forbidden: Iterable[Any] = ()) -> None:
        self.answer = Answer(question, value, tuple(forbidden))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.decide("figure", question)
        if self.answer.forbidden:
            self.decide("pick", question)

    # -- what the data decides ------------------------------------------------------------------------

    def decide(
        self, kind: DecisionKind, what: str, *, default: bool | None = None, value: float | None = None,
        threshold: float | None = None,
    ) -> None:
        """Record a decision the data makes here (see ``composer.decisions``). For a rule with a threshold, ``value`` and
        ``threshold`` say how close the deciding value came to it; ``default``: whether the outcome is the one the words
        of the request alone give (a rule), or whether the premise holds (a premise)."""
        near = near_threshold(value, threshold) if value is not None and threshold is not None else None
        self.decisions.append(Decision(kind, what, default, near))

    def read_rule(self, title: str) -> None:
        """The work reads the rule ``title`` (a policy page, a manager's email)."""
        self.rules_read.append(title)

    def decided(self) -> list[Decision]:
        """Every decision of the built scenario: those recorded, the traps (picks), and the rules read (at their default
        unless a rule changed the plan: ``policy``)."""
        found = list(self.decisions)
        found += [Decision("pick", trap.description) for trap in self.traps]
        changed = self.policy is not None
        rules = [d for d in found if d.kind == "rule"]
        found = [d if d.kind != "rule" or d.default is not None else dataclasses.replace(d, default=not changed) for d in found]
        if self.policy is not None and not rules:
            found.append(Decision("rule", self.policy.rule, default=False))
        if not rules and self.policy is None:
            found += [Decision("rule", title, default=True) for title in dict.fromkeys(self.rules_read)]
        return merged(found)


def _differs(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> bool:
    """Whether a row changed beyond when it was last touched (or is new)."""
    if before is None:
        return True
    return any(before.get(f) != v for f, v in after.items() if not f.endswith(("_at", "updated", "modified")))


def _meaningful(changes: StateDiff) -> bool:
    """Whether a write added a row or changed a field beyond when it was last touched."""
    for table in changes.tables.values():
        if table.added or table.deleted:
            return True
        if any(any(not f.endswith(("_at", "updated", "modified")) for f in change.fields) for change in table.changed.values()):
            return True
    return False


def _expr(value: Any) -> Expr:
    return value if isinstance(value, (Lit, Ref, Composed, ListOf)) else Lit(value)


def detail(value: Any) -> Lit:
    """A value the reference plan uses but the request leaves to the agent: no check demands it."""
    return Lit(value, stated=False)


def recipients(*people: Person | str) -> ListOf:
    """A list of email recipients, from people or addresses."""
    return ListOf(tuple(Lit(p.email if isinstance(p, Person) else p) for p in people))
