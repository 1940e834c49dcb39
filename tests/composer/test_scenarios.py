"""Scenario parts: referring expressions proved on the world, planting only adds, the audit re-proves."""

from __future__ import annotations

import random

import pytest

from composer.audit import audit_records
from composer.catalog import Catalog
from composer.resolve import resolve
from composer.runner import Runner
from composer.scenario import ARCHETYPES, Reference, Scenario, Skip
from mcp_services.tasks.spec import TaskSpec


def _scenario(catalog: Catalog, runner: Runner) -> Scenario:
    runner.fresh()
    return Scenario(catalog, runner, random.Random(0), ARCHETYPES["email-to-ticket"])


def test_a_referring_expression_must_pick_out_exactly_its_record(catalog: Catalog) -> None:
    runner = Runner(catalog, 0)
    s = _scenario(catalog, runner)
    deal = s.records("crm", "deal")[0]
    unique = Reference("that deal", deal, "id", {"id": deal.key})
    assert resolve(s.view, unique) == [deal.key]
    by_company = Reference("their deal", deal, "customer", {"company_id": deal["company_id"]})
    company_deals = [d.key for d in s.records("crm", "deal") if d["company_id"] == deal["company_id"]]
    assert sorted(resolve(s.view, by_company)) == sorted(company_deals)


def test_conditions_follow_refs_and_compare_text_as_people_read_it(catalog: Catalog) -> None:
    runner = Runner(catalog, 0)
    s = _scenario(catalog, runner)
    ticket = s.records("helpdesk", "ticket")[0]
    email = s.record("helpdesk", "user", ticket["requester_id"])["email"]
    theirs = Reference("their ticket", ticket, "requester", {"requester_id.email": email.upper()}, latest="created_at")
    keys = resolve(s.view, theirs)
    assert len(keys) == 1 and s.record("helpdesk", "ticket", keys[0])["requester_id"] == ticket["requester_id"]


def test_planting_records_only_what_the_event_added_and_the_baseline_moves(catalog: Catalog) -> None:
    runner = Runner(catalog, 0)
    s = _scenario(catalog, runner)
    person = s.world.customers[0]
    message = s.event("mailbox", "email_received", "message", from_email=person.email, from_name=person.name,
                      subject="Hello", body="Hi there", hours_ago=1.0)
    assert {r.table for r in s.setup} == {"messages", "threads"}
    assert message["from_email"] == person.email and message["is_unread"]
    assert not runner.diff()["mailbox"]  # the planted rows are the baseline, not a change
    runner.fresh(s.setup)
    assert s.record("mailbox", "message", message.key)["subject"] == "Hello"


def test_an_archetype_that_cannot_be_filled_skips_with_a_reason(catalog: Catalog) -> None:
    runner = Runner(catalog, 0)
    s = _scenario(catalog, runner)
    with pytest.raises(Skip, match="needs nosuch"):
        s.records("nosuch", "thing")
    with pytest.raises(Skip, match="no customers"):
        s.pick([], "no customers")


def test_the_audit_re_proves_every_reference_of_a_task_set(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    records = list(audit_records(tasks, catalog))
    assert len(records) == len(tasks)
    references = [r for record in records for r in record["references"]]
    assert references and all(r["resolved"] for r in references)
    assert all(r["relation"] for r in references)


def test_an_event_the_service_refuses_skips_the_candidate_and_plants_nothing(catalog: Catalog) -> None:
    runner = Runner(catalog, 0)
    s = _scenario(catalog, runner)
    author = s.world.team[1]
    with pytest.raises(Skip, match="chat event message_posted was refused"):
        s.event("chat", "message_posted", "message", channel="no-such-channel", author_email=author.email, text="Hi")
    assert s.setup == [] and not runner.diff()["chat"]
