"""The World: one seeded universe that every service of an episode seeds from.

The same person is the CRM contact, the mailbox correspondent and the calendar attendee, because
each service draws its rows from the same ``World``. Worlds are immutable and a pure function of
their seed: the same seed gives the same world, byte for byte (see ``World.to_json``).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

from faker import Faker

N_ORGANISATIONS = 16
N_PEOPLE = 72
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
    now: str  # the frozen clock, ISO 8601 UTC
    currency: str
    home_organisation_id: str
    organisations: tuple[Organisation, ...]
    people: tuple[Person, ...]
    products: tuple[Product, ...]
    places: tuple[Place, ...]

    @staticmethod
    def from_seed(seed: int) -> World:
        """The world of ``seed`` (cached: worlds are immutable)."""
        return _build_world(int(seed))

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
        return random.Random(f"{self.seed}:{purpose}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@lru_cache(maxsize=64)
def _moment(iso: str) -> datetime:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


_SPLITS: dict[tuple[int, str], tuple[tuple[Person, ...], tuple[Person, ...]]] = {}


def _split(world: World) -> tuple[tuple[Person, ...], tuple[Person, ...]]:
    """(team, customers) of a world, computed once per world (worlds are immutable, a function of the seed)."""
    key = (world.seed, world.now)
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
def _build_world(seed: int) -> World:
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(f"{seed}:world")
    start = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 300))
    now = start.replace(hour=rng.choice((8, 9, 10, 11, 13, 14)), minute=rng.choice((0, 15, 30, 45)))

    organisations: list[Organisation] = []
    used_domains: set[str] = set()
    while len(organisations) < N_ORGANISATIONS:
        name = fake.company().replace(",", "")
        domain = f"{_slug(name)[:24]}.example"
        if domain in used_domains:
            continue
        used_domains.add(domain)
        city = fake.city()
        organisations.append(
            Organisation(
                id=f"org_{len(organisations) + 1:04d}",
                name=name,
                domain=domain,
                industry=rng.choice(INDUSTRIES),
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
    while len(people) < N_PEOPLE:
        first, last = fake.first_name(), fake.last_name()
        index = len(people)
        if index < len(TEAM_ROLES):
            org, title = home, TEAM_ROLES[index]
        else:
            org, title = organisations[1 + (index % (N_ORGANISATIONS - 1))], fake.job()
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
        now=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        currency="USD",
        home_organisation_id=home.id,
        organisations=tuple(organisations),
        people=tuple(people),
        products=products,
        places=tuple(places),
    )
