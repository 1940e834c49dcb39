"""A guest who cancels keeps their row on that event's guest list, marked Cancelled: deleting it (the literal reading of
"take me off the list") fails, and so does marking another event's row."""

from __future__ import annotations

import pytest

from composer.archetypes import guest_lists
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

SERVICES = ("sheets", "mailbox", "files", "helpdesk", "forms", "sms", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(guest_lists, SERVICES, per=10, seed=9)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_guests_row_is_marked_cancelled_and_deleting_it_fails(fam: Family) -> None:
    for task in of(fam.tasks, "guest-cancellation"):
        fam.runner.fresh(task.setup)
        marked = args_of(task, "update_row")[0]
        row = read(fam.runner, "sheets", "get_row", row_id=marked["row_id"])
        assert row["values"]["Status"] == "Registered" and marked["fields"] == {"Status": "Cancelled"}, task.id
        deleted = [PlanStep(service="sheets", tool="delete_row", arguments={"row_id": marked["row_id"]}) if s.tool == "update_row"
                   else s for s in task.plan]
        assert not passes(task, fam.runner, deleted), task.id
        assert not passes(task, fam.runner, with_reply(task, "Sure.")), task.id


def test_a_guest_registered_twice_loses_the_later_row_and_namesakes_both_stay(fam: Family) -> None:
    seen = {True: 0, False: 0}
    for task in of(fam.tasks, "guest-list-duplicate"):
        fam.runner.fresh(task.setup)
        later = next(r.row for r in task.setup if r.service == "sheets")
        same = premise_of(task) is not False
        seen[same] += 1
        deleted = args_of(task, "delete_row")
        assert (deleted == [{"row_id": later["id"]}]) == same, task.id
        delete = PlanStep(service="sheets", tool="delete_row", arguments={"row_id": later["id"]})
        if same:
            first = next(r for r in read(fam.runner, "sheets", "list_rows", sheet_id=later["sheet_id"], limit=100)["items"]
                         if r["id"] != later["id"] and r["key"] == later["key"])
            wrong = [s.model_copy(update={"arguments": {"row_id": first["id"]}}) if s.tool == "delete_row" else s for s in task.plan]
            assert not passes(task, fam.runner, wrong), task.id  # the first registration stays
        else:
            assert not passes(task, fam.runner, [*task.plan, delete]), task.id
    assert seen[True] and seen[False], seen
