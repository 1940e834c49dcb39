"""Entities as classes: one declaration gives the table, the record type, its schema and its codec.

A hand-written service declares each kind of record once::

    @service.entity(table="contacts", prefix="ct", label="name", search=("first_name", "last_name", "email"))
    class Contact:
        id: ContactId
        first_name: str
        last_name: str = field(index=True)
        email: EmailAddress = field(unique=True, role="self")
        company_id: CompanyId | None = field(None, role="employer")
        archived: bool = False

        name = derived(PersonName, lambda c: f"{c.first_name} {c.last_name}")
        company_name = joined(CompanyName | None, via="company_id", field="name")

The class becomes a frozen, slotted dataclass (rows are typed objects: ``contact.archived``); its
annotations become an ``EntityDef`` (fields, semantic types, enums, limits, relations) from which
the kernel derives the SQLite table, the JSON schema of returned records, and a codec compiled once
(row tuple -> object -> JSON-ready dict) so a call never goes through an ORM. ``derived`` and
``joined`` values are not stored: they are added when a record is returned (joins in one query per
page). Generated services build the same runtime from an ``EntityDef`` loaded from JSON
(``entity_class``).
"""

from __future__ import annotations

import dataclasses
import json
import keyword
import re
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar, cast

from pydantic import TypeAdapter
from sqlalchemy import JSON, Boolean, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

from mcp_services.kernel.schema import TIMESTAMP_COLUMNS, EntityDef, FieldDef, KeyDef, StateDef, record_schema
from mcp_services.kernel.semantic import SEMANTIC_KEY

T = TypeVar("T")
Row = dict[str, Any]

_FIELD_OPTIONS = "compoworld.column"
_SQL_TYPES: dict[str, Any] = {
    "string": String,
    "integer": Integer,
    "number": Float,
    "boolean": Boolean,
    "object": JSON,
    "array": JSON,
    "any": JSON,
}


@dataclass(frozen=True, slots=True)
class ColumnOptions:
    unique: bool = False
    index: bool = False
    role: str | None = None
    link: str | None = None
    mention: str | None = None
    description: str = ""
    incidental: bool = False


def field(
    default: Any = dataclasses.MISSING,
    *,
    default_factory: Callable[[], Any] | Any = dataclasses.MISSING,
    unique: bool = False,
    index: bool = False,
    role: str | None = None,
    link: str | None = None,
    mention: str | None = None,
    description: str = "",
    incidental: bool = False,
) -> Any:
    """A column with options (see ``mcp_services.kernel.schema`` for what role, link, mention and incidental mean)."""
    options = ColumnOptions(unique, index, role, link, mention, description, incidental)
    return dataclasses.field(default=default, default_factory=default_factory, metadata={_FIELD_OPTIONS: options})


@dataclass(frozen=True, slots=True)
class Derived:
    """A value added to returned records, not stored: computed per row, for a whole result at once, or joined."""

    annotation: Any
    compute: Callable[[Any], Any] | None = None
    batch: Callable[[Any, Sequence[Any]], Sequence[Any]] | None = None
    via: str | None = None
    target_field: str | None = None
    description: str = ""


def derived(
    annotation: Any,
    compute: Callable[[Any], Any] | None = None,
    *,
    batch: Callable[[Any, Sequence[Any]], Sequence[Any]] | None = None,
    description: str = "",
) -> Any:
    """A field of returned records that is not stored.

    ``compute(record)`` derives it from the row alone; ``batch(records_access, records)`` returns one
    value per record for a whole result at once (one query for a page: a count of replies, the sum of
    refunds), reading state through ``records_access`` (``query``, ``fetch_many``, ``sql``).
    """
    if (compute is None) == (batch is None):
        raise ValueError("derived needs exactly one of compute= or batch=")
    return Derived(annotation, compute=compute, batch=batch, description=description)


def joined(annotation: Any, *, via: str, field: str, description: str = "") -> Any:  # noqa: A002 - reads as a field name
    """A field of returned records taken from the record that the ref field ``via`` points at."""
    return Derived(annotation, via=via, target_field=field, description=description)


# -- reading annotations -----------------------------------------------------------------------------


@cache
def _annotation_schema(annotation: Any) -> dict[str, Any]:
    return TypeAdapter(annotation).json_schema()


def _field_from_annotation(name: str, annotation: Any, service: str, options: ColumnOptions | None) -> FieldDef:
    schema = _annotation_schema(annotation)
    nullable = False
    options_list = schema.get("anyOf")
    if isinstance(options_list, list):
        real = [o for o in cast(list[dict[str, Any]], options_list) if o.get("type") != "null"]
        nullable = len(real) < len(options_list)
        if len(real) != 1:
            raise TypeError(f"field {name!r}: only 'X' or 'X | None' annotations are supported")
        schema = real[0]
    kind = schema.get("type", "any")
    if kind not in _SQL_TYPES:
        raise TypeError(f"field {name!r}: unsupported type {kind!r}")
    semantic = schema.get(SEMANTIC_KEY)
    ref = None
    if isinstance(semantic, str) and semantic.startswith(f"id:{service}."):
        ref = semantic.split(".", 1)[1]
    opts = options or ColumnOptions()
    return FieldDef(
        name=name,
        type=kind,
        semantic=semantic,
        description=opts.description or str(schema.get("description", "")),
        enum=schema.get("enum"),
        format=schema.get("format"),
        pattern=schema.get("pattern"),
        minimum=schema.get("minimum"),
        maximum=schema.get("maximum"),
        min_length=schema.get("minLength"),
        max_length=schema.get("maxLength"),
        json_schema={k: v for k, v in schema.items() if k in ("items", "properties", "additionalProperties")} or None,
        nullable=nullable,
        unique=opts.unique,
        index=opts.index,
        ref=ref,
        role=opts.role,
        link=opts.link,
        mention=opts.mention,
        incidental=opts.incidental,
    )


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def definition_from_class(
    cls: type[Any],
    service: str,
    *,
    table: str,
    prefix: str,
    width: int = 4,
    noun: str | None = None,
    label: str | None = None,
    search: Sequence[str] = (),
    state: StateDef | None = None,
    description: str | None = None,
) -> tuple[EntityDef, dict[str, Derived]]:
    """Read a declaration class into an ``EntityDef`` and its derived values."""
    hints = typing.get_type_hints(cls, include_extras=True)
    own = cls.__dict__.get("__annotations__", {})
    if "id" not in own:
        raise TypeError(f"entity {cls.__name__} must declare 'id' first, e.g. 'id: EntityId(\"{service}.x\")'")
    id_schema = _annotation_schema(hints["id"])
    semantic = str(id_schema.get(SEMANTIC_KEY, ""))
    name = semantic.split(".", 1)[1] if semantic.startswith(f"id:{service}.") else _snake(cls.__name__)
    id_default = cls.__dict__.get("id", dataclasses.MISSING)
    id_options = id_default.metadata.get(_FIELD_OPTIONS) if isinstance(id_default, dataclasses.Field) else None
    key = KeyDef(
        type="integer" if id_schema.get("type") == "integer" else "string", prefix=prefix, width=width,
        mention=id_options.mention if id_options is not None else None,
    )
    fields: list[FieldDef] = []
    for attr in own:
        if attr == "id":
            continue
        default = cls.__dict__.get(attr, dataclasses.MISSING)
        options = default.metadata.get(_FIELD_OPTIONS) if isinstance(default, dataclasses.Field) else None
        f = _field_from_annotation(attr, hints[attr], service, options)
        plain = default.default if isinstance(default, dataclasses.Field) else default
        if plain is not dataclasses.MISSING and isinstance(plain, (str, int, float, bool)):
            f = f.model_copy(update={"default": plain})
        fields.append(f)
    extras: dict[str, Derived] = {}
    for attr, value in list(cls.__dict__.items()):
        if isinstance(value, Derived):
            extras[attr] = value
            f = _field_from_annotation(attr, value.annotation, service, ColumnOptions(description=value.description))
            update: dict[str, Any] = {"stored": False, "ref": None}
            if value.via is not None:
                update["join"] = f"{value.via}.{value.target_field}"
            fields.append(f.model_copy(update=update))
    doc = description if description is not None else (cls.__doc__ or "").strip()
    entity = EntityDef(
        name=name,
        table=table,
        description=doc if not doc.startswith(f"{cls.__name__}(") else "",
        noun=noun,
        key=key,
        fields=fields,
        state=state,
        label=label,
        search=list(search),
        timestamps=False,
    )
    return entity, extras


# -- the runtime -------------------------------------------------------------------------------------


class EntityRuntime:
    """What the kernel needs to store, load and return one entity's records fast."""

    def __init__(self, service: str, cls: type[Any], definition: EntityDef, extras: dict[str, Derived], table: Table) -> None:
        self.service = service
        self.cls = cls
        self.definition = definition
        self.name = definition.name
        self.noun = definition.display_noun
        self.table = table
        self.extras = extras
        self.columns: tuple[str, ...] = tuple(definition.columns())
        self.column_set = frozenset(self.columns)
        stored = {f.name: f for f in definition.stored_fields}
        self.kinds: dict[str, str] = {c: (stored[c].type if c in stored else "string") for c in self.columns}
        self.kinds["id"] = definition.key.type
        self.json_columns = frozenset(c for c, k in self.kinds.items() if k in ("object", "array", "any"))
        quoted = ", ".join(_q(c) for c in self.columns)
        self.select_sql = f"SELECT {quoted} FROM {_q(table.name)}"
        self.by_id_sql = f"{self.select_sql} WHERE id = ?"
        self.insert_sql = f"INSERT INTO {_q(table.name)} ({quoted}) VALUES ({', '.join('?' for _ in self.columns)})"
        self.delete_sql = f"DELETE FROM {_q(table.name)} WHERE id = ?"
        #: The record attribute of each column: the column's name, ``from_`` for a column named ``from``.
        self.attributes: dict[str, str] = {c: attribute_name(c) for c in self.columns}
        # load / dump / encode are compiled on first use (see __getattr__): a catalog registers thousands
        # of entities, an episode uses a few.
        self.search_columns: tuple[str, ...] = tuple(definition.search)
        self.list_tool: str | None = None  # set by the service: the tool that lists these records
        #: The service's entities by name (shared by all of them), for joins through refs.
        self.siblings: dict[str, EntityRuntime] = {}
        self._schema: dict[str, Any] | None = None

    load: Loader
    dump: Dumper
    encode: Encoder

    def __getattr__(self, name: str) -> Any:
        if name not in ("load", "dump", "encode"):
            raise AttributeError(name)
        self.load, self.dump, self.encode = _compile_codecs(self.cls, self.attributes, self.kinds, self.json_columns)
        return getattr(self, name)

    def record(self, values: dict[str, Any]) -> Any:
        """A record from column values (columns left out are None: for classes made by ``entity_class``)."""
        attributes = self.attributes
        return self.cls(**{attributes[c]: v for c, v in values.items()})

    def target_of(self, field_name: str) -> EntityRuntime:
        """The entity the ref field ``field_name`` points at."""
        f = self.definition.field(field_name)
        if f is None or f.ref is None:
            raise ValueError(f"{self.name}.{field_name} is not a ref field")
        return self.siblings[f.ref]

    @property
    def schema(self) -> dict[str, Any]:
        if self._schema is None:
            self._schema = record_schema(self.service, self.definition)
        return self._schema

    def not_found_hint(self) -> str:
        return f"Use {self.list_tool} to find {self.noun} ids." if self.list_tool else ""

    def __repr__(self) -> str:
        return f"EntityRuntime({self.service}.{self.name})"


def runtime_of(cls: type[Any]) -> EntityRuntime:
    runtime = getattr(cls, "__entity__", None)
    if not isinstance(runtime, EntityRuntime):
        raise TypeError(f"{cls!r} is not an entity class (declare it with @service.entity)")
    return runtime


def is_entity(cls: object) -> bool:
    return isinstance(getattr(cls, "__entity__", None), EntityRuntime)


def build_table(definition: EntityDef, entities: dict[str, EntityDef], metadata: MetaData, constrained: set[str] | None = None) -> Table:
    """The SQLite table of an entity: ``id``, one column per stored field, refs as foreign keys.

    ``constrained`` names the ref fields declared as SQL foreign keys (default: all); owners cascade
    on delete, other references are set to null.
    """
    id_type = Integer if definition.key.type == "integer" else String
    columns: list[Column[Any]] = [Column("id", id_type, primary_key=True, autoincrement=False)]
    for f in definition.stored_fields:
        target = entities.get(f.ref) if f.ref else None
        if target is not None:
            kind: Any = Integer if target.key.type == "integer" else String
            if constrained is None or f.name in constrained:
                fk = ForeignKey(f"{target.table}.id", ondelete="CASCADE" if f.owner else "SET NULL")
                columns.append(Column(f.name, kind, fk, index=True, nullable=f.nullable, unique=f.unique))
            else:
                columns.append(Column(f.name, kind, index=True, nullable=f.nullable))
            continue
        kind = Text if f.type == "string" and f.json_schema else _SQL_TYPES[f.type]
        columns.append(Column(f.name, kind, nullable=f.nullable, unique=f.unique, index=f.index and not f.unique))
    if definition.timestamps:
        names = {f.name for f in definition.fields}
        columns.extend(Column(c, String, nullable=True) for c in TIMESTAMP_COLUMNS if c not in names)
    return Table(definition.table, metadata, *columns)


class DataRecord:
    """Base of the record classes of entities declared as data: slotted, read-only, built by keyword.

    A catalog compiles thousands of such entities, so their classes are made with ``type()`` (no
    per-class generated code, unlike a dataclass); a record behaves like a frozen dataclass instance.
    """

    __slots__ = ()
    _attributes: tuple[str, ...] = ()

    def __init__(self, **values: Any) -> None:
        for name in self._attributes:
            object.__setattr__(self, name, values.pop(name, None))
        if values:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(values))!r}")

    def replace(self, **changes: Any) -> DataRecord:
        """A copy with ``changes`` applied (what ``dataclasses.replace`` does for a dataclass record)."""
        copy = object.__new__(type(self))
        for name in self._attributes:
            object.__setattr__(copy, name, changes.pop(name) if name in changes else getattr(self, name))
        if changes:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(changes))!r}")
        return copy

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self._attributes)

    # Unhashable, as a dataclass with eq is: fields may hold dicts and lists.
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self._attributes)})"


def entity_class(service: str, definition: EntityDef) -> type[Any]:
    """A record class for an entity given as data (generated services): a ``DataRecord`` with its columns."""
    attributes = tuple(attribute_name(c) for c in definition.columns())
    camel = "".join(part.capitalize() for part in re.split(r"[_\W]+", f"{service}_{definition.name}") if part)
    return type(camel, (DataRecord,), {"__slots__": attributes, "_attributes": attributes, "__module__": __name__})


def replace_record(record: Any, changes: dict[str, Any]) -> Any:
    """A record with these attribute values changed: a declared class's dataclass, or a ``DataRecord``."""
    if isinstance(record, DataRecord):
        return record.replace(**changes)
    return dataclasses.replace(record, **changes)


#: Names a record's own attributes take: a column called so is held as ``replace_``.
_RECORD_ATTRIBUTES = frozenset({"replace", "_attributes"})


def attribute_name(column: str) -> str:
    """The record attribute that holds a column: its name, with ``_`` added to a Python keyword (``from_``)
    or to a name a record already uses (``replace_``)."""
    return f"{column}_" if keyword.iskeyword(column) or column in _RECORD_ATTRIBUTES else column


def as_record_class(cls: type[T]) -> type[T]:
    """The declaration class as a frozen, slotted, keyword-only dataclass (derived values removed)."""
    for attr, value in list(cls.__dict__.items()):
        if isinstance(value, Derived):
            delattr(cls, attr)
    return dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(cls)


# -- compiled codecs ---------------------------------------------------------------------------------


Loader = Callable[[Sequence[Any]], Any]
Dumper = Callable[[Any], Row]
Encoder = Callable[[Any], tuple[Any, ...]]


def _compile_codecs(
    cls: type[Any], attributes: dict[str, str], kinds: dict[str, str], json_columns: frozenset[str]
) -> tuple[Loader, Dumper, Encoder]:
    """The entity's codecs, built once (in one ``exec``: catalogs compile thousands of entities).

    ``load``: row tuple -> record object, booleans and JSON decoded; ``dump``: record -> JSON-ready
    dict of its stored columns; ``encode``: record -> parameter tuple for INSERT (JSON as text).
    """
    lines = ["def load(row):", "    o = _new(_cls)"]
    for i, column in enumerate(attributes):
        kind = kinds[column]
        if kind == "boolean":
            value = f"None if row[{i}] is None else bool(row[{i}])"
        elif kind in ("object", "array", "any"):
            value = f"_json(row[{i}]) if isinstance(row[{i}], str) else row[{i}]"
        else:
            value = f"row[{i}]"
        lines.append(f"    _set(o, {attributes[column]!r}, {value})")
    lines.append("    return o")
    body = ", ".join(f"{c!r}: o.{a}" for c, a in attributes.items())
    lines += ["def dump(o):", f"    return {{{body}}}"]
    parts = [f"_dumps(o.{a}) if o.{a} is not None else None" if c in json_columns else f"o.{a}" for c, a in attributes.items()]
    lines += ["def encode(o):", f"    return ({', '.join(parts)},)"]
    namespace: dict[str, Any] = {
        "_new": object.__new__, "_cls": cls, "_set": object.__setattr__, "_json": json.loads, "_dumps": _json_text
    }
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from declared column names only
    return cast(Loader, namespace["load"]), cast(Dumper, namespace["dump"]), cast(Encoder, namespace["encode"])


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_text(value: Any) -> str:
    """How a JSON column stores a value."""
    return _json_text(value)


def _q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


quote = _q

__all__ = [
    "Derived",
    "EntityRuntime",
    "as_record_class",
    "DataRecord",
    "attribute_name",
    "build_table",
    "definition_from_class",
    "derived",
    "entity_class",
    "field",
    "is_entity",
    "joined",
    "replace_record",
    "json_text",
    "runtime_of",
]
