"""Expenses: expense reports, expenses with receipts, approvals and reimbursement (modelled on Expensify).

Members are the home organisation's staff (``mcp_services.kernel.plans.staff``): the same names, emails
and employee numbers as in hr, each submitting to their manager. The expense policy is data
(``get_policy``, ``list_categories``) and the tools enforce it:

- an expense over its category's limit, or over the receipt threshold without a receipt, is a violation;
- a report moves open -> submitted -> approved -> reimbursed; a rejected report goes back to open with
  the reason; only open reports (and unreported expenses) can be edited;
- the submitter's manager (the report's approver) approves any report; an expense admin may approve a
  report only when it has no violations; nobody approves their own report; only expense admins reimburse.

The agent acts for the world's user, an expense admin who manages the Operations department. Seeded
reports are trips to customers (the World's organisations), client dinners with the World's customers,
equipment from the World's product catalogue, software, training, supplies and phone bills.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.plans.staff import EXPENSE_CATEGORIES, RECEIPT_REQUIRED_OVER, staff_plan
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.prose import write
from mcp_services.kernel.semantic import (
    Currency,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    FileName,
    Money,
    PersonName,
    ShortText,
    Subject,
    Text,
)
from mcp_services.kernel.schema import StateDef

PolicyId = EntityId("expenses.policy")
CategoryId = EntityId("expenses.category")
MemberId = EntityId("expenses.member")
ReportId = EntityId("expenses.report")
ExpenseId = EntityId("expenses.expense")
ReceiptId = EntityId("expenses.receipt")
CommentId = EntityId("expenses.report_comment")

ReportStatus = Literal["open", "submitted", "approved", "reimbursed"]
MemberRole = Literal["admin", "employee"]

REPORT_STATUS = StateDef(
    field="status",
    values=["open", "submitted", "approved", "reimbursed"],
    initial="open",
    terminal=["reimbursed"],
    transitions={"open": ["submitted"], "submitted": ["approved", "open"], "approved": ["reimbursed"], "reimbursed": []},
)

service = Service(
    "expenses",
    "Expense management: employees' expenses with receipts, expense reports submitted to their manager, approval "
    "under the company's expense policy (category limits, receipts), rejection and reimbursement.",
    title="Expenses",
)


@service.entity(table="policies", prefix="pol", label="name")
class Policy:
    """The company's expense policy: the receipt threshold, who administers it, and its rules in words."""

    id: PolicyId
    name: str
    currency: Currency
    receipt_required_over: Money = field(mention="the receipt threshold")
    admin_emails: list[EmailAddress] = field(role="expense admin")
    rules: Text


@service.entity(table="categories", prefix="cat", label="name", search=("name", "description"))
class Category:
    """An expense category and its limit per expense."""

    id: CategoryId
    name: str = field(unique=True)
    expense_limit: Money | None = field(None, mention="the category limit")
    gl_code: str
    description: str


@service.entity(table="members", prefix="mem", label="name", search=("name", "email", "employee_number"))
class Member:
    """A colleague on the expense policy and the approver their reports go to."""

    id: MemberId
    name: PersonName = field(role="self")
    email: EmailAddress = field(unique=True, role="self", link="hr.employee.work_email")
    employee_number: str = field(unique=True, link="hr.employee.employee_number")
    role: MemberRole
    submits_to_email: EmailAddress = field(role="approver")


@service.entity(table="reports", prefix="rep", label="title", search=("title",), state=REPORT_STATUS)
class Report:
    """An expense report: expenses an employee submits together for approval and reimbursement."""

    id: ReportId = field(mention="the expense report")
    title: Subject
    submitter_email: EmailAddress = field(index=True, role="submitter")
    submitter_name: PersonName = field(role="submitter")
    approver_email: EmailAddress = field(index=True, role="approver")
    status: ReportStatus = field(index=True)
    currency: Currency
    created_at: DateTime
    submitted_at: DateTime | None = None
    approved_at: DateTime | None = None
    approved_by_email: EmailAddress | None = field(None, role="approved by")
    reimbursed_at: DateTime | None = None
    reimbursement_reference: str | None = field(None, mention="the reimbursement reference")
    rejection_reason: Text | None = None

    total = derived(Money, batch=lambda db, reports: _report_sums(db, reports, "amount"), description="Sum of the expenses")
    reimbursable_total = derived(
        Money, batch=lambda db, reports: _report_sums(db, reports, "amount * reimbursable"),
        description="What the company pays back: the reimbursable expenses",
    )
    expense_count = derived(int, batch=lambda db, reports: _report_counts(db, reports), description="Expenses on it")
    violation_count = derived(
        int, batch=lambda db, reports: _report_violations(db, reports),
        description="Expenses breaking the policy; any makes the report need its approver (the manager)",
    )


@service.entity(table="expenses", prefix="exp", label="merchant", search=("merchant", "description"))
class Expense:
    """One purchase an employee paid for, on a report or not yet."""

    id: ExpenseId
    report_id: ReportId | None = field(None, index=True)
    spender_email: EmailAddress = field(index=True, role="spender")
    merchant: str
    amount: Money = field(mention="the amount")
    currency: Currency
    category_id: CategoryId
    date: Date = field(mention="the expense date")
    description: Text | None = None
    attendees: list[PersonName] = field(default_factory=list, role="attendee")
    billable: bool = False
    reimbursable: bool = True
    created_at: DateTime

    category_name = joined(str, via="category_id", field="name")
    receipt_id = derived(ReceiptId | None, batch=lambda db, items: _receipt_ids(db, items), description="Its receipt, if any")
    violations = derived(
        list[str], batch=lambda db, items: _violations_of(db, items), description="How it breaks the expense policy"
    )


@service.entity(table="receipts", prefix="rcpt", label="file_name")
class Receipt:
    """The scanned receipt of an expense."""

    id: ReceiptId
    expense_id: ExpenseId = field(unique=True)
    file_name: FileName
    merchant: str
    amount: Money
    date: Date
    uploaded_at: DateTime


@service.entity(table="report_comments", prefix="rc", search=("body",))
class ReportComment:
    """A comment in a report's history (a question, an explanation, a rejection)."""

    id: CommentId
    report_id: ReportId = field(index=True)
    author_email: EmailAddress = field(role="author")
    body: Text
    created_at: DateTime


class NewExpense(BaseModel):
    """One expense of a report that arrives from outside (``report_submitted``)."""

    merchant: str = Field(min_length=1, max_length=200)
    amount: float = Field(gt=0, le=1_000_000)
    category: str = Field(min_length=1, max_length=100)
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    description: str | None = Field(default=None, max_length=2000)
    receipt: bool = True
    attendees: list[str] = Field(default_factory=list, max_length=20)
    billable: bool = False


# -- the policy, as rules over the state ------------------------------------------------------------


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def _threshold(db: RecordAccess) -> tuple[float, str]:
    row = db.sql("SELECT receipt_required_over, currency FROM policies ORDER BY id LIMIT 1")
    return (float(row[0][0]), str(row[0][1])) if row else (RECEIPT_REQUIRED_OVER, "USD")


def _violations(db: RecordAccess, expense_ids: Sequence[str]) -> dict[str, list[str]]:
    """Per expense, how it breaks the policy: over its category's limit, or a missing receipt above the threshold."""
    if not expense_ids:
        return {}
    threshold, currency = _threshold(db)
    rows = db.sql(
        "SELECT e.id, e.amount, c.name, c.expense_limit, EXISTS (SELECT 1 FROM receipts r WHERE r.expense_id = e.id) "
        f"FROM expenses e JOIN categories c ON c.id = e.category_id WHERE e.id IN ({_marks(expense_ids)})",
        *expense_ids,
    )
    found: dict[str, list[str]] = {i: [] for i in expense_ids}
    for expense_id, amount, category, limit, has_receipt in rows:
        if limit is not None and amount > limit:
            found[expense_id].append(f"over the {category} limit of {limit:.2f} {currency}")
        if amount > threshold and not has_receipt:
            found[expense_id].append(f"no receipt for an expense over {threshold:.2f} {currency}")
    return found


def _violations_of(db: RecordAccess, expenses: Sequence[Expense]) -> list[list[str]]:
    found = _violations(db, [e.id for e in expenses])
    return [found[e.id] for e in expenses]


def _receipt_ids(db: RecordAccess, expenses: Sequence[Expense]) -> list[str | None]:
    ids = [e.id for e in expenses]
    found = dict(db.sql(f"SELECT expense_id, id FROM receipts WHERE expense_id IN ({_marks(ids)})", *ids))
    return [found.get(e.id) for e in expenses]


def _report_sums(db: RecordAccess, reports: Sequence[Report], value: str) -> list[float]:
    ids = [r.id for r in reports]
    sums = dict(db.sql(f"SELECT report_id, SUM({value}) FROM expenses WHERE report_id IN ({_marks(ids)}) GROUP BY 1", *ids))
    return [round(float(sums.get(r.id) or 0.0), 2) for r in reports]


def _report_counts(db: RecordAccess, reports: Sequence[Report]) -> list[int]:
    ids = [r.id for r in reports]
    counts = dict(db.sql(f"SELECT report_id, COUNT(*) FROM expenses WHERE report_id IN ({_marks(ids)}) GROUP BY 1", *ids))
    return [int(counts.get(r.id, 0)) for r in reports]


def _report_expense_ids(db: RecordAccess, report_ids: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {i: [] for i in report_ids}
    for report_id, expense_id in db.sql(
        f"SELECT report_id, id FROM expenses WHERE report_id IN ({_marks(report_ids)}) ORDER BY id", *report_ids
    ):
        found[report_id].append(expense_id)
    return found


def _report_violations(db: RecordAccess, reports: Sequence[Report]) -> list[int]:
    by_report = _report_expense_ids(db, [r.id for r in reports])
    found = _violations(db, [e for ids in by_report.values() for e in ids])
    return [sum(1 for e in by_report[r.id] if found[e]) for r in reports]


# -- rules shared by the tools ---------------------------------------------------------------------

_REPORT_HINT = "Use list_reports to find report ids."


def _policy(ctx: ToolContext) -> Policy:
    policy = ctx.query(Policy).order_by("id").first()
    assert policy is not None, "the policy is seeded"
    return policy


def _member(ctx: ToolContext, email: str) -> Member:
    member = ctx.find(Member, email=email.strip().lower())
    if member is None:
        raise ToolError.invalid_argument(f"{email} is not on the expense policy; see list_members for colleagues' emails.")
    return member


def _report(ctx: ToolContext, report_id: str) -> Report:
    return ctx.get(Report, report_id, hint=_REPORT_HINT)


def _open_report(ctx: ToolContext, report_id: str) -> Report:
    report = _report(ctx, report_id)
    if report.status != "open":
        raise ToolError.invalid_state(
            f"Report {report_id} is {report.status}; only open reports can change (a submitted report must be rejected "
            "back to open first)."
        )
    return report


def _editable_expense(ctx: ToolContext, expense_id: str) -> Expense:
    expense = ctx.get(Expense, expense_id)
    if expense.report_id is not None:
        report = _report(ctx, expense.report_id)
        if report.status != "open":
            raise ToolError.invalid_state(
                f"Expense {expense_id} is on {report.status} report {report.id}; only unreported expenses and those on "
                "open reports can change."
            )
    return expense


def _claim(ctx: ToolContext, report: Report, expense_ids: Sequence[str]) -> None:
    """Put unreported expenses of the report's submitter on it."""
    if len(set(expense_ids)) != len(expense_ids):
        raise ToolError.invalid_argument("expense_ids names an expense twice.")
    for expense_id in expense_ids:
        expense = ctx.get(Expense, expense_id, hint="Use search_expenses with unreported=true.")
        if expense.spender_email != report.submitter_email:
            raise ToolError.invalid_argument(
                f"Expense {expense_id} was paid by {expense.spender_email}, not {report.submitter_email}; a report holds "
                "its submitter's expenses only."
            )
        if expense.report_id is not None:
            raise ToolError.conflict(f"Expense {expense_id} is already on report {expense.report_id}.")
        ctx.update(expense, report_id=report.id)


def _decider(ctx: ToolContext, report: Report, verb: str) -> str:
    """The user, if they may decide this submitted report; refuses with who may otherwise."""
    if report.status != "submitted":
        raise ToolError.invalid_state(f"Report {report.id} is {report.status}; only submitted reports can be {verb}.")
    me = ctx.world.user.email
    if report.submitter_email == me:
        raise ToolError.permission_denied(f"Report {report.id} is your own; nobody {verb.removesuffix('d')}s their own report.")
    if report.approver_email == me:
        return me
    if me not in _policy(ctx).admin_emails:
        raise ToolError.permission_denied(f"Only {report.approver_email}, the submitter's manager, or an expense admin can decide report {report.id}.")
    if verb == "approved":
        ids = _report_expense_ids(ctx, [report.id])[report.id]
        broken = {e: v for e, v in _violations(ctx, ids).items() if v}
        if broken:
            detail = "; ".join(f"{e}: {', '.join(v)}" for e, v in sorted(broken.items()))
            raise ToolError.permission_denied(
                f"Report {report.id} breaks the expense policy ({detail}), so only the submitter's manager "
                f"{report.approver_email} can approve it; an expense admin may not."
            )
    return me


def _comment(ctx: ToolContext, report: Report, body: str, author: str | None = None) -> ReportComment:
    return ctx.insert(ReportComment(id=ctx.new_id("rc"), report_id=report.id, author_email=author or ctx.world.user.email,
                                    body=body, created_at=ctx.now_iso))


def _new_report(ctx: ToolContext, member: Member, title: str, submitted_at: str | None = None) -> Report:
    """A new report of ``member``: open, or already submitted at ``submitted_at``."""
    if not title.strip():
        raise ToolError.invalid_argument("title must not be empty.")
    return ctx.insert(Report(
        id=ctx.new_id("rep"), title=title.strip(), submitter_email=member.email, submitter_name=member.name,
        approver_email=member.submits_to_email, status="submitted" if submitted_at else "open",
        currency=_policy(ctx).currency, created_at=submitted_at or ctx.now_iso, submitted_at=submitted_at,
    ))


def _expense_date(ctx: ToolContext, value: str) -> str:
    if value > ctx.now.date().isoformat():
        raise ToolError.invalid_argument(f"date {value} is in the future; an expense is dated the day it was paid.")
    return value


# -- seed ------------------------------------------------------------------------------------------

_AIRLINES = ("Delta Air Lines", "United Airlines", "American Airlines", "Southwest Airlines", "Alaska Airlines")
_HOTELS = ("Marriott", "Hilton Garden Inn", "Hyatt Place", "Courtyard by Marriott", "Holiday Inn Express")
_MEALS = ("Panera Bread", "Shake Shack", "Chipotle", "Starbucks", "Sweetgreen", "Corner Bistro")
_RIDES = ("Uber", "Lyft", "Hertz", "Enterprise Rent-A-Car", "Amtrak")
_RESTAURANTS = ("The Capital Grille", "Maggiano's Little Italy", "P.F. Chang's", "Ruth's Chris Steak House", "Seasons 52")
_SHOPS = ("Amazon", "Best Buy", "B&H Photo", "Staples", "IKEA")
_SOFTWARE = (("Figma", 45.0, 180.0), ("Notion", 10.0, 96.0), ("Zoom", 15.99, 199.9), ("Canva", 14.99, 119.99),
             ("1Password", 7.99, 95.88), ("GitHub", 21.0, 252.0))
_TRAINING = (("O'Reilly Media", 49.0, 499.0), ("Coursera", 49.0, 399.0), ("Eventbrite", 120.0, 1650.0))
_SUPPLIES = ("Staples", "Office Depot", "Amazon")
_CARRIERS = ("Verizon", "AT&T", "T-Mobile", "Comcast Xfinity")


def _cents(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def _trip(rng: random.Random, world: Any, start: date) -> tuple[str, list[tuple[str, float, str, date, str, list[str]]]]:
    org = rng.choice(world.organisations[1:])
    nights = rng.choice((1, 1, 2, 3))
    back = start + timedelta(days=nights)
    hotel = rng.choice(_HOTELS)
    items = [
        (rng.choice(_AIRLINES), _cents(rng, 260, 980), "Airfare", start, f"Round trip to {org.city} to visit {org.name}", []),
        (hotel, round(_cents(rng, 140, 230) * nights, 2), "Lodging", start, f"{hotel}, {org.city}: {nights} night(s)", []),
        (rng.choice(_RIDES), _cents(rng, 18, 95), "Ground transportation", start, "Airport to hotel", []),
        (rng.choice(_MEALS), _cents(rng, 9, 38), "Meals", start, "Dinner on the road", []),
        (rng.choice(_RIDES), _cents(rng, 18, 95), "Ground transportation", back, "Hotel to airport", []),
    ]
    return f"Customer visit: {org.name}, {org.city}", items


def _dinner(rng: random.Random, world: Any, day: date, host: str) -> tuple[str, list[tuple[str, float, str, date, str, list[str]]]]:
    guest = rng.choice(world.customers)
    company = world.organisation(guest.organisation_id).name
    place = rng.choice(_RESTAURANTS)
    return f"Client dinner with {company}", [
        (place, _cents(rng, 110, 280), "Client entertainment", day, f"Dinner with {guest.name} of {company}", [guest.name, host]),
    ]


def _equipment(rng: random.Random, world: Any, day: date) -> tuple[str, list[tuple[str, float, str, date, str, list[str]]]]:
    goods = [p for p in world.products if p.category in ("hardware", "furniture")]
    picks = rng.sample(goods, rng.randint(1, 2))
    return "Home office equipment", [
        (rng.choice(_SHOPS), p.unit_price, "Equipment", day, f"{p.name} ({p.sku})", []) for p in picks
    ]


def _software(rng: random.Random, day: date) -> tuple[str, list[tuple[str, float, str, date, str, list[str]]]]:
    vendor, monthly, yearly = rng.choice(_SOFTWARE)
    yearly_plan = rng.random() < 0.4
    amount = yearly if yearly_plan else monthly
    return f"{vendor} subscription", [
        (vendor, amount, "Software and subscriptions", day, f"{vendor} {'annual' if yearly_plan else 'monthly'} plan", []),
    ]


def _training(rng: random.Random, day: date) -> tuple[str, list[tuple[str, float, str, date, str, list[str]]]]:
    vendor, low, high = rng.choice(_TRAINING)
    what = "Conference ticket" if vendor == "Eventbrite" else "Online course"
    return f"{what} ({vendor})", [(vendor, _cents(rng, low, high), "Training and conferences", day, what, [])]


def _supplies(rng: random.Random, day: date) -> tuple[str, list[tuple[str, float, str, date, str, list[str]]]]:
    return "Office supplies", [
        (rng.choice(_SUPPLIES), _cents(rng, 8, 120), "Office supplies", day - timedelta(days=k), text, [])
        for k, text in enumerate(rng.sample(("Printer toner", "Notebooks and pens", "Label maker tape", "Desk organisers"), 2))
    ]


def _phone(rng: random.Random, day: date) -> tuple[str, list[tuple[str, float, str, date, str, list[str]]]]:
    carrier = rng.choice(_CARRIERS)
    return f"{day:%B} phone and internet", [
        (carrier, _cents(rng, 45, 96), "Phone and internet", day, f"{carrier} bill, {day:%B %Y} (work share)", []),
    ]


#: Categories whose amounts are list prices (a catalogue product, a plan): never inflated past a limit.
_LIST_PRICED = ("Equipment", "Software and subscriptions")


def _spoil(rng: random.Random, items: Sequence[tuple[str, float, str, date, str, list[str]]],
           categories: dict[str, Category]) -> tuple[int, str]:
    """Which expense of a violating report breaks the policy, and how: over its limit, or a missing receipt."""
    over = [k for k, item in enumerate(items) if item[2] not in _LIST_PRICED and categories[item[2]].expense_limit is not None]
    missing = [k for k, item in enumerate(items) if item[1] > RECEIPT_REQUIRED_OVER]
    modes = [m for m, ks in (("over limit", over), ("missing receipt", missing)) if ks]
    if not modes:
        return -1, ""
    mode = rng.choice(modes)
    return rng.choice(over if mode == "over limit" else missing), mode


#: How people describe the same kind of expense, each in their own words.
_WORDINGS = {
    "Airport to hotel": "[Airport to hotel|Taxi from the airport|Ride to the hotel|Airport transfer|From the airport to "
                        "the hotel][| after landing| (late flight)|]",
    "Hotel to airport": "[Hotel to airport|Ride back to the airport|Taxi to the airport|Airport transfer home|To the "
                        "airport][| for the flight home| (early start)|]",
    "Dinner on the road": "[Dinner on the road|Dinner at the hotel|Evening meal|Dinner, travelling|Quick dinner][| "
                          "after the visit| near the hotel|]",
    "Printer toner": "[Printer toner|Toner for the printer|Toner cartridges|Replacement toner]",
    "Notebooks and pens": "[Notebooks and pens|Pens and notebooks|Stationery|Notepads and pens]",
    "Label maker tape": "[Label maker tape|Labels for the label maker|Label tape]",
    "Desk organisers": "[Desk organisers|Desk trays|Drawer organisers]",
    "Conference ticket": "[Conference ticket|Ticket for the conference|Conference pass|Event ticket][| (early bird)|]",
    "Online course": "[Online course|Course fee|Online training|Training course][| for my team role|]",
}


def _worded(words: random.Random, text: str) -> str:
    return write(words, _WORDINGS[text]) if text in _WORDINGS else text


#: Why an approver sent a report back (the receipt or the limit), in their words.
_REJECTION = ("[Hi {first}, please|Please|{first}, could you] attach the missing receipt or explain the amount over the "
              "category limit[.|, then resubmit.|. Thanks!| - happy to talk it through.]")


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The policy, its categories and members from the staff plan, and a few months of reports in every state.

    Some submitted reports break the policy (an expense over its limit, a missing receipt): the user may approve
    those only for their own reports as a manager, never as an expense admin.
    """
    world = ctx.world
    staff = staff_plan(world)
    rng = ctx.rng("seed")
    words = ctx.rng("words")  # how each expense is described, apart from what was spent when
    today = ctx.now.date()
    ctx.insert(Policy(
        id=ctx.new_id("pol"), name=f"{world.home.name} expense policy", currency=world.currency,
        receipt_required_over=RECEIPT_REQUIRED_OVER, admin_emails=list(staff.expense_admin_emails),
        rules=staff.expense_rules,
    ))
    categories = {c.name: Category(id=ctx.new_id("cat"), name=c.name, expense_limit=c.limit, gl_code=c.gl_code,
                                   description=c.description) for c in EXPENSE_CATEGORIES}
    ctx.insert_many(list(categories.values()))
    people = [p for p in staff.employees if date.fromisoformat(p.hire_date) <= today]
    members = [
        Member(id=ctx.new_id("mem"), name=p.name, email=p.email, employee_number=p.employee_number,
               role="admin" if p.email in staff.expense_admin_emails else "employee",
               submits_to_email=p.manager_email or staff.expense_admin_emails[0])
        for p in people
    ]
    ctx.insert_many(members)
    mine = [m for m in members if m.submits_to_email == world.user.email]
    others = [m for m in members if m.submits_to_email != world.user.email and m.email != world.user.email]
    # (member, status, violating): every status, and decisions the user may and may not take.
    plan: list[tuple[Member, str, bool]] = [(mine[0], "submitted", False), (mine[-1], "submitted", True)]
    plan += [(m, "submitted", k % 2 == 1) for k, m in enumerate(rng.sample(others, 6))]
    plan += [(rng.choice(members), status, False) for status in ("reimbursed",) * 18 + ("approved",) * 6 + ("open",) * 6]
    plan += [(rng.choice(others), "open", True)]
    age = {"reimbursed": (30, 120), "approved": (4, 20), "submitted": (1, 9), "open": (0, 12)}
    reports: list[Report] = []
    expenses: list[Expense] = []
    receipts: list[Receipt] = []
    comments: list[ReportComment] = []
    drafts = []
    for member, status, violating in plan:
        start = today - timedelta(days=rng.randint(*age[status]) + 3)
        kinds = ("trip", "trip", "dinner", "training", "supplies", "phone") + (() if violating else ("equipment", "software"))
        kind = rng.choice(kinds)
        title, items = {
            "trip": lambda: _trip(rng, world, start),
            "dinner": lambda: _dinner(rng, world, start, member.name),
            "equipment": lambda: _equipment(rng, world, start),
            "software": lambda: _software(rng, start),
            "training": lambda: _training(rng, start),
            "supplies": lambda: _supplies(rng, start),
            "phone": lambda: _phone(rng, start),
        }[kind]()
        drafts.append((member, status, violating, start, title, items))
    # Ids in the order reports were created, as the product hands them out.
    drafts.sort(key=lambda d: (d[3], d[0].id))
    for member, status, violating, start, title, items in drafts:
        report_id = ctx.new_id("rep")
        created = datetime(start.year, start.month, start.day, 18, tzinfo=timezone.utc) + timedelta(days=len(items) // 3)
        submitted = created + timedelta(hours=rng.randint(2, 30)) if status != "open" else None
        approved = submitted + timedelta(hours=rng.randint(4, 72)) if submitted and status in ("approved", "reimbursed") else None
        reimbursed = approved + timedelta(days=rng.randint(2, 6)) if approved and status == "reimbursed" else None
        spoiled, mode = _spoil(rng, items, categories) if violating else (-1, "")
        for k, (merchant, amount, category, day, text, attendees) in enumerate(items):
            limit = categories[category].expense_limit
            missing = k == spoiled and mode == "missing receipt"
            if k == spoiled and mode == "over limit" and limit is not None:
                amount = round(limit * rng.uniform(1.08, 1.35), 2)
            elif limit is not None and amount > limit:
                amount = round(limit * rng.uniform(0.7, 0.98), 2)  # only the spoiled expense breaks the rules
            expense_id = ctx.new_id("exp")
            expenses.append(Expense(
                id=expense_id, report_id=report_id, spender_email=member.email, merchant=merchant, amount=amount,
                currency=world.currency, category_id=categories[category].id, date=day.isoformat(),
                description=_worded(words, text), attendees=attendees, billable=category == "Client entertainment",
                created_at=ctx.iso(created),
            ))
            if not missing and (amount > RECEIPT_REQUIRED_OVER or rng.random() < 0.6):
                receipts.append(Receipt(
                    id=ctx.new_id("rcpt"), expense_id=expense_id,
                    file_name=f"receipt-{day.isoformat()}-{''.join(ch for ch in merchant.lower() if ch.isalnum())[:20]}.jpg",
                    merchant=merchant, amount=amount, date=day.isoformat(), uploaded_at=ctx.iso(created),
                ))
        approver = member.submits_to_email
        reports.append(Report(
            id=report_id, title=title, submitter_email=member.email, submitter_name=member.name, approver_email=approver,
            status=status, currency=world.currency, created_at=ctx.iso(created),
            submitted_at=ctx.iso(submitted) if submitted else None, approved_at=ctx.iso(approved) if approved else None,
            approved_by_email=approver if approved else None, reimbursed_at=ctx.iso(reimbursed) if reimbursed else None,
            reimbursement_reference=f"ACH-{reimbursed:%Y%m%d}-{report_id[-4:]}" if reimbursed else None,
        ))
        if violating and status == "open":
            # Rejected once already: back with the submitter, and the reason in its history.
            reason = write(ctx.rng(f"words:{report_id}"), _REJECTION, {"first": member.name.split()[0]})
            reports[-1] = dataclasses.replace(reports[-1], rejection_reason=reason)
            comments.append(ReportComment(id=ctx.new_id("rc"), report_id=report_id, author_email=approver, body=reason,
                                          created_at=ctx.iso(created + timedelta(days=1))))
    ctx.insert_many(reports)
    # Card purchases nobody has put on a report yet.
    for member in rng.sample(members, 5):
        day = today - timedelta(days=rng.randint(1, 10))
        merchant, amount, category, _, text, _ = _phone(rng, day)[1][0] if rng.random() < 0.5 else _supplies(rng, day)[1][0]
        expenses.append(Expense(
            id=ctx.new_id("exp"), spender_email=member.email, merchant=merchant, amount=amount, currency=world.currency,
            category_id=categories[category].id, date=day.isoformat(), description=_worded(words, text),
            created_at=ctx.iso(datetime(day.year, day.month, day.day, 20, tzinfo=timezone.utc)),
        ))
    ctx.insert_many(expenses)
    ctx.insert_many(receipts)
    ctx.insert_many(comments)


# -- policy and members ----------------------------------------------------------------------------


@service.tool("read", intent="check", phrases=("check the expense policy", "look up the rules for expense approval"))
def get_policy(ctx: ToolContext) -> Policy:
    """The company's expense policy: the receipt threshold, the expense admins, and the approval rules in words.
    Category limits are in list_categories."""
    return _policy(ctx)


@service.tool("read", intent="find", phrases=("check the limit for {query} expenses", "look up the expense categories"))
def list_categories(ctx: ToolContext, query: str | None = None) -> list[Category]:
    """The expense categories with their limit per expense and GL code.

    Args:
        query: Words to match against the category's name or description.
    """
    return ctx.query(Category).search(query).order_by("name").all()


@service.tool("read", intent="find", phrases=("look {query} up in expenses", "check who approves the expenses of {query}"))
def list_members(ctx: ToolContext, query: str | None = None, limit: Limit = 50, cursor: Cursor = None) -> Page[Member]:
    """List the colleagues on the expense policy: their role (admin or employee) and who their reports go to.

    Args:
        query: Words to match against the name, email or employee number.
        limit: Maximum number of members to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Member).search(query).order_by("name").page(limit, cursor)


# -- expenses --------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("find the expenses at {query}", "check the expenses {spender_email} has not reported yet"),
)
def search_expenses(
    ctx: ToolContext,
    query: str | None = None,
    spender_email: EmailAddress | None = None,
    report_id: ReportId | None = None,
    category_id: CategoryId | None = None,
    unreported: bool = False,
    date_from: Date | None = None,
    date_to: Date | None = None,
    min_amount: Money | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Expense]:
    """Search expenses by merchant or description, spender, report, category, date or amount, newest first.
    Each comes with its receipt id and its policy violations.

    Args:
        query: Words to match against the merchant or description.
        spender_email: Only expenses this colleague paid.
        report_id: Only expenses on this report.
        category_id: Only expenses of this category (see list_categories).
        unreported: Only expenses not on any report yet.
        date_from: Only expenses on or after this date.
        date_to: Only expenses on or before this date.
        min_amount: Only expenses of at least this amount.
        limit: Maximum number of expenses to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Expense).search(query).filter(report_id=report_id, category_id=category_id)
    if spender_email:
        q.where(spender_email=spender_email.strip().lower())
    if unreported:
        q.where(report_id=None)
    q.compare("date", ">=", date_from).compare("date", "<=", date_to).compare("amount", ">=", min_amount)
    return q.order_by("-date").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the expense {expense_id}",))
def get_expense(ctx: ToolContext, expense_id: ExpenseId) -> Expense:
    """Get one expense with its category, receipt id and policy violations.

    Args:
        expense_id: The expense's id, e.g. exp_0042.
    """
    return ctx.get(Expense, expense_id)


@service.tool(
    "write",
    intent="create",
    phrases=("log a {amount} expense at {merchant} for {spender_email}", "add the {merchant} purchase to expenses"),
)
def create_expense(
    ctx: ToolContext,
    spender_email: EmailAddress,
    merchant: ShortText,
    amount: Money,
    date: Date,
    category_id: CategoryId,
    description: Text | None = None,
    attendees: list[PersonName] | None = None,
    billable: bool = False,
    reimbursable: bool = True,
    report_id: ReportId | None = None,
) -> Expense:
    """Record an expense a colleague paid for, optionally straight onto one of their open reports.

    Args:
        spender_email: Who paid (see list_members).
        merchant: Where it was paid, e.g. Delta Air Lines.
        amount: The amount in the policy's currency (more than 0).
        date: The day it was paid (YYYY-MM-DD), not in the future.
        category_id: Its category (see list_categories).
        description: What it was for.
        attendees: For client entertainment: who attended.
        billable: Whether it is billed on to a customer.
        reimbursable: Whether the company pays it back (false for a company card).
        report_id: An open report of the same colleague to put it on.
    """
    member = _member(ctx, spender_email)
    if not merchant.strip():
        raise ToolError.invalid_argument("merchant must not be empty.")
    if amount <= 0:
        raise ToolError.invalid_argument("amount must be more than 0.")
    category = ctx.get(Category, category_id)
    report = _open_report(ctx, report_id) if report_id else None
    if report is not None and report.submitter_email != member.email:
        raise ToolError.invalid_argument(f"Report {report.id} belongs to {report.submitter_email}, not {member.email}.")
    names = [a.strip() for a in attendees or [] if a.strip()]
    return ctx.insert(Expense(
        id=ctx.new_id("exp"), report_id=report.id if report else None, spender_email=member.email,
        merchant=merchant.strip(), amount=round(amount, 2), currency=_policy(ctx).currency, category_id=category.id,
        date=_expense_date(ctx, date), description=description.strip() if description and description.strip() else None,
        attendees=names, billable=billable, reimbursable=reimbursable, created_at=ctx.now_iso,
    ))


@service.tool("write", intent="update", phrases=("change the amount of {expense_id} to {amount}", "recategorise {expense_id}"))
def update_expense(
    ctx: ToolContext,
    expense_id: ExpenseId,
    merchant: ShortText | None = None,
    amount: Money | None = None,
    date: Date | None = None,
    category_id: CategoryId | None = None,
    description: Text | None = None,
    billable: bool | None = None,
) -> Expense:
    """Change an expense that is unreported or on an open report; only what you pass changes.

    Args:
        expense_id: The expense.
        merchant: New merchant.
        amount: New amount (more than 0).
        date: New date (YYYY-MM-DD), not in the future.
        category_id: New category (see list_categories).
        description: New description.
        billable: Whether it is billed on to a customer.
    """
    expense = _editable_expense(ctx, expense_id)
    changes: dict[str, Any] = {}
    if merchant is not None:
        if not merchant.strip():
            raise ToolError.invalid_argument("merchant must not be empty.")
        changes["merchant"] = merchant.strip()
    if amount is not None:
        if amount <= 0:
            raise ToolError.invalid_argument("amount must be more than 0.")
        changes["amount"] = round(amount, 2)
    if date is not None:
        changes["date"] = _expense_date(ctx, date)
    if category_id is not None:
        changes["category_id"] = ctx.get(Category, category_id).id
    if description is not None:
        changes["description"] = description.strip() or None
    if billable is not None:
        changes["billable"] = billable
    changes = {k: v for k, v in changes.items() if getattr(expense, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field with a new value to change.")
    return ctx.update(expense, **changes)


@service.tool("write", intent="delete", phrases=("delete the expense {expense_id}", "remove {expense_id} from expenses"))
def delete_expense(ctx: ToolContext, expense_id: ExpenseId) -> Expense:
    """Delete an expense that is unreported or on an open report, with its receipt. Returns what was deleted.

    Args:
        expense_id: The expense.
    """
    expense = _editable_expense(ctx, expense_id)
    receipt = ctx.find(Receipt, expense_id=expense.id)
    if receipt is not None:
        ctx.delete(receipt)
    ctx.delete(expense)
    return expense


@service.tool("write", intent="link", phrases=("attach the receipt {file_name} to {expense_id}",))
def attach_receipt(ctx: ToolContext, expense_id: ExpenseId, file_name: FileName) -> Expense:
    """Attach a scanned receipt to an expense not yet approved (a missing receipt is a policy violation above the
    threshold). The scan reads the expense's merchant, amount and date. One receipt per expense.

    Args:
        expense_id: The expense.
        file_name: The receipt's file name, e.g. receipt-2025-03-02-delta.jpg.
    """
    expense = ctx.get(Expense, expense_id)
    if expense.report_id is not None:
        report = _report(ctx, expense.report_id)
        if report.status in ("approved", "reimbursed"):
            raise ToolError.invalid_state(f"Expense {expense_id} is on {report.status} report {report.id}; it is settled.")
    if ctx.exists(Receipt, expense_id=expense.id):
        raise ToolError.conflict(f"Expense {expense_id} already has a receipt.")
    ctx.insert(Receipt(id=ctx.new_id("rcpt"), expense_id=expense.id, file_name=file_name.strip(), merchant=expense.merchant,
                       amount=expense.amount, date=expense.date, uploaded_at=ctx.now_iso))
    return expense


# -- reports ---------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("check the expense reports waiting for {approver_email}", "find the expense reports of {submitter_email}"),
)
def list_reports(
    ctx: ToolContext,
    query: str | None = None,
    submitter_email: EmailAddress | None = None,
    approver_email: EmailAddress | None = None,
    status: ReportStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Report]:
    """List expense reports, newest first, by title, submitter, approver or status; each with its totals and how many
    expenses break the policy.

    Args:
        query: Words to match against the report's title.
        submitter_email: Only this colleague's reports.
        approver_email: Only reports that go to this manager.
        status: open, submitted, approved or reimbursed.
        limit: Maximum number of reports to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Report).search(query).filter(status=status)
    if submitter_email:
        q.where(submitter_email=submitter_email.strip().lower())
    if approver_email:
        q.where(approver_email=approver_email.strip().lower())
    return q.order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the expense report {report_id}",))
def get_report(ctx: ToolContext, report_id: ReportId) -> Report:
    """Get one report: status, submitter, approver, totals, violations, reimbursement and rejection.

    Args:
        report_id: The report's id, e.g. rep_0012.
    """
    return _report(ctx, report_id)


@service.tool(
    "write",
    intent="create",
    phrases=("start an expense report called {title} for {submitter_email}",),
)
def create_report(
    ctx: ToolContext, submitter_email: EmailAddress, title: Subject, expense_ids: list[ExpenseId] | None = None
) -> Report:
    """Start an open report for a colleague, optionally with some of their unreported expenses.

    Args:
        submitter_email: Whose report it is (see list_members).
        title: What the report covers, e.g. Customer visit: Brightline Foods.
        expense_ids: Their unreported expenses to put on it.
    """
    member = _member(ctx, submitter_email)
    report = _new_report(ctx, member, title)
    _claim(ctx, report, expense_ids or [])
    return report


@service.tool("write", intent="link", phrases=("put {expense_ids} on the report {report_id}",))
def add_expenses_to_report(ctx: ToolContext, report_id: ReportId, expense_ids: list[ExpenseId]) -> Report:
    """Put unreported expenses of the report's submitter on an open report.

    Args:
        report_id: The open report.
        expense_ids: The expenses (see search_expenses with unreported=true).
    """
    report = _open_report(ctx, report_id)
    if not expense_ids:
        raise ToolError.invalid_argument("Pass at least one expense id.")
    _claim(ctx, report, expense_ids)
    return report


@service.tool("write", intent="submit", phrases=("submit the expense report {report_id}", "send {report_id} for approval"))
def submit_report(ctx: ToolContext, report_id: ReportId) -> Report:
    """Submit an open report with at least one expense to the submitter's approver (their manager).

    Args:
        report_id: The open report.
    """
    report = _open_report(ctx, report_id)
    if not _report_expense_ids(ctx, [report.id])[report.id]:
        raise ToolError.invalid_state(f"Report {report_id} has no expenses; add some before submitting.")
    member = _member(ctx, report.submitter_email)
    return ctx.update(report, status="submitted", submitted_at=ctx.now_iso, approver_email=member.submits_to_email)


@service.event("report_submitted")
def report_submitted(
    ctx: ToolContext, submitter_email: str, title: str, expenses: list[dict[str, Any]], hours_ago: float = 1.0
) -> str:
    """A colleague submits a report from their phone ``hours_ago`` (a task's trigger): a submitted report with these
    expenses (merchant, amount, category name, date, description, receipt: whether a receipt was scanned, attendees,
    billable). Nothing beyond valid values is enforced: reports may break the policy, and deciding them is the work.
    Returns the report's id."""
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    at = ctx.days_from_now(-hours_ago / 24)
    if not 1 <= len(expenses) <= 50:
        raise ToolError.invalid_argument("A report needs 1 to 50 expenses.")
    try:
        items = [NewExpense.model_validate(e) for e in expenses]
    except ValueError as exc:
        raise ToolError.invalid_argument(f"An expense is not valid: {str(exc)[:300]}") from None
    member = _member(ctx, submitter_email)
    report = _new_report(ctx, member, title, submitted_at=at)
    for item in items:
        category = ctx.find(Category, name=item.category)
        if category is None:
            names = ", ".join(c.name for c in ctx.query(Category).order_by("name").all())
            raise ToolError.invalid_argument(f"category {item.category!r} is not one of: {names}.")
        try:
            day = date.fromisoformat(item.date).isoformat()
        except ValueError:
            raise ToolError.invalid_argument(f"date {item.date!r} is not a real date.") from None
        expense = ctx.insert(Expense(
            id=ctx.new_id("exp"), report_id=report.id, spender_email=member.email, merchant=item.merchant.strip(),
            amount=round(item.amount, 2), currency=report.currency, category_id=category.id, date=day,
            description=item.description, attendees=item.attendees, billable=item.billable, created_at=at,
        ))
        if item.receipt:
            ctx.insert(Receipt(id=ctx.new_id("rcpt"), expense_id=expense.id,
                               file_name=f"receipt-{day}-{''.join(ch for ch in item.merchant.lower() if ch.isalnum())[:20] or 'scan'}.jpg",
                               merchant=expense.merchant, amount=expense.amount, date=day, uploaded_at=at))
    return report.id


@service.tool("write", intent="approve", phrases=("approve the expense report {report_id}", "sign off on {report_id}"))
def approve_report(ctx: ToolContext, report_id: ReportId, comment: Text | None = None) -> Report:
    """Approve a submitted report. The submitter's manager (the report's approver) may approve any report; an expense
    admin only a report without policy violations; nobody their own report.

    Args:
        report_id: The submitted report.
        comment: A comment for the report's history.
    """
    report = _report(ctx, report_id)
    me = _decider(ctx, report, "approved")
    if comment and comment.strip():
        _comment(ctx, report, comment.strip())
    return ctx.update(report, status="approved", approved_at=ctx.now_iso, approved_by_email=me, rejection_reason=None)


@service.tool("write", intent="reject", phrases=("send {report_id} back because {reason}", "reject the expense report {report_id}"))
def reject_report(ctx: ToolContext, report_id: ReportId, reason: Text) -> Report:
    """Reject a submitted report: it goes back to the submitter as open, with the reason in its history.
    The submitter's manager or an expense admin can reject.

    Args:
        report_id: The submitted report.
        reason: What the submitter must fix (a missing receipt, an amount over the limit).
    """
    if not reason.strip():
        raise ToolError.invalid_argument("reason must not be empty: the submitter reads it.")
    report = _report(ctx, report_id)
    _decider(ctx, report, "rejected")
    _comment(ctx, report, reason.strip())
    return ctx.update(report, status="open", submitted_at=None, rejection_reason=reason.strip())


@service.tool("write", intent="pay", phrases=("reimburse the expense report {report_id}", "pay out {report_id}"))
def reimburse_report(ctx: ToolContext, report_id: ReportId) -> Report:
    """Reimburse an approved report by bank transfer; only expense admins can. The report gets its reimbursement
    reference.

    Args:
        report_id: The approved report.
    """
    report = _report(ctx, report_id)
    if report.status != "approved":
        raise ToolError.invalid_state(f"Report {report_id} is {report.status}; only approved reports are reimbursed.")
    if ctx.world.user.email not in _policy(ctx).admin_emails:
        raise ToolError.permission_denied("Only expense admins reimburse reports.")
    number = ctx.new_id("ach").split("_")[1]
    return ctx.update(report, status="reimbursed", reimbursed_at=ctx.now_iso,
                      reimbursement_reference=f"ACH-{ctx.now:%Y%m%d}-{number}")


@service.tool("write", intent="note", phrases=("comment on {report_id}: {body}", "ask about {report_id}: {body}"))
def add_report_comment(ctx: ToolContext, report_id: ReportId, body: Text) -> ReportComment:
    """Add a comment to a report's history (a question for the submitter, an explanation).

    Args:
        report_id: The report.
        body: The comment.
    """
    if not body.strip():
        raise ToolError.invalid_argument("body must not be empty.")
    return _comment(ctx, _report(ctx, report_id), body.strip())


@service.tool("read", intent="find", phrases=("read the history of {report_id}",))
def list_report_comments(ctx: ToolContext, report_id: ReportId, limit: Limit = 20, cursor: Cursor = None) -> Page[ReportComment]:
    """List a report's comments, oldest first.

    Args:
        report_id: The report.
        limit: Maximum number of comments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    report = _report(ctx, report_id)
    return ctx.query(ReportComment).where(report_id=report.id).order_by("created_at").page(limit, cursor)

