"""A list or search whose parameter speaks a product's query language (``query`` bindings, ``generator.query``):
the rows the other bindings select, narrowed and ordered by the query, then paged."""

from __future__ import annotations

from typing import Any

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.errors import ToolError
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import Query as RecordQuery

from generator.compiler.runtime import ServiceRuntime
from generator.query import DIALECTS, Query, QueryError, Resolver, parse, select
from generator.spec import ToolDef

#: Entities whose first row is the signed-in user, where none is marked as people.
_USER_ENTITIES = ("user", "member", "account", "myself", "profile")
_USER_KEYS = ("id", "accountId", "account_id", "email", "emailAddress", "name", "username", "displayName")


def parsed_query(tool: ToolDef, args: dict[str, Any]) -> tuple[str, Query] | None:
    """(dialect, query) of the call's ``query`` arguments (a Drive ``q`` and its ``orderBy`` make one query), or
    None; a query the dialect cannot read is ``invalid_argument`` naming the parameter, the part and what the
    dialect supports."""
    found: list[tuple[str, Query]] = []
    for param, binding in tool.bindings.items():
        text = args.get(param)
        given = isinstance(text, str) and text.strip() or isinstance(text, dict) and text
        if binding.role != "query" or not binding.dialect or not given:
            continue
        try:
            found.append((binding.dialect, parse(binding.dialect, text)))
        except QueryError as exc:
            raise ToolError.invalid_argument(f"'{param}': {exc}") from None
    if not found:
        return None
    where = next((q.where for _, q in found if q.where is not None), None)
    dialect = next((d for d, q in found if q.where is not None), found[0][0])
    return dialect, Query(where, tuple(o for _, q in found for o in q.order))


def _me(rt: ServiceRuntime, ctx: ToolContext) -> frozenset[str]:
    people = [e.name for e in rt.entities.values() if e.person] + [n for n in _USER_ENTITIES if n in rt.entities]
    for entity in people:
        record = rt.query(ctx, entity).first()
        if record is not None:
            row = rt.records[entity].dump(record)
            return frozenset(str(row[k]) for k in _USER_KEYS if row.get(k) is not None)
    return frozenset()


def _names(rt: ServiceRuntime, ctx: ToolContext) -> dict[str, str]:
    """Label names -> ids (Gmail's ``label:Billing`` where messages hold label ids)."""
    if "label" not in rt.entities or "name" not in rt.columns("label"):
        return {}
    records = rt.records["label"]
    rows = [records.dump(r) for r in rt.query(ctx, "label").all(limit=500)]
    return {str(r["name"]).casefold(): r["id"] for r in rows if r.get("name")}


def _resolver(rt: ServiceRuntime, ctx: ToolContext, dialect: str, entity: str) -> Resolver:
    spoken = DIALECTS[dialect]
    return Resolver(spoken.title, list(rt.columns(entity)), spoken.synonyms, _me(rt, ctx), _names(rt, ctx), ctx.now,
                    spoken.getters, spoken.supported)


def _chosen(rt: ServiceRuntime, ctx: ToolContext, entity: str, dialect: str, parsed: Query,
            rows: list[dict[str, Any]]) -> list[int]:
    """Indexes of ``rows`` the query selects, in its order; through another entity's rows where the dialect says
    so (a thread whose messages match)."""
    through = DIALECTS[dialect].through.get(entity)
    if through is not None and through[0] in rt.entities and through[1] in rt.columns(through[0]):
        other, column = through
        records = rt.records[other]
        inner = [records.dump(r) for r in rt.query(ctx, other).all()]
        order: dict[Any, int] = {}
        for i in select(parsed, inner, _resolver(rt, ctx, dialect, other)):
            order.setdefault(inner[i].get(column), len(order))
        return sorted((i for i, r in enumerate(rows) if r["id"] in order), key=lambda i: order[rows[i]["id"]])
    return select(parsed, rows, _resolver(rt, ctx, dialect, entity))


def answer(rt: ServiceRuntime, entity: str, ctx: ToolContext, query: RecordQuery[Any], dialect: str, parsed: Query,
           limit: int, offset: int) -> dict[str, Any]:
    """The page of rows of ``query`` that ``parsed`` selects, in its order."""
    records = rt.records[entity]
    found = query.all()
    try:
        chosen = _chosen(rt, ctx, entity, dialect, parsed, [records.dump(r) for r in found])
    except QueryError as exc:
        raise ToolError.invalid_argument(str(exc)) from None
    page = [found[i] for i in chosen[offset:offset + limit]]
    end = offset + len(page)
    return {"items": present_records(ctx.conn, records, page), "total": len(chosen),
            "next_cursor": str(end) if end < len(chosen) else None}
