"""Behaviour of the chat service a user would notice: the workspace, channel rules, messages, search."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolResult


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["chat"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("chat", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.dump()
    result = ep.call("chat", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    assert ep.dump() == before
    return result


def history(ep: Episode, channel: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "get_channel_history", channel=channel, limit=100, cursor=cursor)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def someone_elses_message(ep: Episode, channel: str = "sales") -> dict[str, Any]:
    return next(m for m in history(ep, channel) if m["author_email"] != ep.world.user.email)


def my_message(ep: Episode, channel: str = "sales") -> dict[str, Any]:
    return call(ep, "post_message", channel=channel, text="Quarter is looking good.")


# -- the workspace -------------------------------------------------------------------------------


def test_users_are_the_home_team_with_their_world_details(ep: Episode) -> None:
    users = call(ep, "list_users", limit=100)["items"]
    assert len(users) == len(ep.world.team)
    by_email = {u["email"]: u for u in users}
    for person in ep.world.team:
        user = by_email[person.email]
        assert (user["real_name"], user["username"], user["phone"], user["title"]) == (
            person.name, person.username, person.phone, person.job_title,
        )


def test_a_colleague_is_found_by_email_but_a_customer_is_not(ep: Episode) -> None:
    colleague = ep.world.team[2]
    assert call(ep, "lookup_user_by_email", email=colleague.email)["username"] == colleague.username
    refused(ep, "lookup_user_by_email", "not_found", email=ep.world.customers[0].email)


def test_seeded_workspace_is_rich(ep: Episode) -> None:
    tables = ep.dump()["chat"]
    assert len(tables["channels"]) >= 15 and len(tables["messages"]) >= 300 and len(tables["reactions"]) >= 100
    assert any(m["thread_parent_id"] for m in tables["messages"].values())
    assert all(m["posted_at"] <= ep.world.now for m in tables["messages"].values())


def test_messages_quote_crm_contacts_by_their_crm_email() -> None:
    with Episode.create(["crm", "chat"], world_seed=0) as episode:
        emails = sorted(c["email"] for c in episode.dump()["crm"]["contacts"].values())
        quoted: list[str] = []
        for email in emails:
            if episode.call("chat", "search_messages", {"query": email, "limit": 1}).data["total"]:
                quoted.append(email)
            if len(quoted) == 5:
                break
        assert len(quoted) == 5
        hit = episode.call("chat", "search_messages", {"query": quoted[0]}).data["items"][0]
        assert quoted[0] in hit["text"] and hit["permalink"].startswith("https://")


def test_people_are_found_by_the_handle_people_type(ep: Episode) -> None:
    colleague = ep.world.team[5]
    found = call(ep, "list_users", query=f"@{colleague.username}")["items"]
    assert [u["email"] for u in found] == [colleague.email]
    assert call(ep, "list_users", query=f"{colleague.first_name} {colleague.job_title}")["items"][0]["email"] == (
        colleague.email
    )


def test_a_customer_channel_talks_about_that_customer_only(ep: Episode) -> None:
    channels = [c for c in call(ep, "list_channels", limit=100)["items"] if (c["name"] or "").startswith("customer-")]
    assert len(channels) == 3
    for channel in channels:
        org = next(o for o in ep.world.organisations if channel["topic"] == f"Shared notes on the {o.name} account")
        people = [p.name for p in ep.world.customers if p.organisation_id == org.id]
        top_level = [m for m in history(ep, channel["name"]) if m["thread_parent_id"] is None]
        assert top_level and all(org.name in m["text"] or any(n in m["text"] for n in people) for m in top_level)


# -- channels ------------------------------------------------------------------------------------


def test_list_channels_hides_archived_and_private_channels_you_are_not_in(ep: Episode) -> None:
    names = {c["name"] for c in call(ep, "list_channels", limit=100)["items"]}
    assert {"general", "sales", "leadership"} <= names
    assert "offsite-2024" not in names and "eng-oncall" not in names
    archived = call(ep, "list_channels", include_archived=True, limit=100)["items"]
    assert {"offsite-2024", "project-phoenix"} <= {c["name"] for c in archived}
    dms = call(ep, "list_channels", kind="im")["items"]
    assert dms and all(c["name"] is None and len(c["dm_with"]) == 1 for c in dms)


def test_channels_are_listed_by_name_then_direct_messages_and_found_as_people_type_them(ep: Episode) -> None:
    items = call(ep, "list_channels", limit=100)["items"]
    names = [c["name"] for c in items if c["name"]]
    assert names == sorted(names) and [c["kind"] for c in items[len(names):]] == ["im"] * (len(items) - len(names))
    paged = call(ep, "list_channels", limit=4, cursor=str(len(names) - 2))
    assert [c["id"] for c in paged["items"]] == [c["id"] for c in items[len(names) - 2 : len(names) + 2]]
    assert {c["name"] for c in call(ep, "list_channels", query="#support")["items"]} == {"support"}
    assert call(ep, "post_message", channel="#support", text="On it.")["channel_name"] == "support"


def test_private_channel_you_are_not_in_cannot_be_read(ep: Episode) -> None:
    refused(ep, "get_channel_history", "permission_denied", channel="eng-oncall")
    refused(ep, "join_channel", "permission_denied", channel="#eng-oncall")


def test_get_channel_lists_members_and_accepts_name_or_id(ep: Episode) -> None:
    by_name = call(ep, "get_channel", channel="#finance")
    assert call(ep, "get_channel", channel=by_name["id"]) == by_name
    assert by_name["member_count"] == len(by_name["members"]) and by_name["is_member"]
    refused(ep, "get_channel", "not_found", channel="no-such-channel")


def test_created_channel_round_trips_and_its_name_is_then_taken(ep: Episode) -> None:
    colleague = ep.world.team[4]
    created = call(
        ep, "create_channel", name="q3-launch", is_private=True, topic="Launch plan", member_emails=[colleague.email]
    )
    got = call(ep, "get_channel", channel="q3-launch")
    assert got == created
    assert got["kind"] == "private" and got["topic"] == "Launch plan"
    assert {m["email"] for m in got["members"]} == {ep.world.user.email, colleague.email}
    refused(ep, "create_channel", "conflict", name="q3-launch")


def test_channel_names_follow_slack_rules(ep: Episode) -> None:
    result = refused(ep, "create_channel", "invalid_argument", name="Q3 Launch!")
    assert "q3-launch" in (result.error_message or "")
    refused(ep, "create_channel", "conflict", name="offsite-2024")  # taken by an archived channel


def test_nobody_can_post_in_an_archived_channel_until_it_is_unarchived(ep: Episode) -> None:
    refused(ep, "post_message", "invalid_state", channel="project-phoenix", text="Anyone here?")
    call(ep, "unarchive_channel", channel="project-phoenix")
    assert call(ep, "post_message", channel="project-phoenix", text="Anyone here?")["channel_name"] == "project-phoenix"


def test_archiving_is_a_one_way_step_until_unarchived(ep: Episode) -> None:
    archived = call(ep, "archive_channel", channel="sales")
    assert archived["archived"] and archived["archived_at"] == ep.world.now
    refused(ep, "archive_channel", "invalid_state", channel="sales")
    refused(ep, "set_channel_topic", "invalid_state", channel="sales", topic="New")
    call(ep, "unarchive_channel", channel="sales")
    refused(ep, "unarchive_channel", "invalid_state", channel="sales")


def test_general_cannot_be_archived_or_have_members_removed(ep: Episode) -> None:
    refused(ep, "archive_channel", "permission_denied", channel="general")
    refused(ep, "kick_from_channel", "permission_denied", channel="general", user_email=ep.world.team[3].email)


def test_you_must_join_a_public_channel_before_posting(ep: Episode) -> None:
    refused(ep, "post_message", "permission_denied", channel="engineering", text="Hello")
    joined = call(ep, "join_channel", channel="engineering")
    assert joined["is_member"]
    refused(ep, "join_channel", "invalid_state", channel="engineering")
    assert call(ep, "post_message", channel="engineering", text="Hello")["author_email"] == ep.world.user.email


def test_inviting_and_removing_members_follow_the_rules(ep: Episode) -> None:
    finance = call(ep, "get_channel", channel="finance")
    outsider = next(p for p in ep.world.team if p.email not in {m["email"] for m in finance["members"]})
    insider = next(m["email"] for m in finance["members"] if m["email"] != ep.world.user.email)
    refused(ep, "invite_to_channel", "invalid_state", channel="finance", user_emails=[outsider.email, insider])
    refused(ep, "invite_to_channel", "not_found", channel="finance", user_emails=[ep.world.customers[0].email])
    invited = call(ep, "invite_to_channel", channel="finance", user_emails=[outsider.email])
    assert outsider.email in {m["email"] for m in invited["members"]}
    refused(ep, "kick_from_channel", "invalid_argument", channel="finance", user_email=ep.world.user.email)
    kicked = call(ep, "kick_from_channel", channel="finance", user_email=outsider.email)
    assert outsider.email not in {m["email"] for m in kicked["members"]}
    refused(ep, "kick_from_channel", "invalid_state", channel="finance", user_email=outsider.email)


def test_topic_is_set_and_limited_to_250_characters(ep: Episode) -> None:
    assert call(ep, "set_channel_topic", channel="office", topic="Lunch orders by 11")["topic"] == "Lunch orders by 11"
    refused(ep, "set_channel_topic", "invalid_argument", channel="office", topic="x" * 251)


def test_direct_message_is_opened_once_and_reused(ep: Episode) -> None:
    colleague = ep.world.team[6]
    dm = call(ep, "open_direct_message", user_email=colleague.email)
    assert dm["kind"] == "im" and dm["dm_with"] == [colleague.username]
    assert call(ep, "open_direct_message", user_email=colleague.email)["id"] == dm["id"]
    sent = call(ep, "post_message", channel=dm["id"], text="Can you review the proposal?")
    assert history(ep, dm["id"])[0]["id"] == sent["id"]
    refused(ep, "open_direct_message", "invalid_argument", user_email=ep.world.user.email)


# -- messages ------------------------------------------------------------------------------------


def test_history_is_newest_first_and_pages_without_repeats(ep: Episode) -> None:
    first = call(ep, "get_channel_history", channel="support", limit=5)
    assert len(first["items"]) == 5 and first["next_cursor"] == "5"
    items = history(ep, "support")
    assert len(items) == first["total"] == len({m["id"] for m in items})
    assert [m["posted_at"] for m in items] == sorted((m["posted_at"] for m in items), reverse=True)
    assert all(m["thread_parent_id"] is None for m in items[:3] if m["reply_count"])


def test_posted_message_appears_first_in_history(ep: Episode) -> None:
    posted = my_message(ep)
    assert history(ep, "sales")[0] == posted
    assert posted["posted_at"] == ep.world.now and posted["reactions"] == []


def test_you_can_edit_and_delete_only_your_own_messages(ep: Episode) -> None:
    theirs = someone_elses_message(ep)
    refused(ep, "update_message", "permission_denied", message_id=theirs["id"], text="Changed")
    refused(ep, "delete_message", "permission_denied", message_id=theirs["id"])
    mine = my_message(ep)
    edited = call(ep, "update_message", message_id=mine["id"], text="Quarter is looking great.")
    assert edited["text"] == "Quarter is looking great." and edited["edited_at"] == ep.world.now
    call(ep, "delete_message", message_id=mine["id"])
    assert mine["id"] not in {m["id"] for m in history(ep, "sales")}
    refused(ep, "update_message", "invalid_state", message_id=mine["id"], text="Back again")
    refused(ep, "delete_message", "invalid_state", message_id=mine["id"])


def test_a_deleted_thread_parent_stays_as_a_tombstone(ep: Episode) -> None:
    mine = my_message(ep)
    call(ep, "reply_in_thread", message_id=mine["id"], text="Details in the deck.")
    call(ep, "delete_message", message_id=mine["id"])
    shown = next(m for m in history(ep, "sales") if m["id"] == mine["id"])
    assert shown["deleted"] and shown["text"] == "This message was deleted." and shown["reply_count"] == 1


def test_thread_replies_round_trip_and_cannot_nest(ep: Episode) -> None:
    parent = someone_elses_message(ep)
    reply = call(ep, "reply_in_thread", message_id=parent["id"], text="I'll take this one.")
    assert reply["thread_parent_id"] == parent["id"]
    thread = call(ep, "get_thread_replies", message_id=parent["id"])
    assert thread["parent"]["reply_count"] == parent["reply_count"] + 1 == thread["total"]
    assert thread["replies"][-1] == reply
    assert reply["id"] not in {m["id"] for m in history(ep, "sales")}  # replies stay in the thread
    refused(ep, "reply_in_thread", "invalid_argument", message_id=reply["id"], text="Nested?")
    broadcast = call(ep, "reply_in_thread", message_id=parent["id"], text="FYI all", also_send_to_channel=True)
    assert history(ep, "sales")[0]["id"] == broadcast["id"]


def test_reacting_twice_with_the_same_emoji_is_a_conflict(ep: Episode) -> None:
    target = someone_elses_message(ep)
    reacted = call(ep, "add_reaction", message_id=target["id"], name=":white_check_mark:")
    mark = next(r for r in reacted["reactions"] if r["name"] == "white_check_mark")
    assert ep.world.user.username in mark["usernames"]
    refused(ep, "add_reaction", "conflict", message_id=target["id"], name="white_check_mark")
    refused(ep, "add_reaction", "invalid_argument", message_id=target["id"], name="not an emoji")


def test_reactions_and_replies_are_refused_in_archived_channels(ep: Episode) -> None:
    old = history(ep, "offsite-2024")[0]
    refused(ep, "add_reaction", "invalid_state", message_id=old["id"], name="eyes")
    refused(ep, "reply_in_thread", "invalid_state", message_id=old["id"], text="Late reply")


# -- search --------------------------------------------------------------------------------------


def test_search_matches_every_word_and_is_newest_first(ep: Episode) -> None:
    found = call(ep, "search_messages", query="invoice overdue", limit=100)["items"]
    assert found and all("invoice" in m["text"].lower() and "overdue" in m["text"].lower() for m in found)
    assert [m["posted_at"] for m in found] == sorted((m["posted_at"] for m in found), reverse=True)


def test_search_filters_by_channel_author_and_date(ep: Episode) -> None:
    author = ep.world.team[3]
    by_author = call(ep, "search_messages", query="the", from_email=author.email, limit=100)["items"]
    assert by_author and all(m["author_email"] == author.email for m in by_author)
    in_support = call(ep, "search_messages", query="the", channel="#support", limit=100)["items"]
    assert in_support and all(m["channel_name"] == "support" for m in in_support)
    since = ep.world.now[:10]
    recent = call(ep, "search_messages", query="a", after=since, limit=100)["items"]
    assert all(m["posted_at"] >= since for m in recent)
    everything = call(ep, "search_messages", query="a", limit=1)["total"]
    assert len(recent) < everything


def test_search_never_shows_private_channels_you_are_not_in(ep: Episode) -> None:
    results = call(ep, "search_messages", query="e", limit=100)
    seen: list[dict[str, Any]] = results["items"]
    cursor = results["next_cursor"]
    while cursor:
        page = call(ep, "search_messages", query="e", limit=100, cursor=cursor)
        seen += page["items"]
        cursor = page["next_cursor"]
    assert "eng-oncall" not in {m["channel_name"] for m in seen}
    assert "leadership" in {m["channel_name"] for m in seen}
    refused(ep, "search_messages", "permission_denied", query="e", channel="eng-oncall")


def test_reads_change_nothing(ep: Episode) -> None:
    before = ep.dump()
    call(ep, "list_channels", include_archived=True)
    call(ep, "get_channel_history", channel="general")
    call(ep, "search_messages", query="refund")
    assert ep.dump() == before
