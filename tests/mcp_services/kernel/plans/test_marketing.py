"""The marketing plan: audiences of the World's customers and signups, their consent, and the webinars they register for."""

from __future__ import annotations

from collections import Counter

import pytest

from mcp_services.kernel import World
from mcp_services.kernel.plans.marketing import MEMBER_STATUSES, PLAN_TAGS, marketing_plan

SEEDS = (0, 1, 7, 23)


@pytest.fixture(params=SEEDS)
def world(request: pytest.FixtureRequest) -> World:
    return World.from_seed(request.param)


def test_same_seed_same_plan_and_other_seeds_other_audiences() -> None:
    assert marketing_plan(World.from_seed(0)) is marketing_plan(World.from_seed(0))  # cached per seed
    assert marketing_plan(World.from_seed(0)).subscribers != marketing_plan(World.from_seed(1)).subscribers


def test_customers_are_members_with_their_world_address_company_and_tags(world: World) -> None:
    plan = marketing_plan(world)
    people = {p.email: p for p in world.customers}
    customers = [s for s in plan.subscribers if s.customer]
    assert len({s.email for s in customers}) >= len(people) * 0.7
    for s in customers:
        person = people[s.email]
        org = world.organisation(person.organisation_id)
        assert (s.name, s.company, s.city) == (person.name, org.name, person.city)
        assert "Customer" in s.tags and org.industry.capitalize() in s.tags
        assert len([t for t in s.tags if t in PLAN_TAGS]) == 1
    # Every company is on one plan: its people carry the same plan tag.
    plans = {(people[s.email].organisation_id, t) for s in customers for t in s.tags if t in PLAN_TAGS}
    assert len(plans) == len({org for org, _ in plans})


def test_signups_use_personal_addresses_and_nobody_is_twice_on_one_audience(world: World) -> None:
    plan = marketing_plan(world)
    signups = [s for s in plan.subscribers if not s.customer]
    assert len(signups) >= 20 and all(s.company is None and s.tags[0] == "Prospect" for s in signups)
    assert not {s.email for s in signups} & {p.email for p in world.people}
    assert all(s.audience == "newsletter" for s in signups)
    pairs = [(s.audience, s.email) for s in plan.subscribers]
    assert len(pairs) == len(set(pairs))
    assert {s.audience for s in plan.subscribers} == {a.key for a in plan.audiences}


def test_consent_has_every_status_and_unsubscribes_keep_their_reason(world: World) -> None:
    plan = marketing_plan(world)
    statuses = Counter(s.status for s in plan.subscribers)
    assert set(statuses) <= set(MEMBER_STATUSES) and "archived" not in statuses
    assert statuses["subscribed"] > 0.75 * len(plan.subscribers) and statuses["unsubscribed"] >= 3
    for s in plan.subscribers:
        assert (s.unsubscribe_reason is not None) == (s.status == "unsubscribed")
        assert s.opted_in_at <= s.changed_at <= world.now
    assert 1 <= sum(s.vip for s in plan.subscribers if s.audience == "newsletter") and all(s.customer for s in plan.subscribers if s.vip)


def test_webinars_one_ended_one_coming_with_registrants_from_the_newsletter(world: World) -> None:
    plan = marketing_plan(world)
    past, upcoming = plan.webinar("past"), plan.webinar("upcoming")
    assert past.ended and past.start_time < world.now < upcoming.start_time and not upcoming.ended
    subscribed = {s.email: s for s in plan.members_of("newsletter") if s.status == "subscribed"}
    for webinar in (past, upcoming):
        assert webinar.join_url.endswith(webinar.webinar_number) and webinar.registration_url.startswith("https://zoom.us/webinar/register/")
        assert webinar.invitation_sent_at < min(r.registered_at for r in webinar.registrations)
        assert all(r.email in subscribed and r.name == subscribed[r.email].name for r in webinar.registrations)
        assert sum(subscribed[r.email].customer for r in webinar.registrations) >= 4
        assert all(r.registered_at < webinar.start_time for r in webinar.registrations)
    attended = [r for r in past.registrations if r.attended]
    assert attended and len(attended) < len(past.registrations)  # some registered and did not come
    assert all(past.start_time <= r.join_time < r.leave_time for r in attended if r.join_time and r.leave_time)
    assert not any(r.attended for r in upcoming.registrations)
    # Who attended carries the tag on every audience they are on.
    assert all("Event attendee" in s.tags for s in plan.subscribers if s.email in {r.email for r in attended})
