"""Generated tasks: scenarios with a purpose, verified, non-vacuous, with checked traps, byte-stable."""

from __future__ import annotations

from collections import Counter

from composer.catalog import Catalog
from composer.generate import GenerateConfig, GenerateReport, generate, schedule, usable_archetypes
from composer.runner import Runner
from composer.verify import empty_diff, leaks, verify_task, verify_task_exact
from mcp_services.tasks.checks import InfoFlow, RowUnchanged
from mcp_services.tasks.spec import TaskSpec

from .archetype_checks import assert_every_write_is_needed
from .conftest import N, SEED, SERVICES


def test_most_candidates_become_verified_tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, report = generated
    assert report.candidates == N
    assert report.kept == len(tasks) >= N * 0.8, report.summary()
    assert sum(report.dropped.values()) == N - report.kept


def test_every_generated_task_passes_verification_on_a_fresh_episode(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    runner = Runner(catalog, tasks[0].world_seed)
    for task in tasks:
        assert verify_task(task, runner) == [], task.id


def test_verification_agrees_with_the_harness_grading_path(tasks: list[TaskSpec]) -> None:
    for task in tasks[:3]:
        assert verify_task_exact(task) == [], task.id


def test_leaving_out_any_requested_change_fails(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    assert_every_write_is_needed(catalog, [t for t in tasks if t.answer is None])  # a question's work is its answer


def test_no_criterion_passes_when_nothing_is_done(tasks: list[TaskSpec]) -> None:
    for task in tasks:
        by_id = {c.id: c for c in task.checks}
        idle = task.grade(empty_diff(task), None)
        assert not any(idle.criteria.values()), task.id
        for item in task.rubric:
            assert any(not by_id[c].negative for c in item.checks), (task.id, item.id)


def test_traps_are_real_records_kept_untouched_and_following_them_fails(tasks: list[TaskSpec]) -> None:
    trapped = [t for t in tasks if t.traps]
    assert trapped
    for task in trapped:
        guarded = {(c.service, c.table, c.key) for c in task.checks if isinstance(c, RowUnchanged)}
        assert {(t.service, t.table, t.key) for t in task.traps} <= guarded, task.id
        assert any(cf.id.startswith("trap") for cf in task.counterfactuals) or task.scenario.policy_in_data  # type: ignore[union-attr]


def test_every_task_comes_from_a_scenario_and_both_phrasings_appear(tasks: list[TaskSpec]) -> None:
    assert all(t.scenario is not None for t in tasks)
    phrasings = Counter(t.scenario.phrasing for t in tasks if t.scenario)
    assert set(phrasings) == {"guided", "goal"}, phrasings
    triggered = [t for t in tasks if t.scenario and t.scenario.trigger]
    assert len(triggered) >= 0.6 * len(tasks)
    for task in triggered:
        trigger = task.scenario.trigger  # type: ignore[union-attr]
        assert any(r.service == trigger.service and r.table == trigger.table and str(r.row["id"]) == trigger.key for r in task.setup)


def test_requests_never_state_a_value_the_agent_must_look_up(tasks: list[TaskSpec]) -> None:
    for task in tasks:
        assert leaks(task) == [], task.id


def test_values_flow_only_where_the_archetype_says_a_workflow_puts_them() -> None:
    # Workflows that carry a value from one service into another (an invoice's amount into a reminder).
    carrying = ("overdue-invoice-chase", "meeting-reminder-text")
    tasks, _ = generate(GenerateConfig(n=6, seed=SEED, services=SERVICES, archetypes=carrying))
    flows = [c for t in tasks for c in t.checks if isinstance(c, InfoFlow)]
    assert flows
    for task in tasks:
        described = " ".join(r.description.lower() for r in task.rubric if r.id.startswith("flow"))
        for check in (c for c in task.checks if isinstance(c, InfoFlow)):
            assert check.service in described, (task.id, check.id)


def test_archetypes_are_taken_in_turn_so_a_set_covers_them_all(catalog: Catalog) -> None:
    archetypes = usable_archetypes(catalog, GenerateConfig(n=1))
    per_round = {a.id: max(1, round(a.weight_for(catalog))) for a in archetypes}
    order = schedule(archetypes, sum(per_round.values()) * 2, SEED, catalog)
    assert Counter(a.id for a in order) == {a: 2 * n for a, n in per_round.items()}
    assert per_round["request-pair"] > per_round["request-tag"] == 1  # two things in one message come more often
    assert schedule(archetypes, 10, SEED, catalog) == schedule(archetypes, 10, SEED, catalog)


def test_the_same_seed_gives_the_same_bytes(catalog: Catalog, tasks: list[TaskSpec]) -> None:
    again, _ = generate(GenerateConfig(n=4, seed=SEED, services=SERVICES), catalog)
    assert [t.to_json() for t in again] == [t.to_json() for t in tasks[: len(again)]]


def test_large_sets_spread_over_many_worlds_one_block_each() -> None:
    small, large = GenerateConfig(n=200), GenerateConfig(n=2000, seed=3)
    assert small.world_count == 1 and large.world_count == 100
    seeds = [large.world_of(i) for i in range(large.n)]
    assert seeds == sorted(seeds) and len(set(seeds)) == 100  # consecutive candidates share a world
    assert GenerateConfig(n=50, worlds=5).world_of(49) == 4


def test_a_world_count_outside_the_set_is_refused() -> None:
    import pytest

    from composer.errors import ComposerError

    with pytest.raises(ComposerError, match="--worlds must be from 1 to --n"):
        GenerateConfig(n=10, worlds=11).validate()
