"""A payment reminder left in the drafts: sent as written where it holds, corrected to what is still due where the
customer paid part of it since, discarded where they paid it all; sending the stale draft fails."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import drafts
from mcp_services.tasks.spec import PlanStep
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, read

SERVICES = ("mailbox", "accounting", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(drafts, SERVICES, per=16, seed=11)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_reminder_goes_out_only_with_what_is_still_due_and_a_stale_one_fails(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "draft-reminder-check"):
        fam.runner.fresh(task.setup)
        draft_id = next(s.arguments["draft_id"] for s in task.plan if "draft_id" in s.arguments)
        draft = next(d for d in read(fam.runner, "mailbox", "list_drafts")["items"] if d["id"] == draft_id)
        number = draft["subject"].rsplit(" ", 1)[-1]
        invoice = read(fam.runner, "accounting", "get_invoice", invoice_number=number)
        as_is = PlanStep(service="mailbox", tool="send_draft", arguments={"draft_id": draft_id})
        if invoice["status"] == "PAID":
            seen["discarded"] += 1
            assert args_of(task, "delete_draft") and not args_of(task, "send_draft"), task.id
            # Sending it anyway (the literal reading of "send it") tells the customer they owe what they paid.
            assert not passes(task, fam.runner, [as_is if s.tool == "delete_draft" else s for s in task.plan]), task.id
        elif invoice["amount_due"] != invoice["total"]:
            seen["corrected"] += 1
            assert f"{invoice['amount_due']:,.2f}" in args_of(task, "update_draft")[0]["body"], task.id
            stale = [as_is if s.tool == "update_draft" else s for s in task.plan if s.tool != "send_draft"]
            assert not passes(task, fam.runner, stale), task.id
        else:
            seen["as written"] += 1
            assert not args_of(task, "update_draft"), task.id
    assert len(seen) >= 2, seen
