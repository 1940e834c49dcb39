"""Behaviour of tasks a user would notice: projects and their sections, assigning and dating work, moving and
completing it, archived projects staying read-only, comments, and tasks colleagues assign from outside."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["tasks"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def asana(ep: Episode) -> Calls:
    return Calls(ep, "tasks")


def project(asana: Calls, name: str) -> dict[str, Any]:
    return asana("list_projects", query=name)["items"][0]


def day(ep: Episode, days: int) -> str:
    return (ep.world.now_dt + timedelta(days=days)).strftime("%Y-%m-%d")


def test_the_team_are_the_members_and_projects_have_ordered_sections(ep: Episode, asana: Calls) -> None:
    assert sorted(u["email"] for u in asana.all("list_users")) == sorted(p.email for p in ep.world.team)
    board = project(asana, "Customer onboarding")
    assert board["layout"] == "board" and [s["name"] for s in asana("list_sections", project_id=board["id"])] == [
        "Kickoff", "Setup", "Training", "Live"]
    follow = project(asana, "Customer follow-ups")
    assert follow["open_task_count"] == len(asana.all("search_tasks", project_id=follow["id"], completed=False))


def test_search_filters_by_assignee_completion_due_dates_and_tag(ep: Episode, asana: Calls) -> None:
    everything = asana.all("search_tasks")
    me = ep.world.team_member("office manager").email
    mine = asana.all("search_tasks", assignee_email=me.upper(), completed=False)
    assert mine and all(t["assignee_email"] == me and not t["completed"] for t in mine)
    overdue = asana.all("search_tasks", due_before=day(ep, -1), completed=False)
    assert overdue and all(t["due_on"] <= day(ep, -1) for t in overdue)
    soon = asana.all("search_tasks", due_after=day(ep, 0), due_before=day(ep, 7))
    assert all(day(ep, 0) <= t["due_on"] <= day(ep, 7) for t in soon)
    onboarding = asana.all("search_tasks", tag="ONBOARDING")
    assert onboarding and all("onboarding" in t["tags"] for t in onboarding)
    dated = [t["due_on"] for t in everything if t["due_on"]]
    assert dated == sorted(dated)


def test_a_new_task_lands_in_the_first_section_for_a_workspace_member(ep: Episode, asana: Calls) -> None:
    follow = project(asana, "Customer follow-ups")
    owner = ep.world.team_member("account executive").email
    task = asana("create_task", project_id=follow["id"], name="Call back Ana Ruiz", assignee_email=owner, due_on=day(ep, 0),
                 tags=["callback", "callback"])
    assert (task["section_name"], task["assignee_name"], task["tags"], task["completed"]) == (
        "This week", ep.world.team_member("account executive").name, ["callback"], False)
    assert "not a member" in asana.refused("create_task", "invalid_argument", project_id=follow["id"], name="X",
                                           assignee_email=ep.world.customers[0].email)
    other = asana("list_sections", project_id=project(asana, "Office operations")["id"])[0]
    assert "another project" in asana.refused("create_task", "invalid_argument", project_id=follow["id"], name="X",
                                              section_id=other["id"])


def test_updating_changes_only_what_is_passed_and_tasks_move_between_sections(ep: Episode, asana: Calls) -> None:
    board = project(asana, "Customer onboarding")
    task = asana("search_tasks", project_id=board["id"], completed=False)["items"][0]
    updated = asana("update_task", task_id=task["id"], due_on=day(ep, 20))
    assert (updated["due_on"], updated["name"], updated["assignee_email"]) == (day(ep, 20), task["name"], task["assignee_email"])
    assert asana("update_task", task_id=task["id"], unassign=True)["assignee_email"] is None
    asana.refused("update_task", "invalid_argument", task_id=task["id"], due_on=day(ep, 20))
    live = next(s for s in asana("list_sections", project_id=board["id"]) if s["name"] == "Live")
    assert asana("move_task", task_id=task["id"], section_id=live["id"])["section_name"] == "Live"
    asana.refused("move_task", "invalid_state", task_id=task["id"], section_id=live["id"])


def test_completing_is_recorded_once_and_can_be_undone(asana: Calls) -> None:
    task = asana("search_tasks", completed=False)["items"][0]
    done = asana("complete_task", task_id=task["id"])
    assert done["completed"] and done["completed_at"] == asana.episode.world.now
    assert "already completed" in asana.refused("complete_task", "invalid_state", task_id=task["id"])
    reopened = asana("reopen_task", task_id=task["id"])
    assert (reopened["completed"], reopened["completed_at"]) == (False, None)
    asana.refused("reopen_task", "invalid_state", task_id=task["id"])


def test_an_archived_project_is_read_only_until_unarchived(asana: Calls) -> None:
    office = project(asana, "Office operations")
    task = asana("search_tasks", project_id=office["id"], completed=False)["items"][0]
    asana("update_project", project_id=office["id"], archived=True)
    assert asana("list_projects", query="Office operations")["items"] == []
    assert "archived" in asana.refused("complete_task", "invalid_state", task_id=task["id"])
    asana.refused("create_task", "invalid_state", project_id=office["id"], name="New")
    assert asana("get_task", task_id=task["id"])["id"] == task["id"]  # still readable
    asana("update_project", project_id=office["id"], archived=False)
    assert asana("complete_task", task_id=task["id"])["completed"]


def test_comments_are_the_conversation_on_a_task_and_go_with_it(asana: Calls) -> None:
    task = asana("search_tasks", completed=False)["items"][0]
    before = asana("get_task", task_id=task["id"])["comment_count"]
    comment = asana("add_comment", task_id=task["id"], text="Left a voicemail, trying again tomorrow.")
    assert comment["author_email"] == asana.episode.world.user.email
    assert asana.all("list_comments", task_id=task["id"])[-1]["id"] == comment["id"]
    assert asana("get_task", task_id=task["id"])["comment_count"] == before + 1
    asana.refused("add_comment", "invalid_argument", task_id=task["id"], text="   ")
    asana("delete_task", task_id=task["id"])
    asana.refused("get_task", "not_found", task_id=task["id"])


def test_projects_are_created_with_their_sections_under_unique_names(asana: Calls) -> None:
    made = asana("create_project", name="Webinar follow-ups", layout="board", sections=["To call", "Called"])
    assert made["owner_email"] == asana.episode.world.user.email
    assert [s["name"] for s in asana("list_sections", project_id=made["id"])] == ["To call", "Called"]
    asana.refused("create_project", "conflict", name="webinar FOLLOW-ups")
    asana.refused("create_section", "conflict", project_id=made["id"], name="called")


def test_a_colleague_assigning_a_task_arrives_in_the_project(ep: Episode, asana: Calls) -> None:
    lead = ep.world.team_member("sales lead").email
    key = ep.run_event("tasks", "task_assigned", project="Customer follow-ups", title="Send the renewal quote",
                       author_email=lead, assignee_email=ep.world.user.email, due_on=day(ep, 2), hours_ago=2)
    assert_added_only(ep, "tasks")
    task = asana("get_task", task_id=key)
    assert (task["created_by"], task["assignee_email"], task["section_name"]) == (lead, ep.world.user.email, "This week")
    assert task["created_at"] < ep.world.now
