"""Reports found in review (issues 30 and 31): kept tasks played through the tools, the report worded as a person would.

A report that claims the work done now does not say the asker's premise was false ("since you asked, I've paid it");
a correct one in other words does ("Richard is an existing candidate", "you are on the waiting list").
"""

from __future__ import annotations

import json
import re

import pytest

from composer.catalog import load_catalog
from composer.generate import GenerateConfig, generate
from composer.runner import Runner
from composer.verify import reference_answer, run_plan
from mcp_services.tasks.grading import Grade
from mcp_services.tasks.spec import PlanStep, TaskSpec
from mcp_services.tasks.surface import states


@pytest.mark.parametrize("text", [
    # reimbursement-payout 90b0c756557abc84: the report was paid on 4 May; each of these claims paying it now.
    "Since you asked, I've paid out your Hardin-Fitzgerald visit report just now: reference ACH-20250504-0010.",
    "I paid your report out earlier today, reference ACH-20250504-0010.",
    "Done: I've reimbursed it now, so as of today you're paid. Reference ACH-20250504-0010.",
])
def test_work_done_now_does_not_say_it_was_done_already(text: str) -> None:
    assert not states(text, "premise", "already")


@pytest.mark.parametrize("text", [
    # candidate-referral 215dc2eed1c1d09b: Richard applied for another job before; a new application goes on his profile.
    "Richard turned out to be an existing candidate of ours, so his Support Specialist application sits on his current "
    "profile, referred by you.",
    "Richard applied to us before, so I added the Support Specialist application to his existing profile instead of "
    "creating a duplicate.",
    # the generator's own words still count
    "Christian was in recruiting already from an earlier application, so I've added a new application.",
    "Your number is already opted out of our texts (since 21 May), so nothing more goes to it.",
    "They had paid part of it since I drafted it, so I corrected the amount.",
])
def test_work_done_before_in_other_words_says_it_was_done_already(text: str) -> None:
    assert states(text, "premise", "already")


@pytest.mark.parametrize("text", [
    # event-registration ccfd00729914323c: the event is full, so the registrant goes on the guest list as Waitlist.
    "All twelve seats are taken at the moment, so I've put you on the waiting list.",
    "The roundtable is full, so you're on our wait list for now.",
    "You are waitlisted for now; we'll tell you as soon as a seat frees up.",
    "The event is full, so you are on the Waitlist.",
])
def test_a_waiting_list_is_the_waitlist(text: str) -> None:
    assert states(text, "text", "Waitlist")


def test_a_list_of_other_waits_is_not_the_waitlist() -> None:
    assert not states("Thanks for waiting, the list of speakers is below.", "text", "Waitlist")


@pytest.fixture(scope="module")
def registrations() -> tuple[list[TaskSpec], Runner]:
    catalog = load_catalog()
    tasks, report = generate(GenerateConfig(n=16, seed=1, archetypes=("event-registration",)), catalog)
    assert tasks, report.details
    return tasks, Runner(catalog, tasks[0].world_seed)


def _confirmed_with(task: TaskSpec, runner: Runner, words: str) -> Grade:
    """The reference run, its confirmation email saying ``words`` (after the event's date) instead."""
    plan = list(task.plan)
    j = next(i for i, step in enumerate(plan) if step.tool == "send_email")
    body = str(plan[j].arguments["body"])
    args = dict(plan[j].arguments, body=body[: body.index(" on ") + 1] + body[body.index(" on "):].split(".")[0] + ". " + words)
    plan[j] = PlanStep(service=plan[j].service, tool=plan[j].tool, arguments=args)
    runner.fresh(task.setup)
    run_plan(runner.call, plan, stop=False)
    return task.grade(runner.diff(), reference_answer(task))


def test_a_registration_email_stating_the_other_outcome_fails(registrations: tuple[list[TaskSpec], Runner]) -> None:
    # event-registration ea7551d6db5ddccd: "Sorry, you are not registered: the event is full." passed as a confirmation.
    tasks, runner = registrations
    assert {"Waitlist" in json.dumps([s.arguments for s in t.plan if s.tool == "append_row"]) for t in tasks} == {True, False}  # both outcomes
    for task in tasks:
        full = "Waitlist" in json.dumps([step.arguments for step in task.plan if step.tool == "append_row"])
        denial = ("You are not on the waitlist." if full else "Sorry, you are not registered: the event is full.")
        assert not _confirmed_with(task, runner, denial).passed, task.id
        own = ("Every seat is taken, so I've put you on the waiting list." if full
               else "Good news, you are registered and have a seat.")
        assert _confirmed_with(task, runner, own).passed, task.id


def test_a_payout_made_already_is_reported_with_its_own_date_and_the_request_never_says_which_branch() -> None:
    # reimbursement-payout 90b0c756557abc84 (review): "It was already paid, on 30 April 2025" passed where the report
    # went out on 4 May; and the paid-already branch asked for "when it was paid", which the other branch never did.
    library = load_catalog(("expenses", "mailbox", "chat", "hr"))
    tasks, report = generate(GenerateConfig(n=24, seed=2, services=library.names, archetypes=("reimbursement-payout",)),
                             library)
    paid = [t for t in tasks if any(d["kind"] == "premise" and d.get("default") is False for d in t.stats["decisions"])]
    unpaid = [t for t in tasks if t not in paid]
    assert paid and unpaid, report.summary()
    assert not any("when it was paid" in t.instruction for t in tasks)
    runner = Runner(library, paid[0].world_seed)
    for task in paid:
        reply = next(s for s in reversed(task.plan) if any("paid already" in str(v) for v in s.arguments.values()))
        param = next(k for k, v in reply.arguments.items() if "paid already" in str(v))
        text = str(reply.arguments[param])
        runner.fresh(task.setup)
        run_plan(runner.call, task.plan, stop=False)
        assert task.grade(runner.diff(), reference_answer(task)).passed, task.id
        other = "1 January" if "went out on 1 January" not in text else "2 February"
        wrong = reply.model_copy(update={"arguments": {**reply.arguments,
                                                       param: re.sub(r"went out on [^,]+,", f"went out on {other},", text)}})
        assert wrong.arguments[param] != text
        runner.fresh(task.setup)
        run_plan(runner.call, [wrong if s is reply else s for s in task.plan], stop=False)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, (task.id, wrong.arguments[param])
