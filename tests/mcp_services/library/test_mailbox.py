"""Behaviour of the mailbox a user would notice: seeded threads, search, send/reply/forward, drafts, labels, trash."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolResult


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["mailbox"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("mailbox", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.dump()
    result = ep.call("mailbox", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    assert ep.dump() == before
    return result


def search_all(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "search_messages", limit=100, cursor=cursor, **filters)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def an_inbound_message(ep: Episode, **filters: Any) -> dict[str, Any]:
    items = call(ep, "search_messages", label="INBOX", limit=1, **filters)["items"]
    assert items, "no seeded inbound message"
    return items[0]


# -- seeded data ---------------------------------------------------------------------------------


def test_the_mailbox_belongs_to_the_world_user_and_is_well_filled(ep: Episode) -> None:
    user = ep.world.user.email
    state = ep.dump()["mailbox"]
    assert 100 <= len(state["threads"]) and 200 <= len(state["messages"]) <= 1000
    for message in state["messages"].values():
        assert message["from_email"] == user or user in message["to"]
    sent = search_all(ep, label="SENT")
    assert sent and all(m["from_email"] == user and m["from_name"] == ep.world.user.name for m in sent)


def test_customers_who_write_are_the_crm_contacts_with_the_same_name() -> None:
    with Episode.create(["crm", "mailbox"], world_seed=0) as ep:
        home = ep.world.home.domain
        senders = {
            (m["from_email"], m["from_name"])
            for m in ep.dump()["mailbox"]["messages"].values()
            if not m["from_email"].endswith(home) and "SPAM" not in m["label_ids"]
        }
        assert len(senders) >= 30
        for email, name in senders:
            contact = ep.call("crm", "find_contact_by_email", {"email": email})
            assert contact.success, email
            assert contact.data["name"] == name


def test_seeded_threads_talk_about_orders_invoices_refunds_and_meetings_with_ids_and_amounts(ep: Episode) -> None:
    for words in ("INV-", "order #1", "PRO-", "tracking", "refund", "meet", "ticket", "USD"):
        assert call(ep, "search_messages", query=words)["total"] > 0, words
    colleague = ep.world.team_member("finance lead").email
    assert call(ep, "search_messages", from_email=colleague)["total"] + call(ep, "search_messages", to_email=colleague)[
        "total"
    ] > 0


def test_seeded_mailbox_has_unread_starred_trashed_and_spam_mail(ep: Episode) -> None:
    labels = {label["name"]: label for label in call(ep, "list_labels")}
    for name in ("UNREAD", "STARRED", "TRASH", "SPAM", "Finance", "Support"):
        assert labels[name]["messages_total"] > 0, name
    assert labels["INBOX"]["messages_unread"] > 0


# -- search and pagination -----------------------------------------------------------------------


def test_search_filters_each_narrow_the_results(ep: Episode) -> None:
    sender = an_inbound_message(ep)["from_email"]
    assert all(m["from_email"] == sender for m in search_all(ep, from_email=sender))
    unread = search_all(ep, is_unread=True)
    assert unread and all(m["is_unread"] for m in unread)
    finance = search_all(ep, label="finance")  # names are case-insensitive
    assert finance and all("Finance" in m["label_names"] for m in finance)
    files = search_all(ep, has_attachment=True)
    assert files and all(m["attachments"] for m in files)
    window = search_all(ep, after="2025-03-01", before="2025-03-10")
    assert window and all("2025-03-01" <= m["sent_at"] < "2025-03-10" for m in window)
    customer = ep.world.customers[0]
    to_them = search_all(ep, to_email=customer.email)
    assert all(customer.email in m["to"] + m["cc"] for m in to_them)
    by_name = search_all(ep, from_name=ep.world.team_member("support lead").name)
    assert by_name and all(m["from_name"] == ep.world.team_member("support lead").name for m in by_name)


def test_search_matches_every_word_anywhere_and_takes_wildcards_literally(ep: Episode) -> None:
    refund = search_all(ep, query="refund", label="INBOX")[0]
    both = search_all(ep, query=f"refund {refund['from_email']}")
    assert refund["id"] in [m["id"] for m in both]
    for m in both:
        text = " ".join([m["subject"], m["body"], m["from_name"] or "", m["from_email"], *m["to"], *m["cc"]]).lower()
        assert "refund" in text and refund["from_email"] in text
    spam = search_all(ep, query="300%", include_spam_trash=True)
    assert spam and all("300%" in m["body"] for m in spam)
    assert search_all(ep, query="3_0%", include_spam_trash=True) == []


def test_spam_and_trash_are_left_out_unless_asked_for(ep: Episode) -> None:
    visible = search_all(ep)
    assert not any(m["in_trash"] or "SPAM" in m["label_ids"] for m in visible)
    everything = search_all(ep, include_spam_trash=True)
    assert len(everything) == len(ep.dump()["mailbox"]["messages"])
    trash = search_all(ep, label="TRASH")
    assert trash and all(m["in_trash"] for m in trash)


def test_pagination_walks_every_message_once(ep: Episode) -> None:
    first = call(ep, "search_messages", limit=7)
    assert len(first["items"]) == 7 and first["next_cursor"] == "7"
    seen: list[str] = []
    cursor = None
    while True:
        page = call(ep, "search_messages", limit=25, cursor=cursor)
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == first["total"]
    refused(ep, "search_messages", "invalid_argument", cursor="page-two")


def test_list_threads_groups_messages_and_filters_by_participant_and_unread(ep: Episode) -> None:
    customer_msg = an_inbound_message(ep, is_unread=True)
    threads = call(ep, "list_threads", participant_email=customer_msg["from_email"], limit=100)["items"]
    assert customer_msg["thread_id"] in [t["id"] for t in threads]
    unread = call(ep, "list_threads", is_unread=True, limit=100)["items"]
    assert unread and all(t["unread_count"] > 0 for t in unread)
    thread = call(ep, "get_thread", thread_id=customer_msg["thread_id"])
    assert customer_msg["id"] in [m["id"] for m in thread["messages"]]
    times = [m["sent_at"] for m in thread["messages"]]
    assert times == sorted(times)


# -- sending -------------------------------------------------------------------------------------


def test_sent_email_round_trips_through_get_message_and_search(ep: Episode) -> None:
    customer = ep.world.customers[3]
    sent = call(
        ep,
        "send_email",
        to=[customer.email.upper()],
        cc=[ep.world.team_member("finance lead").email],
        subject="Your refund",
        body="Refund re_0007 is on its way.",
        attachments=["refund-re_0007.pdf"],
    )
    assert sent["to"] == [customer.email]  # addresses are normalised to lower case
    assert sent["label_ids"] == ["SENT"] and sent["sent_at"] == ep.world.now
    assert call(ep, "get_message", message_id=sent["id"]) == sent
    found = call(ep, "search_messages", to_email=customer.email, query="re_0007")["items"]
    assert [m["id"] for m in found] == [sent["id"]]
    assert call(ep, "get_thread", thread_id=sent["thread_id"])["messages"] == [sent]


def test_email_without_recipient_or_subject_is_refused(ep: Episode) -> None:
    refused(ep, "send_email", "invalid_argument", to=[], subject="Hello", body="Hi")
    refused(ep, "send_email", "invalid_argument", to=["a@b.example"], subject="   ", body="Hi")
    refused(ep, "send_email", "invalid_argument", to=["not-an-address"], subject="Hello", body="Hi")


def test_reply_stays_in_the_thread_and_goes_to_the_sender(ep: Episode) -> None:
    original = an_inbound_message(ep)
    reply = call(ep, "reply_to_message", message_id=original["id"], body="Thanks, looking into it.")
    assert reply["thread_id"] == original["thread_id"] and reply["in_reply_to"] == original["id"]
    assert reply["to"] == [original["from_email"]]
    assert reply["subject"].startswith("Re: ") and not reply["subject"].startswith("Re: Re:")
    assert reply["body"].startswith("Thanks, looking into it.") and original["body"].splitlines()[0] in reply["body"]
    thread = call(ep, "get_thread", thread_id=original["thread_id"])
    assert thread["messages"][-1]["id"] == reply["id"]


def test_reply_all_copies_everyone_but_the_user(ep: Episode) -> None:
    copied = [m for m in search_all(ep, label="INBOX") if m["cc"]]
    assert copied, "no seeded message with people in copy"
    original = copied[0]
    reply = call(ep, "reply_to_message", message_id=original["id"], body="Noted.", reply_all=True)
    assert reply["to"] == [original["from_email"]]
    assert set(reply["cc"]) == set(original["cc"]) - {ep.world.user.email}
    assert ep.world.user.email not in reply["to"] + reply["cc"]


def test_forward_keeps_attachments_and_quotes_the_original(ep: Episode) -> None:
    original = search_all(ep, has_attachment=True, label="INBOX")[0]
    colleague = ep.world.team_member("accountant").email
    fwd = call(ep, "forward_message", message_id=original["id"], to=[colleague], note="Please check this one.")
    assert fwd["subject"] == f"Fwd: {original['subject']}"
    assert fwd["attachments"] == original["attachments"] and fwd["to"] == [colleague]
    assert fwd["body"].startswith("Please check this one.") and original["from_email"] in fwd["body"]


# -- trash, labels -------------------------------------------------------------------------------


def test_trashed_message_cannot_be_replied_to_or_trashed_twice_until_restored(ep: Episode) -> None:
    message = an_inbound_message(ep)
    trashed = call(ep, "trash_message", message_id=message["id"])
    assert trashed["in_trash"]
    assert message["id"] not in [m["id"] for m in search_all(ep)]
    refused(ep, "trash_message", "invalid_state", message_id=message["id"])
    refused(ep, "reply_to_message", "invalid_state", message_id=message["id"], body="Hi")
    refused(ep, "forward_message", "invalid_state", message_id=message["id"], to=["x@y.example"])
    restored = call(ep, "untrash_message", message_id=message["id"])
    assert restored["label_ids"] == message["label_ids"]  # back exactly as it was
    refused(ep, "untrash_message", "invalid_state", message_id=message["id"])
    assert call(ep, "reply_to_message", message_id=message["id"], body="Back on it.")["in_reply_to"] == message["id"]


def test_modify_message_marks_read_stars_and_files(ep: Episode) -> None:
    message = an_inbound_message(ep, is_unread=True)
    changed = call(ep, "modify_message", message_id=message["id"], remove_labels=["UNREAD"],
                   add_labels=["starred", "Follow up"])
    assert not changed["is_unread"] and changed["is_starred"] and "Follow up" in changed["label_names"]
    assert message["id"] not in [m["id"] for m in search_all(ep, is_unread=True)]
    assert message["id"] in [m["id"] for m in search_all(ep, label="Follow up")]


def test_modify_message_refuses_reserved_unknown_and_contradictory_labels(ep: Episode) -> None:
    message = an_inbound_message(ep)
    refused(ep, "modify_message", "invalid_argument", message_id=message["id"], add_labels=["TRASH"])
    refused(ep, "modify_message", "invalid_argument", message_id=message["id"], remove_labels=["SENT"])
    refused(ep, "modify_message", "not_found", message_id=message["id"], add_labels=["No such label"])
    refused(ep, "modify_message", "invalid_argument", message_id=message["id"], add_labels=["STARRED"],
            remove_labels=["STARRED"])
    refused(ep, "modify_message", "invalid_argument", message_id=message["id"])
    refused(ep, "modify_message", "not_found", message_id="msg_9999", add_labels=["STARRED"])


def test_labels_are_unique_and_new_ones_can_be_applied(ep: Episode) -> None:
    refused(ep, "create_label", "conflict", name="finance")
    refused(ep, "create_label", "conflict", name="Inbox")
    label = call(ep, "create_label", name="Invoices 2025")
    assert label["type"] == "user" and label["messages_total"] == 0
    message = an_inbound_message(ep)
    call(ep, "modify_message", message_id=message["id"], add_labels=[label["id"]])
    counts = {item["name"]: item["messages_total"] for item in call(ep, "list_labels")}
    assert counts["Invoices 2025"] == 1


# -- drafts --------------------------------------------------------------------------------------


def test_draft_lifecycle_create_update_send(ep: Episode) -> None:
    original = an_inbound_message(ep)
    draft = call(ep, "create_draft", reply_to_message_id=original["id"], body="Draft reply")
    assert draft["to"] == [original["from_email"]] and draft["thread_id"] == original["thread_id"]
    assert draft["subject"].startswith("Re: ")
    updated = call(ep, "update_draft", draft_id=draft["id"], body="Final reply with order ORD-12345.")
    assert updated["body"] == "Final reply with order ORD-12345."
    assert draft["id"] in [d["id"] for d in call(ep, "list_drafts", query="ORD-12345")["items"]]
    sent = call(ep, "send_draft", draft_id=draft["id"])
    assert sent["thread_id"] == original["thread_id"] and sent["in_reply_to"] == original["id"]
    assert "SENT" in sent["label_ids"]
    assert draft["id"] not in ep.dump()["mailbox"]["drafts"]
    refused(ep, "send_draft", "not_found", draft_id=draft["id"])


def test_incomplete_draft_cannot_be_sent_until_completed(ep: Episode) -> None:
    drafts = call(ep, "list_drafts", limit=100)["items"]
    empty = next(d for d in drafts if not d["to"])
    refused(ep, "send_draft", "invalid_state", draft_id=empty["id"])
    refused(ep, "update_draft", "invalid_argument", draft_id=empty["id"])
    call(ep, "update_draft", draft_id=empty["id"], to=[ep.world.team_member("office manager").email])
    assert call(ep, "send_draft", draft_id=empty["id"])["subject"] == empty["subject"]


def test_deleted_draft_is_gone(ep: Episode) -> None:
    draft = call(ep, "create_draft", to=["someone@example.org"], subject="Temp", body="x")
    assert call(ep, "delete_draft", draft_id=draft["id"]) == {"id": draft["id"], "deleted": True}
    refused(ep, "delete_draft", "not_found", draft_id=draft["id"])
    refused(ep, "update_draft", "not_found", draft_id=draft["id"], body="y")


def test_tools_declare_semantic_types_for_cross_service_flows() -> None:
    from mcp_services.library.mailbox import service

    schema = service.tools["send_email"].input_schema
    assert schema["properties"]["to"]["items"]["x-semantic-type"] == "email_address"
    assert schema["properties"]["attachments"]["anyOf"][0]["items"]["x-semantic-type"] == "file_name"
    assert len(service.tools) >= 13


def test_an_email_that_answers_a_thread_arrives_in_it_and_a_re_with_no_thread_gets_the_email_it_answers(ep: Episode) -> None:
    seeded = next(m for m in ep.dump()["mailbox"]["messages"].values()
                  if "INBOX" in m["label_ids"] and not m["subject"].startswith("Re:") and "SPAM" not in m["label_ids"])
    reply_id = ep.run_event("mailbox", "email_received", from_email=seeded["from_email"], from_name=seeded["from_name"],
                            subject=f"Re: {seeded['subject']}", body="Any news?", hours_ago=0.5)
    reply = call(ep, "get_message", message_id=reply_id)
    answered = call(ep, "get_message", message_id=reply["in_reply_to"])  # the latest of the threads with that subject
    assert answered["thread_id"] == reply["thread_id"] and answered["sent_at"] < reply["sent_at"]
    assert answered["subject"].removeprefix("Re: ") == seeded["subject"]
    assert seeded["from_email"] in (answered["from_email"], *answered["to"], *answered["cc"])

    person = ep.world.customers[3]
    lone_id = ep.run_event("mailbox", "email_received", from_email=person.email, from_name=person.name,
                           subject="Re: Kickoff on Tuesday", body="Could we move it to Wednesday?", hours_ago=2)
    lone = call(ep, "get_message", message_id=lone_id)
    first = call(ep, "get_message", message_id=lone["in_reply_to"])
    assert (first["subject"], first["from_email"], first["to"]) == ("Kickoff on Tuesday", ep.world.user.email, [person.email])
    assert first["thread_id"] == lone["thread_id"] and first["sent_at"] < lone["sent_at"]
    new_id = ep.run_event("mailbox", "email_received", from_email=person.email, from_name=person.name,
                          subject="A new question", body="Hello", hours_ago=1)
    assert call(ep, "get_message", message_id=new_id)["in_reply_to"] is None
