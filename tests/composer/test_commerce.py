"""The commerce, shipping and esign archetypes: kept, solvable by their reference, failed by wrong solutions."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from composer.archetypes import commerce as commerce_archetypes
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from mcp_services.tasks.spec import TaskSpec
from tests.composer.archetype_checks import (
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    passes,
)

SERVICES = ("commerce", "shipping", "esign", "mailbox", "chat", "files")
IDS = tuple(a.id for a in ARCHETYPES.values() if a.build.__module__ == commerce_archetypes.__name__)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=2 * len(IDS), seed=0, services=SERVICES, archetypes=IDS), catalog)


def _of(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport], archetype: str
) -> tuple[Runner, list[TaskSpec]]:
    """A runner for the set's world and the tasks of one archetype (at least one)."""
    tasks = [t for t in generated[0] if t.scenario is not None and t.scenario.archetype == archetype]
    assert tasks, archetype
    return Runner(catalog, tasks[0].world_seed), tasks


def test_each_service_serves_at_least_two_archetypes() -> None:
    assert len(IDS) >= 6
    uses = Counter(s for a in IDS for s in ARCHETYPES[a].services)
    assert all(uses[s] >= 2 for s in ("commerce", "shipping", "esign")), uses


def test_generation_keeps_the_candidates_of_every_archetype(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, report = generated
    assert report.kept >= 0.85 * report.candidates, report.summary()
    kept = Counter(t.scenario.archetype for t in tasks if t.scenario is not None)
    assert set(kept) == set(IDS), report.details
    assert any(t.traps for t in tasks)
    assert any(t.scenario is not None and t.scenario.policy_in_data for t in tasks)
    assert all(t.scenario is not None and t.scenario.trigger is not None for t in tasks)


def test_every_reference_solution_passes_and_every_counterfactual_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, generated[0])


def test_leaving_out_any_write_fails(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_write_is_needed(catalog, generated[0])


def test_a_refund_where_the_delivery_policy_says_escalate_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, parcels = _of(catalog, generated, "parcel-exception")
    escalated = [t for t in parcels if any(s.tool == "forward_message" for s in t.plan)]
    refunded = [t for t in parcels if any(s.tool == "refund_order" for s in t.plan)]
    assert escalated or refunded
    for task in escalated:
        cf = next(c for c in task.counterfactuals if c.id == "ignores-policy")
        assert any(s.tool == "refund_order" for s in cf.plan)
        assert not passes(task, runner, [*task.plan, *[s for s in cf.plan if s.tool == "refund_order"]]), task.id
    for task in refunded:
        # Forwarding to the manager instead of refunding a small order leaves the customer without their money.
        plan = [s for s in task.plan if s.tool != "refund_order"]
        assert not passes(task, runner, plan), task.id


def test_a_goodwill_code_of_the_wrong_size_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, goodwill = _of(catalog, generated, "goodwill-discount")
    for task in goodwill:
        plan = []
        for step in task.plan:
            if step.tool == "create_discount_code":
                step = step.model_copy(update={"arguments": {**step.arguments, "value": step.arguments["value"] + 5}})
            plan.append(step)
        assert not passes(task, runner, plan), task.id


def test_the_address_fix_must_reach_the_shipment_too(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, fixes = _of(catalog, generated, "order-address-fix")
    for task in fixes:
        address = next(s.arguments["shipping_address"] for s in task.plan if s.tool == "update_order")
        assert address in json.dumps([r.row for r in task.setup])  # the new address is in the customer's email
        assert address not in task.instruction or task.scenario is not None and task.scenario.phrasing == "guided"
        assert not passes(task, runner, [s for s in task.plan if s.tool != "update_shipment"]), task.id
