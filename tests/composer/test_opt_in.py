"""A customer who opted out of our texts asks for them back: our own opt-out is lifted; one they made by texting STOP
is left (only they can lift it) and they hear to text START to our texting number."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import opt_in
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, premise_of, read, with_reply

SERVICES = ("sms", "mailbox", "helpdesk", "forms", "voice", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(opt_in, SERVICES, per=12, seed=14)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_only_an_opt_out_we_recorded_is_lifted_and_a_stop_gets_the_start_instructions(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "texts-again"):
        fam.runner.fresh(task.setup)
        outs = {o["phone_number"]: o for o in read(fam.runner, "sms", "list_opt_outs", limit=100)["items"]}
        mine = next(outs[p.phone] for p in fam.runner.world.customers if p.name in task.instruction and p.phone in outs)
        if premise_of(task) is False:
            seen["stop"] += 1
            assert mine["source"] == "keyword" and not args_of(task, "remove_opt_out"), task.id
            assert not passes(task, fam.runner, with_reply(task, "Done, you'll get our texts again.")), task.id
        else:
            seen["ours"] += 1
            assert args_of(task, "remove_opt_out"), task.id
    assert seen["stop"] and seen["ours"], seen
