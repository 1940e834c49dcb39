"""A public link found in the wild: removed from the file it opens unless the sharing policy publishes that file (the
Marketing folder); removing the link of a published file, or leaving an internal one public, fails."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import shared_links
from mcp_services.tasks.spec import PlanStep
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, read, with_reply

SERVICES = ("files", "mailbox", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(shared_links, SERVICES, per=14, seed=12)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_link_goes_unless_the_file_is_published_and_keeping_an_internal_link_fails(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "public-link-found"):
        fam.runner.fresh(task.setup)
        url = args_of(task, "find_file_by_shared_link")[0]["url"]
        file = read(fam.runner, "files", "find_file_by_shared_link", url=url)
        published = file["path"].startswith("/Marketing/")
        removed = args_of(task, "remove_shared_link")
        assert bool(removed) != published, task.id
        seen[published] += 1
        if published:
            cut = PlanStep(service="files", tool="remove_shared_link", arguments={"file_id": file["id"]})
            assert not passes(task, fam.runner, [*task.plan[:-1], cut, task.plan[-1]]), task.id
        else:
            assert not passes(task, fam.runner, [s for s in task.plan if s.tool != "remove_shared_link"]), task.id
            assert not passes(task, fam.runner, with_reply(task, "Done, all sorted.")), task.id
    assert seen[True] and seen[False], seen
