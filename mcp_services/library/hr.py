"""HR: employees, departments and managers, time off and onboarding (modelled on BambooHR).

Employees are the home organisation's staff (``mcp_services.kernel.plans.staff``): the World's team
with their names, emails and roles, and the rest of the payroll with the same email domain. The agent
acts for the world's user, who runs Operations.

Time off follows the policies the data states (``list_time_off_policies``): a request cannot exceed the
available balance (days granted and carried over, minus days approved, minus other requests still
waiting); only the request's approver, the employee's manager, approves or denies it; approving takes
the days off the balance and cancelling an approved request that has not started gives them back.
Days are working days, Monday to Friday, and a request lies within one calendar year. New hires get an
onboarding checklist whose tasks are assigned to the colleagues who do them.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from typing import Any, Literal, get_args

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.plans.staff import TIME_OFF_POLICIES, business_days, staff_plan
from mcp_services.kernel.prose import write
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    City,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    JobTitle,
    PersonName,
    PhoneNumber,
    Subject,
    Text,
)

EmployeeId = EntityId("hr.employee")
DepartmentId = EntityId("hr.department")
PolicyId = EntityId("hr.time_off_policy")
BalanceId = EntityId("hr.time_off_balance")
RequestId = EntityId("hr.time_off_request")
TaskId = EntityId("hr.onboarding_task")

TimeOffType = Literal["vacation", "sick", "personal"]
RequestStatus = Literal["requested", "approved", "denied", "canceled"]
EmploymentType = Literal["full-time", "part-time", "contractor"]
TaskCategory = Literal["HR", "IT", "Facilities", "Finance", "Team"]
TaskStatus = Literal["open", "done"]

REQUEST_STATUS = StateDef(
    field="status",
    values=["requested", "approved", "denied", "canceled"],
    initial="requested",
    terminal=["denied", "canceled"],
    transitions={"requested": ["approved", "denied", "canceled"], "approved": ["canceled"], "denied": [], "canceled": []},
)

service = Service(
    "hr",
    "Human resources: the employee directory with departments and managers, time-off policies, balances and "
    "requests with manager approval, who is out, and onboarding checklists for new hires.",
    title="HR",
)


@service.entity(table="departments", prefix="dep", label="name", search=("name",))
class Department:
    """A department of the company and its head."""

    id: DepartmentId
    name: str = field(unique=True)
    head_email: EmailAddress = field(role="head")

    headcount = derived(int, batch=lambda db, deps: _headcounts(db, deps), description="Employees in the department")


@service.entity(
    table="employees", prefix="emp", label="name", search=("name", "work_email", "job_title", "employee_number")
)
class Employee:
    """A person on the payroll."""

    id: EmployeeId
    employee_number: str = field(unique=True, mention="the employee number")
    first_name: str
    last_name: str = field(index=True)
    name: PersonName = field(role="self")
    work_email: EmailAddress = field(unique=True, role="self")
    # New hires keep the address they applied with (the candidate's email in recruiting).
    home_email: EmailAddress | None = field(None, role="self", link="recruiting.candidate.email")
    phone: PhoneNumber | None = None
    job_title: JobTitle
    department_id: DepartmentId = field(index=True)
    manager_id: EmployeeId | None = field(None, role="manager")
    location: City
    hire_date: Date = field(mention="the start date")
    employment_type: EmploymentType

    department_name = joined(str, via="department_id", field="name")
    manager_name = joined(PersonName | None, via="manager_id", field="name")
    manager_email = joined(EmailAddress | None, via="manager_id", field="work_email")


@service.entity(table="time_off_policies", prefix="top", label="name")
class TimeOffPolicy:
    """A kind of time off: what it grants each year and the rules of requesting and approving it."""

    id: PolicyId
    type: TimeOffType = field(unique=True)
    name: str
    annual_days: float
    carryover_days: float
    rules: Text


@service.entity(table="time_off_balances", prefix="bal")
class TimeOffBalance:
    """One employee's days of one kind of time off in one year."""

    id: BalanceId
    employee_id: EmployeeId = field(index=True, role="employee")
    type: TimeOffType
    year: int
    granted_days: float
    carried_over_days: float
    used_days: float

    available_days = derived(
        float, lambda b: round(b.granted_days + b.carried_over_days - b.used_days, 2),
        description="Days left to approve: granted plus carried over, minus approved",
    )
    pending_days = derived(
        float, batch=lambda db, bals: _pending_days(db, bals), description="Days in requests still waiting for a decision"
    )


@service.entity(table="time_off_requests", prefix="tor", search=("note",), state=REQUEST_STATUS)
class TimeOffRequest:
    """An employee's request for time off, decided by their manager."""

    id: RequestId = field(mention="the time-off request")
    employee_id: EmployeeId = field(index=True, role="requester")
    type: TimeOffType
    start_date: Date = field(mention="the first day off")
    end_date: Date = field(mention="the last day off")
    days: float = field(mention="the number of days off")
    status: RequestStatus = field(index=True)
    note: Text | None = None
    approver_email: EmailAddress = field(index=True, role="approver")
    decision_note: Text | None = None
    decided_by_email: EmailAddress | None = field(None, role="decided by")
    created_at: DateTime
    decided_at: DateTime | None = None
    canceled_at: DateTime | None = None
    cancel_reason: Text | None = None

    employee_name = joined(PersonName, via="employee_id", field="name")
    employee_email = joined(EmailAddress, via="employee_id", field="work_email")


@service.entity(table="onboarding_tasks", prefix="obt", label="title", search=("title",))
class OnboardingTask:
    """One step of a new hire's onboarding checklist."""

    id: TaskId
    employee_id: EmployeeId = field(index=True, role="new hire")
    title: Subject
    category: TaskCategory
    assignee_email: EmailAddress = field(index=True, role="assignee")
    due_date: Date = field(mention="the due date")
    status: TaskStatus = field(index=True)
    completed_at: DateTime | None = None
    note: Text | None = None

    employee_name = joined(PersonName, via="employee_id", field="name")


# -- derived values --------------------------------------------------------------------------------


def _headcounts(db: RecordAccess, departments: Sequence[Department]) -> list[int]:
    ids = [d.id for d in departments]
    marks = ", ".join("?" for _ in ids)
    counts = dict(db.sql(f"SELECT department_id, COUNT(*) FROM employees WHERE department_id IN ({marks}) GROUP BY 1", *ids))
    return [int(counts.get(d.id, 0)) for d in departments]


def _pending_days(db: RecordAccess, balances: Sequence[TimeOffBalance]) -> list[float]:
    ids = sorted({b.employee_id for b in balances})
    marks = ", ".join("?" for _ in ids)
    rows = db.sql(
        "SELECT employee_id, type, CAST(substr(start_date, 1, 4) AS INTEGER), SUM(days) FROM time_off_requests "
        f"WHERE status = 'requested' AND employee_id IN ({marks}) GROUP BY 1, 2, 3",
        *ids,
    )
    pending = {(e, t, y): float(d) for e, t, y, d in rows}
    return [round(pending.get((b.employee_id, b.type, b.year), 0.0), 2) for b in balances]


# -- rules shared by the tools ---------------------------------------------------------------------

_REQUEST_HINT = "Use list_time_off_requests to find request ids."


def _today(ctx: ToolContext) -> date:
    return ctx.now.date()


def _employee_by_email(ctx: ToolContext, email: str) -> Employee:
    email = email.strip().lower()
    found = ctx.find(Employee, work_email=email) or ctx.find(Employee, home_email=email)
    if found is None:
        raise ToolError.not_found("employee", email, "No employee has that work or home email; use search_employees.")
    return found


def _approver_email(ctx: ToolContext, employee: Employee) -> str:
    """Who decides the employee's time off: their manager; for someone without one, the user (who runs HR)."""
    if employee.manager_id:
        return ctx.get(Employee, employee.manager_id).work_email
    return ctx.world.user.email


def _balance(ctx: ToolContext, employee: Employee, kind: str, year: int) -> TimeOffBalance:
    balance = ctx.find(TimeOffBalance, employee_id=employee.id, type=kind, year=year)
    if balance is None:
        raise ToolError.invalid_argument(
            f"{employee.name} has no {kind} balance for {year}; time off can be requested for the years "
            "get_time_off_balances lists."
        )
    return balance


def _year_of(start_date: str, end_date: str) -> int:
    """The calendar year a request lies in (balances are yearly, so a request never spans two)."""
    start, end = date.fromisoformat(start_date), date.fromisoformat(end_date)
    if end < start:
        raise ToolError.invalid_argument(f"end_date {end_date} is before start_date {start_date}; swap them.")
    if start.year != end.year:
        raise ToolError.invalid_argument(
            f"A request lies within one calendar year (balances are yearly): split {start_date} to {end_date} "
            f"into two requests at 31 December {start.year}."
        )
    return start.year


def _new_request(
    ctx: ToolContext, employee: Employee, kind: str, start_date: str, end_date: str, note: str | None, *, enforce: bool,
    at: str | None = None,
) -> TimeOffRequest:
    """File a request; ``enforce`` applies the balance and overlap rules (a request that arrives from outside may break them)."""
    year = _year_of(start_date, end_date)
    days = business_days(start_date, end_date)
    if days == 0:
        raise ToolError.invalid_argument(f"{start_date} to {end_date} has no working days (Monday to Friday).")
    balance = _balance(ctx, employee, kind, year)
    if enforce:
        overlap = (
            ctx.query(TimeOffRequest)
            .where(employee_id=employee.id)
            .where_in("status", ("requested", "approved"))
            .compare("start_date", "<=", end_date)
            .compare("end_date", ">=", start_date)
            .first()
        )
        if overlap is not None:
            raise ToolError.conflict(
                f"{employee.name} already has {overlap.status} time off {overlap.id} from {overlap.start_date} to "
                f"{overlap.end_date}, which overlaps; cancel it first or pick other dates."
            )
        waiting = _pending_days(ctx, [balance])[0]
        available = round(balance.granted_days + balance.carried_over_days - balance.used_days - waiting, 2)
        if days > available:
            raise ToolError.permission_denied(
                f"{days} working days of {kind} exceed {employee.name}'s available balance of {available} days "
                f"({year}, after requests still waiting); the policy does not allow requests beyond the balance."
            )
    return ctx.insert(
        TimeOffRequest(
            id=ctx.new_id("tor"), employee_id=employee.id, type=kind, start_date=start_date, end_date=end_date,
            days=float(days), status="requested", note=note.strip() if note and note.strip() else None,
            approver_email=_approver_email(ctx, employee), created_at=at or ctx.now_iso,
        )
    )


def _arrived(ctx: ToolContext, hours_ago: float) -> str:
    """When something that arrives from outside arrived: up to 30 days before now."""
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    return ctx.days_from_now(-hours_ago / 24)


def _decidable(ctx: ToolContext, request_id: str, verb: str) -> tuple[TimeOffRequest, Employee]:
    """A waiting request the user may decide: only its approver (the employee's manager) can."""
    request = ctx.get(TimeOffRequest, request_id, hint=_REQUEST_HINT)
    if request.status != "requested":
        raise ToolError.invalid_state(f"Request {request_id} is already {request.status}; only waiting requests can be {verb}.")
    employee = ctx.get(Employee, request.employee_id)
    if request.approver_email != ctx.world.user.email:
        approver = ctx.find(Employee, work_email=request.approver_email)
        who = f"{approver.name} ({approver.work_email})" if approver else request.approver_email
        raise ToolError.permission_denied(
            f"Only {who}, {employee.name}'s manager, can approve or deny request {request_id}; ask them to decide it."
        )
    return request, employee


def _checked_manager(ctx: ToolContext, employee_id: str | None, manager_id: str) -> Employee:
    """A manager for ``employee_id`` that keeps the reporting lines a tree (nobody manages themselves)."""
    manager = ctx.get(Employee, manager_id)
    if manager.id == employee_id:
        raise ToolError.invalid_argument("Nobody can be their own manager; pass another employee's id as manager_id.")
    seen = set()
    cursor: Employee | None = manager
    while cursor is not None and cursor.id not in seen:
        if cursor.id == employee_id:
            raise ToolError.invalid_argument(
                f"{manager.name} reports (directly or not) to this employee; a manager cannot report to their own report."
            )
        seen.add(cursor.id)
        cursor = ctx.fetch(Employee, cursor.manager_id) if cursor.manager_id else None
    return manager


# -- seed ------------------------------------------------------------------------------------------

#: A new hire's checklist: (task, category, who does it, days from the start date it is due).
_ONBOARDING: tuple[tuple[str, str, str, int], ...] = (
    ("Send the welcome email with first-day details", "HR", "people operations specialist", -5),
    ("Collect the signed offer letter, I-9 and W-4", "HR", "people operations specialist", -3),
    ("Order the laptop and set up email, chat and calendar accounts", "IT", "IT administrator", -2),
    ("Prepare the desk and the building badge", "Facilities", "facilities coordinator", -1),
    ("Add to payroll and enrol in benefits", "Finance", "payroll specialist", 0),
    ("Walk through the first-week plan and book the first 1:1s", "Team", "manager", 0),
    ("Pick an onboarding buddy from the team", "Team", "manager", 1),
    ("Hold the 30-day check-in", "Team", "manager", 30),
)
#: New hires whose start date is at most this many days ago still have their checklist.
ONBOARDING_WINDOW_DAYS = 30
#: What people write on a time-off request, per kind (None: no note).
_NOTES: dict[str, tuple[str | None, ...]] = {
    "vacation": ("[Family trip|Trip with the family|Holiday with my partner], booked [months ago|in January|a while ago].",
                 "[Visiting my parents|Seeing family|Visiting my grandparents] [in {city}|back home|up north].",
                 "[Long weekend away|A few days off|Short break][ to recharge|, back on {back}|].",
                 "[Friend's wedding|My sister's wedding|A cousin's wedding] [out of state|in {city}|abroad].",
                 "[Summer holiday|Spring break with the kids|Our annual trip][; handover notes in the team doc|; "
                 "{colleague} covers for me|].",
                 "[Taking the kids to the coast|Camping with the kids|Road trip with the family][, back {back}|].",
                 None),
    "sick": ("[Flu|Bad cold|Stomach bug][.|; should be back {back}.|, staying home.]",
             "[Doctor's appointment and recovery|Minor surgery and recovery|Dental surgery][.|; back {back}.]",
             "[Migraine|Back pain|Fever][.|, resting today.]", None),
    "personal": ("[Closing on the house|Signing the mortgage|House move][.|; {colleague} has my tasks.|]",
                 "[Moving to a new apartment|Moving house|Helping my parents move][.| - back {back}.]",
                 "[Jury duty|A court summons|Jury service][.|; dates set by the court.]",
                 "[Parent-teacher conference|School event for my daughter|My son's graduation][.|, back after lunch.|]"),
}
_NOTE_TAILS = ("", "", "Reachable on my phone if urgent.", "Handover notes are in the team doc.", "{colleague} is covering.",
               "Out-of-office is set.", "Back {back}.", "Thanks!", "Happy to swap days if needed.", "Calendar updated.")
_DENIALS = (
    "[Overlaps the quarter-end close|That's close week|It clashes with the month-end close]; [please pick another "
    "week|can you pick other dates|could you move it a week]?[ Happy to approve the week after.| Sorry!|]",
    "[Two of the team are already out that week|Half the team is off then|We're short-staffed that week]; [can we "
    "move it by a week|could you shift it|can we find other dates]?[ Let's talk at our 1:1.|]",
)


def _spoken(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def _plus_working_days(start: date, count: int) -> date:
    """The day on which ``count`` working days starting at ``start`` (a weekday) end."""
    day, left = start, count - 1
    while left > 0:
        day += timedelta(days=1)
        if day.weekday() < 5:
            left -= 1
    return day


def _next_weekday(day: date) -> date:
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def _prorated(annual: float, hired: date, year: int) -> float:
    """A year's grant, prorated by the months worked in the year someone joins (to half days)."""
    if hired.year < year:
        return annual
    if hired.year > year:
        return 0.0
    return round(annual * (13 - hired.month) / 12 * 2) / 2


def _at(ctx: ToolContext, day: date, hour: int) -> str:
    return ctx.iso(datetime(day.year, day.month, day.day, hour, tzinfo=timezone.utc))


def _onboarding_tasks(ctx: ToolContext, employee: Employee, done_before: date | None) -> list[OnboardingTask]:
    """The checklist of a new hire; tasks due before ``done_before`` are already done."""
    hired = date.fromisoformat(employee.hire_date)
    manager = ctx.fetch(Employee, employee.manager_id) if employee.manager_id else None
    tasks = []
    for title, category, role, offset in _ONBOARDING:
        doer = manager if role == "manager" else ctx.find(Employee, job_title=role)
        due = hired + timedelta(days=offset)
        done = done_before is not None and due < done_before
        tasks.append(OnboardingTask(
            id=ctx.new_id("obt"), employee_id=employee.id, title=title, category=category,
            assignee_email=doer.work_email if doer else ctx.world.user.email, due_date=due.isoformat(),
            status="done" if done else "open", completed_at=_at(ctx, due, 16) if done else None,
        ))
    return tasks


class _Year:
    """One employee's time off in the current year as it is seeded: no two stretches overlap."""

    def __init__(self, ctx: ToolContext, rng: random.Random, employee: Employee, approver: str) -> None:
        self.ctx, self.rng, self.employee, self.approver = ctx, rng, employee, approver
        self.words = ctx.rng(f"words:{employee.id}")  # the notes' wording, apart from what is filed when
        self.today = _today(ctx)
        self.hired = date.fromisoformat(employee.hire_date)
        self.taken: list[tuple[date, date]] = []
        self.requests: list[TimeOffRequest] = []

    def add(self, kind: str, status: str, earliest: date, latest: date, length: int) -> float:
        """File a stretch of ``length`` working days starting between the two dates; the days it files (0 if none fit)."""
        earliest = max(earliest, self.hired, date(self.today.year, 1, 1))
        if latest < earliest or length < 1:
            return 0.0
        for _ in range(6):
            start = _next_weekday(earliest + timedelta(days=self.rng.randint(0, (latest - earliest).days)))
            end = _plus_working_days(start, length)
            if end.year == self.today.year and all(end < a or start > b for a, b in self.taken):
                break
        else:
            return 0.0
        self.taken.append((start, end))
        filed = min(start - timedelta(days=self.rng.randint(3, 30)), self.today - timedelta(days=1))
        decided = status in ("approved", "denied")
        note = self.rng.choice(_NOTES[kind])
        if note is not None:
            note = f"{note} {self.words.choice(_NOTE_TAILS)}"
        denial = write(self.words, self.rng.choice(_DENIALS)) if status == "denied" else None
        created = _at(self.ctx, filed, self.rng.randint(8, 17))
        # Decided the next working day, or by now when it was filed yesterday.
        decided_at = min(_at(self.ctx, filed + timedelta(days=1), self.rng.randint(9, 17)),
                         self.ctx.iso(self.ctx.now - timedelta(minutes=self.words.randint(5, 60)))) if decided else None
        facts = {"city": self.words.choice(self.ctx.world.places).city, "back": _spoken(end + timedelta(days=1)),
                 "colleague": self.words.choice(self.ctx.world.team).first_name}
        self.requests.append(TimeOffRequest(
            id="", employee_id=self.employee.id, type=kind, start_date=start.isoformat(), end_date=end.isoformat(),
            days=float(length), status=status, note=write(self.words, note, facts) if note else None,
            approver_email=self.approver, decision_note=denial,
            decided_by_email=self.approver if decided else None, created_at=created,
            decided_at=max(decided_at, created) if decided_at else None,
        ))
        return float(length)


@service.seeder
def seed(ctx: ToolContext) -> None:
    """Departments and employees from the staff plan, the time-off policies, this year's requests and balances, checklists.

    Some requests wait for a decision, a few of them beyond the balance (including one of the user's own reports),
    so deciding them takes reading the balance and the policy.
    """
    world = ctx.world
    staff = staff_plan(world)
    rng = ctx.rng("seed")
    today = _today(ctx)
    departments = {d.name: Department(id=ctx.new_id("dep"), name=d.name, head_email=d.head_email) for d in staff.departments}
    ctx.insert_many(list(departments.values()))
    ids = {p.email: ctx.new_id("emp") for p in staff.employees}
    employees = [
        Employee(
            id=ids[p.email], employee_number=p.employee_number, first_name=p.first_name, last_name=p.last_name,
            name=p.name, work_email=p.email, home_email=p.home_email, phone=p.phone, job_title=p.job_title,
            department_id=departments[p.department].id, manager_id=ids[p.manager_email] if p.manager_email else None,
            location=p.location, hire_date=p.hire_date, employment_type=p.employment_type,
        )
        for p in staff.employees
    ]
    depth = {e.id: (0 if e.manager_id is None else 1 if e.manager_id == ids[staff.departments[0].head_email] else 2)
             for e in employees}
    ctx.insert_many(sorted(employees, key=lambda e: depth[e.id]))  # managers before their reports (foreign keys)
    ctx.insert_many([
        TimeOffPolicy(id=ctx.new_id("top"), type=p.type, name=p.name, annual_days=p.annual_days,
                      carryover_days=p.carryover_days, rules=p.rules)
        for p in TIME_OFF_POLICIES
    ])
    started = [e for e in employees if date.fromisoformat(e.hire_date) < today - timedelta(days=30)]
    mine = [e for e in started if e.manager_id == ids[world.user.email]]
    waiting = {e.id for e in rng.sample(started, min(10, len(started)))} | {mine[0].id}
    beyond = {e.id for e in rng.sample([e for e in started if e.id not in waiting], 2)} | {mine[-1].id}
    balances: list[TimeOffBalance] = []
    requests: list[TimeOffRequest] = []
    for employee, planned in zip(employees, staff.employees, strict=True):
        hired = date.fromisoformat(employee.hire_date)
        year = _Year(ctx, rng, employee, planned.manager_email or world.user.email)
        for policy in TIME_OFF_POLICIES:
            kind = policy.type
            granted = _prorated(policy.annual_days, hired, today.year)
            carried = float(rng.randint(0, int(policy.carryover_days))) if hired.year < today.year else 0.0
            used = 0.0
            past = {"vacation": (rng.randint(0, 2), 1, 5), "sick": (rng.randint(0, 2), 1, 2), "personal": (rng.randint(0, 1), 1, 1)}
            count, shortest, longest = past[kind]
            for _ in range(count):
                length = rng.randint(shortest, longest)
                if used + length <= granted + carried:
                    used += year.add(kind, "approved", date(today.year, 1, 1), today - timedelta(days=7), length)
            if kind == "vacation" and rng.random() < 0.4 and used + 5 <= granted + carried:
                used += year.add(kind, "approved", today + timedelta(days=3), today + timedelta(days=60), rng.randint(2, 5))
            if kind == "vacation" and employee.id in waiting:
                year.add(kind, "requested", today + timedelta(days=5), today + timedelta(days=50),
                         min(rng.randint(1, 5), int(granted + carried - used)))
            elif kind == "vacation" and rng.random() < 0.15:
                year.add(kind, rng.choice(("denied", "canceled")), today + timedelta(days=5), today + timedelta(days=50),
                         rng.randint(2, 5))
            if kind == "personal" and employee.id in beyond:
                year.add(kind, "requested", today + timedelta(days=7), today + timedelta(days=40),
                         int(granted + carried - used) + rng.randint(1, 2))
            balances.append(TimeOffBalance(
                id=ctx.new_id("bal"), employee_id=employee.id, type=kind, year=today.year, granted_days=granted,
                carried_over_days=carried, used_days=used,
            ))
        requests += year.requests
    ctx.insert_many(balances)
    # Ids in the order requests were filed, as the product hands them out.
    requests.sort(key=lambda r: (r.created_at, r.employee_id, r.start_date))
    ctx.insert_many([dataclasses.replace(r, id=ctx.new_id("tor")) for r in requests])
    tasks: list[OnboardingTask] = []
    for employee in employees:
        if (today - date.fromisoformat(employee.hire_date)).days <= ONBOARDING_WINDOW_DAYS:
            tasks += _onboarding_tasks(ctx, employee, done_before=today - timedelta(days=rng.randint(0, 3)))
    ctx.insert_many(tasks)


# -- employees -------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look {query} up in the employee directory", "find {query} in HR"))
def search_employees(
    ctx: ToolContext,
    query: str | None = None,
    department_id: DepartmentId | None = None,
    manager_id: EmployeeId | None = None,
    employment_type: EmploymentType | None = None,
    location: City | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Employee]:
    """Search the employee directory by name, work email, job title or employee number.

    Use manager_id to list someone's direct reports and department_id for a department's people.

    Args:
        query: Words to match against the name, work email, job title or employee number (every word must match).
        department_id: Only employees of this department (see list_departments).
        manager_id: Only the direct reports of this employee.
        employment_type: Only full-time, part-time or contractor employees.
        location: Only employees based in this city.
        limit: Maximum number of employees to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Employee).search(query).filter(department_id=department_id, manager_id=manager_id,
                                                 employment_type=employment_type)
    if location and location.strip():
        q.where_sql("lower(location) = lower(?)", location.strip())
    return q.order_by("last_name", "first_name").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the HR record of {employee_id}",))
def get_employee(ctx: ToolContext, employee_id: EmployeeId) -> Employee:
    """Get one employee's record: job title, department, manager, location, start date and employment type.

    Args:
        employee_id: The employee's id, e.g. emp_0007 (see search_employees).
    """
    return ctx.get(Employee, employee_id)


@service.tool("read", intent="find", phrases=("find the employee with the address {email}",))
def find_employee_by_email(ctx: ToolContext, email: EmailAddress) -> Employee:
    """Find the employee with exactly this work email (or, for a new hire, the home email they applied with).

    Args:
        email: The email address to look up.
    """
    return _employee_by_email(ctx, email)


@service.tool("read", intent="find", phrases=("list the departments", "check who heads each department"))
def list_departments(ctx: ToolContext, limit: Limit = 50, cursor: Cursor = None) -> Page[Department]:
    """List the company's departments with their head and headcount.

    Args:
        limit: Maximum number of departments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Department).order_by("name").page(limit, cursor)


@service.tool(
    "write",
    intent="create",
    phrases=("add {first_name} {last_name} to HR as a new hire starting {hire_date}",
             "set up {first_name} {last_name} in HR as our new {job_title}"),
)
def add_employee(
    ctx: ToolContext,
    first_name: str,
    last_name: str,
    work_email: EmailAddress,
    job_title: JobTitle,
    department_id: DepartmentId,
    hire_date: Date,
    manager_id: EmployeeId | None = None,
    employment_type: EmploymentType = "full-time",
    location: City | None = None,
    phone: PhoneNumber | None = None,
    home_email: EmailAddress | None = None,
) -> Employee:
    """Add a new hire. They get the next employee number, this year's time-off balances (prorated from the
    month they start) and the onboarding checklist, its tasks assigned to the colleagues who do them.

    Args:
        first_name: Given name.
        last_name: Family name.
        work_email: Their company address, at the company's email domain; unique.
        job_title: Their job title, e.g. software engineer.
        department_id: Their department (see list_departments).
        hire_date: Their first day (YYYY-MM-DD).
        manager_id: Their manager; defaults to the department's head.
        employment_type: full-time (default), part-time or contractor.
        location: The city they work from; defaults to the office's city.
        phone: Phone number in E.164 form, e.g. +14155550123.
        home_email: Their personal address (the one they applied with).
    """
    first, last = first_name.strip(), last_name.strip()
    if not first or not last or not job_title.strip():
        raise ToolError.invalid_argument("first_name, last_name and job_title must not be empty.")
    email = work_email.strip().lower()
    domain = ctx.world.home.domain
    if not email.endswith("@" + domain):
        raise ToolError.invalid_argument(f"work_email must be a company address at @{domain}; pass a personal address as home_email.")
    if ctx.exists(Employee, work_email=email):
        raise ToolError.conflict(f"An employee with work email {email} already exists; use find_employee_by_email.")
    department = ctx.get(Department, department_id)
    if manager_id:
        manager = ctx.get(Employee, manager_id)
    else:
        head = ctx.find(Employee, work_email=department.head_email)
        if head is None:
            raise ToolError.invalid_argument(f"{department.name} has no head on the payroll; pass manager_id.")
        manager = head
    hired = date.fromisoformat(hire_date)
    year = _today(ctx).year
    if hired.year > year + 1 or hired.year < year:
        raise ToolError.invalid_argument(f"hire_date {hire_date} must fall in {year} or {year + 1}.")
    numbers = [int(n) for (n,) in ctx.sql("SELECT substr(employee_number, 2) FROM employees") if str(n).isdigit()]
    employee = ctx.insert(Employee(
        id=ctx.new_id("emp"), employee_number=f"E{max(numbers, default=1000) + 1}", first_name=first, last_name=last,
        name=f"{first} {last}", work_email=email, home_email=home_email.strip().lower() if home_email else None,
        phone=phone, job_title=job_title.strip(), department_id=department.id, manager_id=manager.id,
        location=location.strip() if location and location.strip() else ctx.world.home.city, hire_date=hire_date,
        employment_type=employment_type,
    ))
    ctx.insert_many([
        TimeOffBalance(id=ctx.new_id("bal"), employee_id=employee.id, type=p.type, year=y,
                       granted_days=_prorated(p.annual_days, hired, y), carried_over_days=0.0, used_days=0.0)
        for y in sorted({year, hired.year}) for p in TIME_OFF_POLICIES
    ])
    ctx.insert_many(_onboarding_tasks(ctx, employee, done_before=None))
    return employee


@service.tool(
    "write",
    intent="update",
    phrases=("move {employee_id} to report to {manager_id}", "change the job title of {employee_id} to {job_title}"),
)
def update_employee(
    ctx: ToolContext,
    employee_id: EmployeeId,
    job_title: JobTitle | None = None,
    department_id: DepartmentId | None = None,
    manager_id: EmployeeId | None = None,
    location: City | None = None,
    phone: PhoneNumber | None = None,
    employment_type: EmploymentType | None = None,
) -> Employee:
    """Update an employee's job title, department, manager, location, phone or employment type; only what you pass
    changes. A new manager also becomes the approver of the employee's time-off requests still waiting.

    Args:
        employee_id: The employee to update.
        job_title: New job title.
        department_id: New department (see list_departments).
        manager_id: New manager; nobody can report to themselves or to one of their own reports.
        location: New city they work from.
        phone: New phone number in E.164 form.
        employment_type: full-time, part-time or contractor.
    """
    employee = ctx.get(Employee, employee_id)
    changes: dict[str, Any] = {}
    if job_title is not None:
        if not job_title.strip():
            raise ToolError.invalid_argument("job_title must not be empty.")
        changes["job_title"] = job_title.strip()
    if department_id is not None:
        changes["department_id"] = ctx.get(Department, department_id).id
    if manager_id is not None:
        manager = _checked_manager(ctx, employee.id, manager_id)
        changes["manager_id"] = manager.id
        waiting = ctx.query(TimeOffRequest).where(employee_id=employee.id, status="requested").all()
        for request in waiting:
            ctx.update(request, approver_email=manager.work_email)
    if location is not None:
        changes["location"] = location.strip()
    if phone is not None:
        changes["phone"] = phone
    if employment_type is not None:
        changes["employment_type"] = employment_type
    changes = {k: v for k, v in changes.items() if getattr(employee, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field with a new value to change.")
    return ctx.update(employee, **changes)


# -- time off --------------------------------------------------------------------------------------


@service.tool("read", intent="check", phrases=("check the time-off policy", "look up how many vacation days we get"))
def list_time_off_policies(ctx: ToolContext) -> list[TimeOffPolicy]:
    """The time-off policies: what each kind of time off (vacation, sick, personal) grants a year, what carries over,
    and the rules for requesting and approving it."""
    return ctx.query(TimeOffPolicy).order_by("id").all()


@service.tool(
    "read",
    intent="check",
    phrases=("check how many days off {employee_id} has left", "look at the time-off balance of {employee_id}"),
)
def get_time_off_balances(ctx: ToolContext, employee_id: EmployeeId, year: int | None = None) -> list[TimeOffBalance]:
    """An employee's time-off balances for a year: days granted, carried over, used (approved), available and
    waiting for a decision, per kind of time off.

    Args:
        employee_id: The employee (see search_employees).
        year: The calendar year; defaults to the current one.
    """
    employee = ctx.get(Employee, employee_id)
    wanted = year if year is not None else _today(ctx).year
    return ctx.query(TimeOffBalance).where(employee_id=employee.id, year=wanted).order_by("id").all()


@service.tool(
    "read",
    intent="find",
    phrases=("check the time-off requests waiting for {approver_email}", "look at the time off {employee_id} asked for"),
)
def list_time_off_requests(
    ctx: ToolContext,
    employee_id: EmployeeId | None = None,
    approver_email: EmailAddress | None = None,
    status: RequestStatus | None = None,
    type: TimeOffType | None = None,  # noqa: A002 - BambooHR's parameter name
    start_date: Date | None = None,
    end_date: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[TimeOffRequest]:
    """List time-off requests, soonest first, by employee, approver, status, kind or dates.

    Args:
        employee_id: Only this employee's requests.
        approver_email: Only requests this manager decides (pass your own email for the ones waiting for you).
        status: requested (waiting for a decision), approved, denied or canceled.
        type: vacation, sick or personal.
        start_date: Only requests that end on or after this date (YYYY-MM-DD).
        end_date: Only requests that start on or before this date (YYYY-MM-DD).
        limit: Maximum number of requests to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(TimeOffRequest).filter(employee_id=employee_id, status=status, type=type)
    if approver_email:
        q.where(approver_email=approver_email.strip().lower())
    q.compare("end_date", ">=", start_date).compare("start_date", "<=", end_date)
    return q.order_by("start_date").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open time-off request {request_id}",))
def get_time_off_request(ctx: ToolContext, request_id: RequestId) -> TimeOffRequest:
    """Get one time-off request with its dates, working days, status, approver and decision.

    Args:
        request_id: The request's id, e.g. tor_0012.
    """
    return ctx.get(TimeOffRequest, request_id, hint=_REQUEST_HINT)


@service.tool(
    "write",
    intent="create",
    phrases=("book {type} for {employee_id} from {start_date} to {end_date}",
             "put in a time-off request for {employee_id} from {start_date} to {end_date}"),
)
def request_time_off(
    ctx: ToolContext,
    employee_id: EmployeeId,
    type: TimeOffType,  # noqa: A002 - BambooHR's parameter name
    start_date: Date,
    end_date: Date,
    note: Text | None = None,
) -> TimeOffRequest:
    """File a time-off request for an employee; it waits for their manager's decision. It counts the working days
    (Monday to Friday) and is refused when they exceed the available balance (after other waiting requests) or
    overlap the employee's other requested or approved time off.

    Args:
        employee_id: Who is taking the time off.
        type: vacation, sick or personal.
        start_date: First day off (YYYY-MM-DD).
        end_date: Last day off (YYYY-MM-DD), in the same year.
        note: The employee's note for their manager.
    """
    employee = ctx.get(Employee, employee_id)
    return _new_request(ctx, employee, type, start_date, end_date, note, enforce=True)


@service.event("time_off_requested")
def time_off_requested(
    ctx: ToolContext, employee_email: str, type: str, start_date: str, end_date: str,  # noqa: A002
    note: str | None = None, hours_ago: float = 1.0,
) -> str:
    """An employee files time off in the product ``hours_ago`` (a task's trigger): a waiting request for their manager.

    Nothing is enforced beyond valid dates and a known employee: what people file can exceed their balance
    or overlap, and deciding it is the work. Returns the request's id.
    """
    at = _arrived(ctx, hours_ago)
    if type not in get_args(TimeOffType):
        raise ToolError.invalid_argument(f"type {type!r} is not one of {', '.join(get_args(TimeOffType))}.")
    for name, value in (("start_date", start_date), ("end_date", end_date)):
        try:
            date.fromisoformat(value)
        except (TypeError, ValueError):
            raise ToolError.invalid_argument(f"{name} {value!r} is not a date (YYYY-MM-DD).") from None
    employee = _employee_by_email(ctx, employee_email)
    return _new_request(ctx, employee, type, start_date, end_date, note, enforce=False, at=at).id


@service.tool(
    "write",
    intent="approve",
    phrases=("approve {request_id}", "sign off on the time off in {request_id}"),
)
def approve_time_off_request(ctx: ToolContext, request_id: RequestId, note: Text | None = None) -> TimeOffRequest:
    """Approve a waiting time-off request. Only its approver (the employee's manager) can, and only while the days
    fit the available balance; the days are then taken off the balance.

    Args:
        request_id: The waiting request (see list_time_off_requests with status requested).
        note: A note to the employee.
    """
    request, employee = _decidable(ctx, request_id, "approved")
    balance = _balance(ctx, employee, request.type, date.fromisoformat(request.start_date).year)
    available = round(balance.granted_days + balance.carried_over_days - balance.used_days, 2)
    if request.days > available:
        raise ToolError.permission_denied(
            f"Request {request_id} is for {request.days:g} working days of {request.type} but {employee.name} has "
            f"{available:g} available; the policy does not allow approving beyond the balance. Deny it with a reason, "
            "or ask for a shorter request."
        )
    ctx.update(balance, used_days=round(balance.used_days + request.days, 2))
    return ctx.update(
        request, status="approved", decided_by_email=ctx.world.user.email, decided_at=ctx.now_iso,
        decision_note=note.strip() if note and note.strip() else None,
    )


@service.tool("write", intent="reject", phrases=("deny {request_id} because {reason}", "turn down {request_id}"))
def deny_time_off_request(ctx: ToolContext, request_id: RequestId, reason: Text) -> TimeOffRequest:
    """Deny a waiting time-off request, with the reason the employee will read. Only its approver can.

    Args:
        request_id: The waiting request.
        reason: Why it is denied (e.g. it exceeds the balance, or the team is short that week).
    """
    if not reason.strip():
        raise ToolError.invalid_argument("reason must not be empty: the employee reads it.")
    request, _ = _decidable(ctx, request_id, "denied")
    return ctx.update(request, status="denied", decided_by_email=ctx.world.user.email, decided_at=ctx.now_iso,
                      decision_note=reason.strip())


@service.tool("write", intent="cancel", phrases=("cancel the time off in {request_id}", "withdraw {request_id}"))
def cancel_time_off_request(ctx: ToolContext, request_id: RequestId, reason: Text | None = None) -> TimeOffRequest:
    """Cancel a waiting or approved time-off request that has not started; an approved one gives its days back to
    the balance. The employee or their approver can cancel.

    Args:
        request_id: The request to cancel.
        reason: Why it is cancelled.
    """
    request = ctx.get(TimeOffRequest, request_id, hint=_REQUEST_HINT)
    if request.status not in ("requested", "approved"):
        raise ToolError.invalid_state(f"Request {request_id} is {request.status}; only requested or approved time off can be cancelled.")
    employee = ctx.get(Employee, request.employee_id)
    me = ctx.world.user.email
    if me not in (request.approver_email, employee.work_email):
        raise ToolError.permission_denied(
            f"Only {employee.name} or their approver ({request.approver_email}) can cancel request {request_id}."
        )
    if request.status == "approved":
        if date.fromisoformat(request.start_date) <= _today(ctx):
            raise ToolError.invalid_state(
                f"Request {request_id} started on {request.start_date}; time off already taken cannot be cancelled."
            )
        balance = _balance(ctx, employee, request.type, date.fromisoformat(request.start_date).year)
        ctx.update(balance, used_days=round(balance.used_days - request.days, 2))
    return ctx.update(request, status="canceled", canceled_at=ctx.now_iso,
                      cancel_reason=reason.strip() if reason and reason.strip() else None)


@service.tool("read", intent="check", phrases=("check who is out between {start_date} and {end_date}", "see who is off next week"))
def list_whos_out(
    ctx: ToolContext,
    start_date: Date | None = None,
    end_date: Date | None = None,
    department_id: DepartmentId | None = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[TimeOffRequest]:
    """Who is out: approved time off overlapping a period (default: today and the next 13 days), soonest first.

    Args:
        start_date: First day of the period (YYYY-MM-DD); defaults to today.
        end_date: Last day of the period (YYYY-MM-DD); defaults to 13 days after start_date.
        department_id: Only people of this department.
        limit: Maximum number of entries to return (1-100).
        cursor: next_cursor from a previous page.
    """
    start = date.fromisoformat(start_date) if start_date else _today(ctx)
    end = date.fromisoformat(end_date) if end_date else start + timedelta(days=13)
    if end < start:
        raise ToolError.invalid_argument(f"end_date {end.isoformat()} is before start_date {start.isoformat()}.")
    q = ctx.query(TimeOffRequest).where(status="approved")
    q.compare("end_date", ">=", start.isoformat()).compare("start_date", "<=", end.isoformat())
    if department_id is not None:
        department = ctx.get(Department, department_id)
        q.where_sql("employee_id IN (SELECT id FROM employees WHERE department_id = ?)", department.id)
    return q.order_by("start_date").page(limit, cursor)


# -- onboarding ------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("check the onboarding tasks of {employee_id}", "see which onboarding tasks {assignee_email} still has"),
)
def list_onboarding_tasks(
    ctx: ToolContext,
    employee_id: EmployeeId | None = None,
    assignee_email: EmailAddress | None = None,
    status: TaskStatus | None = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[OnboardingTask]:
    """List onboarding tasks by new hire, assignee or status, earliest due first.

    Args:
        employee_id: Only the checklist of this new hire.
        assignee_email: Only tasks assigned to this colleague.
        status: open or done.
        limit: Maximum number of tasks to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(OnboardingTask).filter(employee_id=employee_id, status=status)
    if assignee_email:
        q.where(assignee_email=assignee_email.strip().lower())
    return q.order_by("due_date").page(limit, cursor)


@service.tool("write", intent="close", phrases=("mark the onboarding task {task_id} as done", "tick off {task_id}"))
def complete_onboarding_task(ctx: ToolContext, task_id: TaskId, note: Text | None = None) -> OnboardingTask:
    """Mark an open onboarding task as done.

    Args:
        task_id: The task, e.g. obt_0003 (see list_onboarding_tasks).
        note: What was done (a laptop's asset tag, the badge number...).
    """
    task = ctx.get(OnboardingTask, task_id)
    if task.status == "done":
        raise ToolError.invalid_state(f"Onboarding task {task_id} is already done (at {task.completed_at}).")
    return ctx.update(task, status="done", completed_at=ctx.now_iso, note=note.strip() if note and note.strip() else task.note)


@service.tool("write", intent="assign", phrases=("give the onboarding task {task_id} to {assignee_email}",))
def assign_onboarding_task(ctx: ToolContext, task_id: TaskId, assignee_email: EmailAddress) -> OnboardingTask:
    """Give an open onboarding task to another employee.

    Args:
        task_id: The task to reassign.
        assignee_email: The work email of the employee who will do it.
    """
    task = ctx.get(OnboardingTask, task_id)
    if task.status == "done":
        raise ToolError.invalid_state(f"Onboarding task {task_id} is already done; there is nothing to hand over.")
    assignee = ctx.find(Employee, work_email=assignee_email.strip().lower())
    if assignee is None:
        raise ToolError.invalid_argument(f"{assignee_email} is not an employee's work email; check it with search_employees.")
    if assignee.work_email == task.assignee_email:
        raise ToolError.invalid_state(f"Onboarding task {task_id} is already assigned to {assignee.name}.")
    return ctx.update(task, assignee_email=assignee.work_email)

