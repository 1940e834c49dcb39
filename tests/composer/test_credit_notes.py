"""Goods sent back: a credit note for the units returned at the invoiced price, applied to the invoice while it still
has money due and left on the account where it is paid; a credit note alone on an open invoice fails."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import credit_notes
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, read, with_reply

SERVICES = ("accounting", "mailbox", "files", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(credit_notes, SERVICES, per=16, seed=18)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_credit_is_applied_only_to_an_invoice_still_open_and_is_for_the_units_returned(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "returned-goods-credit"):
        fam.runner.fresh(task.setup)
        number = args_of(task, "get_invoice")[0]["invoice_number"] if args_of(task, "get_invoice") else None
        applied = args_of(task, "allocate_credit_note")
        if number is not None:
            invoice = read(fam.runner, "accounting", "get_invoice", invoice_number=number)
            assert bool(applied) == (invoice["status"] == "AUTHORISED"), task.id
        seen["applied" if applied else "on account"] += 1
        line = args_of(task, "create_credit_note")[0]["line_items"][0]
        assert abs(line["line_amount"] - line["quantity"] * line["unit_price"]) < 0.01, task.id
        more = [s.model_copy(update={"arguments": {**s.arguments, "line_items": [{"sku": line["sku"], "quantity": line["quantity"] + 1}]}})
                if s.tool == "create_credit_note" else s for s in task.plan]
        assert not passes(task, fam.runner, more), task.id
        if applied:
            assert not passes(task, fam.runner, [s for s in task.plan if s.tool != "allocate_credit_note"]), task.id
        assert not passes(task, fam.runner, with_reply(task, "Credited, thanks.")), task.id
    assert seen["applied"] and seen["on account"], seen
