"""The dependency graph over the library: a node per tool, an edge A->B when A's result can feed B.

An edge exists when a field of A's result item carries the semantic type of one of B's parameters
(an email found in the CRM feeds the mailbox's ``to``; a ticket id feeds ``close_ticket``). Edges
across services are what make tasks compositional. Anchor tools are reads that take a fact an
instruction can state (a person's name, a subject, free-text search).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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


Flow = Literal["record", "mention", "role", "link", "type"]


@dataclass(frozen=True, slots=True)
class Link:
    """One way a result field of ``source`` feeds a parameter of ``target``, and the natural flow it carries:

    - ``record``: the item's own id (the next tool acts on the record the first one returned);
    - ``mention``: a value people pass on in messages (the refund id, a tracking link);
    - ``role``: a person or company the record relates to through a role (the requester's email);
    - ``link``: a value another service holds too (a charge's invoice number is an accounting invoice's);
    - ``type``: only the semantic types agree (not a flow a workflow follows).
    """

    field: str
    param: str
    semtype: str
    flow: Flow = "type"


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


def links_between(source: ToolInfo, target: ToolInfo, flows: Mapping[tuple[str, str], Flow] | None = None) -> list[Link]:
    """``flows``: the natural flow of each (entity, field) of the catalog (see ``natural_flows``)."""
    links: list[Link] = []
    for param in target.params:
        for semtype in accepted_types(target, param):
            if semtype in UNLINKED_TYPES:
                continue
            for f in source.fields:
                if f.semtype == semtype and not f.is_list:
                    flow: Flow = "type"
                    if source.entity and f.path == source.key_field and semtype == f"id:{source.entity}":
                        flow = "record"
                    elif flows is not None and source.entity:
                        flow = flows.get((source.entity, f.path.split(".", 1)[0]), "type")
                    links.append(Link(f.path, param.name, semtype, flow))
    return links


def natural_flows(catalog: Catalog) -> dict[tuple[str, str], Flow]:
    """For each entity field the catalog declares a flow on: ``mention``, ``link`` or ``role`` (in that order)."""
    out: dict[tuple[str, str], Flow] = {}
    for name, service in catalog.services.items():
        for entity, runtime in service.entities.items():
            key = f"{name}.{entity}"
            if runtime.definition.key.mention:
                out[(key, "id")] = "mention"
            for f in runtime.definition.fields:
                if f.mention:
                    out[(key, f.name)] = "mention"
                elif f.link:
                    out[(key, f.name)] = "link"
                elif f.role and f.role != "self":
                    out[(key, f.name)] = "role"
                elif f.role == "self":
                    out[(key, f.name)] = "role"
    return out


def build_graph(catalog: Catalog) -> nx.DiGraph[str]:
    """The dependency graph of every tool in ``catalog``."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    for key, tool in sorted(catalog.tools.items()):
        graph.add_node(key, service=tool.service, tool=tool.name, effect=tool.effect, anchor=is_anchor_tool(tool))
    # Index targets by accepted type so building stays linear in practice.
    by_type: dict[str, list[ToolInfo]] = {}
    for tool in catalog.tools.values():
        for param in tool.params:
            for semtype in accepted_types(tool, param):
                if semtype not in UNLINKED_TYPES:
                    by_type.setdefault(semtype, []).append(tool)
    flows = natural_flows(catalog)
    for source in sorted(catalog.tools.values(), key=lambda t: t.key):
        out_types = {f.semtype for f in source.fields if f.semtype and not f.is_list}
        targets = {t.key: t for semtype in out_types for t in by_type.get(semtype, ())}
        for key in sorted(targets):
            target = targets[key]
            if target.key == source.key:
                continue
            links = links_between(source, target, flows)
            if links:
                graph.add_edge(
                    source.key,
                    target.key,
                    links=tuple(links),
                    cross_service=source.service != target.service,
                    natural=any(link.flow != "type" for link in links),
                )
    return graph


def record_successors(graph: nx.DiGraph[str], tool_key: str, entity: str) -> list[str]:
    """Tools that act on the record ``tool_key`` returns (an edge carrying that record's own id), in name order."""
    found = []
    for target in graph.successors(tool_key):
        if any(link.flow == "record" and link.semtype == f"id:{entity}" for link in graph.edges[tool_key, target]["links"]):
            found.append(target)
    return sorted(found)


# -- the stage graph ---------------------------------------------------------------------------------


def stage_graph(catalog: Catalog) -> nx.DiGraph[str]:
    """The stages workflows are built from, as the catalog can fill them, and the order they follow each other in.

    Nodes: ``trigger:<channel>``, ``identify``, ``consult``, ``decide``, ``act:<intent>`` (every write intent some
    tool declares, with how many tools fill it), ``report:<channel>``, ``follow-up:<move>``. Edges: how a workflow
    goes from one to the next.
    """
    from composer.stages.channels import CHANNELS
    from composer.walk import MOVES

    graph: nx.DiGraph[str] = nx.DiGraph()
    intents: dict[str, int] = {}
    for tool in catalog.tools.values():
        if tool.is_write and tool.intent:
            intents[tool.intent] = intents.get(tool.intent, 0) + 1
    graph.add_node("identify", stage="identify", tools=sum(1 for t in catalog.tools.values() if not t.is_write))
    graph.add_node("consult", stage="consult", tools=0)
    graph.add_node("decide", stage="decide", tools=0)
    for channel in CHANNELS:
        graph.add_node(f"trigger:{channel}", stage="trigger", tools=0)
        graph.add_node(f"report:{channel}", stage="report", tools=0)
        graph.add_edge(f"trigger:{channel}", "identify")
    graph.add_edge("identify", "consult")
    graph.add_edge("consult", "decide")
    for intent, count in sorted(intents.items()):
        node = f"act:{intent}"
        graph.add_node(node, stage="act", tools=count)
        graph.add_edge("identify", node)
        graph.add_edge("decide", node)
        for channel in CHANNELS:
            graph.add_edge(node, f"report:{channel}")
    for move in MOVES:
        graph.add_node(f"follow-up:{move}", stage="follow-up", tools=0)
        for channel in CHANNELS:
            graph.add_edge(f"report:{channel}", f"follow-up:{move}")
    return graph


def successors_with_links(graph: nx.DiGraph[str], key: str) -> Iterator[tuple[str, tuple[Link, ...]]]:
    for target in graph.successors(key):
        yield target, graph.edges[key, target]["links"]


def reachable_services(graph: nx.DiGraph[str], start: str) -> set[str]:
    return {graph.nodes[n]["service"] for n in nx.descendants(graph, start) | {start}}


def max_reachable_services(graph: nx.DiGraph[str]) -> int:
    """The most services a walk from one anchor tool can reach (bounds ``--min-services``)."""
    best = 0
    for node, data in graph.nodes(data=True):
        if data["anchor"]:
            best = max(best, len(reachable_services(graph, node)))
    return best


# -- export ----------------------------------------------------------------------------------------


def graph_summary(graph: nx.DiGraph[str]) -> dict[str, Any]:
    cross = sum(1 for _, _, d in graph.edges(data=True) if d["cross_service"])
    flows: dict[str, int] = {}
    for _, _, d in graph.edges(data=True):
        for link in d["links"]:
            flows[link.flow] = flows.get(link.flow, 0) + 1
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
        "natural_edges": sum(1 for _, _, d in graph.edges(data=True) if d.get("natural")),
        "links_by_flow": dict(sorted(flows.items())),
        "service_edges": dict(sorted(service_edges.items())),
    }


def graph_to_json(graph: nx.DiGraph[str]) -> dict[str, Any]:
    nodes = [{"id": n, **graph.nodes[n]} for n in sorted(graph.nodes)]
    edges = [
        {
            "source": a,
            "target": b,
            "cross_service": d["cross_service"],
            "links": [{"field": link.field, "param": link.param, "semantic_type": link.semtype, "flow": link.flow} for link in d["links"]],
        }
        for a, b, d in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1]))
    ]
    return {"summary": graph_summary(graph), "nodes": nodes, "edges": edges}


def write_graph(graph: nx.DiGraph[str], out_dir: Path, *, picture: bool = True, stages: nx.DiGraph[str] | None = None) -> list[Path]:
    """Write ``graph.json``, ``graph.graphml``, the stage graph's ``stages.json`` and (optionally) the pictures."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    json_path = out_dir / "graph.json"
    json_path.write_text(json.dumps(graph_to_json(graph), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    written.append(json_path)
    flat: nx.DiGraph[str] = nx.DiGraph()
    for node in sorted(graph.nodes):
        flat.add_node(node, **graph.nodes[node])
    for a, b, d in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1])):
        flat.add_edge(
            a,
            b,
            cross_service=d["cross_service"],
            links="; ".join(f"{link.field}->{link.param} ({link.semtype}, {link.flow})" for link in d["links"]),
        )
    graphml_path = out_dir / "graph.graphml"
    nx.write_graphml(flat, graphml_path)
    written.append(graphml_path)
    if stages is not None:
        stages_path = out_dir / "stages.json"
        body = {"nodes": [{"id": n, **stages.nodes[n]} for n in sorted(stages.nodes)],
                "edges": [{"source": a, "target": b} for a, b in sorted(stages.edges)]}
        stages_path.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        written.append(stages_path)
    if picture:
        from composer.draw import draw_service_graph, draw_stage_graph, draw_tool_graph

        written.append(draw_tool_graph(graph, out_dir / "graph.png"))
        written.append(draw_service_graph(graph, out_dir / "services.png"))
        if stages is not None:
            written.append(draw_stage_graph(stages, out_dir / "stages.png"))
    return written
