"""An NDA made ready for a client: the template copied into their folder under the filing guide's name, unless their
folder holds an NDA already (then nothing is copied and the colleague hears which file it is)."""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import client_files
from mcp_services.tasks.spec import PlanStep
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, premise_of, with_reply

SERVICES = ("files", "mailbox", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(client_files, SERVICES, per=12, seed=15)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_template_is_copied_under_the_guides_name_unless_the_client_has_an_nda(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "client-nda-ready"):
        fam.runner.fresh(task.setup)
        if premise_of(task) is False:
            seen["has one"] += 1
            assert not args_of(task, "copy_file"), task.id
            assert not passes(task, fam.runner, with_reply(task, "Done, the NDA is in their folder.")), task.id
            continue
        seen["copied"] += 1
        copied = args_of(task, "copy_file")[0]
        assert copied["new_name"].endswith(" - Mutual NDA.docx"), task.id
        renamed = [s.model_copy(update={"arguments": {**s.arguments, "new_name": "NDA.docx"}}) if s.tool == "copy_file" else s
                   for s in task.plan]
        assert not passes(task, fam.runner, renamed), task.id
        moved = [PlanStep(service="files", tool="move_file", arguments={"file_id": copied["file_id"], "folder_id": copied["folder_id"]})
                 if s.tool == "copy_file" else s for s in task.plan]
        assert not passes(task, fam.runner, moved), task.id
    assert seen["has one"] and seen["copied"], seen
