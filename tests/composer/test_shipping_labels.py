"""A label bought to a deadline: the cheapest rate that arrives by the day the customer needs it (ground where it is in
time, else the cheapest express), and no label where the delivery address fails validation."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from composer.archetypes import shipping_labels
from tests.composer.archetype_checks import (
    Family,
    args_of,
    assert_family_holds,
    family,
    of,
    passes,
    premise_of,
    read,
    with_reply,
)

SERVICES = ("shipping", "mailbox", "helpdesk", "sms", "voice", "forms", "files")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
           "December")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(shipping_labels, SERVICES, per=16, seed=10)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def _needed(task_text: str, year: str) -> str:
    day, month = re.search(r"by \w+day (\d+) (\w+)", task_text).groups()  # type: ignore[union-attr]
    return f"{year}-{_MONTHS.index(month) + 1:02d}-{int(day):02d}"


def test_the_label_is_the_cheapest_rate_in_time_and_an_address_that_fails_gets_none(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "label-by-deadline"):
        fam.runner.fresh(task.setup)
        shipment = args_of(task, "validate_address")[0]
        if premise_of(task) is False:
            seen["address fails"] += 1
            assert not args_of(task, "create_label"), task.id
            assert read(fam.runner, "shipping", "validate_address", address=shipment["address"])["status"] == "error", task.id
            assert not passes(task, fam.runner, with_reply(task, "It's on its way!")), task.id
            continue
        label = args_of(task, "create_label")[0]
        rates = read(fam.runner, "shipping", "get_rates", shipment_id=label["shipment_id"])
        needed = _needed(str([r.row for r in task.setup]), fam.runner.world.now[:4])
        in_time = sorted((r for r in rates if r["estimated_delivery"] <= needed), key=lambda r: r["amount"])
        assert label["service_code"] == in_time[0]["service_code"], task.id
        cheapest = min(rates, key=lambda r: r["amount"])
        if cheapest["service_code"] != label["service_code"]:
            seen["express"] += 1
            ground = [s.model_copy(update={"arguments": {**s.arguments, "service_code": cheapest["service_code"]}})
                      if s.tool == "create_label" else s for s in task.plan]
            assert not passes(task, fam.runner, ground), task.id
        else:
            seen["cheapest"] += 1
    assert seen["express"] and seen["cheapest"], seen
