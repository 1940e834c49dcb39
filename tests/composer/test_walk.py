"""Random walks follow the dependency graph, meet their constraints, and repeat under a seed."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from composer.catalog import Catalog
from composer.plan import Composed, refs_of, step_refs
from composer.runner import Runner
from composer.walk import Walk, WalkConfig, WalkFailed, Walker, WalkIndex


def _walks(catalog: Catalog, graph: nx.DiGraph, kind: str, count: int, seed: str) -> list[Walk]:
    index = WalkIndex(catalog, graph)
    runner = Runner(catalog, 0, memo=True)
    walks = []
    for i in range(count * 3):
        config = WalkConfig(kind=kind, target_len=6, max_calls=9, min_services=3)  # type: ignore[arg-type]
        try:
            walks.append(Walker(index, runner, random.Random(f"{seed}:{i}"), config).run())
        except WalkFailed:
            continue
        if len(walks) == count:
            break
    assert len(walks) == count, "walks kept failing"
    return walks


@pytest.fixture(scope="module")
def act_walks(catalog: Catalog, graph: nx.DiGraph) -> list[Walk]:
    return _walks(catalog, graph, "act", 6, "act")


@pytest.fixture(scope="module")
def ask_walks(catalog: Catalog, graph: nx.DiGraph) -> list[Walk]:
    return _walks(catalog, graph, "ask", 3, "ask")


def test_every_step_after_the_anchor_follows_a_graph_edge(
    catalog: Catalog, graph: nx.DiGraph, act_walks: list[Walk], ask_walks: list[Walk]
) -> None:
    for walk in act_walks + ask_walks:
        assert graph.nodes[f"{walk.specs[0].service}.{walk.specs[0].tool}"]["anchor"]
        assert not step_refs(walk.specs[0])
        for j, spec in enumerate(walk.specs[1:], 1):
            assert all(ref.step < j for ref in step_refs(spec))
            target = f"{spec.service}.{spec.tool}"
            # Values passed as arguments (not quoted inside text the agent writes) travel along edges.
            typed = [ref for _, expr in spec.args if not isinstance(expr, Composed) for ref in refs_of(expr)]
            assert typed, f"step {j} uses nothing found before it"
            for ref in typed:
                source = walk.specs[ref.step]
                assert graph.has_edge(f"{source.service}.{source.tool}", target)


def test_walks_meet_their_constraints(catalog: Catalog, act_walks: list[Walk], ask_walks: list[Walk]) -> None:
    for walk in act_walks + ask_walks:
        assert len({s.service for s in walk.specs}) >= 3
        assert 6 <= len(walk.specs) <= 9
    for walk in act_walks:
        last = walk.specs[-1]
        assert catalog.tool(last.service, last.tool).is_write
        assert walk.answer is None
    for walk in ask_walks:
        assert walk.answer is not None


def test_pruning_leaves_no_step_whose_result_goes_unused(catalog: Catalog, act_walks: list[Walk]) -> None:
    for walk in act_walks:
        used = {r.step for spec in walk.specs for r in step_refs(spec)}
        for j, spec in enumerate(walk.specs):
            if not catalog.tool(spec.service, spec.tool).is_write:
                assert j in used or (walk.answer is not None and walk.answer.step == j)


def test_the_same_seed_gives_the_same_walk(catalog: Catalog, graph: nx.DiGraph) -> None:
    first = _walks(catalog, graph, "act", 2, "repeat")
    second = _walks(catalog, graph, "act", 2, "repeat")
    assert [w.specs for w in first] == [w.specs for w in second]
