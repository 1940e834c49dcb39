"""Marketing's audiences and the webinars it runs: who is on our mailing lists, with which tags and
consent, and the Zoom webinars our campaigns invite them to.

Two services hold these records, so they come from here: ``marketing`` (Mailchimp) has the audiences,
their members and the invitation campaign of each webinar with its registration link; ``meetings``
(Zoom) has the webinars themselves, their registrants and who attended. Everything is a pure function
of the World's seed, cached per seed:

- Audiences: the newsletter (most of the World's customers, plus people who signed up on the website
  with a personal address) and the product updates list (customers only). Members carry their
  company, city, tags (``Customer`` or ``Prospect``, their company's industry and plan, event
  attendance) and consent: most are subscribed; some unsubscribed (with their reason), a few bounced
  (``cleaned``) or never confirmed (``pending``). A few customers are VIPs.
- Webinars: one that ended a few days ago (registrants, and who attended and for how long) and one
  coming up (registrants so far). Registrants are subscribed newsletter members: the invitation went
  to them. Each webinar has its Zoom number, join link and registration link.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache

from faker.providers.person.en_US import Provider as _PersonNames

from mcp_services.kernel.prose import write
from mcp_services.kernel.world import Organisation, World, WorldShape

__all__ = [
    "MEMBER_STATUSES",
    "PLAN_TAGS",
    "UNSUBSCRIBE_REASONS",
    "Audience",
    "Marketing",
    "Registration",
    "Subscriber",
    "Webinar",
    "marketing_plan",
]

#: Mailchimp's member statuses: on the list and emailable, opted out, bounced, not yet confirmed, archived.
MEMBER_STATUSES = ("subscribed", "unsubscribed", "cleaned", "pending", "archived")
#: The reasons Mailchimp's unsubscribe form offers.
UNSUBSCRIBE_REASONS = (
    "I no longer want to receive these emails",
    "I never signed up for this mailing list",
    "The emails are inappropriate",
    "The emails are spam and should be reported",
    "Other",
)
#: The plan tag of each customer company (our subscription plans).
PLAN_TAGS = ("Standard plan", "Pro plan", "Enterprise plan")


@dataclass(frozen=True, slots=True)
class Audience:
    """A Mailchimp audience (list): who it is for and whom its emails come from."""

    key: str  # "newsletter" or "product"
    name: str
    description: str
    permission_reminder: str
    from_name: str
    from_email: str
    created_at: str


@dataclass(frozen=True, slots=True)
class Subscriber:
    """One person on one audience."""

    audience: str  # Audience.key
    email: str
    first_name: str
    last_name: str
    company: str | None
    city: str | None
    status: str  # one of MEMBER_STATUSES (never archived in the plan)
    tags: tuple[str, ...]
    vip: bool
    source: str
    opted_in_at: str
    changed_at: str
    unsubscribe_reason: str | None
    customer: bool  # one of the World's customers (else someone who signed up on the website)

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}"


@dataclass(frozen=True, slots=True)
class Registration:
    """Someone registered for a webinar, and (once it ended) whether and how long they attended."""

    email: str
    first_name: str
    last_name: str
    company: str | None
    registered_at: str
    join_time: str | None
    leave_time: str | None

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}"

    @property
    def attended(self) -> bool:
        return self.join_time is not None


@dataclass(frozen=True, slots=True)
class Webinar:
    """A Zoom webinar marketing runs, and the campaign that invited the newsletter to it."""

    key: str  # "past" or "upcoming"
    topic: str
    agenda: str
    host_email: str
    start_time: str
    duration: int  # minutes
    webinar_number: str  # Zoom's 11-digit id
    passcode: str
    join_url: str
    registration_url: str
    ended: bool
    invitation_sent_at: str
    registrations: tuple[Registration, ...]


@dataclass(frozen=True, slots=True)
class Marketing:
    audiences: tuple[Audience, ...]
    subscribers: tuple[Subscriber, ...]
    webinars: tuple[Webinar, ...]

    def audience(self, key: str) -> Audience:
        return next(a for a in self.audiences if a.key == key)

    def members_of(self, key: str) -> tuple[Subscriber, ...]:
        return tuple(s for s in self.subscribers if s.audience == key)

    def webinar(self, key: str) -> Webinar:
        return next(w for w in self.webinars if w.key == key)


def marketing_plan(world: World) -> Marketing:
    """The audiences and webinars of ``world`` (a pure function of its seed, cached per seed)."""
    return _build(*world.key)


# -- what the plan is made of ---------------------------------------------------------------------

#: (topic, agenda, the team role hosting it)
_WEBINARS: tuple[tuple[str, str, str], ...] = (
    ("Automating month-end reporting",
     "[A live walkthrough of|A hands-on tour of|We walk through] scheduled exports, report templates and the new close "
     "checklist, [with Q&A|then your questions|with time for Q&A at the end].[ Ideal for finance teams.| Bring your "
     "close calendar.|]", "product manager"),
    ("What's new in the Pro plan",
     "[The features that shipped this quarter|This quarter's new features|Everything we shipped this quarter], how "
     "customers use them, and what is on the roadmap next.[ Live demo included.| With a customer guest.|]",
     "product manager"),
    ("Onboarding a new team in one week",
     "How our customers roll the product out to a new team: [setup, training sessions and the first reports|accounts, "
     "training and the first week's reports|setup, roles and the first dashboards].[ Includes a checklist to take "
     "away.| With tips from our support team.|]", "sales lead"),
    ("Security audit checklist",
     "What auditors ask for, how to export access logs, and the settings every admin should review.[ Bring your "
     "questions.| Slides shared afterwards.| Aimed at admins and IT leads.|]", "engineering lead"),
)
_SIGNUP_SOURCES = ("Signup form", "Signup form", "Webinar registration", "Website pop-up")
_MAIL_PROVIDERS = ("gmail.example", "outlook.example", "icloud.example", "yahoo.example")
_FIRST_NAMES = tuple(sorted(_PersonNames.first_names))
_LAST_NAMES = tuple(sorted(_PersonNames.last_names))
_TOKEN = string.ascii_letters + string.digits


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _later(iso: str, days: float) -> str:
    return _iso((datetime.fromisoformat(iso.replace("Z", "+00:00")) + timedelta(days=days)).replace(microsecond=0))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _weekday_at(day: datetime, hour: int) -> datetime:
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    return day.replace(hour=hour, minute=0, second=0, microsecond=0)


def _customer_tags(rng: random.Random, org: Organisation, plan: str) -> tuple[str, ...]:
    tags = ["Customer", org.industry.capitalize(), plan]
    if rng.random() < 0.2:
        tags.append("Beta program")
    return tuple(tags)


@lru_cache(maxsize=64)
def _build(seed: int, shape: WorldShape) -> Marketing:
    world = World.from_seed(seed, shape)
    rng = world.rng("plans.marketing")
    now = world.now_dt
    home = world.home
    orgs = {o.id: o for o in world.organisations}

    def before(low_days: float, high_days: float) -> str:
        return _iso((now - timedelta(days=rng.uniform(low_days, high_days))).replace(microsecond=0))

    audiences = (
        Audience("newsletter", f"{home.name} Newsletter",
                 "Monthly product news, customer stories, tips and event invitations.",
                 f"You are receiving this email because you signed up for news from {home.name} or are one of our customers.",
                 f"{home.name}", f"news@{home.domain}", before(700, 900)),
        Audience("product", f"{home.name} Product Updates",
                 "Release notes, planned maintenance and service announcements for customers.",
                 f"You are receiving this email because your company uses {home.name}.",
                 f"{home.name} Product Team", f"product@{home.domain}", before(400, 600)),
    )
    created = {a.key: a.created_at for a in audiences}
    plan_of = {org.id: rng.choice(PLAN_TAGS) for org in world.organisations[1:]}
    subscribers: list[Subscriber] = []

    def consent(status: str, opted: str) -> tuple[str, str | None]:
        """When the status last changed, and why someone unsubscribed."""
        if status == "subscribed":
            return opted, None
        changed = before(3, 120)
        changed = max(changed, opted)
        return changed, rng.choice(UNSUBSCRIBE_REASONS) if status == "unsubscribed" else None

    customers = list(world.customers)
    vips = {p.email for p in rng.sample(customers, 5)}
    for person in customers:
        org = orgs[person.organisation_id]
        tags = _customer_tags(rng, org, plan_of[org.id])
        for key, share in (("newsletter", 0.85), ("product", 0.6)):
            if rng.random() >= share:
                continue
            roll = rng.random()
            status = "unsubscribed" if roll < 0.08 else "cleaned" if roll < 0.1 else "pending" if roll < 0.12 else "subscribed"
            # Joined the audience after it was set up.
            opted = max(before(150, 700), _later(created[key], rng.uniform(1, 30)))
            changed, reason = consent(status, opted)
            subscribers.append(Subscriber(
                audience=key, email=person.email, first_name=person.first_name, last_name=person.last_name,
                company=org.name, city=person.city, status=status, tags=tags, vip=person.email in vips,
                source="Import" if key == "product" else rng.choice(("Import", "Signup form")), opted_in_at=opted,
                changed_at=changed, unsubscribe_reason=reason, customer=True,
            ))

    used = {p.email for p in world.people}
    cities = sorted({o.city for o in world.organisations[1:]})
    for _ in range(24):
        while True:
            first, last = rng.choice(_FIRST_NAMES), rng.choice(_LAST_NAMES)
            email = f"{_slug(first)}.{_slug(last)}@{rng.choice(_MAIL_PROVIDERS)}"
            if email not in used:
                used.add(email)
                break
        roll = rng.random()
        status = "unsubscribed" if roll < 0.12 else "pending" if roll < 0.2 else "subscribed"
        opted = max(before(20, 500), _later(created["newsletter"], rng.uniform(1, 30)))
        changed, reason = consent(status, opted)
        subscribers.append(Subscriber(
            audience="newsletter", email=email, first_name=first, last_name=last, company=None,
            city=rng.choice(cities), status=status, tags=("Prospect",), vip=False, source=rng.choice(_SIGNUP_SOURCES),
            opted_in_at=opted, changed_at=changed, unsubscribe_reason=reason, customer=False,
        ))

    webinars = _webinars(world, rng, [s for s in subscribers if s.audience == "newsletter" and s.status == "subscribed"])
    attended = {r.email for w in webinars for r in w.registrations if r.attended}
    subscribers = [
        s if s.email not in attended or "Event attendee" in s.tags else _with_tag(s, "Event attendee")
        for s in subscribers
    ]
    return Marketing(audiences=audiences, subscribers=tuple(subscribers), webinars=webinars)


def _with_tag(subscriber: Subscriber, tag: str) -> Subscriber:
    return replace(subscriber, tags=(*subscriber.tags, tag))


def _webinars(world: World, rng: random.Random, audience: list[Subscriber]) -> tuple[Webinar, ...]:
    now = world.now_dt
    topics = rng.sample(list(_WEBINARS), 2)
    past_start = _weekday_at(now - timedelta(days=rng.randint(2, 6)), 16)
    coming_start = _weekday_at(now + timedelta(days=rng.randint(9, 20)), 16)
    made: list[Webinar] = []
    for key, (topic, agenda, host_role), start in (("past", topics[0], past_start), ("upcoming", topics[1], coming_start)):
        agenda = write(world.rng(f"plans.marketing:words:{key}"), agenda)
        number = str(rng.randint(81_000_000_000, 89_999_999_999))
        token = "".join(rng.choice(_TOKEN) for _ in range(22))
        duration = 60
        invited = start - timedelta(days=10) if key == "past" else now - timedelta(days=rng.randint(2, 4))
        chosen = rng.sample(audience, rng.randint(9, 12) if key == "past" else rng.randint(5, 8))
        # Customers come more often than signups, and at least four customers register for each.
        customers = [s for s in audience if s.customer and s not in chosen]
        while sum(s.customer for s in chosen) < 4 and customers:
            chosen.append(customers.pop(rng.randrange(len(customers))))
        registrations = []
        for s in sorted(chosen, key=lambda s: s.email):
            registered = invited + timedelta(hours=rng.uniform(1, 24 * 6))
            registered = min(registered, now - timedelta(hours=1), start - timedelta(hours=1))
            join = leave = None
            if key == "past" and rng.random() < 0.65:
                joined = start + timedelta(minutes=rng.randint(0, 9))
                join, leave = _iso(joined), _iso(joined + timedelta(minutes=rng.randint(18, duration - 4)))
            registrations.append(Registration(
                email=s.email, first_name=s.first_name, last_name=s.last_name, company=s.company,
                registered_at=_iso(registered.replace(microsecond=0)), join_time=join, leave_time=leave,
            ))
        if key == "past" and not any(r.attended for r in registrations):
            r = registrations[0]
            registrations[0] = Registration(r.email, r.first_name, r.last_name, r.company, r.registered_at,
                                            _iso(start), _iso(start + timedelta(minutes=45)))
        made.append(Webinar(
            key=key, topic=topic, agenda=agenda, host_email=world.team_member(host_role).email, start_time=_iso(start),
            duration=duration, webinar_number=number, passcode=str(rng.randint(100000, 999999)),
            join_url=f"https://zoom.us/j/{number}", registration_url=f"https://zoom.us/webinar/register/WN_{token}",
            ended=key == "past", invitation_sent_at=_iso(invited.replace(minute=0, second=0, microsecond=0)),
            registrations=tuple(registrations),
        ))
    return tuple(made)

