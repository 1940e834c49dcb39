"""On tasks composed by the composer: reference passes, null fails, and grades match the composer's."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents import AgentConfig
from harness.collect import CollectConfig, collect
from harness.evaluate import read_run
from harness.grading import regrade
from harness.runner import RunnerConfig
from mcp_services.tasks.spec import TaskSpec

generate = pytest.importorskip("composer.generate")
verify = pytest.importorskip("composer.verify")


@pytest.fixture(scope="module")
def composed() -> list[TaskSpec]:
    tasks, _ = generate.generate(generate.GenerateConfig(n=6, seed=0))
    assert tasks, "the composer kept no task"
    return tasks


def test_reference_passes_every_composed_task_and_null_passes_none(composed: list[TaskSpec], tmp_path: Path) -> None:
    # The composer's own exact check (episode_for + Episode.diff, as the harness grades) names the
    # tasks whose reference plan fails their criteria; those are composer bugs, reported as such.
    broken = {t.id: verify.verify_task_exact(t) for t in composed}
    broken = {task_id: problems for task_id, problems in broken.items() if problems}
    for mode in ("direct", "discover"):
        out = tmp_path / f"reference-{mode}"
        config = CollectConfig(out=out, progress=False, runner=RunnerConfig(mode=mode))  # type: ignore[arg-type]
        collect(config, tasks=composed, log=lambda _: None)
        trajectories = read_run(out)
        failed = {t.task_id for t in trajectories if not t.passed}
        assert failed == set(broken), f"reference failed {failed}; composer's exact verification flags {broken}"
        by_id = {t.id: t for t in composed}
        assert all(regrade(t, by_id[t.task_id]).agrees_with(t) for t in trajectories)
    out = tmp_path / "null"
    collect(CollectConfig(out=out, progress=False, agent=AgentConfig("null")), tasks=composed, log=lambda _: None)
    assert not any(t.passed for t in read_run(out))
