"""What the adapter tests share: a small task set (composed by the composer, plus the hand-made crm
tasks), the harness's own grades of each task's reference plan, and a scripted model that replays
those plans over the OpenAI chat API."""

from __future__ import annotations

import asyncio
import json
from functools import lru_cache
from typing import Any

from fake_openai import tool_call
from harness_fixtures import crm_tasks

from harness.agents import ReferenceAgent
from harness.agents.reference import reference_answer, reference_calls
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import InProcessTransport
from mcp_services.tasks.spec import TaskSpec

Grade = tuple[dict[str, bool], float, bool]  # criteria, rubric score, passed


@lru_cache(maxsize=1)
def adapter_tasks() -> tuple[TaskSpec, ...]:
    """The composer's tasks for seed 0 (several services, distractors, questions) and the crm ones
    (a setup record, a question): composed once per test process."""
    from composer.generate import GenerateConfig, generate

    composed, _ = generate(GenerateConfig(n=4, seed=0))
    assert composed, "the composer kept no task"
    tasks = tuple(composed) + tuple(crm_tasks())
    assert len({t.instruction for t in tasks}) == len(tasks), "the replay model tells tasks apart by their request"
    return tasks


def harness_grades(tasks: tuple[TaskSpec, ...], mode: str) -> dict[str, Grade]:
    """What ``harness collect`` gives each task's reference plan: the baseline the adapters must match."""

    async def run() -> dict[str, Grade]:
        transport = InProcessTransport()
        try:
            grades, agent, config = {}, ReferenceAgent(tasks), RunnerConfig(mode=mode)  # type: ignore[arg-type]
            for task in tasks:
                t = await run_episode(RolloutJob(task, 0, 0), agent, transport, config)
                grades[task.id] = (t.criteria, t.rubric_score, t.passed)
            return grades
        finally:
            transport.close()

    return asyncio.run(run())


class ReferenceReplay:
    """``FakeOpenAI`` reply: the reference agent's turns (one call per turn, then the answer) for the
    task whose request opens the conversation."""

    def __init__(self, tasks: tuple[TaskSpec, ...], mode: str) -> None:
        self.by_request = {t.instruction: t for t in tasks}
        self.mode = mode

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        task = self.by_request[messages[1]["content"]]
        done = sum(1 for m in messages if m["role"] == "tool")
        calls = reference_calls(task, self.mode)
        if done >= len(calls):
            return {"content": reference_answer(task)}
        name, arguments = calls[done]
        return {"content": None, "tool_calls": [tool_call(f"call_{done}", name, json.dumps(arguments))]}
