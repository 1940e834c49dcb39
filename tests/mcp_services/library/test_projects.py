"""Behaviour of the projects tracker a user would notice: seeded projects, the workflow, JQL, links."""

from __future__ import annotations

import re

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, StateDump, Store, ToolContext, ToolResult, World
from mcp_services.kernel.world import Person
from mcp_services.library import projects


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["projects"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("projects", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.snapshot()
    result = ep.call("projects", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    if ep.snapshot() != before:  # identical images are the fast path; otherwise compare every row
        after = ep.dump()
        ep.reset(before)
        assert after == ep.dump()
    return result


def all_issues(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "search_issues", limit=100, cursor=cursor, **filters)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def members(ep: Episode, project_key: str) -> list[str]:
    return [m["email"] for m in call(ep, "find_assignable_users", project_key=project_key, limit=100)["items"]]


def outsider(ep: Episode, project_key: str) -> str:
    """A colleague who is not a member of the project."""
    inside = set(members(ep, project_key))
    return next(p.email for p in ep.world.team if p.email not in inside)


def new_issue(ep: Episode, **overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"project_key": "FIN", "summary": "Refund 129.00 USD to a customer"}
    args.update(overrides)
    return call(ep, "create_issue", **args)


def fresh_seed(world_seed: int) -> StateDump:
    """Seed a new store directly, bypassing the per-process image cache that episodes share."""
    store = Store.in_memory(projects.service.metadata)
    try:
        with store.transaction() as session:
            projects.seed(ToolContext(session, World.from_seed(world_seed), "projects"))
        return store.dump()
    finally:
        store.close()


# -- seeded data ---------------------------------------------------------------------------------


def test_projects_have_keys_leads_and_members_from_the_home_team(ep: Episode) -> None:
    found = call(ep, "search_projects", limit=100)["items"]
    assert {p["key"] for p in found} == {"OPS", "FIN", "SUP", "ENG", "SAL"}
    team = {p.email for p in ep.world.team}
    for project in found:
        emails = {m["email"] for m in project["members"]}
        assert project["lead_email"] in emails and emails <= team
        assert ep.world.user.email in emails  # the user can report in every project
        assert sum(project["issue_counts"].values()) >= 30
    fin = call(ep, "get_project", project_key="fin")
    assert fin["lead_email"] == ep.world.team_member("finance lead").email


def test_archived_projects_are_hidden_unless_asked_for(ep: Episode) -> None:
    archived = call(ep, "search_projects", include_archived=True, limit=100)["items"]
    assert [p["key"] for p in archived if p["archived"]] == ["MOVE"]
    assert not any(i["project_key"] == "MOVE" for i in all_issues(ep))
    assert {i["project_key"] for i in all_issues(ep, project_key="MOVE")} == {"MOVE"}


def test_seeded_tracker_is_rich_and_names_real_customers(ep: Episode) -> None:
    tables = ep.dump()["projects"]
    issues = list(tables["issues"].values())
    assert len(issues) >= 200 and len(tables["watchers"]) >= 300 and len(tables["issue_links"]) >= 30
    assert {i["status"] for i in issues} == {"to_do", "in_progress", "in_review", "done"}
    assert {i["issue_type"] for i in issues} == {"task", "bug", "story"}
    text = " ".join(i["summary"] + " " + i["description"] for i in issues)
    assert "INV-" in text and re.search(r"order #1\d{3}\b", text) and " USD" in text  # the books' invoices, the store's orders
    emails = {p.email for p in ep.world.customers}
    mentioned = {e for e in emails if e in text}
    assert len(mentioned) >= 20


def test_seeded_customer_emails_are_crm_contacts() -> None:
    with Episode.create(["crm", "projects"], world_seed=0) as ep:
        issue = all_issues(ep, jql='project = SUP AND summary ~ "Login loop"')[0]
        email = issue["summary"].split()[-1]
        contact = ep.call("crm", "find_contact_by_email", {"email": email})
        assert contact.success and contact.data["name"] in issue["description"]


def test_seeded_issues_already_obey_the_workflow_rules(ep: Episode) -> None:
    tables = ep.dump()["projects"]
    issues = tables["issues"]
    member_keys = {(m["project_key"], m["email"]) for m in tables["members"].values()}
    for issue in issues.values():
        assert issue["id"] == f"{issue['project_key']}-{issue['number']}"
        if issue["status"] in ("in_progress", "in_review", "done"):
            assert issue["assignee_email"] is not None
        if issue["assignee_email"]:
            assert (issue["project_key"], issue["assignee_email"]) in member_keys
        assert (issue["resolution"] is not None) == (issue["status"] == "done")
    for link in tables["issue_links"].values():
        if link["link_type"] == "blocks" and issues[link["target_key"]]["status"] == "done":
            assert issues[link["source_key"]]["status"] == "done"


def test_the_same_seed_always_gives_the_same_tracker(ep: Episode) -> None:
    assert fresh_seed(0) == ep.dump()["projects"]


# -- search, JQL and pagination ------------------------------------------------------------------


def test_structured_filters_combine(ep: Episode) -> None:
    assignee = ep.world.team_member("finance lead").email
    found = all_issues(ep, project_key="FIN", assignee_email=assignee, status="in_progress")
    assert found and all(
        (i["project_key"], i["assignee_email"], i["status"]) == ("FIN", assignee, "in_progress") for i in found
    )
    assert all("refunds" in i["labels"] for i in all_issues(ep, label="refunds"))
    assert all(i["assignee_email"] is None for i in all_issues(ep, unassigned=True))
    due = all_issues(ep, due_before=ep.world.now[:10])
    assert due and all(i["due_date"] is not None and i["due_date"] <= ep.world.now[:10] for i in due)


def test_text_search_finds_an_issue_by_its_invoice_number(ep: Episode) -> None:
    issue = all_issues(ep, jql='summary ~ "Reconcile invoice"')[0]
    invoice = next(w for w in issue["summary"].split() if w.startswith("INV-"))
    assert issue["key"] in [i["key"] for i in all_issues(ep, text=invoice)]


def test_jql_gives_the_same_issues_as_the_structured_filters(ep: Episode) -> None:
    user = ep.world.user.email
    by_jql = all_issues(ep, jql='project = SUP AND status in ("In Progress", "to do") AND assignee = currentUser()')
    by_filters = [
        *all_issues(ep, project_key="SUP", status="in_progress", assignee_email=user),
        *all_issues(ep, project_key="SUP", status="to_do", assignee_email=user),
    ]
    assert by_jql and sorted(i["key"] for i in by_jql) == sorted(i["key"] for i in by_filters)
    empty = all_issues(ep, jql="assignee is EMPTY AND labels in (refunds, collections)")
    assert empty and all(
        i["assignee_email"] is None and {"refunds", "collections"} & set(i["labels"]) for i in empty
    )


def test_jql_order_by_due_puts_issues_without_a_due_date_last(ep: Episode) -> None:
    ordered = all_issues(ep, jql="project = OPS ORDER BY due ASC")
    dates = [i["due_date"] for i in ordered]
    with_dates = [d for d in dates if d is not None]
    assert with_dates == sorted(with_dates) and dates == with_dates + [None] * (len(dates) - len(with_dates))


@pytest.mark.parametrize(
    ("jql", "hint"),
    [
        ("project = FIN OR project = OPS", "OR is not supported"),
        ("colour = red", "Unknown JQL field"),
        ("status = shipped", "statuses: to_do"),
        ("summary = refund", "~"),
        ("project in (FIN", "not closed"),
    ],
)
def test_jql_mistakes_are_explained(ep: Episode, jql: str, hint: str) -> None:
    result = refused(ep, "search_issues", "invalid_argument", jql=jql)
    assert hint in (result.error_message or "")


def test_pagination_walks_every_issue_exactly_once(ep: Episode) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = call(ep, "search_issues", limit=33, cursor=cursor)
        seen += [i["key"] for i in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == page["total"]


# -- create and edit -----------------------------------------------------------------------------


def test_a_created_issue_gets_the_next_key_and_round_trips(ep: Episode) -> None:
    before = call(ep, "get_project", project_key="FIN")["issue_counts"]
    accountant = ep.world.team_member("accountant").email
    created = new_issue(
        ep, issue_type="bug", assignee_email=accountant, due_date="2025-12-01", labels=["Refunds", "billing"],
        description="Charged twice: 129.00 USD for order ORD-12345.",
    )
    assert created["key"] == f"FIN-{sum(before.values()) + 1}"
    assert (created["status"], created["reporter_email"], created["labels"]) == (
        "to_do", ep.world.user.email, ["refunds", "billing"]
    )
    assert created["watchers"] == [ep.world.user.email]
    assert call(ep, "get_issue", issue_key=created["key"].lower()) == created


def test_archived_projects_take_no_new_issues_or_edits(ep: Episode) -> None:
    refused(ep, "create_issue", "invalid_state", project_key="MOVE", summary="One more box")
    refused(ep, "edit_issue", "invalid_state", issue_key="MOVE-1", priority="high")
    refused(ep, "do_transition", "invalid_state", issue_key="MOVE-1", status="to_do")


def test_edit_changes_only_what_is_passed_and_checks_labels_and_dates(ep: Episode) -> None:
    issue = new_issue(ep, labels=["refunds"])
    edited = call(
        ep, "edit_issue", issue_key=issue["key"], priority="highest", add_labels=["vip"], remove_labels=["refunds"]
    )
    assert (edited["priority"], edited["labels"], edited["summary"]) == ("highest", ["vip"], issue["summary"])
    refused(ep, "edit_issue", "invalid_argument", issue_key=issue["key"], remove_labels=["refunds"])
    refused(ep, "edit_issue", "invalid_argument", issue_key=issue["key"], due_date="2025-02-30")
    refused(ep, "edit_issue", "invalid_argument", issue_key=issue["key"], add_labels=["two words"])
    refused(ep, "edit_issue", "invalid_argument", issue_key=issue["key"])


def test_unknown_issue_and_project_say_how_to_find_them(ep: Episode) -> None:
    assert "search_issues" in (refused(ep, "get_issue", "not_found", issue_key="FIN-999").error_message or "")
    assert "OPS" in (refused(ep, "get_project", "not_found", project_key="NOPE").error_message or "")


# -- assignment ----------------------------------------------------------------------------------


def test_issues_can_only_be_assigned_to_project_members(ep: Episode) -> None:
    issue = new_issue(ep)
    other = outsider(ep, "FIN")
    result = refused(ep, "assign_issue", "permission_denied", issue_key=issue["key"], assignee_email=other)
    assert "find_assignable_users" in (result.error_message or "")
    refused(ep, "assign_issue", "permission_denied", issue_key=issue["key"], assignee_email=ep.world.customers[0].email)
    refused(ep, "create_issue", "permission_denied", project_key="FIN", summary="x", assignee_email=outsider(ep, "FIN"))
    accountant = ep.world.team_member("accountant").email
    assert call(ep, "assign_issue", issue_key=issue["key"], assignee_email=accountant)["assignee_name"] == (
        ep.world.team_member("accountant").name
    )


def test_work_in_progress_cannot_be_unassigned(ep: Episode) -> None:
    issue = all_issues(ep, status="in_progress")[0]
    refused(ep, "assign_issue", "invalid_state", issue_key=issue["key"], assignee_email=None)
    todo = next(i for i in all_issues(ep, status="to_do") if i["assignee_email"])
    assert call(ep, "assign_issue", issue_key=todo["key"], assignee_email=None)["assignee_email"] is None


# -- workflow ------------------------------------------------------------------------------------


def test_an_issue_walks_the_workflow_and_reopening_clears_the_resolution(ep: Episode) -> None:
    issue = new_issue(ep, assignee_email=ep.world.user.email)
    assert [t["to_status"] for t in call(ep, "get_transitions", issue_key=issue["key"])["transitions"]] == [
        "in_progress"
    ]
    call(ep, "do_transition", issue_key=issue["key"], status="in_progress")
    call(ep, "do_transition", issue_key=issue["key"], status="in_review", comment="PR #42 is up.")
    done = call(ep, "do_transition", issue_key=issue["key"], status="done", resolution="won't do")
    assert (done["status"], done["resolution"], done["resolved_at"]) == ("done", "won't do", ep.world.now)
    assert done["comment_count"] == 1 and done["allowed_next_statuses"] == ["to_do"]
    reopened = call(ep, "do_transition", issue_key=issue["key"], status="to_do")
    assert (reopened["resolution"], reopened["resolved_at"]) == (None, None)


def test_skipping_a_step_is_refused_and_the_error_lists_the_allowed_moves(ep: Episode) -> None:
    issue = new_issue(ep, assignee_email=ep.world.user.email)
    result = refused(ep, "do_transition", "invalid_state", issue_key=issue["key"], status="done")
    assert "in_progress (Start progress)" in (result.error_message or "")
    refused(ep, "do_transition", "invalid_state", issue_key=issue["key"], status="to_do")


def test_work_cannot_start_without_an_assignee(ep: Episode) -> None:
    issue = new_issue(ep)
    result = refused(ep, "do_transition", "invalid_state", issue_key=issue["key"], status="in_progress")
    assert "assign_issue" in (result.error_message or "")


def test_resolution_is_only_for_done(ep: Episode) -> None:
    issue = new_issue(ep, assignee_email=ep.world.user.email)
    refused(ep, "do_transition", "invalid_argument", issue_key=issue["key"], status="in_progress", resolution="done")


def test_an_issue_blocked_by_unfinished_work_cannot_be_done(ep: Episode) -> None:
    user = ep.world.user.email
    blocker, blocked = new_issue(ep, summary="Fix the refund API"), new_issue(ep, assignee_email=user)
    link = call(ep, "link_issues", issue_key=blocker["key"], link_type="blocks", other_issue_key=blocked["key"])
    call(ep, "do_transition", issue_key=blocked["key"], status="in_progress")
    call(ep, "do_transition", issue_key=blocked["key"], status="in_review")
    result = refused(ep, "do_transition", "invalid_state", issue_key=blocked["key"], status="done")
    assert f"{blocker['key']} (to_do)" in (result.error_message or "")
    call(ep, "delete_issue_link", link_id=link["links"][0]["id"])
    assert call(ep, "do_transition", issue_key=blocked["key"], status="done")["status"] == "done"


# -- comments, watchers, links -------------------------------------------------------------------


def test_commenting_makes_you_a_watcher_and_comments_read_oldest_first(ep: Episode) -> None:
    issue = next(i for i in all_issues(ep, project_key="SUP") if ep.world.user.email not in call(
        ep, "get_issue", issue_key=i["key"])["watchers"])
    comment = call(ep, "add_comment", issue_key=issue["key"], body="Customer confirmed by email.")
    assert comment["author_email"] == ep.world.user.email
    assert ep.world.user.email in call(ep, "get_issue", issue_key=issue["key"])["watchers"]
    comments = call(ep, "get_comments", issue_key=issue["key"], limit=100)["items"]
    assert comments[-1]["id"] == comment["id"]
    assert [c["created_at"] for c in comments] == sorted(c["created_at"] for c in comments)
    refused(ep, "add_comment", "invalid_argument", issue_key=issue["key"], body=" ")


def test_only_colleagues_can_watch_and_only_watchers_can_be_removed(ep: Episode) -> None:
    issue = new_issue(ep)
    colleague = ep.world.team_member("accountant").email
    assert colleague in call(ep, "add_watcher", issue_key=issue["key"], email=colleague)["watchers"]
    refused(ep, "add_watcher", "invalid_state", issue_key=issue["key"], email=colleague)
    refused(ep, "add_watcher", "permission_denied", issue_key=issue["key"], email=ep.world.customers[0].email)
    assert colleague not in call(ep, "remove_watcher", issue_key=issue["key"], email=colleague)["watchers"]
    refused(ep, "remove_watcher", "invalid_state", issue_key=issue["key"], email=colleague)


def test_a_link_reads_both_ways_and_cannot_be_made_twice_or_backwards(ep: Episode) -> None:
    eng = new_issue(ep, project_key="ENG", summary="Fix export")
    sup = new_issue(ep, project_key="SUP", summary="Export")
    call(ep, "link_issues", issue_key=eng["key"], link_type="blocks", other_issue_key=sup["key"])
    back = call(ep, "get_issue", issue_key=sup["key"])["links"]
    assert [(link["relation"], link["issue_key"]) for link in back] == [("is blocked by", eng["key"])]
    refused(ep, "link_issues", "conflict", issue_key=eng["key"], link_type="blocks", other_issue_key=sup["key"])
    refused(ep, "link_issues", "invalid_state", issue_key=sup["key"], link_type="blocks", other_issue_key=eng["key"])
    self_link = {"issue_key": eng["key"], "link_type": "relates to", "other_issue_key": eng["key"]}
    refused(ep, "link_issues", "invalid_argument", **self_link)
    refused(ep, "delete_issue_link", "not_found", link_id="lnk_9999")


# -- a customer's email or company (issue 12) -----------------------------------------------------


def issue_texts(ep: Episode) -> dict[str, str]:
    """Each live-project issue's summary, description and comments, lowercased, by key."""
    tables = ep.dump()["projects"]
    archived = {k for k, p in tables["projects"].items() if p["archived"]}
    issues = tables["issues"]
    said = {k: f"{i['summary']} {i['description']}" for k, i in issues.items() if i["project_key"] not in archived}
    for comment in tables["comments"].values():
        if comment["issue_key"] in said:
            said[comment["issue_key"]] += " " + comment["body"]
    return {k: text.lower() for k, text in said.items()}


def mentions(texts: dict[str, str], *needles: str) -> set[str]:
    return {k for k, text in texts.items() if any(n.lower() in text for n in needles)}


def test_search_by_customer_email_finds_the_issues_about_her(ep: Episode) -> None:
    texts = issue_texts(ep)
    def by_name_only(p: Person) -> tuple[int, int]:
        return len(mentions(texts, p.name) - mentions(texts, p.email)), len(mentions(texts, p.email))

    customer = max(ep.world.customers, key=by_name_only)
    expected = mentions(texts, customer.email, customer.name)
    assert len(expected) > len(mentions(texts, customer.email)) >= 1  # some issues name her without the email
    found = all_issues(ep, customer_email=customer.email.upper())
    assert {i["key"] for i in found} == expected
    narrowed = all_issues(ep, customer_email=customer.email, project_key=found[0]["project_key"])
    assert narrowed and {i["project_key"] for i in narrowed} == {found[0]["project_key"]}


def test_search_by_company_finds_the_issues_that_mention_it(ep: Episode) -> None:
    texts = issue_texts(ep)
    company = max((o.name for o in ep.world.organisations[1:]), key=lambda name: len(mentions(texts, name)))
    found = all_issues(ep, company_name=company.lower())
    assert found and {i["key"] for i in found} == mentions(texts, company)


def test_an_unknown_customer_or_company_matches_nothing(ep: Episode) -> None:
    assert call(ep, "search_issues", customer_email="nobody@nowhere.example")["items"] == []
    assert call(ep, "search_issues", company_name="No Such Company")["items"] == []


def test_a_comment_that_names_a_company_makes_its_issue_findable(ep: Episode) -> None:
    issue = new_issue(ep, summary="Chase the late payment")
    assert issue["key"] not in {i["key"] for i in all_issues(ep, company_name="Zyxw Freight")}
    call(ep, "add_comment", issue_key=issue["key"], body="Customer is Zyxw Freight Ltd.")
    assert [i["key"] for i in all_issues(ep, company_name="zyxw freight")] == [issue["key"]]


# -- what the composer reads: the declared workflow -----------------------------------------------


def test_the_declared_workflow_is_the_one_get_issue_and_do_transition_follow(ep: Episode) -> None:
    declared = projects.service.entities["issue"].definition.state
    assert declared is not None and declared.transitions == {
        status: [to for _, to in moves] for status, moves in projects.WORKFLOW.items()
    }
    for status in projects.STATUSES:
        issue = all_issues(ep, status=status, project_key="FIN")[0]
        assert call(ep, "get_issue", issue_key=issue["key"])["allowed_next_statuses"] == declared.transitions[status]
    roles = {f.name: f.role for f in projects.service.entities["issue"].definition.fields if f.role}
    assert roles == {
        "assignee_email": "assignee",
        "assignee_name": "assignee",
        "reporter_email": "reporter",
        "reporter_name": "reporter",
    }


def test_search_results_are_lean_and_get_issue_adds_the_details(ep: Episode) -> None:
    found = call(ep, "search_issues", project_key="SUP", limit=1)["items"][0]
    assert "watchers" not in found and found["reporter_name"]
    detail = call(ep, "get_issue", issue_key=found["key"])
    assert {k: detail[k] for k in found} == found
    assert {"watchers", "links", "comment_count", "allowed_next_statuses"} <= set(detail)
