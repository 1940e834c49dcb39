"""Identify: find a record the way an agent would, through whichever read of its kind can reach it.

``lookup(s, rec, known)`` is given what the agent knows about the record: values of its fields (a
sender's name, a requester's email, an id an earlier step found) as expressions. It tries the read
tools that return records of the record's kind, in a seeded order, filling each tool's parameters
from what is known: an id parameter from a known id, a filter named like a known field (or like
the role and value of a person path: ``requester_email`` for ``requester_id.email``), a free-text
search from a known name or subject. The first read whose result holds the record becomes a step
of the plan, selecting that record. Nothing here names a tool.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from composer.catalog import Param, ToolInfo
from composer.kinds import Kind
from composer.plan import Expr, Lit, Ref, resolve
from composer.runner import result_items
from composer.scenario import Rec, Scenario, Skip, Stage, Step

#: How often a search is followed by opening the record it found (its read by id), as people often do.
OPEN_SHARE = 0.35
#: How many reads a lookup tries before it gives up (each try is one call on the world).
_MAX_TRIES = 10
#: Known-value keys that a free-text search parameter can take, best first.
SEARCH_KEYS = ("query", "name", "subject", "title", "label")


def _param_value(kind: Kind, param: Param, known: Mapping[str, Expr]) -> Expr | None:
    if param.semtype == f"id:{kind.key}" and "id" in known:
        return known["id"]
    if param.semtype and param.semtype.startswith("id:") and param.name in known:
        return known[param.name]  # the parent's id, found by an earlier step
    if param.name in known and param.name != "id":
        return known[param.name]
    for path in kind.people:
        if path.path in known and param.name in (f"{path.role.replace(' ', '_')}_{path.value}", path.path.replace(".", "_")):
            return known[path.path]
    if param.is_search:
        for key in SEARCH_KEYS:
            if key in known:
                return known[key]
    return None


def _arguments(kind: Kind, tool: ToolInfo, known: Mapping[str, Expr], rng: random.Random) -> list[dict[str, Expr]]:
    """Argument sets for ``tool`` from what is known, fewest first (a person searches by one thing, then narrows):
    the required parameters, then each optional one that can be filled beside them. Empty when a required
    parameter cannot be filled."""
    required: dict[str, Expr] = {}
    optional: list[tuple[str, Expr]] = []
    for param in tool.params:
        value = _param_value(kind, param, known)
        if value is None:
            if param.required:
                return []
        elif param.required:
            required[param.name] = value
        else:
            optional.append((param.name, value))
    rng.shuffle(optional)
    sets = [required] if required or not optional else []
    sets += [{**required, name: value} for name, value in optional]
    sets += [{**required, a: x, b: y} for (a, x), (b, y) in zip(optional, optional[1:])]  # then narrower still
    return sets


def candidate_reads(s: Scenario, rec: Rec, known: Mapping[str, Expr]) -> list[tuple[ToolInfo, dict[str, Expr]]]:
    """Reads of the record's kind that the known values can drive, each with its argument sets, in a seeded order."""
    kind = s.kinds.get(rec.service, rec.entity)
    if kind is None:
        raise Skip(f"no kind {rec.service}.{rec.entity}")
    tools = list(kind.readers)
    s.rng.shuffle(tools)
    return [(tool, args) for tool in tools for args in _arguments(kind, tool, known, s.rng)]


def finds(s: Scenario, tool: ToolInfo, args: Mapping[str, Expr], rec: Rec) -> bool:
    """Whether calling ``tool`` with ``args`` now returns ``rec`` among its items (a read changes nothing)."""
    try:
        arguments = {name: resolve(expr, s.items) for name, expr in args.items()}
    except LookupError:
        return False
    result = s.runner.episode.call(tool.service, tool.name, arguments)
    if not result.success:
        return False
    return any(str(item.get("id")) == rec.key for item in result_items(tool, result.data))


def lookup(
    s: Scenario,
    rec: Rec,
    known: Mapping[str, Expr | str | bool],
    *,
    say: str,
    stage: Stage = "identify",
    guided: bool = False,
    prefer: Sequence[str] = (),
    name: str = "",
    depth: int = 0,
) -> Step:
    """A step that finds ``rec`` from ``known`` (field -> value the agent has), through any read that reaches it.

    ``prefer``: tool names to try first, when the workflow knows how people usually look (no tool is required);
    ``name``: how the request names the record ("the later of the two charges"), for steps that follow.
    """
    values: dict[str, Expr] = {k: (v if isinstance(v, (Lit, Ref)) else Lit(v)) for k, v in known.items()}
    values.update({k: Lit(v) for k, v in _state_filters(rec).items() if k not in values})
    options = s.less_used_first(candidate_reads(s, rec, values), lambda option: (option[0],))
    options.sort(key=lambda option: option[0].name not in prefer)
    kind = s.kinds.get(rec.service, rec.entity)
    if not options and kind is not None and listed_under_parent(kind) and depth < _MAX_PARENTS:
        options += _through_parent(s, rec, values, stage, depth)
    for tool, args in options[:_MAX_TRIES]:
        if finds(s, tool, args, rec):
            step = s.call(tool.service, tool.name, dict(args), select=rec, say=say, stage=stage, guided=guided)
            if tool.intent != "get" and s.rng.random() < OPEN_SHARE:
                step = _open(s, rec, step, stage) or step
            if name:
                s.names[step.index] = name
            return step
    raise Skip(f"no read of {rec.service}.{rec.entity} finds {rec.key} from {', '.join(sorted(values))}")


def _state_filters(rec: Rec) -> dict[str, Any]:
    """Filters a person sets to see a record that lists hide by default: archived, trashed, deleted, closed ones."""
    removed = any(rec.get(f) is True for f in ("archived", "is_archived", "trashed", "deleted", "in_trash")) or (
        isinstance(rec.get("label_ids"), list) and "TRASH" in rec["label_ids"]
    )
    state = next((str(rec.get(f)) for f in ("status", "state") if str(rec.get(f, "")).lower() in _REMOVED_STATES), None)
    if state is not None:  # an archived article is searched for among the archived ones
        return {"status": state, "state": state}
    if not removed:
        return {}
    return {name: True for name in ("archived", "include_archived", "include_spam_trash", "include_trashed", "trashed")}


#: States lists hide by default (a search returns published articles and drafts, never archived ones).
_REMOVED_STATES = frozenset({"archived", "deleted", "trashed"})


def listed_under_parent(kind: Kind) -> bool:
    """Whether every read of the kind lists records under a parent (a meeting's registrants): one finds the parent first."""
    return bool(kind.readers) and all(
        any(p.required and p.semtype and p.semtype.startswith("id:") and p.semtype != f"id:{kind.key}" for p in t.params)
        for t in kind.readers
    )


#: How far up a record's parents a lookup goes (a comment under an issue under a project); a generated
#: service's rows may name a parent of their own kind.
_MAX_PARENTS = 2


def _through_parent(
    s: Scenario, rec: Rec, known: dict[str, Expr], stage: Stage, depth: int
) -> list[tuple[ToolInfo, dict[str, Expr]]]:
    """Reads that list a record under its parent (a meeting's registrants, an issue's comments): the parent is found
    first, by its label, and its id drives the read."""
    kind = s.kinds.get(rec.service, rec.entity)
    if kind is None:
        return []
    found: list[tuple[ToolInfo, dict[str, Expr]]] = []
    for f in kind.runtime.definition.fields:
        parent_kind = s.kinds.get(rec.service, f.ref) if f.ref else None
        if parent_kind is None or parent_kind.key == kind.key or not parent_kind.label or rec.get(f.name) is None:
            continue
        parents = s.records(rec.service, parent_kind.entity, where={"id": rec[f.name]})
        label = parents[0].get(parent_kind.label) if parents else None
        if not isinstance(label, str):
            continue
        try:
            with s.attempt():
                parent = lookup(s, parents[0], {"query": label, "name": label, "title": label, "subject": label,
                                                parent_kind.label: label}, say=f"find the {parent_kind.noun} {label}", stage=stage,
                                depth=depth + 1)
                found = candidate_reads(s, rec, {**known, f.name: parent.ref("id")})
                if not found:
                    raise Skip("nothing lists it under its parent")
                return found
        except Skip:
            continue
    return []


def _open(s: Scenario, rec: Rec, found: Step, stage: Stage) -> Step | None:
    """After a search, open the record by its id (as people do to read all of it), when a read by id exists."""
    kind = s.kinds.get(rec.service, rec.entity)
    if kind is None:
        return None
    for tool in kind.readers:
        ids = [p for p in tool.params if p.required and p.semtype == f"id:{kind.key}"]
        if tool.intent == "get" and len(ids) == 1 and all(p is ids[0] for p in tool.params if p.required):
            if finds(s, tool, {ids[0].name: found.ref("id")}, rec):
                opened = s.call(tool.service, tool.name, {ids[0].name: found.ref("id")}, select=rec, say="", stage=stage,
                                guided=False)
                s.notes[opened.index].opens = found.index
                return opened
    return None


def shows(s: Scenario, step: Step, rec: Rec) -> bool:
    """Whether the read a plan step made shows ``rec`` beside what it selected (a trap it never shows tests nothing)."""
    index = step.index
    while (opened := s.notes[index].opens) is not None:  # an opened record: what the search before it showed
        index = opened
    spec = s.specs[index]
    return finds(s, s.catalog.tool(spec.service, spec.tool), dict(spec.args), rec)


def known_of(step: Step, *fields: str) -> dict[str, Any]:
    """What a found record tells the agent: ``{field: Ref}`` for each of ``fields`` the step's item has."""
    return {name: step.ref(name) for name in fields if step.value(name) is not None}


__all__ = ["candidate_reads", "finds", "known_of", "lookup", "shows"]
