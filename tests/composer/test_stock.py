"""A shelf count corrects the store's stock of the variant counted by the difference from what it has on hand; the
look-alike variant beside it stays as it is."""

from __future__ import annotations

import pytest

from composer.archetypes import stock
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, read, with_reply

SERVICES = ("commerce", "mailbox", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(stock, SERVICES, per=10, seed=7)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_stock_moves_by_the_count_less_what_is_on_hand_and_a_wrong_figure_fails(fam: Family) -> None:
    for task in of(fam.tasks, "stock-count-correction"):
        fam.runner.fresh(task.setup)
        adjusted = args_of(task, "adjust_inventory")[0]
        variant = read(fam.runner, "commerce", "list_variants", limit=100)["items"]
        before = next(v for v in variant if v["id"] == adjusted["variant_id"])["on_hand"]
        assert str(before + adjusted["delta"]) in task.instruction + str([r.row for r in task.setup]), task.id
        off = [s.model_copy(update={"arguments": {**s.arguments, "delta": s.arguments["delta"] + 1}})
               if s.tool == "adjust_inventory" else s for s in task.plan]
        assert not passes(task, fam.runner, off), task.id
        assert not passes(task, fam.runner, with_reply(task, "Fixed, thanks!")), task.id
