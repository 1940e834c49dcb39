"""HR and people-finance archetypes: tasks decided by the rules in the data, verified, and fair to a right answer.

Each test reads the world as an agent would (the services' own tools on a fresh episode with the task's
setup) and checks that the reference plan does what the rule in the data says: a time-off request is
approved only within the balance the policy leaves, an application is rejected only when the expectation
is above the job's range, an expense report with a violation is never approved by an admin, an interview
goes in at the panel's first free time, a new hire starts on the offer's date.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import reference_answer, run_plan, verify_task
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import assert_every_write_is_needed, of, passes, read, with_reply

SERVICES = ("hr", "recruiting", "expenses", "mailbox", "calendar", "chat", "files")
PEOPLE = tuple(sorted(a.id for a in ARCHETYPES.values() if a.build.__module__ == "composer.archetypes.people"))
PER_ARCHETYPE = 4


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=len(PEOPLE) * PER_ARCHETYPE, seed=0, services=SERVICES, archetypes=PEOPLE), catalog)


@pytest.fixture(scope="module")
def tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> list[TaskSpec]:
    return generated[0]


@pytest.fixture(scope="module")
def offers(catalog: Catalog) -> list[TaskSpec]:
    """Offer requests on both sides of the sign-off rule (a set of their own: both branches, whatever the mix above)."""
    return generate(GenerateConfig(n=8, seed=0, services=SERVICES, archetypes=("offer-request",)), catalog)[0]


@pytest.fixture(scope="module")
def runner(catalog: Catalog, tasks: list[TaskSpec]) -> Runner:
    return Runner(catalog, tasks[0].world_seed)


def _steps(task: TaskSpec, tool: str) -> list[dict[str, Any]]:
    return [dict(step.arguments) for step in task.plan if step.tool == tool]


def _counterfactual(task: TaskSpec, cf_id: str) -> Any:
    return next(c for c in task.counterfactuals if c.id == cf_id)


def _told(task: TaskSpec, email: str) -> bool:
    """Whether the workflow (not a follow-up the walk added) writes to ``email``: an email, or a direct message."""
    assert task.scenario
    return any(step.arguments.get("to") == [email] or step.arguments.get("user_email") == email
               for step, stage in zip(task.plan, task.scenario.stages, strict=True)
               if step.tool in ("send_email", "open_direct_message") and stage != "follow-up")


@pytest.fixture
def world_of(runner: Runner) -> Iterator[Any]:
    """The task's world as the agent finds it: the seeded state plus the task's setup."""

    def fresh(task: TaskSpec) -> Runner:
        runner.fresh(task.setup)
        return runner

    yield fresh


def test_every_people_archetype_gives_verified_tasks_from_a_trigger(
    generated: tuple[list[TaskSpec], GenerateReport], runner: Runner
) -> None:
    tasks, report = generated
    assert len(PEOPLE) >= 9
    assert report.kept >= 0.9 * report.candidates, report.summary()
    assert set(Counter(t.scenario.archetype for t in tasks if t.scenario)) == set(PEOPLE)
    assert {t.scenario.family for t in tasks if t.scenario} == {"hr", "finance"}
    assert all(t.scenario and t.scenario.trigger for t in tasks)
    with_policy = {t.scenario.archetype for t in tasks if t.scenario and t.scenario.policy_in_data}
    assert len(with_policy) >= len(PEOPLE) / 2
    assert len({t.scenario.archetype for t in tasks if t.traps}) >= 3  # type: ignore[union-attr]
    for task in tasks:
        assert verify_task(task, runner) == [], task.id


def test_leaving_out_any_write_of_a_people_task_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_every_write_is_needed(catalog, tasks)


def test_time_off_is_approved_exactly_when_it_fits_the_balance_the_policy_leaves(tasks: list[TaskSpec], world_of: Any) -> None:
    decided = Counter()
    for task in of(tasks, "time-off-decision"):
        world = world_of(task)
        approved, denied = _steps(task, "approve_time_off_request"), _steps(task, "deny_time_off_request")
        request = read(world, "hr", "get_time_off_request", request_id=(approved or denied)[0]["request_id"])
        balances = read(world, "hr", "get_time_off_balances", employee_id=request["employee_id"])
        balance = next(b for b in balances if b["type"] == request["type"])
        # The policy: days granted and carried over, minus approved, minus the other requests still waiting.
        room = balance["available_days"] - (balance["pending_days"] - request["days"])
        assert bool(approved) == (request["days"] <= room), task.id
        decided["approved" if approved else "denied"] += 1
    assert len(decided) == 2 or sum(decided.values()) < 3, decided


def test_an_application_is_rejected_only_when_the_expectation_is_above_the_range(tasks: list[TaskSpec], world_of: Any) -> None:
    for task in of(tasks, "application-screening"):
        world = world_of(task)
        rejected, advanced = _steps(task, "reject_application"), _steps(task, "advance_application")
        application = read(world, "recruiting", "get_application", application_id=(rejected or advanced)[0]["application_id"])
        job = read(world, "recruiting", "get_job", job_id=application["job_id"])
        expected = float(application["cover_letter"].split("expectation is ")[1].split(" ")[0].replace(",", ""))
        assert bool(rejected) == (expected > job["salary_max"]), task.id
        if rejected:
            reasons = {r["id"]: r["name"] for r in read(world, "recruiting", "list_rejection_reasons")}
            assert reasons[rejected[0]["rejection_reason_id"]] == "Compensation expectations too high"
        sent = _steps(task, "send_email")[0]
        assert sent["to"] == [application["candidate_email"]]


def test_an_expense_report_with_a_violation_is_never_approved_and_goes_where_the_guidelines_say(
    tasks: list[TaskSpec], world_of: Any
) -> None:
    for task in of(tasks, "expense-report-review"):
        world = world_of(task)
        report_id = _steps(task, "get_report")[0]["report_id"]
        report = read(world, "expenses", "get_report", report_id=report_id)
        me = world.world.user.email
        if report["violation_count"] == 0:
            assert _steps(task, "approve_report") == [{"report_id": report_id}], task.id
        elif report["approver_email"] == me:
            assert not _steps(task, "approve_report") and _steps(task, "reject_report"), task.id
        else:
            assert not _steps(task, "approve_report") and not _steps(task, "reject_report"), task.id
            assert _told(task, report["approver_email"]), task.id
            # An agent that rejects it instead (an admin may) fails the task.
            careless = _counterfactual(task, "ignores-policy").plan
            assert [s.arguments["report_id"] for s in careless if s.tool == "reject_report"] == [report_id]


def test_an_interview_goes_in_at_the_panels_first_free_time_with_a_matching_invite(tasks: list[TaskSpec], world_of: Any) -> None:
    for task in of(tasks, "interview-panel-scheduling"):
        world = world_of(task)
        booked = _steps(task, "schedule_interview")[0]
        panel = booked["interviewer_emails"]
        # A skills interview lasts an hour, a final one an hour and a half.
        minutes = 60 if _steps(task, "advance_application")[0]["from_stage"] == "phone_screen" else 90
        slots = read(world, "calendar", "find_free_slots", attendee_emails=panel, date=booked["start_at"][:10],
                      duration_minutes=minutes)
        assert booked["start_at"] == slots["slots"][0]["start"], task.id
        invite = _steps(task, "create_event")[0]
        assert (invite["start"], invite["end"]) == (booked["start_at"], booked["end_at"])
        assert set(panel) < set(invite["attendee_emails"])


def test_a_new_hire_starts_on_the_offers_date_with_the_welcome_meeting_that_day(tasks: list[TaskSpec], world_of: Any) -> None:
    for task in of(tasks, "offer-accepted-hire"):
        world = world_of(task)
        offer_id = _steps(task, "record_offer_response")[0]["offer_id"]
        offer = next(o for o in read(world, "recruiting", "list_offers", status="extended")["items"] if o["id"] == offer_id)
        hire = _steps(task, "add_employee")[0]
        assert hire["hire_date"] == offer["start_date"] and hire["first_name"] + " " + hire["last_name"] == offer["candidate_name"]
        welcome = _steps(task, "create_event")[0]
        assert welcome["start"][:10] == offer["start_date"] and hire["work_email"] in welcome["attendee_emails"]
        assert any(t.kind == "other-offer" for t in task.traps) == (len(read(world, "recruiting", "list_offers", status="extended")["items"]) > 1)


def test_an_offer_goes_out_only_at_or_below_the_midpoint_and_otherwise_waits_for_the_finance_leads_sign_off(
    offers: list[TaskSpec], world_of: Any
) -> None:
    lead = next(p for p in world_of(offers[0]).world.team if p.job_title == "finance lead")
    decided = Counter()
    for task in offers:
        world = world_of(task)
        offered = _steps(task, "create_offer")
        terms = offered[0] if offered else _steps(_counterfactual(task, "ignores-policy"), "create_offer")[0]
        application = read(world, "recruiting", "get_application", application_id=terms["application_id"])
        job = read(world, "recruiting", "get_job", job_id=application["job_id"])
        # The offer sign-off rules: above the midpoint of the range, the finance lead signs off first.
        above = terms["salary"] > (job["salary_min"] + job["salary_max"]) / 2
        assert bool(offered) is not above, task.id
        assert job["salary_min"] <= terms["salary"] <= job["salary_max"] and job["approval_status"] == "approved"
        assert _told(task, lead.email) is above, task.id
        decided["held" if above else "offered"] += 1
    assert len(decided) == 2, decided


def test_the_tool_allows_what_each_rule_forbids_so_the_rule_decides(
    tasks: list[TaskSpec], offers: list[TaskSpec], world_of: Any
) -> None:
    """Where a rule forbids the obvious write (approving beyond the balance the rule leaves, an offer above the midpoint,
    a candidate above the range on to the phone screen, approving a report that breaks the policy), the service accepts
    that write: an agent that ignores the rule gets no error to learn from, only a failed task."""
    forbidding = [t for t in [*tasks, *offers] if any(c.id == "ignores-policy" for c in t.counterfactuals)]
    kinds = {t.scenario.archetype for t in forbidding if t.scenario}
    assert {"time-off-decision", "offer-request", "application-screening"} <= kinds, kinds
    for task in forbidding:
        world = world_of(task)
        careless = _counterfactual(task, "ignores-policy")
        assert run_plan(world.call, careless.plan, stop=True) == [], task.id
        assert not task.grade(world.diff(), None).passed, task.id


def test_onboarding_tasks_due_while_the_owner_is_out_go_to_the_cover_and_no_others(tasks: list[TaskSpec], world_of: Any) -> None:
    covers = {"facilities coordinator": "operations coordinator", "people operations specialist": "recruiter",
              "recruiter": "people operations specialist", "IT administrator": "engineering lead",
              "payroll specialist": "accountant"}
    for task in of(tasks, "onboarding-cover"):
        world = world_of(task)
        assert task.scenario and task.scenario.trigger
        email = read(world, "mailbox", "get_message", message_id=task.scenario.trigger.key)
        owner = read(world, "hr", "find_employee_by_email", email=email["from_email"])
        cover = read(world, "hr", "search_employees", query=covers[owner["job_title"]])["items"]
        assert len(cover) == 1
        # The owner's email says when they are out ("out Monday 17 March to Wednesday 19 March.").
        year = world.world.now_dt.year
        days = re.search(r"out (\w+ \d+ \w+)(?: to (\w+ \d+ \w+))?\.", email["body"])
        assert days, email["body"]
        start, end = (datetime.strptime(f"{d} {year}", "%A %d %B %Y").date().isoformat() for d in (days[1], days[2] or days[1]))
        open_tasks = read(world, "hr", "list_onboarding_tasks", assignee_email=owner["work_email"], status="open")["items"]
        handed = _steps(task, "assign_onboarding_task")
        assert {h["task_id"] for h in handed} == {t["id"] for t in open_tasks if start <= t["due_date"] <= end}, task.id
        assert {h["assignee_email"] for h in handed} == {cover[0]["work_email"]}, task.id
        # Taking them on oneself (the guide names the cover) fails the task.
        world.fresh(task.setup)
        run_plan(world.call, [s if s.tool != "assign_onboarding_task" else
                              s.model_copy(update={"arguments": {**s.arguments, "assignee_email": world.world.user.email}})
                              for s in task.plan], stop=False)
        assert not task.grade(world.diff(), None).passed, task.id


def test_the_emailed_receipt_goes_on_the_expense_missing_it_and_the_report_is_then_settled_by_the_guidelines(
    tasks: list[TaskSpec], world_of: Any
) -> None:
    for task in of(tasks, "expense-missing-receipt"):
        world = world_of(task)
        assert task.scenario and task.scenario.trigger
        email = read(world, "mailbox", "get_message", message_id=task.scenario.trigger.key)
        attached = _steps(task, "attach_receipt")
        assert [a["file_name"] for a in attached] == email["attachments"], task.id
        if not attached:  # the receipt never came (the premise is false): nothing is attached, approved or rejected
            assert not _steps(task, "approve_report") and not _steps(task, "reject_report"), task.id
            assert any(d["kind"] == "premise" and d["default"] is False for d in task.stats["decisions"])
            continue
        expense = read(world, "expenses", "get_expense", expense_id=attached[0]["expense_id"])
        assert expense["receipt_id"] is None and any("no receipt" in v for v in expense["violations"])
        report = read(world, "expenses", "get_report", report_id=expense["report_id"])
        assert report["title"] in email["body"] and report["approver_email"] == world.world.user.email
        # Once the receipt is on, the report is approved exactly when nothing else breaks the policy.
        world.call("expenses", "attach_receipt", attached[0])
        still = read(world, "expenses", "get_report", report_id=report["id"])["violation_count"]
        assert bool(_steps(task, "approve_report")) == (still == 0), task.id
        assert bool(_steps(task, "reject_report")) == (still > 0), task.id


# -- what the messages say: the regressions of issue 21 -------------------------------------------------------


def test_a_reply_saying_approved_to_a_denied_time_off_request_fails(tasks: list[TaskSpec], runner: Runner) -> None:
    """The reply must state the decision the policy gave, never the other one, and the days left when it is a no;
    the same facts in other words pass."""
    seen = set()
    for task in of(tasks, "time-off-decision"):
        denied = bool(_steps(task, "deny_time_off_request"))
        seen.add(denied)
        runner.fresh(task.setup)
        request = read(runner, "hr", "get_time_off_request",
                        request_id=(_steps(task, "deny_time_off_request") or _steps(task, "approve_time_off_request"))[0]["request_id"])
        balance = next(b for b in read(runner, "hr", "get_time_off_balances", employee_id=request["employee_id"])
                       if b["type"] == request["type"])
        wrong = "Hi, your time off is approved - enjoy!" if denied else "Hi, sorry: I had to deny your time off request."
        assert not passes(task, runner, with_reply(task, wrong)), task.id
        assert not passes(task, runner, with_reply(task, "ok")), task.id
        if denied:
            left = balance["available_days"] - (balance["pending_days"] - request["days"])
            right = f"Sorry, I can't approve this one: with your other request waiting you only have {left:g} days left."
            # Saying no without the reason the request asks for (how many days are left) is not enough.
            assert not passes(task, runner, with_reply(task, "Sorry, I can't approve this one.")), task.id
        else:
            right = f"All set: approved, enjoy your days off from {request['start_date']}."
        assert passes(task, runner, with_reply(task, right)), (task.id, right)
    assert seen == {True, False}, seen


def test_offer_sent_when_no_offer_was_made_fails(offers: list[TaskSpec], runner: Runner) -> None:
    lead = next(p for p in runner.world.team if p.job_title == "finance lead")
    held = [t for t in offers if not _steps(t, "create_offer")]
    assert held
    for task in held:
        assert not passes(task, runner, with_reply(task, "Done - the offer is out.")), task.id
        right = f"Not out yet: it needs {lead.first_name}'s sign-off first, and I've asked for it."
        assert passes(task, runner, with_reply(task, right)), task.id


def test_ok_where_the_reason_was_asked_for_fails(tasks: list[TaskSpec], runner: Runner) -> None:
    """A report sent back must say which expense is at fault; a declined candidate must hear why."""
    sent_back = [t for t in tasks if t.scenario and t.scenario.archetype in ("expense-report-review", "expense-missing-receipt")
                 and _steps(t, "reject_report")]
    declined = [t for t in of(tasks, "application-screening") if _steps(t, "reject_application")]
    assert sent_back and declined
    for task in sent_back:
        reason = _steps(task, "reject_report")[0]["reason"]
        assert not passes(task, runner, with_reply(task, "ok")), task.id
        assert not passes(task, runner, with_reply(task, "I've rejected your report, sorry.")), task.id
        assert passes(task, runner, with_reply(task, f"I've rejected it and sent it back to you. {reason}")), task.id
    for task in declined:
        runner.fresh(task.setup)
        application = read(runner, "recruiting", "get_application",
                             application_id=_steps(task, "reject_application")[0]["application_id"])
        expected = float(application["cover_letter"].split("expectation is ")[1].split(" ")[0].replace(",", ""))
        assert not passes(task, runner, with_reply(task, "Unfortunately we will not take your application further.")), task.id
        right = f"Thanks for applying. We can't go further: an expectation of ${expected:,.0f} is above the role's range."
        assert passes(task, runner, with_reply(task, right)), task.id


def test_a_denial_never_tells_of_negative_days_left(catalog: Catalog) -> None:
    # Played by hand: a denial expected the reply to say "-1 personal days you have left".
    decided, _ = generate(GenerateConfig(n=12, seed=0, services=SERVICES, archetypes=("time-off-decision",)), catalog)
    denials = [t for t in decided if _steps(t, "deny_time_off_request")]
    assert denials
    for task in denials:
        reason = _steps(task, "deny_time_off_request")[0]["reason"]
        left = float(re.search(r"more than the (-?[\d.]+) ", reason)[1])  # type: ignore[index]
        assert left >= 0, (task.id, reason)


@pytest.mark.parametrize(("archetype", "write", "claims", "bare"), [
    # A payout chased after it went out: nothing is paid, the reply gives the reference.
    ("reimbursement-payout", "reimburse_report", "Done: I've reimbursed your report now.", "It was paid already."),
    # Time off cancelled or denied already: nothing changes, the reply says where it stands.
    ("time-off-cancellation", "cancel_time_off_request", "Done: I've cancelled your time off.", "No need, it is already off."),
])
def test_a_false_premise_changes_nothing_and_the_reply_says_why(
    catalog: Catalog, runner: Runner, archetype: str, write: str, claims: str, bare: str
) -> None:
    """Where the asker's premise is false, the work is not done again; a reply that claims it was, or leaves out what
    shows where things stand (the reference, the state), fails."""
    generated = generate(GenerateConfig(n=16, seed=0, services=SERVICES, archetypes=(archetype,)), catalog)[0]
    false = [t for t in generated if any(d.get("kind") == "premise" and d.get("default") is False for d in t.stats["decisions"])]
    assert false and len(false) < len(generated)
    for task in false:
        assert not _steps(task, write), task.id
        assert passes(task, runner, task.plan), task.id
        assert not passes(task, runner, with_reply(task, claims)), task.id
        assert not passes(task, runner, with_reply(task, bare)), task.id


def test_a_missing_receipt_said_in_other_words_passes_and_an_approval_fails(catalog: Catalog, runner: Runner) -> None:
    """Played by hand (issue 30): "there was no attachment on your email" is as true as the reference's "it was not
    attached", and passes; a reply saying the report is approved fails."""
    generated = generate(GenerateConfig(n=16, seed=0, services=SERVICES, archetypes=("expense-missing-receipt",)), catalog)[0]
    missing = [t for t in generated if any(d.get("kind") == "premise" and d.get("default") is False for d in t.stats["decisions"])]
    assert missing
    for task in missing:
        own = "Hi, there was no attachment on your email, so the receipt still isn't with us. I've left the report as it is."
        assert passes(task, runner, with_reply(task, own)), task.id
        assert not passes(task, runner, with_reply(task, "Hi, all good: I've approved your report.")), task.id
