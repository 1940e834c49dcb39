"""Behaviour of voice a user would notice: our main line and its phone book agree with sms and the CRM, voicemails
and missed calls wait in the inbox until done, assigning and archiving rules, callbacks owed once per call, notes and
tags, and the calls that arrive from outside."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["voice", "sms", "crm"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def phone(ep: Episode) -> Calls:
    return Calls(ep, "voice")


def later(ep: Episode, hours: float) -> str:
    return (ep.world.now_dt + timedelta(hours=hours)).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def voicemail(ep: Episode, phone: Calls, text: str = "Hi, it's about our invoice, please call me back.") -> dict[str, Any]:
    caller = ep.world.customers[0]
    return phone("get_call", call_id=ep.run_event("voice", "voicemail_left", from_number=caller.phone, transcript=text,
                                                   team="Billing", hours_ago=2))


def test_the_main_line_is_ours_voice_only_and_the_phone_book_is_the_crms(ep: Episode, phone: Calls) -> None:
    assert [n["digits"] for n in phone("list_numbers")] == [ep.world.home.phone]
    senders = {n["phone_number"]: n["sms_enabled"] for n in Calls(ep, "sms")("list_sender_numbers")}
    assert senders[ep.world.home.phone] is False
    crm = {c["phone"]: c for c in Calls(ep, "crm").all("search_contacts")}
    book = phone.all("search_contacts")
    assert len(book) >= len(ep.world.customers) // 2
    for entry in book:
        same = crm[entry["phone_number"]]
        assert (entry["name"], entry["email"], entry["company_name"]) == (same["name"], same["email"], same["company_name"])
    agents = {u["email"]: u["team"] for u in phone("list_users")}
    assert set(agents) == {p.email for p in ep.world.team} and {"Support", "Sales", "Billing"} <= set(agents.values())


def test_calls_are_found_by_outcome_caller_words_and_time(ep: Episode, phone: Calls) -> None:
    calls = phone.all("list_calls")
    assert [c["started_at"] for c in calls] == sorted((c["started_at"] for c in calls), reverse=True)
    missed = phone.all("list_calls", outcome="missed", direction="inbound")
    assert missed and all(c["outcome"] == "missed" and c["missed_call_reason"] for c in missed)
    caller = missed[0]["from_number"]
    assert {c["from_number"] for c in phone.all("list_calls", from_number=caller)} == {caller}
    by_contact = phone.all("list_calls", contact_id=missed[0]["contact_id"])
    assert by_contact and all(caller in (c["from_number"], c["to_number"]) for c in by_contact)
    mid = calls[len(calls) // 2]["started_at"]
    assert all(c["started_at"] >= mid for c in phone.all("list_calls", since=mid))
    assert all(c["started_at"] < mid for c in phone.all("list_calls", until=mid))
    worded = phone.all("list_calls", query="invoice")
    assert worded and all("invoice" in (c["transcript"] or "").lower() for c in worded)


def test_a_voicemail_left_shows_its_caller_and_waits_in_the_inbox(ep: Episode, phone: Calls) -> None:
    left = voicemail(ep, phone, "Hi, this is about the overdue invoice INV-0042, please call me back.")
    assert_added_only(ep, "voice")
    caller = ep.world.customers[0]
    assert (left["outcome"], left["direction"], left["team"], left["archived"]) == ("voicemail", "inbound", "Billing", False)
    assert left["from_number"] == caller.phone and left["to_number"] == ep.world.home.phone
    assert left["contact_name"] in (caller.name, None) and left["voicemail_url"].endswith(".mp3")
    assert left["started_at"] < ep.world.now and "INV-0042" in left["transcript"]
    assert phone("list_calls", outcome="voicemail", archived=False)["items"][0]["id"] == left["id"]
    assert left["id"] in {c["id"] for c in phone.all("list_calls", query="overdue")}
    missed = ep.run_event("voice", "call_missed", from_number="+14155550123", team="Sales", hours_ago=0.5)
    found = phone("get_call", call_id=missed)
    assert (found["outcome"], found["transcript"], found["contact_id"]) == ("missed", None, None)


def test_events_refuse_what_cannot_happen(ep: Episode) -> None:
    number = ep.world.customers[0].phone
    bad = (
        ("voicemail_left", {"from_number": number, "transcript": "  "}),
        ("voicemail_left", {"from_number": number, "transcript": "Hi", "team": "Marketing"}),
        ("call_missed", {"from_number": number, "hours_ago": 1000}),
        ("call_missed", {"from_number": number, "reason": "short_abandoned"}),
    )
    for event, args in bad:
        with pytest.raises(ToolError):
            ep.run_event("voice", event, **args)


def test_a_new_phone_book_entry_claims_its_earlier_calls(ep: Episode, phone: Calls) -> None:
    stranger = "+14155550123"
    call_id = ep.run_event("voice", "call_missed", from_number=stranger)
    contact = phone("create_contact", first_name="Sam", last_name="Lee", phone_number=stranger, company_name="Lee Consulting")
    assert phone("get_call", call_id=call_id)["contact_name"] == "Sam Lee"
    assert phone("search_contacts", query="Lee Consulting")["items"][0]["id"] == contact["id"]
    assert "already in the phone book" in phone.refused("create_contact", "conflict", first_name="S", last_name="L",
                                                         phone_number=stranger)
    phone.refused("create_contact", "invalid_argument", first_name="Us", last_name="Main", phone_number=ep.world.home.phone)
    phone.refused("create_contact", "invalid_argument", first_name=" ", last_name="Lee", phone_number="+14155550124")


def test_only_open_missed_calls_and_voicemails_are_assigned(ep: Episode, phone: Calls) -> None:
    left = voicemail(ep, phone)
    billing = phone("list_users", team="Billing")[0]["email"]
    assert phone("assign_call", call_id=left["id"], assignee_email=billing.upper())["assigned_to"] == billing
    phone.refused("assign_call", "invalid_state", call_id=left["id"], assignee_email=billing)
    phone.refused("assign_call", "invalid_argument", call_id=left["id"], assignee_email="someone@elsewhere.example")
    answered = phone("list_calls", outcome="answered")["items"][0]
    assert "only missed calls and voicemails" in phone.refused("assign_call", "invalid_state", call_id=answered["id"],
                                                               assignee_email=billing)
    assert phone("archive_call", call_id=left["id"])["archived"] is True
    assert left["id"] not in {c["id"] for c in phone.all("list_calls", archived=False)}
    assert "unarchive_call" in phone.refused("schedule_callback", "invalid_state", call_id=left["id"], assignee_email=billing,
                                             due_at=later(ep, 3))
    phone.refused("archive_call", "invalid_state", call_id=left["id"])
    assert phone("unarchive_call", call_id=left["id"])["archived"] is False
    phone.refused("unarchive_call", "invalid_state", call_id=left["id"])
    phone.refused("get_call", "not_found", call_id="call_9999")


def test_a_call_is_owed_one_callback_at_a_time(ep: Episode, phone: Calls) -> None:
    left = voicemail(ep, phone)
    agent = phone("list_users", team="Billing")[0]["email"]
    phone.refused("schedule_callback", "invalid_argument", call_id=left["id"], assignee_email=agent, due_at=later(ep, -1))
    phone.refused("schedule_callback", "invalid_argument", call_id=left["id"], assignee_email=agent, due_at="tomorrow at 3")
    owed = phone("schedule_callback", call_id=left["id"], assignee_email=agent, due_at=later(ep, 3), note="About the invoice")
    assert (owed["status"], owed["phone_number"], owed["due_at"]) == ("scheduled", left["from_number"], later(ep, 3))
    assert owed["id"] in {c["id"] for c in phone.all("list_callbacks", assignee_email=agent, status="scheduled")}
    assert all(c["due_at"] < later(ep, 4) for c in phone.all("list_callbacks", due_before=later(ep, 4)))
    assert owed["id"] in phone.refused("schedule_callback", "conflict", call_id=left["id"], assignee_email=agent, due_at=later(ep, 5))
    done = phone("complete_callback", callback_id=owed["id"], note="Reached her; credit note on its way.")
    assert (done["status"], done["closed_at"], done["note"]) == ("completed", ep.world.now, "Reached her; credit note on its way.")
    phone.refused("complete_callback", "invalid_state", callback_id=owed["id"])
    phone.refused("cancel_callback", "invalid_state", callback_id=owed["id"])
    again = phone("schedule_callback", call_id=left["id"], assignee_email=agent, due_at=later(ep, 24))
    assert phone("cancel_callback", callback_id=again["id"], reason="She emailed instead")["status"] == "cancelled"
    answered = phone("list_calls", outcome="answered")["items"][0]
    phone.refused("schedule_callback", "invalid_state", call_id=answered["id"], assignee_email=agent, due_at=later(ep, 3))


def test_notes_and_tags_stay_on_the_call(ep: Episode, phone: Calls) -> None:
    left = voicemail(ep, phone)
    note = phone("add_call_note", call_id=left["id"], content="Opened ticket 4512 for this.")
    assert note["author_email"] == ep.world.user.email
    assert [n["content"] for n in phone("list_call_notes", call_id=left["id"])] == ["Opened ticket 4512 for this."]
    assert phone("get_call", call_id=left["id"])["note_count"] == 1
    phone.refused("add_call_note", "invalid_argument", call_id=left["id"], content="   ")
    assert phone("tag_call", call_id=left["id"], tags=["billing", "urgent", "billing"])["tags"] == ["billing", "urgent"]
    assert phone("tag_call", call_id=left["id"], tags=["Urgent", "refund"])["tags"] == ["billing", "urgent", "refund"]
    assert "already has every tag" in phone.refused("tag_call", "invalid_argument", call_id=left["id"], tags=["BILLING"])
