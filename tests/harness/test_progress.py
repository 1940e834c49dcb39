"""Long runs say so: a first rollout that predicts hours gives one line, and a slow agent says it at the start."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from harness.agents import AgentConfig, make_agent
from harness.agents.hf_agent import HFAgent
from harness.collect import CollectConfig, collect_async
from harness.progress import Progress
from mcp_services.tasks.spec import TaskSpec


def test_a_run_that_will_take_hours_says_so_once_after_the_first_rollout() -> None:
    lines: list[str] = []
    progress = Progress(187, stream=io.StringIO(), warn=lines.append, long_s=0.0)  # any rate is "long" here
    progress.update(True)
    progress.update(False)
    assert len(lines) == 1
    assert lines[0].startswith("at ") and " s per rollout so far, the 186 rollouts left take about " in lines[0]
    assert lines[0].endswith(" hours (fewer tasks or rollouts, or a faster model, take less)")


def test_a_run_within_the_hour_gives_no_warning() -> None:
    lines: list[str] = []
    progress = Progress(3, stream=io.StringIO(), warn=lines.append, long_s=3600.0)
    for _ in range(3):
        progress.update(True)
    assert lines == []


def test_an_hf_agent_on_the_cpu_says_generation_is_slow_before_the_first_rollout() -> None:
    torch = pytest.importorskip("torch")
    note = HFAgent("smollm2", device="cpu").start_note()  # nothing loads: the note comes before the model
    assert note is not None and note.startswith("hf:smollm2 generates on the CPU, one turn at a time, which is slow")
    if torch.cuda.is_available():
        assert HFAgent("smollm2", device="cuda").start_note() is None


def test_collect_prints_the_agents_start_note_first(tmp_path: Path, tasks: list[TaskSpec]) -> None:
    agent = make_agent(AgentConfig(spec="reference"), {task.id: task for task in tasks})
    agent.start_note = lambda: "this agent is slow"  # type: ignore[attr-defined]
    lines: list[str] = []
    config = CollectConfig(out=tmp_path / "run", progress=True)
    asyncio.run(collect_async(config, agent=agent, tasks=tasks[:1], log=lines.append))
    assert "harness: this agent is slow" in lines
