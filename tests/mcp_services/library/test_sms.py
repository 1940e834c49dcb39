"""Behaviour of SMS a user would notice: seeded conversations, sending and scheduling, opt-outs, lookups."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolResult


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["sms"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("sms", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.dump()
    result = ep.call("sms", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    assert ep.dump() == before
    return result


def all_messages(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "list_messages", limit=100, cursor=cursor, **filters)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def opt_out(ep: Episode, source: str) -> dict[str, Any]:
    return next(o for o in call(ep, "list_opt_outs", limit=100)["items"] if o["source"] == source)


def a_textable_customer(ep: Episode) -> str:
    """A customer's mobile number that has not opted out."""
    stopped = {o["phone_number"] for o in call(ep, "list_opt_outs", limit=100)["items"]}
    return next(p.phone for p in ep.world.customers if p.phone not in stopped)


# -- seeded data ---------------------------------------------------------------------------------


def test_seeded_account_has_numbers_conversations_and_every_status(ep: Episode) -> None:
    state = ep.dump()["sms"]
    assert 150 <= len(state["messages"]) <= 1000
    numbers = call(ep, "list_sender_numbers")
    assert len(numbers) == 5
    default = [n for n in numbers if n["is_default"]]
    assert len(default) == 1 and default[0]["sms_enabled"]
    main_line = next(n for n in numbers if not n["sms_enabled"])
    assert main_line["phone_number"] == ep.world.home.phone
    statuses = {m["status"] for m in state["messages"].values()}
    assert {"delivered", "received", "undelivered", "scheduled", "canceled"} <= statuses
    assert call(ep, "list_conversations")["total"] >= 40


def test_people_who_text_us_are_the_crm_contacts_with_the_same_phone() -> None:
    with Episode.create(["crm", "sms"], world_seed=0) as ep:
        inbound = all_messages(ep, direction="inbound")
        named = {(m["from_number"], m["contact_name"]) for m in inbound if m["contact_name"]}
        assert len(named) >= 20
        for number, name in named:
            hits = ep.call("crm", "search_contacts", {"query": name}).data["items"]
            assert number in [c["phone"] for c in hits], (number, name)
        assert any(m["contact_name"] is None for m in inbound)  # strangers text us too


def test_lookup_names_people_and_flags_landlines_and_our_numbers(ep: Episode) -> None:
    person = ep.world.customers[0]
    found = call(ep, "lookup_phone_number", phone_number=person.phone)
    assert found["caller_name"] == person.name and found["line_type"] == "mobile"
    assert found["company_name"] == ep.world.organisation(person.organisation_id).name
    company = ep.world.organisations[2]
    landline = call(ep, "lookup_phone_number", phone_number=company.phone)
    assert landline["line_type"] == "landline" and not landline["can_receive_sms"]
    assert landline["caller_name"] == company.name and landline["caller_type"] == "BUSINESS"
    ours = call(ep, "lookup_phone_number", phone_number=ep.world.home.phone)
    assert ours["is_ours"] and not ours["can_receive_sms"]
    unknown = call(ep, "lookup_phone_number", phone_number="+15005550006")
    assert unknown["caller_name"] is None and unknown["valid"]
    stopped = opt_out(ep, "keyword")
    assert call(ep, "lookup_phone_number", phone_number=stopped["phone_number"])["opted_out"]
    refused(ep, "lookup_phone_number", "invalid_argument", phone_number="555-1234")


def test_whether_a_number_can_receive_texts_is_data_a_caller_can_read(ep: Episode) -> None:
    directory = {p["phone_number"]: p for p in ep.dump()["sms"]["phone_directory"].values()}
    assert all(directory[org.phone]["line_type"] == "landline" for org in ep.world.organisations)
    assert all(directory[person.phone]["line_type"] == "mobile" for person in ep.world.customers)
    bounced = all_messages(ep, status="undelivered")
    to_landlines = [m for m in bounced if m["error_code"] == 30006]
    assert to_landlines and all(m["contact_line_type"] == "landline" for m in to_landlines)
    conversations = call(ep, "list_conversations", limit=100)["items"]
    landline = next(c for c in conversations if c["contact_number"] == to_landlines[0]["to"])
    assert landline["line_type"] == "landline" and not landline["can_receive_sms"]
    stopped = call(ep, "get_conversation", phone_number=opt_out(ep, "keyword")["phone_number"])
    assert stopped["line_type"] == "mobile" and stopped["opted_out"] and not stopped["can_receive_sms"]
    mobile = a_textable_customer(ep)
    assert call(ep, "send_message", to=mobile, body="Hi")["contact_line_type"] == "mobile"


# -- sending -------------------------------------------------------------------------------------


def test_sent_message_round_trips_and_is_delivered_from_the_default_number(ep: Episode) -> None:
    to = a_textable_customer(ep)
    sent = call(ep, "send_message", to=to, body="Your order ORD-12345 has shipped.")
    default = next(n for n in call(ep, "list_sender_numbers") if n["is_default"])
    assert sent["from_number"] == default["phone_number"] and sent["status"] == "delivered"
    assert sent["date_sent"] == ep.world.now and sent["direction"] == "outbound-api"
    assert call(ep, "get_message", message_sid=sent["sid"]) == sent
    assert all_messages(ep, to=to, query="ORD-12345") == [sent]
    assert call(ep, "get_conversation", phone_number=to)["messages"][0] == sent


def test_text_to_a_landline_is_undelivered_with_error_30006(ep: Episode) -> None:
    sent = call(ep, "send_message", to=ep.world.organisations[3].phone, body="Please call us back.")
    assert sent["status"] == "undelivered" and sent["error_code"] == 30006 and "Landline" in sent["error_message"]


def test_long_text_is_split_into_segments_and_too_long_text_is_refused(ep: Episode) -> None:
    to = a_textable_customer(ep)
    assert call(ep, "send_message", to=to, body="x" * 161)["num_segments"] == 2
    refused(ep, "send_message", "invalid_argument", to=to, body="x" * 1601)
    refused(ep, "send_message", "invalid_argument", to=to, body="   ")


def test_only_our_sms_capable_numbers_can_send(ep: Episode) -> None:
    to = a_textable_customer(ep)
    refused(ep, "send_message", "permission_denied", to=to, body="Hi", from_number=ep.world.home.phone)
    refused(ep, "send_message", "permission_denied", to=to, body="Hi", from_number="+15005550001")
    sales = next(n for n in call(ep, "list_sender_numbers") if n["friendly_name"] == "Sales")
    assert call(ep, "send_message", to=to, body="Hi", from_number=sales["phone_number"])["from_number"] == sales[
        "phone_number"
    ]
    refused(ep, "send_message", "invalid_argument", to=sales["phone_number"], body="Hi")


def test_reply_goes_back_from_the_number_they_texted(ep: Episode) -> None:
    stopped = {o["phone_number"] for o in call(ep, "list_opt_outs", limit=100)["items"]}
    inbound = next(m for m in all_messages(ep, direction="inbound") if m["from_number"] not in stopped)
    reply = call(ep, "reply_to_message", message_sid=inbound["sid"], body="Thanks, we're on it.")
    assert reply["from_number"] == inbound["to"] and reply["to"] == inbound["from_number"]
    assert reply["direction"] == "outbound-reply"
    outbound = all_messages(ep, direction="outbound")[0]
    refused(ep, "reply_to_message", "invalid_argument", message_sid=outbound["sid"], body="Hi")


# -- opt-outs ------------------------------------------------------------------------------------


def test_number_that_replied_stop_cannot_be_texted(ep: Episode) -> None:
    stopped = opt_out(ep, "keyword")
    assert call(ep, "get_message", message_sid=stopped["message_sid"])["body"] == "STOP"
    result = refused(ep, "send_message", "permission_denied", to=stopped["phone_number"], body="Sale today!")
    assert "opted out" in (result.error_message or "")
    stop_msg = call(ep, "get_message", message_sid=stopped["message_sid"])
    refused(ep, "reply_to_message", "permission_denied", message_sid=stop_msg["sid"], body="Are you sure?")


def test_deleting_the_stop_message_keeps_the_opt_out(ep: Episode) -> None:
    stopped = opt_out(ep, "keyword")
    assert call(ep, "delete_message", message_sid=stopped["message_sid"])["deleted"]
    kept = call(ep, "list_opt_outs", phone_number=stopped["phone_number"])["items"]
    assert len(kept) == 1 and kept[0]["message_sid"] is None and kept[0]["source"] == "keyword"
    refused(ep, "send_message", "permission_denied", to=stopped["phone_number"], body="Sale today!")


def test_stop_opt_out_cannot_be_removed_by_us_but_a_manual_one_can(ep: Episode) -> None:
    refused(ep, "remove_opt_out", "permission_denied", phone_number=opt_out(ep, "keyword")["phone_number"])
    manual = opt_out(ep, "manual")
    assert call(ep, "remove_opt_out", phone_number=manual["phone_number"])["removed"]
    assert call(ep, "send_message", to=manual["phone_number"], body="Welcome back!")["status"] == "delivered"
    refused(ep, "remove_opt_out", "not_found", phone_number=manual["phone_number"])


def test_adding_an_opt_out_blocks_texts_and_cancels_scheduled_ones(ep: Episode) -> None:
    scheduled = all_messages(ep, status="scheduled")[0]
    number = scheduled["to"]
    added = call(ep, "add_opt_out", phone_number=number, note="Asked by email on 13 March")
    assert scheduled["sid"] in added["canceled_message_sids"]
    assert call(ep, "get_message", message_sid=scheduled["sid"])["status"] == "canceled"
    refused(ep, "send_message", "permission_denied", to=number, body="Hello")
    refused(ep, "add_opt_out", "conflict", phone_number=number)
    assert call(ep, "list_opt_outs", phone_number=number)["items"][0]["note"] == "Asked by email on 13 March"


# -- scheduling, redaction, deletion -------------------------------------------------------------


def test_scheduled_message_can_be_canceled_once_and_sent_one_cannot(ep: Episode) -> None:
    to = a_textable_customer(ep)
    scheduled = call(ep, "send_message", to=to, body="Reminder: meeting tomorrow.", send_at="2025-03-14T09:00:00Z")
    assert scheduled["status"] == "scheduled" and scheduled["date_sent"] is None
    assert scheduled["send_at"] == "2025-03-14T09:00:00Z"
    assert call(ep, "cancel_message", message_sid=scheduled["sid"])["status"] == "canceled"
    refused(ep, "cancel_message", "invalid_state", message_sid=scheduled["sid"])
    delivered = all_messages(ep, status="delivered")[0]
    refused(ep, "cancel_message", "invalid_state", message_sid=delivered["sid"])
    refused(ep, "cancel_message", "not_found", message_sid="SM_9999")


def test_send_at_must_be_15_minutes_to_35_days_ahead(ep: Episode) -> None:
    to = a_textable_customer(ep)
    assert ep.world.now == "2025-03-13T11:30:00Z"
    refused(ep, "send_message", "invalid_argument", to=to, body="Hi", send_at="2025-03-13T11:40:00Z")
    refused(ep, "send_message", "invalid_argument", to=to, body="Hi", send_at="2025-05-01T09:00:00Z")
    refused(ep, "send_message", "invalid_argument", to=to, body="Hi", send_at="tomorrow")


def test_redaction_erases_the_body_of_finished_messages_only(ep: Episode) -> None:
    delivered = all_messages(ep, status="delivered")[0]
    redacted = call(ep, "redact_message", message_sid=delivered["sid"])
    assert redacted["body"] == "" and redacted["redacted"] and redacted["status"] == "delivered"
    refused(ep, "redact_message", "invalid_state", message_sid=delivered["sid"])
    scheduled = all_messages(ep, status="scheduled")[0]
    refused(ep, "redact_message", "invalid_state", message_sid=scheduled["sid"])


def test_scheduled_message_must_be_canceled_before_it_is_deleted(ep: Episode) -> None:
    scheduled = all_messages(ep, status="scheduled")[0]
    refused(ep, "delete_message", "invalid_state", message_sid=scheduled["sid"])
    call(ep, "cancel_message", message_sid=scheduled["sid"])
    assert call(ep, "delete_message", message_sid=scheduled["sid"])["deleted"]
    refused(ep, "get_message", "not_found", message_sid=scheduled["sid"])


# -- lists and conversations ---------------------------------------------------------------------


def test_message_filters_each_narrow_the_results(ep: Episode) -> None:
    undelivered = all_messages(ep, status="undelivered")
    assert undelivered and all(m["status"] == "undelivered" and m["error_code"] for m in undelivered)
    inbound = all_messages(ep, direction="inbound")
    assert inbound and all(m["direction"] == "inbound" and m["status"] == "received" for m in inbound)
    billing = next(n for n in call(ep, "list_sender_numbers") if n["friendly_name"] == "Billing")["phone_number"]
    assert all(m["from_number"] == billing for m in all_messages(ep, from_number=billing))
    window = all_messages(ep, date_sent_after="2025-03-01", date_sent_before="2025-03-05")
    assert window and all("2025-03-01" <= m["date_sent"] <= "2025-03-05T23:59:59Z" for m in window)
    day = window[0]["date_sent"][:10]
    assert all(m["date_sent"].startswith(day) for m in all_messages(ep, date_sent=day))


def test_pagination_walks_every_message_once(ep: Episode) -> None:
    total = call(ep, "list_messages", limit=1)["total"]
    seen: list[str] = []
    cursor = None
    while True:
        page = call(ep, "list_messages", limit=30, cursor=cursor)
        seen += [m["sid"] for m in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == total == len(ep.dump()["sms"]["messages"])


def test_conversations_group_both_directions_by_person(ep: Episode) -> None:
    person = next(p for p in ep.world.customers if call(ep, "list_conversations", name=p.name)["total"])
    summary = call(ep, "list_conversations", name=person.name)["items"][0]
    assert summary["contact_number"] == person.phone and summary["contact_name"] == person.name
    convo = call(ep, "get_conversation", phone_number=person.phone, limit=100)
    assert convo["total"] == summary["message_count"] == len(convo["messages"])
    assert all(person.phone in (m["from_number"], m["to"]) for m in convo["messages"])
    stopped = call(ep, "list_conversations", opted_out=True, limit=100)["items"]
    assert stopped and all(c["opted_out"] for c in stopped)
    refused(ep, "get_conversation", "not_found", phone_number="+15005550009")


def test_default_sender_can_move_but_not_to_a_voice_only_number(ep: Episode) -> None:
    numbers = {n["friendly_name"]: n for n in call(ep, "list_sender_numbers")}
    refused(ep, "update_sender_number", "invalid_state", number_sid=numbers["Main office line"]["sid"],
            make_default=True)
    refused(ep, "update_sender_number", "invalid_argument", number_sid=numbers["Sales"]["sid"])
    moved = call(ep, "update_sender_number", number_sid=numbers["Sales"]["sid"], make_default=True)
    assert moved["is_default"]
    assert [n["friendly_name"] for n in call(ep, "list_sender_numbers") if n["is_default"]] == ["Sales"]
    to = a_textable_customer(ep)
    assert call(ep, "send_message", to=to, body="Hi")["from_number"] == numbers["Sales"]["phone_number"]


def test_tools_declare_semantic_types_for_cross_service_flows() -> None:
    from mcp_services.library.sms import service

    send = service.tools["send_message"].input_schema["properties"]
    assert send["to"]["x-semantic-type"] == "phone_number"
    lookup = service.tools["lookup_phone_number"].data_schema["properties"]
    assert lookup["caller_name"]["anyOf"][0]["x-semantic-type"] == "person_name"
    assert len(service.tools) >= 13
