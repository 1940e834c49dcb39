"""The draft takes the subject line of the past campaign with the better click rate, as the playbook judges; where
opens say otherwise, the open-rate winner's subject line fails."""

from __future__ import annotations

import pytest

from composer.archetypes import campaign_results
from tests.composer.archetype_checks import Family, args_of, assert_family_holds, family, of, passes, read, with_reply

SERVICES = ("marketing", "mailbox", "files", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(campaign_results, SERVICES, per=10, seed=8)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_the_subject_line_comes_from_the_better_click_rate_even_where_opens_disagree(fam: Family) -> None:
    disagree = 0
    for task in of(fam.tasks, "subject-line-from-results"):
        fam.runner.fresh(task.setup)
        reports = [read(fam.runner, "marketing", "get_campaign_report", campaign_id=a["campaign_id"])
                   for a in args_of(task, "get_campaign_report")]
        by_clicks = max(reports, key=lambda r: r["click_rate"])
        by_opens = max(reports, key=lambda r: r["open_rate"])
        subject = read(fam.runner, "marketing", "get_campaign", campaign_id=by_clicks["campaign_id"])["subject_line"]
        assert args_of(task, "update_campaign")[0]["subject_line"] == subject, task.id
        if by_opens["campaign_id"] != by_clicks["campaign_id"]:
            disagree += 1
            other = read(fam.runner, "marketing", "get_campaign", campaign_id=by_opens["campaign_id"])["subject_line"]
            opens = [s.model_copy(update={"arguments": {**s.arguments, "subject_line": other}})
                     if s.tool == "update_campaign" else s for s in task.plan]
            assert not passes(task, fam.runner, opens), task.id
        assert not passes(task, fam.runner, with_reply(task, "Done, swapped it.")), task.id
    assert disagree
