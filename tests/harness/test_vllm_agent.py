"""The vLLM agent's batching and parsing, with a stand-in for ``vllm.LLM`` (vLLM itself needs a GPU)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from harness.agents.vllm_agent import VLLMAgent
from harness.collect import CollectConfig, collect_async
from harness.trajectory import Trajectory
from mcp_services.tasks.spec import TaskSpec


@dataclass
class Params:
    temperature: float
    max_tokens: int
    seed: int


@dataclass
class Completion:
    text: str


@dataclass
class Output:
    outputs: list[Completion]


class FakeLLM:
    """Answers like Qwen3 would: a ``<tool_call>`` first, then the amount; records each batch."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, list[Params], dict[str, Any]]] = []

    def chat(self, conversations: list[list[dict[str, Any]]], *, sampling_params: list[Params], use_tqdm: bool,
             tools: list[dict[str, Any]] | None = None, **kwargs: Any) -> list[Output]:
        self.batches.append((len(conversations), sampling_params, {"tools": tools, **kwargs}))
        outputs = []
        for messages in conversations:
            if any(m["role"] == "tool" for m in messages):
                outputs.append(Output([Completion("<think>\nok\n</think>\n\nIt is worth 21600 USD.<|im_end|>")]))
            else:
                call = '<tool_call>\n{"name": "crm__get_deal", "arguments": {"deal_id": "dl_0002"}}\n</tool_call>'
                outputs.append(Output([Completion(call)]))
        return outputs


def test_concurrent_episodes_share_batched_llm_chat_calls(tmp_path: Any, tasks: list[TaskSpec]) -> None:
    llm = FakeLLM()
    agent = VLLMAgent("/models/qwen3", llm=llm, sampling_params=Params, temperature=0.6, max_tokens=99, window=0.05)
    config = CollectConfig(out=tmp_path / "run", rollouts=6, concurrency=6, progress=False)
    report = asyncio.run(collect_async(config, agent=agent, tasks=[tasks[1]], log=lambda _: None))
    assert report.n_new == 6 and report.n_passed_new == 6
    sizes = [size for size, _, _ in llm.batches]
    assert sum(sizes) == 12 and max(sizes) > 1  # two turns per episode, gathered into batches
    _, params, kwargs = llm.batches[0]
    assert {p.temperature for p in params} == {0.6} and {p.max_tokens for p in params} == {99}
    assert len({p.seed for p in params}) == len(params)  # each rollout its own seed
    assert any(t["function"]["name"] == "crm__get_deal" for t in kwargs["tools"])
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    t = Trajectory.from_line(lines[0])
    assert t.agent == "vllm:/models/qwen3" and t.messages[-1]["reasoning_content"] == "ok"
