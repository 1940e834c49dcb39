"""Engagement archetypes (voice, meetings, tasks, marketing): kept, read as a colleague's requests, a reference
solution passes and a wrong one (a step left out, the decoy acted on, the house rule ignored) fails."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from composer.audit import audit_records
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.verify import leaks, verify_task
from mcp_services.kernel.store import rows_of
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import assert_every_write_is_needed, changed, passes, step_of, of

ENGAGEMENT = ("marketing", "meetings", "tasks", "voice")
SERVICES = ("crm", "mailbox", "chat", "helpdesk", *ENGAGEMENT)
ARCHETYPE_IDS = (
    "voicemail-callback-meeting", "voicemail-billing-ticket", "vip-missed-call-callback", "webinar-customer-followups",
    "won-deal-kickoff", "zoom-meeting-reschedule", "unsubscribe-request", "campaign-frequency-cap", "segment-campaign-draft",
)
PER_ARCHETYPE = 2
#: Record ids as the services print them (call_0042, mtg_0007...): a request never spells one out.
RAW_ID = re.compile(r"\b(?:call|cb|cnote|ctc|agt|mtg|reg|rec|cmp|seg|mem|aud|tsk|prj|sec|msg|tk|ct|co|deal)_\d{3,}\b")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    config = GenerateConfig(n=PER_ARCHETYPE * len(ARCHETYPE_IDS), seed=0, services=SERVICES, archetypes=ARCHETYPE_IDS,
                            distractor_services=0)
    return generate(config, catalog)


@pytest.fixture(scope="module")
def tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> list[TaskSpec]:
    return generated[0]


def _archetype(task: TaskSpec) -> str:
    assert task.scenario is not None
    return task.scenario.archetype


def test_every_engagement_archetype_is_kept_and_each_service_serves_several(
    generated: tuple[list[TaskSpec], GenerateReport],
) -> None:
    tasks, report = generated
    assert report.kept >= 0.85 * report.candidates, report.summary()
    assert set(Counter(_archetype(t) for t in tasks)) == set(ARCHETYPE_IDS), report.summary()
    for service in ENGAGEMENT:
        users = {_archetype(t) for t in tasks if any(step.service == service for step in t.plan)}
        assert len(users) >= 2, (service, users)


def test_the_reference_solution_passes_on_a_fresh_episode(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert verify_task(task, runner) == [], task.id


def _wrong(catalog: Catalog, task: TaskSpec, plan: list[PlanStep]) -> bool:
    """Whether running ``plan`` on the task's world fails it."""
    return not passes(task, Runner(catalog, task.world_seed), plan)


def test_a_solution_that_leaves_out_any_requested_change_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_every_write_is_needed(catalog, tasks)


def _aimed_at(value: Any, real: str, decoy: str) -> Any:
    if isinstance(value, str):
        return value.replace(real, decoy)
    if isinstance(value, list):
        return [_aimed_at(v, real, decoy) for v in value]
    return value


def test_a_solution_that_acts_on_the_decoy_instead_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    trapped = [t for t in tasks if t.traps]
    assert {_archetype(t) for t in trapped} >= {"voicemail-billing-ticket", "unsubscribe-request"}
    for task in trapped:
        for trap in task.traps:
            prefix = trap.key.rsplit("_", 1)[0] + "_"
            wrong: list[PlanStep] = []
            for step in task.plan:
                args = dict(step.arguments)
                if catalog.tool(step.service, step.tool).is_write and step.service == trap.service:
                    for name, value in args.items():
                        if isinstance(value, str) and value.startswith(prefix) and value != trap.key:
                            args[name] = _aimed_at(value, value, trap.key)
                wrong.append(step.model_copy(update={"arguments": args}))
            assert wrong != task.plan, (task.id, trap.key)
            assert _wrong(catalog, task, wrong), (task.id, trap.description)


def test_a_request_with_a_house_rule_fails_when_the_rule_is_ignored(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    ruled = [t for t in tasks if t.scenario and t.scenario.policy_in_data]
    assert len({_archetype(t) for t in ruled}) >= 3
    broken = 0
    for task in ruled:
        for cf in (cf for cf in task.counterfactuals if not cf.id.startswith("trap")):
            assert _wrong(catalog, task, list(cf.plan)), (task.id, cf.id)
            broken += 1
    assert broken >= 2


def test_requests_read_like_a_colleagues(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    for task in tasks:
        assert leaks(task) == [], task.id
        assert not RAW_ID.search(task.instruction), (task.id, task.instruction)
        assert "None" not in task.instruction and "  " not in task.instruction.replace("\n", " "), task.instruction
    references = [r for record in audit_records(tasks, catalog) for r in record["references"]]
    assert references and all(r["resolved"] and r["relation"] for r in references)


def test_a_missed_call_request_names_no_caller_and_an_unsubscribe_request_no_company(tasks: list[TaskSpec]) -> None:
    """Requests never defuse their own traps: the latest missed call tells who called, the message tells which namesake."""
    for task in of(tasks, "vip-missed-call-callback"):
        callers = [r.row["from_number"] for r in task.setup if r.table == "calls"]
        assert len(callers) >= 2 and not any(number in task.instruction for number in callers), task.id
        contact = next(s for s in task.plan if s.tool in ("search_contacts", "get_contact", "find_contact_by_email"))
        caller = str(contact.arguments.get("query", ""))
        assert caller and caller.split()[0] not in task.instruction, (task.id, caller)  # not even a walk's "Ana's member"
    for task in of(tasks, "unsubscribe-request"):
        twin = next(t for t in task.traps if t.kind == "same-name-member")
        company = next(r.row["company"] for r in task.setup if r.table == "members" and r.row["id"] == twin.key)
        assert company not in task.instruction, task.id


def test_a_refused_send_answered_with_ok_fails_and_the_billing_triage_follows_the_call(
    catalog: Catalog, tasks: list[TaskSpec]
) -> None:
    """Regression: "ok" where the reason was asked for passed; the conflicting campaign must be named."""
    runner = Runner(catalog, tasks[0].world_seed)
    refused = [t for t in of(tasks, "campaign-frequency-cap") if not any(s.tool == "schedule_campaign" for s in t.plan)]
    for task in refused:
        answer = next(s for s in task.plan if s.tool in ("reply_in_thread", "reply_to_message"))
        key = "text" if "text" in answer.arguments else "body"
        assert not passes(task, runner, changed(task, answer.tool, **{key: "ok"})), task.id
    for task in of(tasks, "voicemail-billing-ticket"):
        ticket = step_of(task, "create_ticket")
        other = "normal" if ticket.arguments["priority"] == "high" else "high"
        ruled = task.scenario is not None and task.scenario.policy_in_data
        assert passes(task, runner, changed(task, "create_ticket", priority=other)) is not ruled, task.id


def test_a_kickoff_is_asked_for_on_the_day_the_deal_was_won(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    """"X signed!" is news only on the day the deal closed: the deal the kickoff is for was won today."""
    kickoffs = of(tasks, "won-deal-kickoff")
    assert kickoffs
    for task in kickoffs:
        runner = Runner(catalog, task.world_seed)
        today = runner.episode.world.now[:10]
        company = next(s.arguments["company_id"] for s in task.plan if s.service == "crm" and "company_id" in s.arguments)
        rows = rows_of(runner.episode.stores["crm"].dump(), "deals")
        won = [d for d in rows if d["company_id"] == company and d["stage"] == "won"]
        assert [d["close_date"] for d in won] == [today], (task.id, company, won)
