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
    tasks, _ = generate(GenerateConfig(n=60, seed=0, services=library.names, archetypes=_ARCHETYPES), library)
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


def test_every_request_of_these_intents_records_a_premise_and_both_outcomes_occur(requests: list[TaskSpec]) -> None:
    assert requests
    outcomes = [_premise(t) for t in requests]
    assert None not in outcomes, [t.scenario.archetype for t in requests if _premise(t) is None]  # type: ignore[union-attr]
    false = outcomes.count(False)
    assert 0.25 * len(outcomes) <= false <= 0.6 * len(outcomes), (false, len(outcomes))


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
        assert states(text, "premise", "already") or states(text, "premise", "not there"), text
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
    false = [t for t in chases if _premise(t) is False]
    true = [t for t in chases if _premise(t) is True]
    assert false and true
    runner = Runner(catalog, chases[0].world_seed)
    for task in false:
        assert not any(s.tool == "email_invoice" for s in task.plan), task.id
        assert "overdue" in task.instruction  # the request reads as the usual chase
        assert task.stats["literal_fails"], task.id
        assert _passes(task, runner, task.plan), task.id
        reply = _reply(task)
        text = str(reply.arguments.get("body") or reply.arguments.get("text"))
        invoice = next(s.arguments["invoice_number"] for s in task.plan if s.tool == "list_payments")
        paid_on = re.search(r"paid in full on (\d+ \w+)", text)
        assert paid_on, text
        # Saying when it was paid, in other words, passes; a reminder sent anyway, or a reply saying one went, fails.
        assert _passes(task, runner, _with_text(task, reply, f"They settled {invoice} on {paid_on.group(1)}, nothing to chase.")), task.id
        assert not _passes(task, runner, _with_text(task, reply, f"Done - I've sent the reminder for {invoice}.")), task.id
        chased = PlanStep(service="accounting", tool="email_invoice", arguments={"invoice_number": invoice})
        assert not _passes(task, runner, [*task.plan, chased]), task.id
    for task in true:
        assert any(s.tool == "email_invoice" for s in task.plan), task.id
        assert _passes(task, runner, task.plan), task.id
