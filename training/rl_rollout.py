"""TRL's ``rollout_func`` for CompoWorld: each rollout is one private harness episode, graded by the harness.

For the prompts of one generation batch (``group_size`` consecutive copies per task) this runs one
episode per copy, all concurrently in one event loop: ``harness.runner.run_episode`` with the task's
own private episode (``InProcessTransport``: a fresh or reset in-memory world per rollout), the
``PolicyAgent`` sampling each turn from the policy, and the runner grading the final state with
``task.grade``. It returns what GRPO needs (prompt and completion token ids, the mask of the model's
own tokens, vLLM's logprobs) plus, for the reward function, each rollout's per-criterion scores (in
the task's rubric order) and its trajectory record.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.runner import RolloutJob, RunnerConfig, rollout_seed, run_episode
from harness.tools import InProcessTransport
from harness.trajectory import Trajectory
from training.rl_agent import PolicyAgent, TurnLimits
from training.rl_data import task_id_of
from training.rl_generation import EpisodeKey, Generator, TurnBatcher
from training.rl_tokens import ChatTokens, Transcript

if TYPE_CHECKING:
    from trl import GRPOTrainer

    from mcp_services.tasks.spec import TaskSpec

__all__ = ["EpisodeRollouts", "RolloutConfig", "RolloutStats", "criterion_scores"]

GeneratorFactory = Callable[["GRPOTrainer"], Generator]


@dataclass(frozen=True, slots=True)
class RolloutConfig:
    runner: RunnerConfig
    limits: TurnLimits
    seed: int
    agent_name: str


@dataclass(frozen=True, slots=True)
class RolloutStats:
    """One generation batch, for throughput logs."""

    episodes: int
    generation_calls: int
    model_tokens: int
    seconds: float


def criterion_scores(task: TaskSpec, trajectory: Trajectory) -> list[float]:
    """The grade's per-criterion results as ``s_ik`` in [0, 1], in the order of the task's rubric."""
    return [1.0 if trajectory.criteria[item.id] else 0.0 for item in task.rubric]


class EpisodeRollouts:
    """Callable as ``GRPOTrainer(rollout_func=...)``. The generator is made on the first call, from the trainer."""

    def __init__(
        self, tasks: Sequence[TaskSpec], chat: ChatTokens, config: RolloutConfig, make_generator: GeneratorFactory
    ) -> None:
        self._tasks = {task.id: task for task in tasks}
        self._chat = chat
        self._config = config
        self._make_generator = make_generator
        self._generator: Generator | None = None
        # Episodes are reset from a snapshot per rollout: private state, without rebuilding the world each time.
        self._transport = InProcessTransport()
        self.stats: list[RolloutStats] = []

    def close(self) -> None:
        self._transport.close()

    def _jobs(self, prompts: Sequence[Any], rank: int, step: int) -> list[RolloutJob]:
        jobs: list[RolloutJob] = []
        for index, prompt in enumerate(prompts):
            task = self._tasks[task_id_of(prompt)]
            # The rollout number is the position in this step's generation batch, unique across processes.
            rollout = rank * len(prompts) + index
            jobs.append(RolloutJob(task, rollout, rollout_seed(self._config.seed, task.id, step * 1_000_003 + rollout)))
        return jobs

    async def _episodes(
        self, jobs: list[RolloutJob], generator: Generator
    ) -> tuple[list[Trajectory], dict[EpisodeKey, Transcript], TurnBatcher]:
        batcher = TurnBatcher(generator, len(jobs))
        agent = PolicyAgent(self._config.agent_name, self._chat, batcher, self._config.limits)

        async def episode(job: RolloutJob) -> Trajectory:
            try:
                return await run_episode(job, agent, self._transport, self._config.runner)
            finally:
                batcher.episode_done()

        trajectories = await asyncio.gather(*(episode(job) for job in jobs))
        return list(trajectories), agent.transcripts, batcher

    def _transcript(
        self, job: RolloutJob, trajectory: Trajectory, transcripts: dict[EpisodeKey, Transcript]
    ) -> Transcript:
        transcript = transcripts.get((job.task.id, job.rollout))
        if transcript is None:  # the episode ended before the model's first turn (e.g. a transport error)
            transcript = Transcript(self._chat.prompt_ids(trajectory.messages[:2], trajectory.tools))
        if not transcript.completion_ids:
            # GRPO needs one completion token per rollout; this one is the template's, so it carries no loss.
            transcript.add_template([self._chat.end_of_turn])
        return transcript

    def __call__(self, prompts: list[Any], trainer: GRPOTrainer) -> dict[str, Any]:
        if self._generator is None:
            self._generator = self._make_generator(trainer)
        generator = self._generator
        started = time.perf_counter()
        jobs = self._jobs(prompts, trainer.accelerator.process_index, trainer.state.global_step)
        trajectories, transcripts, batcher = asyncio.run(self._episodes(jobs, generator))
        drain = getattr(generator, "drain", None)
        if drain is not None:
            drain()
        records = [self._transcript(job, t, transcripts) for job, t in zip(jobs, trajectories, strict=True)]
        for trajectory, transcript in zip(trajectories, records, strict=True):
            # The context the episode took, exactly: the policy's own tokens, prompt and completion.
            trajectory.n_tokens = len(transcript.prompt_ids) + len(transcript.completion_ids)
            trajectory.token_counter = f"{self._config.agent_name} tokenizer"
        self.stats.append(
            RolloutStats(
                episodes=len(jobs),
                generation_calls=len(batcher.batches),
                model_tokens=sum(sum(r.env_mask) for r in records),
                seconds=time.perf_counter() - started,
            )
        )
        return {
            "prompt_ids": [r.prompt_ids for r in records],
            "completion_ids": [r.completion_ids for r in records],
            "env_mask": [r.env_mask for r in records],
            # Sampling logprobs come from vLLM only (for its importance-sampling correction).
            "logprobs": [r.logprobs for r in records] if trainer.args.use_vllm else None,
            "criterion_scores": [criterion_scores(job.task, t) for job, t in zip(jobs, trajectories, strict=True)],
            "trajectory": [t.to_record() for t in trajectories],
        }
