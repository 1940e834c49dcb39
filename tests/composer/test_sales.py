"""The sales archetypes (lost deals, won-deal handoffs, calls customers ask for): kept, solvable by their reference,
failed by wrong solutions."""

from __future__ import annotations


import pytest

from composer.archetypes import sales as sales_archetypes
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from mcp_services.tasks.spec import TaskSpec
from tests.composer.archetype_checks import (
    assert_every_archetype_kept,
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    changed,
    passes,
    step_of,
    of,
)

SERVICES = ("crm", "calendar", "files", "mailbox", "chat", "sms")
IDS = tuple(a.id for a in ARCHETYPES.values() if a.build.__module__ == sales_archetypes.__name__)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=3 * len(IDS), seed=0, services=SERVICES, archetypes=IDS), catalog)




def test_generation_keeps_the_candidates_of_every_archetype(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_archetype_kept(generated, IDS)
    tasks = generated[0]
    channels = {t.scenario.channel for t in tasks if t.scenario is not None and t.scenario.archetype != "closed-won-handoff"}
    assert len(channels) >= 2, channels  # a customer's message comes in on whatever they use


def test_every_reference_solution_passes_and_every_counterfactual_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, generated[0])


def test_leaving_out_any_write_fails(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_write_is_needed(catalog, generated[0])


def test_a_lost_deal_needs_the_reason_the_request_or_the_playbook_gives(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    tasks = of(generated[0], "lost-deal-log")
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert not passes(task, runner, changed(task, "update_deal_stage", lost_reason="Other")), task.id
        assert not passes(task, runner, changed(task, "update_deal_stage", stage="won", lost_reason=None)), task.id


def test_a_welcome_or_a_confirmation_without_its_facts_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner = Runner(catalog, generated[0][0].world_seed)
    for task in [*of(generated[0], "closed-won-handoff"), *of(generated[0], "meeting-request")]:
        for n, step in enumerate(task.plan):
            key = next((k for k in ("body", "text") if isinstance(step.arguments.get(k), str)), None)
            if key is None or step.tool not in ("send_email", "reply_to_message", "reply_in_thread", "send_message",
                                                 "add_ticket_reply", "post_message"):
                continue
            vague = step.model_copy(update={"arguments": {**step.arguments, key: "All set, speak soon."}})
            assert not passes(task, runner, [vague if i == n else s for i, s in enumerate(task.plan)]), (task.id, step.tool)
