"""Seeded rows hold the values the product documents (issue 32, cause 6; the held-out check of bench/heldout):
a column's parameters list its values in an enum, in examples or in their descriptions, and a column whose name
says nothing no longer gets the row's company name (Lufthansa's cabin class 'Simpson LLC', Adyen's payout
schedule 'Reed Wiggins and Ramirez', ClickSend's rule enabled 70.36)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mcp_services.kernel.episode import Episode
from mcp_services.kernel.world import World
from mcp_services.registry import get_service

from generator.compiler import compile_service
from generator.documented import listed_values, seed_values
from generator.importers.raw import RawService
from generator.planner import plan_service
from generator.spec import ServiceSpec
from generator.values import ValueMaker
from tests.generator.test_planner_behaviour import _rest


@pytest.mark.parametrize("description, values", [
    ('Enter the required cabin class (e.g econonmy, business etc.). (Acceptable values are: "", "economy", '
     '"premium economy", "business", "first")', ["economy", "premium economy", "business", "first"]),
    ("The payout schedule of the prospective account. >Permitted values: `DEFAULT`, `HOLD`, `DAILY`, `WEEKLY`, "
     "`MONTHLY`.", ["DEFAULT", "HOLD", "DAILY", "WEEKLY", "MONTHLY"]),
    ("Fare range: 'byday' or 'bymonth'", ["byday", "bymonth"]),
    ("Trip duration in days (e.g. '7')", ["7"]),
    ("Mandatory for 4U. Specifies, which fares to be returned, such as basic, smart, best.", ["basic", "smart", "best"]),
    ("Sort order, one of asc, desc.", ["asc", "desc"]),
    ("Match Type. 0=All reports.", ["0"]),
    ("Action.", []),
    ("The ID of the user, for example the primary key.", []),  # prose, not a value
    ("The customer's name.", []),  # an apostrophe is not a quote
])
def test_the_values_a_description_lists(description: str, values: list[str]) -> None:
    assert listed_values(description) == values


def _seeded(name: str, table: str) -> list[dict[str, Any]]:
    with Episode([get_service(name)], 0) as episode:
        return list(episode.dump()[name][table].values())


def test_catalog_rows_hold_the_documented_values_of_their_products() -> None:
    fares = _seeded("lufthansa_partner", "allfares")
    assert {r["cabin_class"] for r in fares} <= {"economy", "premium economy", "business", "first"}
    assert {r["fare_family"] for r in fares} <= {"basic", "smart", "best", "smartflex", "bestflex"}
    assert len({r["cabin_class"] for r in fares}) > 1  # drawn in turn, not one example for every row
    schedules = {r["payoutSchedule"] for r in _seeded("adyen_account_service", "accounts")}
    adyen = get_service("adyen_account_service").runtime.spec  # type: ignore[attr-defined]
    documented = set(adyen.tool("create_account").parameters["properties"]["payoutSchedule"]["enum"])
    assert schedules <= documented
    rules = _seeded("clicksend", "receipts")
    assert {r["enabled"] for r in rules} <= {0, 1} and {r["match_type"] for r in rules} <= {0, 1, 2}
    assert {r["administrative_area"] for r in _seeded("telnyx", "addresses")} == {"IL"}  # its documented example


def _shop() -> ServiceSpec:
    tier = {"type": "string", "description": "The plan's tier. Acceptable values are: 'free', 'team', 'enterprise'."}
    props = {"name": {"type": "string", "description": "The plan's name, e.g. 'Starter'."}, "tier": tier,
             "ref_code": {"type": "string", "examples": ["PLN-1"]}, "active": {"type": "number", "description": "Active."},
             "started_at": {"type": "string", "examples": ["2020-01-01T00:00:00Z"]}}
    result = plan_service(RawService(name="plans", description="Plans.", format="openapi-3", tools=[
        _rest("list_plans", "GET", "/plans", "Lists plans."),
        _rest("create_plan", "POST", "/plans", "Creates a plan.", props, ["name"]),
        _rest("get_plan", "GET", "/plans/{plan_id}", "Gets a plan.", {"plan_id": {"type": "string"}}, ["plan_id"])]))
    assert result.spec is not None, result.problem
    return result.spec


def test_names_identifiers_and_times_keep_their_own_values_and_flags_are_zero_or_one() -> None:
    spec = _shop()
    plan = next(e for e in spec.entities if e.name == "plan")
    chosen = seed_values(spec, plan, set())
    assert {c: (d.values, d.certain) for c, d in chosen.items()} == {
        "tier": (["free", "team", "enterprise"], False), "active": ([0, 1], True)}
    with Episode([compile_service(spec)], 0) as episode:
        rows = list(episode.dump()["plans"][plan.table].values())
    assert {r["tier"] for r in rows} == {"free", "team", "enterprise"}
    assert len({r["name"] for r in rows}) > 1 and "Starter" not in {r["name"] for r in rows}
    assert len({r["ref_code"] for r in rows}) > 1


def test_the_same_seed_seeds_the_same_documented_values() -> None:
    assert _seeded("lufthansa_partner", "bestfares") == _seeded("lufthansa_partner", "bestfares")


def test_a_field_named_for_a_kind_of_value_gets_one_never_the_company_name() -> None:
    world = World.from_seed(0)
    maker = ValueMaker(world, random.Random("kinds"))
    companies = {o.name for o in world.organisations}
    person = world.people[3]

    def value(name: str) -> str:
        return str(maker.value({"type": "string"}, name, person=person))

    assert value("Tel1") == person.phone and value("fax") == person.phone
    assert value("ean").isdigit() and len(value("barcode")) == 13
    assert value("Attributes") == "{}" and value("metadata") == "{}"  # Twilio: 'must contain structurally valid JSON'
    assert value("created_by") == person.username and value("reporter") == person.username
    assert value("weight_unit") in ("kg", "lb") and value("expiry_month") in {f"{m:02d}" for m in range(1, 13)}
    assert -60 <= float(value("latitude")) <= 60 and "." in value("ftp_host")
    assert not {value(n) for n in ("Tel1", "ean", "Attributes", "created_by", "weight_unit", "ftp_host")} & companies
