"""Two tickets a colleague takes for duplicates: merged into the older one where the new one chases the same problem,
left apart where it asks something else; merging the other way round, or merging different questions, fails."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import ticket_merge
from mcp_services.tasks.spec import PlanStep
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, premise_of, read

SERVICES = ("helpdesk", "mailbox", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(ticket_merge, SERVICES, per=12, seed=16)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_duplicates_merge_into_the_older_ticket_and_different_questions_stay_apart(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "duplicate-ticket-check"):
        fam.runner.fresh(task.setup)
        new = next(r.row for r in task.setup if r.table == "tickets")
        if premise_of(task) is False:
            seen["apart"] += 1
            assert not args_of(task, "merge_tickets"), task.id
            email = read(fam.runner, "helpdesk", "get_ticket", ticket_id=new["id"])["requester_email"]
            older = next(t for t in read(fam.runner, "helpdesk", "search_tickets", requester_email=email, limit=100)["items"]
                         if t["id"] != new["id"] and t["status"] in ("new", "open", "pending"))
            merged = PlanStep(service="helpdesk", tool="merge_tickets",
                              arguments={"target_ticket_id": older["id"], "source_ticket_ids": [new["id"]]})
            assert not passes(task, fam.runner, [*task.plan, merged]), task.id
            continue
        seen["merged"] += 1
        merge = args_of(task, "merge_tickets")[0]
        assert merge["source_ticket_ids"] == [new["id"]], task.id
        flipped = [s.model_copy(update={"arguments": {"target_ticket_id": new["id"], "source_ticket_ids": [merge["target_ticket_id"]]}})
                   if s.tool == "merge_tickets" else s for s in task.plan]
        assert not passes(task, fam.runner, flipped), task.id
    assert seen["apart"] and seen["merged"], seen
