"""Entities as data: fields with semantic types, keys, relations, labels and state machines.

An ``EntityDef`` is the one description of a kind of record a service stores. Hand-written services
write it as a class (``@service.entity``, see ``mcp_services.kernel.entity``); generated services
load it from their JSON spec. Everything else is derived from it: the SQLite table, the JSON schema
of the records tools return, the row-level diff, and the metadata the composer reads (relations,
display names, state machines, which values are natural to mention to a person).

Relations, seen from a record:
- ``ref``: the field holds the id of another entity of the same service (a foreign key);
- ``role``: the name of the relation ("requester", "owner", "customer", "company"): the composer
  says "her open ticket" because a ticket's ``requester_email`` has role ``requester``;
- ``link``: ``"service.entity.field"``: the value equals that field of a record in another service
  (a charge's ``invoice_number`` is an accounting invoice's ``number``);
- ``mention``: a noun phrase for a value people pass on in messages ("the refund id", "the tracking
  link"): the natural information flows of a workflow;
- ``incidental``: a value that working with the record changes (a message's read flag and labels, a
  ticket's tags): grading never counts a change of it as collateral damage.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FieldType = Literal["string", "integer", "number", "boolean", "object", "array", "any"]
Scalar = str | int | float | bool

#: Columns added to entities with ``timestamps`` (unless a field of that name exists).
TIMESTAMP_COLUMNS = ("created_at", "updated_at")

_IDENT = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
_ENTITY = r"^[a-z][a-z0-9_]{0,47}$"
_LINK = re.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class FieldDef(_Model):
    """One field of an entity: a column (``stored``), or a value derived for results."""

    name: str = Field(pattern=_IDENT)
    type: FieldType
    semantic: str | None = None
    description: str = ""
    enum: list[Scalar] | None = None
    format: str | None = None
    pattern: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    json_schema: dict[str, Any] | None = Field(default=None, description="Schema of an object/array value")
    nullable: bool = True
    default: Any = None
    unique: bool = False
    index: bool = False
    ref: str | None = Field(default=None, description="The entity of this service whose id this field holds")
    owner: bool = Field(default=False, description="With ref: the referenced row owns this one (deleted with it)")
    role: str | None = Field(default=None, description="The relation's name, seen from this record")
    link: str | None = Field(default=None, description="service.entity.field this value equals in another service")
    mention: str | None = Field(default=None, description="How a person names this value in a message")
    incidental: bool = Field(
        default=False,
        description="Changed by working with the record (read flags, labels one adds while working): never a change the "
        "task made to the record, never collateral damage",
    )
    stored: bool = Field(default=True, description="False: derived for results, not a column")
    join: str | None = Field(default=None, description="For a derived field: 'ref_field.target_field'")


class KeyDef(_Model):
    """How an entity's rows are identified: the ``id`` column's type and how new ids look."""

    type: Literal["string", "integer"] = "string"
    prefix: str = Field(default="", pattern=r"^[a-z0-9]{0,12}$")
    width: int = Field(default=4, ge=1, le=64, description="Digits of the counter in prefix_0001 ids")
    pattern: str | None = Field(default=None, description="New ids match this regex (as the source requires)")
    format: Literal["uuid"] | None = None
    mention: str | None = Field(default=None, description="How a person names the id in a message ('the refund id')")


class StateDef(_Model):
    """A state machine on a string field: its values, the initial one, terminal ones, allowed moves."""

    field: str
    values: list[str] = Field(min_length=1)
    initial: str
    terminal: list[str] = Field(default_factory=list)
    transitions: dict[str, list[str]] | None = Field(default=None, description="From a value, the values it may move to")


class EntityDef(_Model):
    """A kind of record the service stores (a table)."""

    name: str = Field(pattern=_ENTITY)
    table: str = Field(pattern=_ENTITY)
    description: str = ""
    noun: str | None = Field(default=None, description="How a person names one record: 'payment link'")
    key: KeyDef = Field(default_factory=KeyDef)
    fields: list[FieldDef] = Field(default_factory=list)
    state: StateDef | None = None
    label: str | None = Field(default=None, description="The field that names a row (name, title...)")
    search: list[str] = Field(default_factory=list, description="Fields free-text search matches")
    singleton: bool = Field(default=False, description="Exactly one row (an account's settings)")
    per_parent: bool = Field(default=False, description="One row per row of its owner (a user's profile)")
    person: bool = Field(default=False, description="Rows are people of the world (users, contacts...)")
    seed_rows: int = Field(default=8, ge=0, le=200)
    timestamps: bool = True

    def field(self, name: str) -> FieldDef | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    @property
    def display_noun(self) -> str:
        return self.noun or self.name.replace("_", " ")

    @property
    def stored_fields(self) -> list[FieldDef]:
        return [f for f in self.fields if f.stored]

    def has_column(self, name: str) -> bool:
        """``id``, a stored field, or a timestamp column the table adds."""
        f = self.field(name)
        return name == "id" or (f is not None and f.stored) or (self.timestamps and name in TIMESTAMP_COLUMNS)

    @property
    def owner_field(self) -> FieldDef | None:
        return next((f for f in self.fields if f.ref and f.owner), None)

    def columns(self) -> list[str]:
        """Every column of the entity's table, ``id`` first."""
        names = ["id"] + [f.name for f in self.stored_fields]
        if self.timestamps:
            names += [c for c in TIMESTAMP_COLUMNS if c not in names]
        return names


def entity_problems(entity: EntityDef, entities: dict[str, EntityDef]) -> list[str]:
    """Cross-reference problems of one entity within its service (empty when consistent)."""
    where = f"entity {entity.name!r}"
    problems: list[str] = []
    seen: set[str] = set()
    for f in entity.fields:
        if f.name.lower() in seen:
            problems.append(f"{where}: field {f.name!r} is declared twice (names are case-insensitive)")
        seen.add(f.name.lower())
        if f.name == "id":
            problems.append(f"{where}: field 'id' is reserved (every entity has an 'id' key)")
        if f.ref is not None and f.ref not in entities:
            problems.append(f"{where}: field {f.name!r} refers to unknown entity {f.ref!r}")
        if f.link is not None and not _LINK.match(f.link):
            problems.append(f"{where}: field {f.name!r} link {f.link!r} must look like 'service.entity.field'")
        if f.join is not None:
            via, _, target_field = f.join.partition(".")
            via_field = entity.field(via)
            if f.stored:
                problems.append(f"{where}: field {f.name!r} has a join, so it cannot be stored")
            elif via_field is None or via_field.ref is None:
                problems.append(f"{where}: field {f.name!r} joins through {via!r}, which is not a ref field")
            else:
                target = entities.get(via_field.ref)
                if target is not None and target.field(target_field) is None and target_field != "id":
                    problems.append(f"{where}: field {f.name!r} joins {target_field!r}, not a field of {target.name!r}")
    if entity.state:
        state_field = entity.field(entity.state.field)
        if state_field is None:
            problems.append(f"{where}: state field {entity.state.field!r} is not a field")
        elif state_field.type != "string":
            problems.append(f"{where}: state field {entity.state.field!r} must be a string")
        if entity.state.initial not in entity.state.values:
            problems.append(f"{where}: initial state {entity.state.initial!r} is not one of its values")
        for source, targets in (entity.state.transitions or {}).items():
            unknown = [v for v in [source, *targets] if v not in entity.state.values]
            if unknown:
                problems.append(f"{where}: transition {source!r} -> {targets} names unknown states {unknown}")
    if entity.label and entity.field(entity.label) is None:
        problems.append(f"{where}: label {entity.label!r} is not a field")
    for name in entity.search:
        searched = entity.field(name)
        if searched is None or not searched.stored or searched.type != "string":
            problems.append(f"{where}: search field {name!r} is not a stored text field")
    if entity.per_parent and entity.owner_field is None:
        problems.append(f"{where}: per_parent needs an owner field (a ref with owner: true)")
    return problems


def field_schema(f: FieldDef) -> dict[str, Any]:
    """The JSON schema of one field's value in a record."""
    schema: dict[str, Any] = dict(f.json_schema) if f.json_schema and f.type in ("object", "array") else {}
    if f.type != "any":
        schema["type"] = f.type
    for key, value in (
        ("format", f.format),
        ("pattern", f.pattern),
        ("minimum", f.minimum),
        ("maximum", f.maximum),
        ("minLength", f.min_length),
        ("maxLength", f.max_length),
        ("enum", f.enum),
        ("x-semantic-type", f.semantic),
    ):
        if value is not None:
            schema[key] = value
    if f.nullable:
        schema = {"anyOf": [schema, {"type": "null"}]}
    if f.description:
        schema["description"] = f.description
    return schema


def record_schema(service: str, entity: EntityDef) -> dict[str, Any]:
    """The JSON schema of one record as tools return it: every field, stored or derived."""
    properties: dict[str, Any] = {"id": key_schema(service, entity)}
    for f in entity.fields:
        properties[f.name] = field_schema(f)
    if entity.timestamps:
        for name in TIMESTAMP_COLUMNS:
            properties.setdefault(name, {"anyOf": [{"type": "string", "x-semantic-type": "datetime", "format": "date-time"}, {"type": "null"}]})
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties)}
    if entity.description:
        schema["description"] = entity.description
    return schema


def key_schema(service: str, entity: EntityDef) -> dict[str, Any]:
    """The schema of an entity's id: its semantic type ``id:<service>.<entity>`` links it across tools."""
    schema: dict[str, Any] = {"type": entity.key.type, "x-semantic-type": f"id:{service}.{entity.name}"}
    if entity.key.type == "string":
        schema.update(minLength=1, maxLength=100)
    return schema
