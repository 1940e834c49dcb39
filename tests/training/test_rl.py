"""GRPO on the CPU with tiny-qwen3: real episodes through the tools, harness grading, rewards grouped by task id."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessInputError
from harness.grading import regrade
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import InProcessTransport
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskSpec, write_tasks
from tests.training.rl_tasks import company_note, deal_question, solving_turns
from training.cli import main
from training.errors import TrainingInputError
from training.rewards import completion_focused_rubric_reward, group_rewards
from training.rl_settings import RLSettings

pytestmark = pytest.mark.train
pytest.importorskip("trl")

from training.rl_agent import PolicyAgent, TurnLimits  # noqa: E402 - needs the train extra
from training.rl_generation import Generated, GenerationRequest, Generator, TurnBatcher  # noqa: E402
from training.rl_reward import GroupRubricReward, RolloutLog  # noqa: E402
from training.rl_tokens import ChatTokens  # noqa: E402


@pytest.fixture
def tasks() -> list[TaskSpec]:
    return [deal_question(), company_note()]


@pytest.fixture
def tasks_file(tmp_path: Path, tasks: list[TaskSpec]) -> Path:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks)
    return path


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """One intra-op thread: on a shared 2-core machine a second one mostly spins (several times slower)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class ScriptedTurns:
    """Stands in for the model where a tool call must happen (a random model never writes one): the first
    rollout of each group writes its task's solving turns, as the real tokenizer encodes them; the other
    rollouts are sampled from the real tiny model."""

    def __init__(self, inner: Generator, tokenizer: Any, scripts: dict[str, list[str]]) -> None:
        self.inner = inner
        self.tokenizer = tokenizer
        self.scripts = scripts

    def __call__(self, requests: Sequence[GenerationRequest]) -> list[Generated]:
        # The rollout number is the position in the batch, and a group's copies are consecutive: pairs here.
        scripted = [request.key[1] % 2 == 0 for request in requests]
        sampled = iter(self.inner([r for r, s in zip(requests, scripted, strict=True) if not s]))
        out: list[Generated] = []
        for request, is_scripted in zip(requests, scripted, strict=True):
            if is_scripted:
                text = self.scripts[request.key[0]][request.turn]
                out.append(Generated(self.tokenizer.encode(text, add_special_tokens=False)))
            else:
                out.append(next(sampled))
        return out


def _scores(record: dict[str, Any], task: TaskSpec) -> list[float]:
    return [1.0 if record["criteria"][item.id] else 0.0 for item in task.rubric]


@pytest.mark.usefixtures("one_torch_thread")
def test_two_grpo_steps_drive_real_episodes_graded_by_the_harness(
    tmp_path: Path, tasks: list[TaskSpec], tasks_file: Path
) -> None:
    import torch

    from harness.agents.models import load_model
    from training.rl import prepare_rl, train_rl

    settings = RLSettings(
        tasks=tasks_file,
        out=tmp_path / "out",
        mode="discover",  # four meta-tools: a short prompt keeps the CPU steps fast
        group_size=2,
        batch_size=4,
        max_steps=2,
        max_turns=3,
        max_turn_tokens=12,
        max_completion_length=512,
        learning_rate=1e-2,
    )
    run = prepare_rl(settings)
    model = load_model("tiny-qwen3", run.tokenizer, seed=0)
    before = {name: weight.detach().clone() for name, weight in model.named_parameters()}
    scripts = {task.id: solving_turns(task) for task in tasks}

    summary = train_rl(run, model, wrap_generator=lambda inner: ScriptedTurns(inner, run.tokenizer, scripts))

    assert summary["steps"] == 2 and summary["rollouts"]["episodes"] == 8
    assert (tmp_path / "out" / "model.safetensors").is_file()
    records = [json.loads(line) for line in (tmp_path / "out" / "rollouts.jsonl").read_text().splitlines()]
    by_id = {task.id: task for task in tasks}
    assert len(records) == 8
    for record in records:
        task = by_id[record["task_id"]]
        trajectory = Trajectory.from_record(record)
        # The grade is the harness's: replaying the calls into a fresh episode gives the same criteria.
        regraded = regrade(trajectory, task)
        assert regraded.agrees_with(trajectory) and not regraded.mismatches
        assert sorted(trajectory.criteria) == sorted(item.id for item in task.rubric)
        if record["rollout"] % 2 == 0:  # the scripted rollout: its tool call reached the service
            call = trajectory.messages[2]["tool_calls"][0]["function"]
            assert call["name"] == "call_tool" and json.loads(call["arguments"])["tool"] == task.plan[0].tool
            assert json.loads(trajectory.messages[3]["content"])["success"] is True
            assert trajectory.n_service_calls == 1 and trajectory.passed
        else:
            assert not trajectory.passed
    for step in (0, 1):
        batch = [record for record in records if record["step"] == step]
        ids = [record["task_id"] for record in batch]
        assert sorted(ids) == sorted([task.id for task in tasks] * 2)
        expected = group_rewards(ids, [_scores(r, by_id[r["task_id"]]) for r in batch], "cfrr")
        assert [record["reward"] for record in batch] == pytest.approx(expected)
        # One pass and one failure per group: CFRR gives the pass 1 and the failure 0 (it passed no criterion).
        assert [record["reward"] for record in batch] == pytest.approx([1.0 - r["rollout"] % 2 for r in batch])
    assert summary["pass_rates"] == pytest.approx([0.5, 0.5])
    assert any(not torch.equal(before[name], weight) for name, weight in model.named_parameters())


def test_the_completion_masks_exactly_the_tokens_the_model_wrote(qwen3_tokenizer: Any) -> None:
    task = deal_question()
    turns = solving_turns(task)
    chat = ChatTokens(qwen3_tokenizer)

    def generate(requests: Sequence[GenerationRequest]) -> list[Generated]:
        return [Generated(qwen3_tokenizer.encode(turns[r.turn], add_special_tokens=False)) for r in requests]

    batcher = TurnBatcher(generate, episodes=2)
    agent = PolicyAgent("policy:test", chat, batcher, TurnLimits(64, 1024, 4096))
    transport = InProcessTransport()

    async def episode(rollout: int) -> Trajectory:
        try:
            job = RolloutJob(task, rollout, rollout)
            return await run_episode(job, agent, transport, RunnerConfig(mode="discover"))
        finally:
            batcher.episode_done()

    async def both() -> list[Trajectory]:
        return list(await asyncio.gather(episode(0), episode(1)))

    first, second = asyncio.run(both())
    assert first.passed and second.passed
    assert batcher.batches == [2, 2]  # each turn of both episodes in one generation batch
    transcript = agent.transcripts[(task.id, 0)]
    assert transcript.prompt_ids == chat.prompt_ids(first.messages[:2], first.tools)
    pairs = list(zip(transcript.completion_ids, transcript.env_mask, strict=True))
    model_text = qwen3_tokenizer.decode([token for token, mask in pairs if mask])
    template_text = qwen3_tokenizer.decode([token for token, mask in pairs if not mask])
    assert model_text == "".join(turns)
    assert "<tool_response>" in template_text and '"amount": 21600' in template_text
    assert template_text.endswith("<|im_start|>assistant\n")


def test_rewards_are_grouped_by_task_id_not_by_position(tmp_path: Path) -> None:
    scores = {"a": [[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]], "b": [[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]}
    order = [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]  # the groups interleaved
    trajectories = [
        {"task_id": task_id, "rollout": i, "passed": all(scores[task_id][i]), "rubric_score": 0.0, "n_service_calls": 1}
        for task_id, i in order
    ]
    metrics: dict[str, float] = {}
    reward = GroupRubricReward("cfrr", {"beta": 1.0, "lam": 0.5, "eps": 0.05}, RolloutLog(tmp_path / "r.jsonl"))

    got = reward(
        task_id=[task_id for task_id, _ in order],
        criterion_scores=[scores[task_id][i] for task_id, i in order],
        trajectory=trajectories,
        log_metric=metrics.__setitem__,
    )

    per_task = {task_id: completion_focused_rubric_reward(rows) for task_id, rows in scores.items()}
    assert got == pytest.approx([per_task[task_id][i] for task_id, i in order])
    rows = [scores[task_id][i] for task_id, i in order]
    by_position = completion_focused_rubric_reward(rows[:3]) + completion_focused_rubric_reward(rows[3:])
    assert got != pytest.approx(by_position)
    assert metrics["compoworld/pass_rate"] == pytest.approx(2 / 6)
    logged = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(r["task_id"], r["reward"]) for r in logged] == [(t, g) for (t, _), g in zip(order, got, strict=True)]


def _settings(tasks_file: Path, tmp_path: Path, **values: Any) -> RLSettings:
    return RLSettings.from_mapping({"tasks": str(tasks_file), "out": str(tmp_path / "out"), **values})


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"group_size": 3, "batch_size": 4}, "group size 3 does not divide the 4 rollouts"),
        ({"group_size": 1}, "group_size must be at least 2"),
        ({"reward": "best"}, "reward must be one of cfrr, binary, rubric"),
        ({"max_turn_tokens": 600, "max_completion_length": 500}, "max_completion_length must be at least"),
        ({"vllm": "remote"}, "vllm must be one of colocate, server"),
    ],
)
def test_bad_settings_are_refused(tmp_path: Path, tasks_file: Path, values: dict[str, Any], message: str) -> None:
    with pytest.raises(TrainingInputError, match=message):
        _settings(tasks_file, tmp_path, **values)


def test_bad_task_files_are_refused_before_any_model_loads(tmp_path: Path, tasks: list[TaskSpec]) -> None:
    from training.rl import prepare_rl

    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(TrainingInputError, match="holds no tasks"):
        prepare_rl(_settings(empty, tmp_path))
    with pytest.raises(TrainingInputError, match="does not exist"):
        prepare_rl(_settings(tmp_path / "missing.jsonl", tmp_path))
    no_rubric = tmp_path / "no_rubric.jsonl"
    write_tasks(no_rubric, [deal_question().model_copy(update={"rubric": []})])
    with pytest.raises(TrainingInputError, match="no rubric criteria"):
        prepare_rl(_settings(no_rubric, tmp_path, batch_size=2, group_size=2))
    two = tmp_path / "two.jsonl"
    write_tasks(two, tasks)
    with pytest.raises(TrainingInputError, match="needs 4 distinct tasks"):
        prepare_rl(_settings(two, tmp_path, batch_size=8, group_size=2))
    with pytest.raises(TrainingInputError, match="needs a GPU"):
        prepare_rl(_settings(two, tmp_path, vllm="colocate"))


def test_a_model_without_chat_template_is_refused(tmp_path: Path, tasks_file: Path, qwen3_tokenizer: Any) -> None:
    from training.rl import prepare_rl

    folder = tmp_path / "no-template"
    tokenizer = type(qwen3_tokenizer).from_pretrained(qwen3_tokenizer.name_or_path)
    tokenizer.chat_template = None
    tokenizer.save_pretrained(str(folder))
    with pytest.raises(HarnessInputError, match="no chat template"):
        prepare_rl(_settings(tasks_file, tmp_path, model=str(folder)))


def test_a_prompt_longer_than_the_context_is_refused(tmp_path: Path, tasks_file: Path) -> None:
    from harness.agents.models import build_tiny_qwen3
    from training.rl import build_rl_trainer, prepare_rl

    # Direct mode lists every crm tool in the prompt (~2000 tokens); the context is capped at 2048 here.
    run = prepare_rl(_settings(tasks_file, tmp_path, mode="direct", group_size=2, batch_size=2, max_turn_tokens=512,
                               vllm_max_model_length=2048))
    with pytest.raises(TrainingInputError, match="the model's context is 2048 tokens"):
        build_rl_trainer(run, build_tiny_qwen3(run.tokenizer, seed=0))


def test_cli_reports_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["rl", "--tasks", str(empty), "--out", str(tmp_path / "out"), "--group-size", "2", "--model", "tiny-qwen3"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("training: error: task file") and error.count("\n") == 1


def test_grpo_configs_load(tmp_path: Path) -> None:
    from training.config_files import load_config_file

    configs = sorted((Path(__file__).resolve().parents[2] / "training" / "configs").glob("*-grpo.yaml"))
    assert configs
    for path in configs:
        settings = RLSettings.from_mapping(load_config_file(path) | {"tasks": "t.jsonl", "out": str(tmp_path)})
        assert settings.group_size >= 2


def test_vllm_turns_are_cut_at_the_stop_token_with_their_logprobs() -> None:
    import math
    from types import SimpleNamespace

    from training.rl_generation import VLLMGenerator, default_generator

    calls: list[list[list[int]]] = []

    def generate(prompts: list[list[int]], images: Any, num_generations: int) -> tuple[Any, ...]:
        assert images is None and num_generations == 1  # one turn per episode, never n copies of a prompt
        calls.append(prompts)
        completions = [[5, 6, 2, 9], [7, 8, 8]]  # the first stops at token 2, the second runs into its limit
        logprobs = [[[-0.5], [None], [-0.1], [-0.2]], [[-1.0], [-1.5], [-2.0]]]
        return prompts, completions, logprobs, None

    args = SimpleNamespace(use_vllm=True, vllm_mode="colocate", vllm_tensor_parallel_size=1)
    trainer = SimpleNamespace(
        args=args, accelerator=SimpleNamespace(num_processes=1), vllm_generation=SimpleNamespace(generate=generate)
    )
    generator = default_generator(trainer, [2], seed=0)  # type: ignore[arg-type]
    assert isinstance(generator, VLLMGenerator)
    first, second = generator(
        [GenerationRequest(("a", 0), 0, [1, 1], 16), GenerationRequest(("a", 1), 0, [1, 3], 2)]
    )
    assert calls == [[[1, 1], [1, 3]]]
    assert first.ids == [5, 6, 2] and first.logprobs is not None and math.isnan(first.logprobs[1])
    assert second.ids == [7, 8] and second.logprobs == [-1.0, -1.5]
    generator.drain()  # one process: nothing to take part in
    assert len(calls) == 1
