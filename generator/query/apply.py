"""Giving a spec's tools their product languages when the service is compiled and gated (so a stored catalog gets
them without being built again): a read's parameter that speaks a dialect is bound as a ``query``, on the entity
the dialect searches (JQL reads issues even where the planner read the search endpoint as a ``search`` row); a
search sent by POST is a read; ids take the other names the product accepts (``addresses``); Sheets' A1 ranges
address a typed grid (``generator.compiler.grid``)."""

from __future__ import annotations

from typing import Any

from generator.compiler.grid import with_grid
from generator.query.addresses import with_addresses
from generator.query.dialects import dialect_for
from generator.query.flags import with_flags
from generator.spec import Behaviour, Binding, ServiceSpec, ToolDef

#: Tool kinds whose reads can answer a query from rows (a simulated read answers through its reader).
_READS = frozenset({"list", "search", "simulated"})


def _posted_search(tool: ToolDef) -> bool:
    """A search sent by POST (Jira's ``POST /rest/api/3/search``, for queries too long for a URL): a read."""
    if tool.http is None or tool.http.method.upper() != "POST":
        return False
    last = tool.http.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    return last.split(":")[-1].lower() in ("search", "query") and "{" not in last


def _with_dialect(spec: ServiceSpec, tool: ToolDef) -> ToolDef:
    posted = tool.effect == "write" and _posted_search(tool)
    if tool.behaviour.kind not in _READS and not posted or tool.effect == "write" and not posted:
        return tool
    reading = tool if tool.effect == "read" else tool.model_copy(update={"effect": "read"})
    found = [(p, d) for p in tool.parameters.get("properties", {}) if (d := dialect_for(spec, reading, p)) is not None]
    if not found:
        return tool
    bindings = dict(tool.bindings)
    behaviour = tool.behaviour
    entities = {e.name for e in spec.entities}
    for param, dialect in found:
        bindings[param] = Binding(role="query", dialect=dialect.name)
        home = next((e for e in dialect.entities if e in entities), None)
        if home is not None and behaviour.entity != home:
            # the planner read the search endpoint as rows of its own; the language searches ``home``
            behaviour = Behaviour(kind="simulated", entity=home, planned="search")
            bindings = {p: b for p, b in bindings.items() if b.role in ("query", "limit", "cursor", "offset", "page")}
        elif behaviour.kind not in _READS:
            return tool  # a POSTed search of rows the language does not name
    update: dict[str, Any] = {"bindings": bindings, "behaviour": behaviour}
    if posted:  # a read now: it finds rows, as a person asks for them
        noun = (behaviour.entity or "record").replace("_", " ")
        update["intent"] = "find"
        update["phrases"] = [f"find the {noun}s matching {{{found[0][0]}}}"]
    return reading.model_copy(update=update)


def with_dialects(spec: ServiceSpec) -> ServiceSpec:
    """``spec`` with each read's query parameters bound to their dialect (the same spec when none has one)."""
    tools = [_with_dialect(spec, t) for t in spec.tools]
    if all(a is b for a, b in zip(tools, spec.tools)):
        return spec
    return spec.model_copy(update={"tools": tools})


def with_languages(spec: ServiceSpec) -> ServiceSpec:
    """``spec`` as its products speak: query parameters in their dialects, rows named as the products name them.
    The compiler and the gate both read a spec through this, so what is gated is what runs."""
    return with_grid(with_flags(with_addresses(with_dialects(spec))))
