"""Seeding a compiled service from the World: rows whose people, emails and companies are the world's.

Entities are seeded parents first, so every reference points at a real row; state fields cycle
through their values (mostly the initial one) so every transition has a row it applies to; the first
row of a person-like entity is the world's user (the "current" user of ``/me`` tools).
"""

from __future__ import annotations

from typing import Any
from zlib import crc32

from mcp_services.kernel.context import COUNTERS_TABLE, ToolContext

from generator.compiler.behaviours import AMOUNT, amount_columns, amount_left, with_amount
from generator.compiler.runtime import ServiceRuntime
from generator.documented import seed_values
from generator.spec import EntityDef, FieldDef
from generator.values import ValueMaker, ordered_ranges, range_pairs
from generator.vocabulary import REGIONS

MAX_PER_PARENT = 16
OWNED_ROWS = 10


def seed_service(rt: ServiceRuntime, ctx: ToolContext) -> None:
    maker = ValueMaker(ctx.world, ctx.rng("seed"))
    rng = maker.rng
    natural = _natural_keys(rt)
    flags = _flag_fields(rt)
    marked = _marked_fields(rt)
    ids: dict[str, list[Any]] = {}
    companies = {o.name for o in ctx.world.organisations}  # what a value maker falls back to for unknown fields
    deferred: list[tuple[str, Any, str, str]] = []  # entity, row id, column, referenced entity
    counters: dict[str, int] = {}
    seeded: dict[str, dict[Any, dict[str, Any]]] = {}  # entity -> id -> row, for amounts under their owner
    for definition in _order(rt):
        entity = definition.name
        owner = definition.owner_field
        parents = ids.get(owner.ref, []) if owner is not None and owner.ref else []
        if definition.singleton:
            count = 1
        elif definition.per_parent:
            count = min(len(parents), MAX_PER_PARENT)
        elif owner is not None and parents:
            count = max(definition.seed_rows, OWNED_ROWS) if definition.seed_rows else 0
        else:
            count = definition.seed_rows
        states = _state_cycle(definition, count)
        pairs = range_pairs([f.name for f in definition.fields])
        made: list[Any] = []
        rows: list[dict[str, Any]] = []
        used: dict[str, set[Any]] = {}  # natural-key column -> values taken: a key must find one row
        documented = seed_values(rt.spec, definition, natural.get(entity, set()))
        number = 0
        for index in range(count):
            person = ctx.world.user if (definition.person and index == 0) else maker.person(_person_index(entity, index, rng))
            key = None
            while key is None or key in made:
                number += 1
                key = rt.key_for(definition, number)
            row: dict[str, Any] = {"id": key}
            for f in definition.fields:
                if f.ref and f.ref in rt.entities:
                    pool = ids.get(f.ref)
                    if definition.per_parent and owner is not None and f.name == owner.name:
                        row[f.name] = parents[index]
                    elif pool:  # the first row points at the first rows (the user is in the first channel)
                        row[f.name] = pool[index % len(pool)] if f is owner or index == 0 else rng.choice(pool)
                    elif f.ref != entity:
                        deferred.append((entity, row["id"], f.name, f.ref))
                    continue
                if definition.state and f.name == definition.state.field:
                    row[f.name] = states[index]
                    continue
                if f.name in flags.get(entity, ()):
                    row[f.name] = index % 4 == 3
                    continue
                if f.name in marked.get(entity, ()):
                    row[f.name] = False  # not refunded yet: the refund that would say so is the user's to make
                    continue
                value = _field_value(maker, f, person, index, entity, f.name in natural.get(entity, ()))
                known = documented.get(f.name)  # the value is drawn all the same, so other columns keep theirs
                if known is not None and (known.certain or value in companies):
                    value = known.values[(index + crc32(f.name.encode())) % len(known.values)]
                if f.name in natural.get(entity, ()) and not (f.enum or f.pattern or f.format):
                    value = _unique(value, used.setdefault(f.name, set()), index)
                row[f.name] = value
            ordered_ranges(row, pairs)
            _share_of_owner(definition, row, seeded, rng, rt.entities, rows)
            if definition.timestamps:
                created = -rng.randint(5, 400)
                if "created_at" not in row:
                    row["created_at"] = maker.moment(days=created)
                if "updated_at" not in row:
                    row["updated_at"] = maker.moment(days=created + rng.randint(0, 4))
            made.append(key)
            rows.append(row)
        if rows:
            records = rt.records[entity]
            ctx.insert_many([records.record({c: rt.coerce(entity, c, r.get(c)) for c in records.columns}) for r in rows])
        counters[f"k_{entity}"] = number
        ids[entity] = made
        seeded[entity] = {r["id"]: r for r in rows}
    for entity, key, column, ref in deferred:
        pool = ids.get(ref)
        if pool:
            record = ctx.fetch(rt.records[entity].cls, key)
            if record is not None:
                ctx.update(record, **{column: rng.choice(pool)})
    if counters:
        ctx.conn.executemany(f"INSERT INTO {COUNTERS_TABLE} (name, value) VALUES (?, ?)", list(counters.items()))


def _share_of_owner(definition: EntityDef, row: dict[str, Any], seeded: dict[str, dict[Any, dict[str, Any]]],
                    rng: Any, entities: dict[str, EntityDef], earlier: list[dict[str, Any]]) -> None:
    """A row under a row with an amount takes a small share of it (a refund of part of its charge, of its
    payment's ``amount_money``), in every column holding its amount, and never more than is left of it (after
    the ``earlier`` rows of its kind), so the rows under one parent never add up to more than its amount."""
    found = amount_left(definition, row, entities, lambda f: seeded.get(f.ref, {}).get(row.get(f.name)),
                        lambda f: (r for r in earlier if r.get(f.name) == row.get(f.name)))
    if found is None:
        return
    left, total, owner, parent = found
    share = min(total * rng.uniform(0.05, 0.25), max(left, 0))
    like = next((parent.get(f.name) for f in amount_columns(entities[owner.ref], parent=True)
                 if isinstance(parent.get(f.name), dict)), None)
    for f in amount_columns(definition):
        if f.type == "object" and not isinstance(row.get(f.name), dict):
            continue  # a money object the row does not hold stays so
        integer = (f.type if f.type != "object" else (f.json_schema or {}).get("properties", {}).get(AMOUNT, {}).get("type")) == "integer"
        row[f.name] = with_amount(f, row.get(f.name), int(share) if integer else round(share, 2), like)


def _field_value(maker: ValueMaker, f: FieldDef, person: Any, index: int, entity: str, natural_key: bool) -> Any:
    del natural_key  # natural keys are made unique by _unique, not numbered
    schema = _schema(f)
    return maker.value(schema, f.name, semantic=f.semantic, person=person, index=index, entity=entity)


def _unique(value: Any, used: set[Any], index: int) -> Any:
    """``value``, changed just enough not to repeat one already used in this column."""
    if isinstance(value, (bool, list, dict)):
        return value  # cannot be made unique; lookups take the first match
    candidate = value
    bump = 1
    while candidate in used:
        if isinstance(value, (int, float)):
            candidate = value + bump
        elif isinstance(value, str) and "@" in value:
            local, _, domain = value.partition("@")
            candidate = f"{local}+{index + bump}@{domain}"
        elif isinstance(value, str):  # "Website redesign (EMEA)": never "<field>-<n>" or "<Name> <n>"
            qualifier = REGIONS[(bump - 1) % len(REGIONS)]
            round_ = (bump - 1) // len(REGIONS)
            candidate = f"{value} ({qualifier})" if not round_ else f"{value} ({qualifier} {round_ + 1})"
        else:
            return value
        bump += 1
    used.add(candidate)
    return candidate


def _schema(f: FieldDef) -> dict[str, Any]:
    if f.json_schema and f.type in ("object", "array"):
        return f.json_schema
    if f.type == "any":
        return {"type": "string"}
    schema: dict[str, Any] = {"type": f.type}
    if f.description:
        schema["description"] = f.description
    for key, value in (("enum", f.enum), ("format", f.format), ("pattern", f.pattern), ("minimum", f.minimum),
                       ("maximum", f.maximum), ("minLength", f.min_length), ("maxLength", f.max_length)):
        if value is not None:
            schema[key] = value
    if f.type == "integer":
        for key in ("minimum", "maximum"):
            if key in schema:
                schema[key] = int(schema[key])
    return schema


def _state_cycle(definition: EntityDef, count: int) -> list[Any]:
    if definition.state is None:
        return [None] * count
    others = [v for v in definition.state.values if v != definition.state.initial] or [definition.state.initial]
    cycle: list[Any] = []
    for index in range(count):
        cycle.append(definition.state.initial if index % 2 == 0 else others[(index // 2) % len(others)])
    return cycle


def _person_index(entity: str, index: int, rng: Any) -> int:
    return rng.randint(0, 10_000)


def _order(rt: ServiceRuntime) -> list[EntityDef]:
    """Entities with the ones they reference first (cycles broken arbitrarily but stably)."""
    done: list[EntityDef] = []
    seen: set[str] = set()
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name in visiting:
            return
        visiting.add(name)
        definition = rt.entities[name]
        owner = definition.owner_field
        refs = [owner.ref] if owner is not None and owner.ref else []
        refs += [f.ref for f in definition.fields if f.ref and f.ref != name and f is not owner]
        for ref in refs:
            if ref in rt.entities:
                visit(ref)
        visiting.discard(name)
        seen.add(name)
        done.append(definition)

    for name in rt.entities:
        visit(name)
    return done


def _natural_keys(rt: ServiceRuntime) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for tool in rt.spec.tools:
        entity = tool.behaviour.entity
        if entity is None:
            continue
        for binding in tool.bindings.values():
            if binding.role == "key" and binding.column and binding.column != "id":
                keys.setdefault(entity, set()).add(binding.column)
            if binding.role == "parent" and binding.entity and binding.lookup and binding.lookup != "id":
                keys.setdefault(binding.entity, set()).add(binding.lookup)
    return keys


def _marked_fields(rt: ServiceRuntime) -> dict[str, set[str]]:
    """The flags records set on the rows they are made under (a charge's ``refunded``): seeded false."""
    marked: dict[str, set[str]] = {}
    for tool in rt.spec.tools:
        if tool.behaviour.marks and tool.behaviour.marks_entity:
            marked.setdefault(tool.behaviour.marks_entity, set()).update(tool.behaviour.marks)
    return marked


def _flag_fields(rt: ServiceRuntime) -> dict[str, set[str]]:
    flags: dict[str, set[str]] = {}
    for tool in rt.spec.tools:
        transition = tool.behaviour.transition
        if tool.behaviour.entity and transition is not None and isinstance(transition.to, bool):
            flags.setdefault(tool.behaviour.entity, set()).add(transition.field)
    return flags
