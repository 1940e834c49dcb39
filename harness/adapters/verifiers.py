"""CompoWorld as a ``verifiers`` environment (extra ``verifiers``).

``load_environment(tasks="tasks.jsonl", mode="direct", reward="cfrr", max_turns=32)`` returns a
``verifiers.MultiTurnEnv`` whose dataset has one row per task (the harness's system prompt and the
task's request, the task id in ``info``). Every rollout opens its own private episode of its task
(setup applied) in ``setup_state`` and sees that episode's tools; tool calls run through the
harness's tool seam; when the rollout ends, however it ends, the episode is closed and graded by
the task's checks. The rubric turns the grade into the reward:

- ``cfrr``: the Completion-Focused Rubric Reward, a group reward over the rollouts of one task
  (``mcp_services.tasks.rewards``; groups are formed by task id, never by position);
- ``binary``: 1 when every criterion passes; ``rubric``: the mean of the criteria.

``passed`` and ``rubric_score`` ride along as metrics; ``state["compoworld"]`` holds the full grade.
An evaluation in which every rollout failed before the model's first answer (no model server, say)
ends with one error line and exit code 1 (verifiers itself logs each failed rollout and exits 0).
Run it with verifiers' own evaluation, ``await env.evaluate(AsyncOpenAI(base_url=...), model)``, or
``vf-eval harness.adapters.verifiers -a '{"tasks": "tasks.jsonl"}' -b http://127.0.0.1:8000/v1 -m MODEL``.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import verifiers as vf
    from datasets import Dataset
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f"harness.adapters.verifiers needs the verifiers extra ({exc.name} is missing): "
        "pip install 'compoworld[verifiers]'"
    ) from exc

from harness.adapters.episodes import (
    AdapterEpisode,
    EpisodeClosedError,
    TaskCatalog,
    TaskSource,
    check_mode,
    episode_prompt,
)
from harness.defaults import DEFAULT_MAX_TURNS
from harness.errors import HarnessInputError
from harness.tools import TRANSPORTS, InProcessTransport, ToolTransport, make_transport
from mcp_services.serving.surface import Mode
from mcp_services.tasks.rewards import RewardKind, group_rewards

__all__ = ["REWARDS", "CompoWorldEnv", "CompoWorldRubric", "load_environment"]

REWARDS: tuple[RewardKind, ...] = ("cfrr", "binary", "rubric")
SUPPORTED_VERSION = "0.1.10"  # the newest verifiers beside mcp 2.x and trl's datasets (docs/rl-frameworks.md)

if not hasattr(vf, "MultiTurnEnv"):  # verifiers 0.4 moved to another API (verifiers.v1)
    raise ImportError(
        f"harness.adapters.verifiers is written for verifiers {SUPPORTED_VERSION}, found {vf.__version__}: "
        "pip install 'compoworld[verifiers]'"
    )

# How verifiers' stop conditions map to the harness's stop reasons.
_STOPS = {"answered": "answer", "has_final_env_response": "max_turns", "has_error": "agent_error"}


def _grade(state: vf.State) -> dict[str, Any]:
    result = state.get("compoworld")
    if not isinstance(result, dict):
        raise RuntimeError(f"rollout {state.get('trajectory_id')} has no grade: its episode never opened")
    return result


class CompoWorldRubric(vf.Rubric):
    """The reward from the grade of each rollout's episode: CFRR (a group reward), binary or rubric."""

    def __init__(self, reward: str = "cfrr", **knobs: float) -> None:
        if reward not in REWARDS:
            raise HarnessInputError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        try:  # fail at load time, not in the first group, on a bad knob
            group_rewards(["task"], [[1.0]], reward, **knobs)
        except ValueError as exc:
            raise HarnessInputError(str(exc)) from None
        super().__init__()
        self.kind: RewardKind = reward  # type: ignore[assignment]
        self.knobs = dict(knobs)
        main = {"cfrr": self.cfrr, "binary": self.passed, "rubric": self.rubric_score}[reward]
        self.add_reward_func(main, weight=1.0)
        for metric in (self.passed, self.rubric_score):
            if metric != main:
                self.add_metric(metric)

    async def passed(self, state: vf.State) -> float:
        return 1.0 if _grade(state)["passed"] else 0.0

    async def rubric_score(self, state: vf.State) -> float:
        return float(_grade(state)["rubric_score"])

    async def cfrr(self, states: list[vf.State]) -> list[float]:
        """A group reward: verifiers passes every rollout of a group (``states``) at once."""
        grades = [_grade(state) for state in states]
        return group_rewards(
            [g["task_id"] for g in grades], [g["criterion_scores"] for g in grades], "cfrr", **self.knobs
        )


class CompoWorldEnv(vf.MultiTurnEnv):
    """CompoWorld tasks as a multi-turn tool environment with a private episode per rollout."""

    def __init__(self, catalog: TaskCatalog, mode: Mode, rubric: CompoWorldRubric, max_turns: int,
                 transport: ToolTransport | None = None, **kwargs: Any):
        rows = [{"prompt": episode_prompt(t, mode), "info": json.dumps({"task_id": t.id})} for t in catalog]
        super().__init__(dataset=Dataset.from_list(rows), rubric=rubric, max_turns=max_turns, **kwargs)
        self.catalog = catalog
        self.mode = mode
        self.reward_kind = rubric.kind
        # In process by default: episodes reset from a snapshot, private and fast to reopen.
        self._transport = transport or InProcessTransport()
        self._episodes: dict[str, AdapterEpisode] = {}  # open episodes by rollout (trajectory id)

    @property
    def open_episodes(self) -> int:
        return len(self._episodes)

    async def setup_state(self, state: vf.State, **kwargs: Any) -> vf.State:
        task = self.catalog.get(state["info"].get("task_id"))
        episode = await AdapterEpisode.open(self._transport, task, self.mode)
        self._episodes[state["trajectory_id"]] = episode
        state["oai_tools"] = episode.tools
        return state

    def _episode(self, state: vf.State) -> AdapterEpisode:
        episode = self._episodes.get(state["trajectory_id"])
        if episode is None:
            raise EpisodeClosedError(
                f"rollout {state['trajectory_id']} has no open episode: it has ended (or never started)"
            )
        return episode

    @vf.stop
    async def answered(self, state: vf.State) -> bool:
        """The model replied without a tool call: that reply is its final answer."""
        if not state["trajectory"]:
            return False
        last = state["trajectory"][-1]["completion"][-1]
        return last["role"] == "assistant" and not last.get("tool_calls")

    async def max_turns_reached(self, state: vf.State) -> bool:  # type: ignore[override]
        """Not a stop condition here (no ``@vf.stop``): like the harness, the tool calls of the last
        turn still run; ``env_response`` then ends the rollout with ``final_env_response``."""
        return False

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        episode = self._episode(state)
        replies: list[vf.ChatMessage] = []
        for call in messages[-1].get("tool_calls") or ():  # type: ignore[union-attr]
            function = call.get("function") or {}
            outcome = await episode.call(str(function.get("name") or ""), function.get("arguments"))
            replies.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": outcome.text})
        if len(state["trajectory"]) >= self.max_turns > 0:
            state["final_env_response"] = replies
        return replies  # type: ignore[return-value]

    async def evaluate(self, *args: Any, **kwargs: Any) -> Any:
        """verifiers' evaluation, which ends as a failure (``SystemExit``: one line, exit code 1, through
        ``vf-eval`` too) when every rollout failed before the model answered: there is nothing to report."""
        outputs = await super().evaluate(*args, **kwargs)
        rollouts = list(outputs["outputs"])
        # Failed before the model's first answer: a rollout that got further is graded on what it did.
        failed = [output.get("error") for output in rollouts if output.get("error") and not output.get("completion")]
        if rollouts and len(failed) == len(rollouts):
            first = failed[0]
            detail = first.get("error_chain_str") or first.get("error") if isinstance(first, dict) else first
            raise SystemExit(
                f"vf-eval: error: all {len(rollouts)} rollouts failed before the model's first answer; the first: "
                f"{' '.join(str(detail).split())[:500]} (is the model server at the base URL running?)"
            )
        return outputs

    @vf.cleanup
    async def grade_episode(self, state: vf.State) -> None:
        """Runs when the rollout stops or is cancelled: close and grade its episode."""
        episode = self._episodes.pop(state["trajectory_id"], None)
        if episode is None:
            return
        condition = state.get("stop_condition")
        stop = _STOPS.get(condition, condition) if state.get("is_completed") else "abandoned"
        answer = None
        if stop == "answer":
            answer = state["trajectory"][-1]["completion"][-1].get("content") or ""
        state["compoworld"] = (await episode.finish(answer, stop or "abandoned")).to_dict()

    @vf.teardown
    async def close_episodes(self) -> None:
        """At exit: close what a rollout that died without its cleanup left open, then the pool."""
        while self._episodes:
            _, episode = self._episodes.popitem()
            await episode.close()
        self._transport.close()


def load_environment(
    tasks: TaskSource = None,
    mode: str = "direct",
    reward: str = "cfrr",
    max_turns: int = DEFAULT_MAX_TURNS,
    *,
    transport: str = "inprocess",
    beta: float | None = None,
    lam: float | None = None,
    eps: float | None = None,
    **kwargs: Any,
) -> CompoWorldEnv:
    """CompoWorld tasks as a verifiers environment.

    ``tasks``: a ``tasks.jsonl`` path or a list of ``TaskSpec`` (None: the harness's default set);
    ``mode``: ``direct`` (every tool) or ``discover`` (four meta-tools); ``reward``: ``cfrr``,
    ``binary`` or ``rubric``; ``beta``/``lam``/``eps``: CFRR's knobs (None: ``mcp_services.tasks.rewards``'s
    defaults); ``max_turns``: model turns
    per rollout; ``transport``: ``inprocess`` (default), or ``stdio``/``http`` for a task server per
    rollout (over HTTP each with its own token, checked before the first call). Other keyword
    arguments go to ``verifiers.Environment``.
    """
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise HarnessInputError(f"max_turns must be a whole number of at least 1, not {max_turns!r}")
    knobs = {name: value for name, value in (("beta", beta), ("lam", lam), ("eps", eps)) if value is not None}
    rubric = CompoWorldRubric(reward, **knobs)
    if transport not in TRANSPORTS:
        raise HarnessInputError(f"transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    return CompoWorldEnv(TaskCatalog(tasks), check_mode(mode), rubric, max_turns, make_transport(transport), **kwargs)
