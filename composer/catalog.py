"""What the composer knows about the library: each tool's parameters and result fields, read from its schemas.

Nothing here knows a service by name. A tool's JSON input schema gives its parameters (semantic type,
required, enum, list); its data schema gives the fields of one result item (a page's items, a list's
items, or the object itself), and which field identifies the item (its entity id).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_services.kernel.semantic import semantic_type_of
from mcp_services.kernel.service import Service
from mcp_services.kernel.tools import ToolSpec

from composer.errors import ComposerError

ResultKind = Literal["page", "list", "object"]

#: Untyped string parameters that take free text to search for (a name, a subject...).
SEARCH_PARAMS = frozenset({"query", "q", "search", "text_query"})

#: Header parameters of an HTTP API (``x_apideck_consumer_id``, ``X_Sds_Auth_Token``): plumbing a colleague never mentions.
HEADER_PARAM = re.compile(r"^x_[a-z0-9_]+$", re.IGNORECASE)

#: Semantic types that identify an item when it has no entity id.
NATURAL_KEYS = ("product_sku", "email_address", "phone_number", "username", "channel_name", "file_ref")


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a tool."""

    name: str
    required: bool
    semtype: str | None
    json_type: str
    is_list: bool = False
    item_type: str | None = None
    enum: tuple[Any, ...] = ()
    description: str = ""

    @property
    def is_search(self) -> bool:
        return self.semtype is None and self.json_type == "string" and not self.enum and self.name in SEARCH_PARAMS


@dataclass(frozen=True, slots=True)
class Field:
    """One scalar field of a result item (``path`` is dotted for nested objects)."""

    path: str
    semtype: str | None
    json_type: str
    enum: tuple[Any, ...] = ()
    is_list: bool = False


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the composer sees it."""

    service: str
    name: str
    effect: Literal["read", "write"]
    description: str
    params: tuple[Param, ...]
    result_kind: ResultKind
    fields: tuple[Field, ...]
    key_field: str | None
    entity: str | None  # "helpdesk.ticket": the kind of item the result holds
    intent: str | None = None  # what the tool is for (mcp_services.kernel.intents)
    phrases: tuple[str, ...] = ()  # how a person asks for it, with {param} placeholders
    #: Answered by the world model, not by code (a generated tool the gate did not pass); ``state_backed``: the
    #: world model answers it from the episode's rows (a read a stage may use; a simulated tool is never a write).
    simulated: bool = False
    state_backed: bool = False
    _by_name: dict[str, Param] = field(default_factory=dict, repr=False, compare=False)
    # Derived once (the walk reads them millions of times).
    key: str = field(default="", init=False, compare=False)
    is_write: bool = field(default=False, init=False, compare=False)

    def __post_init__(self) -> None:
        self._by_name.update({p.name: p for p in self.params})
        object.__setattr__(self, "key", f"{self.service}.{self.name}")
        object.__setattr__(self, "is_write", self.effect == "write")

    def param(self, name: str) -> Param | None:
        return self._by_name.get(name)

    def field_of(self, path: str) -> Field | None:
        for f in self.fields:
            if f.path == path:
                return f
        return None

    @property
    def required(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.required)

    @property
    def verb(self) -> str:
        return self.name.split("_", 1)[0]

    @property
    def object_words(self) -> str:
        parts = self.name.split("_", 1)
        return parts[1].replace("_", " ") if len(parts) > 1 else ""


# -- schema reading --------------------------------------------------------------------------------


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while "$ref" in schema and seen < 16:
        schema = defs[str(schema["$ref"]).rsplit("/", 1)[-1]]
        seen += 1
    return schema


def _non_null(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """The schema without a nullable ``anyOf`` wrapper, and whether null was allowed."""
    schema = _resolve(schema, defs)
    options = schema.get("anyOf")
    if not options:
        return schema, False
    real = [_resolve(o, defs) for o in options if o.get("type") != "null"]
    nullable = len(real) < len(options)
    if len(real) == 1:
        merged = dict(real[0])
        for key in ("description", "default", "title"):
            if key in schema and key not in merged:
                merged[key] = schema[key]
        return merged, nullable
    return schema, nullable


def _json_type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if "enum" in schema:
        return "string"
    if "properties" in schema:
        return "object"
    return "any"


def read_params(tool: ToolSpec) -> tuple[Param, ...]:
    schema = tool.input_schema
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    params: list[Param] = []
    for name, raw in schema.get("properties", {}).items():
        prop, _ = _non_null(raw, defs)
        kind = _json_type(prop)
        item_type = None
        enum: tuple[Any, ...] = tuple(prop.get("enum", ()))
        if kind == "array":
            items, _ = _non_null(prop.get("items", {}), defs)
            item_type = _json_type(items)
            enum = tuple(items.get("enum", ()))
        params.append(
            Param(
                name=name,
                required=name in required,
                semtype=semantic_type_of(dict(prop)) or semantic_type_of(dict(raw)),
                json_type=kind,
                is_list=kind == "array",
                item_type=item_type,
                enum=enum,
                description=str(raw.get("description") or prop.get("description") or ""),
            )
        )
    return tuple(params)


def _item_schema(data: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[ResultKind, Mapping[str, Any]]:
    data, _ = _non_null(data, defs)
    if data.get("type") == "array":
        items, _ = _non_null(data.get("items", {}), defs)
        return "list", items
    props = data.get("properties", {})
    if "items" in props and "next_cursor" in props:
        items_schema, _ = _non_null(props["items"], defs)
        inner, _ = _non_null(items_schema.get("items", {}), defs)
        return "page", inner
    return "object", data


def _fields(schema: Mapping[str, Any], defs: Mapping[str, Any], prefix: str = "", depth: int = 0) -> list[Field]:
    out: list[Field] = []
    for name, raw in schema.get("properties", {}).items():
        prop, _ = _non_null(raw, defs)
        path = f"{prefix}{name}"
        kind = _json_type(prop)
        if kind == "object" and depth < 1:
            out.extend(_fields(prop, defs, f"{path}.", depth + 1))
        elif kind == "array":
            items, _ = _non_null(prop.get("items", {}), defs)
            if _json_type(items) not in ("object", "array"):
                out.append(Field(path, semantic_type_of(dict(items)), _json_type(items), tuple(items.get("enum", ())), True))
        elif kind != "object":
            out.append(Field(path, semantic_type_of(dict(prop)), kind, tuple(prop.get("enum", ()))))
    return out


def _key_field(service: str, fields: Iterable[Field]) -> tuple[str | None, str | None]:
    """The field that identifies an item of this result, and the entity it names."""
    candidates = [f for f in fields if f.semtype and f.semtype.startswith("id:") and "." not in f.path and not f.is_list]
    own = [f for f in candidates if f.semtype and f.semtype[3:].startswith(f"{service}.")]
    for f in own:
        entity = f.semtype[3:].split(".", 1)[1]  # type: ignore[index]
        if f.path in ("id", "key", "sid", "number") or f.path.startswith(entity):
            return f.path, f.semtype[3:]  # type: ignore[index]
    # Items without an id of their own (a catalogue item, a person in a list) are told apart by a
    # value that is unique for them.
    for f in fields:
        if "." not in f.path and not f.is_list and f.semtype in NATURAL_KEYS:
            return f.path, None
    return None, None


def tool_info(tool: ToolSpec) -> ToolInfo:
    data = tool.data_schema
    defs = data.get("$defs", {})
    kind, item = _item_schema(data, defs)
    fields = tuple(_fields(item, defs))
    key_field, entity = _key_field(tool.service, fields)
    return ToolInfo(
        service=tool.service,
        name=tool.name,
        effect=tool.effect,
        description=tool.description,
        params=read_params(tool),
        result_kind=kind,
        fields=fields,
        key_field=key_field,
        entity=entity,
        intent=tool.intent,
        phrases=tuple(tool.phrases),
        simulated=tool.simulated,
        state_backed=not tool.simulated or (tool.effect == "read" and tool.answers_from_state),
    )


# -- the catalog -----------------------------------------------------------------------------------


class Catalog:
    """The services a composition may use, with every tool read once."""

    def __init__(self, services: Iterable[Service]) -> None:
        self.services: dict[str, Service] = {}
        for service in services:
            if service.name in self.services:
                raise ComposerError(f"service {service.name!r} is named twice")
            self.services[service.name] = service
        if not self.services:
            raise ComposerError("no services to compose: name at least one with --services")
        self.tools: dict[str, ToolInfo] = {}
        self._by_service: dict[str, list[ToolInfo]] = {}
        for service in self.services.values():
            for spec in service.tools.values():
                info = tool_info(spec)
                self.tools[info.key] = info
                self._by_service.setdefault(info.service, []).append(info)
        owners: dict[str, set[str]] = {}
        for info in self.tools.values():
            if info.entity:
                owners.setdefault(info.entity.split(".", 1)[1].replace("_", " "), set()).add(info.service)
        #: Entity nouns more than one service uses ("contact", "message"): named with their service.
        self.shared_nouns = frozenset(noun for noun, services in owners.items() if len(services) > 1)

    @property
    def names(self) -> list[str]:
        return list(self.services)

    def tool(self, service: str, name: str) -> ToolInfo:
        return self.tools[f"{service}.{name}"]

    def tools_of(self, service: str) -> list[ToolInfo]:
        return list(self._by_service.get(service, ()))


def available_services() -> list[str]:
    """Library services that import now (for development while the library is being written)."""
    from mcp_services.registry import LIBRARY

    names = []
    for name in LIBRARY:
        try:
            importlib.import_module(f"mcp_services.library.{name}")
        except Exception:  # noqa: BLE001 - a service still being written must not stop development
            continue
        names.append(name)
    return names


def load_services(names: Iterable[str] | None = None) -> list[Service]:
    """Library services by name (all of the library by default); unknown or broken ones are a ComposerError."""
    from mcp_services.registry import LIBRARY, UnknownServiceError, get_service

    wanted = list(LIBRARY) if names is None else [n.strip() for n in names if n.strip()]
    if not wanted:
        raise ComposerError("no services named; pass --services crm,mailbox,... or omit it for the whole library")
    services: list[Service] = []
    seen: set[str] = set()
    for name in wanted:
        if name in seen:
            raise ComposerError(f"service {name!r} is named twice")
        seen.add(name)
        try:
            services.append(get_service(name))
        except UnknownServiceError as exc:
            raise ComposerError(str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - a broken module is reported as bad input, in one line
            raise ComposerError(
                f"service {name!r} could not be loaded ({type(exc).__name__}: {exc}); fix its module or leave it "
                "out with --services"
            ) from exc
    return services


def load_catalog(names: Iterable[str] | None = None) -> Catalog:
    return Catalog(load_services(names))
