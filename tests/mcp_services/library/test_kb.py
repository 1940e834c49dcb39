"""Behaviour of the help center a user would notice: what customers see, the draft-publish-archive life cycle,
titles and links, readers' feedback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.policies import REFUNDS
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["kb"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def kb(ep: Episode) -> Calls:
    return Calls(ep, "kb")


def article(kb: Calls, title: str) -> dict[str, Any]:
    (found,) = [
        a
        for s in ("draft", "published", "archived")
        for a in kb.all("search_articles", status=s)
        if a["title"] == title
    ]
    return found


def section(kb: Calls, name: str) -> dict[str, Any]:
    return next(s for s in kb.all("list_sections") if s["name"] == name)


def test_search_shows_drafts_beside_published_articles_and_archived_ones_only_on_request(kb: Calls) -> None:
    found = {a["title"]: a["status"] for a in kb.all("search_articles", query="export")}
    assert found == {"How to export a report to CSV": "published", "Exporting large reports": "draft"}
    archived = [a["title"] for a in kb.all("search_articles", query="export", status="archived")]
    assert archived == ["Exporting reports (legacy dashboard)"]
    assert [a["title"] for a in kb.all("search_articles", label="SSO")] == ["How to set up single sign-on (SSO)"]
    counts = {s["name"]: s["published_articles"] for s in kb.all("list_sections")}
    assert counts["Reports and exports"] == len(
        kb.all("list_articles", section_id=section(kb, "Reports and exports")["id"], status="published")
    )


def test_the_refund_article_tells_customers_the_window_the_policy_sets(kb: Calls) -> None:
    assert f"within {REFUNDS.window_days} days" in article(kb, "How refunds work")["body"]


def test_a_new_article_is_a_draft_until_published_and_can_go_back(ep: Episode, kb: Calls) -> None:
    target = section(kb, "Account setup")
    draft = kb(
        "create_article",
        section_id=target["id"],
        title="How to sign in with a passkey",
        body="1. Open settings.",
        label_names=["Login", "login", "passkeys"],
    )
    assert (draft["status"], draft["label_names"], draft["author_email"]) == (
        "draft",
        ["login", "passkeys"],
        ep.world.user.email,
    )
    assert draft["html_url"].startswith(f"https://help.{ep.world.home.domain}/hc/en-us/articles/")
    assert draft["html_url"].endswith("-how-to-sign-in-with-a-passkey")
    published = kb("publish_article", article_id=draft["id"])
    assert published["status"] == "published" and published["published_at"] == ep.world.now
    kb.refused("publish_article", "invalid_state", article_id=draft["id"])
    assert kb("unpublish_article", article_id=draft["id"])["status"] == "draft"
    kb.refused("unpublish_article", "invalid_state", article_id=draft["id"])
    live = kb(
        "create_article", section_id=target["id"], title="Passkeys FAQ", body="Short answers.", status="published"
    )
    assert live["status"] == "published"


def test_titles_are_unique_among_a_sections_live_articles_and_a_new_title_moves_the_link(kb: Calls) -> None:
    target = section(kb, "Account setup")
    kb.refused("create_article", "conflict", section_id=target["id"], title="how to reset your PASSWORD", body="x")
    reset = article(kb, "How to reset your password")
    renamed = kb("update_article", article_id=reset["id"], title="Resetting your password")
    assert renamed["status"] == "published" and renamed["html_url"].endswith("-resetting-your-password")
    assert renamed["html_url"].split("/")[-1].split("-")[0] == reset["html_url"].split("/")[-1].split("-")[0]  # same id
    kb.refused("update_article", "invalid_argument", article_id=reset["id"], title="Resetting your password")
    # an archived article's title is free again
    old = article(kb, "Setting up SSO (old admin console)")
    assert kb("create_article", section_id=target["id"], title=old["title"], body="New text.")["status"] == "draft"
    kb.refused("restore_article", "conflict", article_id=old["id"])


def test_an_archived_article_cannot_change_until_restored_as_a_draft(kb: Calls) -> None:
    track = article(kb, "How to track your order")
    assert kb("archive_article", article_id=track["id"])["status"] == "archived"
    kb.refused("update_article", "invalid_state", article_id=track["id"], body="New text")
    kb.refused("publish_article", "invalid_state", article_id=track["id"])
    kb.refused("move_article", "invalid_state", article_id=track["id"], section_id=section(kb, "API")["id"])
    assert kb("restore_article", article_id=track["id"])["status"] == "draft"
    moved = kb("move_article", article_id=track["id"], section_id=section(kb, "API")["id"])
    assert moved["section_name"] == "API"
    kb.refused("move_article", "invalid_argument", article_id=track["id"], section_id=section(kb, "API")["id"])


def test_sections_are_unique_within_their_category(kb: Calls) -> None:
    category = kb("list_categories")[0]
    made = kb("create_section", category_id=category["id"], name="Mobile app", description="Our iOS and Android apps.")
    assert made["category_name"] == category["name"] and made["published_articles"] == 0
    kb.refused("create_section", "conflict", category_id=category["id"], name="mobile APP")


def test_reader_feedback_arrives_on_published_articles_and_is_marked_addressed(ep: Episode, kb: Calls) -> None:
    csv = article(kb, "How to export a report to CSV")
    reader = ep.world.customers[4].email
    key = ep.run_event(
        "kb",
        "feedback_received",
        article_id=csv["id"],
        reader_email=reader,
        helpful=False,
        comment="The button moved.",
        hours_ago=5,
    )
    assert_added_only(ep, "kb")
    waiting = kb.all("list_feedback", article_id=csv["id"])
    assert key in [f["id"] for f in waiting] and all(not f["addressed"] for f in waiting)
    done = kb("mark_feedback_addressed", feedback_id=key, note="Updated the screenshots.")
    assert done["addressed"] and done["article_title"] == csv["title"]
    assert key not in [f["id"] for f in kb.all("list_feedback", article_id=csv["id"])]
    assert key in [f["id"] for f in kb.all("list_feedback", article_id=csv["id"], include_addressed=True)]
    kb.refused("mark_feedback_addressed", "invalid_state", feedback_id=key)
    with pytest.raises(ToolError):
        ep.run_event(
            "kb",
            "feedback_received",
            article_id=article(kb, "Exporting large reports")["id"],
            reader_email=reader,
            helpful=True,
        )
