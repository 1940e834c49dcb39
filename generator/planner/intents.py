"""What one tool does, read from its REST path and verb or from its name: an ``Intent``.

REST tools (``POST /boards/{idBoard}/lists``) say it in the path: collections, keys, sub-resources
and action segments (``/charges/{id}/capture``). RPC tools (``chat.postMessage``, MCP names like
``list_open_issues`` or ``github_create_an_issue``) say it in their name: a verb and a noun phrase.
An intent the planner cannot read becomes ``simulated`` with the reason why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from generator.naming import identifier, is_plural, is_version_segment, singular, snake, words
from generator.planner.lexicon import (
    CURRENT_WORDS,
    NAMESPACE_WORDS,
    PERSON_ENTITIES,
    PREPOSITIONS,
    SEARCH_PARAMS,
    STOP_WORDS,
    TRANSITIONS,
    squash,
    verb_class,
)

#: Actions on a row that create a record of their own (the refund of a charge, the comment on an issue).
CREATING_ACTIONS = {"refund": "refund", "comment": "comment", "reply": "reply", "review": "review", "note": "note",
                    "rate": "rating", "vote": "vote", "pay": "payment", "dispute": "dispute", "invite": "invitation",
                    "payout": "payout", "credit": "credit_note", "transfer": "transfer", "reverse": "reversal"}
#: Verbs that add the caller or others to a row, or take them out of it (a channel's members).
MEMBERSHIP = {"join": "link", "invite": "link", "leave": "unlink", "kick": "unlink"}
#: Parameter names that carry the members of a membership action.
_MEMBER_WORDS = frozenset({"user", "users", "userid", "userids", "member", "members", "memberid", "memberids",
                           "invitee", "invitees", "email", "emails", "participant", "participants"})
#: Sub-resources that are a view of their parent row (``GET /jobs/{id}/status``).
VIEW_WORDS = frozenset({"status", "state", "details", "detail", "info", "summary", "overview", "metadata",
                        "properties", "attributes", "full", "preview", "content", "contents", "raw"})
#: Nouns made from generic path parameters: they name no resource.
_GENERIC_NOUNS = frozenset({"item", "name", "parent", "resource", "path", "x"})
#: Path parameters that choose a view, not a row (``/actions/{id}/board/{field}``).
_PATH_OPTIONS = frozenset({"field", "fields", "format", "filter", "view", "display"})
_EXTENSION = re.compile(r"\.(json|xml|csv|txt|html|yaml|atom|rss)$", re.I)


@dataclass
class PreparedTool:
    """A tool after name and schema normalisation, ready for intent analysis."""

    name: str
    source: str
    description: str
    schema: dict[str, Any]
    method: str | None = None
    path: str | None = None
    read_only: bool | None = None
    output_schema: Any = None
    renamed: dict[str, str] = field(default_factory=dict)  # new -> original
    notes: list[str] = field(default_factory=list)

    @property
    def properties(self) -> dict[str, Any]:
        return self.schema.get("properties", {})

    @property
    def required(self) -> list[str]:
        return list(self.schema.get("required", []))

    def param_for(self, original: str) -> str | None:
        """The (normalised) parameter that came from the source's ``original`` name."""
        for new, old in self.renamed.items():
            if old == original:
                return new
        return original if original in self.properties else None


@dataclass
class Step:
    noun: str
    keys: list[str] = field(default_factory=list)
    current: bool = False
    raw: str = ""


@dataclass
class Intent:
    kind: str  # create/get/list/search/update/delete/transition/send/simulated
    entity: str | None = None
    keys: dict[str, str] = field(default_factory=dict)  # param -> "id" or a natural-key column
    parents: list[tuple[str, list[str]]] = field(default_factory=list)  # (entity, params), nearest first
    via: tuple[str, list[str]] | None = None  # sub-resource of a keyed row: decided once entities are known
    current: bool = False
    current_parent: str | None = None  # /me/...: the owner is the current row of this entity
    singleton: bool = False
    verb: str | None = None
    toggle_off: bool = False  # DELETE /posts/{id}/like: the inverse of the verb's transition
    setter: tuple[str, str] | None = None  # PUT /cards/{id}/closed {value}: (parameter, column) it sets
    fields: dict[str, str] = field(default_factory=dict)  # param -> column a create writes (a link's other end)
    members: list[str] = field(default_factory=list)  # link/unlink: the parameters naming the members
    member_entity: str | None = None  # link/unlink: the entity members are rows of (default: users)
    action: tuple[str, str, list[str]] | None = None  # a creating action (verb, row noun, keys): pay an invoice
    marks: tuple[str, str] | None = None  # a creating action's row and the flag it sets on it (order, "paid")
    reason: str | None = None
    style: str = "rest"

    @staticmethod
    def simulated(reason: str, entity: str | None = None, style: str = "rest") -> Intent:
        return Intent(kind="simulated", entity=entity, reason=reason, style=style)


def analyse(tool: PreparedTool, provider_words: frozenset[str], collections: frozenset[str] = frozenset()) -> Intent:
    """The intent of ``tool``; ``provider_words`` are name prefixes to ignore (``github_...``); ``collections``
    are the path segments the service's paths follow with a key (``issue`` of Jira's ``/issue/{id}``)."""
    if tool.method and tool.path:
        literal = [s for s in tool.path.split("?")[0].split("/") if s and "{" not in s]
        if any("." in _EXTENSION.sub("", s) for s in literal[-1:]):
            tokens, tail_start = _rpc_tokens(literal[-1], literal[:-1])
            return _name_intent(tool, tokens, provider_words, tail_start)
        return _rest_intent(tool, collections)
    return _name_intent(tool, words(tool.source or tool.name), provider_words, None)


# -- REST ------------------------------------------------------------------------------------------


def _steps(tool: PreparedTool) -> list[Step]:
    steps: list[Step] = []
    leading = True
    skipped: list[str] = []
    for raw_segment in tool.path.split("?")[0].split("/"):  # type: ignore[union-attr]
        segment = _EXTENSION.sub("", raw_segment.strip())
        if not segment:
            continue
        if "{" in segment:
            params = [tool.param_for(p.lstrip("+").split(":")[0]) for p in re.findall(r"\{([^}]+)\}", segment)]
            params = [p for p in params if p and squash(p) not in _PATH_OPTIONS]
            if ":" in segment.split("}")[-1]:  # google style "{name}:cancel"
                action = segment.split("}")[-1].split(":", 1)[1]
                _attach_keys(steps, params)
                steps.append(Step(noun="", raw=action))
                continue
            if not steps and skipped:  # "/v1/Services/{Sid}": the namespace word was the resource
                steps.append(Step(noun=_noun(skipped[-1]) or singular(identifier(skipped[-1])), raw=skipped[-1]))
            _attach_keys(steps, params)
            leading = False
            continue
        if ":" in segment:  # "/v1/jobs:batchGet" style
            base, _, action = segment.partition(":")
            if base:
                steps.append(Step(noun=_noun(base), raw=base))
            steps.append(Step(noun="", raw=action))
            continue
        lowered = segment.lower()
        if is_version_segment(lowered) or (leading and lowered in NAMESPACE_WORDS):
            if not is_version_segment(lowered):
                skipped.append(segment)
            continue
        if lowered in CURRENT_WORDS or lowered == "@me":
            if steps and not steps[-1].keys:
                steps[-1].current = True
            else:
                steps.append(Step(noun="user", current=True, raw=segment))
            leading = False
            continue
        leading = False
        steps.append(Step(noun=_noun(segment), raw=segment))
    if not steps and skipped:  # "/services": the namespace word is the resource
        steps.append(Step(noun=_noun(skipped[-1]) or singular(identifier(skipped[-1])), raw=skipped[-1]))
    return steps


def _attach_keys(steps: list[Step], params: list[str]) -> None:
    if not params:
        return
    if steps and not steps[-1].current:
        steps[-1].keys.extend(params)
    else:
        noun = re.sub(r"_?(sid|id|name|key|slug|uuid)$", "", snake(params[0])) or "item"
        steps.append(Step(noun=singular(identifier(noun)), keys=list(params), raw=params[0]))


def _noun(segment: str) -> str:
    parts = [w for w in words(segment) if w not in STOP_WORDS]
    if not parts:
        return ""
    return singular(identifier("_".join(parts[-2:])))


def _action(step: Step, method: str) -> tuple[str, str, list[str]] | None:
    """(verb, class, noun words) when a literal segment is an action, not a collection."""
    parts = words(step.raw)
    if not parts:
        return None
    verb = parts[0]
    kind = verb_class(verb) or ("create" if verb in CREATING_ACTIONS and method == "POST" else None)
    if kind is None or (len(parts) == 1 and is_plural(verb)):
        return None
    if method == "GET" and kind not in ("list", "get"):
        return None
    rest = [w for w in parts[1:] if w not in STOP_WORDS]
    if len(parts) == 1 and kind in ("create", "update") and method != "POST":
        return None  # "/users/{id}/schedule" read with GET is a sub-resource, not an action
    return verb, kind, rest


def _relating_action(tool: PreparedTool, method: str, steps: list[Step]) -> Intent | None:
    """``POST /consent_forms/{id}/apply_to_appointment``: an action relating the row to a row of another kind (a
    verb, then ``to``/``from`` and that kind). When no parameter names that row, which one it relates to cannot be
    told: simulated, never a create of a ``to_appointment`` row."""
    parts = words(steps[-1].raw)
    if method not in ("POST", "PUT") or len(steps) < 2 or not steps[-2].keys or len(parts) < 3 \
            or parts[1] not in ("to", "from"):
        return None
    noun = singular("_".join(parts[2:]))
    named = {squash(noun), squash(noun) + "id", squash(noun) + "ids", squash(noun) + "s"}
    if any(squash(p) in named for p in tool.properties):
        return None
    return Intent.simulated(f"{steps[-1].raw!r} relates the {steps[-2].noun} to a {noun.replace('_', ' ')}, but no "
                            f"parameter says which {noun.replace('_', ' ')}")


def keyed_segments(paths: list[str]) -> frozenset[str]:
    """Path segments followed by a key somewhere in a service (``issue`` in ``/issue/{issueIdOrKey}``): they name
    collections, even when singular (Jira's ``/issue``, ``/issue/{id}/comment``)."""
    found: set[str] = set()
    for path in paths:
        segments = [s for s in path.split("?")[0].split("/") if s]
        for here, following in zip(segments, segments[1:]):
            if "{" not in here and following.startswith("{"):
                found.add(squash(_EXTENSION.sub("", here)))
    return frozenset(found)


def _rest_intent(tool: PreparedTool, collections: frozenset[str] = frozenset()) -> Intent:
    method = (tool.method or "").upper()
    steps = _steps(tool)
    if not steps:
        return Intent.simulated("the path names no resource")
    last = steps[-1]
    keyed_before = [s for s in steps[:-1] if (s.keys or s.current) and s.noun]
    parents = [(s.noun, s.keys) for s in reversed(keyed_before) if s.keys]
    current_parent = next((s.noun for s in reversed(steps[:-1]) if s.current and s.noun), None)

    if last.keys and last.noun in _GENERIC_NOUNS and len(steps) == 1:
        # "GET /v1/{name}" (Google resource names): the path says nothing, the operation's name does
        named = _name_intent(tool, words(tool.source or tool.name), frozenset(), None)
        if named.kind != "simulated":
            named.style = "rest"
            return named
    if last.keys and last.noun:
        kind = {"GET": "get", "PUT": "update", "PATCH": "update", "POST": "update", "DELETE": "delete"}.get(method)
        if kind is None:
            return Intent.simulated(f"HTTP {method} on one row")
        # a path segment after the row's id that picks one of a few documented values and has a default
        # (Storecove's /purchase_invoices/{guid}/{packaging}/{package_version}) chooses how the row is
        # presented: no row is named by its value, so it is an option, not part of the key
        named = [last.keys[0], *(k for k in last.keys[1:] if not _presentation_choice(tool.properties.get(k, {})))]
        if len(named) == 1:
            keys = {named[0]: "id"}
        else:
            keys = {k: k for k in named}
        return Intent(kind=kind, entity=last.noun, keys=keys, parents=parents, current_parent=current_parent)
    if last.current and last.noun:
        kind = {"GET": "get", "PUT": "update", "PATCH": "update", "POST": "update", "DELETE": "delete"}.get(method)
        if kind is None:
            return Intent.simulated(f"HTTP {method} on the current {last.noun}")
        return Intent(kind=kind, entity=last.noun, current=True, parents=parents)

    setter = _setter(tool, method, steps, parents, current_parent)
    if setter is not None:
        return setter
    related = _relating_action(tool, method, steps)
    if related is not None:
        return related
    action = _action(last, method) if squash(last.raw) not in collections else None  # POST /issue creates an issue
    if action is not None:
        return _rest_action(tool, method, steps, action, parents, current_parent)
    prev = steps[-2] if len(steps) >= 2 else None
    prev_keyed = prev is not None and bool(prev.noun) and bool(prev.keys or prev.current)
    if not last.noun:
        if prev_keyed and method in ("GET", "PUT", "PATCH", "POST"):
            assert prev is not None  # "/artifacts/{id}/meta": a view of the row
            kind = "get" if method == "GET" else "update"
            return _on_row(prev, kind, parents[1:] if prev.keys else parents, current_parent)
        return Intent.simulated("the path ends in an action the planner does not know")
    if last.noun in VIEW_WORDS and prev_keyed:
        assert prev is not None
        kind = {"GET": "get", "PUT": "update", "PATCH": "update"}.get(method)
        if kind is None:
            return Intent.simulated(f"HTTP {method} on the {last.noun} of a {prev.noun}")
        return _on_row(prev, kind, parents[1:] if prev.keys else parents, current_parent)
    last_words = words(last.raw)
    plural = bool(last_words) and (is_plural(last_words[-1]) or (last_words[-1] in ("list", "collection") and len(last_words) > 1))
    if plural or method == "GET" and not prev_keyed and _has_search(tool):
        named_row = _named_row_param(tool, last.noun) if method == "GET" else None
        if named_row is not None:  # "GET /resources?resource=<identifier>": one row, named by the identifier
            return Intent(kind="get", entity=last.noun, keys={named_row: "id"}, parents=parents,
                          current_parent=current_parent)
        if method == "GET":
            kind = "search" if _has_search(tool) else "list"
            return Intent(kind=kind, entity=last.noun, parents=parents, current_parent=current_parent)
        if method == "POST":
            return Intent(kind="create", entity=last.noun, parents=parents, current_parent=current_parent)
        key = _id_param(tool, last.noun) or _identifier_param(tool, "delete" if method == "DELETE" else "update")
        if key in {k for _, keys in parents for k in keys} and _lists_rows_by_id(tool):
            key = None  # PATCH /budgets/{budget_id}/transactions {transactions: [{id, ...}]}: the budget's key names
            # no transaction; the rows are the listed ones (a bulk write)
        if key is not None and method in ("PUT", "PATCH", "DELETE"):  # "PUT /users {id, ...}"
            return Intent(kind="delete" if method == "DELETE" else "update", entity=last.noun,
                          keys={key: "id" if _id_param(tool, last.noun) else key}, parents=parents,
                          current_parent=current_parent)
        return Intent.simulated(f"HTTP {method} on a whole collection of {last.noun} (a bulk operation)")
    # A singular noun: a sub-resource of a keyed row, or a singleton, or a collection named in the singular.
    if squash(last.raw) in collections and method in ("GET", "POST"):  # Jira's /issue/{id}/comment lists comments
        if method == "POST":
            return Intent(kind="create", entity=last.noun, parents=parents, current_parent=current_parent)
        return Intent(kind="search" if _has_search(tool) else "list", entity=last.noun, parents=parents,
                      current_parent=current_parent)
    if prev_keyed:
        assert prev is not None
        kind = {"GET": "get", "PUT": "update", "PATCH": "update", "POST": "create", "DELETE": "delete"}.get(method)
        if kind is None:
            return Intent.simulated(f"HTTP {method} on the {last.noun} of a {prev.noun}")
        if kind == "create":
            return Intent(kind="create", entity=last.noun, parents=parents, current_parent=current_parent)
        return Intent(kind=kind, entity=last.noun, via=(prev.noun, list(prev.keys)), parents=parents[1:] if prev.keys else parents,
                      current_parent=current_parent if not prev.current else prev.noun)
    if method == "POST":
        return Intent(kind="create", entity=last.noun, parents=parents, current_parent=current_parent)
    if method in ("PUT", "PATCH"):
        key = _id_param(tool, last.noun)
        if key:
            return Intent(kind="update", entity=last.noun, keys={key: "id"}, parents=parents, current_parent=current_parent)
        if not parents and _says_upsert(tool):  # "PUT /patient: create a new patient or update an existing one"
            return Intent.simulated(f"HTTP {method} on {last.raw!r} is an upsert: it creates or updates the row "
                                    "its body matches, never the current one")
        return Intent(kind="update", entity=last.noun, singleton=True, parents=parents)
    if method == "GET":
        key = _id_param(tool, last.noun, required_only=True)
        if key:
            return Intent(kind="get", entity=last.noun, keys={key: "id"}, parents=parents, current_parent=current_parent)
        return Intent(kind="get", entity=last.noun, singleton=True, parents=parents)
    if method == "DELETE":
        key = _id_param(tool, last.noun, required_only=True)
        if key:
            return Intent(kind="delete", entity=last.noun, keys={key: "id"}, parents=parents, current_parent=current_parent)
    return Intent.simulated(f"HTTP {method} on {last.raw!r} without a key")


def _setter(
    tool: PreparedTool, method: str, steps: list[Step], parents: list[tuple[str, list[str]]], current_parent: str | None
) -> Intent | None:
    """``PUT /cards/{id}/prefs/background`` with one ``value``: sets one attribute of the keyed row."""
    if method not in ("PUT", "PATCH", "POST") or "value" not in tool.properties:
        return None
    keyed = max((i for i, s in enumerate(steps) if s.keys or s.current), default=-1)
    if keyed < 0 or keyed == len(steps) - 1:
        return None
    tail = steps[keyed + 1 :]
    if any(s.keys or s.current or not words(s.raw) for s in tail) or is_plural(words(tail[-1].raw)[-1]):
        return None
    if len(tool.properties) - len(steps[keyed].keys) - sum(len(k) for _, k in parents[1:]) > 1:
        return None
    column = "_".join(snake(s.raw) for s in tail)[:60] or "value"
    owner = steps[keyed]
    intent = _on_row(owner, "update", parents[1:] if owner.keys else parents, current_parent)
    intent.setter = ("value", column if column[0].isalpha() else f"f_{column}")
    return intent


def _on_row(step: Step, kind: str, parents: list[tuple[str, list[str]]], current_parent: str | None) -> Intent:
    if step.keys:
        keys = {step.keys[0]: "id"} if len(step.keys) == 1 else {k: k for k in step.keys}
        return Intent(kind=kind, entity=step.noun, keys=keys, parents=parents, current_parent=current_parent)
    return Intent(kind=kind, entity=step.noun, current=True, parents=parents)


def _rest_action(
    tool: PreparedTool,
    method: str,
    steps: list[Step],
    action: tuple[str, str, list[str]],
    parents: list[tuple[str, list[str]]],
    current_parent: str | None,
) -> Intent:
    verb, kind, rest = action
    noun_hint = singular(identifier("_".join(rest[-2:]))) if rest else None
    prev = steps[-2] if len(steps) >= 2 else None
    if prev is not None and prev.noun and (prev.keys or prev.current):
        row_parents = parents[1:] if prev.keys else parents
        if verb == "mark" and rest:
            intent = _on_row(prev, "transition", row_parents, current_parent)
            intent.verb = rest[-1] if rest[-1] in TRANSITIONS else f"mark_{rest[-1]}"
            return intent
        if verb in MEMBERSHIP and prev.keys:
            return membership(tool, verb, prev.noun, prev.keys[:1])
        if verb in ("add", "remove") and rest and prev.keys:  # POST /tasks/{id}/addTag {tag}: tag the task
            noun = singular(identifier("_".join(rest)))
            named = {squash(noun), squash(noun) + "id", squash(noun) + "ids", squash(noun) + "s", squash(noun) + "gid"}
            member = [p for p in tool.properties if squash(p) in named and p not in prev.keys]
            if member:  # followers, members, assignees are people: the service's users
                target = "user" if noun.rsplit("_", 1)[-1] in PERSON_ENTITIES | {"follower"} else noun
                return Intent(kind="link" if verb == "add" else "unlink", entity=f"{prev.noun}_{noun}",
                              parents=[(prev.noun, prev.keys[:1])], members=member[:1], verb=verb, member_entity=target)
        if verb in CREATING_ACTIONS and not rest:
            # POST /charges/{id}/refund: a refund of the charge is created; the charge is not rewritten
            owner = [(prev.noun, prev.keys)] + row_parents if prev.keys else row_parents
            return Intent(kind="create", entity=CREATING_ACTIONS[verb], parents=owner,
                          current_parent=prev.noun if prev.current else current_parent,
                          action=(verb, prev.noun, list(prev.keys)))
        if kind == "transition":
            intent = _on_row(prev, "transition", row_parents, current_parent)
            intent.verb = verb
            intent.toggle_off = method == "DELETE"
            return intent
        if kind == "get":
            return _on_row(prev, "get", row_parents, current_parent)
        if kind == "update":
            return _on_row(prev, "update", row_parents, current_parent)
        if kind == "delete" and not rest:
            return _on_row(prev, "delete", row_parents, current_parent)
        if kind in ("send", "create") and noun_hint:
            owner = [(prev.noun, prev.keys)] + row_parents if prev.keys else row_parents
            return Intent(kind="send" if kind == "send" else "create", entity=noun_hint, parents=owner,
                          current_parent=prev.noun if prev.current else current_parent)
        if kind == "send":
            intent = _on_row(prev, "transition", row_parents, current_parent)
            intent.verb = "send"
            return intent
        if kind == "list" and noun_hint:
            owner = [(prev.noun, prev.keys)] + row_parents if prev.keys else row_parents
            return Intent(kind="search" if _has_search(tool) else "list", entity=noun_hint, parents=owner)
        return Intent.simulated(f"the action {verb!r} on a {prev.noun} is not a state change the planner knows")
    tokens = (words(prev.raw) if prev is not None and prev.noun else []) + words(step_raw(steps[-1]))
    named = _name_intent(tool, tokens, frozenset(), tail_start=len(tokens) - len(words(step_raw(steps[-1]))))
    if named.kind != "simulated":
        named.style = "rest"
        if not named.parents:
            named.parents = parents
        return named
    target = noun_hint or (prev.noun if prev is not None else None)
    if not target:
        return Intent.simulated(f"the action {verb!r} names no resource")
    if kind == "list" or (kind == "get" and method in ("GET", "POST") and target and not noun_hint):
        return Intent(kind="search" if (_has_search(tool) or verb in ("search", "find", "query")) else "list",
                      entity=target, parents=parents, current_parent=current_parent)
    if kind == "send" and method == "POST":
        return Intent(kind="send", entity=target, parents=parents, current_parent=current_parent)
    if kind == "create" and method in ("POST", "PUT"):
        return Intent(kind="create", entity=target, parents=parents, current_parent=current_parent)
    return Intent.simulated(f"the action {verb!r} on a collection is not something the planner can express")


def step_raw(step: Step) -> str:
    return step.raw


def _has_search(tool: PreparedTool) -> bool:
    return any(squash(p) in SEARCH_PARAMS for p in tool.properties)


_UPSERT = re.compile(r"\bupsert|\b(create|insert|add)\s+(an?\s+)?(new\s+)?(\w+\s+)?or\s+(update|replace)", re.I)


def _says_upsert(tool: PreparedTool) -> bool:
    """Whether a write creates or updates, by what its body matches (an upsert)."""
    return bool(_UPSERT.search(" ".join(str(x) for x in (tool.name, tool.source, tool.description) if x)))


def _lists_rows_by_id(tool: PreparedTool) -> bool:
    """Whether the body lists rows, each named by its ``id`` (``transactions: [{id, memo}, ...]``)."""
    for schema in tool.properties.values():
        items = schema.get("items") if schema.get("type") == "array" else None
        if isinstance(items, dict) and isinstance(items.get("properties"), dict) and "id" in items["properties"]:
            return True
    return False


def _presentation_choice(schema: dict[str, Any]) -> bool:
    """A parameter that picks a format or version from documented values, with a default."""
    return bool(schema.get("enum")) and schema.get("default") is not None and schema.get("default") in schema["enum"]


def _named_row_param(tool: PreparedTool, noun: str) -> str | None:
    """The required parameter of a collection read that names one row of it: called like the entity (Exavault's
    ``GET /resources?resource=``) and documented as its identifier, never a filter on a column of it."""
    for param in tool.required:
        schema = tool.properties.get(param, {})
        if squash(param) == squash(noun) and schema.get("type") in ("string", "integer") and not schema.get("enum") \
                and re.search(r"\b(identifier|id)\b", str(schema.get("description", "")), re.I):
            return param
    return None


def _id_param(tool: PreparedTool, noun: str, required_only: bool = False) -> str | None:
    wanted = {"id", squash(noun) + "id", squash(noun.rsplit("_", 1)[-1]) + "id"}
    for param in tool.properties:
        if squash(param) in wanted and (not required_only or param in tool.required):
            schema = tool.properties[param]
            if schema.get("type") in ("string", "integer", None):
                return param
    return None


# -- RPC and MCP names ---------------------------------------------------------------------------


def _rpc_tokens(last: str, before: list[str]) -> tuple[list[str], int]:
    """``chat.postMessage`` -> the words of each dotted piece, and where the last piece starts."""
    pieces = [p for p in _EXTENSION.sub("", last).split(".") if p]
    tokens: list[str] = []
    for segment in before:
        if not is_version_segment(segment.lower()) and segment.lower() not in NAMESPACE_WORDS:
            tokens.extend(words(segment))
    for piece in pieces[:-1]:
        tokens.extend(words(piece))
    tail_start = len(tokens)
    tokens.extend(words(pieces[-1]) if pieces else [])
    return tokens, tail_start


def _name_intent(
    tool: PreparedTool, tokens: list[str], provider_words: frozenset[str], tail_start: int | None
) -> Intent:
    style = "rpc" if tail_start is not None else "name"
    while len(tokens) > 1 and (tokens[0] in provider_words or tokens[0] in NAMESPACE_WORDS):
        tokens = tokens[1:]
        if tail_start is not None:
            tail_start = max(0, tail_start - 1)
    if not tokens:
        return Intent.simulated("the name says nothing the planner can read", style=style)
    verb_index = _verb_index(tokens, tail_start)
    if verb_index is None:
        return _without_verb(tool, tokens, style)
    verb = tokens[verb_index]
    kind = verb_class(verb) or "update"
    after = _cut_at_preposition(tokens[verb_index + 1 :])
    before = tokens[:verb_index]
    noun_tokens = [t for t in (after or before) if t not in STOP_WORDS and t not in NAMESPACE_WORDS]
    if verb == "mark" and noun_tokens and noun_tokens[-1] in ("read", "unread", "seen", "done", "spam", "complete"):
        state = noun_tokens.pop()
        verb, kind = state if state in TRANSITIONS else f"mark_{state}", "transition"
    resource = [t for t in before if t not in STOP_WORDS and t not in NAMESPACE_WORDS]
    if kind == "update" and resource and (not noun_tokens or _names_a_param(tool, noun_tokens)):
        # "conversations.setTopic(channel, topic)": update the resource's field, not a "topic" entity
        noun_tokens = resource
    current = any(t in CURRENT_WORDS for t in tokens)
    plural_noun = bool(noun_tokens) and is_plural(noun_tokens[-1])
    entity = singular(identifier("_".join(noun_tokens[-2:]))) if noun_tokens else None
    if entity is None:
        if kind == "send":
            entity = "message"
        else:
            return Intent.simulated(f"the verb {verb!r} has no object the planner can read", style=style)
    if verb in MEMBERSHIP and not after:
        row = _sole_required(tool) or next((p for p in _identifier_params(tool) if squash(p) not in _MEMBER_WORDS), None)
        if row is not None:
            found = membership(tool, verb, entity, [row])
            found.style = style
            return found
    intent = Intent(kind="simulated", entity=entity, style=style, verb=verb if kind == "transition" else None)
    keys = _name_keys(tool, entity)
    if kind == "send" and keys and entity != "message":
        # "send_invoice(invoice_id, to)": sending an existing row writes a message that refers to it
        intent.kind, intent.entity = "send", "message"
        return intent
    if kind == "list" or (kind == "get" and plural_noun and not keys):
        intent.kind = "search" if (_has_search(tool) or verb in ("search", "find", "query")) else "list"
        return intent
    if kind in ("create", "send"):
        intent.kind = kind
        return intent
    # get / update / delete / transition act on one row
    if keys:
        intent.kind = kind
        intent.keys = keys
        return intent
    if current and kind in ("get", "update"):
        intent.kind, intent.current = kind, True
        return intent
    sole = _sole_required(tool) or _identifier_param(tool, kind)
    if sole is not None:
        intent.kind = kind
        # Slack's ``channel`` is the conversation's id: the id conversations.create returns is the one it takes.
        intent.keys = {sole: sole if _natural_key_name(sole, tool.properties.get(sole, {})) else "id"}
        return intent
    if kind == "get" and not tool.required:
        intent.kind, intent.singleton = "get", True
        return intent
    return Intent.simulated(f"cannot tell which parameter identifies the {entity}", entity=entity, style=style)


def membership(tool: PreparedTool, verb: str, row: str, keys: list[str]) -> Intent:
    """``join``/``invite`` adds members to the row (link); ``leave``/``kick`` takes them out (unlink).

    Members are the parameters named like people (``users``, ``user``); without one, the caller."""
    members = [p for p in tool.properties if squash(p) in _MEMBER_WORDS and p not in keys]
    return Intent(kind=MEMBERSHIP[verb], entity=f"{row}_member", parents=[(row, keys)], members=members[:1],
                  verb=verb)


def _identifier_params(tool: PreparedTool) -> list[str]:
    return [p for p, s in tool.properties.items() if s.get("type") in ("string", "integer")
            and (squash(p) in _IDENTIFIER_NAMES or squash(p).endswith("id"))]


def _verb_index(tokens: list[str], tail_start: int | None) -> int | None:
    """The verb: in an RPC method's last dotted piece (``users.profile.get``) if it has one, else the first."""
    if tail_start is not None:
        for index in range(tail_start, len(tokens)):
            if verb_class(tokens[index]):
                return index
    for index, token in enumerate(tokens):
        if verb_class(token):
            return index
    return None


def _cut_at_preposition(tokens: list[str]) -> list[str]:
    """``issues for repo`` -> ``issues``; ``by email`` -> nothing (the object is then before the verb)."""
    for index, token in enumerate(tokens):
        if token in PREPOSITIONS:
            return tokens[:index]
    return tokens


def _without_verb(tool: PreparedTool, tokens: list[str], style: str) -> Intent:
    """Names like ``customer`` or ``conversations_history``: only a read with a key is safe to infer."""
    noun_tokens = [t for t in tokens if t not in STOP_WORDS]
    if not noun_tokens:
        return Intent.simulated("the name says nothing the planner can read", style=style)
    entity = singular(identifier("_".join(noun_tokens[-2:])))
    last = noun_tokens[-1]
    if last in _COLLECTION_WORDS or (is_plural(last) and tool.read_only is not False):
        # "conversations.history", "users.conversations", "team.accessLogs": a list of what the name ends in
        target = _COLLECTION_WORDS.get(last) or singular(identifier("_".join(noun_tokens[-2:] if len(noun_tokens) > 1 and not is_plural(noun_tokens[-2]) else noun_tokens[-1:])))
        return Intent(kind="search" if _has_search(tool) else "list", entity=target, style=style)
    if tool.read_only is True or (tool.method == "GET"):
        keys = _name_keys(tool, entity)
        if keys:
            return Intent(kind="get", entity=entity, keys=keys, style=style)
    return Intent.simulated(f"no verb in {'_'.join(tokens)!r} says what the tool does", entity=entity, style=style)


_COLLECTION_WORDS = {"history": "message", "replies": "reply", "members": "member", "logs": "log",
                     "messages": "message", "events": "event"}


def _name_keys(tool: PreparedTool, entity: str) -> dict[str, str]:
    """Parameters that identify one row of ``entity``: its id (``id``), else a natural key column."""
    last = entity.rsplit("_", 1)[-1]
    # Slack's usergroups.disable(usergroup), Stripe's charge: a parameter named like the entity is its id
    pk = {"id", squash(entity) + "id", squash(last) + "id", squash(entity) + "number", squash(last) + "number",
          squash(entity) + "uuid", squash(entity) + "sid", squash(entity) + "key", squash(last) + "uuid",
          squash(entity) + "ids", squash(entity), squash(last)}
    natural = {squash(entity) + "name", squash(last) + "name", squash(entity) + "slug", squash(last) + "slug",
               squash(entity) + "code", squash(last) + "code"}
    if last in PERSON_ENTITIES:
        natural |= {"email", "emailaddress", "username", "login"}  # people are looked up by email or handle
    found: dict[str, str] = {}
    for param in tool.properties:
        schema = tool.properties[param]
        if schema.get("type") not in ("string", "integer", None):
            continue
        s = squash(param)
        if s in pk and s != squash(entity) + "ids":
            found = {param: "id"}
            if param in tool.required:
                return found
    if found:
        return found
    for param in tool.required:
        schema = tool.properties.get(param, {})
        if schema.get("type") in ("string", "integer", None) and squash(param) in natural:
            return {param: param}
    return {}


def _names_a_param(tool: PreparedTool, noun_tokens: list[str]) -> bool:
    wanted = squash("".join(noun_tokens))
    return any(squash(p) == wanted or squash(p).startswith(wanted) for p in tool.properties)


_IDENTIFIER_NAMES = frozenset({"id", "channel", "user", "file", "ts", "name", "key", "slug", "email", "handle",
                               "username", "code", "number", "uuid", "sid", "token_id", "reference"})


def _identifier_param(tool: PreparedTool, kind: str) -> str | None:
    """The one parameter that can identify a row when the source marks none required (Slack's ``channel``)."""
    scalars = [p for p, s in tool.properties.items() if s.get("type") in ("string", "integer")]
    if len(scalars) == 1 and (kind in ("get", "delete", "transition") or len(tool.properties) == 1):
        return scalars[0]
    named = [p for p in scalars if squash(p) in _IDENTIFIER_NAMES or squash(p).endswith("id")]
    if len(named) == 1 and (named[0] in tool.required or not tool.required):
        return named[0]
    return None


_NATURAL_KEY_NAMES = frozenset({"name", "email", "emailaddress", "slug", "username", "handle", "login", "code", "title",
                                "key", "domain", "url", "path", "phone", "number", "sku"})


def _natural_key_name(param: str, schema: dict[str, Any]) -> bool:
    """Whether a parameter names a row by one of its values (an email, a slug) rather than by its id."""
    s = squash(param)
    return bool(schema.get("enum")) or schema.get("format") in ("email", "uri", "date", "date-time") or any(
        s == word or (s.endswith(word) and not s.endswith("id")) for word in _NATURAL_KEY_NAMES)


def _sole_required(tool: PreparedTool) -> str | None:
    scalars = [p for p in tool.required if tool.properties.get(p, {}).get("type") in ("string", "integer")]
    return scalars[0] if len(scalars) == 1 and len(tool.required) == 1 else None
