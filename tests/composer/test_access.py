"""A client contact who left their company loses every share of ours with them, and only theirs: their former
colleague's access to the same file stays, and the reply names the files they had."""

from __future__ import annotations

import pytest

from composer.archetypes import access
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, read, with_reply

SERVICES = ("files", "mailbox", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(access, SERVICES, per=10, seed=6)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_only_the_leavers_shares_go_and_the_look_alike_share_of_their_colleague_stays(fam: Family) -> None:
    for task in of(fam.tasks, "client-contact-left"):
        fam.runner.fresh(task.setup)
        removed = {a["share_id"] for a in args_of(task, "remove_share")}
        assert removed, task.id
        trap = next(t for t in task.traps if t.kind == "successor-share")
        kept = next(r.row for r in task.setup if r.table == trap.table and str(r.row["id"]) == trap.key)
        shares = read(fam.runner, "files", "list_shares", file_id=kept["item_id"])["items"]
        leaver = {s["email"] for s in shares if s["id"] in removed}
        assert len(leaver) == 1 and kept["email"] not in leaver, task.id
        # Removing every share of the file (the careless sweep) takes the colleague's access too: it fails.
        sweep = task.plan[-1].model_copy(update={"service": "files", "tool": "remove_share", "arguments": {"share_id": trap.key}})
        assert not passes(task, fam.runner, [*task.plan, sweep]), task.id
        assert not passes(task, fam.runner, with_reply(task, "Done, access removed.")), task.id
