"""Behaviour of hr a user would notice: the directory, time off under its policy and approvals, onboarding."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.staff import business_days, staff_plan
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["hr"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def hr(ep: Episode) -> Calls:
    return Calls(ep, "hr")


def me(hr: Calls) -> dict[str, Any]:
    return hr("find_employee_by_email", email=hr.episode.world.user.email)


def balance(hr: Calls, employee_id: str, kind: str) -> dict[str, Any]:
    return next(b for b in hr("get_time_off_balances", employee_id=employee_id) if b["type"] == kind)


def waiting(hr: Calls, **filters: Any) -> list[dict[str, Any]]:
    return hr.all("list_time_off_requests", status="requested", **filters)


def fits(hr: Calls, request: dict[str, Any]) -> bool:
    return request["days"] <= balance(hr, request["employee_id"], request["type"])["available_days"]


def next_monday(ep: Episode, weeks: int) -> date:
    today = ep.world.now_dt.date()
    return today + timedelta(days=7 * weeks - today.weekday())


# -- the directory ---------------------------------------------------------------------------------


def test_the_team_are_employees_with_their_names_emails_phones_and_titles(hr: Calls) -> None:
    world = hr.episode.world
    for person in world.team:
        employee = hr("find_employee_by_email", email=person.email)
        assert (employee["name"], employee["phone"], employee["job_title"]) == (person.name, person.phone, person.job_title)
    everyone = hr.all("search_employees")
    assert len(everyone) == len(staff_plan(world).employees) > len(world.team)
    assert all(e["work_email"].endswith("@" + world.home.domain) for e in everyone)


def test_direct_reports_and_departments_follow_the_reporting_lines(hr: Calls) -> None:
    user = me(hr)
    reports = hr.all("search_employees", manager_id=user["id"])
    assert len(reports) >= 3 and all(r["manager_email"] == user["work_email"] for r in reports)
    departments = {d["name"]: d for d in hr("list_departments")["items"]}
    assert departments["Operations"]["head_email"] == user["work_email"]
    operations = hr.all("search_employees", department_id=departments["Operations"]["id"])
    assert len(operations) == departments["Operations"]["headcount"] == len(reports) + 1
    assert sum(d["headcount"] for d in departments.values()) == len(hr.all("search_employees"))
    found = hr("search_employees", query=f"{user['first_name']} {user['last_name']}")["items"]
    assert [e["id"] for e in found] == [user["id"]]
    assert hr("search_employees", query=user["employee_number"])["items"][0]["id"] == user["id"]


def test_a_manager_cannot_report_to_their_own_report(hr: Calls) -> None:
    user = me(hr)
    report = hr("search_employees", manager_id=user["id"])["items"][0]
    assert "cannot report" in hr.refused("update_employee", "invalid_argument", employee_id=user["id"], manager_id=report["id"])
    hr.refused("update_employee", "invalid_argument", employee_id=user["id"], manager_id=user["id"])


def test_a_new_manager_becomes_the_approver_of_waiting_requests(hr: Calls) -> None:
    request = waiting(hr)[0]
    employee = hr("get_employee", employee_id=request["employee_id"])
    newcomer = next(e for e in hr.all("search_employees") if e["id"] not in (employee["id"], employee["manager_id"])
                    and e["manager_id"] != employee["id"])
    moved = hr("update_employee", employee_id=employee["id"], manager_id=newcomer["id"])
    assert moved["manager_email"] == newcomer["work_email"]
    assert hr("get_time_off_request", request_id=request["id"])["approver_email"] == newcomer["work_email"]


# -- time off --------------------------------------------------------------------------------------


def test_balances_add_up_to_the_approved_days_and_the_policies_state_them(hr: Calls) -> None:
    policies = {p["type"]: p for p in hr("list_time_off_policies")}
    assert set(policies) == {"vacation", "sick", "personal"} and "balance" in policies["vacation"]["rules"]
    year = hr.episode.world.now_dt.year
    for employee in hr.all("search_employees")[:12]:
        approved = hr.all("list_time_off_requests", employee_id=employee["id"], status="approved")
        for b in hr("get_time_off_balances", employee_id=employee["id"]):
            taken = sum(r["days"] for r in approved if r["type"] == b["type"] and r["start_date"].startswith(str(year)))
            assert b["used_days"] == taken
            assert b["available_days"] == b["granted_days"] + b["carried_over_days"] - b["used_days"] >= 0
            assert b["granted_days"] <= policies[b["type"]]["annual_days"]


def test_a_request_counts_working_days_and_waits_for_the_manager(hr: Calls) -> None:
    user = me(hr)
    report = hr("search_employees", manager_id=user["id"])["items"][0]
    start = next_monday(hr.episode, 7)
    end = start + timedelta(days=8)  # Monday to the next Tuesday
    request = hr("request_time_off", employee_id=report["id"], type="sick", start_date=start.isoformat(),
                 end_date=end.isoformat(), note="Surgery and recovery.")
    assert (request["days"], request["status"], request["approver_email"]) == (7.0, "requested", user["work_email"])
    assert balance(hr, report["id"], "sick")["pending_days"] >= 7.0


def test_a_request_beyond_the_balance_or_overlapping_or_across_years_is_refused(hr: Calls) -> None:
    user = me(hr)
    report = hr("search_employees", manager_id=user["id"])["items"][1]
    personal = balance(hr, report["id"], "personal")
    free = personal["available_days"] - personal["pending_days"]
    start = next_monday(hr.episode, 8)
    too_long = start + timedelta(days=int(free) + 2)
    message = hr.refused("request_time_off", "permission_denied", employee_id=report["id"], type="personal",
                         start_date=start.isoformat(), end_date=too_long.isoformat())
    assert "exceed" in message and "balance" in message
    first = hr("request_time_off", employee_id=report["id"], type="vacation", start_date=start.isoformat(),
               end_date=(start + timedelta(days=1)).isoformat())
    assert first["days"] == 2.0
    hr.refused("request_time_off", "conflict", employee_id=report["id"], type="vacation",
               start_date=(start + timedelta(days=1)).isoformat(), end_date=(start + timedelta(days=3)).isoformat())
    year = hr.episode.world.now_dt.year
    hr.refused("request_time_off", "invalid_argument", employee_id=report["id"], type="vacation",
               start_date=f"{year}-12-30", end_date=f"{year + 1}-01-02")
    hr.refused("request_time_off", "invalid_argument", employee_id=report["id"], type="vacation",
               start_date=start.isoformat(), end_date=(start - timedelta(days=2)).isoformat())


def test_the_manager_approves_and_the_days_leave_the_balance(hr: Calls) -> None:
    user = me(hr)
    request = next(r for r in waiting(hr, approver_email=user["work_email"]) if fits(hr, r))
    before = balance(hr, request["employee_id"], request["type"])
    approved = hr("approve_time_off_request", request_id=request["id"], note="Enjoy!")
    assert (approved["status"], approved["decided_by_email"], approved["decision_note"]) == ("approved", user["work_email"], "Enjoy!")
    after = balance(hr, request["employee_id"], request["type"])
    assert after["used_days"] == before["used_days"] + request["days"]
    assert after["pending_days"] == before["pending_days"] - request["days"]
    hr.refused("approve_time_off_request", "invalid_state", request_id=request["id"])
    start, end = date.fromisoformat(request["start_date"]), date.fromisoformat(request["end_date"])
    out = hr.all("list_whos_out", start_date=start.isoformat(), end_date=end.isoformat())
    assert request["id"] in [r["id"] for r in out]


def test_only_the_employees_manager_decides_their_time_off(hr: Calls) -> None:
    user = me(hr)
    theirs = next(r for r in waiting(hr) if r["approver_email"] != user["work_email"])
    message = hr.refused("approve_time_off_request", "permission_denied", request_id=theirs["id"])
    assert theirs["approver_email"] in message
    hr.refused("deny_time_off_request", "permission_denied", request_id=theirs["id"], reason="No.")


def test_a_request_beyond_the_balance_cannot_be_approved_only_denied_with_a_reason(hr: Calls) -> None:
    user = me(hr)
    beyond = next(r for r in waiting(hr, approver_email=user["work_email"]) if not fits(hr, r))
    assert "balance" in hr.refused("approve_time_off_request", "permission_denied", request_id=beyond["id"])
    hr.refused("deny_time_off_request", "invalid_argument", request_id=beyond["id"], reason="  ")
    denied = hr("deny_time_off_request", request_id=beyond["id"], reason="Only 2 personal days are left this year.")
    assert (denied["status"], denied["decision_note"]) == ("denied", "Only 2 personal days are left this year.")
    hr.refused("cancel_time_off_request", "invalid_state", request_id=beyond["id"])


def test_cancelling_approved_time_off_that_has_not_started_gives_the_days_back(hr: Calls) -> None:
    user = me(hr)
    today = hr.episode.world.now[:10]
    ahead = next(r for r in hr.all("list_time_off_requests", approver_email=user["work_email"], status="approved")
                 if r["start_date"] > today)
    before = balance(hr, ahead["employee_id"], ahead["type"])
    canceled = hr("cancel_time_off_request", request_id=ahead["id"], reason="Trip postponed.")
    assert (canceled["status"], canceled["cancel_reason"]) == ("canceled", "Trip postponed.")
    assert balance(hr, ahead["employee_id"], ahead["type"])["used_days"] == before["used_days"] - ahead["days"]
    taken = next(r for r in hr.all("list_time_off_requests", approver_email=user["work_email"], status="approved")
                 if r["start_date"] <= today)
    assert "already taken" in hr.refused("cancel_time_off_request", "invalid_state", request_id=taken["id"])


def test_whos_out_lists_approved_time_off_overlapping_the_period(hr: Calls) -> None:
    world = hr.episode.world
    start = world.now_dt.date()
    end = start + timedelta(days=60)
    out = hr.all("list_whos_out", start_date=start.isoformat(), end_date=end.isoformat())
    assert out and all(r["status"] == "approved" for r in out)
    assert all(r["end_date"] >= start.isoformat() and r["start_date"] <= end.isoformat() for r in out)
    engineering = next(d for d in hr("list_departments")["items"] if d["name"] == "Engineering")
    theirs = hr.all("list_whos_out", start_date=start.isoformat(), end_date=end.isoformat(), department_id=engineering["id"])
    members = {e["id"] for e in hr.all("search_employees", department_id=engineering["id"])}
    assert {r["employee_id"] for r in theirs} == {r["employee_id"] for r in out} & members
    hr.refused("list_whos_out", "invalid_argument", start_date=end.isoformat(), end_date=start.isoformat())


def test_a_time_off_request_filed_from_outside_waits_even_beyond_the_balance(hr: Calls) -> None:
    ep = hr.episode
    user = me(hr)
    report = hr("search_employees", manager_id=user["id"])["items"][0]
    start = next_monday(ep, 6)
    end = start + timedelta(days=25)
    request_id = ep.run_event("hr", "time_off_requested", employee_email=report["work_email"], type="vacation",
                              start_date=start.isoformat(), end_date=end.isoformat(), note="Sabbatical month.",
                              hours_ago=3.0)
    assert_added_only(ep, "hr")
    request = hr("get_time_off_request", request_id=request_id)
    assert request["created_at"] < ep.world.now
    assert (request["status"], request["days"]) == ("requested", float(business_days(start.isoformat(), end.isoformat())))
    assert not fits(hr, request)
    hr.refused("approve_time_off_request", "permission_denied", request_id=request_id)
    with pytest.raises(ToolError, match="not one of"):
        ep.run_event("hr", "time_off_requested", employee_email=report["work_email"], type="holiday",
                     start_date=start.isoformat(), end_date=end.isoformat())


# -- new hires and onboarding ----------------------------------------------------------------------


def test_the_new_hires_have_their_checklists_assigned_to_the_people_who_do_them(hr: Calls) -> None:
    staff = staff_plan(hr.episode.world)
    hires = [e for e in staff.employees if e.home_email]
    for planned in hires:
        hire = hr("find_employee_by_email", email=planned.home_email)
        tasks = hr.all("list_onboarding_tasks", employee_id=hire["id"])
        assert len(tasks) == 8 and hire["work_email"] == planned.email
        it = next(t for t in tasks if t["category"] == "IT")
        assert it["assignee_email"] == next(e.email for e in staff.employees if e.job_title == "IT administrator")
        assert {t["assignee_email"] for t in tasks if t["category"] == "Team"} == {planned.manager_email}
    started = min(hires, key=lambda e: e.hire_date)
    done = hr.all("list_onboarding_tasks", employee_id=hr("find_employee_by_email", email=started.email)["id"], status="done")
    assert done and all(t["due_date"] < hr.episode.world.now[:10] for t in done)


def test_adding_a_new_hire_gives_a_number_balances_and_a_checklist(hr: Calls) -> None:
    world = hr.episode.world
    engineering = next(d for d in hr("list_departments")["items"] if d["name"] == "Engineering")
    start = next_monday(hr.episode, 3)
    hire = hr("add_employee", first_name="Priya", last_name="Raman", work_email=f"priya.raman@{world.home.domain}",
              job_title="software engineer", department_id=engineering["id"], hire_date=start.isoformat(),
              home_email="priya.raman@gmail.example")
    assert hire["manager_email"] == engineering["head_email"]
    numbers = sorted(int(e["employee_number"][1:]) for e in hr.all("search_employees"))
    assert int(hire["employee_number"][1:]) == numbers[-1]
    vacation = balance(hr, hire["id"], "vacation")
    assert 0 < vacation["granted_days"] <= 20 and vacation["used_days"] == 0
    tasks = hr.all("list_onboarding_tasks", employee_id=hire["id"])
    assert len(tasks) == 8 and {t["status"] for t in tasks} == {"open"}
    hr.refused("add_employee", "conflict", first_name="Priya", last_name="Raman", work_email=f"priya.raman@{world.home.domain}",
               job_title="software engineer", department_id=engineering["id"], hire_date=start.isoformat())
    hr.refused("add_employee", "invalid_argument", first_name="Sam", last_name="Lee", work_email="sam.lee@gmail.example",
               job_title="software engineer", department_id=engineering["id"], hire_date=start.isoformat())


def test_onboarding_tasks_are_completed_once_and_handed_to_employees_only(hr: Calls) -> None:
    task = hr("list_onboarding_tasks", status="open")["items"][0]
    user = me(hr)
    moved = hr("assign_onboarding_task", task_id=task["id"], assignee_email=user["work_email"])
    assert moved["assignee_email"] == user["work_email"]
    hr.refused("assign_onboarding_task", "invalid_argument", task_id=task["id"], assignee_email="someone@gmail.example")
    done = hr("complete_onboarding_task", task_id=task["id"], note="Laptop asset tag LT-2231.")
    assert (done["status"], done["completed_at"], done["note"]) == ("done", hr.episode.world.now, "Laptop asset tag LT-2231.")
    hr.refused("complete_onboarding_task", "invalid_state", task_id=task["id"])
    assert task["id"] in [t["id"] for t in hr.all("list_onboarding_tasks", assignee_email=user["work_email"], status="done")]


@pytest.mark.parametrize("seed", [1, 7])
def test_other_worlds_seed_waiting_requests_for_the_user_to_decide(seed: int) -> None:
    with Episode.create(["hr"], world_seed=seed) as episode:
        hr = Calls(episode, "hr")
        mine = waiting(hr, approver_email=episode.world.user.email)
        assert any(fits(hr, r) for r in mine) and any(not fits(hr, r) for r in mine)
