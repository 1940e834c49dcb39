"""World events: what arrives from outside (an email, a chat post, a text, a ticket) lands as the product shows it.

Events are how the composer plants a task's trigger. Each one only adds records, and what it adds is
found by the service's own tools, exactly as an agent will meet it.
"""

from __future__ import annotations

from mcp_services.kernel import Episode


def _added_only(episode: Episode, service: str) -> None:
    state = episode.diff()[service]
    assert state and not any(t.changed or t.deleted for t in state.tables.values())


def test_an_inbound_email_is_an_unread_inbox_message_from_its_sender() -> None:
    episode = Episode.create(["mailbox"], 0)
    person = episode.world.customers[0]
    key = episode.run_event("mailbox", "email_received", from_email=person.email, from_name=person.name,
                            subject="Charged twice", body="Please refund the second charge.", hours_ago=2.0)
    _added_only(episode, "mailbox")
    found = episode.call("mailbox", "search_messages", {"from_email": person.email, "is_unread": True}).data["items"]
    message = next(m for m in found if m["id"] == key)
    assert "INBOX" in message["label_names"] and message["subject"] == "Charged twice"
    assert message["sent_at"] < episode.world.now
    assert message["attachments"] == []


def test_an_inbound_email_can_carry_attached_files() -> None:
    episode = Episode.create(["mailbox"], 0)
    person = episode.world.team[1]
    key = episode.run_event("mailbox", "email_received", from_email=person.email, from_name=person.name,
                            subject="Hotel receipt", body="Here it is.", attachments=["receipt-2025-03-04-hyattplace.pdf"])
    found = episode.call("mailbox", "search_messages", {"from_email": person.email, "has_attachment": True}).data["items"]
    assert [m["id"] for m in found] == [key]
    assert episode.call("mailbox", "get_message", {"message_id": key}).data["attachments"] == ["receipt-2025-03-04-hyattplace.pdf"]


def test_a_chat_post_appears_in_its_channel_by_its_author() -> None:
    episode = Episode.create(["chat"], 0)
    author = episode.world.team[2]
    key = episode.run_event("chat", "message_posted", channel="#support", author_email=author.email,
                            text="Can someone open a ticket for Ana?", hours_ago=0.5)
    _added_only(episode, "chat")
    history = episode.call("chat", "get_channel_history", {"channel": "support"}).data["items"]
    assert any(m["id"] == key and m["author_email"] == author.email for m in history)


def test_an_inbound_text_reaches_our_default_number() -> None:
    episode = Episode.create(["sms"], 0)
    person = episode.world.customers[1]
    key = episode.run_event("sms", "message_received", from_number=person.phone, body="Please stop texting me")
    _added_only(episode, "sms")
    message = episode.call("sms", "get_message", {"message_sid": key}).data
    assert message["direction"] == "inbound" and message["from_number"] == person.phone


def test_a_ticket_that_arrives_hours_ago_is_new_with_its_first_comment() -> None:
    episode = Episode.create(["helpdesk"], 0)
    person = episode.world.customers[2]
    key = episode.run_event("helpdesk", "ticket_received", requester_email=person.email, requester_name=person.name,
                            subject="Export broken", description="The CSV export is empty.", hours_ago=3.0)
    _added_only(episode, "helpdesk")
    ticket = episode.call("helpdesk", "get_ticket", {"ticket_id": key}).data
    assert ticket["status"] == "new" and ticket["created_at"] < episode.world.now
    comments = episode.call("helpdesk", "list_ticket_comments", {"ticket_id": key}).data["items"]
    assert [c["body"] for c in comments] == ["The CSV export is empty."]


def test_a_policy_document_lands_in_its_folder_and_reads_back() -> None:
    episode = Episode.create(["files"], 0)
    owner = episode.world.team[0]
    key = episode.run_event("files", "document_added", name="Refund policy.md", content="# Refund policy\n\nRefunds over 500.",
                            folder="Policies", owner_email=owner.email, days_ago=40)
    _added_only(episode, "files")
    assert episode.call("files", "download_file", {"file_id": key}).data["content"].startswith("# Refund policy")
    found = episode.call("files", "search_files", {"query": "refund policy"}).data["items"]
    assert any(f["id"] == key and f["path"].endswith("Policies/Refund policy.md") for f in found)
