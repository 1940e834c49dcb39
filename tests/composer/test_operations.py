"""The operations archetypes (meetings moved, documents shared, rooms booked, reminders, balances): kept, solvable by
their reference, failed by wrong solutions, fair to right ones."""

from __future__ import annotations


import pytest

from composer.archetypes import operations as operations_archetypes
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_archetype_kept,
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    changed,
    passes,
    step_of,
    of,
)

SERVICES = ("calendar", "files", "accounting", "crm", "sms", "mailbox", "chat")
IDS = tuple(a.id for a in ARCHETYPES.values() if a.build.__module__ == operations_archetypes.__name__)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=3 * len(IDS), seed=0, services=SERVICES, archetypes=IDS), catalog)





def test_generation_keeps_the_candidates_of_every_archetype(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_archetype_kept(generated, IDS)
    tasks = generated[0]
    assert any(t.traps for t in tasks) and any(t.scenario is not None and t.scenario.policy_in_data for t in tasks)


def test_every_reference_solution_passes_and_every_counterfactual_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, generated[0])


def test_leaving_out_any_write_fails(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_write_is_needed(catalog, [t for t in generated[0] if t.answer is None])


def test_a_move_that_keeps_the_guests_answers_passes_but_another_time_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    """Regression: the move check demanded the tool's default reset of the attendees' responses."""
    tasks = of(generated[0], "meeting-reschedule")
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert passes(task, runner, changed(task, "move_event", reset_responses=False)), task.id
        assert passes(task, runner, changed(task, "move_event", reset_responses=True)), task.id
        new_start = step_of(task, "move_event").arguments["new_start"]
        later = new_start[:11] + f"{int(new_start[11:13]) + 1:02d}" + new_start[13:]
        assert not passes(task, runner, changed(task, "move_event", new_start=later)), task.id


def test_a_room_elsewhere_or_bigger_than_needed_fails(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    """Regression: a 60-seat venue in another city passed for five people."""
    tasks = of(generated[0], "book-room-for-meeting")
    runner = Runner(catalog, tasks[0].world_seed)
    city = runner.world.home.city
    tried = 0
    for task in tasks:
        booked = step_of(task, "book_room")
        runner.fresh(task.setup)
        event = runner.call("calendar", "get_event", {"event_id": booked.arguments["event_id"]}).data
        free = runner.call("calendar", "list_rooms", {"start": event["start"], "end": event["end"], "only_available": True}).data
        chosen = next(r for r in free if r["id"] == booked.arguments["room_id"])
        assert chosen["city"] == city, task.id
        for room in free:
            if room["id"] != chosen["id"] and room["capacity"] >= chosen["capacity"]:
                assert not passes(task, runner, changed(task, "book_room", room_id=room["id"])), (task.id, room["name"])
                tried += room["city"] != city
    assert tried, "no venue in another city was free to try"


def test_a_contract_shared_as_editor_breaks_the_sharing_rules(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    tasks = of(generated[0], "share-document")
    runner = Runner(catalog, tasks[0].world_seed)
    for task in [t for t in tasks if any(step.tool == "share_file" for step in t.plan)]:
        # With the rules or without ("read-only access"), editor access is not what was asked.
        assert not passes(task, runner, changed(task, "share_file", role="editor")), task.id


def test_an_agreement_shared_already_is_not_shared_again(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    """The customer's premise is false (they can open it already): nothing changes, and the reply says it is shared
    already; sharing it again with more access fails."""
    tasks = [t for t in of(generated[0], "share-document")
             if any(d.get("kind") == "premise" and d.get("default") is False for d in t.stats["decisions"])]
    assert tasks, "no task whose agreement was shared already"
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert not any(step.tool == "share_file" for step in task.plan), task.id
        assert passes(task, runner, task.plan), task.id
        assert task.scenario is not None
        file_id = next(r.key for r in task.scenario.references if r.table == "files")
        runner.fresh(task.setup)
        viewers = runner.call("files", "get_file", {"file_id": file_id}).data["shared_with"]
        again = PlanStep(service="files", tool="share_file", arguments={"file_id": file_id, "email": viewers[0], "role": "editor"})
        assert not passes(task, runner, [*task.plan, again]), task.id


def test_the_balance_answer_nets_unapplied_credit_and_names_no_other_figure(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    tasks = of(generated[0], "outstanding-balance-question")
    for task in tasks:
        assert task.grade({}, f"They owe {task.answer}.").criteria["answer"], task.id
        listed = next(c for c in task.counterfactuals if c.id == "list-answer")
        assert not task.grade({}, listed.answer).criteria["answer"], task.id
