"""The home organisation's staff: employees, departments and managers, job openings and candidates,
and the people policies (time off, expenses, hiring) that govern them.

Several services hold these records (hr's employees are recruiting's interviewers and expenses'
submitters; a hired candidate in recruiting is a new hire in hr), so they come from here, never from
one service's module. Everything is a pure function of the World's seed, cached per seed:

- The team (``world.team``) are employees with their names, emails, phones and roles; ``team[0]``,
  the user the agent acts for, runs Operations. More staff (a chief executive, engineers, support
  agents...) come from a separate seeded stream with the same email domain, so the World's own
  values never change.
- Each department has a head (the team member of that role) who reports to the chief executive;
  everyone else reports to their department's head.
- Job openings are requisitions of the departments; each has a hiring manager (the head), the
  recruiter, and an approver for the official job approval that offers need: the user, or the
  finance lead when the user is the hiring manager (nobody approves their own headcount).
- Candidates apply to the openings and sit at a stage of ``PIPELINE_STAGES``; the two closed
  openings were filled by candidates who are now new hires (one starts soon, one started lately).
- The policies are data (``TIME_OFF_POLICIES``, ``EXPENSE_CATEGORIES``, ``RECEIPT_REQUIRED_OVER``)
  and texts (``Staff.expense_rules``, ``Staff.hiring_rules``) that the services state and enforce.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import lru_cache

from faker.providers.person.en_US import Provider as _PersonNames

from mcp_services.kernel.world import World, WorldShape

__all__ = [
    "CHIEF_EXECUTIVE",
    "EXPENSE_CATEGORIES",
    "PIPELINE_STAGES",
    "RECEIPT_REQUIRED_OVER",
    "TIME_OFF_POLICIES",
    "Candidate",
    "Department",
    "Employee",
    "ExpenseCategory",
    "JobOpening",
    "Staff",
    "TimeOffPolicy",
    "business_days",
    "staff_plan",
]

CHIEF_EXECUTIVE = "chief executive officer"

#: The hiring pipeline every job follows, in order; ``offer`` is the final stage.
PIPELINE_STAGES = ("application_review", "phone_screen", "skills_interview", "final_interview", "offer")


@dataclass(frozen=True, slots=True)
class TimeOffPolicy:
    """A kind of time off: how many days a year it grants and how it is approved."""

    type: str
    name: str
    annual_days: float
    carryover_days: float
    rules: str


TIME_OFF_POLICIES: tuple[TimeOffPolicy, ...] = (
    TimeOffPolicy(
        "vacation", "Vacation", 20, 5,
        "20 working days a year, granted on 1 January (prorated in the year you join); up to 5 unused days carry "
        "over. A request cannot exceed the available balance (days granted minus days already approved, minus "
        "other requests still waiting). Your manager approves or denies every request.",
    ),
    TimeOffPolicy(
        "sick", "Sick leave", 10, 0,
        "10 working days a year; unused days do not carry over. Record sick days as soon as you can, even "
        "afterwards. Your manager approves every request; more than 10 days need a conversation with Operations.",
    ),
    TimeOffPolicy(
        "personal", "Personal days", 3, 0,
        "3 working days a year for moves, appointments and family matters; they do not carry over. A request "
        "cannot exceed the balance, and your manager approves it.",
    ),
)


@dataclass(frozen=True, slots=True)
class ExpenseCategory:
    """An expense category of the company's expense policy, with its limit per expense."""

    name: str
    limit: float | None
    gl_code: str
    description: str


#: Above this amount an expense needs a receipt (the threshold Expensify also defaults to).
RECEIPT_REQUIRED_OVER = 75.0

EXPENSE_CATEGORIES: tuple[ExpenseCategory, ...] = (
    ExpenseCategory("Meals", 75.0, "6410", "Your own meals while travelling or working late."),
    ExpenseCategory("Client entertainment", 300.0, "6420", "Meals and events with customers; list who attended."),
    ExpenseCategory("Airfare", 1200.0, "6310", "Economy flights booked two weeks ahead where possible."),
    ExpenseCategory("Lodging", 350.0, "6320", "Hotels while travelling, per stay."),
    ExpenseCategory("Ground transportation", 150.0, "6330", "Taxis, ride shares, trains, parking and fuel."),
    ExpenseCategory("Office supplies", 150.0, "6510", "Stationery and small items for the office."),
    ExpenseCategory("Equipment", 1000.0, "6520", "Hardware and furniture for work, kept by the company."),
    ExpenseCategory("Software and subscriptions", 500.0, "6530", "Tools and subscriptions a team needs."),
    ExpenseCategory("Training and conferences", 1500.0, "6610", "Courses, books, conference tickets."),
    ExpenseCategory("Phone and internet", 100.0, "6540", "Your monthly work share of phone and internet."),
)


@dataclass(frozen=True, slots=True)
class Department:
    name: str
    head_email: str


@dataclass(frozen=True, slots=True)
class Employee:
    """A person on the payroll. ``team`` marks the World's own people (``world.team``)."""

    employee_number: str
    first_name: str
    last_name: str
    name: str
    email: str
    phone: str
    job_title: str
    department: str
    manager_email: str | None
    hire_date: str  # YYYY-MM-DD; in the future for a new hire who has not started yet
    employment_type: str  # full-time, part-time or contractor
    location: str
    team: bool
    home_email: str | None = None  # new hires: the address they applied with


@dataclass(frozen=True, slots=True)
class JobOpening:
    """A requisition: a role the company recruits for."""

    requisition_id: str
    title: str
    department: str
    location: str
    employment_type: str
    hiring_manager_email: str
    recruiter_email: str
    approver_email: str
    salary_min: float
    salary_max: float
    status: str  # draft, open or closed
    approval_status: str  # pending or approved: the official job approval an offer needs
    openings: int
    opened_on: str | None
    description: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A person who applied to one opening, and where their application stands."""

    first_name: str
    last_name: str
    name: str
    email: str
    phone: str
    city: str
    current_company: str
    current_title: str
    source: str
    referrer_email: str | None
    requisition_id: str
    stage: str  # one of PIPELINE_STAGES
    status: str  # active, rejected or hired
    rejection_reason: str | None
    applied_on: str


@dataclass(frozen=True, slots=True)
class Staff:
    departments: tuple[Department, ...]
    employees: tuple[Employee, ...]
    jobs: tuple[JobOpening, ...]
    candidates: tuple[Candidate, ...]
    #: Who administers the expense policy: may approve reports without violations, and reimburses.
    expense_admin_emails: tuple[str, ...]
    expense_rules: str
    hiring_rules: str

    def employee(self, email: str) -> Employee:
        for person in self.employees:
            if person.email == email:
                return person
        raise KeyError(email)

    def manager_of(self, email: str) -> Employee | None:
        manager = self.employee(email).manager_email
        return self.employee(manager) if manager else None

    def reports_of(self, email: str) -> tuple[Employee, ...]:
        return tuple(p for p in self.employees if p.manager_email == email)

    def job(self, requisition_id: str) -> JobOpening:
        for job in self.jobs:
            if job.requisition_id == requisition_id:
                return job
        raise KeyError(requisition_id)

    @property
    def emails(self) -> frozenset[str]:
        return frozenset(p.email for p in self.employees)


def business_days(start: str, end: str) -> int:
    """Working days (Monday to Friday) from ``start`` to ``end`` (YYYY-MM-DD), both included."""
    first, last = date.fromisoformat(start), date.fromisoformat(end)
    return sum(1 for n in range((last - first).days + 1) if (first + timedelta(days=n)).weekday() < 5)


def staff_plan(world: World) -> Staff:
    """The staff of ``world`` (worlds are a pure function of their seed, so this is cached per seed)."""
    return _build(*world.key)


# -- what the plan is made of ---------------------------------------------------------------------

#: (department, the team role heading it, other team roles in it, more staff titles in it)
_DEPARTMENTS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("Operations", "operations manager", ("office manager",),
     ("recruiter", "people operations specialist", "operations coordinator", "facilities coordinator")),
    ("Finance", "finance lead", ("accountant",), ("payroll specialist", "financial analyst")),
    ("Customer Support", "support lead", ("support agent",), ("support agent", "support agent", "support specialist")),
    ("Sales", "sales lead", ("account executive",),
     ("account executive", "sales development representative", "sales development representative")),
    ("Engineering", "engineering lead", (),
     ("senior software engineer", "software engineer", "software engineer", "QA engineer", "IT administrator")),
    ("Product", "product manager", (), ("product designer",)),
)
_PART_TIME = ("facilities coordinator",)
_CONTRACTORS = ("QA engineer",)

#: (title, department, salary min, salary max, status, approval, openings, what the role is)
_JOBS: tuple[tuple[str, str, float, float, str, str, int, str], ...] = (
    ("Senior Software Engineer", "Engineering", 150000, 185000, "open", "approved", 2,
     "Design, build and run the services behind our product; mentor two engineers; on call one week in six."),
    ("Support Specialist", "Customer Support", 58000, 70000, "open", "approved", 1,
     "Answer customers by email, chat and phone; own escalations for billing and onboarding questions."),
    ("Account Executive", "Sales", 75000, 95000, "open", "pending", 1,
     "Run the sales cycle for mid-market accounts from first call to signature; quota and commission plan."),
    ("Financial Analyst", "Finance", 80000, 100000, "open", "approved", 1,
     "Own the monthly close package, budget-versus-actual reporting and the cash forecast."),
    ("Operations Coordinator", "Operations", 52000, 62000, "open", "pending", 1,
     "Coordinate vendors, office logistics and purchasing; keep the operations calendar and records."),
    ("Product Designer", "Product", 105000, 130000, "open", "approved", 1,
     "Research, design and test the product's workflows with customers and engineering."),
    ("QA Engineer", "Engineering", 90000, 110000, "draft", "pending", 1,
     "Build the automated test suites and release checks for the web app and the API."),
    ("Software Engineer", "Engineering", 115000, 140000, "closed", "approved", 1,
     "Build product features end to end across the web app and the API."),
    ("Sales Development Representative", "Sales", 50000, 60000, "closed", "approved", 1,
     "Qualify inbound leads and book first meetings for the account executives."),
)
#: Stages of the active candidates of an open job, before a few random extra ones.
_OPEN_JOB_STAGES = ("application_review", "application_review", "phone_screen", "skills_interview",
                    "final_interview", "offer")
_SOURCES = ("Careers page", "LinkedIn", "Referral", "Indeed", "Agency")
_MAIL_PROVIDERS = ("gmail.example", "outlook.example", "icloud.example", "proton.example")
_REJECTIONS = ("Lacking skills or qualifications", "Compensation expectations too high",
               "Hired another candidate", "Accepted another offer", "Withdrew: personal reasons")
_CURRENT_TITLES = {
    "Engineering": ("Software Engineer", "Backend Developer", "Full Stack Developer", "Site Reliability Engineer"),
    "Customer Support": ("Customer Support Representative", "Help Desk Analyst", "Client Success Associate"),
    "Sales": ("Account Manager", "Sales Representative", "Business Development Manager"),
    "Finance": ("Financial Analyst", "Staff Accountant", "FP&A Associate"),
    "Operations": ("Office Coordinator", "Operations Assistant", "Procurement Associate"),
    "Product": ("UX Designer", "Product Designer", "Interaction Designer"),
}

_EXPENSE_RULES = (
    "Expense policy of {home}. Amounts in {currency}. Each category has a limit per expense (see the categories). "
    "Every expense over {receipt:.2f} {currency} needs a receipt. An expense over its category's limit, or over "
    "{receipt:.2f} {currency} without a receipt, is a policy violation. A report goes to the submitter's manager; "
    "a report with any violation must be approved by that manager. A report without violations may also be "
    "approved by an expense admin ({admins}). Nobody approves their own report. Only expense admins reimburse "
    "approved reports; rejected reports go back to the submitter with the reason."
)
_HIRING_RULES = (
    "Hiring rules of {home}. Every job follows the stages {stages}. Candidates advance one stage at a time, and "
    "into the offer stage only when the final interview's scorecards recommend hiring (at least one yes or strong "
    "yes, and no no or definitely not). An offer needs the job's official approval (approval status approved, "
    "given by the job's approver, who is never its hiring manager), an open job and a candidate in the offer "
    "stage, and its salary must lie within the job's salary range. A candidate is hired only after accepting the "
    "offer. Rejections always state a reason."
)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _phone(rng: random.Random) -> str:
    return f"+1{rng.randint(201, 989)}555{rng.randint(1000, 9999)}"


# Faker's en_US name lists, drawn from uniformly by the plan's own stream (Faker's weighted draws
# cost a millisecond a name).
_FIRST_NAMES = tuple(sorted(_PersonNames.first_names))
_LAST_NAMES = tuple(sorted(_PersonNames.last_names))
_COMPANY_SUFFIXES = ("Inc", "and Sons", "LLC", "Group", "PLC", "Ltd")


@dataclass(slots=True)
class _Names:
    """Fresh names whose address is unused, and company names, from the plan's own stream."""

    rng: random.Random
    used: set[str]

    def take(self, domain: str) -> tuple[str, str, str]:
        while True:
            first, last = self.rng.choice(_FIRST_NAMES), self.rng.choice(_LAST_NAMES)
            email = f"{_slug(first)}.{_slug(last)}@{domain}"
            if email not in self.used:
                self.used.add(email)
                return first, last, email

    def company(self) -> str:
        a, b, c = (self.rng.choice(_LAST_NAMES) for _ in range(3))
        return self.rng.choice((f"{a} {self.rng.choice(_COMPANY_SUFFIXES)}", f"{a}-{b}", f"{a} {b} and {c}"))


@lru_cache(maxsize=64)
def _build(seed: int, shape: WorldShape) -> Staff:
    world = World.from_seed(seed, shape)
    rng = world.rng("plans.staff")
    names = _Names(world.rng("plans.staff.names"), {p.email for p in world.people})
    cities = sorted({org.city for org in world.organisations[1:]})
    home = world.home
    today = world.now_dt.date()

    def days_ago(low: int, high: int) -> str:
        return (today - timedelta(days=rng.randint(low, high))).isoformat()

    by_role = {p.job_title: p for p in world.team}
    ceo_first, ceo_last, ceo_email = names.take(home.domain)
    heads = {dept: by_role[role].email for dept, role, _, _ in _DEPARTMENTS}
    employees: list[Employee] = []

    def add(first: str, last: str, email: str, phone: str, title: str, dept: str, manager: str | None,
            hired: str, team: bool, location: str | None = None, home_email: str | None = None) -> None:
        kind = "part-time" if title in _PART_TIME else "contractor" if title in _CONTRACTORS else "full-time"
        employees.append(Employee(
            employee_number=f"E{1001 + len(employees)}", first_name=first, last_name=last, name=f"{first} {last}",
            email=email, phone=phone, job_title=title, department=dept, manager_email=manager, hire_date=hired,
            employment_type=kind, location=location or home.city, team=team, home_email=home_email,
        ))

    dept_of = {role: dept for dept, head, others, _ in _DEPARTMENTS for role in (head, *others)}
    for person in world.team:
        dept = dept_of[person.job_title]
        manager = ceo_email if heads[dept] == person.email else heads[dept]
        add(person.first_name, person.last_name, person.email, person.phone, person.job_title, dept, manager,
            days_ago(400, 2900), True, person.city)
    add(ceo_first, ceo_last, ceo_email, _phone(rng), CHIEF_EXECUTIVE, "Leadership", None, days_ago(3000, 3300), False)
    for dept, _, _, titles in _DEPARTMENTS:
        for title in titles:
            first, last, email = names.take(home.domain)
            location = home.city if rng.random() < 0.75 else rng.choice(cities)
            add(first, last, email, _phone(rng), title, dept, heads[dept], days_ago(60, 2200), False, location)

    recruiter = next(p.email for p in employees if p.job_title == "recruiter")
    first_req = rng.randint(1040, 1180)
    jobs = [
        JobOpening(
            requisition_id=f"REQ-{first_req + i}", title=title, department=dept, location=home.city,
            employment_type="full-time", hiring_manager_email=heads[dept], recruiter_email=recruiter,
            approver_email=by_role["finance lead"].email if heads[dept] == world.user.email else world.user.email,
            salary_min=low, salary_max=high, status=status, approval_status=approval, openings=openings,
            opened_on=None if status == "draft" else days_ago(20, 75), description=about,
        )
        for i, (title, dept, low, high, status, approval, openings, about) in enumerate(_JOBS)
    ]

    candidates: list[Candidate] = []
    staff_emails = [p.email for p in employees]

    work_emails: dict[str, str] = {}

    def candidate(job: JobOpening, stage: str, status: str, reason: str | None = None,
                  applied_by: date | None = None) -> Candidate:
        first, last, work_email = names.take(home.domain)  # the name's work address is reserved: a hire gets it
        email = f"{_slug(first)}.{_slug(last)}@{rng.choice(_MAIL_PROVIDERS)}"
        source = rng.choice(_SOURCES)
        opened = job.opened_on or today.isoformat()
        spread = max(1, (today - date.fromisoformat(opened)).days - 2)
        made = Candidate(
            first_name=first, last_name=last, name=f"{first} {last}", email=email, phone=_phone(rng),
            city=home.city if rng.random() < 0.6 else rng.choice(cities), current_company=names.company(),
            current_title=rng.choice(_CURRENT_TITLES.get(job.department, _CURRENT_TITLES["Engineering"])),
            source=source, referrer_email=rng.choice(staff_emails) if source == "Referral" else None,
            requisition_id=job.requisition_id, stage=stage, status=status, rejection_reason=reason,
            applied_on=(today - timedelta(days=rng.randint(2, spread + 2))).isoformat(),
        )
        if applied_by is not None:  # a hire applied well before their offer: between the opening and ``applied_by``
            window = max(0, (applied_by - date.fromisoformat(opened)).days)
            made = replace(made, applied_on=(date.fromisoformat(opened) + timedelta(days=window * rng.random())).isoformat())
        candidates.append(made)
        work_emails[email] = work_email
        return made

    for job in jobs:
        if job.status == "open":
            extra = tuple(rng.choice(PIPELINE_STAGES[:3]) for _ in range(rng.randint(0, 3)))
            for stage in _OPEN_JOB_STAGES + extra:
                candidate(job, stage, "active")
            for _ in range(rng.randint(1, 3)):
                candidate(job, rng.choice(PIPELINE_STAGES[:4]), "rejected", rng.choice(_REJECTIONS))
        elif job.status == "closed":
            # The hire is on the payroll: one starts soon, the other started lately. They accepted the offer three
            # weeks before starting and applied two weeks or more before that, after the job opened.
            starts = today + timedelta(days=rng.randint(5, 12) if job.title == "Software Engineer" else -rng.randint(8, 15))
            applied_by = starts - timedelta(days=21 + 14)
            if job.opened_on is None or date.fromisoformat(job.opened_on) > applied_by - timedelta(days=5):
                moved = replace(job, opened_on=(applied_by - timedelta(days=rng.randint(5, 20))).isoformat())
                jobs[jobs.index(job)] = moved
                job = moved
            hire = candidate(job, "offer", "hired", applied_by=applied_by)
            for _ in range(2):
                candidate(job, rng.choice(PIPELINE_STAGES[1:4]), "rejected", rng.choice(_REJECTIONS[:3]))
            add(hire.first_name, hire.last_name, work_emails[hire.email], hire.phone, job.title.lower(), job.department,
                heads[job.department], starts.isoformat(), False, hire.city, hire.email)

    admins = (by_role["finance lead"].email, by_role["accountant"].email, world.user.email)
    admin_names = ", ".join(next(p.name for p in employees if p.email == e) for e in admins)
    return Staff(
        departments=(Department("Leadership", ceo_email),
                     *(Department(dept, heads[dept]) for dept, _, _, _ in _DEPARTMENTS)),
        employees=tuple(employees),
        jobs=tuple(jobs),
        candidates=tuple(candidates),
        expense_admin_emails=admins,
        expense_rules=_EXPENSE_RULES.format(home=home.name, currency=world.currency, receipt=RECEIPT_REQUIRED_OVER,
                                            admins=admin_names),
        hiring_rules=_HIRING_RULES.format(home=home.name, stages=", ".join(s.replace("_", " ") for s in PIPELINE_STAGES)),
    )
