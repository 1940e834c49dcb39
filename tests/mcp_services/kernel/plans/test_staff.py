"""The staff plan: the World's team on the payroll, reporting lines, openings, candidates and people policies."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest

from mcp_services.kernel import World
from mcp_services.kernel.plans.staff import (
    CHIEF_EXECUTIVE,
    EXPENSE_CATEGORIES,
    PIPELINE_STAGES,
    RECEIPT_REQUIRED_OVER,
    TIME_OFF_POLICIES,
    Staff,
    business_days,
    staff_plan,
)

SEEDS = (0, 1, 7, 23)


@pytest.fixture(params=SEEDS)
def world(request: pytest.FixtureRequest) -> World:
    return World.from_seed(request.param)


def test_same_seed_same_plan_and_other_seeds_other_people() -> None:
    assert staff_plan(World.from_seed(0)) is staff_plan(World.from_seed(0))  # cached per seed
    assert staff_plan(World.from_seed(0)).employees != staff_plan(World.from_seed(1)).employees


def test_the_team_are_employees_with_their_names_emails_phones_and_roles(world: World) -> None:
    staff = staff_plan(world)
    for person in world.team:
        employee = staff.employee(person.email)
        assert (employee.name, employee.phone, employee.job_title, employee.team) == (
            person.name, person.phone, person.job_title, True
        )
    extra = [e for e in staff.employees if not e.team]
    assert len(extra) >= 15 and all(e.email.endswith("@" + world.home.domain) for e in extra)
    emails = [e.email for e in staff.employees]
    assert len(set(emails)) == len(emails)
    assert not set(emails) & {p.email for p in world.customers}
    assert len({e.employee_number for e in staff.employees}) == len(emails)


def test_reporting_lines_are_a_tree_under_the_chief_executive(world: World) -> None:
    staff = staff_plan(world)
    (ceo,) = [e for e in staff.employees if e.manager_email is None]
    assert ceo.job_title == CHIEF_EXECUTIVE
    heads = {d.name: d.head_email for d in staff.departments}
    for employee in staff.employees:
        chain, cursor = [], employee
        while cursor.manager_email is not None:
            chain.append(cursor.email)
            assert len(chain) <= 3, f"{employee.email} is too deep or in a cycle"
            cursor = staff.employee(cursor.manager_email)
        assert cursor is ceo
        if employee is not ceo:
            expected = ceo.email if heads[employee.department] == employee.email else heads[employee.department]
            assert employee.manager_email == expected
    # The user runs Operations and has people to manage (approvals are theirs to give).
    mine = staff.reports_of(world.user.email)
    assert world.user.email == heads["Operations"] and len(mine) >= 3
    assert staff.manager_of(world.user.email) is ceo


def test_openings_have_an_approver_who_is_never_their_hiring_manager(world: World) -> None:
    staff = staff_plan(world)
    recruiter = [e for e in staff.employees if e.job_title == "recruiter"]
    assert len(recruiter) == 1
    statuses = Counter((j.status, j.approval_status) for j in staff.jobs)
    assert statuses[("open", "approved")] >= 3 and statuses[("open", "pending")] >= 1 and statuses[("closed", "approved")] == 2
    for job in staff.jobs:
        assert job.approver_email != job.hiring_manager_email
        assert job.approver_email in staff.emails and job.hiring_manager_email in staff.emails
        assert 0 < job.salary_min < job.salary_max
        assert job.recruiter_email == recruiter[0].email


def test_candidates_fill_every_stage_of_the_open_jobs(world: World) -> None:
    staff = staff_plan(world)
    for job in (j for j in staff.jobs if j.status == "open"):
        mine = [c for c in staff.candidates if c.requisition_id == job.requisition_id]
        assert set(PIPELINE_STAGES) <= {c.stage for c in mine if c.status == "active"}
        assert any(c.status == "rejected" and c.rejection_reason for c in mine)
    assert not {c.email for c in staff.candidates} & staff.emails
    assert len({c.email for c in staff.candidates}) == len(staff.candidates)
    assert all(c.referrer_email in staff.emails for c in staff.candidates if c.source == "Referral")
    assert all(c.applied_on <= world.now[:10] for c in staff.candidates)


def test_each_closed_job_was_filled_by_a_candidate_now_on_the_payroll(world: World) -> None:
    staff = staff_plan(world)
    today = world.now_dt.date()
    starts = []
    for job in (j for j in staff.jobs if j.status == "closed"):
        (hired,) = [c for c in staff.candidates if c.requisition_id == job.requisition_id and c.status == "hired"]
        employee = next(e for e in staff.employees if e.home_email == hired.email)
        assert (employee.name, employee.department, employee.job_title) == (hired.name, job.department, job.title.lower())
        starts.append(date.fromisoformat(employee.hire_date))
    assert min(starts) < today < max(starts)  # one started lately, one starts soon


def test_the_policies_state_their_numbers_and_people(world: World) -> None:
    staff: Staff = staff_plan(world)
    assert [p.type for p in TIME_OFF_POLICIES] == ["vacation", "sick", "personal"]
    assert all(str(int(p.annual_days)) in p.rules for p in TIME_OFF_POLICIES)
    assert all(c.limit is None or c.limit > 0 for c in EXPENSE_CATEGORIES)
    assert f"{RECEIPT_REQUIRED_OVER:.2f}" in staff.expense_rules
    admins = [staff.employee(e) for e in staff.expense_admin_emails]
    assert world.user.email in staff.expense_admin_emails
    assert all(a.name in staff.expense_rules for a in admins)
    assert "offer" in staff.hiring_rules and "salary range" in staff.hiring_rules


def test_business_days_count_monday_to_friday() -> None:
    assert business_days("2025-03-10", "2025-03-14") == 5  # Monday to Friday
    assert business_days("2025-03-14", "2025-03-17") == 2  # Friday to Monday
    assert business_days("2025-03-15", "2025-03-16") == 0  # a weekend
