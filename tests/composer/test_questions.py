"""Questions the data decides: a colleague asks for a figure worked out from several records (a count, a total, the most
recent date) or about the one of two look-alikes their clue picks. Every such task records its decision; a correct
answer in other words passes ("three", "$6,910", "2025-05-24"), and an answer that lists other figures of the records
read beside the right one fails."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from composer.catalog import Catalog, load_catalog
from composer.content import other_figures
from composer.generate import GenerateConfig, generate
from composer.runner import Runner
from mcp_services.tasks.checks import AnswerCheck, AnswerExcludes, RowAbsent, RowExists
from mcp_services.tasks.spec import TaskSpec
from tests.composer.archetype_checks import passes, with_reply

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def questions(catalog: Catalog) -> list[TaskSpec]:
    tasks, _ = generate(GenerateConfig(n=30, seed=5, archetypes=("request-question",)), catalog)
    assert len(tasks) >= 20
    return tasks


def _stated(task: TaskSpec) -> Iterator[dict[str, Any]]:
    """The facts the task's messages must state (their ``$states`` conditions)."""
    for check in task.checks:
        if isinstance(check, RowExists):
            for cond in check.match.values():
                if isinstance(cond, dict):
                    yield from cond.get("$states", [])


def _unsaid(task: TaskSpec) -> list[dict[str, Any]]:
    return [fact for check in task.checks if isinstance(check, RowAbsent) and "-not-" in check.id
            for cond in check.match.values() if isinstance(cond, dict) for fact in cond.get("$states", [])]


def _figure(task: TaskSpec) -> dict[str, Any] | None:
    return next((f for f in _stated(task) if f["kind"] in ("number", "money", "date")), None)


def _in_other_words(fact: dict[str, Any]) -> str:
    value = fact["value"]
    if fact["kind"] == "number":
        return f"I went through them: {_WORDS[value] if value < len(_WORDS) else value}, as of this morning."
    if fact["kind"] == "money":
        return f"Adding them up I get ${value:,.2f} altogether."
    return f"That was {value}, going by the records."  # a date in ISO form, where the reference wrote "24 May"


def test_every_request_question_task_carries_a_decision(questions: list[TaskSpec]) -> None:
    kinds = [{d["kind"] for d in t.stats["decisions"]} for t in questions]
    assert all(k & {"figure", "pick"} for k in kinds), kinds
    assert sum(1 for k in kinds if "figure" in k) >= len(kinds) / 2  # most ask for a figure


def test_a_count_or_total_answered_in_other_words_passes(catalog: Catalog, questions: list[TaskSpec]) -> None:
    runner = Runner(catalog, questions[0].world_seed)
    figures = [(t, f) for t in questions if (f := _figure(t)) is not None and any(d["kind"] == "figure" for d in t.stats["decisions"])]
    assert {f["kind"] for _, f in figures} >= {"number"}
    for task, fact in figures:
        assert passes(task, runner, task.plan), task.id
        assert passes(task, runner, with_reply(task, _in_other_words(fact))), (task.id, fact)


def test_a_figure_answer_that_lists_other_figures_of_the_records_read_fails(catalog: Catalog, questions: list[TaskSpec]) -> None:
    runner = Runner(catalog, questions[0].world_seed)
    tried = 0
    for task in questions:
        fact, others = _figure(task), _unsaid(task)
        if fact is None or not others:
            continue
        assert any(cf.id == "list-answer" for cf in task.counterfactuals), task.id
        listing = f"{_in_other_words(fact)} Other figures I saw: {', '.join(str(o['value']) for o in others)}."
        assert not passes(task, runner, with_reply(task, listing)), task.id
        tried += 1
    assert tried >= 10


def test_the_literal_agent_answers_with_the_careless_figure_and_fails(questions: list[TaskSpec]) -> None:
    figures = [t for t in questions if any(d["kind"] == "figure" for d in t.stats["decisions"])]
    assert sum(1 for t in figures if t.stats["literal_fails"]) >= 0.8 * len(figures)


def test_other_figures_are_those_of_the_answers_kind() -> None:
    items = [{"total": 120.5, "count": 3, "due_date": "2025-05-12", "created_at": "2025-04-02T09:00:00Z", "name": "A"},
             {"total": 80.0, "count": 5, "due_date": "2025-05-20", "created_at": "2025-05-20T10:00:00Z", "name": "B"}]
    assert other_figures(80.0, items) == [120.5]
    assert other_figures(5, items) == [3]
    assert other_figures("2025-05-20", items) == ["2025-05-12", "2025-04-02"]
    assert other_figures("the name", items) == []


def test_an_answer_states_a_count_in_words_and_is_not_fooled_by_the_day_of_a_date() -> None:
    count = AnswerCheck(id="a", description="", expected=3, match="number")
    assert count.holds({}, "Acme has three open tickets.")
    assert count.holds({}, "3 of them, as of 12 May.")
    assert not count.holds({}, "None were opened after 3 May.")
    only = AnswerExcludes(id="b", description="", values=[12, "2025-05-20", 80.0])
    assert only.holds({}, "Three tickets, counted on 12 May 2025.")  # 12 is the day, not a figure
    assert not only.holds({}, "Three tickets; the last one on 20 May.")  # the other date, in other words
    assert not only.holds({}, "Three tickets, or twelve.")
    assert not only.holds({}, "3, or $80 in all.")


def test_the_rest_of_an_invoice_paid_off_in_part_is_worked_out_and_recording_its_total_fails() -> None:
    services = ("accounting", "mailbox", "chat", "sms", "voice", "helpdesk", "forms", "files")
    catalog = load_catalog(services)
    tasks, _ = generate(GenerateConfig(n=16, seed=3, services=services, archetypes=("bank-payment-recorded",)), catalog)
    runner = Runner(catalog, tasks[0].world_seed)
    rest = [t for t in tasks if any(d["what"].startswith("what the rest of the invoice") for d in t.stats["decisions"])]
    assert rest
    for task in rest:
        assert task.stats["literal_fails"], task.id
        said = [str(cell) for record in task.setup for cell in record.row.values() if "the rest of invoice" in str(cell)]
        assert said, task.id  # the customer says they paid the rest, not how much
        paid = next(step for step in task.plan if step.tool == "create_payment")
        runner.fresh(task.setup)
        invoice = runner.call("accounting", "get_invoice", {"invoice_number": paid.arguments["invoice_number"]}).data
        assert paid.arguments["amount"] == invoice["amount_due"] < invoice["total"], task.id
        assert not any(f"{invoice['amount_due']:,.2f}" in text for text in [task.instruction, *said])  # the agent's to work out
        total = [s.model_copy(update={"arguments": {**s.arguments, "amount": invoice["total"]}}) if s is paid else s for s in task.plan]
        assert not passes(task, runner, total), task.id
