"""The verifiers adapter: one private episode per rollout, graded as the harness grades, CFRR per group.

A scripted OpenAI-compatible model on 127.0.0.1 (``fake_openai``) drives every rollout through
verifiers' own evaluation (``Environment.evaluate`` and the ``vf-eval`` command). Skips without the
``verifiers`` extra.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from adapter_tasks import ReferenceReplay, adapter_tasks, harness_grades
from fake_openai import FakeOpenAI, tool_call
from harness_fixtures import note_task

from harness.agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.errors import HarnessInputError
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import InProcessTransport
from mcp_services.tasks.rewards import completion_focused_rubric_reward
from mcp_services.tasks.spec import write_tasks

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("verifiers") is None, reason="needs the verifiers extra: pip install -e '.[verifiers]'"
)

REPO = Path(__file__).resolve().parents[2]


def evaluate(env: Any, reply: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """verifiers' own evaluation against the scripted model; the outputs carry each rollout's grade."""
    from openai import AsyncOpenAI

    with FakeOpenAI(reply) as server:
        client = AsyncOpenAI(base_url=server.url, api_key="test", max_retries=0)
        result = asyncio.run(env.evaluate(client, "scripted", state_columns=["compoworld"], **kwargs))
    return list(result["outputs"])


def test_load_environment_gives_a_verifiers_environment_with_one_row_per_task(tmp_path: Path) -> None:
    import verifiers as vf

    from harness.adapters.verifiers import load_environment

    tasks = adapter_tasks()
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks)
    env = load_environment(tasks=str(path), mode="direct", reward="cfrr", max_turns=32)
    assert isinstance(env, vf.Environment)
    rows = env.dataset.to_list()
    assert [json.loads(r["info"])["task_id"] for r in rows] == [t.id for t in tasks]
    first = rows[0]["prompt"]
    assert [m["role"] for m in first] == ["system", "user"] and first[1]["content"] == tasks[0].instruction
    assert env.max_turns == 32 and env.reward_kind == "cfrr"


@pytest.mark.parametrize(("mode", "transport"), [
    ("direct", "inprocess"),
    ("discover", "inprocess"),
    pytest.param("direct", "http", marks=pytest.mark.e2e),  # a task server per rollout, each with its own token
])
def test_reference_plans_through_verifiers_get_the_harness_grades(mode: str, transport: str) -> None:
    from harness.adapters.verifiers import load_environment

    tasks = adapter_tasks() if transport == "inprocess" else adapter_tasks()[:2]
    expected = harness_grades(tasks, mode)
    env = load_environment(tasks=list(tasks), mode=mode, reward="rubric", transport=transport)
    outputs = evaluate(env, ReferenceReplay(tasks, mode))
    assert len(outputs) == len(tasks)
    for output in outputs:
        grade = output["compoworld"]
        criteria, rubric_score, passed = expected[grade["task_id"]]
        assert (grade["criteria"], grade["rubric_score"], grade["passed"]) == (criteria, rubric_score, passed)
        assert output["reward"] == rubric_score and output["metrics"]["passed"] == float(passed)
        assert grade["stop"] == "answer" and output["error"] is None
    assert sum(g[2] for g in expected.values()) >= len(tasks) - 1  # the replay really solves the tasks
    assert env.open_episodes == 0


def _alternating_model(body: dict[str, Any], counter: dict[str, int], lock: threading.Lock) -> dict[str, Any]:
    """Rollouts numbered in order of their first request: even ones do the note task, odd ones do nothing."""
    messages = body["messages"]
    assistants = [m for m in messages if m["role"] == "assistant"]
    if not assistants:
        with lock:
            number = counter["n"]
            counter["n"] += 1
        if number % 2:
            return {"content": "I did nothing."}
        arguments = {"query": "David Anderson"}
        return {"content": f"rollout {number}", "tool_calls": [tool_call("c0", "crm__search_contacts", arguments)]}
    if len(assistants) == 1:
        note = {"entity_type": "company", "entity_id": "co_0004", "body": "Renewal call booked"}
        return {"content": None, "tool_calls": [tool_call("c1", "crm__add_note", note)]}
    return {"content": "Noted."}


def test_cfrr_is_a_group_reward_over_the_rollouts_of_one_task() -> None:
    from harness.adapters.verifiers import load_environment

    counter, lock = {"n": 0}, threading.Lock()
    env = load_environment(tasks=[note_task()], reward="cfrr", beta=2.0, lam=0.25)
    outputs = evaluate(env, lambda body: _alternating_model(body, counter, lock), rollouts_per_example=4)
    scores = [o["compoworld"]["criterion_scores"] for o in outputs]
    assert sorted(o["compoworld"]["passed"] for o in outputs) == [False, False, True, True]
    # The group's rewards are CFRR over the group's own criterion scores, with the knobs given.
    expected = completion_focused_rubric_reward(scores, beta=2.0, lam=0.25)
    assert [o["reward"] for o in outputs] == pytest.approx(expected)
    assert [o["metrics"]["cfrr"] for o in outputs] == pytest.approx(expected)
    passing = {o["reward"] for o in outputs if o["compoworld"]["passed"]}
    failing = {o["reward"] for o in outputs if not o["compoworld"]["passed"]}
    assert min(passing) > max(failing)


def test_the_tool_calls_of_the_last_turn_run_and_are_graded_as_in_the_harness() -> None:
    from harness.adapters.verifiers import load_environment

    note = {"entity_type": "company", "entity_id": "co_0004", "body": "Renewal call booked"}
    turns = [
        AgentTurn(tool_calls=(ToolCallRequest("crm__search_contacts", json.dumps({"query": "David Anderson"})),)),
        AgentTurn(tool_calls=(ToolCallRequest("crm__add_note", json.dumps(note)),)),
    ]

    async def harness_run() -> Any:
        transport = InProcessTransport()
        try:
            job = RolloutJob(note_task(), 0, 0)
            return await run_episode(job, ScriptedAgent(turns), transport, RunnerConfig(max_turns=2))
        finally:
            transport.close()

    trajectory = asyncio.run(harness_run())

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        call = turns[done].tool_calls[0]
        return {"content": None, "tool_calls": [tool_call(f"c{done}", call.name, call.arguments)]}

    (output,) = evaluate(load_environment(tasks=[note_task()], reward="binary", max_turns=2), reply)
    grade = output["compoworld"]
    assert trajectory.stop_reason == "max_turns" and grade["stop"] == "max_turns"
    assert (grade["criteria"], grade["passed"]) == (trajectory.criteria, trajectory.passed)
    assert grade["passed"] and grade["n_tool_calls"] == 2
    assert json.loads(output["completion"][-1]["content"])["success"] is True  # the last call's result is shown


def test_64_concurrent_rollouts_each_see_only_their_own_world(monkeypatch: pytest.MonkeyPatch) -> None:
    import fake_openai

    from harness.adapters.verifiers import load_environment

    n = 64
    # 64 connections arrive at once: a listen backlog of 5 (socketserver's default) would drop some.
    monkeypatch.setattr(fake_openai.ThreadingHTTPServer, "request_queue_size", 4 * n)
    env = load_environment(tasks=[note_task()], reward="binary")
    counter, lock = {"n": 0}, threading.Lock()
    writes_done = threading.Barrier(n, timeout=60)
    open_at_barrier: list[int] = []

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        assistants = [m for m in messages if m["role"] == "assistant"]
        if not assistants:  # every rollout writes its own note ...
            with lock:
                number = counter["n"]
                counter["n"] += 1
            note = {"entity_type": "company", "entity_id": "co_0004", "body": f"Renewal call booked #{number}#"}
            return {"content": f"#{number}#", "tool_calls": [tool_call("c0", "crm__add_note", note)]}
        if len(assistants) == 1:  # ... and reads the notes only when all 64 have written theirs
            open_at_barrier.append(env.open_episodes)
            writes_done.wait()
            listing = {"entity_type": "company", "entity_id": "co_0004"}
            return {"content": None, "tool_calls": [tool_call("c1", "crm__list_notes", listing)]}
        return {"content": "Done."}

    outputs = evaluate(env, reply, rollouts_per_example=n)
    assert len(outputs) == n and max(open_at_barrier) == n  # all 64 episodes were open at once
    tags = set()
    for output in outputs:
        completion = output["completion"]
        own = completion[0]["content"]
        seen = {note["body"] for note in json.loads(completion[3]["content"])["data"]["items"]}
        tags.add(own)
        assert [body for body in seen if "#" in body] == [f"Renewal call booked {own}"]
        assert output["compoworld"]["passed"], output["compoworld"]  # exactly one note added: no collateral
    assert len(tags) == n and env.open_episodes == 0


def test_malformed_and_unknown_tool_calls_get_clear_errors_and_the_episode_still_closes() -> None:
    from harness.adapters.verifiers import load_environment

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if done == 0:
            return {"content": None, "tool_calls": [tool_call("c0", "crm__add_note", '{"entity_type": "company",')]}
        if done == 1:
            return {"content": None, "tool_calls": [tool_call("c1", "crm__add_notes", {"body": "x"})]}
        return {"content": "I could not do it."}

    env = load_environment(tasks=[note_task()], reward="binary")
    (output,) = evaluate(env, reply)
    errors = [json.loads(m["content"])["error"] for m in output["completion"] if m["role"] == "tool"]
    assert errors[0]["code"] == "invalid_argument" and "not valid JSON" in errors[0]["message"]
    assert errors[1]["code"] == "unknown_tool" and "crm__add_note" in errors[1]["message"]  # a suggestion
    assert output["compoworld"]["stop"] == "answer" and not output["compoworld"]["passed"]
    assert output["reward"] == 0.0 and env.open_episodes == 0


def test_a_rollout_whose_model_fails_midway_is_graded_as_it_stands_and_closed() -> None:
    from harness.adapters.verifiers import load_environment

    def reply(body: dict[str, Any]) -> dict[str, Any] | int:
        if any(m["role"] == "tool" for m in body["messages"]):
            return 500
        note = {"entity_type": "company", "entity_id": "co_0004", "body": "Renewal call booked"}
        return {"content": None, "tool_calls": [tool_call("c0", "crm__add_note", note)]}

    env = load_environment(tasks=[note_task()], reward="rubric")
    (output,) = evaluate(env, reply)
    assert output["error"] is not None and output["stop_condition"] == "has_error"
    grade = output["compoworld"]
    assert grade["stop"] == "agent_error" and grade["answer"] is None
    assert grade["criteria"] == {"note-on-company": True, "nothing-else": True}  # the write before the failure
    assert env.open_episodes == 0


def test_an_evaluation_whose_every_rollout_failed_ends_with_one_line_and_exit_code_1() -> None:
    """Issue 33: vf-eval with no model server errored every rollout and exited 0."""
    from harness.adapters.verifiers import load_environment

    env = load_environment(tasks=[note_task()], reward="rubric")
    with pytest.raises(SystemExit) as stopped:
        evaluate(env, lambda body: 500, rollouts_per_example=2)
    message = str(stopped.value.code)
    assert message.startswith("vf-eval: error: all 2 rollouts failed before the model's first answer; the first: ")
    assert "\n" not in message and env.open_episodes == 0


def test_a_cancelled_rollout_closes_its_episode() -> None:
    from openai import AsyncOpenAI

    from harness.adapters.verifiers import load_environment

    env = load_environment(tasks=[note_task()], reward="binary")
    asked, release = threading.Event(), threading.Event()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        release.wait(timeout=30)
        return {"content": "late"}

    async def abandon() -> int:
        with FakeOpenAI(reply) as server:
            client = AsyncOpenAI(base_url=server.url, api_key="test", max_retries=0)
            rollout = asyncio.ensure_future(env.rollout(env.get_dataset().to_list()[0], client, "scripted"))
            await asyncio.to_thread(asked.wait, 30)
            open_while_waiting = env.open_episodes
            rollout.cancel()
            with pytest.raises(asyncio.CancelledError):
                await rollout
            release.set()
            return open_while_waiting

    assert asyncio.run(abandon()) == 1
    assert env.open_episodes == 0


def test_a_tool_call_after_the_rollout_ended_is_refused() -> None:
    from harness.adapters.episodes import EpisodeClosedError
    from harness.adapters.verifiers import load_environment

    env = load_environment(tasks=[note_task()], reward="binary")

    async def end_then_call() -> Any:
        state = await env.init_state(env.get_dataset().to_list()[0], None, "scripted")  # type: ignore[arg-type]
        await env.setup_state(state)
        episode = env._episodes[state["trajectory_id"]]
        await env.grade_episode(state)  # what verifiers runs when a rollout stops
        messages = [{"role": "assistant", "content": "", "tool_calls": [tool_call("c", "crm__list_notes", {})]}]
        with pytest.raises(EpisodeClosedError, match="has no open episode"):
            await env.env_response(messages, state)
        with pytest.raises(EpisodeClosedError, match="has ended"):
            await episode.call("crm__list_notes", "{}")
        return state

    state = asyncio.run(end_then_call())
    assert state["compoworld"]["stop"] == "abandoned" and not state["compoworld"]["passed"]
    assert env.open_episodes == 0


def test_bad_arguments_to_load_environment_are_refused_with_a_clear_message(tmp_path: Path) -> None:
    from harness.adapters.verifiers import load_environment

    tasks = [note_task()]
    with pytest.raises(HarnessInputError, match="mode must be one of direct, discover"):
        load_environment(tasks=tasks, mode="fast")
    with pytest.raises(HarnessInputError, match="reward must be one of cfrr, binary, rubric"):
        load_environment(tasks=tasks, reward="dense")
    with pytest.raises(HarnessInputError, match="max_turns must be"):
        load_environment(tasks=tasks, max_turns=0)
    with pytest.raises(HarnessInputError, match="takes no knobs"):
        load_environment(tasks=tasks, reward="binary", beta=2.0)
    with pytest.raises(HarnessInputError, match="lam must be in"):
        load_environment(tasks=tasks, lam=3.0)
    with pytest.raises(HarnessInputError, match="does not exist"):
        load_environment(tasks=str(tmp_path / "missing.jsonl"))
    with pytest.raises(HarnessInputError, match="transport must be one of inprocess, stdio, http"):
        load_environment(tasks=tasks, transport="grpc")


@pytest.mark.slow
@pytest.mark.e2e
def test_vf_eval_runs_the_environment_against_an_openai_compatible_endpoint(tmp_path: Path) -> None:
    tasks = adapter_tasks()[-3:]  # the crm tasks: quick to load in verifiers' env server process
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks)
    expected = harness_grades(tasks, "direct")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), "FAKE_KEY": "x"}
    with FakeOpenAI(ReferenceReplay(tasks, "direct")) as server:
        command = [
            sys.executable, "-m", "verifiers.scripts.eval", "harness.adapters.verifiers",
            "-a", json.dumps({"tasks": str(path), "reward": "binary"}),
            "-b", server.url, "-k", "FAKE_KEY", "-m", "scripted", "-n", str(len(tasks)), "-r", "2",
            "-s", "-C", "compoworld",
        ]  # fmt: skip
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = tmp_path.glob("outputs/evals/*/*/results.jsonl")
    outputs = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(outputs) == 2 * len(tasks)
    for output in outputs:
        assert output["reward"] == float(expected[output["compoworld"]["task_id"]][2]) == 1.0
