"""Premises a colleague's request takes for granted that the data can make false (``composer.archetypes.premises``):
the person is on the record already, the tag is there, the meeting is at that time. Then nothing changes and the
reply says why; where the premise holds the work is done as asked."""

from __future__ import annotations

import re

import pytest

from composer.archetypes.premises import SAME
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, generate
from composer.runner import Runner
from composer.verify import reference_answer, run_plan
from mcp_services.tasks.spec import PlanStep, TaskSpec
from mcp_services.tasks.surface import states

from tests.composer.conftest import SERVICES

_LIBRARY = ("docs", "hr", "sheets", "esign", "meetings", "mailbox", "chat", "shipping", "projects", "files")
_ARCHETYPES = tuple(f"request-{intent}" for intent in sorted(SAME))


@pytest.fixture(scope="module")
def library() -> Catalog:
    return load_catalog(_LIBRARY)


@pytest.fixture(scope="module")
def requests(library: Catalog) -> list[TaskSpec]:
    tasks, _ = generate(GenerateConfig(n=100, seed=0, services=library.names, archetypes=_ARCHETYPES), library)
    return tasks


def _premise(task: TaskSpec) -> bool | None:
    found = [d.get("default") for d in task.stats["decisions"] if d["kind"] == "premise"]
    return found[0] if found else None


def _reply(task: TaskSpec) -> PlanStep:
    assert task.scenario is not None
    j = max(i for i, stage in enumerate(task.scenario.stages) if stage == "report")
    return task.plan[j]


def _with_text(task: TaskSpec, step: PlanStep, text: str) -> list[PlanStep]:
    param = "body" if "body" in step.arguments else "text"
    return [s.model_copy(update={"arguments": {**s.arguments, param: text}}) if s is step else s for s in task.plan]


def _passes(task: TaskSpec, runner: Runner, plan: list[PlanStep]) -> bool:
    runner.fresh(task.setup)
    run_plan(runner.call, plan, stop=False)
    return task.grade(runner.diff(), reference_answer(task)).passed


def _branches(tasks: list[TaskSpec], act: str) -> tuple[list[TaskSpec], list[TaskSpec]]:
    """The tasks whose premise is false (none calls ``act``) and those where it holds (each does), both present."""
    false = [t for t in tasks if _premise(t) is False]
    true = [t for t in tasks if _premise(t) is True]
    assert false and true
    assert not any(s.tool == act for t in false for s in t.plan)
    assert all(any(s.tool == act for s in t.plan) for t in true)
    return false, true


def _reply_text(task: TaskSpec) -> str:
    reply = _reply(task)
    return str(reply.arguments.get("body") or reply.arguments.get("text"))


def _says_why(task: TaskSpec, runner: Runner, natural: str, wrong: str) -> None:
    """The reference passes, so does its reply in other words (``natural``); a reply saying the act was done fails, and
    so does the literal agent."""
    assert task.stats["literal_fails"], task.id
    assert _passes(task, runner, task.plan), task.id
    assert _passes(task, runner, _with_text(task, _reply(task), natural)), (task.id, natural)
    assert not _passes(task, runner, _with_text(task, _reply(task), wrong)), (task.id, wrong)


def test_every_request_of_these_intents_records_a_premise_and_both_outcomes_occur(requests: list[TaskSpec]) -> None:
    assert requests
    outcomes = [_premise(t) for t in requests]
    assert None not in outcomes, [t.scenario.archetype for t in requests if _premise(t) is None]  # type: ignore[union-attr]
    # Both outcomes, the act kept more often (a small set: a value is asked held already only with tools kept twice).
    false = outcomes.count(False)
    assert 0.1 * len(outcomes) <= false <= 0.6 * len(outcomes), (false, len(outcomes))


def test_a_value_held_already_changes_nothing_and_the_reply_says_why(library: Catalog, requests: list[TaskSpec]) -> None:
    false = [t for t in requests if _premise(t) is False]
    kinds = {t.scenario.archetype for t in false if t.scenario is not None}
    assert {"request-tag", "request-share", "request-invite", "request-assign"} <= kinds, kinds
    runner = Runner(library, false[0].world_seed)
    for task in false:
        writes = [s for s in task.plan if library.tool(s.service, s.tool).is_write]
        assert all(library.tool(s.service, s.tool).intent in ("reply", "send", "tag", "note") for s in writes), task.id
        assert task.stats["literal_fails"], task.id  # doing it anyway, and saying so, fails
        assert _passes(task, runner, task.plan), task.id
        reply = _reply(task)
        text = str(reply.arguments.get("body") or reply.arguments.get("text"))
        assert any(states(text, "premise", p) for p in ("already", "not there", "no access")), text
        # The same reply saying it was done fails; the reason said in other words passes.
        assert not _passes(task, runner, _with_text(task, reply, "Done: I did it.")), task.id
        natural = text.replace("I have not changed anything. ", "No change needed on my side. ").replace(" is already ", " was already ")
        assert _passes(task, runner, _with_text(task, reply, natural)), (task.id, natural)


def test_acting_on_a_value_held_already_fails_and_where_it_is_not_held_the_act_passes(
    library: Catalog, requests: list[TaskSpec]
) -> None:
    runner = Runner(library, requests[0].world_seed)
    true = [t for t in requests if _premise(t) is True]
    assert true
    for task in true:
        acts = [s for s in task.plan if library.tool(s.service, s.tool).intent in SAME and library.tool(s.service, s.tool).is_write]
        assert acts, task.id
        assert _passes(task, runner, task.plan), task.id
        assert not _passes(task, runner, [s for s in task.plan if s is not acts[0]]), task.id



@pytest.fixture(scope="module")
def chases(catalog: Catalog) -> list[TaskSpec]:
    tasks, _ = generate(GenerateConfig(n=16, seed=0, services=SERVICES, archetypes=("overdue-invoice-chase",)), catalog)
    return tasks


def test_a_chase_for_an_invoice_paid_since_sends_nothing_and_says_when_it_was_paid(
    catalog: Catalog, chases: list[TaskSpec]
) -> None:
    false, true = _branches(chases, "email_invoice")
    runner = Runner(catalog, chases[0].world_seed)
    for task in false:
        assert "overdue" in task.instruction  # the request reads as the usual chase
        invoice = next(s.arguments["invoice_number"] for s in task.plan if s.tool == "list_payments")
        paid_on = re.search(r"paid in full on (\d+ \w+)", _reply_text(task))
        assert paid_on, _reply_text(task)
        _says_why(task, runner, f"They settled {invoice} on {paid_on.group(1)}, nothing to chase.",
                  f"Done - I've sent the reminder for {invoice}.")
        chased = PlanStep(service="accounting", tool="email_invoice", arguments={"invoice_number": invoice})
        assert not _passes(task, runner, [*task.plan, chased]), task.id  # the reminder sent anyway
    for task in true:
        assert _passes(task, runner, task.plan), task.id


@pytest.fixture(scope="module")
def sheet_requests(library: Catalog) -> list[TaskSpec]:
    tasks, _ = generate(GenerateConfig(n=40, seed=1, services=library.names, archetypes=("request-share", "request-delete",
                                                                                         "request-update")), library)
    return tasks


def test_a_request_on_a_sheet_we_may_only_read_changes_nothing_and_names_whom_to_ask(
    library: Catalog, sheet_requests: list[TaskSpec]
) -> None:
    readonly = [t for t in sheet_requests if _premise(t) is False and "view access" in str(_reply(t).arguments)]
    assert readonly
    runner = Runner(library, readonly[0].world_seed)
    for task in readonly:
        writes = [s for s in task.plan if library.tool(s.service, s.tool).is_write]
        assert all(library.tool(s.service, s.tool).intent in ("reply", "send", "tag", "note") for s in writes), task.id
        assert task.stats["literal_fails"], task.id
        assert _passes(task, runner, task.plan), task.id
        reply = _reply(task)
        owner = re.search(r"\. (\w+) \w+ owns it", str(reply.arguments))
        assert owner, reply.arguments
        record = re.findall(r'"([^"]+)"', str(reply.arguments.get("body") or reply.arguments.get("text")))[0]
        natural = f"Sorry, I can't edit {record}: it's read-only for me. {owner.group(1)} is its owner, best to ask them."
        assert _passes(task, runner, _with_text(task, reply, natural)), (task.id, natural)
        assert not _passes(task, runner, _with_text(task, reply, "Done: I did it.")), task.id
        # Who asked may not change it either, and the request does not say the sheet is read-only.
        assert "view" not in task.instruction and "read-only" not in task.instruction


def test_a_signature_chase_for_a_customer_who_signed_since_sends_no_reminder_and_says_it_is_signed(library: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=16, seed=0, services=library.names, archetypes=("signature-reminder",)), library)
    false, true = _branches(tasks, "resend_envelope")
    runner = Runner(library, tasks[0].world_seed)
    for task in false:
        assert "Chase" in task.instruction or "reminder" in task.instruction  # it reads as the usual chase
        contract = re.search(r"has signed (\S+),", _reply_text(task))
        assert contract, _reply_text(task)
        _says_why(task, runner, f"They signed {contract.group(1)} yesterday - nothing to chase.",
                  f"Not signed yet; I sent a reminder on {contract.group(1)}.")
    for task in true:
        assert _passes(task, runner, task.plan), task.id


def test_of_two_requests_in_one_message_only_the_first_may_find_its_premise_false(library: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=40, seed=0, services=library.names, archetypes=("request-pair",)), library)
    assert tasks
    outcomes = [[d["default"] for d in t.stats["decisions"] if d["kind"] == "premise"] for t in tasks]
    assert all(o.count(False) <= 1 for o in outcomes), outcomes
    assert any(False in o for o in outcomes) and any(o and False not in o for o in outcomes), outcomes
    for task, outcome in zip(tasks, outcomes, strict=True):  # doing both as asked fails where one was so already
        if False in outcome:
            assert task.stats["literal_fails"], task.id
