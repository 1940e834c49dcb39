"""Behaviour of expenses a user would notice: the policy's violations, who may approve, rejection, reimbursement."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["expenses"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def ex(ep: Episode) -> Calls:
    return Calls(ep, "expenses")


def submitted(ex: Calls, *, mine: bool, violating: bool) -> dict[str, Any]:
    """A submitted report whose approver is (or is not) the user, with (or without) policy violations."""
    user = ex.episode.world.user.email
    for report in ex.all("list_reports", status="submitted"):
        if (report["approver_email"] == user) == mine and (report["violation_count"] > 0) == violating:
            if report["submitter_email"] != user:
                return report
    raise AssertionError(f"no submitted report with mine={mine}, violating={violating}")


def category(ex: Calls, name: str) -> dict[str, Any]:
    return next(c for c in ex("list_categories") if c["name"] == name)


def today(ex: Calls) -> str:
    return ex.episode.world.now[:10]


# -- the policy ------------------------------------------------------------------------------------


def test_the_policy_states_the_threshold_the_admins_and_the_limits(ex: Calls) -> None:
    policy = ex("get_policy")
    assert policy["receipt_required_over"] == 75.0 and ex.episode.world.user.email in policy["admin_emails"]
    assert "75.00" in policy["rules"] and "manager" in policy["rules"]
    limits = {c["name"]: c["expense_limit"] for c in ex("list_categories")}
    assert limits["Meals"] == 75.0 and limits["Lodging"] == 350.0
    assert [c["name"] for c in ex("list_categories", query="lodging")] == ["Lodging"]


def test_violations_are_an_amount_over_the_limit_or_a_missing_receipt_above_the_threshold(ex: Calls) -> None:
    threshold = ex("get_policy")["receipt_required_over"]
    limits = {c["id"]: c["expense_limit"] for c in ex("list_categories")}
    everything = ex.all("search_expenses")
    assert any(e["violations"] for e in everything) and any(not e["violations"] for e in everything)
    for expense in everything:
        over = limits[expense["category_id"]] is not None and expense["amount"] > limits[expense["category_id"]]
        missing = expense["amount"] > threshold and expense["receipt_id"] is None
        assert len(expense["violations"]) == over + missing, expense
    for report in ex.all("list_reports")[:15]:
        on_it = ex.all("search_expenses", report_id=report["id"])
        assert report["violation_count"] == sum(1 for e in on_it if e["violations"])
        assert report["total"] == round(sum(e["amount"] for e in on_it), 2) and report["expense_count"] == len(on_it)


def test_members_submit_to_their_manager_in_hr() -> None:
    with Episode.create(["expenses", "hr"], world_seed=0) as ep:
        ex, hr = Calls(ep, "expenses"), Calls(ep, "hr")
        for member in ex.all("list_members"):
            employee = hr("find_employee_by_email", email=member["email"])
            assert (employee["name"], employee["employee_number"]) == (member["name"], member["employee_number"])
            assert member["submits_to_email"] == (employee["manager_email"] or ex("get_policy")["admin_emails"][0])
        for report in ex.all("list_reports", status="submitted"):
            submitter = hr("find_employee_by_email", email=report["submitter_email"])
            assert report["approver_email"] == submitter["manager_email"]


# -- who may approve -------------------------------------------------------------------------------


def test_the_manager_approves_a_report_even_with_violations(ex: Calls) -> None:
    report = submitted(ex, mine=True, violating=True)
    approved = ex("approve_report", report_id=report["id"], comment="Receipt lost; amount confirmed with the hotel.")
    assert (approved["status"], approved["approved_by_email"]) == ("approved", ex.episode.world.user.email)
    assert ex("list_report_comments", report_id=report["id"])["items"][-1]["body"].startswith("Receipt lost")
    ex.refused("approve_report", "invalid_state", report_id=report["id"])


def test_an_expense_admin_approves_only_reports_without_violations(ex: Calls) -> None:
    clean = submitted(ex, mine=False, violating=False)
    assert ex("approve_report", report_id=clean["id"])["status"] == "approved"
    broken = submitted(ex, mine=False, violating=True)
    message = ex.refused("approve_report", "permission_denied", report_id=broken["id"])
    assert broken["approver_email"] in message and "expense policy" in message


def test_nobody_approves_their_own_report(ex: Calls) -> None:
    ep = ex.episode
    user = ep.world.user.email
    report_id = ep.run_event("expenses", "report_submitted", submitter_email=user, title="Team lunch",
                             expenses=[{"merchant": "Sweetgreen", "amount": 42.5, "category": "Meals", "date": today(ex)}])
    assert "own" in ex.refused("approve_report", "permission_denied", report_id=report_id)


def test_a_rejected_report_goes_back_open_with_the_reason_and_can_be_fixed_and_resubmitted(ex: Calls) -> None:
    report = submitted(ex, mine=False, violating=True)
    broken = next(e for e in ex.all("search_expenses", report_id=report["id"]) if e["violations"])
    ex.refused("update_expense", "invalid_state", expense_id=broken["id"], description="Fixed.")
    ex.refused("reject_report", "invalid_argument", report_id=report["id"], reason=" ")
    rejected = ex("reject_report", report_id=report["id"], reason="Attach the hotel receipt, please.")
    assert (rejected["status"], rejected["rejection_reason"]) == ("open", "Attach the hotel receipt, please.")
    limit = next(c["expense_limit"] for c in ex("list_categories") if c["id"] == broken["category_id"])
    if "no receipt" in " ".join(broken["violations"]):
        ex("attach_receipt", expense_id=broken["id"], file_name="receipt-hotel.jpg")
    if limit is not None and broken["amount"] > limit:
        ex("update_expense", expense_id=broken["id"], amount=limit)
    assert ex("get_expense", expense_id=broken["id"])["violations"] == []
    again = ex("submit_report", report_id=report["id"])
    assert again["status"] == "submitted" and again["violation_count"] == 0
    assert ex("approve_report", report_id=report["id"])["status"] == "approved"  # now an admin may


def test_only_approved_reports_are_reimbursed_once_with_a_reference(ex: Calls) -> None:
    report = submitted(ex, mine=False, violating=False)
    ex.refused("reimburse_report", "invalid_state", report_id=report["id"])
    ex("approve_report", report_id=report["id"])
    paid = ex("reimburse_report", report_id=report["id"])
    assert paid["status"] == "reimbursed" and paid["reimbursement_reference"].startswith("ACH-")
    assert paid["reimbursed_at"] == ex.episode.world.now
    ex.refused("reimburse_report", "invalid_state", report_id=report["id"])
    ex.refused("reject_report", "invalid_state", report_id=report["id"], reason="Too late.")


# -- building reports ------------------------------------------------------------------------------


def test_a_report_gathers_its_submitters_unreported_expenses_and_is_submitted_non_empty(ex: Calls) -> None:
    loose = ex.all("search_expenses", unreported=True)
    assert loose and all(e["report_id"] is None for e in loose)
    mine = loose[0]
    other = next(e for e in loose if e["spender_email"] != mine["spender_email"])
    ex.refused("create_report", "invalid_argument", submitter_email=mine["spender_email"], title="March",
               expense_ids=[mine["id"], other["id"]])
    empty = ex("create_report", submitter_email=mine["spender_email"], title="March bills")
    ex.refused("submit_report", "invalid_state", report_id=empty["id"])
    report = ex("add_expenses_to_report", report_id=empty["id"], expense_ids=[mine["id"]])
    assert (report["expense_count"], report["total"]) == (1, mine["amount"])
    ex.refused("add_expenses_to_report", "conflict", report_id=empty["id"], expense_ids=[mine["id"]])
    assert ex("submit_report", report_id=empty["id"])["approver_email"] == next(
        m["submits_to_email"] for m in ex.all("list_members") if m["email"] == mine["spender_email"]
    )


def test_an_expense_is_dated_by_the_past_and_only_edited_while_open(ex: Calls) -> None:
    member = ex("list_members")["items"][0]
    meals = category(ex, "Meals")
    tomorrow = (ex.episode.world.now_dt + timedelta(days=1)).strftime("%Y-%m-%d")
    ex.refused("create_expense", "invalid_argument", spender_email=member["email"], merchant="Starbucks", amount=6.4,
               date=tomorrow, category_id=meals["id"])
    ex.refused("create_expense", "invalid_argument", spender_email="stranger@gmail.example", merchant="Starbucks",
               amount=6.4, date=today(ex), category_id=meals["id"])
    dinner = ex("create_expense", spender_email=member["email"], merchant="Corner Bistro", amount=96.0, date=today(ex),
                category_id=meals["id"], description="Dinner while on call")
    assert sorted(dinner["violations"]) == sorted(["over the Meals limit of 75.00 USD", "no receipt for an expense over 75.00 USD"])
    assert ex("attach_receipt", expense_id=dinner["id"], file_name="bistro.jpg")["receipt_id"] is not None
    ex.refused("attach_receipt", "conflict", expense_id=dinner["id"], file_name="bistro-2.jpg")
    assert ex("update_expense", expense_id=dinner["id"], amount=70.0)["violations"] == []
    settled = ex.all("search_expenses", report_id=ex("list_reports", status="reimbursed")["items"][0]["id"])[0]
    ex.refused("delete_expense", "invalid_state", expense_id=settled["id"])
    ex.refused("attach_receipt", "invalid_state", expense_id=settled["id"], file_name="late.jpg")
    gone = ex("delete_expense", expense_id=dinner["id"])
    assert gone["id"] == dinner["id"]
    ex.refused("get_expense", "not_found", expense_id=dinner["id"])


def test_searches_filter_by_spender_category_amount_and_date(ex: Calls) -> None:
    lodging = category(ex, "Lodging")
    stays = ex.all("search_expenses", category_id=lodging["id"])
    assert stays and all(e["category_name"] == "Lodging" for e in stays)
    big = ex.all("search_expenses", min_amount=500)
    assert big and all(e["amount"] >= 500 for e in big)
    week = ex.all("search_expenses", date_from=(ex.episode.world.now_dt - timedelta(days=7)).strftime("%Y-%m-%d"))
    assert week and len(week) < len(ex.all("search_expenses"))
    dinners = ex.all("search_expenses", query="dinner with")
    assert dinners and all(e["attendees"] for e in dinners if e["category_name"] == "Client entertainment")
    person = ex.episode.world.customers
    assert any(a in {p.name for p in person} for e in dinners for a in e["attendees"])  # the World's customers


# -- what arrives from outside ---------------------------------------------------------------------


def test_a_report_submitted_from_outside_goes_to_the_manager_and_may_break_the_policy(ex: Calls) -> None:
    ep = ex.episode
    member = next(m for m in ex.all("list_members") if m["submits_to_email"] == ep.world.user.email)
    day = today(ex)
    report_id = ep.run_event("expenses", "report_submitted", submitter_email=member["email"], title="Trade show in Denver",
                             expenses=[{"merchant": "United Airlines", "amount": 412.3, "category": "Airfare", "date": day},
                                       {"merchant": "Hyatt Place", "amount": 389.0, "category": "Lodging", "date": day,
                                        "receipt": False}], hours_ago=2.0)
    assert_added_only(ep, "expenses")
    report = ex("get_report", report_id=report_id)
    assert report["submitted_at"] < ep.world.now
    assert (report["status"], report["approver_email"], report["expense_count"], report["violation_count"]) == (
        "submitted", ep.world.user.email, 2, 1
    )
    hotel = ex("search_expenses", report_id=report_id, query="hyatt")["items"][0]
    assert sorted(hotel["violations"]) == sorted(["over the Lodging limit of 350.00 USD", "no receipt for an expense over 75.00 USD"])
    with pytest.raises(ToolError, match="not one of"):
        ep.run_event("expenses", "report_submitted", submitter_email=member["email"], title="Bad",
                     expenses=[{"merchant": "X", "amount": 5.0, "category": "Snacks", "date": day}])
    with pytest.raises(ToolError, match="not valid"):
        ep.run_event("expenses", "report_submitted", submitter_email=member["email"], title="Bad",
                     expenses=[{"merchant": "X", "amount": -5.0, "category": "Meals", "date": day}])


@pytest.mark.parametrize("seed", [1, 7])
def test_other_worlds_seed_decisions_the_user_may_and_may_not_take(seed: int) -> None:
    with Episode.create(["expenses"], world_seed=seed) as episode:
        ex = Calls(episode, "expenses")
        for mine, violating in ((True, True), (True, False), (False, True), (False, False)):
            assert submitted(ex, mine=mine, violating=violating)
