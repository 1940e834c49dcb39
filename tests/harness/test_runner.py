"""The episode runner: reference and null baselines, malformed calls, limits, private state."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from harness_fixtures import HOSTILE_ARGUMENTS, hostile_turn

from harness.agents import (
    AgentTurn,
    Message,
    NullAgent,
    ReferenceAgent,
    ScriptedAgent,
    ToolCallRequest,
    ToolSchema,
    TurnContext,
)
from harness.collect import CollectConfig, collect
from harness.errors import AgentError, AgentUnavailableError
from harness.grading import regrade
from harness.parsing import parse_completion
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import InProcessTransport
from harness.trajectory import Trajectory
from mcp_services.kernel.episode import Episode
from mcp_services.serving.surface import ToolSurface
from mcp_services.tasks.spec import TaskSpec


def run(task: TaskSpec, agent: object, config: RunnerConfig = RunnerConfig(), transport: object = None) -> Trajectory:
    transport = transport or InProcessTransport()
    return asyncio.run(run_episode(RolloutJob(task, 0, 7), agent, transport, config))  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["direct", "discover"])
def test_reference_passes_every_task_and_null_passes_none(tasks: list[TaskSpec], mode: str) -> None:
    config = RunnerConfig(mode=mode)  # type: ignore[arg-type]
    for task in tasks:
        golden = run(task, ReferenceAgent([task]), config)
        assert golden.passed and golden.rubric_score == 1.0, (task.instruction, golden.criteria, golden.collateral)
        assert golden.stop_reason == "answer"
        assert golden.n_service_calls == len(task.plan)
        names = [c["function"]["name"] for m in golden.messages for c in m.get("tool_calls") or ()]
        if mode == "discover":  # discovery first, as a careful agent would
            assert names[:3] == ["list_services", "list_tools", "describe_tool"] and names[-1] == "call_tool"
        else:
            assert golden.n_tool_calls == len(task.plan)
        baseline = run(task, NullAgent(), config)
        assert not baseline.passed and baseline.n_tool_calls == 0


def test_trajectory_holds_the_system_prompt_tools_and_openai_messages(tasks: list[TaskSpec]) -> None:
    t = run(tasks[0], ReferenceAgent(tasks))
    system, user = t.messages[0], t.messages[1]
    assert system["role"] == "system" and "13 March 2025" in system["content"]
    assert '{"success": true, "data": ...}' in system["content"]
    assert user == {"role": "user", "content": tasks[0].instruction}
    call = t.messages[2]["tool_calls"][0]
    assert call["id"] == "call_0_0" and call["type"] == "function"
    assert isinstance(call["function"]["arguments"], str)
    assert t.messages[3]["role"] == "tool" and t.messages[3]["tool_call_id"] == "call_0_0"
    assert json.loads(t.messages[3]["content"])["success"] is True
    assert {tool["function"]["name"] for tool in t.tools} >= {"crm__search_contacts", "crm__add_note"}
    assert t.task_info == {"services": ["crm"], "capabilities": ["sequential-dependency"], "plan_length": 2}


def test_malformed_tool_calls_become_error_results_the_model_reads(tasks: list[TaskSpec]) -> None:
    bad = AgentTurn(
        tool_calls=(
            ToolCallRequest("crm__get_deal", '{"deal_id": '),  # bad JSON
            ToolCallRequest("crm__no_such_tool", "{}"),  # unknown tool
            ToolCallRequest("crm__get_deal", '{"deal": "dl_0002"}'),  # wrong arguments
            ToolCallRequest("crm__get_deal", "[1, 2]"),  # not an object
            ToolCallRequest("unparsed_tool_call", "<garbage>", error="Your tool call is not valid JSON."),
            ToolCallRequest("crm__get_deal", '"{\\"deal_id\\": \\"dl_0002\\"}"'),  # double-encoded: accepted
        )
    )
    agent = ScriptedAgent([bad], final=AgentTurn(content="It is worth 21600 USD."))
    t = run(tasks[1], agent)
    results = [json.loads(m["content"]) for m in t.messages if m["role"] == "tool"]
    assert [r["success"] for r in results] == [False, False, False, False, False, True]
    assert [r["error"]["code"] for r in results[:5]] == [
        "invalid_argument", "unknown_tool", "invalid_argument", "invalid_argument", "invalid_argument"
    ]
    assert "not valid JSON" in results[0]["error"]["message"]
    # Only decodable calls to a real tool reach crm: the wrong-arguments one and the double-encoded one.
    assert t.n_tool_calls == 6 and t.n_service_calls == 2
    assert t.stop_reason == "answer" and t.passed


def test_turn_limit_ends_the_episode_and_it_is_still_graded(tasks: list[TaskSpec]) -> None:
    again = AgentTurn(tool_calls=(ToolCallRequest("crm__get_deal", '{"deal_id": "dl_0002"}'),))
    loop = ScriptedAgent(lambda m, t, c: again)
    t = run(tasks[1], loop, RunnerConfig(max_turns=3))
    assert t.stop_reason == "max_turns" and t.n_turns == 3 and t.answer is None and not t.passed


def test_episode_deadline_ends_a_slow_agent(tasks: list[TaskSpec]) -> None:
    slow = ScriptedAgent([AgentTurn(content="late")], latency=5.0)
    t = run(tasks[1], slow, RunnerConfig(episode_timeout=0.2))
    assert t.stop_reason == "episode_timeout" and "0.2" in (t.error or "") and not t.passed


def test_agent_error_ends_only_that_episode(tasks: list[TaskSpec]) -> None:
    def refuse(*_: object) -> AgentTurn:
        raise AgentError("context too long")

    t = run(tasks[1], ScriptedAgent(refuse))
    assert t.stop_reason == "agent_error" and t.error == "context too long" and not t.passed


def test_unreachable_agent_stops_the_run(tasks: list[TaskSpec]) -> None:
    def down(*_: object) -> AgentTurn:
        raise AgentUnavailableError("endpoint down")

    with pytest.raises(AgentUnavailableError):
        run(tasks[1], ScriptedAgent(down))


def test_reused_episodes_give_the_same_trajectories_as_fresh_ones(tasks: list[TaskSpec]) -> None:
    pooled = InProcessTransport(reuse=True, max_idle=2)
    fresh = InProcessTransport(reuse=False)
    # Interleave tasks (setup / no setup) and repeat them, so pooled episodes switch tasks.
    for task in [tasks[0], tasks[2], tasks[0], tasks[1], tasks[2], tasks[0]]:
        a = run(task, ReferenceAgent([task]), transport=pooled)
        b = run(task, ReferenceAgent([task]), transport=fresh)
        assert a.without_timings() == b.without_timings()
    pooled.close()


def test_every_rollout_starts_from_the_initial_state(tasks: list[TaskSpec]) -> None:
    transport = InProcessTransport()
    first = run(tasks[0], ReferenceAgent(tasks), transport=transport)
    second = run(tasks[0], ReferenceAgent(tasks), transport=transport)
    assert first.without_timings() == second.without_timings()  # same note id: nothing leaked
    assert second.passed and not second.collateral


def test_partial_work_gets_partial_rubric_credit(tasks: list[TaskSpec]) -> None:
    # Writes the note on the wrong company: the note criterion fails, and so does "nothing else".
    wrong = ScriptedAgent(
        [AgentTurn(tool_calls=(ToolCallRequest(
            "crm__add_note",
            json.dumps({"entity_type": "company", "entity_id": "co_0005", "body": "Renewal call booked"}),
        ),))]
    )
    t = run(tasks[0], wrong)
    assert t.criteria == {"note-on-company": False, "nothing-else": False} and t.rubric_score == 0.0
    # Converts the lead but also touches another contact: one criterion of two.
    sloppy = ScriptedAgent(
        [AgentTurn(tool_calls=(
            ToolCallRequest("crm__update_contact", '{"contact_id": "ct_9001", "lifecycle_stage": "customer"}'),
            ToolCallRequest("crm__update_contact", '{"contact_id": "ct_0054", "lifecycle_stage": "customer"}'),
        ))]
    )
    t = run(tasks[2], sloppy)
    assert t.criteria == {"customer": True, "nothing-else": False} and t.rubric_score == 0.5
    assert t.collateral == ["crm.contacts row ct_0054 was changed"]


# -- nothing a model sends stops a run; what it reads back is bounded --------------------------------

@pytest.mark.parametrize("mode", ["direct", "discover"])
def test_hostile_arguments_become_error_results_and_the_episode_goes_on(tasks: list[TaskSpec], mode: str) -> None:
    turn = hostile_turn()
    if mode == "discover":  # the same arguments, inside call_tool
        turn = AgentTurn(tool_calls=tuple(
            ToolCallRequest("call_tool", '{"service": "crm", "tool": "get_deal", "arguments": ' + c.arguments + "}")
            for c in turn.tool_calls
        ))
    answer = AgentTurn(tool_calls=(ToolCallRequest(
        "crm__get_deal" if mode == "direct" else "call_tool",
        '{"deal_id": "dl_0002"}' if mode == "direct" else
        '{"service": "crm", "tool": "get_deal", "arguments": {"deal_id": "dl_0002"}}'),))
    agent = ScriptedAgent([turn, answer], final=AgentTurn(content="It is worth 21600 USD."))
    t = run(tasks[1], agent, RunnerConfig(mode=mode))  # type: ignore[arg-type]
    results = [json.loads(m["content"]) for m in t.messages if m["role"] == "tool"]
    assert len(results) == len(turn.tool_calls) + 1
    assert [r["success"] for r in results[:len(HOSTILE_ARGUMENTS)]] == [False] * len(HOSTILE_ARGUMENTS)
    assert results[-1]["success"] is True and t.stop_reason == "answer" and t.passed
    assert all(len(m["content"]) <= RunnerConfig().max_result_chars for m in t.messages if m["role"] == "tool")
    assert Trajectory.from_line(t.to_line().encode()).messages == t.messages  # it can be written and read back


def test_a_tool_result_over_the_bound_reaches_the_model_cut_with_a_note(tasks: list[TaskSpec]) -> None:
    listing = AgentTurn(tool_calls=(ToolCallRequest("crm__list_deals", "{}"),
                                    ToolCallRequest("crm__get_deal", '{"deal_id": "dl_0002"}')))
    agent = ScriptedAgent([listing], final=AgentTurn(content="It is worth 21600 USD."))
    t = run(tasks[1], agent, RunnerConfig(max_result_chars=1_000))
    cut, whole = (m["content"] for m in t.messages if m["role"] == "tool")
    assert 950 < len(cut) <= 1_000 and cut.startswith('{"data": {"items": [')
    assert re.search(r"this result is [\d,]+ characters long; only the first [\d,]+ are shown\. Ask for less", cut)
    assert json.loads(whole)["success"] is True  # a short result is untouched
    assert regrade(t, tasks[1]).mismatches == []  # re-grading knows the model saw it cut


def test_the_result_bound_has_a_floor(tasks: list[TaskSpec]) -> None:
    with pytest.raises(ValueError, match="at least 1,000"):
        RunnerConfig(max_result_chars=10)


@pytest.mark.parametrize("mode", ["direct", "discover"])
def test_an_exception_out_of_a_service_is_an_internal_error_result(tasks: list[TaskSpec], mode: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> object:
        raise RecursionError("maximum recursion depth exceeded while getting the repr of an object")

    monkeypatch.setattr(Episode, "call", broken)
    surface = ToolSurface(Episode.create(["crm"], 0), mode)  # type: ignore[arg-type]
    name, arguments = ("crm__get_deal", {"deal_id": "dl_0002"}) if mode == "direct" else (
        "call_tool", {"service": "crm", "tool": "get_deal", "arguments": {"deal_id": "dl_0002"}})
    result = surface.call(name, arguments).result
    assert result.error_code == "internal_error" and "RecursionError" in (result.error_message or "")
    assert "nothing was changed" in (result.error_message or "")


def test_a_collection_with_hostile_completions_finishes_and_a_resume_has_nothing_left(tmp_path: Path,
                                                                                     tasks: list[TaskSpec]) -> None:
    poison = [f'<tool_call>{{"name": "crm__get_deal", "arguments": {a}}}</tool_call>' for a in HOSTILE_ARGUMENTS]

    def model(messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        # What a local model's text goes through (hf, vllm, the RL policy): the shared parser.
        if context.turn < len(poison):
            return parse_completion(poison[(context.turn + context.rollout) % len(poison)])
        return parse_completion("I could not do it.")

    config = CollectConfig(out=tmp_path / "run", rollouts=3, progress=False)
    first = collect(config, agent=ScriptedAgent(model), tasks=tasks, log=lambda _: None)
    again = collect(config, agent=ScriptedAgent(model), tasks=tasks, log=lambda _: None)
    assert first.n_new == 3 * len(tasks) and again.n_new == 0 and again.n_existing == 3 * len(tasks)
