"""Behaviour of the helpdesk a user would notice: seeded tickets, status rules, replies, merges, search."""

from __future__ import annotations

import re

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, StateDump, Store, ToolContext, ToolError, ToolResult, World
from mcp_services.library import helpdesk


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["helpdesk"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("helpdesk", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.snapshot()
    result = ep.call("helpdesk", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    if ep.snapshot() != before:  # identical images are the fast path; otherwise compare every row
        after = ep.dump()
        ep.reset(before)
        assert after == ep.dump()
    return result


def a_ticket(ep: Episode, status: str, **filters: Any) -> dict[str, Any]:
    items = call(ep, "search_tickets", status=status, limit=1, **filters)["items"]
    assert items, f"no seeded {status} ticket"
    return items[0]


def all_tickets(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "search_tickets", limit=100, cursor=cursor, **filters)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


# -- seeded data ---------------------------------------------------------------------------------


def test_requesters_are_the_crm_contacts_with_the_same_name_and_phone() -> None:
    with Episode.create(["crm", "helpdesk"], world_seed=0) as ep:
        customers = ep.call("helpdesk", "search_users", {"role": "end-user", "limit": 100}).data["items"]
        assert len(customers) == len(ep.world.customers)
        for user in customers[:20]:
            contact = ep.call("crm", "find_contact_by_email", {"email": user["email"]}).data
            assert (contact["name"], contact["phone"]) == (user["name"], user["phone"])
            assert contact["company_name"] == user["organization_name"]


def test_seeded_desk_has_hundreds_of_tickets_about_orders_invoices_charges_and_bugs(ep: Episode) -> None:
    tables = ep.dump()["helpdesk"]
    tickets = list(tables["tickets"].values())
    assert 200 <= len(tickets) and 400 <= len(tables["comments"])
    assert {t["status"] for t in tickets} == {"new", "open", "pending", "solved", "closed"}
    text = " ".join(t["description"] for t in tickets)
    assert re.search(r"order #1\d{3}\b", text) and "INV-" in text and " USD" in text  # the store's orders, the books' invoices
    tags = {tag for t in tickets for tag in t["tags"]}
    assert {"billing", "double_charge", "invoice", "bug", "refund_request"} <= tags
    # Every ticket opens with the requester's description as its first public comment.
    first = call(ep, "list_ticket_comments", ticket_id=tickets[0]["id"], limit=1)["items"][0]
    assert first["public"] and first["body"] == tickets[0]["description"]


def test_new_tickets_are_unassigned_and_worked_tickets_have_an_agent(ep: Episode) -> None:
    team = {p.email for p in ep.world.team}
    for ticket in ep.dump()["helpdesk"]["tickets"].values():
        if ticket["status"] == "new":
            assert ticket["assignee_email"] is None
        else:
            assert ticket["assignee_email"] in team


def fresh_seed(world_seed: int) -> StateDump:
    """Seed a new store directly, bypassing the per-process image cache that episodes share."""
    store = Store.in_memory(helpdesk.service.metadata)
    try:
        with store.transaction() as session:
            helpdesk.seed(ToolContext(session, World.from_seed(world_seed), "helpdesk"))
        return store.dump()
    finally:
        store.close()


def test_the_same_seed_always_gives_the_same_desk(ep: Episode) -> None:
    assert fresh_seed(0) == ep.dump()["helpdesk"]


# -- search and pagination -----------------------------------------------------------------------


def test_search_finds_a_ticket_by_the_order_number_in_its_text(ep: Episode) -> None:
    ticket = next(t for t in all_tickets(ep, status="open") if re.search(r"#1\d{3}\b", t["description"]))
    order = re.search(r"#1\d{3}\b", ticket["description"])
    assert order is not None
    found = call(ep, "search_tickets", query=order.group(), limit=100)["items"]
    assert ticket["id"] in [t["id"] for t in found]


def test_search_matches_text_in_comments_too(ep: Episode) -> None:
    ticket = a_ticket(ep, "open")
    call(ep, "add_ticket_note", ticket_id=ticket["id"], note="Refunded as re_9999 in payments.")
    assert [t["id"] for t in call(ep, "search_tickets", query="re_9999")["items"]] == [ticket["id"]]


def test_search_filters_combine_requester_status_and_tag(ep: Episode) -> None:
    billing = all_tickets(ep, tag="billing")
    assert billing and all("billing" in t["tags"] for t in billing)
    email = billing[0]["requester_email"]
    narrowed = all_tickets(ep, tag="billing", requester_email=email, status=billing[0]["status"])
    assert narrowed and all(
        t["requester_email"] == email and t["status"] == billing[0]["status"] and "billing" in t["tags"]
        for t in narrowed
    )
    assert all(t["assignee_email"] is None for t in all_tickets(ep, unassigned=True))


def test_search_by_company_name_returns_only_that_companys_requesters(ep: Episode) -> None:
    company = ep.world.organisations[3].name
    found = all_tickets(ep, organization_name=company)
    assert found and {t["organization_name"] for t in found} == {company}


def test_pagination_walks_every_ticket_exactly_once(ep: Episode) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = call(ep, "search_tickets", limit=37, cursor=cursor)
        seen += [t["id"] for t in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == page["total"] == len(ep.dump()["helpdesk"]["tickets"])


def test_a_made_up_cursor_is_refused(ep: Episode) -> None:
    refused(ep, "search_tickets", "invalid_argument", cursor="page-two")


def test_requested_tickets_are_only_that_customers_newest_first(ep: Episode) -> None:
    email = a_ticket(ep, "pending")["requester_email"]
    items = call(ep, "list_requested_tickets", requester_email=email, limit=100)["items"]
    assert items and {t["requester_email"] for t in items} == {email}
    created = [t["created_at"] for t in items]
    assert created == sorted(created, reverse=True)
    result = refused(ep, "list_requested_tickets", "not_found", requester_email="nobody@nowhere.example")
    assert "search_users" in (result.error_message or "")


# -- create, update, assign ----------------------------------------------------------------------


def test_created_ticket_round_trips_and_its_description_is_the_first_comment(ep: Episode) -> None:
    customer = ep.world.customers[5]
    created = call(
        ep,
        "create_ticket",
        requester_email=customer.email,
        subject="Charged twice for order ORD-77777",
        description="We were charged 129.00 USD twice.",
        priority="high",
        ticket_type="incident",
        tags=["Billing", "double charge"],
    )
    assert created["status"] == "new" and created["requester_name"] == customer.name
    assert created["tags"] == ["billing", "double_charge"]
    assert created["created_at"] == ep.world.now
    assert call(ep, "get_ticket", ticket_id=created["id"]) == created
    comments = call(ep, "list_ticket_comments", ticket_id=created["id"])["items"]
    assert [(c["author_email"], c["body"], c["public"]) for c in comments] == [
        (customer.email, "We were charged 129.00 USD twice.", True)
    ]


def test_a_ticket_with_an_assignee_starts_open(ep: Episode) -> None:
    agent = ep.world.team_member("support agent").email
    created = call(
        ep, "create_ticket", requester_email=ep.world.customers[0].email, subject="Hi", description="Help",
        assignee_email=agent,
    )
    assert (created["status"], created["assignee_email"]) == ("open", agent)


def test_an_unknown_requester_needs_a_name_and_then_becomes_a_user(ep: Episode) -> None:
    args = {"requester_email": "new.person@startup.example", "subject": "Pricing", "description": "How much?"}
    result = refused(ep, "create_ticket", "invalid_argument", **args)
    assert "requester_name" in (result.error_message or "")
    created = call(ep, "create_ticket", requester_name="New Person", **args)
    users = call(ep, "search_users", query="new.person@startup.example")["items"]
    assert [(u["name"], u["role"], u["id"]) for u in users] == [("New Person", "end-user", created["requester_id"])]


def test_assigning_a_new_ticket_opens_it(ep: Episode) -> None:
    ticket = a_ticket(ep, "new")
    lead = ep.world.team_member("support lead").email
    updated = call(ep, "update_ticket", ticket_id=ticket["id"], assignee_email=lead, priority="urgent")
    assert (updated["status"], updated["assignee_email"], updated["priority"]) == ("open", lead, "urgent")
    assert updated["updated_at"] == ep.world.now


def test_only_agents_can_be_assigned(ep: Episode) -> None:
    ticket = a_ticket(ep, "open")
    result = refused(
        ep, "update_ticket", "invalid_argument", ticket_id=ticket["id"], assignee_email=ep.world.customers[0].email
    )
    assert "search_users" in (result.error_message or "")
    agents = call(ep, "search_users", role="agent", limit=100)["items"]
    agents += call(ep, "search_users", role="admin")["items"]
    assert {a["email"] for a in agents} == {p.email for p in ep.world.team}


def test_an_update_with_nothing_to_change_is_refused(ep: Episode) -> None:
    refused(ep, "update_ticket", "invalid_argument", ticket_id=a_ticket(ep, "open")["id"])


def test_unknown_ticket_says_how_to_find_one(ep: Episode) -> None:
    result = refused(ep, "get_ticket", "not_found", ticket_id="tk_9999")
    assert "search_tickets" in (result.error_message or "")


# -- status rules -------------------------------------------------------------------------------


def test_nothing_goes_back_to_new(ep: Episode) -> None:
    refused(ep, "update_ticket", "invalid_argument", ticket_id=a_ticket(ep, "open")["id"], status="new")


def test_a_solved_ticket_can_only_reopen_or_close_and_the_error_says_so(ep: Episode) -> None:
    ticket = a_ticket(ep, "solved")
    result = refused(ep, "update_ticket", "invalid_state", ticket_id=ticket["id"], status="pending")
    assert "open, closed" in (result.error_message or "")


def test_solving_an_unassigned_ticket_assigns_it_to_you_and_offers_a_survey(ep: Episode) -> None:
    ticket = a_ticket(ep, "new")
    solved = call(ep, "solve_ticket", ticket_id=ticket["id"], comment="Refund issued.")
    assert solved["status"] == "solved" and solved["solved_at"] == ep.world.now
    assert solved["assignee_email"] == ep.world.user.email
    assert solved["satisfaction_score"] == "offered"
    last = call(ep, "list_ticket_comments", ticket_id=ticket["id"], limit=100)["items"][-1]
    assert (last["body"], last["public"], last["author_email"]) == ("Refund issued.", True, ep.world.user.email)


def test_a_solved_ticket_cannot_be_solved_again(ep: Episode) -> None:
    refused(ep, "solve_ticket", "invalid_state", ticket_id=a_ticket(ep, "solved")["id"])


def test_replying_to_a_solved_ticket_reopens_it(ep: Episode) -> None:
    ticket = a_ticket(ep, "solved")
    reply = call(ep, "add_ticket_reply", ticket_id=ticket["id"], body="Sorry, looking again.")
    assert reply["public"] and reply["author_email"] == ep.world.user.email
    after = call(ep, "get_ticket", ticket_id=ticket["id"])
    assert (after["status"], after["solved_at"]) == ("open", None)


def test_a_reply_can_set_the_ticket_pending(ep: Episode) -> None:
    ticket = a_ticket(ep, "open")
    call(ep, "add_ticket_reply", ticket_id=ticket["id"], body="Could you send the invoice number?", status="pending")
    assert call(ep, "get_ticket", ticket_id=ticket["id"])["status"] == "pending"


def test_only_solved_tickets_can_be_reopened(ep: Episode) -> None:
    refused(ep, "reopen_ticket", "invalid_state", ticket_id=a_ticket(ep, "open")["id"])
    ticket = a_ticket(ep, "solved")
    assert call(ep, "reopen_ticket", ticket_id=ticket["id"], comment="Customer wrote back.")["status"] == "open"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("add_ticket_reply", {"body": "Hello?"}),
        ("add_ticket_note", {"note": "Checked."}),
        ("reopen_ticket", {}),
        ("update_ticket", {"priority": "high"}),
        ("close_ticket", {}),
        ("add_ticket_tags", {"tags": ["vip"]}),
    ],
)
def test_a_closed_ticket_is_final(ep: Episode, tool: str, args: dict[str, Any]) -> None:
    ticket = a_ticket(ep, "closed")
    result = refused(ep, tool, "invalid_state", ticket_id=ticket["id"], **args)
    assert "follow_up_of" in (result.error_message or "")


def test_closing_an_open_ticket_is_allowed_and_final(ep: Episode) -> None:
    ticket = a_ticket(ep, "open")
    assert call(ep, "close_ticket", ticket_id=ticket["id"])["status"] == "closed"
    refused(ep, "add_ticket_reply", "invalid_state", ticket_id=ticket["id"], body="One more thing")


def test_a_follow_up_is_only_for_closed_tickets(ep: Episode) -> None:
    closed = a_ticket(ep, "closed")
    args = {"requester_email": closed["requester_email"], "subject": "Again", "description": "Same problem."}
    refused(ep, "create_ticket", "invalid_state", follow_up_of=a_ticket(ep, "open")["id"], **args)
    follow_up = call(ep, "create_ticket", follow_up_of=closed["id"], **args)
    assert follow_up["follow_up_of"] == closed["id"]


# -- notes, tags, merges, ratings ---------------------------------------------------------------


def test_an_internal_note_is_hidden_from_the_requester_and_keeps_the_status(ep: Episode) -> None:
    ticket = a_ticket(ep, "pending")
    note = call(ep, "add_ticket_note", ticket_id=ticket["id"], note="Refund re_0042 issued.")
    assert not note["public"]
    assert call(ep, "get_ticket", ticket_id=ticket["id"])["status"] == "pending"
    public = call(ep, "list_ticket_comments", ticket_id=ticket["id"], public_only=True, limit=100)["items"]
    assert note["id"] not in [c["id"] for c in public]
    refused(ep, "add_ticket_note", "invalid_argument", ticket_id=ticket["id"], note="   ")


def test_tags_are_added_once_and_only_existing_tags_can_be_removed(ep: Episode) -> None:
    ticket = a_ticket(ep, "open", tag="billing")
    tagged = call(ep, "add_ticket_tags", ticket_id=ticket["id"], tags=["Refund Issued", "billing"])
    assert tagged["tags"] == [*ticket["tags"], "refund_issued"]
    refused(ep, "add_ticket_tags", "invalid_state", ticket_id=ticket["id"], tags=["billing"])
    refused(ep, "remove_ticket_tags", "invalid_argument", ticket_id=ticket["id"], tags=["not_there"])
    assert "refund_issued" not in call(ep, "remove_ticket_tags", ticket_id=ticket["id"], tags=["refund_issued"])["tags"]


def test_merging_closes_the_duplicates_into_the_target(ep: Episode) -> None:
    target, source = call(ep, "search_tickets", status="open", limit=2)["items"]
    merged = call(ep, "merge_tickets", target_ticket_id=target["id"], source_ticket_ids=[source["id"]])
    assert merged["merged_ticket_ids"] == [source["id"]] and merged["target"]["status"] == "open"
    after = call(ep, "get_ticket", ticket_id=source["id"])
    assert (after["status"], after["merged_into"]) == ("closed", target["id"])
    notes = call(ep, "list_ticket_comments", ticket_id=target["id"], limit=100)["items"]
    assert source["id"] in notes[-1]["body"] and not notes[-1]["public"]


def test_a_ticket_cannot_be_merged_into_itself_or_with_a_closed_ticket(ep: Episode) -> None:
    open_ticket, closed = a_ticket(ep, "open"), a_ticket(ep, "closed")
    itself = [open_ticket["id"]]
    refused(ep, "merge_tickets", "invalid_argument", target_ticket_id=open_ticket["id"], source_ticket_ids=itself)
    refused(ep, "merge_tickets", "invalid_state", target_ticket_id=open_ticket["id"], source_ticket_ids=[closed["id"]])
    refused(ep, "merge_tickets", "invalid_state", target_ticket_id=closed["id"], source_ticket_ids=[open_ticket["id"]])


def test_satisfaction_is_rated_only_on_solved_or_closed_tickets(ep: Episode) -> None:
    refused(ep, "create_satisfaction_rating", "invalid_state", ticket_id=a_ticket(ep, "open")["id"], score="good")
    ticket = a_ticket(ep, "solved")
    rated = call(ep, "create_satisfaction_rating", ticket_id=ticket["id"], score="bad", comment="Too slow.")
    assert (rated["satisfaction_score"], rated["satisfaction_comment"]) == ("bad", "Too slow.")


# -- what the composer reads: roles, the declared workflow -----------------------------------------


def test_a_ticket_names_its_requester_assignee_organisation_and_status() -> None:
    ticket = helpdesk.service.entities["ticket"].definition
    roles = {f.name: f.role for f in ticket.fields if f.role}
    assert roles["requester_id"] == "requester" and roles["assignee_email"] == "assignee"
    assert roles["organization_name"] == "organization"
    assert ticket.state == helpdesk.TICKET_STATUS and ticket.state.field == "status"


def test_a_new_ticket_carries_its_requesters_company(ep: Episode) -> None:
    customer = ep.world.customers[7]
    created = call(ep, "create_ticket", requester_email=customer.email, subject="Hi", description="Help")
    assert created["organization_name"] == ep.world.organisation(customer.organisation_id).name
    stranger = call(
        ep, "create_ticket", requester_email="solo@nowhere.example", requester_name="Solo Person", subject="Hi",
        description="Help",
    )
    assert stranger["organization_name"] is None


@pytest.mark.parametrize("status", ["new", "open", "pending", "solved"])
def test_the_declared_workflow_is_exactly_what_update_ticket_allows(ep: Episode, status: str) -> None:
    ticket = a_ticket(ep, status)
    allowed = set((helpdesk.TICKET_STATUS.transitions or {})[status])
    for target in ("open", "pending", "solved", "closed"):
        ep.reset()
        result = ep.call("helpdesk", "update_ticket", {"ticket_id": ticket["id"], "status": target})
        assert result.success == (target in allowed), (status, target, result.envelope())
        if not result.success:
            assert result.error_code == "invalid_state"


def test_search_words_may_sit_in_different_parts_of_the_thread_and_wildcards_are_literal(ep: Episode) -> None:
    ticket = a_ticket(ep, "open")
    call(ep, "add_ticket_note", ticket_id=ticket["id"], note="Refunded as re_4242.")
    word = max(ticket["subject"].split(), key=len)
    assert ticket["id"] in [t["id"] for t in all_tickets(ep, query=f"re_4242 {word}")]
    assert call(ep, "search_tickets", query="re_4242 nosuchwordanywhere")["items"] == []
    assert call(ep, "search_tickets", query="%")["items"] == []
    assert call(ep, "search_tickets", query="re?4242")["items"] == []


def test_a_tag_filter_matches_whole_tags_only(ep: Episode) -> None:
    assert all_tickets(ep, tag="refund_request")
    assert call(ep, "search_tickets", tag="refund")["items"] == []


def test_a_received_ticket_is_a_world_event_not_a_tool(ep: Episode) -> None:
    assert "ticket_received" not in helpdesk.service.tools
    customer = ep.world.customers[9]
    ticket_id = ep.run_event(
        "helpdesk", "ticket_received", requester_email=customer.email, subject="Charged twice for order ORD-55555",
        description="Please refund the duplicate charge.", tags=["Billing"],
    )
    ticket = call(ep, "get_ticket", ticket_id=ticket_id)
    shown = (ticket["status"], ticket["assignee_email"], ticket["channel"], ticket["tags"])
    assert shown == ("new", None, "email", ["billing"])
    assert (ticket["requester_email"], ticket["comment_count"]) == (customer.email, 1)
    newcomer = ep.run_event(
        "helpdesk", "ticket_received", requester_email="first.time@startup.example", requester_name="First Time",
        subject="Pricing", description="How much is the Pro plan?", channel="web",
    )
    assert call(ep, "get_ticket", ticket_id=newcomer)["requester_name"] == "First Time"
    with pytest.raises(ToolError, match="requester_name"):
        ep.run_event("helpdesk", "ticket_received", requester_email="x@y.example", subject="s", description="d")
    with pytest.raises(ToolError, match="channel 'fax'"):
        ep.run_event(
            "helpdesk", "ticket_received", requester_email=customer.email, subject="s", description="d", channel="fax"
        )


def test_tag_search_still_works_after_the_episode_was_diffed(ep: Episode) -> None:
    before = len(all_tickets(ep, tag="billing"))
    call(ep, "add_ticket_tags", ticket_id=a_ticket(ep, "open")["id"], tags=["billing_review"])
    assert ep.diff()["helpdesk"].table("tickets").changed
    assert len(all_tickets(ep, tag="billing")) == before and len(all_tickets(ep, tag="billing_review")) == 1
