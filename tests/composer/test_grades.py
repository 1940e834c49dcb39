"""Grades that check the truth, in the agent's own words (issue 30).

A report earns its criterion only when what it says is true in the final state: a reply saying "Done" after an act
the service refused, or one that was never made, fails; a message stating the other outcome fails. A correct report in
other words passes: it may name a record by any of its identifying forms.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.verify import reference_answer, run_plan
from mcp_services.tasks.checks import RowExists
from mcp_services.tasks.grading import Grade
from mcp_services.tasks.spec import PlanStep, TaskSpec

from tests.composer.archetype_checks import with_reply

ARCHETYPES = ("expense-report-review", "request-restore", "application-screening", "ticket-fixed-confirmation",
              "time-off-decision", "store-return-refund", "request-create", "request-update", "request-pair")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=40, seed=3, archetypes=ARCHETYPES), catalog)


@pytest.fixture(scope="module")
def runner(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> Runner:
    return Runner(catalog, generated[0][0].world_seed)


def _of(generated: tuple[list[TaskSpec], GenerateReport], archetype: str) -> list[TaskSpec]:
    found = [t for t in generated[0] if t.scenario is not None and t.scenario.archetype == archetype]
    assert found, (archetype, generated[1].details)
    return found


def _grade(task: TaskSpec, runner: Runner, plan: Sequence[PlanStep]) -> Grade:
    runner.fresh(task.setup)
    run_plan(runner.call, plan, stop=False)
    return task.grade(runner.diff(), reference_answer(task))


def _report_criterion(task: TaskSpec) -> str:
    """The criterion of the last report step (the answer to whoever asked)."""
    assert task.scenario
    j = max(i for i, stage in enumerate(task.scenario.stages) if stage == "report")
    return next(r.id for r in task.rubric if r.id.startswith(f"step-{j + 1}-"))


def _without(task: TaskSpec, tool: str) -> list[PlanStep]:
    return [s for s in task.plan if s.tool != tool]


def test_a_refused_approval_reported_as_done_fails(generated: tuple[list[TaskSpec], GenerateReport], runner: Runner) -> None:
    # The service refused the approval (the agent was not the approver); the agent replied "Done: ... approved".
    approved = [(t, s.tool) for t in generated[0] for s in t.plan if s.tool.startswith("approve")]
    assert approved
    for task, tool in approved:
        grade = _grade(task, runner, _without(task, tool))
        assert not grade.criteria[_report_criterion(task)], task.id
        assert not grade.passed


def test_a_hollow_restore_fails(generated: tuple[list[TaskSpec], GenerateReport], runner: Runner) -> None:
    # "Done: I restored ..." while the file stays where it was.
    restores = [(task, acts) for task in _of(generated, "request-restore")
                if (acts := [j for j, stage in enumerate(task.scenario.stages) if stage == "act"] if task.scenario else [])]
    assert restores  # a restore whose work was done already (a false premise) has no act to skip
    for task, acts in restores:
        plan = [s for j, s in enumerate(task.plan) if j != acts[-1]]
        grade = _grade(task, runner, plan)
        assert not grade.criteria[_report_criterion(task)], task.id
        assert _grade(task, runner, task.plan).passed


def test_a_negated_invitation_fails(generated: tuple[list[TaskSpec], GenerateReport], runner: Runner) -> None:
    invited = [t for t in _of(generated, "application-screening") if not any(s.tool == "reject_application" for s in t.plan)]
    assert invited
    for task in invited:
        plan = with_reply(task, "Hi, thank you for applying. Unfortunately we will not move you on to the phone screen.")
        assert not _grade(task, runner, plan).criteria[_report_criterion(task)], task.id
        plan = with_reply(task, "Hi, thanks for applying! Next step: a phone screen. We'll be in touch to find a time.")
        assert _grade(task, runner, plan).passed, task.id


def test_every_report_that_tells_of_acts_has_its_near_misses(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    """claims-without-acting and wrong-outcome are verified to fail the report's own criterion; natural-report to pass."""
    tasks = generated[0]
    claims = [t for t in tasks if any(cf.id == "claims-without-acting" for cf in t.counterfactuals)]
    assert len(claims) >= len(tasks) * 0.7
    for task in claims:
        cf = next(cf for cf in task.counterfactuals if cf.id == "claims-without-acting")
        assert cf.criteria and cf.criteria[0] in {r.id for r in task.rubric}
    decided = [t for t in tasks if any(cf.id == "wrong-outcome" for cf in t.counterfactuals)]
    assert decided
    assert any(t.stats.get("natural_report") == "passed" for t in tasks)


def test_the_wrong_outcome_and_the_claim_fail_when_replayed(generated: tuple[list[TaskSpec], GenerateReport], runner: Runner) -> None:
    for task in generated[0]:
        for cf in task.counterfactuals:
            if cf.id in ("claims-without-acting", "wrong-outcome"):
                grade = _grade(task, runner, cf.plan)
                assert not grade.passed and not any(grade.criteria[c] for c in cf.criteria), (task.id, cf.id)


def test_no_request_asks_for_names_exactly_as_written(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert not [t.id for t in generated[0] if "exactly as I have written" in t.instruction]


def test_a_stated_title_written_otherwise_passes(generated: tuple[list[TaskSpec], GenerateReport], runner: Runner) -> None:
    """A title the request states, typed in lower case with its punctuation dropped, is the same title."""
    import re

    named = [(t, c) for t in generated[0] for c in t.checks if isinstance(c, RowExists) and '"$names"' in c.model_dump_json()]
    assert named
    for task, check in named:
        titles = {w["$names"] for w in check.model_dump()["match"].values() if isinstance(w, dict) and "$names" in w}
        plan = [s.model_copy(update={"arguments": {k: re.sub(r"[^\w ]+", " ", v).lower() if isinstance(v, str) and v in titles else v
                                                   for k, v in s.arguments.items()}}) for s in task.plan]
        assert plan != task.plan
        assert _grade(task, runner, plan).passed, task.id


def test_a_created_contact_is_not_asked_for_fields_the_request_never_names() -> None:
    """"Set them up with their name and email": an agent that fills the company otherwise (never asked for) passes, and
    its own new record carries the number the reply states (the honest solution scored 0.2)."""
    from mcp_services.registry import catalog_names

    services = ("crm", "chat", "mailbox", "apideck_crm")
    if "apideck_crm" not in catalog_names():
        pytest.skip("the package catalog lacks apideck_crm")
    catalog = load_catalog(services)
    tasks, report = generate(GenerateConfig(n=10, seed=0, services=services,
                                            archetypes=("contact-into-service", "signup-reply-with-number")), catalog)
    created = [(t, s) for t in tasks for s in t.plan if s.service == "apideck_crm" and "company_name" in s.arguments]
    assert created, report.details
    runner = Runner(catalog, tasks[0].world_seed)
    for task, step in created:
        plan = [s.model_copy(update={"arguments": {**s.arguments, "company_name": "Self-employed"}}) if s is step else s
                for s in task.plan]
        assert _grade(task, runner, plan).passed, task.id


def test_an_answer_in_the_words_of_the_request_is_guessable() -> None:
    from composer.content import guessable

    assert guessable("usps", ["What is the code of the carrier USPS?"])
    assert guessable("pro_plan", ["Which plan is Ana on, the Pro Plan?"])
    assert not guessable("fdx", ["What is the code of the carrier FedEx?"])
    assert not guessable(2350.6, ["What does Smith Inc still owe?"])


def test_a_message_to_the_customer_the_work_is_for_is_not_collateral(
    generated: tuple[list[TaskSpec], GenerateReport], runner: Runner
) -> None:
    """One collateral rule: an extra email to the person the work is for (the return label they wait on) is implied by
    the request; the same email to anyone else is collateral."""
    from mcp_services.tasks.checks import NoCollateral

    mailed = [(t, c) for t in generated[0] for c in t.checks if isinstance(c, NoCollateral)
              and "mailbox" in t.services and any("@" in p for p in c.correspondents)]
    assert mailed
    for task, check in mailed[:6]:
        person = next(p for p in check.correspondents if "@" in p)
        for to, fine in ((person, True), ("someone.else@elsewhere.example", False)):
            extra = PlanStep(service="mailbox", tool="send_email",
                             arguments={"to": [to], "subject": "Your return label", "body": "Here is the label you asked for."})
            grade = _grade(task, runner, [*task.plan, extra])
            assert grade.criteria["no-collateral"] is fine, (task.id, to)


def test_a_phone_number_is_no_title_to_name_a_call_by() -> None:
    """Requests name records the way people do: not 'unarchive the call "+12295556922"'."""
    from composer.archetypes.requests import _reads_as_name

    assert not _reads_as_name("+12295556922")
    assert not _reads_as_name("+1 (229) 555-6922")
    assert _reads_as_name("Vendor comparison")


def test_stats_and_audit_show_the_near_misses(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    from composer.audit import audit_records, format_audit
    from composer.stats import format_stats, task_stats

    tasks = generated[0]
    printed = format_stats(task_stats(tasks))
    assert "claims-without-acting" in printed and "near misses passed     natural-report" in printed
    natural = next(t for t in tasks if t.stats.get("natural_report") == "passed")
    shown = format_audit(next(audit_records([natural], catalog)))
    assert "near miss natural-report" in shown and "must pass, verified" in shown
    assert "near miss claims-without-acting" in shown
