"""SFT data from a collected run: passing trajectories → a conversational ``datasets.Dataset``.

Reads ``RUN_DIR/trajectories.jsonl`` (written by ``harness collect``), keeps the trajectories that
passed, normalises their OpenAI-format messages, drops duplicate conversations, and splits train
and validation by task id so that no task leaks from one side to the other.

The dataset has the two columns TRL's ``SFTTrainer`` reads for tool-calling SFT:

- ``messages``: ``[{"role", "content", "tool_calls"?, "tool_call_id"?, "name"?, "reasoning_content"?}]``,
  with every tool call's ``arguments`` a canonical JSON string;
- ``tools``: the tool schemas as one JSON string (TRL ``json.loads`` it before templating).

Why strings: Arrow merges the schemas of dicts across rows and fills absent keys with nulls, so
``{"to": ...}`` in one call would render as ``{"to": ..., "ticket_id": null}`` in another.
Canonical means ``json.dumps(obj, ensure_ascii=False)``: the exact text the Qwen3 template's
``tojson`` would write for a dict, so a string renders byte-identically.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from training.errors import TrainingInputError

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = [
    "SCHEMA_VERSIONS",
    "TRAJECTORIES_FILE",
    "SFTData",
    "build_sft_data",
    "normalize_trajectory",
    "read_trajectories",
    "split_tasks",
]

TRAJECTORIES_FILE = "trajectories.jsonl"
# Trajectory schema versions this loader understands (docs/design.md, Core concepts: Trajectory).
SCHEMA_VERSIONS = frozenset({1})
_ROLES = frozenset({"system", "user", "assistant", "tool"})
_REQUIRED = ("schema_version", "task_id", "messages", "tools", "passed")


@dataclass(frozen=True)
class SFTData:
    """The train and validation datasets of a run, and what was kept or dropped on the way."""

    train: Dataset
    validation: Dataset | None
    stats: dict[str, int]


class _SkipTrajectory(Exception):
    """A passing trajectory that cannot teach anything good (e.g. malformed tool-call JSON)."""


def _trajectories_path(run_dir: Path) -> Path:
    if not run_dir.is_dir():
        raise TrainingInputError(f"run folder {run_dir} does not exist: run `harness collect` first")
    path = run_dir / TRAJECTORIES_FILE
    if not path.is_file():
        raise TrainingInputError(f"no {TRAJECTORIES_FILE} in {run_dir}: run `harness collect` first")
    return path


def _check_record(record: Any, where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise TrainingInputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [key for key in _REQUIRED if key not in record]
    if missing:
        raise TrainingInputError(f"{where}: missing field(s) {', '.join(missing)}")
    version = record["schema_version"]
    if isinstance(version, bool) or version not in SCHEMA_VERSIONS:
        raise TrainingInputError(
            f"{where}: schema_version {version!r} is not supported (this loader reads {sorted(SCHEMA_VERSIONS)})"
        )
    if not isinstance(record["task_id"], str) or not record["task_id"]:
        raise TrainingInputError(f"{where}: task_id must be a non-empty string")
    if not isinstance(record["passed"], bool):
        raise TrainingInputError(f"{where}: passed must be true or false, got {record['passed']!r}")
    if not isinstance(record["messages"], list) or not record["messages"]:
        raise TrainingInputError(f"{where}: messages must be a non-empty list")
    if not isinstance(record["tools"], list):
        raise TrainingInputError(f"{where}: tools must be a list of tool schemas")
    return record


def read_trajectories(run_dir: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, trajectory)`` for every non-blank line; a bad line raises, naming it."""
    path = _trajectories_path(Path(run_dir))
    with path.open("rb") as lines:  # bytes, so that bad UTF-8 is reported with its line number too
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            where = f"{path} line {number}"
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise TrainingInputError(f"{where}: corrupt line, not UTF-8 text") from None
            except json.JSONDecodeError as error:
                raise TrainingInputError(f"{where}: corrupt line, not valid JSON ({error.msg})") from None
            yield number, _check_record(record, where)


def _text(content: Any, where: str) -> str:
    """Message content as text: OpenAI allows null (assistant with tool calls) and lists of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(str(part.get("text", "")) for part in content)
    raise TrainingInputError(f"{where}: content must be a string, null or a list of text parts")


def _canonical_arguments(arguments: Any) -> str:
    try:  # what a model wrote: RecursionError (deep nesting) and ValueError (huge ints) included
        parsed = (json.loads(arguments) if arguments.strip() else {}) if isinstance(arguments, str) else arguments
        if not isinstance(parsed, dict):
            raise _SkipTrajectory("tool-call arguments that are not a JSON object")
        return json.dumps(parsed, ensure_ascii=False)
    except (ValueError, RecursionError):
        raise _SkipTrajectory("tool-call arguments that are not valid JSON") from None


def _tool_calls(raw: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise TrainingInputError(f"{where}: tool_calls must be a list")
    calls: list[dict[str, Any]] = []
    for index, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise TrainingInputError(f"{where}: tool_calls[{index}] needs function.name")
        calls.append(
            {
                "id": str(call.get("id") or f"call_{index}"),
                "type": "function",
                "function": {
                    "name": function["name"],
                    "arguments": _canonical_arguments(function.get("arguments")),
                },
            }
        )
    return calls


def _messages(raw_messages: list[Any], where: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}  # tool_call_id -> function name, to name each tool result
    for index, raw in enumerate(raw_messages):
        at = f"{where}, message {index}"
        if not isinstance(raw, dict) or raw.get("role") not in _ROLES:
            raise TrainingInputError(f"{at}: role must be one of {sorted(_ROLES)}")
        message: dict[str, Any] = {"role": raw["role"], "content": _text(raw.get("content"), at)}
        if raw["role"] == "assistant":
            if raw.get("tool_calls"):
                message["tool_calls"] = _tool_calls(raw["tool_calls"], at)
                call_names.update({c["id"]: c["function"]["name"] for c in message["tool_calls"]})
            if isinstance(raw.get("reasoning_content"), str) and raw["reasoning_content"]:
                message["reasoning_content"] = raw["reasoning_content"]
        elif raw["role"] == "tool":
            call_id = raw.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise TrainingInputError(f"{at}: a tool message needs tool_call_id")
            message["tool_call_id"] = call_id
            name = raw.get("name") or call_names.get(call_id)
            if name:
                message["name"] = name
        messages.append(message)
    # Turns after the last assistant message carry no label: drop them rather than train on nothing.
    while messages and messages[-1]["role"] != "assistant":
        messages.pop()
    if not messages:
        raise _SkipTrajectory("no assistant message")
    return messages


def _tools_json(tools: list[Any], where: str) -> str:
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise TrainingInputError(f"{where}: tools[{index}] must be an OpenAI function tool with function.name")
    return json.dumps(tools, ensure_ascii=False)


def normalize_trajectory(record: Mapping[str, Any], where: str = "trajectory") -> dict[str, Any]:
    """One SFT example ``{"messages", "tools"}`` from a trajectory record."""
    return {"messages": _messages(list(record["messages"]), where), "tools": _tools_json(list(record["tools"]), where)}


def _split_key(seed: int, task_id: str) -> str:
    return hashlib.sha256(f"{seed}\x00{task_id}".encode()).hexdigest()


def split_tasks(task_ids: set[str], *, val_fraction: float, seed: int) -> set[str]:
    """The validation task ids: ``floor(n * val_fraction)`` tasks chosen by a seeded hash, never all."""
    if not 0.0 <= val_fraction < 1.0:
        raise TrainingInputError(f"val_fraction must be in [0, 1), got {val_fraction!r}")
    n_val = min(math.floor(len(task_ids) * val_fraction), max(len(task_ids) - 1, 0))
    # A hash order, not random.shuffle: the same task lands on the same side for the same seed
    # whatever order the harness wrote the lines in.
    return set(sorted(task_ids, key=lambda task_id: _split_key(seed, task_id))[:n_val])


def _order_key(line_and_record: tuple[int, dict[str, Any]]) -> tuple[str, str, int]:
    number, record = line_and_record
    # Concurrent collection writes lines in completion order: sort so the dataset does not depend on it.
    return record["task_id"], json.dumps(record.get("rollout"), sort_keys=True), number


def build_sft_data(run_dir: str | Path, *, val_fraction: float = 0.1, seed: int = 0) -> SFTData:
    """Train/validation datasets from the passing trajectories of ``run_dir``."""
    from datasets import Dataset

    records = list(read_trajectories(run_dir))
    path = Path(run_dir) / TRAJECTORIES_FILE
    if not records:
        raise TrainingInputError(f"{path} has no trajectories: the run is empty")
    passed = sorted(((n, r) for n, r in records if r["passed"]), key=_order_key)
    if not passed:
        raise TrainingInputError(f"none of the {len(records)} trajectories in {path} passed: nothing to train on")

    seen: set[str] = set()
    examples: list[tuple[str, dict[str, Any]]] = []
    skipped = duplicates = 0
    for number, record in passed:
        try:
            example = normalize_trajectory(record, f"{path} line {number}")
        except _SkipTrajectory:
            skipped += 1
            continue
        key = json.dumps(example, sort_keys=True, ensure_ascii=False)
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        examples.append((record["task_id"], example))
    if not examples:
        raise TrainingInputError(f"no usable passing trajectory in {path} ({skipped} skipped as malformed)")

    tasks = {task_id for task_id, _ in examples}
    val_tasks = split_tasks(tasks, val_fraction=val_fraction, seed=seed)
    train_rows = [example for task_id, example in examples if task_id not in val_tasks]
    val_rows = [example for task_id, example in examples if task_id in val_tasks]
    stats = {
        "n_trajectories": len(records),
        "n_passed": len(passed),
        "n_skipped_malformed": skipped,
        "n_duplicates": duplicates,
        "n_examples": len(examples),
        "n_train_examples": len(train_rows),
        "n_validation_examples": len(val_rows),
        "n_train_tasks": len(tasks) - len(val_tasks),
        "n_validation_tasks": len(val_tasks),
    }
    return SFTData(
        train=Dataset.from_list(train_rows),
        validation=Dataset.from_list(val_rows) if val_rows else None,
        stats=stats,
    )
