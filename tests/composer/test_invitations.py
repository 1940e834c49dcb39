"""An invitation answered as the calendar allows: accepted where the time is free, declined where a meeting already
in the calendar overlaps it; accepting a clashing invitation (the literal "yes") fails."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import invitations
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, premise_of, with_reply

SERVICES = ("calendar", "mailbox", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(invitations, SERVICES, per=14, seed=13)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_a_clashing_invitation_is_declined_and_accepting_it_fails(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "invitation-clash"):
        answer = args_of(task, "respond_to_event")[0]["response"]
        clash = premise_of(task) is False
        assert answer == ("declined" if clash else "accepted"), task.id
        seen[answer] += 1
        other = "accepted" if clash else "declined"
        flipped = [s.model_copy(update={"arguments": {**s.arguments, "response": other}}) if s.tool == "respond_to_event" else s
                   for s in task.plan]
        assert not passes(task, fam.runner, flipped), task.id
        assert not passes(task, fam.runner, with_reply(task, "Thanks for the invite!")), task.id
    assert seen["declined"] and seen["accepted"], seen
