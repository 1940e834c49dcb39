"""The dependency graph: edges follow semantic types, anchors are reads, exports are readable."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx

from composer.catalog import Catalog, load_catalog
from composer.graph import UNLINKED_TYPES, accepted_types, build_graph, graph_summary, write_graph


def test_every_edge_links_a_result_field_to_a_parameter_of_the_same_semantic_type(catalog: Catalog, graph: nx.DiGraph) -> None:
    assert graph.number_of_edges() > 0
    for source, target, data in graph.edges(data=True):
        a, b = catalog.tools[source], catalog.tools[target]
        for link in data["links"]:
            field = a.field_of(link.field)
            param = b.param(link.param)
            assert field is not None and param is not None
            assert field.semtype == link.semtype
            assert link.semtype in accepted_types(b, param)
            assert link.semtype not in UNLINKED_TYPES


def test_cross_service_edges_exist_and_are_marked(catalog: Catalog, graph: nx.DiGraph) -> None:
    cross = [(a, b) for a, b, d in graph.edges(data=True) if d["cross_service"]]
    assert cross
    assert all(catalog.tools[a].service != catalog.tools[b].service for a, b in cross)
    # An email found in the CRM can address a mail.
    assert graph.has_edge("crm.search_contacts", "mailbox.send_email")


def test_anchor_tools_are_reads_that_take_a_stated_fact(graph: nx.DiGraph) -> None:
    anchors = [n for n, d in graph.nodes(data=True) if d["anchor"]]
    assert anchors
    assert all(graph.nodes[n]["effect"] == "read" for n in anchors)
    assert "crm.search_contacts" in anchors


def test_polymorphic_ids_are_linked_through_their_type_parameter(catalog: Catalog, graph: nx.DiGraph) -> None:
    # crm.add_note takes entity_type + an untyped entity_id: a contact id feeds it.
    assert graph.has_edge("crm.search_contacts", "crm.add_note")


def test_graph_files_are_written_and_load_back(tmp_path: Path) -> None:
    catalog = load_catalog(["crm", "helpdesk"])
    graph = build_graph(catalog)
    written = write_graph(graph, tmp_path, picture=True)
    names = {p.name for p in written}
    assert {"graph.json", "graph.graphml", "graph.png", "services.png"} <= names
    data = json.loads((tmp_path / "graph.json").read_text())
    assert data["summary"] == graph_summary(graph)
    loaded = nx.read_graphml(tmp_path / "graph.graphml")
    assert loaded.number_of_edges() == graph.number_of_edges()
    assert (tmp_path / "graph.png").stat().st_size > 10_000
