"""Rollouts per second through the RL-framework adapters vs the harness in process: figures, no asserts.

    python bench/bench_adapters.py [--tasks FILE | --n 8] [--rollouts 8] [--concurrency 32] [--mode direct]

Every rollout replays its task's reference plan (one tool call per turn, then the answer), so the
model costs nothing and what is measured is the environment side of each path:

1. harness: ``run_episode`` with the reference agent over ``InProcessTransport`` (the fast path);
2. verifiers: ``Environment.generate`` (what ``evaluate`` and prime-rl call) with an OpenAI client
   whose completions are answered in this process, so no HTTP model server is measured;
3. OpenEnv: ``create_app`` served by uvicorn in a separate process on 127.0.0.1, driven by
   ``--concurrency`` WebSocket sessions (``CompoWorldClient``), one step per tool call.

Each path runs once untimed (pools filled, code warm), then once timed; its grades are checked
against the harness's before its figure is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.agents import ReferenceAgent  # noqa: E402
from harness.agents.reference import reference_answer, reference_calls  # noqa: E402
from harness.runner import RolloutJob, RunnerConfig, run_episode  # noqa: E402
from harness.tools import InProcessTransport  # noqa: E402
from mcp_services.tasks.spec import TaskSpec, load_tasks, write_tasks  # noqa: E402

Grades = list[tuple[str, bool, float]]  # (task id, passed, rubric score) per rollout, sorted


def bench_tasks(path: Path | None, n: int) -> list[TaskSpec]:
    if path is not None:
        return load_tasks(path)
    from composer.generate import GenerateConfig, generate

    return generate(GenerateConfig(n=n, seed=0))[0]


def replay_turn(task: TaskSpec, mode: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The reference agent's next assistant message, in the OpenAI chat format."""
    done = sum(1 for m in messages if m["role"] == "tool")
    calls = reference_calls(task, mode)
    if done >= len(calls):
        return {"role": "assistant", "content": reference_answer(task)}
    name, arguments = calls[done]
    call = {"id": f"call_{done}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def timed(label: str, rollouts: int, run: Callable[[], Grades], baseline: Grades | None) -> tuple[float, Grades]:
    """Steady figures: one untimed pass first (episode pools filled, code warm), then the timed one."""
    run()
    started = time.perf_counter()
    grades = run()
    seconds = time.perf_counter() - started
    if baseline is not None and grades != baseline:
        raise SystemExit(f"{label}: grades differ from the harness's")
    rate = rollouts / seconds
    print(f"  {label:<44} {rate:8.1f} rollouts/s  ({rollouts} in {seconds:.2f} s)", flush=True)
    return rate, grades


# -- 1. the harness in process ----------------------------------------------------------------------


def run_harness(tasks: list[TaskSpec], rollouts: int, concurrency: int, mode: str) -> Grades:
    async def run() -> Grades:
        transport = InProcessTransport()
        gate = asyncio.Semaphore(concurrency)
        agent = ReferenceAgent(tasks)

        async def one(task: TaskSpec, r: int) -> tuple[str, bool, float]:
            async with gate:
                t = await run_episode(RolloutJob(task, r, r), agent, transport, RunnerConfig(mode=mode))  # type: ignore[arg-type]
            return (t.task_id, t.passed, t.rubric_score)

        try:
            return sorted(await asyncio.gather(*(one(t, r) for t in tasks for r in range(rollouts))))
        finally:
            transport.close()

    return asyncio.run(run())


# -- 2. verifiers -----------------------------------------------------------------------------------


class _ReplayCompletions:
    """``client.chat.completions.create`` of an OpenAI client, answered in process by the replay."""

    def __init__(self, by_request: dict[str, TaskSpec], mode: str) -> None:
        self.by_request = by_request
        self.mode = mode

    async def create(self, *, model: str, messages: list[dict[str, Any]], **_: Any) -> Any:
        from openai.types.chat import ChatCompletion

        task = self.by_request[messages[1]["content"]]
        message = replay_turn(task, self.mode, messages)
        return ChatCompletion.model_validate({
            "id": "replay", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        })  # fmt: skip


class _ReplayClient:
    def __init__(self, by_request: dict[str, TaskSpec], mode: str) -> None:
        self.chat = type("Chat", (), {"completions": _ReplayCompletions(by_request, mode)})()
        self.base_url = "in-process://replay"


def _quiet(*_: Any) -> None:
    """A verifiers callback that draws no progress bar: the figures are this script's output."""


def run_verifiers(env: Any, client: Any, rollouts: int, concurrency: int) -> Grades:
    inputs = env.get_dataset().repeat(rollouts)
    result = asyncio.run(
        env.generate(inputs, client, "replay", max_concurrent=concurrency, state_columns=["compoworld"],
                     on_start=_quiet, on_progress=_quiet)
    )
    return sorted((o["compoworld"]["task_id"], o["compoworld"]["passed"], o["compoworld"]["rubric_score"])
                  for o in result["outputs"])  # fmt: skip


# -- 3. OpenEnv -------------------------------------------------------------------------------------


def serve_openenv(tasks_file: str, port: int, mode: str) -> None:
    """``--serve``: this script as the OpenEnv server process."""
    import uvicorn

    from harness.adapters.openenv import create_app

    app = create_app(tasks=tasks_file, mode=mode, max_concurrent_envs=1024)
    # As harness.adapters.openenv.serving: no compression on loopback, the plain asyncio loop (not uvloop).
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws_max_size=64 * 1024 * 1024,
                ws_per_message_deflate=False, loop="asyncio")  # fmt: skip


def run_openenv(url: str, tasks: list[TaskSpec], rollouts: int, concurrency: int, mode: str) -> Grades:
    from harness.adapters.openenv import CompoWorldClient

    async def run() -> Grades:
        jobs: asyncio.Queue[TaskSpec] = asyncio.Queue()
        for task in tasks:
            for _ in range(rollouts):
                jobs.put_nowait(task)
        grades: Grades = []

        async def session() -> None:  # one WebSocket session runs one rollout after another
            async with CompoWorldClient(url, connect_timeout_s=120, message_timeout_s=300) as env:
                while not jobs.empty():
                    task = jobs.get_nowait()
                    await env.reset(task_id=task.id)
                    for name, arguments in reference_calls(task, mode):
                        await env.call(name, arguments)
                    final = await env.answer(reference_answer(task))
                    grade = final.observation.grade or {}
                    grades.append((task.id, bool(grade.get("passed")), float(grade.get("rubric_score", 0.0))))

        await asyncio.gather(*(session() for _ in range(concurrency)))
        return sorted(grades)

    return asyncio.run(run())


def wait_until_serving(url: str, server: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the OpenEnv server exited with code {server.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"the OpenEnv server did not answer at {url} within {timeout:g} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, help="a tasks.jsonl (default: compose --n tasks, seed 0)")
    parser.add_argument("--n", type=int, default=8, help="candidates to compose when no --tasks is given")
    parser.add_argument("--rollouts", type=int, default=8, help="rollouts per task")
    parser.add_argument("--concurrency", type=int, default=32, help="rollouts in flight (sessions for OpenEnv)")
    parser.add_argument("--mode", choices=("direct", "discover"), default="direct")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_openenv(args.serve, args.port, args.mode)
        return

    tasks = bench_tasks(args.tasks, args.n)
    total = len(tasks) * args.rollouts
    plan = sum(len(reference_calls(t, args.mode)) for t in tasks) / len(tasks)
    print(f"tasks: {len(tasks)} (mean {plan:.1f} tool calls in {args.mode} mode), {args.rollouts} rollouts each, "
          f"concurrency {args.concurrency}; cores: {os.cpu_count()}", flush=True)  # fmt: skip
    rates: dict[str, float] = {}

    rates["harness"], baseline = timed(
        "harness, in process", total, lambda: run_harness(tasks, args.rollouts, args.concurrency, args.mode), None
    )

    import datasets

    from harness.adapters.verifiers import load_environment

    datasets.disable_progress_bars()

    by_request = {t.instruction: t for t in tasks}
    env = load_environment(tasks=tasks, mode=args.mode, reward="cfrr")
    rates["verifiers"], _ = timed(
        "verifiers, model in process", total,
        lambda: run_verifiers(env, _ReplayClient(by_request, args.mode), args.rollouts, args.concurrency), baseline,
    )  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        tasks_file = Path(tmp) / "tasks.jsonl"
        write_tasks(tasks_file, tasks)
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        command = [sys.executable, __file__, "--serve", str(tasks_file), "--port", str(port), "--mode", args.mode]
        server = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(REPO)})
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(url, server)
            rates["openenv"], _ = timed(
                "OpenEnv, server process, WebSocket sessions", total,
                lambda: run_openenv(url, tasks, args.rollouts, args.concurrency, args.mode), baseline,
            )  # fmt: skip
        finally:
            server.terminate()
            server.wait(timeout=30)

    base = rates["harness"]
    print("relative to the harness in process: " + ", ".join(f"{k} {v / base:.2f}x" for k, v in rates.items()))


if __name__ == "__main__":
    main()
