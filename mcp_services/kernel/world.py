"""The World: one seeded universe that every service of an episode seeds from.

The same person is the CRM contact, the mailbox correspondent and the calendar attendee, because
each service draws its rows from the same ``World``. Worlds are immutable and a pure function of
their seed: the same seed gives the same world, byte for byte (see ``World.to_json``).

Records that several services hold come from the world's business plan (``World.plan``): the sales
invoices of each customer organisation, the card charges that pay them and the documents the
company keeps about them. Accounting books the invoices, payments holds their charges and files
keeps their PDFs, so an invoice number read in one service is the same invoice, with the same
amount, in the others.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any, Literal, TypeVar

from faker import Faker

from mcp_services.kernel.prose import write

N_PRODUCTS = 30
N_PLACES = 10

#: Roles held by the people of the home organisation, the company the agent works for.
TEAM_ROLES = (
    "operations manager",
    "finance lead",
    "support lead",
    "sales lead",
    "engineering lead",
    "office manager",
    "account executive",
    "support agent",
    "accountant",
    "product manager",
)

INDUSTRIES = (
    "food and beverage", "logistics", "healthcare", "retail", "software", "construction",
    "education", "manufacturing", "hospitality", "media", "legal services", "energy",
)

_PRODUCT_CATALOG = (
    ("Standard plan (monthly)", "subscriptions", 49.0),
    ("Pro plan (monthly)", "subscriptions", 129.0),
    ("Enterprise plan (monthly)", "subscriptions", 899.0),
    ("Onboarding workshop", "services", 1500.0),
    ("Priority support add-on", "subscriptions", 199.0),
    ("Data migration", "services", 2400.0),
    ("Ergonomic office chair", "furniture", 329.0),
    ("Standing desk", "furniture", 649.0),
    ("27-inch monitor", "hardware", 279.0),
    ("Wireless keyboard", "hardware", 59.0),
    ("Noise-cancelling headset", "hardware", 189.0),
    ("Laptop dock", "hardware", 219.0),
    ("Espresso beans 1kg", "pantry", 34.5),
    ("Oat milk case", "pantry", 27.0),
    ("Printer paper box", "supplies", 42.0),
    ("Whiteboard markers", "supplies", 12.5),
    ("Conference room booking", "services", 80.0),
    ("Team offsite package", "services", 5200.0),
    ("Security audit", "services", 7800.0),
    ("API usage block (1M calls)", "usage", 300.0),
    ("Storage block (1 TB)", "usage", 95.0),
    ("SMS bundle (10k)", "usage", 150.0),
    ("Training seat", "services", 450.0),
    ("Hardware warranty (2y)", "services", 120.0),
    ("Branded hoodie", "merchandise", 45.0),
    ("Sticker pack", "merchandise", 8.0),
    ("Desk lamp", "furniture", 75.0),
    ("USB-C cable 2m", "hardware", 15.0),
    ("Webcam HD", "hardware", 99.0),
    ("Catering lunch (per person)", "services", 22.0),
)

_PLACE_KINDS = ("office", "meeting room", "cafe", "coworking space", "conference venue")


class WorldShapeError(ValueError):
    """A world shape that cannot be built: the message names the knob and the values it takes."""


#: The bounds of each knob of a ``WorldShape`` (inclusive).
SHAPE_BOUNDS: Mapping[str, tuple[int, int]] = {"organisations": (6, 2000), "months": (2, 36)}
#: People per customer organisation a world needs at least (a billing contact and a colleague) and at most.
PEOPLE_PER_ORGANISATION = (2, 40)
#: Customers' people a world needs at least: the plans fill two events and a marketing list with them.
MIN_CUSTOMER_PEOPLE = 30


@dataclass(frozen=True, slots=True)
class WorldShape:
    """How big a world is and what its home company does: the knobs of ``World.from_seed``.

    ``organisations`` counts the home company and its customers; ``people`` the team (one person per
    role of ``TEAM_ROLES``) and the customers' people; ``months`` how far back the books go (invoices,
    bills, payments, revenue reports); ``industry`` the home company's industry (one of ``INDUSTRIES``;
    None: drawn from the seed). The defaults are the world every task was composed on so far.
    """

    organisations: int = 16
    people: int = 72
    months: int = 8
    industry: str | None = None

    def __post_init__(self) -> None:
        for knob, (low, high) in SHAPE_BOUNDS.items():
            value = getattr(self, knob)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise WorldShapeError(f"world shape: {knob} must be a whole number from {low} to {high}, not {value!r}")
        customers = self.organisations - 1
        team = len(TEAM_ROLES)
        low = team + max(PEOPLE_PER_ORGANISATION[0] * customers, MIN_CUSTOMER_PEOPLE)
        high = team + PEOPLE_PER_ORGANISATION[1] * customers
        if isinstance(self.people, bool) or not isinstance(self.people, int) or not low <= self.people <= high:
            raise WorldShapeError(
                f"world shape: people must be a whole number from {low} to {high} for {self.organisations} "
                f"organisations (the {team} colleagues, then {PEOPLE_PER_ORGANISATION[0]} to "
                f"{PEOPLE_PER_ORGANISATION[1]} people per customer organisation, {MIN_CUSTOMER_PEOPLE} at least), "
                f"not {self.people!r}"
            )
        if self.industry is not None and self.industry not in INDUSTRIES:
            raise WorldShapeError(
                f"world shape: industry must be one of {', '.join(INDUSTRIES)} (or left out), not {self.industry!r}"
            )

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_SHAPE

    @property
    def history_days(self) -> int:
        """How far back the books go, in days (30 a month)."""
        return self.months * 30

    @staticmethod
    def varied(seed: int) -> WorldShape:
        """A shape for world ``seed`` of a large task set: industries in turn, sizes drawn from the seed.

        Consecutive seeds meet different kinds of company (every industry once in ``len(INDUSTRIES)``
        seeds), of different sizes and histories; the same seed always gives the same shape.
        """
        rng = random.Random(f"{seed}:shape")
        organisations = rng.choice((10, 12, 16, 16, 20, 24, 32))
        return WorldShape(
            organisations=organisations,
            people=len(TEAM_ROLES) + max(MIN_CUSTOMER_PEOPLE, (organisations - 1) * rng.choice((3, 4, 4, 5))),
            months=rng.choice((6, 8, 8, 10, 12)),
            industry=INDUSTRIES[seed % len(INDUSTRIES)],
        )

    @staticmethod
    def sized(size: str) -> WorldShape:
        """A named size: ``small``, ``default`` or ``large`` (500 organisations)."""
        try:
            return SIZES[size]
        except KeyError:
            raise WorldShapeError(f"world size must be one of {', '.join(SIZES)}, not {size!r}") from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> WorldShape:
        """A shape from its ``to_dict`` form; unknown keys are a ``WorldShapeError`` naming them."""
        unknown = sorted(set(data) - set(WorldShape.__dataclass_fields__))
        if unknown:
            raise WorldShapeError(
                f"world shape: unknown knob(s) {', '.join(unknown)}; the knobs are organisations, people, months, industry"
            )
        return WorldShape(**dict(data))


DEFAULT_SHAPE = WorldShape()


def shape_text(shape: WorldShape) -> str:
    """A shape as canonical JSON (what a store records about the world it was seeded from)."""
    return json.dumps(shape.to_dict(), sort_keys=True, separators=(",", ":"))
#: The named sizes of ``WorldShape.sized`` (and ``mcp-services world check --size``).
SIZES: Mapping[str, WorldShape] = {
    "small": WorldShape(organisations=8, people=len(TEAM_ROLES) + 7 * 5, months=4),
    "default": DEFAULT_SHAPE,
    "large": WorldShape(organisations=500, people=len(TEAM_ROLES) + 499 * 4, months=12),
}


@dataclass(frozen=True, slots=True)
class Organisation:
    id: str
    name: str
    domain: str
    industry: str
    address: str
    city: str
    country: str
    phone: str
    website: str


@dataclass(frozen=True, slots=True)
class Person:
    id: str
    first_name: str
    last_name: str
    name: str
    email: str
    phone: str
    username: str
    organisation_id: str
    job_title: str
    city: str
    address: str


@dataclass(frozen=True, slots=True)
class Product:
    sku: str
    name: str
    category: str
    unit_price: float
    currency: str


@dataclass(frozen=True, slots=True)
class Place:
    id: str
    name: str
    kind: str
    address: str
    city: str


@dataclass(frozen=True, slots=True)
class World:
    """People, organisations, products, places, the home team and a frozen clock."""

    seed: int
    shape: WorldShape
    now: str  # the frozen clock, ISO 8601 UTC
    currency: str
    home_organisation_id: str
    organisations: tuple[Organisation, ...]
    people: tuple[Person, ...]
    products: tuple[Product, ...]
    places: tuple[Place, ...]

    @staticmethod
    def from_seed(seed: int, shape: WorldShape | None = None) -> World:
        """The world of ``seed`` and ``shape`` (default: ``WorldShape()``); cached: worlds are immutable."""
        return _build_world(int(seed), shape or DEFAULT_SHAPE)

    @property
    def key(self) -> tuple[int, WorldShape]:
        """What the world is a function of: its seed and its shape (plans built from it cache on this)."""
        return (self.seed, self.shape)

    def scaled(self, count: int) -> int:
        """``count`` things of a default-sized world, for this world's number of customer organisations."""
        return max(1, round(count * (len(self.organisations) - 1) / (DEFAULT_SHAPE.organisations - 1)))

    @property
    def now_dt(self) -> datetime:
        return _moment(self.now)

    @property
    def home(self) -> Organisation:
        return self.organisation(self.home_organisation_id)

    @property
    def team(self) -> tuple[Person, ...]:
        """The colleagues at the home organisation; ``team[0]`` is the user the agent acts for."""
        return _split(self)[0]

    @property
    def user(self) -> Person:
        return self.team[0]

    @property
    def customers(self) -> tuple[Person, ...]:
        """People outside the home organisation."""
        return _split(self)[1]

    def organisation(self, organisation_id: str) -> Organisation:
        for org in self.organisations:
            if org.id == organisation_id:
                return org
        raise KeyError(organisation_id)

    def person(self, person_id: str) -> Person:
        for person in self.people:
            if person.id == person_id:
                return person
        raise KeyError(person_id)

    def team_member(self, role: str) -> Person:
        for person in self.team:
            if person.job_title == role:
                return person
        raise KeyError(role)

    def rng(self, purpose: str) -> random.Random:
        """A private random stream for one purpose (e.g. ``"crm.seed"``), stable across runs."""
        return random.Random(f"{self.seed}:{purpose}" if self.shape.is_default else f"{self.seed}:{self.shape}:{purpose}")

    @property
    def plan(self) -> BusinessPlan:
        """The business records several services share (built once per world, then cached)."""
        return business_plan(self)

    def people_of(self, organisation_id: str) -> tuple[Person, ...]:
        """The people who work at an organisation, in world order."""
        return tuple(p for p in self.people if p.organisation_id == organisation_id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@lru_cache(maxsize=64)
def _moment(iso: str) -> datetime:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


_SPLITS: dict[tuple[int, WorldShape], tuple[tuple[Person, ...], tuple[Person, ...]]] = {}


def _split(world: World) -> tuple[tuple[Person, ...], tuple[Person, ...]]:
    """(team, customers) of a world, computed once per world (worlds are immutable, a function of the key)."""
    key = world.key
    found = _SPLITS.get(key)
    if found is None:
        home = world.home_organisation_id
        found = (
            tuple(p for p in world.people if p.organisation_id == home),
            tuple(p for p in world.people if p.organisation_id != home),
        )
        if len(_SPLITS) >= 64:
            _SPLITS.clear()
        _SPLITS[key] = found
    return found


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _phone(rng: random.Random) -> str:
    return f"+1{rng.randint(201, 989)}555{rng.randint(1000, 9999)}"


@lru_cache(maxsize=64)
def _build_world(seed: int, shape: WorldShape) -> World:
    fake = Faker("en_US")
    fake.seed_instance(seed if shape.is_default else f"{seed}:{shape}")
    rng = random.Random(f"{seed}:world" if shape.is_default else f"{seed}:{shape}:world")
    start = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 300))
    now = start.replace(hour=rng.choice((8, 9, 10, 11, 13, 14)), minute=rng.choice((0, 15, 30, 45)))

    organisations: list[Organisation] = []
    used_domains: set[str] = set()
    while len(organisations) < shape.organisations:
        name = fake.company().replace(",", "")
        domain = f"{_slug(name)[:24]}.example"
        if domain in used_domains:
            continue
        used_domains.add(domain)
        city = fake.city()
        industry = rng.choice(INDUSTRIES)
        if not organisations and shape.industry is not None:
            industry = shape.industry  # the home company's
        organisations.append(
            Organisation(
                id=f"org_{len(organisations) + 1:04d}",
                name=name,
                domain=domain,
                industry=industry,
                address=f"{fake.street_address()}, {city}, {fake.state_abbr()} {fake.zipcode()}",
                city=city,
                country="US",
                phone=_phone(rng),
                website=f"https://www.{domain}",
            )
        )

    people: list[Person] = []
    used_emails: set[str] = set()
    home = organisations[0]
    while len(people) < shape.people:
        first, last = fake.first_name(), fake.last_name()
        index = len(people)
        if index < len(TEAM_ROLES):
            org, title = home, TEAM_ROLES[index]
        else:
            org, title = organisations[1 + (index % (shape.organisations - 1))], fake.job()
        email = f"{_slug(first)}.{_slug(last)}@{org.domain}"
        if email in used_emails:
            continue
        used_emails.add(email)
        city = org.city if rng.random() < 0.7 else fake.city()
        people.append(
            Person(
                id=f"per_{index + 1:04d}",
                first_name=first,
                last_name=last,
                name=f"{first} {last}",
                email=email,
                phone=_phone(rng),
                username=f"{_slug(first)}.{_slug(last)}",
                organisation_id=org.id,
                job_title=title[:80],
                city=city,
                address=f"{fake.street_address()}, {city}, {fake.state_abbr()} {fake.zipcode()}",
            )
        )

    products = tuple(
        Product(
            sku=f"SKU-{_slug(category)[:3].upper()}-{100 + i}",
            name=name,
            category=category,
            unit_price=price,
            currency="USD",
        )
        for i, (name, category, price) in enumerate(_PRODUCT_CATALOG[:N_PRODUCTS])
    )

    places: list[Place] = []
    for i in range(N_PLACES):
        kind = _PLACE_KINDS[i % len(_PLACE_KINDS)]
        city = home.city if kind in ("office", "meeting room") else fake.city()
        label = fake.last_name() if kind != "office" else home.name
        places.append(
            Place(
                id=f"pl_{i + 1:04d}",
                name=f"{label} {kind.title()}" if kind != "meeting room" else f"{fake.color_name()} Room",
                kind=kind,
                address=f"{fake.street_address()}, {city}",
                city=city,
            )
        )

    return World(
        seed=seed,
        shape=shape,
        now=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        currency="USD",
        home_organisation_id=home.id,
        organisations=tuple(organisations),
        people=tuple(people),
        products=products,
        places=tuple(places),
    )


# -- the business plan: records that several services share -------------------------------------------

#: Sales invoices in the books of a default-sized world, oldest first (INV-0001 is the oldest).
N_PLANNED_INVOICES = 120
#: Organisations that also sell to the home organisation (they send it bills), in a default-sized world.
N_SUPPLIERS = 5

InvoiceStatus = Literal["DRAFT", "AUTHORISED", "PAID", "VOIDED"]
PaymentMethod = Literal["bank_transfer", "card", "cheque"]
CardOutcome = Literal["none", "paid", "failed", "unrecorded"]
DocumentKind = Literal["invoice", "contract", "proposal", "revenue_report"]

T = TypeVar("T")

# Typical quantities per product category, so totals look like real orders.
QUANTITY_RANGE: Mapping[str, tuple[int, int]] = {
    "subscriptions": (1, 25),
    "services": (1, 3),
    "furniture": (1, 12),
    "hardware": (1, 15),
    "pantry": (2, 30),
    "supplies": (2, 40),
    "usage": (1, 6),
    "merchandise": (10, 120),
}
#: Why a credit note was raised, as the accountant words it (``[a|b]``: their choice of words).
CREDIT_REASONS = (
    "[Service credit for the outage on our side|Credit for our service outage|Outage credit, our fault]",
    "Returned goods: [items arrived damaged|damaged on arrival|goods returned damaged]",
    "[Goodwill discount agreed with the account manager|Goodwill credit agreed by the account manager|Goodwill "
    "discount, agreed on the renewal call]",
    "Billing error: [seats charged twice|seats billed twice|duplicate seat charge]",
)


@dataclass(frozen=True, slots=True)
class PlannedLine:
    """One line of an invoice, contract or proposal: a product of the world's catalogue."""

    sku: str
    description: str
    quantity: int
    unit_price: float

    @property
    def amount(self) -> float:
        return round(self.quantity * self.unit_price, 2)


@dataclass(frozen=True, slots=True)
class PlannedPayment:
    """Money received for an invoice and recorded in the books."""

    amount: float
    date: str
    method: PaymentMethod


@dataclass(frozen=True, slots=True)
class PlannedCredit:
    """A credit note raised against an invoice; ``applied``: allocated to that invoice at once."""

    number: str  # CN-0001
    invoice_number: str
    amount: float
    date: str
    reason: str
    applied: bool


@dataclass(frozen=True, slots=True)
class PlannedInvoice:
    """A sales invoice to a customer organisation, as its books hold it on the world's day.

    ``card`` says what the payments service holds for it: ``paid`` (each card payment recorded
    here has its charge), ``failed`` (a declined charge, the invoice still open and overdue),
    ``unrecorded`` (a succeeded charge whose payment the books are missing: reconciling it is work).
    """

    number: str  # INV-0001
    organisation_id: str
    billing_email: str
    billing_name: str
    reference: str | None  # the customer's purchase order
    date: str
    due_date: str
    lines: tuple[PlannedLine, ...]
    total: float
    status: InvoiceStatus
    payments: tuple[PlannedPayment, ...]
    card: CardOutcome
    credit: PlannedCredit | None = None

    @property
    def amount_paid(self) -> float:
        return round(sum(p.amount for p in self.payments), 2)

    @property
    def amount_credited(self) -> float:
        return self.credit.amount if self.credit is not None and self.credit.applied else 0.0

    @property
    def amount_due(self) -> float:
        if self.status in ("PAID", "VOIDED"):
            return 0.0
        return round(self.total - self.amount_paid - self.amount_credited, 2)

    @property
    def fully_paid_on(self) -> str | None:
        return self.payments[-1].date if self.status == "PAID" else None

    def is_overdue(self, today: str) -> bool:
        """Approved, with money still due after its due date."""
        return self.status == "AUTHORISED" and self.due_date < today and self.amount_due > 0


@dataclass(frozen=True, slots=True)
class PlannedCharge:
    """A card charge for an invoice, as the payments service holds it."""

    invoice_number: str
    email: str  # the billing email: the payer and the receipt address
    amount: float
    date: str
    succeeded: bool
    recorded: bool  # the books hold a payment for it
    duplicate: bool = False  # the same charge again minutes after the first: the customer paid twice


@dataclass(frozen=True, slots=True)
class PlannedContract:
    """A master services agreement with a customer organisation."""

    number: str  # MSA-2025-001
    organisation_id: str
    owner_email: str  # the account owner, who signed for the home organisation
    signatory_email: str  # the customer's signatory
    effective: str
    months: int
    services: tuple[PlannedLine, ...]
    annual_fee: float
    billing: Literal["monthly", "quarterly"]
    payment_days: int
    signed_on: str | None  # None: a draft awaiting the customer's signature

    @property
    def ends(self) -> str:
        return (date.fromisoformat(self.effective) + timedelta(days=self.months * 30)).isoformat()


@dataclass(frozen=True, slots=True)
class PlannedProposal:
    """A commercial proposal sent to a customer organisation."""

    number: str  # PRO-2025-001
    organisation_id: str
    owner_email: str
    prepared_for_email: str
    date: str
    valid_until: str
    lines: tuple[PlannedLine, ...]

    @property
    def total(self) -> float:
        return round(sum(line.amount for line in self.lines), 2)


@dataclass(frozen=True, slots=True)
class PlannedReport:
    """Revenue invoiced in one month (approved and paid invoices by issue date), by customer."""

    month: str  # YYYY-MM
    rows: tuple[tuple[str, float], ...]  # (organisation id, amount), largest first
    prepared_by_email: str

    @property
    def total(self) -> float:
        return round(sum(amount for _, amount in self.rows), 2)


@dataclass(frozen=True, slots=True)
class PlannedDocument:
    """A document the company keeps, and the record it describes (an invoice, a contract...)."""

    kind: DocumentKind
    folder: str  # path of its folder, e.g. /Finance/Invoices
    name: str
    owner_email: str
    organisation_id: str | None
    describes: str  # the described record's key: an invoice number, a contract number, a month
    amount: float
    date: str
    record: PlannedInvoice | PlannedContract | PlannedProposal | PlannedReport


@dataclass(frozen=True, slots=True)
class BusinessPlan:
    """The business of one world: who buys, what was invoiced and paid, and the papers about it."""

    billing_contacts: Mapping[str, Person]  # organisation id -> who receives its invoices
    account_owners: Mapping[str, Person]  # organisation id -> the colleague who owns the account
    payment_terms: Mapping[str, int]  # organisation id -> days to pay
    suppliers: frozenset[str]  # organisations that send us bills
    invoices: tuple[PlannedInvoice, ...]
    credits: tuple[PlannedCredit, ...]
    charges: tuple[PlannedCharge, ...]
    contracts: tuple[PlannedContract, ...]
    proposals: tuple[PlannedProposal, ...]
    reports: tuple[PlannedReport, ...]
    documents: tuple[PlannedDocument, ...]
    _by_number: Mapping[str, PlannedInvoice]

    def invoice(self, number: str) -> PlannedInvoice | None:
        """The invoice with this number (e.g. ``INV-0042``), or None."""
        return self._by_number.get(number)

    def invoices_of(self, organisation_id: str) -> tuple[PlannedInvoice, ...]:
        return tuple(i for i in self.invoices if i.organisation_id == organisation_id)

    def charges_for(self, invoice_number: str) -> tuple[PlannedCharge, ...]:
        return tuple(c for c in self.charges if c.invoice_number == invoice_number)

    @property
    def duplicates(self) -> tuple[PlannedCharge, ...]:
        """The second charges of invoices a customer paid twice by card."""
        return tuple(c for c in self.charges if c.duplicate)

    def overdue(self, today: str) -> tuple[PlannedInvoice, ...]:
        return tuple(i for i in self.invoices if i.is_overdue(today))

    def overdue_on(self, day: str) -> tuple[PlannedInvoice, ...]:
        """Invoices overdue on ``day`` (ISO date, on or before the World's): sent, past due, not yet paid that day.

        Only invoices with no payment before they were settled count, so the amount due on ``day`` is the
        amount due today (for those still open) or the total (for those paid later, without instalments).
        """
        return tuple(
            i for i in self.invoices
            if i.status in ("AUTHORISED", "PAID") and i.due_date < day and (i.fully_paid_on or "9999-12-31") > day
            and all(p.date > day for p in i.payments) and i.credit is None
        )

    def payments_between(self, start: str, end: str) -> tuple[tuple[PlannedInvoice, PlannedPayment], ...]:
        """(invoice, payment) of every payment the books record from ``start`` to ``end`` (ISO dates, inclusive)."""
        return tuple((i, p) for i in self.invoices for p in i.payments if start <= p.date <= end)

    def invoice_to_mention(
        self, rng: random.Random, fits: Callable[[PlannedInvoice], bool], organisation_id: str | None = None
    ) -> PlannedInvoice | None:
        """An invoice for a seeded text (an email, a ticket, a text message) to talk about.

        One of ``organisation_id``'s invoices that ``fits`` the story, else (``None`` there, or none of
        theirs fits) any invoice that fits, whose billing contact then becomes the one the text is from
        or about; None when no invoice fits. Texts never invent numbers: what they say is in the books.
        """
        fitting = [i for i in self.invoices if fits(i)]
        own = [i for i in fitting if i.organisation_id == organisation_id]
        pool = own or fitting
        return pool[rng.randrange(len(pool))] if pool else None


def business_plan(world: World) -> BusinessPlan:
    """The business plan of ``world``: a pure function of its seed and shape, built once per process."""
    return _plan_of(*world.key)


@lru_cache(maxsize=64)
def _plan_of(seed: int, shape: WorldShape) -> BusinessPlan:
    return _build_plan(World.from_seed(seed, shape))


def _pick(rng: random.Random, people: Sequence[T]) -> T:
    return people[rng.randrange(len(people))]


def _build_plan(world: World) -> BusinessPlan:
    orgs = world.organisations[1:]
    today = world.now_dt.date()
    rng = world.rng("plan:accounts")
    sales = [p for p in world.team if p.job_title in ("sales lead", "account executive")]
    billing = {org.id: _pick(rng, world.people_of(org.id)) for org in orgs}
    owners = {org.id: _pick(rng, sales) for org in orgs}
    terms = {org.id: rng.choice((14, 30, 30, 45)) for org in orgs}
    suppliers = frozenset(org.id for org in rng.sample(list(orgs), min(world.scaled(N_SUPPLIERS), len(orgs) // 2)))
    drafts = _plan_invoices(world, world.rng("plan:invoices"), billing, terms)
    invoices, credits = _plan_credits(world.rng("plan:credits"), world.rng("plan:credits:words"), drafts, today.isoformat())
    charges = _plan_charges(world.rng("plan:charges"), invoices, today)
    charges = _plan_duplicates(world.rng("plan:duplicates"), charges, invoices, world)
    contracts, proposals = _plan_agreements(world, world.rng("plan:agreements"), owners, terms)
    reports = _plan_reports(world, invoices)
    documents = _plan_documents(world, invoices, contracts, proposals, reports)
    return BusinessPlan(
        billing_contacts=billing,
        account_owners=owners,
        payment_terms=terms,
        suppliers=suppliers,
        invoices=invoices,
        credits=credits,
        charges=charges,
        contracts=contracts,
        proposals=proposals,
        reports=reports,
        documents=documents,
        _by_number={i.number: i for i in invoices},
    )


def planned_lines(rng: random.Random, products: Sequence[Product], count: int) -> tuple[PlannedLine, ...]:
    """``count`` lines of distinct products, in quantities typical of their category."""
    lines = []
    for product in rng.sample(list(products), count):
        low, high = QUANTITY_RANGE.get(product.category, (1, 5))
        lines.append(PlannedLine(product.sku, product.name, rng.randint(low, high), product.unit_price))
    return tuple(lines)


def planned_status(
    rng: random.Random, age: int, paid_by_now: bool, *, draft: tuple[int, float], voided: float, paid: float
) -> InvoiceStatus:
    """The status of a document ``age`` days old: a recent draft, voided, paid (if it could be by now) or open.

    ``draft``: (within how many days, chance); ``voided`` and ``paid``: chances.
    """
    if age <= draft[0] and rng.random() < draft[1]:
        return "DRAFT"
    if rng.random() < voided:
        return "VOIDED"
    if paid_by_now and rng.random() < paid:
        return "PAID"
    return "AUTHORISED"


def _plan_invoices(
    world: World, rng: random.Random, billing: Mapping[str, Person], terms: Mapping[str, int]
) -> list[PlannedInvoice]:
    today = world.now_dt.date()
    orgs = world.organisations[1:]
    sold = tuple(p for p in world.products if p.category != "pantry")
    history = world.shape.history_days
    count = round(world.scaled(N_PLANNED_INVOICES) * history / DEFAULT_SHAPE.history_days)
    ages = sorted((rng.randint(1, history) for _ in range(count)), reverse=True)
    plans: list[PlannedInvoice] = []
    for index, age in enumerate(ages):
        org = rng.choice(orgs)
        issued = today - timedelta(days=age)
        due = issued + timedelta(days=terms[org.id])
        lines = planned_lines(rng, sold, rng.choices((1, 2, 3, 4), weights=(4, 3, 2, 1))[0])
        total = round(sum(line.amount for line in lines), 2)
        payments: list[PlannedPayment] = []
        method: PaymentMethod = rng.choices(("card", "bank_transfer", "cheque"), weights=(4, 5, 1))[0]
        paid_on = issued + timedelta(days=rng.randint(1, terms[org.id] + 15))
        status = planned_status(rng, age, paid_on <= today, draft=(12, 0.45), voided=0.04, paid=0.88)
        if status == "PAID":
            if rng.random() < 0.15 and (paid_on - issued).days >= 3:
                # Two instalments on different days, so they never look like a duplicate charge.
                first = round(total / 2, 2)
                early = issued + timedelta(days=rng.randint(1, (paid_on - issued).days - 1))
                payments = [PlannedPayment(first, early.isoformat(), method)]
                payments.append(PlannedPayment(round(total - first, 2), paid_on.isoformat(), method))
            else:
                payments = [PlannedPayment(total, paid_on.isoformat(), method)]
        elif status == "AUTHORISED" and age > 20 and rng.random() < 0.25:
            part = float(round(total * rng.uniform(0.3, 0.7)))
            payments = [PlannedPayment(part, min(paid_on, today).isoformat(), method)]
        person = billing[org.id]
        plans.append(
            PlannedInvoice(
                number=f"INV-{index + 1:04d}",
                organisation_id=org.id,
                billing_email=person.email,
                billing_name=person.name,
                reference=f"PO-{rng.randint(10000, 99999)}" if rng.random() < 0.5 else None,
                date=issued.isoformat(),
                due_date=due.isoformat(),
                lines=lines,
                total=total,
                status=status,
                payments=tuple(payments),
                card="paid" if payments and method == "card" else "none",
            )
        )
    # Open invoices with no payment yet: some had a declined card, a few were paid by card but never
    # recorded in the books (three or more of each where the world has them, for both kinds of task).
    open_unpaid = [i for i, p in enumerate(plans) if p.status == "AUTHORISED" and not p.payments]
    overdue = [i for i in open_unpaid if plans[i].due_date < today.isoformat()]
    for i in rng.sample(overdue, min(len(overdue), max(3, len(overdue) // 3))):
        plans[i] = replace(plans[i], card="failed")
    rest = [i for i in open_unpaid if plans[i].card == "none"]
    for i in rng.sample(rest, min(len(rest), 3)):
        plans[i] = replace(plans[i], card="unrecorded")
    return plans


def _plan_credits(
    rng: random.Random, words: random.Random, invoices: list[PlannedInvoice], today: str
) -> tuple[tuple[PlannedInvoice, ...], tuple[PlannedCredit, ...]]:
    """Ten credit notes: on open invoices (most applied at once) and on paid ones (credit left).

    Only invoices with no card activity get credits, so every charge's amount stays what is due.
    """
    untouched = [p for p in invoices if p.status == "AUTHORISED" and not p.payments and p.card == "none"]
    paid = [p for p in invoices if p.status == "PAID" and p.card == "none"]
    chosen = rng.sample(untouched, min(5, len(untouched))) + rng.sample(paid, min(5, len(paid)))
    drafts = []
    for inv in chosen:
        amount = round(inv.total * rng.choice((0.05, 0.1, 0.15, 0.2)), 2)
        on = min((date.fromisoformat(inv.date) + timedelta(days=rng.randint(2, 20))).isoformat(), today)
        tail = words.choice(("", "", ", as agreed with the customer", ", per the account owner", ", customer request",
                             " after the complaint", ", approved by finance", ", one-off"))
        reason = f"{write(words, rng.choice(CREDIT_REASONS))}{tail} ({inv.number})"
        drafts.append((on, inv.number, amount, reason, inv.status == "AUTHORISED" and rng.random() < 0.6))
    credits = tuple(
        PlannedCredit(f"CN-{n:04d}", number, amount, on, reason, applied)
        for n, (on, number, amount, reason, applied) in enumerate(sorted(drafts), start=1)
    )
    by_invoice = {c.invoice_number: c for c in credits}
    return tuple(replace(p, credit=by_invoice[p.number]) if p.number in by_invoice else p for p in invoices), credits


def _plan_charges(rng: random.Random, invoices: Sequence[PlannedInvoice], today: date) -> tuple[PlannedCharge, ...]:
    charges: list[PlannedCharge] = []
    for inv in invoices:
        if inv.card == "paid":
            for p in inv.payments:
                charges.append(PlannedCharge(inv.number, inv.billing_email, p.amount, p.date, True, True))
        elif inv.card == "unrecorded":
            day = min(date.fromisoformat(inv.date) + timedelta(days=rng.randint(1, 10)), today)
            charges.append(PlannedCharge(inv.number, inv.billing_email, inv.amount_due, day.isoformat(), True, False))
        elif inv.card == "failed":
            charges.append(PlannedCharge(inv.number, inv.billing_email, inv.amount_due, inv.due_date, False, False))
    return tuple(charges)


#: Invoices a default-sized world's customers paid twice by card (each a duplicate charge to refund).
N_DUPLICATE_CHARGES = 4


def _plan_duplicates(
    rng: random.Random, charges: tuple[PlannedCharge, ...], invoices: Sequence[PlannedInvoice], world: World
) -> tuple[PlannedCharge, ...]:
    """Duplicates of a few invoices paid in full in one card charge (never a split payment), two days old or more."""
    per_invoice = Counter(c.invoice_number for c in charges)
    totals = {i.number: i.total for i in invoices}
    latest = (world.now_dt.date() - timedelta(days=2)).isoformat()
    single = [c for c in charges if c.recorded and c.succeeded and per_invoice[c.invoice_number] == 1 and c.date < latest
              and c.amount == totals[c.invoice_number]]
    twins = [replace(c, recorded=False, duplicate=True) for c in rng.sample(single, min(world.scaled(N_DUPLICATE_CHARGES), len(single)))]
    return charges + tuple(sorted(twins, key=lambda c: c.invoice_number))


def _plan_agreements(
    world: World, rng: random.Random, owners: Mapping[str, Person], terms: Mapping[str, int]
) -> tuple[tuple[PlannedContract, ...], tuple[PlannedProposal, ...]]:
    """One master services agreement and one current proposal per customer organisation."""
    today = world.now_dt.date()
    year = today.year
    recurring = [p for p in world.products if p.category in ("services", "subscriptions")]
    contracts, proposals = [], []
    for n, org in enumerate(world.organisations[1:], start=1):
        signatory = world.people_of(org.id)[0]
        services = planned_lines(rng, recurring, rng.randint(1, 3))
        effective = today - timedelta(days=rng.randint(30, 500))
        signed = rng.random() < 0.8
        contracts.append(
            PlannedContract(
                number=f"MSA-{year}-{n:03d}",
                organisation_id=org.id,
                owner_email=owners[org.id].email,
                signatory_email=signatory.email,
                effective=effective.isoformat(),
                months=rng.choice((12, 24, 36)),
                services=services,
                annual_fee=round(sum(line.amount for line in services) * rng.choice((4, 6, 12)), 2),
                billing=rng.choice(("monthly", "quarterly")),
                payment_days=terms[org.id],
                signed_on=(effective - timedelta(days=5)).isoformat() if signed else None,
            )
        )
        prepared = today - timedelta(days=rng.randint(5, 60))
        proposals.append(
            PlannedProposal(
                number=f"PRO-{year}-{n:03d}",
                organisation_id=org.id,
                owner_email=owners[org.id].email,
                prepared_for_email=signatory.email,
                date=prepared.isoformat(),
                valid_until=(today + timedelta(days=rng.randint(-20, 45))).isoformat(),
                lines=planned_lines(rng, world.products, rng.randint(2, 4)),
            )
        )
    return tuple(contracts), tuple(proposals)


def _plan_reports(world: World, invoices: Sequence[PlannedInvoice]) -> tuple[PlannedReport, ...]:
    """Monthly revenue reports for the complete months the invoice history covers, newest first."""
    today = world.now_dt.date()
    first_day = (today - timedelta(days=world.shape.history_days)).isoformat()
    revenue: dict[str, dict[str, float]] = {}
    for inv in invoices:
        if inv.status in ("AUTHORISED", "PAID"):
            by_org = revenue.setdefault(inv.date[:7], {})
            by_org[inv.organisation_id] = by_org.get(inv.organisation_id, 0.0) + inv.total
    finance = world.team_member("finance lead").email
    reports = []
    for month in sorted(revenue, reverse=True):
        if month == today.isoformat()[:7] or f"{month}-01" < first_day:
            continue  # the current month is not over; the oldest is only partly covered
        rows = sorted(((org, round(amount, 2)) for org, amount in revenue[month].items()), key=lambda r: (-r[1], r[0]))
        reports.append(PlannedReport(month, tuple(rows), finance))
    return tuple(reports)


def _plan_documents(
    world: World,
    invoices: Sequence[PlannedInvoice],
    contracts: Sequence[PlannedContract],
    proposals: Sequence[PlannedProposal],
    reports: Sequence[PlannedReport],
) -> tuple[PlannedDocument, ...]:
    """The files the company keeps about its customers: issued invoices, agreements, reports."""
    name = {org.id: org.name for org in world.organisations}
    year = world.now_dt.year
    accountant = world.team_member("accountant").email
    docs: list[PlannedDocument] = []
    for inv in invoices:
        if inv.status in ("AUTHORISED", "PAID"):  # drafts are not sent; voided ones were withdrawn
            docs.append(
                PlannedDocument(
                    "invoice", "/Finance/Invoices", f"Invoice {inv.number} - {name[inv.organisation_id]}.pdf",
                    accountant, inv.organisation_id, inv.number, inv.total, inv.date, inv,
                )
            )
    for contract in contracts:
        client = name[contract.organisation_id]
        docs.append(
            PlannedDocument("contract", f"/Clients/{client}", f"{client} - Master Services Agreement.pdf",
                            contract.owner_email, contract.organisation_id, contract.number, contract.annual_fee,
                            contract.effective, contract)
        )
    for proposal in proposals:
        client = name[proposal.organisation_id]
        docs.append(
            PlannedDocument("proposal", f"/Clients/{client}", f"{client} - Proposal {year}.docx", proposal.owner_email,
                            proposal.organisation_id, proposal.number, proposal.total, proposal.date, proposal)
        )
    for report in reports:
        docs.append(
            PlannedDocument("revenue_report", "/Finance/Reports", f"Revenue report {report.month}.xlsx",
                            report.prepared_by_email, None, report.month, report.total, f"{report.month}-01", report)
        )
    return tuple(docs)
