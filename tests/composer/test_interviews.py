"""Interviews after they are booked: feedback logged as the interviewer's scorecard and followed up as the stage's
scorecards together say, a withdrawal handled by the written procedure, a referral added as a candidate or, for
someone recruiting knows already, as a new application.

Each test reads the task's world as an agent would and checks that the reference does what the data says, that the
literal reading fails where the data says otherwise, and that a faithful reply in other words passes.
"""

from __future__ import annotations

from collections import Counter

import pytest

from composer.archetypes import interviews
from tests.composer.archetype_checks import (
    Family,
    args_of,
    assert_family_holds,
    family,
    of,
    passes,
    premise_of,
    read,
    with_reply,
)

SERVICES = ("recruiting", "mailbox", "files", "chat")


@pytest.fixture(scope="module")
def fam() -> Family:
    return family(interviews, SERVICES, per=10, seed=4)


def test_every_workflow_is_kept_verified_and_needs_each_write(fam: Family) -> None:
    assert_family_holds(fam)


def test_a_scorecard_moves_the_candidate_on_only_when_every_scorecard_of_the_stage_is_in_favour(fam: Family) -> None:
    for task in of(fam.tasks, "interview-scorecard"):
        card = args_of(task, "submit_scorecard")[0]
        fam.runner.fresh(task.setup)
        interview = read(fam.runner, "recruiting", "list_interviews", interviewer_email=card["interviewer_email"], limit=100)
        ran = next(i for i in interview["items"] if i["id"] == card["interview_id"])
        assert ran["start_at"] < fam.runner.world.now and card["interviewer_email"] in ran["interviewer_emails"], task.id
        others = read(fam.runner, "recruiting", "list_scorecards", application_id=ran["application_id"], stage=ran["stage"])["items"]
        favour = card["recommendation"] in ("yes", "strong_yes") and all(
            c["recommendation"] in ("yes", "strong_yes") for c in others)
        assert bool(args_of(task, "advance_application")) == favour, task.id
        # Logging the scorecard alone (the literal reading of "put my scorecard in") fails: the procedure asks for more.
        only = [s for s in task.plan if s.tool not in ("advance_application", "post_message", "send_email", "open_direct_message")]
        assert not passes(task, fam.runner, only), task.id


def test_a_withdrawal_cancels_the_upcoming_interview_and_closes_the_application_with_the_matching_reason(fam: Family) -> None:
    for task in of(fam.tasks, "candidate-withdrawal"):
        fam.runner.fresh(task.setup)
        reasons = {r["id"]: r["name"] for r in read(fam.runner, "recruiting", "list_rejection_reasons")}
        rejected = args_of(task, "reject_application")[0]
        said = str([r.row for r in task.setup])
        assert ("another offer" in reasons[rejected["rejection_reason_id"]].lower()) == ("offer elsewhere" in said), task.id
        other = next(k for k, v in reasons.items() if k != rejected["rejection_reason_id"] and v.startswith(("Accepted", "Withdrew")))
        wrong = [s.model_copy(update={"arguments": {**s.arguments, "rejection_reason_id": other}})
                 if s.tool == "reject_application" else s for s in task.plan]
        assert not passes(task, fam.runner, wrong), task.id
        assert not passes(task, fam.runner, with_reply(task, "Noted, thanks.")), task.id
        # Closing the application alone cancels the interview too, but without the reason the procedure asks for.
        assert not passes(task, fam.runner, [s for s in task.plan if s.tool != "cancel_interview"]), task.id


def test_a_referral_of_someone_recruiting_knows_is_a_new_application_not_a_new_candidate(fam: Family) -> None:
    seen = Counter()
    for task in of(fam.tasks, "candidate-referral"):
        fam.runner.fresh(task.setup)
        known = next(d["default"] is False for d in task.stats["decisions"] if d["kind"] == "premise")
        seen[known] += 1
        made = args_of(task, "add_application" if known else "add_candidate")[0]
        assert made["source"] == "Referral" and made["referrer_email"], task.id
        if known:
            assert not args_of(task, "add_candidate"), task.id
        else:
            # Without the referrer credited, the candidate is added but the referral is lost.
            lost = [s.model_copy(update={"arguments": {k: v for k, v in s.arguments.items() if k != "referrer_email"}})
                    if s.tool == "add_candidate" else s for s in task.plan]
            assert not passes(task, fam.runner, lost), task.id
    assert seen[True] and seen[False], seen
