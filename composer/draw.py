"""Pictures of the dependency graph a person can read (matplotlib, imported lazily, Agg backend).

Two pictures: every tool, grouped by service on a ring with cross-service edges in colour; and one
node per service with an arrow's width showing how many tool edges cross between them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import networkx as nx


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _service_colours(services: list[str]) -> dict[str, Any]:
    plt = _pyplot()
    cmap = plt.get_cmap("tab10" if len(services) <= 10 else "tab20")
    return {s: cmap(i % cmap.N) for i, s in enumerate(services)}


def _tool_positions(graph: nx.DiGraph[str], services: list[str]) -> dict[str, tuple[float, float]]:
    positions: dict[str, tuple[float, float]] = {}
    big = 10.0
    for i, service in enumerate(services):
        angle = 2 * math.pi * i / max(1, len(services))
        cx, cy = big * math.cos(angle), big * math.sin(angle)
        tools = sorted(n for n, d in graph.nodes(data=True) if d["service"] == service)
        radius = 1.0 + 0.09 * len(tools)
        for j, node in enumerate(tools):
            a = 2 * math.pi * j / max(1, len(tools))
            positions[node] = (cx + radius * math.cos(a), cy + radius * math.sin(a))
    return positions


def draw_tool_graph(graph: nx.DiGraph[str], path: Path) -> Path:
    plt = _pyplot()
    services = sorted({d["service"] for _, d in graph.nodes(data=True)})
    colours = _service_colours(services)
    pos = _tool_positions(graph, services)
    fig, ax = plt.subplots(figsize=(22, 22))
    try:
        from matplotlib.collections import LineCollection

        # Thousands of edges: one LineCollection each (per-edge arrow patches take minutes).
        inner = [(pos[a], pos[b]) for a, b, d in graph.edges(data=True) if not d["cross_service"]]
        cross = [(a, b) for a, b, d in graph.edges(data=True) if d["cross_service"]]
        ax.add_collection(LineCollection(inner, colors="#bbbbbb", linewidths=0.3, zorder=1))
        ax.add_collection(
            LineCollection(
                [(pos[a], pos[b]) for a, b in cross],
                colors=[colours[graph.nodes[a]["service"]] for a, _ in cross],
                linewidths=0.3,
                alpha=0.25,
                zorder=1,
            )
        )
        for effect, shape in (("read", "o"), ("write", "s")):
            nodes = [n for n, d in graph.nodes(data=True) if d["effect"] == effect]
            nx.draw_networkx_nodes(
                graph,
                pos,
                nodelist=nodes,
                ax=ax,
                node_shape=shape,
                node_size=60,
                node_color=[colours[graph.nodes[n]["service"]] for n in nodes],
                edgecolors=["black" if graph.nodes[n]["anchor"] else "none" for n in nodes],
            )
        labels = {n: graph.nodes[n]["tool"] for n in graph.nodes}
        nx.draw_networkx_labels(graph, pos, labels=labels, ax=ax, font_size=5)
        for i, service in enumerate(services):
            angle = 2 * math.pi * i / max(1, len(services))
            ax.text(
                13.8 * math.cos(angle),
                13.8 * math.sin(angle),
                service,
                fontsize=18,
                ha="center",
                va="center",
                color=colours[service],
                weight="bold",
            )
        ax.set_title(
            f"{graph.number_of_nodes()} tools, {graph.number_of_edges()} edges "
            f"({len(cross)} across services, coloured by their source service). Squares write, circles read; "
            "outlined nodes are anchor tools.",
            fontsize=14,
        )
        ax.set_axis_off()
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)
    return path


def draw_service_graph(graph: nx.DiGraph[str], path: Path) -> Path:
    plt = _pyplot()
    services = sorted({d["service"] for _, d in graph.nodes(data=True)})
    colours = _service_colours(services)
    summary: nx.DiGraph[str] = nx.DiGraph()
    summary.add_nodes_from(services)
    for a, b, d in graph.edges(data=True):
        if d["cross_service"]:
            sa, sb = graph.nodes[a]["service"], graph.nodes[b]["service"]
            weight = summary.edges[sa, sb]["weight"] + 1 if summary.has_edge(sa, sb) else 1
            summary.add_edge(sa, sb, weight=weight)
    pos = nx.circular_layout(summary)
    fig, ax = plt.subplots(figsize=(11, 11))
    try:
        top = max([d["weight"] for _, _, d in summary.edges(data=True)] or [1])
        for a, b, d in summary.edges(data=True):
            nx.draw_networkx_edges(
                summary,
                pos,
                edgelist=[(a, b)],
                ax=ax,
                width=0.5 + 6.0 * d["weight"] / top,
                edge_color=[colours[a]],
                alpha=0.6,
                arrows=True,
                arrowsize=14,
                connectionstyle="arc3,rad=0.12",
                node_size=2600,
            )
        nx.draw_networkx_nodes(summary, pos, ax=ax, node_size=2600, node_color=[colours[s] for s in services])
        nx.draw_networkx_labels(summary, pos, ax=ax, font_size=11, font_weight="bold")
        ax.set_title("Services, with arrows as wide as the number of tool edges from one to the other", fontsize=12)
        ax.set_axis_off()
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)
    return path


_STAGE_COLUMNS = ("trigger", "identify", "consult", "decide", "act", "report", "follow-up")


def draw_stage_graph(graph: nx.DiGraph[str], path: Path) -> Path:
    """The stage graph as columns, left to right: trigger channels, identify, consult, decide, acts, reports, follow-ups."""
    plt = _pyplot()
    columns: dict[str, list[str]] = {stage: [] for stage in _STAGE_COLUMNS}
    for node in sorted(graph.nodes):
        columns[graph.nodes[node]["stage"]].append(node)
    pos: dict[str, tuple[float, float]] = {}
    for x, stage in enumerate(_STAGE_COLUMNS):
        nodes = columns[stage]
        for y, node in enumerate(nodes):
            pos[node] = (x * 3.0, (len(nodes) - 1) / 2 - y)
    fig, ax = plt.subplots(figsize=(16, 14))
    try:
        nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="#cccccc", width=0.4, arrows=False)
        colours = _service_colours(list(_STAGE_COLUMNS))
        nx.draw_networkx_nodes(graph, pos, ax=ax, node_size=240,
                               node_color=[colours[graph.nodes[n]["stage"]] for n in graph.nodes])
        labels = {n: f"{n} ({graph.nodes[n]['tools']})" if graph.nodes[n]["tools"] else n for n in graph.nodes}
        nx.draw_networkx_labels(graph, pos, labels=labels, ax=ax, font_size=7)
        ax.set_title("Stages: how a workflow goes from what arrived to the follow-ups (acts: how many tools fill each intent)",
                     fontsize=12)
        ax.set_axis_off()
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)
    return path
