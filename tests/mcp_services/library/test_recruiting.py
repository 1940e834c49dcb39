"""Behaviour of recruiting a user would notice: the pipeline's rules, interviews and scorecards, offers and hires."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.staff import PIPELINE_STAGES, staff_plan
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["recruiting"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def rec(ep: Episode) -> Calls:
    return Calls(ep, "recruiting")


def jobs(rec: Calls, **filters: Any) -> list[dict[str, Any]]:
    return rec.all("list_jobs", **filters)


def applications(rec: Calls, **filters: Any) -> list[dict[str, Any]]:
    return rec.all("list_applications", **filters)


def verdicts(rec: Calls, application_id: str) -> list[str]:
    return [c["recommendation"] for c in rec.all("list_scorecards", application_id=application_id, stage="final_interview")]


def in_offer_stage(rec: Calls, approval: str) -> dict[str, Any]:
    """An active offer-stage application of an open job with this approval status, with no offer out yet."""
    for job in jobs(rec, status="open", approval_status=approval):
        for application in applications(rec, job_id=job["id"], stage="offer", status="active"):
            if not rec("list_offers", application_id=application["id"])["items"]:
                return application
    raise AssertionError(f"no offer-stage application of an open {approval} job without an offer")


def later(ep: Episode, days: int, hour: int = 10) -> str:
    moment = ep.world.now_dt.replace(hour=hour, minute=0, second=0) + timedelta(days=days)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# -- seeded data -----------------------------------------------------------------------------------


def test_jobs_and_candidates_come_from_the_staff_plan(rec: Calls) -> None:
    staff = staff_plan(rec.episode.world)
    seeded = {j["requisition_id"]: j for j in jobs(rec)}
    assert set(seeded) == {j.requisition_id for j in staff.jobs}
    for planned in staff.jobs:
        job = seeded[planned.requisition_id]
        assert (job["title"], job["hiring_manager_email"], job["approver_email"], job["approval_status"]) == (
            planned.title, planned.hiring_manager_email, planned.approver_email, planned.approval_status
        )
    for planned in staff.candidates[:15]:
        (candidate,) = rec("search_candidates", query=planned.email)["items"]
        (application,) = [rec("get_application", application_id=a) for a in candidate["application_ids"]]
        assert (application["stage"], application["status"], application["requisition_id"]) == (
            planned.stage, planned.status, planned.requisition_id
        )
    users = {u["email"] for u in rec.all("list_users")}
    assert {j["hiring_manager_email"] for j in seeded.values()} | {j["recruiter_email"] for j in seeded.values()} <= users


def test_filters_narrow_jobs_candidates_and_interviews(rec: Calls) -> None:
    pending = jobs(rec, approval_status="pending")
    assert pending and all(j["approval_status"] == "pending" for j in pending) and len(pending) < len(jobs(rec))
    engineering = jobs(rec, department="engineering")
    assert engineering and {j["department"] for j in engineering} == {"Engineering"}
    job = jobs(rec, status="open")[0]
    for_job = rec.all("search_candidates", job_id=job["id"])
    assert len(for_job) == len(applications(rec, job_id=job["id"])) == job["active_applications"] + sum(
        1 for a in applications(rec, job_id=job["id"]) if a["status"] != "active"
    )
    panelist = rec("list_interviews", status="completed")["items"][0]["interviewer_emails"][0]
    theirs = rec.all("list_interviews", interviewer_email=panelist)
    assert theirs and all(panelist in i["interviewer_emails"] for i in theirs)
    assert rec("list_interviews", interviewer_email="nobody@" + rec.episode.world.home.domain)["items"] == []


def test_the_hiring_rules_are_stated(rec: Calls) -> None:
    rules = rec("get_hiring_rules")
    assert rules["stages"] == list(PIPELINE_STAGES) and "salary range" in rules["rules"]


# -- the pipeline ----------------------------------------------------------------------------------


def test_an_application_advances_one_stage_at_a_time_from_the_stage_it_is_in(rec: Calls) -> None:
    application = applications(rec, stage="application_review", status="active")[0]
    assert "is in application_review" in rec.refused(
        "advance_application", "invalid_state", application_id=application["id"], from_stage="phone_screen"
    )
    moved = rec("advance_application", application_id=application["id"], from_stage="application_review")
    assert moved["stage"] == "phone_screen" and moved["last_activity_at"] == rec.episode.world.now


def test_only_a_final_interview_recommending_hire_opens_the_offer_stage(rec: Calls) -> None:
    finalists = applications(rec, stage="final_interview", status="active")
    split = [a for a in finalists if {"no", "definitely_not"} & set(verdicts(rec, a["id"]))]
    unscored = [a for a in finalists if not verdicts(rec, a["id"])]
    good = [a for a in finalists if verdicts(rec, a["id"]) and set(verdicts(rec, a["id"])) <= {"yes", "strong_yes"}]
    assert split or unscored
    for application in split + unscored:
        rec.refused("advance_application", "permission_denied", application_id=application["id"], from_stage="final_interview")
    assert good, "some finalist has a positive final interview"
    moved = rec("advance_application", application_id=good[0]["id"], from_stage="final_interview")
    assert moved["stage"] == "offer"
    assert "create_offer" in rec.refused("advance_application", "invalid_state", application_id=good[0]["id"], from_stage="offer")


def test_rejecting_needs_a_reason_cancels_upcoming_interviews_and_can_be_undone(rec: Calls) -> None:
    upcoming = next(i for i in rec.all("list_interviews", status="scheduled") if i["start_at"] > rec.episode.world.now)
    reasons = {r["name"]: r for r in rec("list_rejection_reasons")}
    reason = reasons["Lacking skills or qualifications"]
    rec.refused("reject_application", "not_found", application_id=upcoming["application_id"], rejection_reason_id="rr_9999")
    rejected = rec("reject_application", application_id=upcoming["application_id"], rejection_reason_id=reason["id"],
                   notes="Not enough backend experience.")
    assert (rejected["status"], rejected["rejection_reason"]) == ("rejected", reason["name"])
    assert rec("list_interviews", application_id=upcoming["application_id"], status="cancelled")["total"] >= 1
    rec.refused("advance_application", "invalid_state", application_id=rejected["id"], from_stage=rejected["stage"])
    back = rec("unreject_application", application_id=rejected["id"])
    assert (back["status"], back["rejection_reason_id"]) == ("active", None)


def test_interviews_are_for_an_interview_stage_in_the_future_with_known_interviewers(rec: Calls) -> None:
    ep = rec.episode
    review = applications(rec, stage="application_review", status="active")[0]
    screen = applications(rec, stage="phone_screen", status="active")[0]
    job = rec("get_job", job_id=screen["job_id"])
    args = {"start_at": later(ep, 2), "end_at": later(ep, 2, 11), "interviewer_emails": [job["recruiter_email"]]}
    rec.refused("schedule_interview", "invalid_state", application_id=review["id"], **args)
    rec.refused("schedule_interview", "invalid_argument", application_id=screen["id"],
                **{**args, "interviewer_emails": ["friend@gmail.example"]})
    rec.refused("schedule_interview", "invalid_argument", application_id=screen["id"],
                **{**args, "start_at": later(ep, -1), "end_at": later(ep, -1, 11)})
    rec.refused("schedule_interview", "invalid_argument", application_id=screen["id"], **{**args, "end_at": later(ep, 2, 9)})
    interview = rec("schedule_interview", application_id=screen["id"], **args)
    assert (interview["stage"], interview["status"], interview["candidate_name"]) == ("phone_screen", "scheduled", screen["candidate_name"])
    rec.refused("submit_scorecard", "invalid_state", interview_id=interview["id"], interviewer_email=job["recruiter_email"],
                recommendation="yes", notes="Too early.")


def test_a_scorecard_comes_from_the_panel_once_per_interviewer(rec: Calls) -> None:
    ep = rec.episode
    awaiting = next(i for i in rec.all("list_interviews", status="scheduled") if i["start_at"] < ep.world.now)
    panelist = awaiting["interviewer_emails"][0]
    outsider = next(u["email"] for u in rec.all("list_users") if u["email"] not in awaiting["interviewer_emails"])
    rec.refused("submit_scorecard", "invalid_argument", interview_id=awaiting["id"], interviewer_email=outsider,
                recommendation="yes", notes="Great.")
    card = rec("submit_scorecard", interview_id=awaiting["id"], interviewer_email=panelist, recommendation="strong_yes",
               notes="Best answer on the system design question so far.")
    cards = rec.all("list_scorecards", application_id=awaiting["application_id"])
    assert card["id"] in [c["id"] for c in cards] and card["stage"] == awaiting["stage"]
    assert rec("list_interviews", application_id=awaiting["application_id"], status="completed")["total"] >= 1
    rec.refused("submit_scorecard", "conflict", interview_id=awaiting["id"], interviewer_email=panelist,
                recommendation="no", notes="Changed my mind.")


# -- offers and hires ------------------------------------------------------------------------------


def test_an_offer_needs_the_jobs_approval(rec: Calls) -> None:
    application = in_offer_stage(rec, "pending")
    job = rec("get_job", job_id=application["job_id"])
    message = rec.refused("create_offer", "permission_denied", application_id=application["id"],
                          salary=job["salary_min"], start_date=later(rec.episode, 30)[:10])
    assert job["approver_email"] in message


def test_the_approver_approves_a_job_and_nobody_else(rec: Calls) -> None:
    user = rec.episode.world.user.email
    pending = jobs(rec, approval_status="pending")
    theirs = next(j for j in pending if j["approver_email"] != user)
    assert theirs["hiring_manager_email"] == user  # nobody approves their own headcount
    assert theirs["approver_email"] in rec.refused("approve_job", "permission_denied", job_id=theirs["id"])
    mine = next(j for j in pending if j["approver_email"] == user and j["status"] == "open")
    approved = rec("approve_job", job_id=mine["id"])
    assert (approved["approval_status"], approved["approved_at"]) == ("approved", rec.episode.world.now)
    rec.refused("approve_job", "invalid_state", job_id=mine["id"])


def test_an_offer_stays_within_the_salary_range_and_goes_to_the_offer_stage_only(rec: Calls) -> None:
    application = in_offer_stage(rec, "approved")
    job = rec("get_job", job_id=application["job_id"])
    start = later(rec.episode, 30)[:10]
    assert "range" in rec.refused("create_offer", "permission_denied", application_id=application["id"],
                                  salary=job["salary_max"] + 5000, start_date=start)
    rec.refused("create_offer", "invalid_argument", application_id=application["id"], salary=job["salary_min"],
                start_date=rec.episode.world.now[:10])
    early = next(a for a in applications(rec, job_id=job["id"], status="active") if a["stage"] != "offer")
    rec.refused("create_offer", "invalid_state", application_id=early["id"], salary=job["salary_min"], start_date=start)
    offer = rec("create_offer", application_id=application["id"], salary=job["salary_max"], start_date=start,
                notes="Signing bonus 5,000 USD.")
    assert (offer["status"], offer["salary"], offer["candidate_name"]) == ("extended", job["salary_max"], application["candidate_name"])
    rec.refused("create_offer", "conflict", application_id=application["id"], salary=job["salary_min"], start_date=start)


def test_hiring_needs_an_accepted_offer_and_fills_the_job(rec: Calls) -> None:
    application = in_offer_stage(rec, "approved")
    job = rec("get_job", job_id=application["job_id"])
    rec.refused("hire_application", "invalid_state", application_id=application["id"])
    offer = rec("create_offer", application_id=application["id"], salary=job["salary_min"], start_date=later(rec.episode, 40)[:10])
    accepted = rec("record_offer_response", offer_id=offer["id"], response="accepted", notes="Signed this morning.")
    assert accepted["status"] == "accepted"
    rec.refused("record_offer_response", "invalid_state", offer_id=offer["id"], response="declined")
    hired = rec("hire_application", application_id=application["id"])
    assert hired["status"] == "hired"
    after = rec("get_job", job_id=job["id"])
    assert after["openings"] == job["openings"] - 1
    assert after["status"] == ("closed" if after["openings"] == 0 else "open")


def test_a_rejected_application_loses_its_extended_offer(rec: Calls) -> None:
    offer = rec("list_offers", status="extended")["items"][0]
    withdrew = next(r for r in rec("list_rejection_reasons") if r["type"] == "they_rejected")
    rec("reject_application", application_id=offer["application_id"], rejection_reason_id=withdrew["id"])
    assert rec("list_offers", application_id=offer["application_id"])["items"][0]["status"] == "withdrawn"


def test_the_hired_candidates_are_the_new_hires_in_hr() -> None:
    with Episode.create(["recruiting", "hr"], world_seed=0) as ep:
        rec, hr = Calls(ep, "recruiting"), Calls(ep, "hr")
        hired = applications(rec, status="hired")
        assert len(hired) == 2
        for application in hired:
            employee = hr("find_employee_by_email", email=application["candidate_email"])
            offer = rec("list_offers", application_id=application["id"], status="accepted")["items"][0]
            assert (employee["name"], employee["hire_date"]) == (application["candidate_name"], offer["start_date"])
        for user in rec.all("list_users"):
            employee = hr("find_employee_by_email", email=user["email"])
            assert (employee["name"], employee["job_title"], employee["department_name"]) == (
                user["name"], user["title"], user["department"]
            )


# -- what arrives from outside ---------------------------------------------------------------------


def test_an_application_received_starts_in_review_for_the_job_of_that_requisition(rec: Calls) -> None:
    ep = rec.episode
    job = jobs(rec, status="open")[0]
    application_id = ep.run_event(
        "recruiting", "application_received", first_name="Noor", last_name="Haddad", email="noor.haddad@proton.example",
        requisition_id=job["requisition_id"], source="LinkedIn", cover_letter="Five years of support leadership.",
        hours_ago=5.0,
    )
    assert_added_only(ep, "recruiting")
    application = rec("get_application", application_id=application_id)
    assert application["applied_at"] < ep.world.now
    assert (application["stage"], application["status"], application["job_id"], application["cover_letter"]) == (
        "application_review", "active", job["id"], "Five years of support leadership."
    )
    other = next(j for j in jobs(rec, status="open") if j["id"] != job["id"])
    second = ep.run_event("recruiting", "application_received", first_name="Noor", last_name="Haddad",
                          email="noor.haddad@proton.example", requisition_id=other["requisition_id"])
    candidate = rec("get_candidate", candidate_id=application["candidate_id"])
    assert candidate["application_ids"] == [application_id, second]
    closed = jobs(rec, status="closed")[0]
    with pytest.raises(ToolError, match="open jobs only"):
        ep.run_event("recruiting", "application_received", first_name="Ana", last_name="Ruiz", email="ana@proton.example",
                     requisition_id=closed["requisition_id"])



def test_an_offer_extended_from_outside_follows_the_offer_rules_and_only_adds_the_offer(rec: Calls) -> None:
    ep = rec.episode
    application = in_offer_stage(rec, "approved")
    job = rec("get_job", job_id=application["job_id"])
    start = later(ep, 30)[:10]
    offer_id = ep.run_event("recruiting", "offer_extended", application_id=application["id"], salary=job["salary_min"],
                            start_date=start, hours_ago=30.0)
    assert_added_only(ep, "recruiting")
    offer = rec("list_offers", application_id=application["id"])["items"][0]
    assert (offer["id"], offer["status"], offer["start_date"], offer["created_by_email"]) == (
        offer_id, "extended", start, job["recruiter_email"]
    )
    assert offer["created_at"] < ep.world.now
    # The candidate can now answer it, and a second offer is refused as create_offer refuses it.
    with pytest.raises(ToolError, match="already has an extended"):
        ep.run_event("recruiting", "offer_extended", application_id=application["id"], salary=job["salary_min"],
                     start_date=start)
    pending = in_offer_stage(rec, "pending")
    pending_job = rec("get_job", job_id=pending["job_id"])
    with pytest.raises(ToolError, match="no official approval"):
        ep.run_event("recruiting", "offer_extended", application_id=pending["id"], salary=pending_job["salary_min"],
                     start_date=start)
    other = in_offer_stage(rec, "approved")
    other_job = rec("get_job", job_id=other["job_id"])
    with pytest.raises(ToolError, match="outside the range"):
        ep.run_event("recruiting", "offer_extended", application_id=other["id"], salary=other_job["salary_max"] + 1,
                     start_date=start)
    assert rec("record_offer_response", offer_id=offer_id, response="accepted")["status"] == "accepted"

def test_adding_a_candidate_twice_or_a_referral_without_referrer_is_refused(rec: Calls) -> None:
    job = jobs(rec, status="open")[0]
    existing = rec("search_candidates")["items"][0]
    rec.refused("add_candidate", "conflict", first_name="A", last_name="B", email=existing["email"], job_id=job["id"])
    rec.refused("add_candidate", "invalid_argument", first_name="Lee", last_name="Chen", email="lee.chen@gmail.example",
                job_id=job["id"], source="Referral")
    application = rec("add_candidate", first_name="Lee", last_name="Chen", email="lee.chen@gmail.example", job_id=job["id"],
                      source="Referral", referrer_email=job["hiring_manager_email"])
    assert application["referrer_email"] == job["hiring_manager_email"]
    rec.refused("add_application", "conflict", candidate_id=application["candidate_id"], job_id=job["id"])
    note = rec("add_candidate_note", candidate_id=application["candidate_id"], body="Available from May.")
    assert rec("list_candidate_notes", candidate_id=application["candidate_id"])["items"][0]["id"] == note["id"]
