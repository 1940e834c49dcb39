"""Our declarative service spec: entities with typed fields, and tools with a behaviour over them.

A ``ServiceSpec`` is what every importer produces and what the compiler turns into a kernel
``Service``. It is plain JSON (``docs/generator.md`` documents it), small enough to keep one per
service in the catalog, and readable: a tool says *what* it does (``create`` a ``card``; ``transition``
a ``charge``'s ``status`` to ``captured``) and how each parameter is used (``bindings``), never how.

Its entities are the kernel's own declarations (``mcp_services.kernel.schema``: ``EntityDef``,
``FieldDef``, ``KeyDef``, ``StateDef``), the ones hand-written services declare as classes: a
generated service is one more service on the kernel's declarative layer, not a second one.

``load_spec`` validates a spec and turns every problem into one readable ``SpecError``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mcp_services.kernel.intents import intent_problems
from mcp_services.kernel.schema import TIMESTAMP_COLUMNS, EntityDef, FieldDef, KeyDef, StateDef, entity_problems
from mcp_services.kernel.tools import TOOL_NAME_PATTERN

from generator.semantics import check_vocabulary

SPEC_VERSION = 1

BehaviourKind = Literal[
    "create", "get", "list", "search", "update", "delete", "transition", "send", "link", "unlink", "custom",
    "simulated"
]
Role = Literal["key", "parent", "via", "field", "filter", "search", "query", "limit", "cursor", "page", "offset",
               "option", "member"]
FilterOp = Literal["eq", "gte", "lte", "in", "contains", "range", "exclude", "include"]
Scalar = str | int | float | bool

#: Behaviours that change state; the others read.
WRITE_KINDS = frozenset({"create", "update", "delete", "transition", "send", "link", "unlink"})
READ_KINDS = frozenset({"get", "list", "search"})
#: Behaviours that act on one existing row, found through ``key`` bindings (or ``current``).
KEYED_KINDS = frozenset({"get", "update", "delete", "transition"})

__all__ = [
    "TIMESTAMP_COLUMNS", "Behaviour", "Binding", "EntityDef", "FieldDef", "KeyDef", "ServiceSpec", "SpecError",
    "StateDef", "ToolDef", "Transition", "load_spec", "spec_problems",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


class Binding(_Model):
    """What one parameter of a tool means.

    - ``key``: identifies the row acted on, matched against ``column`` (default ``id``; or a natural key);
    - ``parent``: identifies the owning row of ``entity`` (matched on ``lookup``, default ``id``);
      its id is stored in / filtered on this entity's ``column``;
    - ``via``: identifies a row of ``entity`` whose ``behaviour.via`` field leads to the result;
    - ``field``: a value written to ``column``; ``filter``: rows whose ``column`` matches (``op``); both
      default to the column named like the parameter; ``range`` takes ``{gt, gte, lt, lte}`` (or one value);
    - ``search``: free text matched against the entity's text columns;
    - ``query``: a query in the product's own language, ``dialect`` (``generator.query``: Drive ``q``, JQL, Gmail
      search), answered from the entity's rows with its operators and order;
    - ``limit`` / ``cursor`` / ``page`` / ``offset``: paging; ``option``: accepted, does not change the result;
    - ``member``: ``link``/``unlink``: the members (ids of ``entity``, one, a list, or comma-separated) added to or
      removed from the parent row (default: the current user).

    A filter's ``exclude`` op leaves out rows whose ``column`` is ``value`` when the argument is true
    (``exclude_archived``); ``include`` leaves them out unless it is true (``include_spam_trash``, false by
    default). ``aliases`` are values that name the entity's current row (Gmail's ``me``, Calendar's
    ``primary``, Box's root folder ``0``); ``alternates`` are other columns that name the row where its id is
    not given (Jira's ``issueIdOrKey`` takes the issue's ``key``, Postmark's ``templateIdOrAlias`` its ``Alias``,
    Trello's ``idMember`` a ``username``). ``path`` reads the value inside an object argument
    (``item: {"id": ...}`` -> ``["id"]``), and ``when`` applies the binding only when other arguments have
    those values (``{"type": "file"}``) or are absent.
    """

    role: Role
    column: str | None = None
    entity: str | None = None
    lookup: str | None = None
    op: FilterOp = "eq"
    value: Scalar | None = None
    aliases: list[str] = Field(default_factory=list)
    path: list[str] = Field(default_factory=list)
    when: dict[str, Scalar] = Field(default_factory=dict)
    dialect: str | None = None
    alternates: list[str] = Field(default_factory=list)


class Transition(_Model):
    """Set ``field`` to ``to``; allowed only from the values in ``allowed_from`` (None: any other value)."""

    field: str
    to: Scalar
    allowed_from: list[Scalar] | None = None


class Behaviour(_Model):
    kind: BehaviourKind
    entity: str | None = None
    transition: Transition | None = None
    via: str | None = Field(default=None, description="get: follow this ref field of the 'via'-bound row")
    current: bool = Field(default=False, description="Acts on the entity's current row (the signed-in user)")
    function: str | None = Field(default=None, description="custom: the function in the service's custom module")
    planned: BehaviourKind | None = Field(
        default=None, description="simulated: the behaviour the planner read, which failed the gate (demoted)")
    marks: dict[str, Any] | None = Field(
        default=None, description="create: columns of the row the record is made under (its parent of this entity "
                                  "'marks_entity') that the record sets: a refund marks its charge refunded")
    marks_entity: str | None = None
    children: dict[str, str] | None = Field(
        default=None, description="create: parameters holding sub-records (a list of them, or an object of lists) "
                                  "-> the entity whose rows they become under the new row: an envelope's recipients")


class HttpDef(_Model):
    method: str
    path: str


class ToolDef(_Model):
    """One tool: its surface (name, effect, description, parameters, result) and its behaviour."""

    name: str
    effect: Literal["read", "write"]
    description: str = Field(min_length=1)
    parameters: dict[str, Any]
    result: dict[str, Any] | None = Field(default=None, description="Schema of data; derived from the entity if null")
    behaviour: Behaviour
    bindings: dict[str, Binding] = Field(default_factory=dict)
    source: str | None = Field(default=None, description="The tool's name in the imported specification")
    http: HttpDef | None = None
    intent: str | None = Field(default=None, description="What it is for (mcp_services.kernel.intents)")
    phrases: list[str] = Field(default_factory=list, description='How a person asks for it: "refund the charge {charge}"')


class ServiceSpec(_Model):
    spec_version: Literal[1] = SPEC_VERSION
    name: str
    title: str = ""
    description: str = Field(min_length=1)
    source: str = ""
    license: str | None = None
    upstream_license: str | None = None
    format: str = "spec"
    version: str | None = None
    categories: list[str] = Field(default_factory=list)
    entities: list[EntityDef] = Field(default_factory=list)
    tools: list[ToolDef] = Field(default_factory=list)

    def entity(self, name: str) -> EntityDef:
        for entity in self.entities:
            if entity.name == name:
                return entity
        raise KeyError(name)

    def tool(self, name: str) -> ToolDef:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(name)

    @model_validator(mode="after")
    def _consistent(self) -> ServiceSpec:
        for tool in self.tools:  # defaults: a key matches id; a field or filter the column named like it
            for param, binding in tool.bindings.items():
                if binding.column is None and binding.role in ("key", "field", "filter"):
                    binding.column = "id" if binding.role == "key" else param
        problems = spec_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class SpecError(ValueError):
    """A spec that does not validate; the message lists every problem with where it is."""


def load_spec(data: dict[str, Any] | str | bytes) -> ServiceSpec:
    """Validate a spec (a dict or JSON text); raises ``SpecError`` with readable problems."""
    try:
        if isinstance(data, (str, bytes)):
            return ServiceSpec.model_validate_json(data)
        return ServiceSpec.model_validate(data)
    except ValidationError as exc:
        name = data.get("name") if isinstance(data, dict) else None
        raise SpecError(describe_spec_error(exc, name)) from None


def describe_spec_error(exc: ValidationError, name: Any = None) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(spec)"
        message = err["msg"].removeprefix("Value error, ")
        lines.append(f"{where}: {message}" if where != "(spec)" else message)
    head = f"spec {name!r} is invalid" if isinstance(name, str) else "spec is invalid"
    return f"{head}: " + "; ".join(lines)


def spec_problems(spec: ServiceSpec) -> list[str]:
    """Cross-reference problems (names, entities, fields, bindings) of a structurally valid spec."""
    problems: list[str] = []
    if not re.match(r"^[a-z][a-z0-9_]{0,47}$", spec.name) or "__" in spec.name:
        problems.append(f"name {spec.name!r} must be a lowercase identifier without '__' (at most 48 characters)")
    entities: dict[str, EntityDef] = {}
    tables: set[str] = set()
    for entity in spec.entities:
        if entity.name in entities:
            problems.append(f"entity {entity.name!r} is declared twice")
        entities[entity.name] = entity
        if entity.table in tables:
            problems.append(f"entity {entity.name!r}: table {entity.table!r} is used by another entity")
        tables.add(entity.table)
    for entity in spec.entities:
        problems.extend(entity_problems(entity, entities))
        for f in entity.fields:
            if f.semantic and not check_vocabulary(f.semantic):
                problems.append(f"entity {entity.name!r}: field {f.name!r} has unknown semantic type {f.semantic!r}")
    names: set[str] = set()
    for tool in spec.tools:
        problems.extend(_tool_problems(tool, entities))
        if tool.name in names:
            problems.append(f"tool {tool.name!r} is declared twice")
        names.add(tool.name)
    return problems


def _tool_problems(tool: ToolDef, entities: dict[str, EntityDef]) -> list[str]:
    where = f"tool {tool.name!r}"
    problems: list[str] = []
    if not TOOL_NAME_PATTERN.match(tool.name):
        problems.append(f"{where}: name must match {TOOL_NAME_PATTERN.pattern}")
    for problem in intent_problems(tool.intent, tool.effect, tool.phrases, tool.parameters.get("properties", {})):
        problems.append(f"{where}: {problem}")
    params = tool.parameters
    if params.get("type") != "object" or not isinstance(params.get("properties", {}), dict):
        problems.append(f"{where}: parameters must be a JSON Schema with type 'object' and 'properties'")
        return problems
    properties = params.get("properties", {})
    behaviour = tool.behaviour
    kind = behaviour.kind
    if kind in WRITE_KINDS and tool.effect != "write":
        problems.append(f"{where}: a {kind} behaviour writes, so effect must be 'write'")
    if kind in READ_KINDS and tool.effect != "read":
        problems.append(f"{where}: a {kind} behaviour only reads, so effect must be 'read'")
    entity = entities.get(behaviour.entity) if behaviour.entity else None
    if kind not in ("custom", "simulated"):
        if behaviour.entity is None:
            problems.append(f"{where}: a {kind} behaviour needs an entity")
            return problems
    if behaviour.entity is not None and entity is None:
        problems.append(f"{where}: behaviour entity {behaviour.entity!r} is not an entity ({', '.join(entities) or 'none'})")
        return problems
    if kind == "transition":
        if behaviour.transition is None:
            problems.append(f"{where}: a transition behaviour needs 'transition'")
        elif entity is not None and entity.field(behaviour.transition.field) is None:
            problems.append(f"{where}: transition field {behaviour.transition.field!r} is not a field of {entity.name!r}")
    if behaviour.marks:
        marked = entities.get(behaviour.marks_entity or "")
        if kind != "create" or marked is None:
            problems.append(f"{where}: 'marks' is for a create, with 'marks_entity' naming an entity")
        elif not any(b.role == "parent" and b.entity == marked.name for b in tool.bindings.values()):
            problems.append(f"{where}: 'marks' changes the {marked.name!r} the record is made under, so a parameter "
                            "must be bound as that parent")
        else:
            problems.extend(f"{where}: 'marks' sets {c!r}, not a column of {marked.name!r}"
                            for c in behaviour.marks if not marked.has_column(c))
    for param, child in (behaviour.children or {}).items():
        target = entities.get(child)
        if kind != "create" or param not in properties or target is None or entity is None or \
                not any(f.ref == entity.name for f in target.fields):
            problems.append(f"{where}: 'children' maps {param!r} to {child!r}: a create's parameter to an entity that "
                            "refers to the created one")
    if kind == "custom" and not behaviour.function:
        problems.append(f"{where}: a custom behaviour needs 'function'")
    for param, binding in tool.bindings.items():
        if param not in properties:
            problems.append(f"{where}: binding for {param!r}, which is not a parameter")
            continue
        problems.extend(_binding_problems(where, param, binding, entity, entities, behaviour))
    if kind in ("link", "unlink") and entity is not None:
        owners = [b for b in tool.bindings.values() if b.role == "parent"]
        if not owners and not behaviour.current:
            problems.append(f"{where}: a {kind} behaviour needs a parameter bound as the parent row")
    if kind in KEYED_KINDS and entity is not None and not behaviour.current and not entity.singleton:
        roles = {b.role for b in tool.bindings.values()}
        if "key" not in roles and not (behaviour.via and "via" in roles) and not (entity.per_parent and "parent" in roles):
            problems.append(f"{where}: a {kind} behaviour needs a parameter bound as its key")
    return problems


def _binding_problems(
    where: str,
    param: str,
    binding: Binding,
    entity: EntityDef | None,
    entities: dict[str, EntityDef],
    behaviour: Behaviour,
) -> list[str]:
    problems: list[str] = []
    role = binding.role
    if role in ("key", "field", "filter") and entity is not None:
        column = binding.column or ("id" if role == "key" else param)
        if not entity.has_column(column):
            problems.append(f"{where}: parameter {param!r} is bound to {column!r}, not a column of {entity.name!r}")
    if binding.op in ("exclude", "include") and binding.value is None:
        problems.append(f"{where}: parameter {param!r} {binding.op}s rows, so its binding needs the 'value' it is about")
    if role == "member" and binding.entity is not None and binding.entity not in entities:
        problems.append(f"{where}: parameter {param!r} names unknown entity {binding.entity!r}")
    if role in ("parent", "via"):
        target = entities.get(binding.entity or "")
        if target is None:
            problems.append(f"{where}: parameter {param!r} names unknown entity {binding.entity!r}")
        elif binding.lookup and binding.lookup != "id" and target.field(binding.lookup) is None:
            problems.append(f"{where}: parameter {param!r} looks up {binding.lookup!r}, not a column of {target.name!r}")
        if role == "parent" and entity is not None and binding.column and entity.field(binding.column) is None:
            problems.append(f"{where}: parameter {param!r} stores into {binding.column!r}, not a column of {entity.name!r}")
        if role == "via" and target is not None and behaviour.via and target.field(behaviour.via) is None:
            problems.append(f"{where}: via field {behaviour.via!r} is not a column of {target.name!r}")
    return problems
