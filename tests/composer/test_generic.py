"""Generic archetypes: composition reaches generated services, with requests that read like a colleague's.

Composed over the CRM, chat and the mailbox beside six generated business services of the shipped catalog,
tasks call the generated services (creating a customer's record there, answering a customer's question
about theirs, changing its state); their requests never use tool-name grammar; every kept task verifies,
and leaving out any of its writes fails. A generated fixture (the Swagger shop) keeps the older case: an
order made for a CRM contact from their email address.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from composer.archetypes.generic import system_name
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import reference_answer, run_plan, verify_task
from mcp_services.tasks.spec import TaskSpec

GENERATED = ("apideck_crm", "apideck_ats", "apideck_customer_support", "apideck_lead", "box", "braze")
SERVICES = ("crm", "chat", "mailbox", *GENERATED)
GENERIC = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == "composer.archetypes.generic"))
N = 24


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    from mcp_services.registry import catalog_names

    missing = sorted(set(GENERATED) - set(catalog_names()))
    if missing:
        pytest.skip(f"the package catalog lacks {', '.join(missing)}")
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=N, seed=0, services=SERVICES, archetypes=GENERIC), catalog)


@pytest.fixture(scope="module")
def runner(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> Runner:
    return Runner(catalog, generated[0][0].world_seed)


def _touching(tasks: list[TaskSpec]) -> list[TaskSpec]:
    return [t for t in tasks if {step.service for step in t.plan} & set(GENERATED)]


def test_generation_keeps_tasks_that_call_generated_services_in_every_generic_archetype(
    generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    tasks, report = generated
    assert len(GENERIC) >= 4
    touching = _touching(tasks)
    assert report.kept >= 0.8 * report.candidates, report.summary()
    assert len(touching) >= N / 2, report.summary()
    assert {t.scenario.archetype for t in touching if t.scenario} == set(GENERIC)
    assert len({s.service for t in touching for s in t.plan} & set(GENERATED)) >= 2
    assert all(t.scenario and t.scenario.trigger for t in touching)


def test_requests_over_generated_services_use_no_tool_name_grammar(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    touching = _touching(generated[0])
    tool_words = {t.name for t in catalog.tools.values() if "_" in t.name}
    for task in touching:
        text = task.instruction
        assert not re.search(r"\b[a-z]+_[a-z0-9_]+\b", text), text  # no snake_case identifier
        assert not re.search(r"\bv\d+\b", text, re.I), text  # no "v2"
        assert not any(name in text for name in tool_words), text
        assert not re.search(r"\b(API|Endpoints)\b", text), text  # services named as people name them
    # The kinds of phrasing a colleague would use, one of each archetype.
    by_archetype = {t.scenario.archetype: t.instruction for t in touching if t.scenario}
    assert "Apideck Customer Support" in " ".join(by_archetype.values())
    question = next(t for t in touching if t.scenario and t.scenario.archetype == "record-status-question")
    assert question.answer is not None and str(question.answer) not in question.instruction


def test_every_task_verifies_and_leaving_out_a_write_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport], runner: Runner
) -> None:
    touching = _touching(generated[0])
    checked = Counter[str]()
    for task in touching:
        assert verify_task(task, runner) == [], task.id
        writes = [i for i, step in enumerate(task.plan) if catalog.tool(step.service, step.tool).is_write]
        for left_out in writes:
            runner.fresh(task.setup)
            run_plan(runner.call, [s for i, s in enumerate(task.plan) if i != left_out], stop=False)
            assert not task.grade(runner.diff(), reference_answer(task)).passed, (task.id, task.plan[left_out].tool)
            checked[task.plan[left_out].service] += 1
        if not writes:  # a question: only the right answer passes, and one naming every state does not
            runner.fresh(task.setup)
            run_plan(runner.call, task.plan, stop=False)
            assert task.grade(runner.diff(), reference_answer(task)).passed
            assert not task.grade(runner.diff(), "I could not find it.").passed
    assert set(checked) & set(GENERATED), checked


def test_a_status_update_changes_the_record_the_colleague_named_and_only_that(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport], runner: Runner
) -> None:
    updates = [t for t in _touching(generated[0]) if t.scenario and t.scenario.archetype == "chat-record-status-update"]
    assert updates
    for task in updates:
        step = next(s for s in task.plan if catalog.tool(s.service, s.tool).intent == "update")
        key = step.arguments["id"]
        # The id the colleague gave, in their chat message or their email.
        assert any(str(key) in str(r.row.get("text") or r.row.get("body")) for r in task.setup if r.service in ("chat", "mailbox"))
        state = next(k for k in step.arguments if k in ("status", "state", "stage"))
        wrong = [s if s is not step else s.model_copy(update={"arguments": {**s.arguments, state: "unknown"}}) for s in task.plan]
        runner.fresh(task.setup)
        run_plan(runner.call, wrong, stop=False)
        assert not task.grade(runner.diff(), None).passed, task.id


def test_a_status_update_gives_the_customer_s_reason_from_their_email_in_the_inbox(
    generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    updates = [t for t in _touching(generated[0]) if t.scenario and t.scenario.archetype == "chat-record-status-update"]
    assert updates
    for task in updates:
        assert task.stats.get("reasons") == ["mailbox.message"], task.id
        ask = next(str(r.row.get("text") or r.row.get("body")) for r in task.setup
                   if r.service in ("chat", "mailbox") and "Could you set" in str(r.row.get("text") or r.row.get("body")))
        who = ask.split("? ", 1)[1].split(" emailed us that ", 1)[0]  # "Kim emailed us that they are pausing their contract."
        assert who and " " not in who.strip(), ask
        emails = [r.row for r in task.setup if (r.service, r.table) == ("mailbox", "messages") and r.row.get("from_name", "").startswith(who)]
        assert emails and all("Could you set" not in str(e["body"]) for e in emails), (task.id, ask)


def test_service_names_read_as_people_say_them(catalog: Catalog) -> None:
    assert system_name(catalog, "apideck_crm") == "Apideck CRM"
    assert system_name(catalog, "apideck_customer_support") == "Apideck Customer Support"
    assert system_name(catalog, "braze") == "Braze"


@pytest.mark.parametrize(("service", "said"), [
    ("surevoip", "SureVoIP"),  # "The SureVoIP RESTful API"
    ("twilio_notify_v1", "Twilio Notify"),  # "Twilio - Notify"
    ("googleapis_calendar", "Google Calendar"),
    ("bulksms", "BulkSMS"),  # "BulkSMS JSON API"
    ("xero", "Xero Accounting"),  # "Accounting API": a generic word takes its vendor
    ("github_api_github_com", "GitHub"),  # "GitHub v3 REST API"
    ("hubapi_files", "HubSpot Files"),
    ("google_admin", "Google Admin"),  # titled "google_admin"
])
def test_generated_services_are_named_without_api_boilerplate(service: str, said: str) -> None:
    from mcp_services.registry import catalog_names

    if service not in catalog_names():
        pytest.skip(f"the package catalog lacks {service}")
    assert system_name(load_catalog((service,)), service) == said


def test_library_services_keep_their_names() -> None:
    catalog = load_catalog(("crm", "helpdesk", "docs", "kb"))
    assert [system_name(catalog, n) for n in ("crm", "helpdesk")] == [catalog.services[n].title for n in ("crm", "helpdesk")]


def test_a_library_only_catalog_gets_no_generic_archetype() -> None:
    catalog = load_catalog(("crm", "chat", "mailbox"))
    assert not any(ARCHETYPES[a].serves(catalog) for a in GENERIC)


def test_a_generated_fixture_gets_an_order_for_a_crm_contact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.catalog import catalogs
    from generator.pipeline import ImportConfig, import_file
    from tests.generator.conftest import SWAGGER_SHOP

    import_file(SWAGGER_SHOP, ImportConfig(out=tmp_path))
    monkeypatch.setenv("COMPOWORLD_CATALOG", str(tmp_path))
    catalogs.cache_clear()
    try:
        services = ("crm", "chat", "generator_swagger_shop")
        tasks, report = generate(GenerateConfig(n=4, seed=1, services=services, archetypes=("contact-into-service",),
                                                distractor_services=0))
    finally:
        catalogs.cache_clear()
    assert tasks, report.summary()
    for task in tasks:
        assert "generator_swagger_shop" in {s.service for s in task.plan}
        assert not re.search(r"\b[a-z]+_[a-z0-9_]+\b", task.instruction), task.instruction
        assert "email" in task.instruction and "name and email" not in task.instruction  # an order has no name of its own


def test_a_generic_workflow_weighs_by_the_services_that_can_fill_it(catalog: Catalog) -> None:
    from composer.archetypes.generic import _creates, _gets, services_weight

    creating, getting = {t.service for t in _creates(catalog)}, {t.service for t in _gets(catalog)}
    assert services_weight(_creates)(catalog) == 1.0 + len(creating) / 2.5
    assert ARCHETYPES["contact-into-service"].weight_for(catalog) == services_weight(_creates)(catalog)
    assert (ARCHETYPES["contact-into-service"].weight_for(catalog) > ARCHETYPES["record-status-question"].weight_for(catalog)) == (
        len(creating) > len(getting))


def test_a_customer_asks_where_their_order_or_appointment_stands_by_its_reference() -> None:
    from mcp_services.registry import catalog_names

    from composer.archetypes.generic import _gets

    theirs = ("stripe", "onsched_consumer", "taxamo", "beezup")
    if set(theirs) - set(catalog_names()):
        pytest.skip("the package catalog lacks the services of this test")
    catalog = load_catalog(("mailbox", "crm", *theirs))
    gets = {t.key for t in _gets(catalog)}
    assert {"stripe.get_orders_id", "onsched_consumer.get_consumer_v1_appointments_id", "taxamo.get_transaction"} <= gets
    from mcp_services.registry import get_service

    silent = {f"{n}.{name}" for n in theirs for name, tool in get_service(n).tools.items()
              if getattr(tool, "simulated", False) and not tool.answers_from_state and tool.effect == "read"}
    assert silent and not silent & gets  # simulated reads whose world model does not answer from the episode's rows
    tasks, report = generate(GenerateConfig(n=8, seed=0, services=tuple(catalog.services), archetypes=("record-status-question",),
                                            distractor_services=0), catalog)
    assert len(tasks) >= 6, report.summary()
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        (get,) = [s for s in task.plan if s.service in theirs]
        runner.fresh(task.setup)
        row = runner.call(get.service, get.tool, get.arguments).data
        owners = [p for p in runner.world.people if p.email in row.values()]  # whom the record names by email
        assert owners and any(p.name in task.instruction for p in owners), (task.id, task.instruction)
        assert verify_task(task, runner) == [], task.id
        assert not task.grade(runner.diff(), "I could not find it.").passed
    assert {s.service for t in tasks for s in t.plan} & {"onsched_consumer", "taxamo", "stripe"}


def test_stats_count_the_generated_services_kept_plans_call(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    from composer.stats import format_stats, task_stats

    tasks = generated[0]
    called = {s.service for t in tasks for s in t.plan} & set(GENERATED)
    stats = task_stats(tasks)
    assert called and stats["beyond_library"] == {"services": len(called), "tasks": len(_touching(tasks))}
    assert f"{len(called)} generated services called in kept plans" in format_stats(stats)
    assert "beyond the library" not in format_stats(task_stats([t for t in tasks if t not in _touching(tasks)]))
