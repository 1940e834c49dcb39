"""The transformers path with a tiny random Qwen3 and the real Qwen3 tokenizer and chat template."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from harness.agents.hf_agent import HFAgent
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import InProcessTransport
from mcp_services.tasks.spec import TaskSpec

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
models = pytest.importorskip("harness.agents.models")
pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def tiny_qwen3() -> tuple[Any, Any]:
    return models.load_model_and_tokenizer("tiny-qwen3", seed=0)


class ScriptedGeneration:
    """Stands in for ``model.generate``: returns the prompt plus the next scripted completion (as the
    real tokenizer encodes it), and keeps the prompts it was given."""

    def __init__(self, tokenizer: Any, completions: list[str]) -> None:
        self.tokenizer = tokenizer
        self.completions = completions
        self.prompts: list[str] = []

    def __call__(self, input_ids: Any, **kwargs: Any) -> Any:
        self.prompts.append(self.tokenizer.decode(input_ids[0]))
        text = self.completions[len(self.prompts) - 1]
        ids = torch.tensor([self.tokenizer.encode(text, add_special_tokens=False)], dtype=input_ids.dtype)
        return torch.cat([input_ids, ids], dim=1)


def test_hf_agent_calls_a_tool_through_the_qwen3_template_and_parser(tiny_qwen3: tuple[Any, Any],
                                                                     tasks: list[TaskSpec]) -> None:
    model, tokenizer = tiny_qwen3
    script = ScriptedGeneration(tokenizer, [
        '<tool_call>\n{"name": "crm__get_deal", "arguments": {"deal_id": "dl_0002"}}\n</tool_call><|im_end|>',
        "The deal is worth 21600 USD.<|im_end|>",
    ])
    model.generate = script
    try:
        agent = HFAgent("tiny-qwen3", model=model, tokenizer=tokenizer, max_tokens=64, device="cpu",
                        chat_template_kwargs={"enable_thinking": False})
        job = RolloutJob(tasks[1], 0, 3)
        t = asyncio.run(run_episode(job, agent, InProcessTransport(), RunnerConfig()))
    finally:
        del model.generate
    assert t.passed and t.agent == "hf:tiny-qwen3" and t.n_service_calls == 1
    call = t.messages[2]["tool_calls"][0]["function"]
    assert call == {"name": "crm__get_deal", "arguments": '{"deal_id": "dl_0002"}'}
    first, second = script.prompts
    assert "<tools>" in first and '"name": "crm__get_deal"' in first
    assert first.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # enable_thinking=False reached the template
    assert "<tool_response>" in second and '"amount": 21600.0' in second
    assert json.loads(t.messages[3]["content"])["data"]["amount"] == 21600.0


def test_hf_agent_generates_with_a_real_random_model_without_crashing(tiny_qwen3: tuple[Any, Any],
                                                                      tasks: list[TaskSpec]) -> None:
    model, tokenizer = tiny_qwen3
    agent = HFAgent("tiny-qwen3", model=model, tokenizer=tokenizer, max_tokens=8, temperature=1.0, device="cpu")
    job = RolloutJob(tasks[1], 0, 5)
    first = asyncio.run(run_episode(job, agent, InProcessTransport(), RunnerConfig(max_turns=2)))
    again = asyncio.run(run_episode(job, agent, InProcessTransport(), RunnerConfig(max_turns=2)))
    assert first.stop_reason in ("answer", "max_turns") and not first.passed
    assert first.without_timings() == again.without_timings()  # seeded sampling: same seed, same text
