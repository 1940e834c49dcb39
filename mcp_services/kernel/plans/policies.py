"""The company's written rules and the tables people consult to apply them.

``docs`` states the rules as pages, ``sheets`` holds the tables, ``forms`` and ``sheets`` share the
event registrations, and the composer's archetypes read the same figures to know what a careful
colleague would do. Everything comes from here, so a page, a sheet row and a check never disagree:

- **Accounts** (the Account hierarchy sheet): every customer organisation of the World with its
  tier, region (from the state in its address), parent account and account manager. Enterprise
  accounts are managed by the sales lead; the others by their region's owner in the lead routing
  table; a subsidiary has its parent's tier and manager.
- **Price list** (the Price list sheet): every product of the World at its list price (the World's
  unit price) with the largest discount sales may give on it, and last year's tab.
- **Routing** (the Routing sheet): the support queue each kind of ticket goes to (who handles it, at
  which priority) and which salesperson owns each region's new leads.
- **Policies** (``DISCOUNT``, ``REFUNDS``, ``ESCALATION``, ``ONBOARDING``, ``KB_DRAFTS``,
  ``EVENTS``): the figures of each rule; ``Policies.pages`` are their texts, together with the time
  off, expense and hiring rules of ``plans.staff``, stated with staff's own figures.
- **Events**: the upcoming customer events with their capacity, registration form and guest list.

``policy_plan(world)`` is a pure function of the World, cached per seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache

from mcp_services.kernel.plans.staff import EXPENSE_CATEGORIES, TIME_OFF_POLICIES, staff_plan
from mcp_services.kernel.world import Organisation, Person, World, WorldShape

__all__ = [
    "ACCOUNT_TIERS",
    "DEMO_MINUTES",
    "DEMO_TITLE",
    "DISCOUNT",
    "ESCALATION",
    "EVENTS",
    "KB_DRAFTS",
    "ONBOARDING",
    "PRIORITIES",
    "REFUNDS",
    "REGIONS",
    "Account",
    "DiscountPolicy",
    "Event",
    "LeadRoute",
    "Policies",
    "PolicyPage",
    "PriceEntry",
    "Registration",
    "SupportQueue",
    "policy_plan",
    "raised",
    "region_of",
]

ACCOUNT_TIERS = ("Enterprise", "Growth", "Starter")
PRIORITIES = ("low", "normal", "high", "urgent")
REGIONS = ("West", "Midwest", "South", "Northeast")

#: US states (and territories) by sales region, as the census draws them.
_STATE_REGIONS: dict[str, str] = {
    **dict.fromkeys(
        (
            "AK",
            "AZ",
            "CA",
            "CO",
            "HI",
            "ID",
            "MT",
            "NM",
            "NV",
            "OR",
            "UT",
            "WA",
            "WY",
            "AS",
            "GU",
            "MP",
            "FM",
            "MH",
            "PW",
        ),
        "West",
    ),
    **dict.fromkeys(("IA", "IL", "IN", "KS", "MI", "MN", "MO", "ND", "NE", "OH", "SD", "WI"), "Midwest"),
    **dict.fromkeys(
        (
            "AL",
            "AR",
            "DC",
            "DE",
            "FL",
            "GA",
            "KY",
            "LA",
            "MD",
            "MS",
            "NC",
            "OK",
            "SC",
            "TN",
            "TX",
            "VA",
            "WV",
            "PR",
            "VI",
        ),
        "South",
    ),
    **dict.fromkeys(("CT", "MA", "ME", "NH", "NJ", "NY", "PA", "RI", "VT"), "Northeast"),
}
#: Which salesperson owns a region's new leads (and manages its accounts below Enterprise).
_REGION_OWNERS = {
    "West": "account executive",
    "Midwest": "account executive",
    "South": "account executive",
    "Northeast": "sales lead",
}


def region_of(org: Organisation) -> str:
    """The sales region of an organisation, from the state in its address ("..., VT 79393")."""
    state = org.address.rsplit(", ", 1)[-1].split(" ")[0]
    return _STATE_REGIONS.get(state, "West")


# -- the rules, as figures -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DiscountPolicy:
    """Who may give which discount: up to the product's limit, a few points more for Enterprise, else the sales lead."""

    #: Percentage points Enterprise-tier accounts may get on top of a product's max discount.
    enterprise_extra_points: int
    #: No discount above this, ever, whoever approves.
    ceiling: int
    approver_role: str

    def allowed(self, max_discount: int, tier: str) -> int:
        """The largest discount (percent) sales may give on its own to an account of ``tier``."""
        extra = self.enterprise_extra_points if tier == "Enterprise" else 0
        return min(self.ceiling, max_discount + extra) if max_discount > 0 else 0


DISCOUNT = DiscountPolicy(enterprise_extra_points=5, ceiling=30, approver_role="sales lead")

#: Largest discount (percent) per product category; categories at 0 are never discounted.
_MAX_DISCOUNT = {
    "subscriptions": 15,
    "services": 10,
    "usage": 20,
    "hardware": 5,
    "furniture": 10,
    "pantry": 0,
    "supplies": 0,
    "merchandise": 15,
}


@dataclass(frozen=True, slots=True)
class RefundPolicy:
    support_limit: float
    window_days: int
    approver_role: str


REFUNDS = RefundPolicy(support_limit=250.0, window_days=30, approver_role="finance lead")


@dataclass(frozen=True, slots=True)
class EscalationPolicy:
    #: Tickets from accounts of this tier go one priority level above their queue's default.
    raised_tier: str
    #: Who is copied when a customer says they will cancel (with their account manager).
    cancellation_copy_role: str


ESCALATION = EscalationPolicy(raised_tier="Enterprise", cancellation_copy_role="support lead")


@dataclass(frozen=True, slots=True)
class OnboardingPolicy:
    """The customer onboarding checklist after a deal is won (the one ``closed-won-handoff`` follows)."""

    kickoff_minutes: int
    kickoff_within_working_days: int
    lead_role: str
    kickoff_title: str  # with {company}


ONBOARDING = OnboardingPolicy(
    kickoff_minutes=45,
    kickoff_within_working_days=5,
    lead_role="product manager",
    kickoff_title="Kickoff: {company} onboarding",
)


@dataclass(frozen=True, slots=True)
class KbDraftPolicy:
    """How a help center article is drafted from a solved ticket."""

    label: str
    reviewer_role: str


KB_DRAFTS = KbDraftPolicy(label="from-ticket", reviewer_role="support lead")


@dataclass(frozen=True, slots=True)
class EventPolicy:
    registered: str
    waitlisted: str


EVENTS = EventPolicy(registered="Registered", waitlisted="Waitlist")

#: Minutes of a product demo booked from a demo request, and its title.
DEMO_MINUTES = 30
DEMO_TITLE = "Demo: {company}"


# -- the tables ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Account:
    """A customer organisation in the Account hierarchy sheet."""

    organisation_id: str
    company: str
    domain: str
    parent: str | None  # the parent account's company name, for a subsidiary
    tier: str
    region: str
    manager_name: str
    manager_email: str


@dataclass(frozen=True, slots=True)
class PriceEntry:
    """A product in the price list: this year's list price and discount limit, and last year's."""

    sku: str
    product: str
    category: str
    list_price: float
    max_discount: int
    last_year_price: float
    last_year_max_discount: int


@dataclass(frozen=True, slots=True)
class SupportQueue:
    """A row of the support routing table: the kind of ticket, who takes it, at which priority."""

    category: str
    covers: str
    assignee_name: str
    assignee_email: str
    priority: str
    escalation_email: str


@dataclass(frozen=True, slots=True)
class LeadRoute:
    region: str
    owner_name: str
    owner_email: str


@dataclass(frozen=True, slots=True)
class Registration:
    name: str
    email: str
    company: str
    status: str  # EVENTS.registered or EVENTS.waitlisted
    registered_at: str  # ISO 8601 UTC


@dataclass(frozen=True, slots=True)
class Event:
    """An upcoming customer event: its registration form (forms) and guest list (sheets) hold the registrations."""

    name: str
    starts_at: str  # ISO 8601 UTC
    venue: str
    address: str
    capacity: int
    registrations: tuple[Registration, ...]

    @property
    def day(self) -> str:
        return self.starts_at[:10]

    @property
    def form_title(self) -> str:
        return f"Registration: {self.name}"

    @property
    def guest_list_title(self) -> str:
        return f"Guest list: {self.name}"

    @property
    def registered(self) -> int:
        return sum(1 for r in self.registrations if r.status == EVENTS.registered)

    @property
    def is_full(self) -> bool:
        return self.registered >= self.capacity


@dataclass(frozen=True, slots=True)
class PolicyPage:
    """A page of the company wiki that states a rule: its space, title, text, labels and owner."""

    space: str  # the space's key
    title: str
    body: str
    labels: tuple[str, ...]
    owner_email: str
    updated_days_ago: int


@dataclass(frozen=True, slots=True)
class Policies:
    accounts: tuple[Account, ...]
    price_list: tuple[PriceEntry, ...]
    queues: tuple[SupportQueue, ...]
    lead_routes: tuple[LeadRoute, ...]
    events: tuple[Event, ...]
    pages: tuple[PolicyPage, ...]
    year: int

    def account(self, domain: str) -> Account:
        for account in self.accounts:
            if account.domain == domain:
                return account
        raise KeyError(domain)

    def account_of(self, person: Person) -> Account:
        return self.account(person.email.split("@", 1)[1])

    def price(self, sku: str) -> PriceEntry:
        for entry in self.price_list:
            if entry.sku == sku:
                return entry
        raise KeyError(sku)

    def queue(self, category: str) -> SupportQueue:
        for queue in self.queues:
            if queue.category == category:
                return queue
        raise KeyError(category)

    def page(self, title: str) -> PolicyPage:
        for page in self.pages:
            if page.title == title:
                return page
        raise KeyError(title)

    def route(self, region: str) -> LeadRoute:
        for route in self.lead_routes:
            if route.region == region:
                return route
        raise KeyError(region)


def raised(priority: str) -> str:
    """One priority level up (urgent stays urgent)."""
    return PRIORITIES[min(PRIORITIES.index(priority) + 1, len(PRIORITIES) - 1)]


def policy_plan(world: World) -> Policies:
    """The rules and tables of ``world`` (a pure function of its seed, cached per seed)."""
    return _build(*world.key)


#: (category, what it covers, the team role that takes it, default priority, the role it escalates to)
_QUEUES: tuple[tuple[str, str, str, str, str], ...] = (
    ("Billing", "Charges, refunds, invoices, VAT and failed payments", "accountant", "normal", "finance lead"),
    (
        "Login and access",
        "Password resets, login loops, single sign-on, locked accounts",
        "support agent",
        "high",
        "support lead",
    ),
    (
        "Data and exports",
        "CSV exports, reports and dashboards that fail or show wrong numbers",
        "support lead",
        "high",
        "engineering lead",
    ),
    (
        "API and integrations",
        "API errors, rate limits (HTTP 429), webhooks that stop delivering",
        "engineering lead",
        "high",
        "engineering lead",
    ),
    (
        "Account and users",
        "Adding users or admins, seats, plan upgrades and cancellations",
        "support agent",
        "normal",
        "support lead",
    ),
    (
        "Orders and shipping",
        "Late, lost or damaged deliveries of hardware and furniture",
        "office manager",
        "normal",
        "operations manager",
    ),
    (
        "How-to questions",
        "Questions about how to use a feature, with no error involved",
        "support agent",
        "normal",
        "support lead",
    ),
)

_EVENT_NAMES = ("Customer roundtable", "Product breakfast")


def _text_pages(world: World, accounts_owner: Person, by_role: dict[str, Person], year: int) -> list[PolicyPage]:
    staff = staff_plan(world)
    home = world.home.name
    cur = world.currency
    sales, finance, support = by_role["sales lead"], by_role["finance lead"], by_role["support lead"]
    ops, pm = by_role["operations manager"], by_role[ONBOARDING.lead_role]
    pages: list[PolicyPage] = []

    time_off = "\n\n".join(f"## {p.name}\n\n{p.rules}" for p in TIME_OFF_POLICIES)
    pages.append(
        PolicyPage(
            "PPL",
            "Time off policy",
            f"How time off works at {home}. Balances and requests live in HR; days are working days (Monday to "
            f"Friday) and a request lies within one calendar year.\n\n{time_off}",
            ("policy", "time-off", "hr"),
            ops.email,
            60,
        )
    )
    rows = "\n".join(f"| {c.name} | {c.limit:.2f} {cur} | {c.gl_code} | {c.description} |" for c in EXPENSE_CATEGORIES)
    pages.append(
        PolicyPage(
            "PPL",
            "Expense policy",
            f"{staff.expense_rules}\n\n"
            f"| Category | Limit per expense | GL code | What it covers |\n| --- | --- | --- | --- |\n{rows}",
            ("policy", "expenses", "finance"),
            finance.email,
            45,
        )
    )
    pages.append(PolicyPage("PPL", "Hiring rules", staff.hiring_rules, ("policy", "hiring", "hr"), ops.email, 90))
    pages.append(
        PolicyPage(
            "SAL",
            "Discount approval policy",
            f'Discounts on the {year} price list (the Price list spreadsheet, tab "{year} prices"; older tabs are '
            "kept for reference only).\n\n"
            "- Every product has a **Max discount (%)** in the price list. Sales may offer up to that discount on "
            "its own.\n"
            f"- Accounts of the **Enterprise** tier (see the Account hierarchy spreadsheet) may get up to "
            f"{DISCOUNT.enterprise_extra_points} percentage points more than the product's max discount.\n"
            "- Products with a max discount of 0 are never discounted.\n"
            f"- Anything above that needs the approval of the {DISCOUNT.approver_role} ({sales.name}, {sales.email}) "
            "before it is offered: forward the customer's request to them and tell the customer it is being reviewed. "
            "Never promise, quote or log a discount above the limit yourself.\n"
            f"- No discount above {DISCOUNT.ceiling}% is ever given.\n"
            "- Once a discount is agreed, log the deal in the CRM at the discounted total: list price times quantity, "
            f"less the discount, in {cur}.",
            ("policy", "pricing", "sales"),
            sales.email,
            35,
        )
    )
    pages.append(
        PolicyPage(
            "POL",
            "Refund policy",
            f"Refunds of charges for our subscriptions and services. Amounts in {cur}.\n\n"
            f"- Customers can ask for a refund within {REFUNDS.window_days} days of the charge.\n"
            f"- Support may refund up to {REFUNDS.support_limit:.2f} {cur} on its own.\n"
            f"- Anything above {REFUNDS.support_limit:.2f} {cur} needs the {REFUNDS.approver_role}'s approval first "
            f"({finance.name}, {finance.email}): forward the request to them and tell the customer it is being "
            "reviewed. Do not refund it yourself.\n"
            "- Duplicate charges are refunded in full, whatever the amount.\n"
            "- Refunds go back to the original payment method and never exceed what was charged.",
            ("policy", "refunds", "finance"),
            finance.email,
            120,
        )
    )
    pages.append(
        PolicyPage(
            "SUP",
            "Ticket escalation and routing rules",
            "How new tickets are routed and escalated.\n\n"
            '- Every new ticket goes to the queue of its kind in the **Routing** spreadsheet (tab "Support queues"): '
            "assign it to that queue's assignee at the queue's default priority.\n"
            f"- Tickets from **{ESCALATION.raised_tier}**-tier accounts (Account hierarchy spreadsheet) go one "
            "priority "
            "level higher than the queue's default: low becomes normal, normal becomes high, high becomes urgent.\n"
            "- A customer who says they will cancel or not renew goes to their account manager (Account hierarchy "
            f"spreadsheet), with the {ESCALATION.cancellation_copy_role} ({support.name}) in copy.\n"
            "- Urgent tickets are also posted in #support so that someone picks them up within the hour.",
            ("policy", "routing", "support"),
            support.email,
            25,
        )
    )
    pages.append(
        PolicyPage(
            "SAL",
            "Lead handling rules",
            "What happens when someone asks for a demo.\n\n"
            "- Add them to the CRM as a contact at their company, in the lifecycle stage **lead**.\n"
            "- Their owner is the company's account manager in the Account hierarchy spreadsheet; for a company that "
            "is "
            'not in it, the owner of its region in the Routing spreadsheet (tab "Lead routing").\n'
            f"- Book a {DEMO_MINUTES}-minute video call with them and their owner at the time they asked for, titled "
            f'"{DEMO_TITLE.format(company="<their company>")}".',
            ("policy", "leads", "sales"),
            sales.email,
            50,
        )
    )
    pages.append(
        PolicyPage(
            "SAL",
            "Customer onboarding checklist",
            f"Within {ONBOARDING.kickoff_within_working_days} working days of a deal being won:\n\n"
            "1. Mark the deal won in the CRM.\n"
            f"2. Book a {ONBOARDING.kickoff_minutes}-minute video kickoff titled "
            f'"{ONBOARDING.kickoff_title.format(company="<Company>")}" with the customer\'s primary contact and our '
            f"onboarding lead, the {ONBOARDING.lead_role} ({pm.name}).\n"
            f"3. Email the customer a welcome with {pm.first_name} in copy.\n"
            "4. Tell the seller in the thread where the win was announced that the handoff is done.",
            ("checklist", "onboarding", "sales"),
            pm.email,
            70,
        )
    )
    pages.append(
        PolicyPage(
            "SUP",
            "Help center writing guidelines",
            "How we write help center articles.\n\n"
            '- One task per article, titled as the customer would search for it ("How to ...").\n'
            "- New articles start as drafts in the section of their topic; never publish your own draft.\n"
            f"- An article written from a solved ticket carries the label **{KB_DRAFTS.label}**.\n"
            f"- The {KB_DRAFTS.reviewer_role} reviews and publishes drafts every Friday.\n"
            "- When you answer a customer, link the published article rather than pasting its text.",
            ("guidelines", "help-center", "support"),
            support.email,
            80,
        )
    )
    pages.append(
        PolicyPage(
            "MKT",
            "Event registration rules",
            "Registrations for our customer events come in through the event's registration form and are kept in its "
            "guest list spreadsheet.\n\n"
            "- Each event's capacity is on its page in this space.\n"
            f"- Add every new registrant to the guest list with the status **{EVENTS.registered}** while places are "
            f"left (count the rows with that status), otherwise with the status **{EVENTS.waitlisted}**.\n"
            "- Confirm to the registrant by email which of the two they are.",
            ("policy", "events", "marketing"),
            by_role["office manager"].email,
            40,
        )
    )
    pages.append(
        PolicyPage(
            "SAL",
            "Account hierarchy: how to read it",
            "The Account hierarchy spreadsheet lists every customer account with its tier (Enterprise, Growth or "
            "Starter), its region, its parent account for subsidiaries, and its account manager. Enterprise accounts "
            f"are managed by {sales.name}; the others by the owner of their region. Subsidiaries share their parent's "
            f"tier and account manager. {accounts_owner.name} keeps it up to date.",
            ("reference", "accounts", "sales"),
            accounts_owner.email,
            100,
        )
    )
    return pages


_NOISE_PAGES: tuple[tuple[str, str, str, tuple[str, ...], str], ...] = (
    (
        "OPS",
        "Office guide",
        (
            "Wi-Fi: ask the office manager for this month's guest password. Visitors sign in at reception and wear a "
            "badge. The kitchen is cleaned on Fridays: take your mugs home on Thursday evening."
        ),
        ("office",),
        "office manager",
    ),
    (
        "OPS",
        "Vendor list",
        (
            "Facilities, catering and IT vendors we work with, with who to call. Purchases above 1,000.00 need a "
            "purchase "
            "order from Operations."
        ),
        ("vendors", "operations"),
        "operations manager",
    ),
    (
        "ENG",
        "Release process",
        (
            "We release on Tuesdays and Thursdays. Every release needs a green build, a changelog entry and a rollback "
            "plan. Hotfixes go out any day with the engineering lead's approval."
        ),
        ("engineering", "releases"),
        "engineering lead",
    ),
    (
        "ENG",
        "On-call handbook",
        (
            "On-call engineers answer pages within 15 minutes, post status in #incidents and write a short review "
            "after "
            "every incident that affected customers."
        ),
        ("engineering", "on-call"),
        "engineering lead",
    ),
    (
        "SUP",
        "Support macros",
        (
            "Saved replies for common questions: refund received, password reset steps, invoice copy sent, delivery "
            "update. Personalise the greeting and never paste internal notes into a reply."
        ),
        ("support", "macros"),
        "support lead",
    ),
    (
        "SAL",
        "Q3 pipeline review notes",
        (
            "Notes from the pipeline review: focus on expansion deals with existing customers, clean up stale "
            "qualification deals older than 90 days, and log every lost reason."
        ),
        ("sales", "meeting-notes"),
        "sales lead",
    ),
)


@lru_cache(maxsize=64)
def _build(seed: int, shape: WorldShape) -> Policies:
    world = World.from_seed(seed, shape)
    rng = random.Random(f"{seed}:plans.policies")
    by_role = {p.job_title: p for p in world.team}
    year = world.now_dt.year
    orgs = list(world.organisations[1:])

    routes = tuple(
        LeadRoute(region, by_role[_REGION_OWNERS[region]].name, by_role[_REGION_OWNERS[region]].email)
        for region in REGIONS
    )
    owner_of = {r.region: r for r in routes}
    # Four in fifteen accounts are Enterprise and six Growth (in any world's size), the rest Starter.
    enterprise, growth = max(1, round(len(orgs) * 4 / 15)), max(1, round(len(orgs) * 6 / 15))
    tiers = [ACCOUNT_TIERS[0]] * enterprise + [ACCOUNT_TIERS[1]] * growth + [ACCOUNT_TIERS[2]] * (len(orgs) - enterprise - growth)
    rng.shuffle(tiers)
    tier_of = {org.id: tier for org, tier in zip(orgs, tiers, strict=True)}
    # A few accounts are subsidiaries of another (never of a subsidiary): they share its tier and manager.
    parents = [o for o in orgs if tier_of[o.id] != "Starter"]
    children = rng.sample([o for o in orgs if o not in parents], min(3, len(orgs) - len(parents)))
    parent_of = {c.id: rng.choice(parents) for c in children}
    sales = by_role[DISCOUNT.approver_role]

    def manager(org: Organisation) -> Person:
        if tier_of[org.id] == "Enterprise":
            return sales
        route = owner_of[region_of(org)]
        return next(p for p in world.team if p.email == route.owner_email)

    accounts = []
    for org in orgs:
        top = parent_of.get(org.id, org)
        boss = manager(top)
        accounts.append(
            Account(
                organisation_id=org.id,
                company=org.name,
                domain=org.domain,
                parent=parent_of[org.id].name if org.id in parent_of else None,
                tier=tier_of[top.id],
                region=region_of(org),
                manager_name=boss.name,
                manager_email=boss.email,
            )
        )

    price_list = tuple(
        PriceEntry(
            sku=p.sku,
            product=p.name,
            category=p.category,
            list_price=p.unit_price,
            max_discount=_MAX_DISCOUNT.get(p.category, 0),
            last_year_price=round(p.unit_price * 0.92, 2),
            last_year_max_discount=max(0, _MAX_DISCOUNT.get(p.category, 0) - 5),
        )
        for p in world.products
    )
    queues = tuple(
        SupportQueue(category, covers, by_role[role].name, by_role[role].email, priority, by_role[escalate].email)
        for category, covers, role, priority, escalate in _QUEUES
    )

    venues = [p for p in world.places if p.kind == "conference venue"] or list(world.places)
    taken: set[str] = set()
    events = []
    for n, name in enumerate(_EVENT_NAMES):
        venue = venues[n % len(venues)]
        start = (world.now_dt + timedelta(days=12 + 14 * n)).replace(hour=16 if n == 0 else 8, minute=0, second=0)
        while start.weekday() >= 5:
            start += timedelta(days=1)
        capacity = (12, 20)[n]
        # The first event is full already; the second has places left.
        count = capacity if n == 0 else rng.randint(7, 11)
        people = rng.sample([p for p in world.customers if p.email not in taken], count)
        taken |= {p.email for p in people}
        registrations = tuple(
            Registration(
                name=p.name,
                email=p.email,
                company=world.organisation(p.organisation_id).name,
                status=EVENTS.registered,
                registered_at=(
                    world.now_dt
                    - timedelta(days=rng.randint(1, 20), hours=rng.randint(0, 9), minutes=rng.choice((0, 15, 30, 45)))
                ).strftime("%Y-%m-%dT%H:%M:%SZ"),
            )
            for p in people
        )
        events.append(
            Event(
                name=f"{name}, {venue.city}",
                starts_at=start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                venue=venue.name,
                address=venue.address,
                capacity=capacity,
                registrations=tuple(sorted(registrations, key=lambda r: r.registered_at)),
            )
        )

    accounts_owner = by_role["sales lead"]
    pages = _text_pages(world, accounts_owner, by_role, year)
    for event in events:
        pages.append(
            PolicyPage(
                "MKT",
                event.name,
                f"{event.name} on {event.day} at {event.starts_at[11:16]} UTC, at {event.venue} ({event.address}).\n\n"
                f'- Capacity: {event.capacity} guests.\n- Registration form: "{event.form_title}".\n'
                f'- Guest list: the spreadsheet "{event.guest_list_title}".',
                ("event", "marketing"),
                by_role["office manager"].email,
                15,
            )
        )
    for space, title, body, labels, role in _NOISE_PAGES:
        pages.append(PolicyPage(space, title, body, labels, by_role[role].email, rng.randint(10, 300)))
    return Policies(
        accounts=tuple(accounts),
        price_list=price_list,
        queues=queues,
        lead_routes=routes,
        events=tuple(events),
        pages=tuple(pages),
        year=year,
    )
