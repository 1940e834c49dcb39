"""The policy plan: the rules the wiki states and the tables the spreadsheets hold, the same figures everywhere."""

from __future__ import annotations

import pytest

from mcp_services.kernel import World
from mcp_services.kernel.plans.policies import (
    ACCOUNT_TIERS,
    DISCOUNT,
    EVENTS,
    REFUNDS,
    REGIONS,
    Policies,
    policy_plan,
    raised,
    region_of,
)
from mcp_services.kernel.plans.staff import EXPENSE_CATEGORIES, TIME_OFF_POLICIES

SEEDS = (0, 1, 7, 23)


@pytest.fixture(params=SEEDS)
def world(request: pytest.FixtureRequest) -> World:
    return World.from_seed(request.param)


def test_same_seed_same_plan_and_other_seeds_other_accounts() -> None:
    assert policy_plan(World.from_seed(0)) is policy_plan(World.from_seed(0))  # cached per seed
    assert policy_plan(World.from_seed(0)).accounts != policy_plan(World.from_seed(1)).accounts


def test_every_customer_organisation_has_one_account_managed_by_a_salesperson(world: World) -> None:
    plan = policy_plan(world)
    assert sorted(a.organisation_id for a in plan.accounts) == sorted(o.id for o in world.organisations[1:])
    sales = {world.team_member("sales lead").email, world.team_member("account executive").email}
    by_company = {a.company: a for a in plan.accounts}
    for account in plan.accounts:
        assert account.tier in ACCOUNT_TIERS and account.region in REGIONS
        assert account.manager_email in sales
        assert account.region == region_of(world.organisation(account.organisation_id))
        if account.parent is not None:
            parent = by_company[account.parent]
            assert parent.parent is None  # one level of hierarchy
            assert (account.tier, account.manager_email) == (parent.tier, parent.manager_email)
        elif account.tier == "Enterprise":
            assert account.manager_email == world.team_member(DISCOUNT.approver_role).email
        else:
            assert account.manager_email == plan.route(account.region).owner_email
    assert {a.tier for a in plan.accounts} == set(ACCOUNT_TIERS)


def test_the_price_list_is_the_worlds_catalogue_at_its_prices(world: World) -> None:
    plan = policy_plan(world)
    assert [(p.sku, p.product, p.list_price) for p in plan.price_list] == [
        (p.sku, p.name, p.unit_price) for p in world.products
    ]
    assert all(0 <= p.max_discount <= DISCOUNT.ceiling and p.last_year_price < p.list_price for p in plan.price_list)
    assert any(p.max_discount == 0 for p in plan.price_list) and any(p.max_discount >= 15 for p in plan.price_list)


def test_discounts_allow_a_few_points_more_for_enterprise_never_above_the_ceiling() -> None:
    assert DISCOUNT.allowed(10, "Growth") == 10
    assert DISCOUNT.allowed(10, "Enterprise") == 10 + DISCOUNT.enterprise_extra_points
    assert DISCOUNT.allowed(DISCOUNT.ceiling, "Enterprise") == DISCOUNT.ceiling
    assert DISCOUNT.allowed(0, "Enterprise") == 0  # never-discounted products stay so
    assert [raised(p) for p in ("low", "normal", "high", "urgent")] == ["normal", "high", "urgent", "urgent"]


def test_support_queues_and_lead_routes_name_team_members(world: World) -> None:
    plan = policy_plan(world)
    team = {p.email for p in world.team}
    assert all(q.assignee_email in team and q.escalation_email in team for q in plan.queues)
    assert len({q.category for q in plan.queues}) == len(plan.queues)
    assert [r.region for r in plan.lead_routes] == list(REGIONS) and all(
        r.owner_email in team for r in plan.lead_routes
    )


def test_events_are_upcoming_one_full_one_with_places_and_registrants_are_customers(world: World) -> None:
    plan = policy_plan(world)
    customers = {p.email for p in world.customers}
    assert [e.is_full for e in plan.events] == [True, False]
    emails = [r.email for e in plan.events for r in e.registrations]
    assert len(emails) == len(set(emails)) and set(emails) <= customers
    for event in plan.events:
        assert event.starts_at > world.now and all(r.registered_at < world.now for r in event.registrations)
        assert all(r.status == EVENTS.registered for r in event.registrations)
        assert event.registered <= event.capacity


def _page(plan: Policies, title: str) -> str:
    return plan.page(title).body


def test_the_pages_state_the_figures_the_services_enforce(world: World) -> None:
    plan = policy_plan(world)
    refunds = _page(plan, "Refund policy")
    assert f"{REFUNDS.support_limit:.2f}" in refunds and f"{REFUNDS.window_days} days" in refunds
    discount = _page(plan, "Discount approval policy")
    assert f"{DISCOUNT.enterprise_extra_points} percentage points" in discount and f"{DISCOUNT.ceiling}%" in discount
    assert f'"{plan.year} prices"' in discount and world.team_member("sales lead").email in discount
    time_off = _page(plan, "Time off policy")
    assert all(p.rules in time_off for p in TIME_OFF_POLICIES)
    expenses = _page(plan, "Expense policy")
    assert all(f"| {c.name} | {c.limit:.2f} USD | {c.gl_code} |" in expenses for c in EXPENSE_CATEGORIES)
    for event in plan.events:
        assert f"Capacity: {event.capacity} guests" in _page(plan, event.name)
    titles = [p.title for p in plan.pages]
    assert len(titles) == len(set(titles))
