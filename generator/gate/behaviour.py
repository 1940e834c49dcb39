"""The behavioural gate: does a tool behave like the product's API says, not only agree with itself?

Beside the contract checks (``contracts.py``), per tool, derived from the spec (the documented HTTP verb
and path, the tool's description, its parameters):

- ``http_verb``: a GET reads; a POST/PUT/PATCH/DELETE writes (unless its path says search/query); a
  DELETE never creates;
- ``filters_narrow`` (list/search): every declared filter is applied: a row's value returns only rows
  with that value, a value no row has returns nothing; a search term finds its row and a nonsense term
  finds nothing; a parameter that looks like a filter but is ignored fails the tool;
- ``created_is_listed`` (create/send): the created row is found by the entity's list tool, and only
  new rows appear: a create on a sub-resource (refund a charge) never rewrites the parent;
- ``changes_only_what_was_passed`` (update): only the passed fields (and ``updated_at``) change, on
  that one row;
- ``action_matches_description`` (transition): the field the action sets is named by the tool's name
  or description, it is set, and nothing else changes;
- ``deletes_only_the_row`` (delete): the row (and rows it owns) go, its parent stays.

They run inside ``ToolChecks.run`` in the gate worker (so in its subprocess, under its time limit). A
tool is ``implemented`` only when these pass too; otherwise it becomes ``simulated``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from generator.gate.examples import canonical
from generator.naming import words
from generator.planner.lexicon import (
    CURSOR_PARAMS,
    LIMIT_PARAMS,
    OFFSET_PARAMS,
    OPTION_PARAMS,
    OPTION_PREFIXES,
    PAGE_PARAMS,
    squash,
)
from generator.spec import ToolDef

if TYPE_CHECKING:
    from generator.gate.contracts import ToolChecks

#: Option parameters that select rows after all: ignoring them returns the wrong rows. (Flags that leave rows
#: out by their state, ``show_deleted``, are checked where rows differ in it: ``invariants.params_change_result``.)
_FILTER_OPTIONS = frozenset(squash(n) for n in ("filter", "filters", "latest", "oldest", "entities"))
#: Words that end a parameter shaping what a read returns (``member_fields``, ``cards_limit``), not which rows.
_SHAPING_ENDINGS = frozenset({"fields", "limit", "format", "expand", "include", "display", "sort", "order",
                              "count", "page", "size", "token", "cursor", "offset"})
_TIMESTAMPS = frozenset({"created_at", "updated_at"})
_READ_PATH_WORDS = frozenset({"search", "query", "find", "lookup", "list", "get", "batch", "retrieve", "preview",
                              "calculate", "estimate", "validate", "check", "count", "export", "report", "filter"})
_NONSENSE = "zqxjv"


class Failed(Exception):
    """A behavioural check failed; the message says how."""


def declared_filters(tool: ToolDef, tables: frozenset[str] = frozenset()) -> list[str]:
    """Parameters of a list/search tool that choose rows but that the tool's bindings ignore.

    ``tables`` are the service's table names: a plural parameter naming one (``actions``) includes
    related rows in the output rather than choosing rows."""
    if tool.behaviour.kind not in ("list", "search"):
        return []
    ignored = []
    for param in tool.parameters.get("properties", {}):
        binding = tool.bindings.get(param)
        if binding is not None and binding.role != "option":
            continue
        s = squash(param)
        parts = words(param)
        if s in LIMIT_PARAMS | CURSOR_PARAMS | PAGE_PARAMS | OFFSET_PARAMS:
            continue
        if s in OPTION_PARAMS and s not in _FILTER_OPTIONS:
            continue
        if parts and parts[0] in OPTION_PREFIXES and s not in _FILTER_OPTIONS:
            continue
        if len(parts) > 1 and parts[-1] in _SHAPING_ENDINGS:
            continue
        if param.lower() in tables or (len(parts) > 1 and parts[0] in tables):
            continue  # "actions", "actions_since": related rows to include, not a choice of rows
        ignored.append(param)
    return ignored


def run_behaviour(tc: ToolChecks) -> None:
    """Add the behavioural checks of ``tc``'s tool to its checks (after its valid call succeeded)."""
    kind = tc.definition.behaviour.kind
    tc._check("http_verb", lambda: _http_verb(tc))
    if kind in ("list", "search"):
        tc._check("filters_narrow", lambda: _filters_narrow(tc))
    elif kind in ("create", "send"):
        tc._check("created_is_listed", lambda: _created_is_listed(tc))
    elif kind == "update":
        tc._check("changes_only_what_was_passed", lambda: _changes_only_passed(tc))
    elif kind == "transition":
        tc._check("action_matches_description", lambda: _action_matches(tc))
    elif kind == "delete":
        tc._check("deletes_only_the_row", lambda: _deletes_only_the_row(tc))


# -- checks ------------------------------------------------------------------------------------------


def _http_verb(tc: ToolChecks) -> None:
    http = tc.definition.http
    if http is None:
        return
    method = http.method.upper()
    path_words = set(words(http.path.split("?")[0].rsplit("/", 1)[-1]))
    kind = tc.definition.behaviour.kind
    if method == "GET" and tc.definition.effect == "write":
        raise Failed(f"GET {http.path} is documented as a read, but the tool writes")
    if method in ("POST", "PUT", "PATCH", "DELETE") and tc.definition.effect == "read" and not path_words & _READ_PATH_WORDS:
        raise Failed(f"{method} {http.path} is documented as a write, but the tool only reads")
    if method == "DELETE" and kind in ("create", "send"):
        raise Failed(f"DELETE {http.path} removes something, but the tool creates a row")


def _filters_narrow(tc: ToolChecks) -> None:
    tool, runtime = tc.definition, tc.runtime
    entity = tool.behaviour.entity or ""
    tables = frozenset(e.table for e in runtime.entities.values())
    ignored = declared_filters(tool, tables)
    if ignored:
        raise Failed(f"the filter parameter{'s' if len(ignored) > 1 else ''} {', '.join(map(repr, ignored[:4]))} "
                     "would be ignored")
    assert tc.example is not None
    base = {p: v for p, v in tc.example.arguments.items()
            if tool.bindings.get(p) is not None and tool.bindings[p].role in ("parent", "limit")}
    properties = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    for param, binding in tool.bindings.items():
        if binding.role == "filter" and binding.op == "eq" and binding.column:
            _eq_filter_narrows(tc, entity, param, binding.column, base, properties.get(param, {}), required)
        elif binding.role == "filter" and binding.op == "range":
            _range_narrows(tc, param, base, required)
        elif binding.role == "search":
            _search_narrows(tc, entity, param, base, required)


def _listed(tc: ToolChecks, arguments: dict[str, Any]) -> list[dict[str, Any]] | None:
    tc.fresh()
    result = tc.call(arguments)
    if not result.success:
        return None
    data = result.data if isinstance(result.data, dict) else {}
    items = data.get("items")
    return items if isinstance(items, list) else None


def _eq_filter_narrows(tc: ToolChecks, entity: str, param: str, column: str, base: dict[str, Any],
                       schema: dict[str, Any], required: set[str]) -> None:
    from generator.compiler.validation import make_validator

    validator = make_validator(tc.definition.parameters)
    others = {p: v for p, v in tc.example.arguments.items() if p in required and p != param} if tc.example else {}
    rows = [r for r in _in_scope(tc, entity, base) if r.get(column) is not None]
    kind = tc.runtime.columns(entity).get(column)
    if kind in ("object", "array", "any") or not rows:
        return  # JSON columns are matched by other means; nothing seeded to choose by
    value = rows[0][column]
    arguments = {**base, **others, param: _as_param(value, schema)}
    if validator.is_valid(arguments):
        items = _listed(tc, arguments)
        if items is None:
            raise Failed(f"listing with {param}={value!r} (a stored value) failed")
        wrong = [i for i in items if canonical(tc.runtime.coerce(entity, column, i.get(column))) != canonical(value)]
        if wrong or not items:
            raise Failed(f"{param}={value!r} returned {len(items)} rows, {len(wrong)} of them with another {column}")
    absent = _absent_value(schema, [r.get(column) for r in tc.rows.get(entity, [])])
    if absent is not None:
        arguments = {**base, **others, param: absent}
        if validator.is_valid(arguments):
            items = _listed(tc, arguments)
            if items:
                raise Failed(f"{param}={absent!r} (no row has it) still returned {len(items)} rows")


_FAR_FUTURE = 4_102_444_800  # 2100-01-01 in Unix seconds


def _range_narrows(tc: ToolChecks, param: str, base: dict[str, Any], required: set[str]) -> None:
    from generator.compiler.validation import make_validator

    validator = make_validator(tc.definition.parameters)
    others = {p: v for p, v in tc.example.arguments.items() if p in required and p != param} if tc.example else {}
    after = {**base, **others, param: {"gt": _FAR_FUTURE}}
    before = {**base, **others, param: {"lte": _FAR_FUTURE}}
    if not (validator.is_valid(after) and validator.is_valid(before)):
        return
    everything, nothing = _listed(tc, before), _listed(tc, after)
    if nothing:
        raise Failed(f"{param}={{gt: 2100-01-01}} still returned {len(nothing)} rows")
    if everything is None:
        raise Failed(f"{param}={{lte: 2100-01-01}} failed")


def _search_narrows(tc: ToolChecks, entity: str, param: str, base: dict[str, Any], required: set[str]) -> None:
    others = {p: v for p, v in tc.example.arguments.items() if p in required and p != param} if tc.example else {}
    rows = _in_scope(tc, entity, base)
    if rows:
        from generator.gate.examples import _search_word

        word = _search_word(tc.runtime, entity, rows[0])
        items = _listed(tc, {**base, **others, param: word})
        if items is not None and not items:
            raise Failed(f"searching {param}={word!r} (a word of a stored row) found nothing")
    items = _listed(tc, {**base, **others, param: _NONSENSE})
    if items:
        raise Failed(f"searching {param}={_NONSENSE!r} (in no row) still returned {len(items)} rows")


def _in_scope(tc: ToolChecks, entity: str, base: dict[str, Any]) -> list[dict[str, Any]]:
    """The seeded rows a list call with ``base`` (its parent arguments) can return."""
    rows = tc.rows.get(entity, [])
    for param, value in base.items():
        binding = tc.definition.bindings[param]
        if binding.role != "parent" or not binding.entity or not binding.column:
            continue
        parent = next((r for r in tc.rows.get(binding.entity, [])
                       if canonical(r.get(binding.lookup or "id")) == canonical(value)
                       or str(r.get(binding.lookup or "id")) == str(value)), None)
        rows = [r for r in rows if parent is not None and r.get(binding.column) == parent.get("id")]
    return rows


def _as_param(value: Any, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "string" and not isinstance(value, str):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if kind == "array" and not isinstance(value, list):
        return [value]
    return value


def _absent_value(schema: dict[str, Any], present: list[Any]) -> Any:
    """A value the parameter accepts that no row holds (None when there is none, e.g. a two-value enum in use)."""
    seen = {canonical(v) for v in present}
    enum = schema.get("enum")
    if isinstance(enum, list):
        return next((v for v in enum if canonical(v) not in seen and v is not None), None)
    kind = schema.get("type")
    if kind == "boolean":
        return next((v for v in (True, False) if canonical(v) not in seen), None)
    if kind == "integer":
        return 987_654_321 if canonical(987_654_321) not in seen else None
    if kind == "number":
        return 987_654.25
    if kind == "string" and not schema.get("format") and not schema.get("pattern"):
        return "zz_no_such_value"
    return None


def _rows_now(tc: ToolChecks) -> dict[str, dict[str, dict[str, Any]]]:
    """Every row of the service's tables as stored (raw SQLite values: cheap, and enough to diff)."""
    raw = tc.episode.stores[tc.service.name]._raw  # noqa: SLF001 - the gate reads its own episode's store
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for entity in tc.runtime.entities.values():
        cursor = raw.execute(f'SELECT * FROM "{tc.runtime.tables[entity.name].name}"')
        columns = [d[0] for d in cursor.description]
        at = columns.index("id")
        out[entity.table] = {str(row[at]): dict(zip(columns, row, strict=True)) for row in cursor}
    return out


def _initial_rows(tc: ToolChecks) -> dict[str, dict[str, dict[str, Any]]]:
    """The seeded state every check starts from (``fresh`` restores it), read once per service."""
    if "initial_rows" not in tc.shared:
        tc.fresh()
        tc.shared["initial_rows"] = _rows_now(tc)
    return tc.shared["initial_rows"]


def _changed(before: dict[str, dict[str, dict[str, Any]]], after: dict[str, dict[str, dict[str, Any]]]) -> tuple[
        list[tuple[str, str]], dict[tuple[str, str], set[str]], list[tuple[str, str]]]:
    """(added, changed columns per row, deleted) between two typed dumps, by (table, id)."""
    added, deleted = [], []
    changed: dict[tuple[str, str], set[str]] = {}
    for table in set(before) | set(after):
        old, new = before.get(table, {}), after.get(table, {})
        added += [(table, k) for k in new if k not in old]
        deleted += [(table, k) for k in old if k not in new]
        for key in set(old) & set(new):
            if old[key] != new[key]:
                changed[(table, key)] = {c for c in old[key] if old[key][c] != new[key].get(c)}
    return added, changed, deleted


def _run_and_diff(tc: ToolChecks) -> tuple[Any, list[tuple[str, str]], dict[tuple[str, str], set[str]], list[tuple[str, str]]]:
    assert tc.example is not None
    before = _initial_rows(tc)
    tc.fresh()
    result = tc.call(tc.example.arguments)
    if not result.success:
        raise Failed(f"the valid call failed on a fresh episode: {result.error_code}")
    after = _rows_now(tc)
    return (result.data, *_changed(before, after))


def _ignore_bookkeeping(changed: dict[tuple[str, str], set[str]]) -> dict[tuple[str, str], set[str]]:
    """Changes besides ``updated_at`` and the simulated-call log."""
    out = {}
    for where, columns in changed.items():
        rest = columns - _TIMESTAMPS
        if rest and where[0] != "simulated_calls":
            out[where] = rest
    return out


def _created_is_listed(tc: ToolChecks) -> None:
    data, added, changed, deleted = _run_and_diff(tc)
    entity = tc.definition.behaviour.entity or ""
    table = tc.runtime.entity(entity).table
    others = _ignore_bookkeeping(changed)
    marks, marked = tc.definition.behaviour.marks, tc.definition.behaviour.marks_entity
    if marks and marked is not None:  # a refund marks its charge refunded: that change is the product's
        marked_table = tc.runtime.entity(marked).table
        others = {w: c for w, c in others.items() if not (w[0] == marked_table and c <= set(marks))}
    if others or deleted:
        where = next(iter(others), None) or deleted[0]
        raise Failed(f"creating a {entity} also changed {where[0]} {where[1]!r}: a create only adds rows")
    if not isinstance(data, dict) or (table, str(data.get("id"))) not in added:
        raise Failed("the created row is not among the rows the call added")
    lister = _lister(tc, entity)
    if lister is None:
        return
    arguments: dict[str, Any] = {}
    for param, binding in lister.bindings.items():
        if binding.role == "parent" and binding.column and data.get(binding.column) is not None:
            parent = tc._find(binding.entity, data[binding.column])
            if parent is not None:
                arguments[param] = parent.get(binding.lookup or "id")
        elif binding.role == "limit":
            most = lister.parameters.get("properties", {}).get(param, {}).get("maximum")
            arguments[param] = int(min(100, most)) if isinstance(most, (int, float)) else 100
    for param in lister.parameters.get("required", []):
        if param not in arguments:
            return  # a list tool we cannot call with what the row says
    from generator.gate.examples import _fit

    properties = lister.parameters.get("properties", {})
    arguments = {k: _fit(v, properties.get(k, {})) for k, v in arguments.items()}
    cursor = next((p for p, b in lister.bindings.items() if b.role in ("cursor", "offset")), None)
    for _ in range(20):
        result = tc.episode.call(tc.service.name, lister.name, arguments)
        if not result.success:
            raise Failed(f"{lister.name} failed after the create: {result.error_code}")
        page = result.data if isinstance(result.data, dict) else {}
        if any(item.get("id") == data["id"] for item in page.get("items", [])):
            return
        if not page.get("next_cursor") or cursor is None:
            break
        arguments[cursor] = _fit(page["next_cursor"], properties.get(cursor, {}))
    raise Failed(f"{lister.name} does not list the created {entity} {data['id']!r}")


def _lister(tc: ToolChecks, entity: str) -> ToolDef | None:
    """The entity's plain list tool (fewest required parameters), if it has one that is compiled."""
    tools = [t for t in tc.runtime.spec.tools if t.behaviour.kind in ("list", "search") and t.behaviour.entity == entity
             and t.name in tc.service.tools and not any(b.role == "filter" and p in t.parameters.get("required", [])
                                                        for p, b in t.bindings.items())]
    tools = [t for t in tools if getattr(tc.service.tools[t.name], "definition", None) is not None
             and tc.service.tools[t.name].definition.behaviour.kind in ("list", "search")]  # type: ignore[attr-defined]
    return min(tools, key=lambda t: len(t.parameters.get("required", [])), default=None)


def _target_key(tc: ToolChecks) -> tuple[str, str]:
    assert tc.example is not None and tc.example.row is not None
    entity = tc.definition.behaviour.entity or ""
    return tc.runtime.entity(entity).table, str(tc.example.row["id"])


def _changes_only_passed(tc: ToolChecks) -> None:
    if tc.example is None or tc.example.row is None:
        return
    _, added, changed, deleted = _run_and_diff(tc)
    target = _target_key(tc)
    fields = {p: b.column for p, b in tc.definition.bindings.items() if b.role == "field" and p in tc.example.arguments}
    for param, column in fields.items():
        if not _names_agree(param, column or ""):
            raise Failed(f"the update writes {param!r} into {column!r}")
    passed = set(fields.values())
    others = _ignore_bookkeeping(changed)
    extra = others.get(target, set()) - passed
    if extra:
        raise Failed(f"the update also changed {', '.join(sorted(extra))}, which the call did not pass")
    elsewhere = [w for w in others if w != target]
    if elsewhere or added or deleted:
        where = (elsewhere or added or deleted)[0]
        raise Failed(f"the update also touched {where[0]} {where[1]!r}")


def _names_agree(param: str, column: str) -> bool:
    """A parameter writes the column named like it (``topic`` -> ``topic``; a setter's ``value`` -> its column;
    a reference's id column: ``charge`` and Trello's id-first ``idList`` -> ``list_id``)."""
    p, c = squash(param), squash(column)
    return param == "value" or p == c or c.endswith(p) or p.endswith(c) or c in (f"{p}id", f"{p.removeprefix('id')}id")


def _action_matches(tc: ToolChecks) -> None:
    transition = tc.definition.behaviour.transition
    if transition is None or tc.example is None or tc.example.row is None:
        return
    said = _said_words(tc.definition)
    target = str(transition.to).lower() if not isinstance(transition.to, bool) else transition.field.lower()
    if not any(_same_stem(target, w) for w in said) and not any(_same_stem(transition.field.lower(), w) for w in said):
        raise Failed(f"the action sets {transition.field} to {transition.to!r}, which neither its name nor its "
                     "description mentions")
    _, added, changed, deleted = _run_and_diff(tc)
    key = _target_key(tc)
    others = _ignore_bookkeeping(changed)
    passed = {b.column for p, b in tc.definition.bindings.items() if b.role == "field" and p in tc.example.arguments}
    if transition.field not in others.get(key, set()):
        raise Failed(f"after the action the {transition.field} of the row did not change")
    extra = others.get(key, set()) - passed - {transition.field}
    elsewhere = [w for w in others if w != key]
    if extra or elsewhere or deleted:
        what = ", ".join(sorted(extra)) if extra else f"{(elsewhere or deleted)[0][0]} {(elsewhere or deleted)[0][1]!r}"
        raise Failed(f"the action also changed {what}")


def _deletes_only_the_row(tc: ToolChecks) -> None:
    if tc.example is None or tc.example.row is None:
        return
    _, added, changed, deleted = _run_and_diff(tc)
    key = _target_key(tc)
    if key not in deleted:
        raise Failed("the row the call named is still there")
    owned = _owned_tables(tc, tc.definition.behaviour.entity or "")
    stray = [d for d in deleted if d != key and d[0] not in owned]
    if stray:
        raise Failed(f"deleting it also deleted {stray[0][0]} {stray[0][1]!r}, which it does not own")
    others = _ignore_bookkeeping(changed)
    refs = {(t, k) for (t, k), cols in others.items() if all(c.endswith("_id") or c.endswith("Id") for c in cols)}
    if added or set(others) - refs:
        where = (added or sorted(set(others) - refs))[0]
        raise Failed(f"deleting it also changed {where[0]} {where[1]!r}")


def _owned_tables(tc: ToolChecks, entity: str) -> set[str]:
    """Tables whose rows ``entity`` owns, directly or further down."""
    out: set[str] = set()
    frontier = {entity}
    while frontier:
        nxt = set()
        for definition in tc.runtime.entities.values():
            owners = {f.ref for f in definition.fields if f.ref and f.owner}
            if owners & frontier and definition.table not in out:
                out.add(definition.table)
                nxt.add(definition.name)
        frontier = nxt
    return out


def _said_words(tool: ToolDef) -> set[str]:
    text = f"{tool.source or tool.name} {tool.name} {tool.description}"
    return {w.lower() for w in re.findall(r"[A-Za-z]+", " ".join(words(tool.source or tool.name)) + " " + text)}


def _same_stem(a: str, b: str) -> bool:
    """``voided`` and ``void``, ``cancelled`` and ``cancel``, ``archived`` and ``archive``."""
    a, b = a.replace("_", ""), b.replace("_", "")
    if len(a) < 3 or len(b) < 3:
        return a == b
    short, long = sorted((a, b), key=len)
    stem = short[:-1] if short.endswith("e") else short
    return long.startswith(stem[: max(3, len(stem) - 1)])
