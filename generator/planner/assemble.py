"""From intents to a spec: entities (fields, keys, relations, state machines) and tools with bindings.

An entity collects the fields its tools write (create/update bodies), filter on (list parameters) and
return (output schemas, where a source has them); its key type follows the parameters that carry its
ids; its state machine follows the transitions its tools perform. Each parameter of each tool is then
bound to what it means for that entity (key, parent, field, filter, paging, option).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from generator.naming import is_plural, plural, shorten, singular, snake, words
from generator.planner.intents import Intent, PreparedTool
from generator.planner.bindings import GENERIC_HOLDERS, flag_binding, member_column
from generator.planner.resources import (
    creating_actions,
    documented_states,
    memberships,
    rpc_rows,
    starting_state,
    state_value,
)
from generator.planner.roles import role_of
from generator.planner.scope import OUTSIDE_CORE, core_entities, route_entity
from generator.planner.wording import intent_and_phrases
from generator.planner.lexicon import (
    CURSOR_PARAMS,
    INITIAL_BY_TARGET,
    LABEL_FIELDS,
    LIMIT_PARAMS,
    OFFSET_PARAMS,
    OPTION_PARAMS,
    OPTION_PREFIXES,
    PAGE_PARAMS,
    PERSON_ENTITIES,
    RANGE_PREFIXES,
    RANGE_SUFFIXES,
    RESTORING,
    SEARCH_PARAMS,
    TERMINAL_STATES,
    TRANSITIONS,
    squash,
)
from generator.schemas import SchemaRejected, clean_text, normalise_schema
from generator.semantics import FORMAT_OF, documented_aliases, infer_semantic
from generator.spec import (
    Behaviour,
    Binding,
    EntityDef,
    FieldDef,
    HttpDef,
    KeyDef,
    StateDef,
    ToolDef,
    Transition,
)

MAX_FIELDS = 60
_VALUE_FORMATS = frozenset({"email", "date", "date-time", "uri", "url", "hostname", "ipv4", "ipv6"})
_INCLUDE_SUFFIXES = frozenset({"fields", "limit", "format", "since", "entities", "before", "sort", "page", "include",
                               "expand", "filter", "display", "member", "members", "count"})
_RESERVED_TABLES = {"simulated_calls"}
_BOOL_FLAG_VALUES = (True, False)


@dataclass
class _Entity:
    name: str
    fields: dict[str, FieldDef] = field(default_factory=dict)  # lowercase name -> field
    key_types: Counter[str] = field(default_factory=Counter)
    key_schemas: list[dict[str, Any]] = field(default_factory=list)
    transitions: dict[str, tuple[str, Any]] = field(default_factory=dict)
    singleton: bool = False
    per_parent: bool = False
    owner: str | None = None
    independent: bool = False  # has tools of its own (not only a path ancestor)
    targeted_by_send: bool = False
    keyed: bool = False  # some tool addresses one row by key or lists rows: not a singleton
    crud_fields: set[str] = field(default_factory=set)  # lowercase fields create/update tools write
    link: bool = False  # rows are memberships (a user in a conversation), made by link/unlink tools
    natural: set[str] = field(default_factory=set)  # lowercase columns tools look rows up by (a repo's workspace)
    ref_types: Counter[str] = field(default_factory=Counter)  # JSON types of the <entity>_id parameters elsewhere

    def get(self, name: str) -> FieldDef | None:
        return self.fields.get(name.lower())

    def add(self, f: FieldDef, force: bool = False) -> FieldDef:
        if f.name.lower() == "id":
            return f  # every entity has its id column already
        existing = self.get(f.name)
        if existing is not None:
            if existing.type != f.type and existing.type != "any":
                if {existing.type, f.type} <= {"integer", "number"}:
                    existing.type = "number"
                else:
                    existing.type = "any"
                    existing.enum = existing.pattern = existing.format = None
                    existing.semantic = None if not (existing.semantic or "").startswith("id:") else existing.semantic
            if existing.enum is not None:
                if f.enum is None and existing.type != "boolean":
                    existing.enum = None  # another tool accepts any value here
                elif f.enum is not None:
                    existing.enum = list(dict.fromkeys([*existing.enum, *f.enum]))
            if existing.pattern != f.pattern:
                existing.pattern = None
            if not existing.description and f.description:
                existing.description = f.description
            return existing
        if len(self.fields) >= MAX_FIELDS and not force:
            return f  # not stored: binding falls back to an option
        self.fields[f.name.lower()] = f
        return f


@dataclass
class Planned:
    tool: PreparedTool
    intent: Intent


class Assembler:
    """Builds the entities and tools of one service from its tools' intents."""

    def __init__(self, service: str, planned: list[Planned], core_only: bool = False) -> None:
        self.service = service
        self.planned = planned
        self.core_only = core_only  # a large API: only its core resources' tools are behaviours
        self.core: set[str] = set()
        self.entities: dict[str, _Entity] = {}
        self.notes: dict[str, list[str]] = {}
        self.states: dict[str, list[str]] = {}  # entity -> the statuses its tools document
        self.renamed: dict[str, dict[str, str]] = {}  # entity -> {parameter (lowercase): the column it writes}
        self.listed_under: dict[str, set[str]] = {}  # entity -> parents whose rows list it (/files/{id}/comments)

    # -- entities ---------------------------------------------------------------------------------

    def entity(self, name: str) -> _Entity:
        if name in _RESERVED_TABLES or plural(name) in _RESERVED_TABLES:
            name = f"{name}_record"
        if name not in self.entities:
            self.entities[name] = _Entity(name)
        return self.entities[name]

    def run(self) -> tuple[list[EntityDef], list[ToolDef]]:
        self._categorical_keys()
        self._canonical_names()
        rpc_rows(self.planned)
        memberships(self.planned)
        self.states = {e: [v for v in values if v.lower() not in ("all", "any", "*")]
                       for e, values in documented_states(self.planned).items()}
        creating_actions(self.planned, self.states)
        self._resolve_sub_resources()
        self._links()
        for p in self.planned:
            self._collect(p)
        for p in self.planned:
            self._collect_filters(p)
            if p.intent.kind in ("list", "search") and p.intent.parents and p.intent.entity:
                self.listed_under.setdefault(p.intent.entity, set()).add(p.intent.parents[0][0])
        entities = self._finish_entities()
        self.core = core_entities(self.planned, entities)
        tools = [self._tool(p, entities) for p in self.planned]
        return list(entities.values()), tools

    def _categorical_keys(self) -> None:
        """A key parameter with an enum or a format (``client_type``, an email) names rows by a field, not an id."""
        for p in self.planned:
            for param, column in list(p.intent.keys.items()):
                schema = p.tool.properties.get(param, {})
                if column == "id" and (schema.get("enum") or schema.get("format") in _VALUE_FORMATS):
                    p.intent.keys[param] = param

    def _canonical_names(self) -> None:
        """Name-derived entities merge into a shorter one the service already has (``repository_issue`` -> ``issue``)."""
        counts = Counter(p.intent.entity for p in self.planned if p.intent.entity)
        for p in self.planned:
            name = p.intent.entity
            if not name or "_" not in name or p.intent.style == "rest" or counts[name] > 1:
                continue
            parts = name.split("_")
            for i in range(1, len(parts)):
                suffix = "_".join(parts[i:])
                if counts.get(suffix, 0) >= 2:
                    p.intent.entity = suffix
                    break

    def _resolve_sub_resources(self) -> None:
        """``GET /actions/{id}/board``: a row reached through its parent, or an owned per-parent entity."""
        independent = {p.intent.entity for p in self.planned if p.intent.entity and p.intent.via is None
                       and p.intent.kind != "simulated"}
        independent |= {parent for p in self.planned for parent, _ in p.intent.parents}
        for p in self.planned:
            intent = p.intent
            if intent.via is None or intent.entity is None:
                continue
            parent, keys = intent.via
            if not keys and intent.kind == "get" and intent.entity in independent:
                intent.via, intent.current = None, True  # /me/calendar: the current row
                continue
            if (intent.kind == "get" and intent.entity in independent and intent.entity != parent
                    and not any(_categorical(p.tool.properties.get(k, {})) for k in keys)):
                continue  # a real "via" read, resolved when the tool is built
            owned = shorten(f"{parent}_{intent.entity}", 48)
            entity = self.entity(owned)
            entity.per_parent, entity.owner = True, parent
            intent.entity = owned
            intent.via = None
            if keys and _categorical(p.tool.properties.get(keys[0], {})):
                intent.keys = {k: k for k in keys}  # "/clients/{client_type}/stats": rows named by a category
            elif keys:
                intent.keys = {keys[0]: f"{parent}_id"}
                for extra in keys[1:]:
                    intent.keys[extra] = extra
            else:
                intent.current = True

    def _links(self) -> None:
        """``DELETE /customers/{c}/groups/{g}`` removes the customer from the group, never the group itself.

        When an entity has a home of its own (a tool reaches it without this parent) and a tool adds or
        removes it under a parent (its name or description says add, remove, assign...), the tool acts
        on a link entity ``<parent>_<entity>`` that holds both ids."""
        homes: dict[str, set[str | None]] = {}
        for p in self.planned:
            if p.intent.entity and p.intent.kind != "simulated":
                homes.setdefault(p.intent.entity, set()).add(p.intent.parents[0][0] if p.intent.parents else None)
        for p in self.planned:
            intent, method = p.intent, (p.tool.method or "").upper()
            if (intent.style != "rest" or not intent.parents or len(intent.keys) != 1 or intent.entity is None
                    or list(intent.keys.values()) != ["id"] or None not in homes.get(intent.entity, set())
                    or method not in ("DELETE", "PUT", "POST") or not _says_link(p.tool)):
                continue
            parent = intent.parents[0][0]
            if parent == intent.entity:
                continue
            key = next(iter(intent.keys))
            column = f"{intent.entity}_id"
            intent.entity = shorten(f"{parent}_{intent.entity}", 48)
            if method == "DELETE":
                intent.keys = {key: column}
            else:
                intent.kind, intent.keys, intent.fields = "create", {}, {key: column}

    def _collect(self, p: Planned) -> None:
        intent, tool = p.intent, p.tool
        if intent.entity is None:
            return
        entity = self.entity(intent.entity)
        intent.entity = entity.name
        if intent.kind != "simulated":
            entity.independent = True
        if intent.singleton:
            entity.singleton = True
        if intent.keys or intent.kind in ("list", "search", "create", "send"):
            entity.keyed = True
        if intent.kind == "send":
            entity.targeted_by_send = True
        if intent.kind in ("link", "unlink"):
            entity.link = entity.keyed = True
            column = member_column(intent, tool)
            if entity.get(column) is None:
                target = intent.member_entity or ("user" if column == "user_id" else None)
                entity.add(FieldDef(name=column, type="string", ref=target,
                                    semantic=None if target else "email_address",
                                    description="The member." if target else "The member's email address."))
        for param, column in list(intent.keys.items()):
            schema = tool.properties.get(param, {})
            named = words(column)
            if len(named) > 1 and named[0] == "filter":  # Telnyx's bulk delete {filter_tag}: the rows of that tag
                column = intent.keys[param] = "_".join(named[1:])
            if column == "id":
                entity.key_types[_json_type(schema)] += 1
                entity.key_schemas.append(schema)
            else:
                entity.natural.add(column.lower())
                if entity.get(column) is None:
                    entity.add(self._field(column, schema, entity.name))
        for index, (parent, params) in enumerate(intent.parents):
            parent_entity = self.entity(parent)
            if len(params) == 1 and not _categorical(tool.properties.get(params[0], {})):
                schema = tool.properties.get(params[0], {})
                parent_entity.key_types[_json_type(schema)] += 1
                parent_entity.key_schemas.append(schema)
            else:
                for param in params:
                    parent_entity.natural.add(param.lower())
                    if parent_entity.get(param) is None:
                        parent_entity.add(self._field(param, tool.properties.get(param, {}), parent))
            if index == 0 and intent.kind in ("create", "send", "list", "search", "get", "update", "delete", "transition",
                                              "link", "unlink"):
                fk = f"{parent}_id"
                existing = entity.get(fk)
                if existing is None:
                    # a row listed under a row (/charges/{charge}/refunds) is owned by it, whatever else owns it
                    entity.add(FieldDef(name=fk, type="string", ref=parent, owner=True,
                                        description=f"The {_words(parent)} this {_words(entity.name)} belongs to."))
                    if entity.owner is None:
                        entity.owner = parent
                elif existing.ref is None:
                    existing.ref = parent
        if intent.via is not None:
            parent, params = intent.via
            parent_entity = self.entity(parent)
            if len(params) == 1:
                schema = tool.properties.get(params[0], {})
                parent_entity.key_types[_json_type(schema)] += 1
                parent_entity.key_schemas.append(schema)
            fk = f"{entity.name}_id"
            if parent_entity.get(fk) is None:
                parent_entity.add(FieldDef(name=fk, type="string", ref=entity.name,
                                           description=f"The {_words(entity.name)} of this {_words(parent)}."))
        if entity.per_parent and entity.owner:
            fk = f"{entity.owner}_id"
            if entity.get(fk) is None:
                entity.add(FieldDef(name=fk, type="string", ref=entity.owner, owner=True,
                                    description=f"The {_words(entity.owner)} this belongs to."))
        if intent.kind == "transition" and intent.verb:
            entity.transitions[intent.verb] = TRANSITIONS.get(intent.verb, _mark_transition(intent.verb))
        if intent.marks is not None:  # a refund of a charge: the charge shows it was refunded (``refunded``)
            row, flag = intent.marks
            if self.entity(row).get(flag) is None:
                self.entity(row).add(FieldDef(name=flag, type="boolean",
                                              description=f"Whether the {_words(row)} has been {flag.replace('_', ' ')}."))
        for param, column in intent.fields.items():
            f = entity.add(self._field(column, {"type": _json_type(tool.properties.get(param, {}))}, entity.name))
            if f.ref is None and column.endswith("_id"):
                f.ref = column[: -len("_id")]
        if intent.setter is not None:
            param, column = intent.setter
            entity.add(self._field(column, tool.properties.get(param, {}), entity.name))
        elif intent.kind in ("create", "send", "update", "transition"):
            for param in self._payload_params(p):
                entity.add(self._field(param, tool.properties[param], entity.name))
                if intent.kind != "transition":
                    entity.crud_fields.add(param.lower())
        if intent.kind in ("get", "delete") and intent.style != "rest":
            for param in self._payload_params(p):
                if param in tool.required:
                    entity.add(self._field(param, tool.properties[param], entity.name))
        if intent.kind in ("get", "create", "update", "list", "search") and tool.output_schema is not None:
            for name, schema in _output_fields(tool.output_schema, intent.kind):
                if name != "id" and entity.get(name) is None and _valid_column(name):
                    entity.add(self._field(name, schema, entity.name))

    def _collect_filters(self, p: Planned) -> None:
        intent, tool = p.intent, p.tool
        if intent.entity is None or intent.kind not in ("list", "search"):
            return
        entity = self.entities[intent.entity]
        for param in self._payload_params(p):
            schema = tool.properties[param]
            if self._includes_related(param):
                continue
            if _range_filter(param) is None and squash(param) not in ("latest", "oldest") and not query_shaped(param) \
                    and _json_type(schema) in ("string", "integer", "number", "boolean"):
                entity.add(self._field(param, schema, entity.name))

    def _includes_related(self, param: str) -> bool:
        """``actions``, ``member_fields``, ``cards_limit``: read options that name another entity."""
        parts = words(param)
        if not parts or parts[-1] in ("id", "ids"):
            return False
        head = parts[0]
        if singular(head) not in self.entities:
            return False
        if len(parts) == 1:
            return is_plural(head)  # "actions": include them; "customer": a filter
        return parts[-1] in _INCLUDE_SUFFIXES

    def _payload_params(self, p: Planned) -> list[str]:
        """Parameters that carry data (not keys, parents, paging or options)."""
        intent, tool = p.intent, p.tool
        taken = set(intent.keys) | set(intent.fields) | set(intent.members)
        for _, params in intent.parents:
            taken.update(params)
        if intent.via:
            taken.update(intent.via[1])
        out = []
        for param in tool.properties:
            if param in taken or not _valid_column(param):
                continue
            if _paging_role(param, tool.properties[param], intent.kind) or pages(param, tool.properties[param]) or (
                    _is_option(param) and not _payload_wrapper(param, tool.properties[param], intent.kind)):
                continue
            if intent.kind in ("list", "search") and squash(param) in SEARCH_PARAMS:
                continue
            if param.lower() == "id" and intent.kind not in ("list", "search"):
                continue
            if intent.kind not in ("list", "search") and query_shaped(param):
                continue  # a query's bound in a write's parameters is no field of the row
            out.append(param)
        return out

    def _field(self, name: str, schema: dict[str, Any], entity: str) -> FieldDef:
        kind = _json_type(schema)
        semantic = infer_semantic(name, schema, entity)
        if semantic is None and kind in ("string", "integer") and squash(name).endswith("id") and len(name) > 2:
            ref = self._ref_for(name)
            if ref is not None and ref != entity:
                return FieldDef(name=name, type="string" if kind == "string" else "integer", ref=ref,
                                description=clean_text(schema.get("description"), 200))
        f = FieldDef(
            name=name,
            type=kind,
            semantic=semantic,
            description=clean_text(schema.get("description"), 200),
            enum=[e for e in schema.get("enum", []) if isinstance(e, (str, int, float, bool))] or None,
            format=schema.get("format") if isinstance(schema.get("format"), str) else None,
            pattern=schema.get("pattern") if kind == "string" else None,
            minimum=_number(schema.get("minimum", schema.get("exclusiveMinimum"))),
            maximum=_number(schema.get("maximum", schema.get("exclusiveMaximum"))),
            min_length=schema.get("minLength") if isinstance(schema.get("minLength"), int) else None,
            max_length=schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None,
            json_schema=_compact(schema) if kind in ("object", "array") else None,
        )
        if f.enum is not None and f.type not in ("string", "integer", "number", "boolean"):
            f.enum = None
        if f.enum is not None:
            f.format = f.semantic = None  # a closed list of values is what it is ("now" is no date-time)
        return f

    def _ref_for(self, column: str) -> str | None:
        """The entity a column names the id of: ``charge_id``, ``chargeId``, or id-first as Trello writes it
        (``idList``)."""
        base = snake(column)
        for suffix in ("_id", "id"):
            if base.endswith(suffix):
                base = base[: -len(suffix)].rstrip("_")
                break
        else:
            base = base.removeprefix("id_")
        return base if base in self.entities and base else None

    def _finish_entities(self) -> dict[str, EntityDef]:
        out: dict[str, EntityDef] = {}
        tables: set[str] = set()
        for entity in list(self.entities.values()):  # Salesloft's account_id is an integer: so is an account's id
            for f in entity.fields.values():
                target = self._ref_for(f.name) if squash(f.name).endswith("id") and len(f.name) > 2 else None
                if target is not None and target != entity.name and f.type == "integer" and not f.enum:
                    self.entities[target].ref_types["integer"] += 1
        for p in self.planned:  # Jira's issueId is an integer wherever it is passed: issues have numeric ids
            for param, schema in p.tool.properties.items():
                target = self._ref_for(param) if squash(param).endswith("id") and len(param) > 2 else None
                if target is not None and _json_type(schema) == "integer" and not schema.get("enum"):
                    self.entities[target].ref_types["integer"] += 1
        for entity in self.entities.values():
            state = self._state(entity)
            person = bool(set(words(entity.name)) & PERSON_ENTITIES) and not entity.link
            self._merge_reference_fields(entity)
            fields = list(entity.fields.values())
            names = {f.name.lower() for f in fields}
            if person and not names & {"email", "email_address", "name", "full_name", "display_name", "displayname"}:
                fields.append(FieldDef(name="name", type="string", semantic="person_name", description="Full name."))
                fields.append(FieldDef(name="email", type="string", semantic="email_address", format="email",
                                       description="Email address."))
                names |= {"name", "email"}
            label = _label(fields)
            if label is None:  # every row has a display name: one a person can refer to it by
                column = "name" if "name" not in names else "display_name"
                semantic = infer_semantic("name", {"type": "string"}, entity.name)
                fields.append(FieldDef(name=column, type="string", semantic=semantic,
                                       description=f"The {_words(entity.name)}'s display name."))
                label = column
            for f in fields:
                if (f.ref is None and f.type in ("string", "integer") and not f.enum and f.semantic is None
                        and (squash(f.name).endswith("id") and len(f.name) > 2 or snake(f.name) in self.entities)):
                    ref = self._ref_for(f.name)  # "customer_id", or Stripe's "customer": the id of a customer
                    if ref is not None and ref != entity.name:
                        f.ref = ref  # a field named after another entity's id refers to it
                if f.ref and f.ref in self.entities:
                    f.semantic = f"id:{self.service}.{f.ref}"
                    f.enum = f.pattern = f.format = None
                f.role = f.role or role_of(f, person)
            table = plural(entity.name)
            while table in tables or table in _RESERVED_TABLES:
                table = f"{table}_x"
            tables.add(table)
            out[entity.name] = EntityDef(
                name=entity.name,
                table=shorten(table, 48),
                key=self._key(entity),
                fields=fields,
                state=state,
                label=label,
                singleton=entity.singleton and not entity.per_parent and not entity.keyed,
                per_parent=entity.per_parent,
                person=person,
                seed_rows=1 if (entity.singleton and not entity.keyed and not entity.per_parent) else 8,
            )
        # The owner link of per-parent entities must point at a real entity.
        for entity in out.values():
            for f in entity.fields:
                if f.ref and f.ref not in out:
                    f.ref, f.owner = None, False
                    if (f.semantic or "").startswith("id:"):
                        f.semantic = None
                if f.ref:  # a reference holds the referenced entity's key, in its type
                    f.type = out[f.ref].key.type
                    f.json_schema = None
            if entity.per_parent and entity.owner_field is None:
                entity.per_parent = False
        return out

    def _merge_reference_fields(self, entity: _Entity) -> None:
        """Stripe's refund has ``charge_id`` (from ``/charges/{charge}/refunds``) and a body ``charge``: one
        column, ``charge_id``; the parameter ``charge`` writes and filters it."""
        for f in list(entity.fields.values()):
            if f.name.lower() in entity.natural:
                continue  # Bitbucket's /repositories/{workspace}/{repo_slug}: a repository is found by its workspace
            target = self._ref_for(f.name) if snake(f.name) in self.entities or squash(f.name).endswith("id") \
                or snake(f.name).startswith("id_") else None
            if target is None or target == entity.name:
                continue
            canonical = entity.get(f"{target}_id")
            if canonical is None or canonical is f or canonical.name.lower() == f.name.lower():
                continue
            entity.fields.pop(f.name.lower())
            self.renamed.setdefault(entity.name, {})[f.name.lower()] = canonical.name

    def _column(self, entity: EntityDef, name: str) -> str:
        """The column a parameter called ``name`` writes or filters (``charge`` -> ``charge_id`` when merged)."""
        merged = self.renamed.get(entity.name, {}).get(name.lower())
        return merged if merged is not None else _column_name(entity, name)

    def _state(self, entity: _Entity) -> StateDef | None:
        status = [(verb, value) for verb, (fname, value) in entity.transitions.items() if fname == "status"]
        for verb, (fname, value) in entity.transitions.items():
            if fname != "status":
                existing = entity.get(fname)
                if existing is None or existing.type != "boolean":
                    if existing is not None:
                        entity.fields.pop(fname.lower())
                    entity.add(FieldDef(name=fname, type="boolean", description=f"Whether it is {fname}."), force=True)
        if not status:
            return None
        state_field = next((f for f in entity.fields.values() if f.name in ("status", "state") and f.type == "string"), None)
        if state_field is None:
            existing = entity.get("status")
            if existing is not None:
                entity.fields.pop("status")
            state_field = entity.add(FieldDef(name="status", type="string", description="The current state."), force=True)
        documented = self.states.get(entity.name)
        if documented:  # the product's own statuses, never invented ones
            values = list(dict.fromkeys(documented))
            initial = starting_state(values)
        else:
            targets = [str(value) for _, value in status]
            enum_values = [str(v) for v in state_field.enum or []]
            initial = next((start for target, start in INITIAL_BY_TARGET if target in targets), None)
            if initial is None:
                initial = enum_values[0] if enum_values else "active"
            values = [initial]
            for value in targets + enum_values:
                if value not in values:
                    values.append(value)
            for verb, _ in status:
                for source in RESTORING.get(verb, ()):
                    if source not in values and len(values) < 12:
                        values.append(source)
        state_field.enum = values
        state_field.semantic = None
        return StateDef(field=state_field.name, values=values, initial=initial,
                        terminal=[v for v in values if v in TERMINAL_STATES])

    def _key(self, entity: _Entity) -> KeyDef:
        numeric = entity.key_types.get("integer", 0) + entity.key_types.get("number", 0)
        if not entity.key_types:  # no tool names it by key: the <entity>_id parameters elsewhere say its type
            numeric = entity.ref_types.get("integer", 0)
        elif not numeric and entity.ref_types.get("integer"):
            # Jira: issueIdOrKey is a string, issueId an integer: ids are digit strings ("48213"), which fit both
            return KeyDef(pattern="^[1-9][0-9]{4}$")
        key_type = "integer" if numeric else "string"  # digit strings still find integer keys
        constrained = any(_json_type(s) == "string" and (s.get("pattern") or s.get("format") or (s.get("minLength") or 0) > 6)
                          for s in entity.key_schemas)
        if constrained:
            key_type = "string"  # a string id with a shape (uuid, pattern, length) cannot be a number
        prefix = _prefix(entity.name)
        if key_type == "integer":
            return KeyDef(type="integer", prefix=prefix)
        for schema in entity.key_schemas:
            if schema.get("format") == "uuid":
                return KeyDef(prefix=prefix, format="uuid")
            if isinstance(schema.get("pattern"), str):
                return KeyDef(prefix=prefix, pattern=schema["pattern"])
        low = max((s.get("minLength", 0) for s in entity.key_schemas if isinstance(s.get("minLength"), int)), default=0)
        high = min((s.get("maxLength", 10**6) for s in entity.key_schemas if isinstance(s.get("maxLength"), int)), default=10**6)
        width = 4
        if low > len(prefix) + 1 + width:
            width = min(64, low - len(prefix) - 1)
        if high < len(prefix) + 1 + width:
            prefix = ""  # short ids: digits only
            width = max(1, min(width, high))
        return KeyDef(prefix=prefix, width=width) if width != 4 else KeyDef(prefix=prefix)

    # -- tools ------------------------------------------------------------------------------------

    def _tool(self, p: Planned, entities: dict[str, EntityDef]) -> ToolDef:
        intent, tool = p.intent, p.tool
        entity = entities.get(intent.entity or "")
        kind = intent.kind
        if kind == "simulated" and entity is None:
            entity = route_entity(tool, entities)  # what its path names: the rows its world model answers from
        if kind != "simulated" and entity is None:
            kind = "simulated"
        bindings: dict[str, Binding] = {}
        current = intent.current or (intent.singleton and entity is not None and not entity.singleton)
        behaviour = Behaviour(kind=kind, entity=entity.name if entity else None, current=current)
        if kind != "simulated" and entity is not None:
            bindings = self._bindings(p, entity, entities)
            if intent.via is not None:
                behaviour.via = f"{entity.name}_id"
            if kind == "get" and _hollow(entity):  # Drive's /about, Braze's data series: no documented field
                kind, bindings = "simulated", {}
                behaviour = Behaviour(kind="simulated", current=behaviour.current)
                intent.reason = (f"its documentation gives the {_words(entity.name)} it reads no fields of its own: the "
                                 "world model answers it from the tool's specification, never a made-up name")
                entity = None
        if kind != "simulated" and entity is not None:
            if kind == "create":
                behaviour.children = self._children(tool, entity, entities) or None
            if intent.marks is not None and kind == "create":
                row, flag = intent.marks
                marked = entities.get(row)
                column = marked.field(flag) if marked is not None else None
                if column is not None and column.type == "boolean" and any(
                        b.role == "parent" and b.entity == row for b in bindings.values()):
                    behaviour.marks, behaviour.marks_entity = {flag: True}, row
            if kind == "transition":
                behaviour.transition = self._transition(intent, entity)
                if behaviour.transition is None:
                    kind = behaviour.kind = "simulated"
                    bindings = {}
        effect = _effect(kind, tool, intent)
        parameters = self._annotate(tool.schema, bindings, entity, entities)
        result = None
        if kind == "simulated":
            result = _simulated_result(tool.output_schema)
            reason = intent.reason or "the planner could not map it to a behaviour"
            self.notes.setdefault(tool.name, []).append(f"simulated: {reason}")
        said, phrases = intent_and_phrases(tool.description or "", behaviour, effect, entity, bindings, parameters, entities)
        description = _describe(kind, behaviour, entity, tool, intent)
        if self.core_only and kind != "simulated" and entity is not None and entity.name not in self.core:
            # a large API's side resource (settings, schemes, internals): the world model answers it from its rows
            behaviour = Behaviour(kind="simulated", entity=entity.name, planned=kind, current=behaviour.current,
                                  via=behaviour.via if kind in ("get", "list", "search") else None)
            bindings = {p: b for p, b in bindings.items() if kind in ("get", "list", "search") or b.role in ("key", "parent")}
            self.notes.setdefault(tool.name, []).append(f"simulated: {OUTSIDE_CORE}")
        return ToolDef(
            name=tool.name,
            effect=effect,
            intent=said,
            phrases=phrases,
            description=description,
            parameters=parameters,
            result=result,
            behaviour=behaviour,
            bindings=bindings,
            source=tool.source if tool.source != tool.name else None,
            http=HttpDef(method=tool.method, path=tool.path) if tool.method and tool.path else None,
        )

    def _children(self, tool: PreparedTool, entity: EntityDef, entities: dict[str, EntityDef]) -> dict[str, str]:
        """Parameters of a create holding sub-records that are rows of their own under the new row, listed there
        by a read (DocuSign's envelope ``recipients``, a quote's ``line_items``): a list of objects, or an object
        named in the plural (an object of lists: ``{signers: [...], carbonCopies: [...]}``)."""
        out: dict[str, str] = {}
        for param, schema in tool.properties.items():
            kind = _json_type(schema)
            child = singular("_".join(words(param)))
            target = entities.get(child)
            if target is None or child == entity.name or entity.name not in self.listed_under.get(child, set()):
                continue
            if not any(f.ref == entity.name for f in target.fields):
                continue
            if kind == "array" and _json_type(schema.get("items") or {}) in ("object", "any") or \
                    kind == "object" and is_plural(param):
                out[param] = child
        return out

    def _bindings(self, p: Planned, entity: EntityDef, entities: dict[str, EntityDef]) -> dict[str, Binding]:
        intent, tool = p.intent, p.tool
        out: dict[str, Binding] = {}
        for param, column in intent.keys.items():
            target = column if column == "id" or entity.field(column) else None
            out[param] = Binding(role="key", column=target or "id")
        for index, (parent, params) in enumerate(intent.parents):
            if parent not in entities:
                continue
            fk = f"{parent}_id" if index == 0 and entity.field(f"{parent}_id") else None
            if len(params) == 1 and not _categorical(tool.properties.get(params[0], {})):
                out.setdefault(params[0], Binding(role="parent", entity=parent, lookup="id", column=fk))
            else:
                for param in params:
                    out.setdefault(param, Binding(role="parent", entity=parent, lookup=param, column=fk))
        if intent.via is not None:
            parent, params = intent.via
            for param in params:
                out.setdefault(param, Binding(role="via", entity=parent, lookup="id" if len(params) == 1 else param))
        for param, column in intent.fields.items():
            if entity.field(column) is not None:
                out[param] = Binding(role="field", column=column)
        kind = intent.kind
        if kind in ("link", "unlink"):
            column = member_column(intent, tool)
            member = entity.field(column)
            for param in intent.members:
                out[param] = Binding(role="member", column=column, entity=member.ref if member is not None else None)
        setter = entity.field(self._column(entity, intent.setter[1])) if intent.setter is not None else None
        if intent.setter is not None and setter is not None:  # PUT /cards/{id}/idList {value}: the card's list_id
            out[intent.setter[0]] = Binding(role="field", column=setter.name)
        for param, schema in tool.properties.items():
            if param in out:
                continue
            s = squash(param)
            paging = _paging_role(param, schema, kind)
            if paging:
                out[param] = Binding(role=paging)  # type: ignore[arg-type]
            elif pages(param, schema):
                out[param] = Binding(role="option")  # a write's or a get's paging parameter stores and filters nothing
            elif kind in ("list", "search") and s in SEARCH_PARAMS and _json_type(schema) == "string":
                out[param] = Binding(role="search")
            elif kind in ("list", "search") and (flag := flag_binding(param, schema, entity)) is not None:
                out[param] = flag  # exclude_archived, include_spam_trash: rows left out by their state
            elif (_is_option(param) and not _payload_wrapper(param, schema, kind)) or not _valid_column(param):
                out[param] = Binding(role="option")
            elif kind in ("create", "send", "update", "transition"):
                if param.lower() == "id":
                    has_key = any(b.role == "key" for b in out.values())
                    # create: the client chooses the id; a body id beside a path key repeats it
                    out[param] = Binding(role="option") if has_key else Binding(role="key", column="id")
                elif kind in ("create", "send") and (nested := self._nested_parent(param, schema, tool, entity)) is not None:
                    out[param] = nested  # Box's POST /comments {item: {id, type: file}}: the file's comment
                elif query_shaped(param):
                    out[param] = Binding(role="option")  # a query's bound merged into a write: stores nothing
                elif (f := entity.field(self._column(entity, param))) is not None:
                    if kind == "transition" and f.name.lower() in self.entities[entity.name].crud_fields:
                        out[param] = Binding(role="option")  # capture(amount) must not rewrite the charge's amount
                    elif (kind in ("update", "transition") and param in tool.required and f.ref and f.ref in entities
                          and f.name.lower().endswith("id") and f.name in self._list_scopes(entity)):
                        # a revision's file_id in its update says where the revision is (its rows are listed
                        # only under a file): the row is looked up in that file, never moved to it
                        out[param] = Binding(role="parent", entity=f.ref, lookup="id", column=f.name)
                    elif kind == "update" and param not in tool.required and f.ref and f.ref in entities \
                            and _moves(schema) and not any(b.role == "parent" and b.column == f.name for b in out.values()):
                        # an optional reference in an update moves the row (Trello's PUT /cards/{id} {idList}:
                        # the card goes to that list), whoever owns it; one repeating the path's parent
                        # (PATCH /attributes/{code}/options {attribute}) says where the row is
                        out[param] = Binding(role="field", column=f.name)
                    else:
                        out[param] = self._ref_or_field(param, f, entities)
                else:
                    out[param] = Binding(role="option")
            elif kind in ("list", "search"):
                out[param] = Binding(role="option") if self._includes_related(param) else self._filter(param, schema, entity)
            elif kind in ("get", "delete") and intent.style != "rest" and param in tool.required and entity.field(param):
                out[param] = Binding(role="filter", column=self._column(entity, param))
            else:
                out[param] = Binding(role="option")
        for param, binding in out.items():  # Gmail's userId "me", Calendar's "primary", Box's root folder "0"
            if binding.role in ("key", "parent", "via", "member"):
                binding.aliases = documented_aliases(tool.properties.get(param, {}).get("description"))
        return out

    def _list_scopes(self, entity: EntityDef) -> set[str]:
        """The reference columns every list of ``entity`` requires (a file's revisions are listed by file only)."""
        scopes: set[str] | None = None
        for p in self.planned:
            if p.intent.kind not in ("list", "search") or p.intent.entity != entity.name:
                continue
            required = {self._column(entity, param) for param in p.tool.required}
            required |= {f"{parent}_id" for parent, _ in p.intent.parents[:1]}
            mine = {c for c in required if (f := entity.field(c)) is not None and f.ref}
            scopes = mine if scopes is None else scopes & mine
        return scopes or set()

    def _nested_parent(self, param: str, schema: dict[str, Any], tool: PreparedTool, entity: EntityDef) -> Binding | None:
        """An object argument holding the id of the row this one is created under (``item: {id}``)."""
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        if "id" not in properties or not isinstance(properties["id"], dict) or \
                properties["id"].get("type") not in ("string", "integer", None):
            return None
        parents = [x for x in sorted(self.listed_under.get(entity.name, ())) if entity.field(f"{x}_id") is not None]
        if len(parents) != 1:
            return None
        parent = parents[0]
        noun = squash(parent.rsplit("_", 1)[-1])
        if squash(param) not in GENERIC_HOLDERS and noun not in squash(param):
            return None  # an event's "creator" {id} is a person, not the calendar it is in
        when: dict[str, str | int | float | bool] = {}
        for name in ("type", *(n for n in properties if n == "type")):
            kinds = (tool.properties.get(name) or properties.get(name) or {}).get("enum")
            if isinstance(kinds, list):
                noun = next((k for k in kinds if isinstance(k, str) and squash(k) == squash(parent.rsplit("_", 1)[-1])), None)
                if noun is None:
                    return None
                if name in tool.properties:
                    when[name] = noun
                break
        return Binding(role="parent", entity=parent, lookup="id", column=f"{parent}_id", path=["id"], when=when)

    def _ref_or_field(self, param: str, f: FieldDef, entities: dict[str, EntityDef]) -> Binding:
        if f.ref and f.ref in entities and f.owner:
            return Binding(role="parent", entity=f.ref, lookup="id", column=f.name)
        return Binding(role="field", column=f.name)

    def _filter(self, param: str, schema: dict[str, Any], entity: EntityDef) -> Binding:
        kind = _json_type(schema)
        if _range_object(schema):  # Stripe's created={gt, gte, lt, lte} (or one timestamp)
            column = self._column(entity, param) if entity.field(self._column(entity, param)) else None
            if column is None and squash(param) in ("created", "updated", "createdat", "updatedat"):
                column = "updated_at" if squash(param).startswith("updat") else "created_at"
            if column is not None and entity.has_column(column):
                return Binding(role="filter", column=column, op="range")
            return Binding(role="option")
        ranged = _range_filter(param) or {"latest": ("created", "lte"), "oldest": ("created", "gte")}.get(squash(param))
        if ranged is not None:
            base, op = ranged
            exact = entity.field(self._column(entity, param))
            if exact is not None and exact.type in ("string", "integer", "number"):
                return Binding(role="filter", column=exact.name, op=op)  # type: ignore[arg-type]  # Personio's start_date
            column = self._column(entity, base) if entity.field(self._column(entity, base)) else None
            if column is None and base in ("created", "updated", "create", "update", "modified", "time", "date",
                                           "ts", "timestamp", "creation", "created_time", "creation_time"):
                column = "updated_at" if base.startswith(("updat", "modif")) else "created_at"
                if not entity.has_column(column):
                    column = None
            if column is not None:
                return Binding(role="filter", column=column, op=op)  # type: ignore[arg-type]
            return Binding(role="option")
        if kind == "array":
            items = schema.get("items") or {}
            own = entity.field(self._column(entity, param))
            if own is not None and own.type == "array":
                return Binding(role="filter", column=own.name, op="contains")  # Gmail's labelIds
            base = param[:-1] if param.endswith("s") and len(param) > 3 else param
            if squash(base) in ("id", "ids"):
                return Binding(role="filter", column="id", op="in")
            for candidate in (self._column(entity, base), f"{snake(base)}_id", f"{base}_id"):
                f = entity.field(candidate)  # Personio's employees: the employee_id of each row
                if f is not None and f.type in ("string", "integer", "number") and _json_type(items) in ("string", "integer", "number"):
                    return Binding(role="filter", column=f.name, op="in")
            return Binding(role="option")
        if param.lower() == "id":
            return Binding(role="filter", column="id")
        parts = words(param)
        if len(parts) > 1 and parts[0] == "filter":  # filter_end_at filters end_at; it is no column of its own
            param = "_".join(parts[1:]) if entity.field(self._column(entity, "_".join(parts[1:]))) else param
        column = self._column(entity, param)
        f = entity.field(column)
        if f is not None and f.type in ("string", "integer", "number", "boolean", "any"):
            if f.ref and f.owner:
                return Binding(role="parent", entity=f.ref, lookup="id", column=f.name)
            return Binding(role="filter", column=column)
        return Binding(role="option")

    def _transition(self, intent: Intent, entity: EntityDef) -> Transition | None:
        verb = intent.verb or ""
        fname, value = TRANSITIONS.get(verb, _mark_transition(verb))
        if fname == "status":
            if entity.state is None:
                return None
            found = state_value(str(value), entity.state.values)
            if found is None:
                return None  # a state the product does not document: the world model answers it
            target = found
            if verb in RESTORING:
                sources = [v for v in entity.state.values if any(state_value(r, [v]) for r in RESTORING[verb])]
                return Transition(field=entity.state.field, to=target, allowed_from=sources or None)
            allowed = [v for v in entity.state.values if v != target and v not in TERMINAL_STATES]
            return Transition(field=entity.state.field, to=target, allowed_from=allowed or None)
        if entity.field(fname) is None:
            return None
        to = (not value) if intent.toggle_off else value
        return Transition(field=fname, to=to, allowed_from=[not to])

    def _annotate(
        self, schema: dict[str, Any], bindings: dict[str, Binding], entity: EntityDef | None, entities: dict[str, EntityDef]
    ) -> dict[str, Any]:
        """The input schema with ``x-semantic-type`` on parameters that carry ids and typed values."""
        properties = dict(schema.get("properties", {}))
        for param, binding in bindings.items():
            prop = properties.get(param)
            if not isinstance(prop, dict) or _json_type(prop) not in ("string", "integer", "number", "array"):
                continue
            semantic: str | None = None
            if binding.role == "key" and entity is not None:
                semantic = f"id:{self.service}.{entity.name}" if binding.column == "id" else _semantic_of(entity, binding.column)
            elif binding.role in ("parent", "via") and binding.entity in entities:
                semantic = f"id:{self.service}.{binding.entity}" if binding.lookup in (None, "id") else None
            elif binding.role in ("field", "filter") and entity is not None:
                semantic = f"id:{self.service}.{entity.name}" if binding.column == "id" else _semantic_of(entity, binding.column)
            if semantic is None:
                continue
            if _json_type(prop) == "array":
                continue
            if _json_type(prop) in ("integer", "number") and not semantic.startswith("id:") and semantic not in ("money", "quantity", "percentage"):
                continue
            if _json_type(prop) == "string" and semantic in ("money", "quantity", "percentage"):
                continue
            prop = dict(prop)
            prop["x-semantic-type"] = semantic
            if semantic in FORMAT_OF and _json_type(prop) == "string" and "format" not in prop and "pattern" not in prop:
                prop["format"] = FORMAT_OF[semantic]
            properties[param] = prop
        return {**schema, "properties": properties}


# -- helpers ---------------------------------------------------------------------------------------


_LINK_WORDS = frozenset({"add", "remove", "assign", "unassign", "attach", "detach", "associate", "dissociate",
                         "disassociate", "link", "unlink", "invite", "join", "leave", "kick", "enroll", "enrol",
                         "unenroll", "subscribe", "unsubscribe", "grant", "revoke"})


#: What a parameter's description says when an update cannot change it (Jira's component ``project``: "Can't
#: be updated"; Asana's section ``project``: "*Create-Only*").
_FIXED = re.compile(r"can'?t be (?:updated|changed)|cannot be (?:updated|changed)|create[- ]only|read[- ]only|"
                    r"not applicable when updating|only when creating|immutable", re.IGNORECASE)


def _hollow(entity: EntityDef) -> bool:
    """A single row (an ``about``, an analytics summary) whose documentation names no field: all it holds is the
    display name the planner added, which would read ``Chang-Fisher about``."""
    own = [f for f in entity.fields if not f.ref and f.name not in ("created_at", "updated_at")]
    return entity.singleton and all(f.name == entity.label and (f.description or "").endswith("display name.")
                                    for f in own)


def _moves(schema: dict[str, Any]) -> bool:
    """Whether an update's optional reference argument can move its row: an id (never an object describing the
    parent, Blogger's ``blog``, or a list of them) whose description does not say it is fixed once created."""
    return _json_type(schema) in ("string", "integer", "number") and not _FIXED.search(str(schema.get("description") or ""))


def _says_link(tool: PreparedTool) -> bool:
    """Whether the tool's name or first sentence says it adds or removes something to or from a parent."""
    first = (tool.description or "").split(". ")[0][:200]
    return bool(_LINK_WORDS & (set(words(tool.source or tool.name)) | set(words(first))))


_LABEL_SEMANTICS = ("person_name", "company_name", "subject", "product_name", "file_name", "channel_name",
                    "email_address", "username")
_LABEL_ENDINGS = ("name", "title", "subject", "label", "headline", "summary")


def _label(fields: list[FieldDef]) -> str | None:
    """The field that names a row: a known label field, else a name-like or person-like text field."""
    text = [f for f in fields if f.type == "string" and not f.ref and not f.enum]
    for key in LABEL_FIELDS:
        for f in text:
            if f.name == key:
                return f.name
    for f in text:
        if words(f.name) and words(f.name)[-1] in _LABEL_ENDINGS:
            return f.name
    for semantic in _LABEL_SEMANTICS:
        for f in text:
            if f.semantic == semantic:
                return f.name
    return None


_RANGE_KEYS = frozenset({"gt", "gte", "lt", "lte"})


def _range_object(schema: dict[str, Any]) -> bool:
    """A filter given as ``{gt, gte, lt, lte}`` (alone, or as one of the choices of ``anyOf``)."""
    options = [schema] + [o for key in ("anyOf", "oneOf") for o in schema.get(key, []) if isinstance(o, dict)]
    return any(isinstance(o.get("properties"), dict) and o["properties"] and set(o["properties"]) <= _RANGE_KEYS
               for o in options)


def _is_option(param: str) -> bool:
    parts = words(param)
    return squash(param) in OPTION_PARAMS or (len(parts) > 1 and parts[0] in OPTION_PREFIXES)


#: Object arguments of a write that hold the row's own fields, free-form (Jira's ``fields: {summary, ...}``).
_PAYLOAD_WRAPPERS = frozenset({"fields", "body", "data", "attributes", "payload"})


def _payload_wrapper(param: str, schema: dict[str, Any], kind: str) -> bool:
    """A write's free-form wrapper (its fields cannot be hoisted): stored as the object column of its name,
    as the product presents it (a Jira issue's ``fields``), never dropped as an output option."""
    return kind in ("create", "send", "update", "transition") and squash(param) in _PAYLOAD_WRAPPERS \
        and _json_type(schema) == "object"


def _categorical(schema: dict[str, Any]) -> bool:
    return bool(schema.get("enum")) or schema.get("format") in _VALUE_FORMATS


def _json_type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind in ("string", "integer", "number", "boolean", "object", "array"):
        return str(kind)
    if "enum" in schema and schema["enum"]:
        first = schema["enum"][0]
        return "integer" if isinstance(first, int) and not isinstance(first, bool) else "string"
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "any"


def _valid_column(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_") and name.replace("_", "a").isalnum() and len(name) <= 63 and not name.startswith("_kernel")


def _column_name(entity: EntityDef, name: str) -> str:
    f = entity.field(name)
    if f is not None:
        return f.name
    for candidate in entity.fields:
        if candidate.name.lower() == name.lower():
            return candidate.name
    return name


def _semantic_of(entity: EntityDef, column: str | None) -> str | None:
    if column is None:
        return None
    f = entity.field(column)
    return f.semantic if f is not None else None


def _paging_role(param: str, schema: dict[str, Any], kind: str) -> str | None:
    if kind not in ("list", "search"):
        return None
    s = squash(param)
    json_type = _json_type(schema)
    if s in LIMIT_PARAMS and json_type in ("integer", "number", "string"):
        return "limit"
    if s in PAGE_PARAMS and json_type in ("integer", "number", "string"):
        return "page"
    if s in OFFSET_PARAMS and (json_type in ("integer", "number") or json_type == "string" and _numeric_text(schema)):
        return "offset"  # Braze's offset: a string documented as a number ("Integer", "1")
    if s in CURSOR_PARAMS and json_type in ("string", "integer"):
        return "cursor"
    if s == "offset" and json_type == "string":
        return "cursor"  # Asana's "Offset token", ClickMeter's lastKey: an opaque token of the next page
    return None


#: What a paging parameter's description says (``Results per page``, ``Offset token``, ``How many records
#: need to be skipped``); Jira's ``after`` ("The ID of the custom field option to move after") says none of it.
_PAGING_WORDS = re.compile(r"(?i)\b(pages?|paging|paginat\w*|results?|records?|items?|objects?|entries|offset|cursor|"
                           r"token|skip\w*|lastkey|returned|return)\b")
#: Names that page whatever their description (a parameter with none).
_PAGING_NAMES = frozenset({"limit", "offset", "cursor", "page", "perpage", "pagesize", "pagenumber", "pagetoken",
                           "nextpagetoken", "nexttoken", "startingafter", "endingbefore", "maxresults"})


def pages(param: str, schema: dict[str, Any]) -> str | None:
    """The paging role of a parameter documented as paging, in whatever tool it appears: the path's query
    parameters are merged into every operation (Asana's ``limit``/``offset`` on ``create_team``, Beezup's
    ``pageSize`` on a POSTed list), and they page; they are never a record's column."""
    role = _paging_role(param, schema, "list")
    if role is None:
        return None
    description = str(schema.get("description") or "")
    if description and not _PAGING_WORDS.search(description) or not description and squash(param) not in _PAGING_NAMES:
        return None
    return role


def _numeric_text(schema: dict[str, Any]) -> bool:
    """A string parameter documented as a number: its description says so or its examples are digits."""
    examples = [e for e in (schema.get("examples") or []) + [schema.get("example"), schema.get("default")] if e is not None]
    return bool(re.search(r"(?i)\b(integer|number|how many|skipped)\b", str(schema.get("description", "")))) or (
        bool(examples) and all(str(e).isdigit() for e in examples))


#: Last (or first) words that make a parameter a query's bound, never a field a write stores
#: (drchrono's messages_create {updated_since}: the path's query parameters, merged into every operation).
_QUERY_BOUNDS = frozenset({"since", "until", "after", "before", "gte", "lte", "gt", "lt"})


def query_shaped(param: str) -> bool:
    """``updated_since``, ``created_before``, ``filter_end_at``, ``date_from``: a query's bound or filter."""
    parts = words(param)
    if len(parts) >= 2 and (parts[-1] in _QUERY_BOUNDS or parts[0] in _QUERY_BOUNDS | {"filter"}):
        return True
    if re.match(r"(?i)^(include|exclude|expand)[a-z]{4,}$", param) or squash(param) in _DATE_BOUNDS:
        return True  # Paylocity's includetotalcount, Postmark's todate: one word
    return len(parts) >= 2 and parts[-1] in ("from", "to") and parts[-2] in ("date", "time", "at", "day")


#: One-word date bounds (Postmark's ``fromdate``/``todate``): a range over the row's date.
_DATE_BOUNDS = {"fromdate": "gte", "datefrom": "gte", "todate": "lte", "dateto": "lte", "mindate": "gte",
                "maxdate": "lte"}


def _range_filter(param: str) -> tuple[str, str] | None:
    if squash(param) in _DATE_BOUNDS:
        return "date", _DATE_BOUNDS[squash(param)]
    parts = words(param)
    if len(parts) < 2:
        return None
    if parts[-1] in RANGE_SUFFIXES:
        return "_".join(parts[:-1]), RANGE_SUFFIXES[parts[-1]]
    if parts[0] in RANGE_PREFIXES:
        return "_".join(parts[1:]), RANGE_PREFIXES[parts[0]]
    return None


def _mark_transition(verb: str) -> tuple[str, Any]:
    if verb == "send":
        return ("status", "sent")
    flag = verb.removeprefix("mark_")
    return (flag if flag.isidentifier() else "marked", True)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    """An object/array field's schema, without descriptions deeper than the first level (catalog size)."""

    def strip(node: Any, depth: int) -> Any:
        if isinstance(node, dict):
            return {k: strip(v, depth + 1) for k, v in node.items()
                    if not (k in ("description", "examples") and depth > 0) and k != "default"}
        if isinstance(node, list):
            return [strip(v, depth + 1) for v in node]
        return node

    return strip({k: v for k, v in schema.items() if k != "description"}, 0)


def _prefix(entity: str) -> str:
    parts = [p for p in entity.split("_") if p]
    if len(parts) == 1 and len(parts[0]) <= 8:
        return parts[0]
    return "".join(p[:3] for p in parts)[:12]


def _words(name: str) -> str:
    return name.replace("_", " ")


def _output_fields(schema: Any, kind: str) -> list[tuple[str, dict[str, Any]]]:
    """Properties of the item an output schema describes (unwrapping ``data``/list envelopes)."""
    node = schema if isinstance(schema, dict) else {}
    for _ in range(3):
        props = node.get("properties") if isinstance(node.get("properties"), dict) else None
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            node = node["items"]
            continue
        if props is None:
            break
        arrays = [v for v in props.values() if isinstance(v, dict) and v.get("type") == "array" and isinstance(v.get("items"), dict)]
        if kind in ("list", "search") and len(arrays) == 1:
            node = arrays[0]["items"]
            continue
        wrappers = [k for k in ("data", "result", "item", "record", "response") if isinstance(props.get(k), dict)]
        if len(props) <= 3 and wrappers and (props[wrappers[0]].get("properties") or props[wrappers[0]].get("items")):
            node = props[wrappers[0]]
            continue
        break
    props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
    return [(name, sub) for name, sub in list(props.items())[:30] if isinstance(sub, dict) and isinstance(name, str)]


def _simulated_result(output_schema: Any) -> dict[str, Any] | None:
    """A simulated tool's data schema: the source's output schema (Composio's ``data``), else None."""
    if not isinstance(output_schema, dict):
        return None
    props = output_schema.get("properties") if isinstance(output_schema.get("properties"), dict) else {}
    node = props["data"] if "data" in props and ("successful" in props or "error" in props) else output_schema
    try:
        schema = normalise_schema(node)
    except SchemaRejected:
        return None
    if schema.get("type") != "object" or not schema.get("properties"):
        return None
    return _compact(schema)


def _effect(kind: str, tool: PreparedTool, intent: Intent) -> str:
    if kind in ("get", "list", "search"):
        return "read"
    if kind != "simulated":
        return "write"
    if tool.read_only is not None:
        return "read" if tool.read_only else "write"
    if tool.method:
        return "read" if tool.method.upper() in ("GET", "HEAD") else "write"
    first = words(tool.source or tool.name)[:2]
    reads = {"get", "list", "search", "fetch", "retrieve", "find", "query", "read", "show", "view", "describe",
             "lookup", "check", "count", "download", "export", "calculate", "compute", "estimate", "validate",
             "preview", "analyze", "analyse", "convert", "translate", "detect", "predict", "recognize", "classify"}
    return "read" if any(w in reads for w in first) else "write"


def _describe(kind: str, behaviour: Behaviour, entity: EntityDef | None, tool: PreparedTool, intent: Intent) -> str:
    original = clean_text(tool.description, 500)
    if original and (squash(original.rstrip("()")) == squash(tool.source) or original.endswith("()")):
        original = ""
    if kind == "simulated" or entity is None:
        return original or f"{' '.join(words(tool.source or tool.name)).capitalize()}."
    noun = _words(entity.name)
    nouns = _words(entity.table)
    lead = {
        "create": f"Create a {noun}.",
        "send": f"Send a {noun} (it is stored and can be read back).",
        "get": f"Get one {noun}" + (" (the current one)." if behaviour.current else " by its id." if intent.keys else "."),
        "list": f"List {nouns}, paged; parameters that name a field filter on it.",
        "search": f"Search {nouns} by text (matched against their text fields), paged.",
        "update": f"Update a {noun}; only the fields you pass change.",
        "delete": f"Delete a {noun}; it can no longer be read.",
        "transition": "",
        "link": f"Add members to a {_words(noun.removesuffix(' member'))} (default: you).",
        "unlink": f"Remove members from a {_words(noun.removesuffix(' member'))} (default: you).",
    }[kind]
    if kind == "transition" and behaviour.transition is not None:
        t = behaviour.transition
        value = str(t.to).lower() if isinstance(t.to, bool) else t.to
        lead = f"Set a {noun}'s {t.field} to {value}."
        if t.allowed_from:
            shown = ", ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in t.allowed_from)
            lead += f" Allowed only when its {t.field} is {shown}."
    if behaviour.via and intent.via:
        lead = f"Get the {noun} of a {_words(intent.via[0])}."
    text = f"{lead} {original}".strip() if original and squash(original) not in squash(lead) else lead
    return clean_text(text, 700)
