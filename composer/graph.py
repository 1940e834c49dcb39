"""The dependency graph over the library: a node per tool, an edge A->B when A's result can feed B.

An edge exists when a field of A's result item carries the semantic type of one of B's parameters
(an email found in the CRM feeds the mailbox's ``to``; a ticket id feeds ``close_ticket``). Edges
across services are what make tasks compositional. Anchor tools are reads that take a fact an
instruction can state (a person's name, a subject, free-text search).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from composer.catalog import Catalog, Param, ToolInfo

#: Semantic types too generic to link two tools (any text feeds any text).
UNLINKED_TYPES = frozenset(
    {"text", "datetime", "date", "currency", "percentage", "quantity", "country_code", "city", "job_title", "tag"}
)

#: Semantic types an instruction can state as a fact the agent starts from.
ANCHOR_TYPES = frozenset(
    {
        "person_name",
        "company_name",
        "email_address",
        "phone_number",
        "product_name",
        "product_sku",
        "subject",
        "file_name",
        "channel_name",
        "domain_name",
    }
)


@dataclass(frozen=True, slots=True)
class Link:
    """One way a result field of ``source`` feeds a parameter of ``target``."""

    field: str
    param: str
    semtype: str


def accepted_types(tool: ToolInfo, param: Param) -> tuple[str, ...]:
    """The semantic types a parameter accepts, including polymorphic ids (``entity_type`` + ``entity_id``)."""
    if param.semtype:
        return (param.semtype,)
    partner = polymorphic_partner(tool, param)
    if partner is not None:
        return tuple(f"id:{tool.service}.{value}" for value in partner.enum)
    return ()


def polymorphic_partner(tool: ToolInfo, param: Param) -> Param | None:
    """For an untyped ``<x>_id`` beside an enum ``<x>_type``, that enum parameter."""
    if param.semtype or param.json_type != "string" or not param.name.endswith("_id"):
        return None
    partner = tool.param(param.name[: -len("_id")] + "_type")
    if partner is not None and partner.enum and all(isinstance(v, str) for v in partner.enum):
        return partner
    return None


def is_anchor_tool(tool: ToolInfo) -> bool:
    return not tool.is_write and any(p.is_search or p.semtype in ANCHOR_TYPES for p in tool.params)


def links_between(source: ToolInfo, target: ToolInfo) -> list[Link]:
    links: list[Link] = []
    for param in target.params:
        for semtype in accepted_types(target, param):
            if semtype in UNLINKED_TYPES:
                continue
            for f in source.fields:
                if f.semtype == semtype and not f.is_list:
                    links.append(Link(f.path, param.name, semtype))
    return links


def build_graph(catalog: Catalog) -> nx.DiGraph:
    """The dependency graph of every tool in ``catalog``."""
    graph = nx.DiGraph()
    for key, tool in sorted(catalog.tools.items()):
        graph.add_node(key, service=tool.service, tool=tool.name, effect=tool.effect, anchor=is_anchor_tool(tool))
    # Index targets by accepted type so building stays linear in practice.
    by_type: dict[str, list[ToolInfo]] = {}
    for tool in catalog.tools.values():
        for param in tool.params:
            for semtype in accepted_types(tool, param):
                if semtype not in UNLINKED_TYPES:
                    by_type.setdefault(semtype, []).append(tool)
    for source in sorted(catalog.tools.values(), key=lambda t: t.key):
        out_types = {f.semtype for f in source.fields if f.semtype and not f.is_list}
        targets = {t.key: t for semtype in out_types for t in by_type.get(semtype, ())}
        for key in sorted(targets):
            target = targets[key]
            if target.key == source.key:
                continue
            links = links_between(source, target)
            if links:
                graph.add_edge(
                    source.key,
                    target.key,
                    links=tuple(links),
                    cross_service=source.service != target.service,
                )
    return graph


def successors_with_links(graph: nx.DiGraph, key: str) -> Iterator[tuple[str, tuple[Link, ...]]]:
    for target in graph.successors(key):
        yield target, graph.edges[key, target]["links"]


def reachable_services(graph: nx.DiGraph, start: str) -> set[str]:
    return {graph.nodes[n]["service"] for n in nx.descendants(graph, start) | {start}}


def max_reachable_services(graph: nx.DiGraph) -> int:
    """The most services a walk from one anchor tool can reach (bounds ``--min-services``)."""
    best = 0
    for node, data in graph.nodes(data=True):
        if data["anchor"]:
            best = max(best, len(reachable_services(graph, node)))
    return best


# -- export ----------------------------------------------------------------------------------------


def graph_summary(graph: nx.DiGraph) -> dict[str, Any]:
    cross = sum(1 for _, _, d in graph.edges(data=True) if d["cross_service"])
    services = sorted({d["service"] for _, d in graph.nodes(data=True)})
    service_edges: dict[str, int] = {}
    for a, b, d in graph.edges(data=True):
        if d["cross_service"]:
            pair = f"{graph.nodes[a]['service']}->{graph.nodes[b]['service']}"
            service_edges[pair] = service_edges.get(pair, 0) + 1
    return {
        "services": services,
        "tools": graph.number_of_nodes(),
        "anchor_tools": sum(1 for _, d in graph.nodes(data=True) if d["anchor"]),
        "write_tools": sum(1 for _, d in graph.nodes(data=True) if d["effect"] == "write"),
        "edges": graph.number_of_edges(),
        "cross_service_edges": cross,
        "service_edges": dict(sorted(service_edges.items())),
    }


def graph_to_json(graph: nx.DiGraph) -> dict[str, Any]:
    nodes = [{"id": n, **graph.nodes[n]} for n in sorted(graph.nodes)]
    edges = [
        {
            "source": a,
            "target": b,
            "cross_service": d["cross_service"],
            "links": [{"field": link.field, "param": link.param, "semantic_type": link.semtype} for link in d["links"]],
        }
        for a, b, d in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1]))
    ]
    return {"summary": graph_summary(graph), "nodes": nodes, "edges": edges}


def write_graph(graph: nx.DiGraph, out_dir: Path, *, picture: bool = True) -> list[Path]:
    """Write ``graph.json``, ``graph.graphml`` and (optionally) the pictures into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    json_path = out_dir / "graph.json"
    json_path.write_text(json.dumps(graph_to_json(graph), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    written.append(json_path)
    flat = nx.DiGraph()
    for node, data in sorted(graph.nodes(data=True)):
        flat.add_node(node, **data)
    for a, b, d in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1])):
        flat.add_edge(
            a,
            b,
            cross_service=d["cross_service"],
            links="; ".join(f"{link.field}->{link.param} ({link.semtype})" for link in d["links"]),
        )
    graphml_path = out_dir / "graph.graphml"
    nx.write_graphml(flat, graphml_path)
    written.append(graphml_path)
    if picture:
        from composer.draw import draw_service_graph, draw_tool_graph

        written.append(draw_tool_graph(graph, out_dir / "graph.png"))
        written.append(draw_service_graph(graph, out_dir / "services.png"))
    return written
