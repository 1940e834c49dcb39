"""What the data decides: every kept task records its decisions, follow-ups come from written procedures, a request's
premise can be false, and `composer stats` prints the kinds, their shares and the stock follow-ups (none)."""

from __future__ import annotations

import dataclasses

import pytest

from composer.catalog import Catalog
from composer.decisions import DECISION_KINDS, Decision, decision_stats, merged, near_threshold, stock_follow_up
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES, Scenario
from composer.stats import format_stats, task_stats
from composer.verify import reference_answer, run_plan
from mcp_services.tasks.spec import TaskSpec

from tests.composer.conftest import SERVICES


@pytest.fixture(scope="module")
def decided(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=40, seed=1, services=SERVICES), catalog)


def test_every_kept_task_records_at_least_one_decision_of_a_known_kind(decided: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, report = decided
    assert tasks
    for task in tasks:
        recorded = task.stats["decisions"]
        assert recorded, task.scenario
        assert {d["kind"] for d in recorded} <= set(DECISION_KINDS)
    assert sum(report.dropped.values()) + report.kept == report.candidates


def test_a_candidate_nothing_decides_is_dropped_and_counted(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    # A customer's call booked at the time they ask, with no walk (no procedure to follow): the meeting rules decide
    # its title. Taken away, nothing in the data bears on the work, and `composer generate` drops every candidate
    # (no flag asks for that) with the reason counted.
    base = ARCHETYPES["meeting-request"]

    def undecided(s: Scenario) -> None:
        base.build(s)
        s.decisions.clear()
        s.traps.clear()
        s.policy = None
        s.rules_read.clear()

    monkeypatch.setattr("composer.compose.extend", lambda s, rng: [])
    monkeypatch.setitem(ARCHETYPES, "undecided-call", dataclasses.replace(base, id="undecided-call", build=undecided))
    tasks, report = generate(GenerateConfig(n=6, seed=2, services=SERVICES, archetypes=("undecided-call",)), catalog)
    assert not tasks and report.dropped["no-decision"] == report.candidates == 6, report.summary()
    assert report.details["no-decision: undecided-call"] == 6
    # With its rule, the same workflow is kept: what dropped it was that nothing decided.
    tasks, report = generate(GenerateConfig(n=6, seed=2, services=SERVICES, archetypes=("meeting-request",)), catalog)
    assert tasks and not report.dropped["no-decision"], report.summary()
    assert all("rule" in {d["kind"] for d in t.stats["decisions"]} for t in tasks)


#: Workflows whose rule has a deciding value and a threshold (a limit, a window, a balance, a line in days).
NUMERIC_RULES = ("campaign-frequency-cap", "time-off-decision", "store-return-refund", "overdue-invoice-chase",
                 "expense-missing-receipt", "bug-status-chase", "goodwill-discount", "parcel-exception")


def test_numeric_rules_record_their_value_near_the_threshold_often_and_still_bite() -> None:
    from composer.catalog import load_catalog

    library = load_catalog(("marketing", "hr", "mailbox", "chat", "commerce", "shipping", "accounting", "expenses",
                            "projects", "files", "docs", "helpdesk"))
    tasks, report = generate(GenerateConfig(n=4 * len(NUMERIC_RULES), seed=0, services=library.names,
                                            archetypes=NUMERIC_RULES, worlds=2), library)
    rules = {t.scenario.archetype: [] for t in tasks if t.scenario}  # type: ignore[union-attr]
    for task in tasks:
        assert task.scenario is not None
        rules[task.scenario.archetype].append([d for d in task.stats["decisions"] if d["kind"] == "rule"])
    assert len(rules) >= len(NUMERIC_RULES) - 1, report.summary()
    recorded = [r for found in rules.values() for r in found]
    # A rule task of these workflows says how close its deciding value came to the threshold (all but one whose
    # premise failed first: a receipt that never came leaves the report as it is, whatever its amounts).
    valued = [r for r in recorded if any("near" in d for d in r)]
    assert len(valued) >= 0.85 * len(recorded), [r for r in recorded if r not in valued]
    stats = decision_stats([task.stats["decisions"] for task in tasks])
    assert stats["rule_near_threshold"] >= 0.3, stats
    assert stats["rule_non_default"] >= 0.4, stats


def test_a_rule_task_is_non_default_where_the_rule_changed_the_plan(tasks: list[TaskSpec]) -> None:
    for task in tasks:
        rules = [d for d in task.stats["decisions"] if d["kind"] == "rule"]
        if "ignores-policy" in {cf.id for cf in task.counterfactuals}:
            assert any(d["default"] is False for d in rules), task.stats["decisions"]


def test_follow_ups_come_from_a_procedure_the_request_only_points_at(catalog: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=12, seed=0, services=SERVICES, archetypes=("email-to-ticket", "double-charge-refund")),
                        catalog)
    walked = [t for t in tasks if t.scenario is not None and t.scenario.walk]
    assert walked
    runner = Runner(catalog, walked[0].world_seed)
    for task in walked:
        assert "procedure" in {d["kind"] for d in task.stats["decisions"]}
        written = [r for r in task.setup if "follow-up procedure" in str(r.row)]
        assert any("Once a request from outside the company" in str(r.row) for r in written)
        assert "procedure" in task.instruction and "Check in with" not in task.instruction
        # An agent that does what the words say and never reads the procedure fails.
        follow_ups = len(task.scenario.walk)
        writes = [j for j, step in enumerate(task.plan) if catalog.tool(step.service, step.tool).is_write]
        literal = [step for j, step in enumerate(task.plan) if j not in writes[-follow_ups:]]
        runner.fresh(task.setup)
        run_plan(runner.call, literal, stop=False)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, task.id


def test_a_request_done_already_changes_nothing_and_says_why(catalog: Catalog) -> None:
    from composer.catalog import load_catalog

    library = load_catalog(("commerce", "shipping", "forms", "mailbox", "chat", "hr", "files"))
    tasks, _ = generate(GenerateConfig(n=30, seed=0, services=library.names, archetypes=("request-close", "request-cancel",
                                                                                          "request-reopen")), library)
    false = [t for t in tasks if any(d["kind"] == "premise" and d["default"] is False and "still needs" in d["what"]
                                     for d in t.stats["decisions"])]
    assert false
    runner = Runner(library, false[0].world_seed)
    for task in false:
        assert task.stats["literal_fails"], task.id  # an agent that does as asked without checking fails it
        writes = [s for s in task.plan if library.tool(s.service, s.tool).is_write]
        assert all(library.tool(s.service, s.tool).intent in ("reply", "send", "tag") for s in writes), [s.tool for s in writes]
        # Doing as asked anyway, then saying it is done, fails.
        runner.fresh(task.setup)
        run_plan(runner.call, task.plan, stop=False)
        assert task.grade(runner.diff(), reference_answer(task)).passed
        reply = next(s for s in task.plan if "already" in str(s.arguments))
        said_done = reply.model_copy(update={"arguments": {k: ("Done: I did it." if "already" in str(v) else v)
                                                           for k, v in reply.arguments.items()}})
        runner.fresh(task.setup)
        run_plan(runner.call, [said_done if s is reply else s for s in task.plan], stop=False)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, task.id


def test_stats_print_the_kinds_their_shares_the_rule_figures_and_stock_follow_ups(
    decided: tuple[list[TaskSpec], GenerateReport]
) -> None:
    stats = task_stats(decided[0])
    assert stats["decisions"]["with_decision"] == 1.0
    assert stats["decisions"]["stock_follow_ups"] == 0
    text = format_stats(stats)
    assert "decisions              100% of tasks have one; kinds: rule" in text
    assert "non-default outcome" in text and "near the threshold" in text and "0 stock follow-ups" in text
    assert f"literal agent          fails {stats['decisions']['literal_agent_fails']:.0%} of tasks" in text


def test_a_customer_wrong_about_a_double_charge_gets_no_refund_and_hears_what_the_charge_paid(catalog: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=16, seed=0, services=SERVICES, archetypes=("double-charge-refund",)), catalog)
    false = [t for t in tasks if any(d["kind"] == "premise" and d["default"] is False for d in t.stats["decisions"])]
    true = [t for t in tasks if any(d["kind"] == "premise" and d["default"] is True for d in t.stats["decisions"])]
    assert false and true
    for task in false:
        assert not any(step.tool == "refund_charge" for step in task.plan)
        assert task.stats["literal_fails"]  # refunding "the duplicate" anyway fails
        # The request reads the same either way: it does not say whether there is a duplicate.
        assert "refund the duplicate if there is one" in task.instruction


def test_a_rule_s_limit_lies_near_the_value_it_decides_most_of_the_time() -> None:
    import random

    from composer.stages.rules import limit_near

    class _S:
        rng = random.Random(0)

    limits = [limit_near(_S(), amount) for amount in (87.5, 240.0, 1645.75, 3380.0, 512.3) * 20]  # type: ignore[arg-type]
    amounts = (87.5, 240.0, 1645.75, 3380.0, 512.3) * 20
    assert all(limit != amount for limit, amount in zip(limits, amounts))
    assert sum(near_threshold(a, l) for a, l in zip(amounts, limits)) >= 0.6 * len(limits)


def test_a_stock_chore_or_a_walk_no_procedure_asks_for_is_a_stock_follow_up() -> None:
    assert stock_follow_up('Also put half an hour in the calendar called "Check in with Ana Ruiz".', [], [])
    assert stock_follow_up("Refund Ana.", ["note"], [{"kind": "rule", "what": "x"}])
    assert not stock_follow_up("Refund Ana. Follow our support request follow-up procedure.", ["note"],
                               [{"kind": "procedure", "what": "Support request follow-up procedure"}])


def test_near_threshold_is_within_ten_percent_either_side() -> None:
    assert near_threshold(460, 500) and near_threshold(549, 500)
    assert not near_threshold(440, 500) and not near_threshold(560, 500)


def test_a_rule_read_then_applied_is_one_decision_applied() -> None:
    found = merged([Decision("rule", "refund limit", default=None, near=True), Decision("rule", "refund limit", default=False)])
    assert found == [Decision("rule", "refund limit", default=False, near=True)]


def test_decision_shares_count_rule_outcomes_among_rule_tasks_only() -> None:
    stats = decision_stats([
        [{"kind": "rule", "what": "a", "default": False, "near": True}],
        [{"kind": "rule", "what": "b", "default": True}],
        [{"kind": "premise", "what": "c", "default": False}],
        [],
    ])
    assert stats["with_decision"] == 0.75
    assert stats["rule_tasks"] == 2 and stats["rule_non_default"] == 0.5 and stats["rule_near_threshold"] == 0.5
    assert stats["premise_false"] == 0.25 and stats["kinds"]["premise"] == 0.25
