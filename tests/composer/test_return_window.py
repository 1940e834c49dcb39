"""A return opened only inside the store policy's window from the shipping day: past it nothing is opened and the
customer hears when it closed; opening it anyway, or for another quantity, fails."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import return_window
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, with_reply

SERVICES = ("commerce", "mailbox", "helpdesk", "sms", "forms", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(return_window, SERVICES, per=12, seed=17)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_a_return_is_opened_only_inside_the_window_and_for_what_was_asked(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "return-window-check"):
        rule = next(d for d in task.stats["decisions"] if d["kind"] == "rule")
        opened = args_of(task, "create_return")
        assert bool(opened) == rule["default"], task.id
        seen["inside" if opened else "closed"] += 1
        if opened:
            more = [s.model_copy(update={"arguments": {**s.arguments, "items": [{**s.arguments["items"][0], "reason": "other"}]}})
                    if s.tool == "create_return" else s for s in task.plan]
            assert not passes(task, fam.runner, more), task.id
        else:
            assert not passes(task, fam.runner, with_reply(task, "Sorry, we can't take them back.")), task.id
    assert seen["inside"] and seen["closed"], seen
