"""Behaviour of docs a user would notice: the policies are there with their figures, search, versions, the page
tree, archiving, comments."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.policies import REFUNDS, policy_plan
from mcp_services.kernel.plans.staff import EXPENSE_CATEGORIES, staff_plan
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["docs", "expenses", "hr"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def docs(ep: Episode) -> Calls:
    return Calls(ep, "docs")


def page(docs: Calls, space: str, title: str) -> dict[str, Any]:
    found: dict[str, Any] = docs("get_page_by_title", space_key=space, title=title)
    return found


def test_every_policy_of_the_plan_is_a_page_with_its_text(ep: Episode, docs: Calls) -> None:
    plan = policy_plan(ep.world)
    for policy in plan.pages:
        found = page(docs, policy.space.lower(), policy.title.upper())  # keys and titles ignore case
        assert (found["body"], found["labels"], found["version"]) == (policy.body, list(policy.labels), 1)
        assert found["url"].endswith(f"/spaces/{policy.space}/pages/{found['id']}")
    spaces = {s["key"]: s["page_count"] for s in docs("list_spaces")["items"]}
    assert sum(spaces.values()) == len(plan.pages)


def test_the_wiki_states_the_figures_hr_and_expenses_enforce(ep: Episode, docs: Calls) -> None:
    policy = Calls(ep, "expenses")("get_policy")
    expenses = page(docs, "PPL", "Expense policy")["body"]
    assert staff_plan(ep.world).expense_rules in expenses
    assert f"{policy['receipt_required_over']:.2f}" in expenses
    assert all(f"{c.limit:.2f}" in expenses for c in EXPENSE_CATEGORIES)
    time_off = page(docs, "PPL", "Time off policy")["body"]
    for p in Calls(ep, "hr")("list_time_off_policies"):
        assert p["rules"] in time_off
    assert f"{REFUNDS.support_limit:.2f}" in page(docs, "POL", "Refund policy")["body"]


def test_search_finds_words_in_titles_and_text_within_a_space_or_label(docs: Calls) -> None:
    hits = [p["title"] for p in docs.all("search_pages", query="enterprise tier")]
    assert "Discount approval policy" in hits and "Ticket escalation and routing rules" in hits
    assert [p["title"] for p in docs.all("search_pages", query="enterprise tier", space_key="SUP")] == [
        "Ticket escalation and routing rules"
    ]
    assert all("policy" in p["labels"] for p in docs.all("search_pages", label="Policy"))
    assert docs("search_pages", query="100%_")["items"] == []  # wildcards are literal
    docs.refused("search_pages", "not_found", space_key="NOPE")


def test_an_edit_is_a_new_version_and_the_old_text_stays_in_the_history(ep: Episode, docs: Calls) -> None:
    refunds = page(docs, "POL", "Refund policy")
    edited = docs(
        "update_page", page_id=refunds["id"], body="Support may refund up to 300.00 USD.", version_message="New limit"
    )
    assert (edited["version"], edited["last_editor_email"]) == (2, ep.world.user.email)
    appended = docs("append_to_page", page_id=refunds["id"], text="Ask finance for anything else.")
    assert appended["body"].endswith("Ask finance for anything else.") and appended["version"] == 3
    history = docs("list_page_versions", page_id=refunds["id"])["items"]
    assert [v["version"] for v in history] == [3, 2, 1]
    assert history[-1]["body"] == refunds["body"] and history[1]["message"] == "New limit"
    docs.refused("update_page", "invalid_argument", page_id=refunds["id"], body=appended["body"])
    macros = page(docs, "SUP", "Support macros")
    docs.refused("update_page", "conflict", page_id=macros["id"], title="ticket escalation and routing RULES")
    assert (
        docs("update_page", page_id=refunds["id"], title="Discount approval policy")["space_key"] == "POL"
    )  # other space


def test_titles_are_unique_within_a_space_and_pages_nest_within_one(docs: Calls) -> None:
    top = docs(
        "create_page",
        space_key="OPS",
        title="Purchasing",
        body="How we buy things.",
        labels=["Operations", "operations"],
    )
    assert top["labels"] == ["operations"] and top["version"] == 1
    docs.refused("create_page", "conflict", space_key="OPS", title="  purchasing ", body="Again.")
    child = docs("create_page", space_key="OPS", title="Purchase orders", body="Above 1,000.00.", parent_id=top["id"])
    assert [p["id"] for p in docs.all("list_pages", space_key="OPS", parent_id=top["id"])] == [child["id"]]
    docs.refused("move_page", "invalid_argument", page_id=top["id"], parent_id=child["id"])  # under its own child
    docs.refused("create_page", "invalid_argument", space_key="SUP", title="X", body="Y", parent_id=top["id"])
    docs.refused("archive_page", "invalid_state", page_id=top["id"])  # it has a child page
    moved = docs("move_page", page_id=child["id"], space_key="SAL")
    assert moved["space_key"] == "SAL" and moved["parent_id"] is None and "/spaces/SAL/" in moved["url"]


def test_an_archived_page_leaves_search_and_cannot_change_until_restored(docs: Calls) -> None:
    guide = page(docs, "OPS", "Office guide")
    archived = docs("archive_page", page_id=guide["id"])
    assert archived["status"] == "archived"
    assert all(p["id"] != guide["id"] for p in docs.all("search_pages", query="office"))
    assert any(p["id"] == guide["id"] for p in docs.all("search_pages", query="office", include_archived=True))
    docs.refused("update_page", "invalid_state", page_id=guide["id"], body="New text")
    docs.refused("add_comment", "invalid_state", page_id=guide["id"], body="Hello")
    assert docs("restore_page", page_id=guide["id"])["status"] == "current"
    docs.refused("restore_page", "invalid_state", page_id=guide["id"])


def test_labels_are_added_once_and_removed_by_name(docs: Calls) -> None:
    guide = page(docs, "OPS", "Office guide")
    assert docs("add_labels", page_id=guide["id"], labels=["Visitors", "office"])["labels"] == ["office", "visitors"]
    docs.refused("add_labels", "invalid_argument", page_id=guide["id"], labels=["visitors"])
    assert docs("remove_label", page_id=guide["id"], label="office")["labels"] == ["visitors"]
    docs.refused("remove_label", "invalid_argument", page_id=guide["id"], label="office")


def test_comments_take_replies_and_resolved_ones_leave_the_open_list(ep: Episode, docs: Calls) -> None:
    rules = page(docs, "SUP", "Ticket escalation and routing rules")
    (question,) = docs("list_comments", page_id=rules["id"])["items"]
    answer = docs("add_comment", page_id=rules["id"], body="Yes, it does.", reply_to_comment_id=question["id"])
    assert answer["parent_id"] == question["id"] and answer["author_email"] == ep.world.user.email
    assert docs("get_page", page_id=rules["id"])["open_comment_count"] == 2
    docs("resolve_comment", comment_id=question["id"])
    assert [c["id"] for c in docs("list_comments", page_id=rules["id"])["items"]] == [answer["id"]]
    assert len(docs("list_comments", page_id=rules["id"], include_resolved=True)["items"]) == 2
    docs.refused("resolve_comment", "invalid_state", comment_id=question["id"])
    other = page(docs, "POL", "Refund policy")
    docs.refused("add_comment", "invalid_argument", page_id=other["id"], body="x", reply_to_comment_id=question["id"])


def test_a_colleagues_comment_from_outside_only_adds_it(ep: Episode, docs: Calls) -> None:
    refunds = page(docs, "POL", "Refund policy")
    author = ep.world.team_member("finance lead")
    key = ep.run_event(
        "docs",
        "comment_added",
        page_id=refunds["id"],
        author_email=author.email,
        body="Can we raise the limit to 300?",
        hours_ago=3,
    )
    assert_added_only(ep, "docs")
    (comment,) = [c for c in docs("list_comments", page_id=refunds["id"])["items"] if c["id"] == key]
    assert comment["author_name"] == author.name and comment["created_at"] < ep.world.now
    with pytest.raises(ToolError):
        ep.run_event("docs", "comment_added", page_id="pg_9999", author_email=author.email, body="x")
