"""Expenses a colleague asks us to log: the category their words point to (not its look-alike), on their open report
or a new one, and nothing twice where they logged it already.

Each test reads the task's world as an agent would and checks that the reference does what the data says, that the
literal reading fails where the data says otherwise, and that a careless variant fails.
"""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import expense_entry
from mcp_services.tasks.spec import PlanStep
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

SERVICES = ("expenses", "mailbox")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(expense_entry, SERVICES, per=16, seed=5)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_expense_goes_in_the_category_its_description_points_to_not_the_look_alike(fam: Family) -> None:
    picked = 0
    for task in of(fam.tasks, "expense-logging"):
        if premise_of(task) is False and not args_of(task, "create_expense"):
            continue
        fam.runner.fresh(task.setup)
        names = {c["name"]: c["id"] for c in read(fam.runner, "expenses", "list_categories")}
        pick = next(d["what"] for d in task.stats["decisions"] if d["kind"] == "pick")
        right, look_alike = pick.split(", not ")
        assert args_of(task, "create_expense")[0]["category_id"] == names[right], task.id
        wrong = [s.model_copy(update={"arguments": {**s.arguments, "category_id": names[look_alike]}})
                 if s.tool == "create_expense" else s for s in task.plan]
        assert not passes(task, fam.runner, wrong), task.id
        picked += 1
    assert picked


def test_an_expense_logged_already_is_not_logged_twice_and_a_new_one_lands_on_a_report(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "expense-logging"):
        fam.runner.fresh(task.setup)
        if not args_of(task, "create_expense"):
            seen["logged already"] += 1
            found = read(fam.runner, "expenses", "get_expense", expense_id=task.plan[-1].arguments["body"].split("(")[-1].split(")")[0])
            twice = PlanStep(service="expenses", tool="create_expense", arguments={
                "spender_email": found["spender_email"], "merchant": found["merchant"], "amount": found["amount"],
                "date": found["date"], "category_id": found["category_id"]})
            assert not passes(task, fam.runner, [*task.plan, twice]), task.id
            continue
        seen["new report" if args_of(task, "create_report") else "open report"] += 1
        added = args_of(task, "add_expenses_to_report")
        assert added, task.id
        # Logged but left off the report fails: the request asks for it on their report.
        assert not passes(task, fam.runner, [s for s in task.plan if s.tool != "add_expenses_to_report"]), task.id
    assert seen["logged already"] and seen["open report"] + seen["new report"], seen


def test_a_wrong_amount_is_corrected_unless_the_expense_already_shows_the_right_one(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "expense-amount-fix"):
        fam.runner.fresh(task.setup)
        if premise_of(task) is False:
            seen["right already"] += 1
            assert not args_of(task, "update_expense"), task.id
            assert not passes(task, fam.runner, with_reply(task, "Done, fixed it.")), task.id
            continue
        seen["corrected"] += 1
        fix = args_of(task, "update_expense")[0]
        before = read(fam.runner, "expenses", "get_expense", expense_id=fix["expense_id"])["amount"]
        assert fix["amount"] != before, task.id
        unchanged = [s.model_copy(update={"arguments": {**s.arguments, "amount": before}}) if s.tool == "update_expense" else s
                     for s in task.plan]
        assert not passes(task, fam.runner, unchanged), task.id
    assert seen["right already"] and seen["corrected"], seen
