"""What a service's documented surface says, read without the planner: routes, resources, rows and pairs.

The product invariants (``invariants.py``) must be able to disagree with the planner, so they read the
tools as the product documents them: the HTTP path (``POST /files/{file_id}/comments`` adds a comment
to a file; ``POST /invoices/{invoice}/pay`` acts on an invoice) or the RPC method
(``conversations.invite`` acts on a conversation), and each parameter's name and description. The
planner's bindings are consulted only as a claim to test (a parameter it binds to an entity's id
must accept the ids that entity's create returns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from generator.naming import is_version_segment, singular, words
from generator.planner.lexicon import NAMESPACE_WORDS, squash, verb_class
from generator.routes import resource_keys
from generator.spec import ServiceSpec, ToolDef

_EXTENSION = re.compile(r"\.(json|xml|csv|txt|html|yaml)$", re.I)
#: Verbs whose action really deletes the row it names (``/x/{id}/delete``); ``clear``, ``leave``,
#: ``kick``, ``trash``, ``detach`` and the like act on the row and keep it.
DELETING_VERBS = frozenset({"delete", "remove", "destroy", "purge", "erase", "discard", "permanently"})
#: RPC verbs that read.
READ_VERBS = frozenset({"get", "list", "info", "members", "history", "replies", "read", "view", "show", "fetch",
                        "search", "lookup", "retrieve", "find", "query", "status", "details", "count"})
#: Verbs that change who belongs to a row (a channel's members, a project's collaborators).
MEMBERSHIP_VERBS = frozenset({"invite", "join", "leave", "kick", "add", "remove", "subscribe", "unsubscribe",
                              "enroll", "unenroll", "assign", "unassign"})
#: Other words that make ``/x/{id}/<word>`` an action on x rather than a sub-resource.
ACTION_WORDS = frozenset({"pay", "refund", "clear", "trash", "untrash", "void", "capture", "finalize", "send",
                          "cancel", "close", "reopen", "restore", "merge", "copy", "move", "duplicate", "contest",
                          "transition", "transitions"})


@dataclass(frozen=True)
class Step:
    literal: str  # a collection or action segment, as written
    params: tuple[str, ...] = ()  # path parameters right after it


@dataclass(frozen=True)
class Route:
    """One tool as its documentation addresses it."""

    tool: str
    method: str  # "GET"... for REST; "" for RPC and MCP names
    steps: tuple[Step, ...]
    rpc: bool = False

    @property
    def reads(self) -> bool:
        if self.rpc:
            last = words(self.steps[-1].literal) if self.steps else []
            return bool(last) and last[0] in READ_VERBS
        return self.method == "GET"

    @property
    def action(self) -> str | None:
        """The verb of ``/x/{id}/verb`` (or ``x.verb``), when the route ends in an action on a row."""
        if len(self.steps) < 2 or self.steps[-1].params:
            return None
        if not self.rpc and not self.steps[-2].params:
            return None
        verb = words(self.steps[-1].literal)[:1]
        if not verb:
            return None
        if self.rpc or verb_class(verb[0]) is not None or verb[0] in MEMBERSHIP_VERBS or verb[0] in ACTION_WORDS:
            return verb[0]
        return None

    @property
    def keyed(self) -> Step | None:
        """The step naming the row the route acts on (``/x/{id}`` or ``/x/{id}/verb``), if any."""
        if self.rpc:
            return self.steps[-2] if len(self.steps) >= 2 else None
        if self.steps and self.steps[-1].params:
            return self.steps[-1]
        if self.action is not None:
            return self.steps[-2]
        return None

    @property
    def collection(self) -> Step | None:
        """The collection step of ``/x/{id}/ys`` or ``/ys`` (a list or a create), if the route ends in one."""
        if self.rpc or not self.steps or self.steps[-1].params or self.action is not None:
            return None
        return self.steps[-1]

    @property
    def parents(self) -> tuple[Step, ...]:
        """Keyed steps above the row or collection the route ends in."""
        end = len(self.steps) - (2 if self.action is not None else 1)
        return tuple(s for s in self.steps[:end] if s.params)

    @property
    def prefix(self) -> tuple[str, ...]:
        """An RPC method's resource: its dotted name without the method (``usergroups.users``)."""
        return tuple(squash(s.literal) for s in self.steps[:-1])

    @property
    def verb(self) -> str | None:
        """An RPC method's verb (``invite`` of ``conversations.invite``)."""
        parts = words(self.steps[-1].literal) if self.rpc and self.steps else []
        return parts[0] if parts else None

    @property
    def path(self) -> tuple[str, ...]:
        """The route's shape without parameter names (for pairing tools on the same path)."""
        out: list[str] = []
        for step in self.steps:
            out.append(squash(step.literal))
            out.extend("{}" for _ in step.params)
        return tuple(out)


def _names_the_collection(action: Route, read: Route) -> bool:
    """``addTag`` names the collection ``tags``: the action's noun is the read's last segment."""
    noun = words(action.steps[-1].literal)[1:]
    last = words(read.steps[-1].literal) if read.steps and not read.steps[-1].params else []
    return bool(noun) and bool(last) and singular("_".join(noun)) == singular("_".join(last))


def route_of(tool: ToolDef) -> Route | None:
    """The route of ``tool``: its documented HTTP path, or its dotted RPC name; None for plain names."""
    if tool.http is not None:
        path = tool.http.path.split("?")[0]
        if "." in path.rsplit("/", 1)[-1] and "{" not in path.rsplit("/", 1)[-1] and not _EXTENSION.search(path):
            return _rpc_route(tool, path.rsplit("/", 1)[-1])
        return _rest_route(tool, path, tool.http.method.upper())
    source = tool.source or ""
    if "." in source and " " not in source:
        return _rpc_route(tool, source)
    return None


def documented_write(tool: ToolDef) -> str | None:
    """What a write's documentation says it does to an existing row: ``update``, ``delete``, ``action``; None
    for a create, a send, or a write that names no row."""
    route = route_of(tool)
    if route is not None and route.action is not None:
        verb = route.action
        cls = verb_class(verb)
        if (verb in DELETING_VERBS or cls == "delete") and len(words(route.steps[-1].literal)) > 1:
            return "action"  # Asana's removeFollowers takes followers out of the task; the task stays
        if verb in DELETING_VERBS or cls == "delete":
            return "delete"
        if cls in ("create", "send", "list", "get") or verb in MEMBERSHIP_VERBS:
            return None
        return "update" if cls == "update" else "action"
    method = tool.http.method.upper() if tool.http else ""
    if method == "DELETE":
        return "delete"
    if method in ("PUT", "PATCH") and route is not None and route.keyed is not None:
        return "update"
    last = words((tool.http.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]) if tool.http else tool.name)[:1]
    if last and "{" not in last[0]:
        cls = verb_class(last[0])
        if cls in ("update", "delete"):
            return cls
    return None


def _rest_route(tool: ToolDef, path: str, method: str) -> Route:
    segments = [_EXTENSION.sub("", s) for s in path.split("/") if s]
    versions = [i for i, s in enumerate(segments[:4]) if is_version_segment(s)]
    if versions:
        segments = segments[versions[-1] + 1 :]  # "/gmail/v1/users/...": what follows the version
    steps: list[Step] = []
    properties = tool.parameters.get("properties", {})
    for index, segment in enumerate(segments):
        names = re.findall(r"\{([^}]+)\}", segment)
        if names:
            params = tuple(_param(n, properties) for n in names)
            literal = segment.split("{")[0].strip(":")
            action = segment.split("}")[-1].lstrip(":")
            if literal:
                steps.append(Step(literal, params))
            elif steps:
                steps[-1] = Step(steps[-1].literal, steps[-1].params + params)
            else:
                steps.append(Step("", params))
            if action:
                steps.append(Step(action))
            continue
        following = segments[index + 1] if index + 1 < len(segments) else ""
        if not steps and segment.lower() in NAMESPACE_WORDS and following and "{" not in following:
            continue  # "/api/users", but "/Services/{Sid}" names services
        for piece in segment.split(":"):
            if piece:
                steps.append(Step(piece))
    return Route(tool.name, method, tuple(steps))


def _rpc_route(tool: ToolDef, name: str) -> Route:
    pieces = [p for p in name.split(".") if p]
    return Route(tool.name, "", tuple(Step(p) for p in pieces), rpc=True)


def _param(name: str, properties: dict[str, Any]) -> str:
    """A path parameter as the tool's schema names it (the planner made names ``[A-Za-z0-9_]``)."""
    if name in properties:
        return name
    wanted = squash(name)
    return next((p for p in properties if squash(p) == wanted), name)


@dataclass
class Surface:
    """A service's routes, and which of its entities each route's segments name."""

    spec: ServiceSpec
    routes: dict[str, Route] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for tool in self.spec.tools:
            route = route_of(tool)
            if route is not None and route.steps:
                self.routes[tool.name] = route

    @cached_property
    def _entity_words(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for entity in self.spec.entities:
            out.setdefault(squash(entity.name), entity.name)
            out.setdefault(squash(entity.table), entity.name)
        return out

    def entity_of(self, literal: str) -> str | None:
        """The entity a path segment names (``refunds`` -> ``refund``, ``Services`` -> ``service``)."""
        parts = words(literal)
        if not parts:
            return None
        for candidate in ("_".join(parts), "_".join(parts[-2:]), parts[-1]):
            for form in (candidate, singular(candidate)):
                found = self._entity_words.get(squash(form))
                if found is not None:
                    return found
        return None

    def row_entity(self, tool: str) -> str | None:
        """The entity of the row a route acts on (``/x/{id}``, ``/x/{id}/verb``, ``x.verb``)."""
        route = self.routes.get(tool)
        if route is None or route.keyed is None:
            return None
        return self.entity_of(route.keyed.literal)

    def row_param(self, tool: str) -> str | None:
        """The parameter that names the row a route acts on: its path key, or the resource's RPC key."""
        route = self.routes.get(tool)
        if route is None or route.keyed is None:
            return None
        if route.keyed.params:
            return route.keyed.params[-1]
        if route.rpc:
            key = self.rpc_keys.get(squash(route.keyed.literal))
            properties = self.spec.tool(tool).parameters.get("properties", {})
            return key if key in properties else None
        return None

    @cached_property
    def rpc_keys(self) -> dict[str, str]:
        """Per RPC resource (``conversations``), the parameter its methods name a row by (``channel``)."""
        return resource_keys(
            ([s.literal for s in route.steps], self.spec.tool(route.tool).parameters.get("properties", {}))
            for route in self.routes.values() if route.rpc)

    def reads_of(self, tool: str) -> list[str]:
        """Read tools of the same resource as ``tool``: the same path read with GET, the row the path acts
        on, the collection a create adds to (``POST /comments`` and ``GET /files/{id}/comments``); for RPC,
        the reads of the same resource (``conversations.*``)."""
        route = self.routes.get(tool)
        if route is None:
            return []
        out: list[str] = []
        for name, other in self.routes.items():
            if name == tool or not other.reads or other.rpc != route.rpc:
                continue
            if route.rpc:
                if other.prefix == route.prefix:
                    out.append(name)
                continue
            if other.path == route.path or (route.action is not None and other.path == route.path[:-1]):
                out.append(name)
            elif route.action is not None and other.path[:-1] == route.path[:-1] and _names_the_collection(route, other):
                out.append(name)  # POST /tasks/{id}/addTag; GET /tasks/{id}/tags
            elif route.collection is not None and other.collection is not None and len(other.steps) >= 2 and \
                    other.steps[-2].params and squash(other.collection.literal) == squash(route.collection.literal):
                out.append(name)  # POST /comments; GET /files/{id}/comments: the same collection, under a row
        return out

    def path_id_params(self, entity: str) -> set[tuple[str, str]]:
        """(tool, parameter) for every path key right after a segment naming ``entity``."""
        out: set[tuple[str, str]] = set()
        for name, route in self.routes.items():
            if route.rpc:
                continue
            for step in route.steps:
                if step.params and self.entity_of(step.literal) == entity:
                    out.add((name, step.params[-1]))
        return out

    def parents_of(self, entity: str) -> set[str]:
        """Entities under whose rows the surface lists ``entity`` (``/charges/{charge}/refunds``: charge)."""
        out: set[str] = set()
        for route in self.routes.values():
            step = route.collection
            if step is None or self.entity_of(step.literal) != entity or len(route.steps) < 2:
                continue
            above = route.steps[-2]
            parent = self.entity_of(above.literal) if above.params else None
            if parent is not None and parent != entity:
                out.add(parent)
        return out

    def id_params(self, entity: str) -> list[tuple[str, str]]:
        """(tool, parameter) for every parameter the surface says carries an id of ``entity``.

        A path key right after a segment naming the entity (``/refunds/{refund}``), or a scalar
        parameter named like it (``refund``, ``refund_id``, ``refundId``)."""
        named = {squash(entity), squash(entity) + "id"}
        out: list[tuple[str, str]] = []
        for tool in self.spec.tools:
            properties = tool.parameters.get("properties", {})
            route = self.routes.get(tool.name)
            seen: set[str] = set()
            if route is not None and not route.rpc:
                for step in route.steps:
                    if step.params and self.entity_of(step.literal) == entity:
                        seen.add(step.params[-1])
            for param, schema in properties.items():
                if isinstance(schema, dict) and schema.get("type") in ("string", "integer") and squash(param) in named:
                    seen.add(param)
            out.extend((tool.name, p) for p in sorted(seen) if p in properties)
        return out


def declared_enum(spec: ServiceSpec, entity: str, column: str, surface: Surface) -> list[Any] | None:
    """The values the product documents for ``entity.column``: every enum on a parameter named like the
    column in a tool of that entity (its list filter, its create or update body). None when none is."""
    values: list[Any] = []
    found = False
    for tool in spec.tools:
        route = surface.routes.get(tool.name)
        touches = tool.behaviour.entity == entity or (route is not None and any(
            surface.entity_of(s.literal) == entity for s in route.steps[-2:]))
        if not touches:
            continue
        for param, schema in tool.parameters.get("properties", {}).items():
            if squash(param) != squash(column) or not isinstance(schema, dict):
                continue
            enum = schema.get("enum") or (schema.get("items") or {}).get("enum")
            if isinstance(enum, list) and enum:
                found = True
                values.extend(v for v in enum if v not in values and v is not None)
    return values if found else None
