"""The trajectory: one rollout as one JSON line of ``trajectories.jsonl``.

Fields (docs/design.md, Core concepts: Trajectory): ``messages`` and ``tools`` exactly as the model saw
them (OpenAI format; tool-call ``arguments`` are JSON strings, as the model wrote them), the grade
(``criteria`` id -> passed, ``rubric_score``, ``passed``, ``collateral``), counts, the stop reason,
the context it takes (``n_tokens``, counted by ``token_counter``: see ``harness.tokens``), and
``timings``, the only field that holds wall-clock measurements: everything else is a function of the
task, the agent and the seed. The file loads with ``datasets`` as is.

``n_tokens`` and ``token_counter`` came after version 1 was first written: they are optional, so
older lines stay readable (their count is None, and ``harness eval`` counts them when it reads them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Literal

__all__ = ["SCHEMA_VERSION", "STOP_REASONS", "StopReason", "Trajectory", "TrajectoryFormatError"]

SCHEMA_VERSION = 1

StopReason = Literal["answer", "max_turns", "episode_timeout", "agent_error", "transport_error"]
STOP_REASONS: tuple[str, ...] = ("answer", "max_turns", "episode_timeout", "agent_error", "transport_error")

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema_version": int,
    "task_id": str,
    "rollout": int,
    "agent": str,
    "messages": list,
    "tools": list,
    "criteria": dict,
    "rubric_score": (int, float),
    "passed": bool,
    "n_tool_calls": int,
    "timings": dict,
}


class TrajectoryFormatError(ValueError):
    """A record that is not a trajectory this version can read."""


@dataclass(slots=True)
class Trajectory:
    task_id: str
    rollout: int
    agent: str
    mode: str
    seed: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    answer: str | None
    criteria: dict[str, bool]
    rubric_score: float
    passed: bool
    collateral: list[str]
    n_tool_calls: int
    n_service_calls: int
    n_turns: int
    stop_reason: str
    error: str | None
    task_info: dict[str, Any]  # services, capabilities, plan_length: what `harness eval` breaks down by
    n_tokens: int | None = None  # the whole conversation, tools included; None: not counted (older lines)
    token_counter: str | None = None  # what counted it: "qwen3" or an estimate (harness.tokens)
    timings: dict[str, float] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @property
    def key(self) -> tuple[str, int]:
        return self.task_id, self.rollout

    def to_record(self) -> dict[str, Any]:
        """The JSON record; shares the message and tool objects (no deep copy: lines are written often)."""
        # schema_version first: a person reading the file sees what it is.
        return {"schema_version": self.schema_version, **{f.name: getattr(self, f.name) for f in _FIELDS}}

    def to_line(self) -> str:
        """One line of JSON (no newline). Key order is fixed, so equal trajectories give equal lines.

        Assembled field by field, exactly as ``json.dumps`` of the record would be, so that the tool
        schemas (most of a line, and the same list object for every rollout on the same services)
        are encoded once, not once per line.
        """
        parts = []
        for key, value in self.to_record().items():
            text = _encoded_tools(value) if key == "tools" else _dumps(value)
            parts.append(f"{_dumps(key)}:{text}")
        return "{" + ",".join(parts) + "}"

    def without_timings(self) -> dict[str, Any]:
        """The record minus the one field that holds wall-clock time: equal for equal rollouts."""
        record = self.to_record()
        record.pop("timings")
        return record

    @classmethod
    def from_record(cls, record: Any) -> Trajectory:
        """Validate and read a parsed line; ``TrajectoryFormatError`` says what is wrong."""
        if not isinstance(record, dict):
            raise TrajectoryFormatError(f"a trajectory is a JSON object, not {type(record).__name__}")
        for name, kind in _REQUIRED.items():
            if name not in record:
                raise TrajectoryFormatError(f"missing field {name!r}")
            value = record[name]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise TrajectoryFormatError(f"field {name!r} has the wrong type ({type(value).__name__})")
        if record["schema_version"] != SCHEMA_VERSION:
            raise TrajectoryFormatError(
                f"schema_version {record['schema_version']} is not supported (this harness reads {SCHEMA_VERSION})"
            )
        return cls(
            task_id=record["task_id"],
            rollout=record["rollout"],
            agent=record["agent"],
            mode=str(record.get("mode", "direct")),
            seed=int(record.get("seed", 0)),
            messages=record["messages"],
            tools=record["tools"],
            answer=record.get("answer"),
            criteria={str(k): bool(v) for k, v in record["criteria"].items()},
            rubric_score=float(record["rubric_score"]),
            passed=record["passed"],
            collateral=list(record.get("collateral") or []),
            n_tool_calls=record["n_tool_calls"],
            n_service_calls=int(record.get("n_service_calls", 0)),
            n_turns=int(record.get("n_turns", 0)),
            stop_reason=str(record.get("stop_reason", "answer")),
            error=record.get("error"),
            task_info=dict(record.get("task_info") or {}),
            n_tokens=_optional_int(record.get("n_tokens"), "n_tokens"),
            token_counter=None if record.get("token_counter") is None else str(record["token_counter"]),
            timings={str(k): float(v) for k, v in record["timings"].items()},
        )

    @classmethod
    def from_line(cls, line: str | bytes) -> Trajectory:
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TrajectoryFormatError(f"not valid JSON ({exc})") from None
        return cls.from_record(record)


_FIELDS = tuple(f for f in fields(Trajectory) if f.name != "schema_version")


def _optional_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TrajectoryFormatError(f"field {name!r} must be a count (a non-negative integer) or null, not {value!r}")
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_TOOLS_CACHE: dict[int, tuple[list[dict[str, Any]], str]] = {}


def _encoded_tools(tools: list[dict[str, Any]]) -> str:
    # Keyed by identity; the entry holds the list itself, so its id cannot be reused while cached.
    # Tool lists are never mutated once an episode has listed them.
    hit = _TOOLS_CACHE.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    text = _dumps(tools)
    if len(_TOOLS_CACHE) >= 64:
        _TOOLS_CACHE.pop(next(iter(_TOOLS_CACHE)))
    _TOOLS_CACHE[id(tools)] = (tools, text)
    return text
