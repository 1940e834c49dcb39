"""Composition over stages: channels, lookups by what the agent knows, acts by intent, walks, requests, and the
grades that read what messages say and fail every shortcut."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from composer.catalog import Catalog, load_catalog
from composer.content import EMPTY_TEXT
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.graph import build_graph, record_successors, stage_graph
from composer.kinds import MESSAGE_INTENTS, kinds_of
from composer.runner import Runner
from composer.scenario import ARCHETYPES, Scenario, Skip
from composer.stages.acts import act
from composer.stages.channels import CUSTOMER, Ask, arrive, reply
from composer.stages.lookup import lookup
from composer.stats import task_stats
from composer.verify import reference_answer, run_plan, verify_task
from mcp_services.tasks.checks import CarriedValue, NoCollateral
from mcp_services.tasks.spec import PlanStep, TaskSpec

REQUESTS = tuple(sorted(a for a in ARCHETYPES if a.startswith("request-")))


@pytest.fixture(scope="module")
def library() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def requested(library: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=60, seed=3, archetypes=REQUESTS), library)


def _scenario(catalog: Catalog, runner: Runner, seed: int = 0) -> Scenario:
    runner.fresh()
    return Scenario(catalog, runner, random.Random(seed), ARCHETYPES["double-charge-refund"])


def test_a_customer_request_arrives_on_every_channel_and_is_answered_on_it(library: Catalog) -> None:
    runner = Runner(library, 0)
    person = next(p for p in runner.world.customers if p.phone)
    seen: dict[str, str] = {}
    for seed in range(60):
        s = _scenario(library, runner, seed)
        try:
            trigger = arrive(s, person, Ask("Charged twice", "I was charged twice for INV-0001, can you refund one?",
                                           relay="they were charged twice for INV-0001."))
        except Skip:
            continue
        step = reply(s, trigger, ["Refunded, sorry about that."], say="reply")
        seen.setdefault(trigger.channel, f"{step.service}.{step.tool}")
        assert s.notes[trigger.step.index].stage == "trigger"
        assert s.trigger == trigger.rec and s.arrival is trigger
    assert set(seen) == set(CUSTOMER), seen
    assert seen["email"] == "mailbox.reply_to_message"
    assert seen["sms"] == "sms.reply_to_message"
    assert seen["ticket"] == "helpdesk.add_ticket_reply"
    assert seen["chat"] == "chat.reply_in_thread"
    assert seen["form"] == "mailbox.send_email"


def test_a_lookup_finds_the_record_through_a_read_of_its_kind_with_what_the_agent_knows(library: Catalog) -> None:
    runner = Runner(library, 0)
    s = _scenario(library, runner)
    contact = s.records("crm", "contact")[3]
    step = lookup(s, contact, {"query": contact["name"], "email": contact["email"]}, say="find them")
    assert step.item is not None and step.item["id"] == contact.key
    assert library.tool(step.service, step.tool).entity == "crm.contact"
    assert len(s.specs[step.index].args) <= 2  # a person searches by one thing, then narrows
    with pytest.raises(Skip, match="no read"):
        lookup(s, contact, {"query": "nobody by that name"}, say="find them")


def test_an_act_is_chosen_by_intent_on_the_records_kind(library: Catalog) -> None:
    runner = Runner(library, 0)
    s = _scenario(library, runner)
    ticket = next(t for t in s.records("helpdesk", "ticket") if t["status"] == "open")
    found = lookup(s, ticket, {"id": ticket.key}, say="open it")
    closed = act(s, "close", found, say="close it")
    assert closed.service == "helpdesk" and library.tool("helpdesk", closed.tool).intent == "close"
    with pytest.raises(Skip, match="no tool of helpdesk does 'refund'"):
        act(s, "refund", found, say="refund it")


def test_a_walk_that_cannot_finish_a_move_leaves_no_trace(library: Catalog) -> None:
    runner = Runner(library, 0)
    s = _scenario(library, runner)
    ticket = next(t for t in s.records("helpdesk", "ticket") if t["status"] == "open")
    found = lookup(s, ticket, {"id": ticket.key}, say="open it")
    before = (len(s.specs), runner.episode.stores["helpdesk"].snapshot())
    with pytest.raises(Skip):
        with s.attempt():
            act(s, "close", found, say="close it")
            raise Skip("the move could not finish")
    assert len(s.specs) == before[0]
    assert runner.episode.stores["helpdesk"].snapshot() == before[1]


def test_walks_add_follow_ups_along_record_flows_of_the_graph(library: Catalog) -> None:
    graph = build_graph(library)
    for kind in kinds_of(library):
        for reader in kind.readers:
            if reader.key_field != "id" or reader.entity != kind.key:
                continue
            successors = set(record_successors(graph, reader.key, kind.key))
            assert {t.key for t in kind.writers if any(p.semtype == f"id:{kind.key}" for p in t.params if p.required)} <= successors


def test_requests_compose_over_many_services_and_every_message_states_its_facts(
    library: Catalog, requested: tuple[list[TaskSpec], GenerateReport]
) -> None:
    tasks, report = requested
    assert report.kept >= 0.55 * report.candidates, report.summary()
    services = Counter(s for t in tasks for s in t.services)
    assert len(services) >= 12, services
    runner = Runner(library, tasks[0].world_seed)
    for task in tasks:
        assert verify_task(task, runner) == [], task.id
        assert task.stats["message_steps_checked"] == task.stats["message_steps"] >= 1


def test_a_report_that_says_nothing_fails_every_kept_task(library: Catalog, requested: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, _ = requested
    runner = Runner(library, tasks[0].world_seed)
    for task in tasks:
        lazy: list[PlanStep] = []
        for step in task.plan:
            tool = library.tool(step.service, step.tool)
            text = next((p for p in ("body", "text", "note", "content") if p in step.arguments), None)
            if tool.is_write and tool.intent in MESSAGE_INTENTS and text:
                step = step.model_copy(update={"arguments": {**step.arguments, text: EMPTY_TEXT}})
            lazy.append(step)
        runner.fresh(task.setup)
        run_plan(runner.call, lazy, stop=False)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, task.id
        assert any(cf.id == "empty-report" for cf in task.counterfactuals), task.id


def test_a_value_the_agent_creates_is_checked_through_its_own_record(library: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=20, seed=3, archetypes=("request-create",)), library)
    carried = [c for t in tasks for c in t.checks if isinstance(c, CarriedValue)]
    assert carried
    for check in carried:
        assert check.source_column and check.column


def test_incidental_changes_are_not_collateral(library: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=20, seed=5, archetypes=("double-charge-refund",)), library)
    task = next(t for t in tasks if any(s.service == "mailbox" for s in t.plan))
    runner = Runner(library, task.world_seed)
    runner.fresh(task.setup)
    run_plan(runner.call, task.plan, stop=True)
    # Working through the inbox: unread messages marked read and starred along the way.
    inbox = runner.call("mailbox", "search_messages", {"is_unread": True})
    for item in inbox.data["items"][:3]:
        runner.call("mailbox", "modify_message", {"message_id": item["id"], "remove_labels": ["UNREAD"], "add_labels": ["STARRED"]})
    assert task.grade(runner.diff(), reference_answer(task)).passed
    collateral = next(c for c in task.checks if isinstance(c, NoCollateral))
    assert collateral.incidental.get("mailbox", {}).get("messages") == ["label_ids"]


def test_stats_show_the_space_the_set_covers(requested: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, _ = requested
    stats = task_stats(tasks, {"crm": ["search_contacts", "archive_contact"]})
    assert stats["distinct_tool_sequences"] <= len(tasks) and stats["distinct_service_sets"] >= 2
    assert stats["channels"] and set(stats["channels"]) <= {"email", "chat"}
    assert sum(stats["calls_histogram"].values()) == len(tasks)
    assert "empty-report" in stats["near_misses"]
    assert 0.0 <= stats["tool_coverage"] <= 1.0
    assert set(stats["difficulty"]) == {"records_combined", "hops", "traps", "rule_branches", "distractor_candidates"}


def test_the_stage_graph_holds_every_channel_and_every_intent_some_tool_fills(library: Catalog) -> None:
    graph = stage_graph(library)
    assert {f"trigger:{c}" for c in CUSTOMER} <= set(graph.nodes)
    intents = {t.intent for t in library.tools.values() if t.is_write and t.intent}
    assert {f"act:{i}" for i in intents} <= set(graph.nodes)
    assert graph.nodes["act:refund"]["tools"] == 2


def test_composition_is_byte_stable(library: Catalog) -> None:
    config = GenerateConfig(n=12, seed=11, archetypes=REQUESTS)
    first = [t.to_json() for t in generate(config, library)[0]]
    second = [t.to_json() for t in generate(config, library)[0]]
    assert first == second and first



def test_a_word_to_a_colleague_passes_by_email_or_in_chat(library: Catalog) -> None:
    from mcp_services.tasks.checks import AnyOf

    tasks, _ = generate(GenerateConfig(n=40, seed=2, archetypes=("double-charge-refund", "request-update", "request-close")), library)
    told = [t for t in tasks if any(isinstance(c, AnyOf) for c in t.checks)]
    assert told
    runner = Runner(library, told[0].world_seed)
    switched = 0
    for task in told:
        plan = list(task.plan)
        for i, step in enumerate(plan):
            if step.tool == "post_message" and i and plan[i - 1].tool == "open_direct_message":
                to = plan[i - 1].arguments["user_email"]
                email = PlanStep(service="mailbox", tool="send_email",
                                 arguments={"to": [to], "subject": "FYI", "body": step.arguments["text"]})
                plan = plan[: i - 1] + [email] + plan[i + 1:]
                break
        else:
            continue
        switched += 1
        runner.fresh(task.setup)
        run_plan(runner.call, plan, stop=True)
        assert task.grade(runner.diff(), reference_answer(task)).passed, task.id
        lazy = [s.model_copy(update={"arguments": {**s.arguments, "body": EMPTY_TEXT}}) if s.tool == "send_email" and
                s.arguments.get("to") == [to] else s for s in plan]
        runner.fresh(task.setup)
        run_plan(runner.call, lazy, stop=True)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, task.id
    assert switched
