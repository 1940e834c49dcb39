"""A spec's entities registered on the kernel: one ``EntityDef`` each, its table built by the kernel.

The compiler adds what a spec leaves to it: an entity with no ``search`` fields searches its text
fields (``id`` when it has none), and a reference that would close a cycle of foreign keys is kept as
a plain column (the tools that write it check it instead).
"""

from __future__ import annotations

from mcp_services.kernel.entity import EntityRuntime, build_table, entity_class
from mcp_services.kernel.schema import EntityDef, FieldDef, KeyDef
from mcp_services.kernel.service import Service

from generator.spec import ServiceSpec

SIMULATED_TABLE = "simulated_calls"

#: The world model's memory of an episode: every write a simulated tool answered.
SIMULATED_CALLS = EntityDef(
    name="simulated_call",
    table=SIMULATED_TABLE,
    key=KeyDef(prefix="sim"),
    timestamps=False,
    fields=[
        FieldDef(name="tool", type="string", nullable=False, index=True),
        FieldDef(name="arguments", type="object", nullable=False),
        FieldDef(name="answer", type="any", nullable=False),
        FieldDef(name="created_at", type="string", nullable=False),
    ],
)


def add_entities(service: Service, spec: ServiceSpec) -> dict[str, EntityRuntime]:
    """Register every entity of ``spec`` on ``service`` (record class, table, codecs); returns them by name."""
    definitions = [_with_search(e) for e in spec.entities]
    related = {d.name: d for d in definitions}
    constrained = foreign_keys(spec)
    for definition in definitions:
        fields = {f for e, f in constrained if e == definition.name}
        service.add_entity(entity_class(spec.name, definition), definition, constrained=fields, related=related)
    return dict(service.entities)


def add_simulated_calls(service: Service) -> EntityRuntime:
    """The ``simulated_calls`` table: bookkeeping of the service, not one of its entities."""
    table = build_table(SIMULATED_CALLS, {}, service.metadata)
    cls = entity_class(service.name, SIMULATED_CALLS)
    runtime = EntityRuntime(service.name, cls, SIMULATED_CALLS, {}, table)
    setattr(cls, "__entity__", runtime)
    return runtime


def _with_search(definition: EntityDef) -> EntityDef:
    if definition.search:
        return definition
    text = [f.name for f in definition.fields if f.type == "string" and not f.ref and f.stored]
    return definition.model_copy(update={"search": text}) if text else definition


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
