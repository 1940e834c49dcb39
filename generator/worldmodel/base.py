"""The world model's contract: a request (spec, arguments, state, history) in, a validated answer out.

``simulate`` wraps any backend: it caches answers (the same call in the same state gives the same
answer), validates each against the tool's data schema, retries with the validation error as
feedback, and finally fails the call with a clear error instead of returning something malformed.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from mcp_services.kernel.errors import ToolError

#: The data schema of a simulated tool whose source declares none.
DEFAULT_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["ok"], "description": "ok when the request was carried out"},
        "message": {"type": "string", "description": "What happened, in one sentence"},
        "result": {"type": "object", "description": "What the service returned", "additionalProperties": True},
    },
    "required": ["status", "message"],
}


@dataclass(frozen=True)
class SimRequest:
    """Everything the world model may look at to answer one call."""

    service: str
    tool: str
    description: str
    effect: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    arguments: dict[str, Any]
    state: list[dict[str, Any]] = field(default_factory=list)  # relevant rows of the service
    history: list[dict[str, Any]] = field(default_factory=list)  # earlier simulated calls: tool, arguments, answer
    world_seed: int = 0
    now: str = ""
    rows: list[dict[str, Any]] | None = None  # the episode's rows the answer must present (None: no such rows)

    def cache_key(self, backend: str) -> str:
        payload = json.dumps(
            [backend, self.service, self.tool, self.arguments, self.state, self.history, self.world_seed],
            sort_keys=True, default=str, ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


class WorldModel(Protocol):
    """A backend: ``answer`` returns a candidate (validated by ``simulate``); ``feedback`` says what was wrong."""

    name: str

    def answer(self, request: SimRequest, feedback: str | None = None) -> Any: ...


class WorldModelError(RuntimeError):
    """A backend could not answer (network, timeout, unparsable output)."""


class AnswerCache:
    """A bounded LRU of answers, keyed by backend, call and state."""

    def __init__(self, size: int = 20_000) -> None:
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()

    def get(self, key: str) -> Any | None:
        if key in self._items:
            self._items.move_to_end(key)
            return json.loads(self._items[key])
        return None

    def put(self, key: str, value: Any) -> None:
        self._items[key] = json.dumps(value, sort_keys=True, default=str)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


_VALIDATORS: dict[str, Draft202012Validator] = {}


def answer_problem(schema: dict[str, Any], answer: Any) -> str | None:
    """Why ``answer`` does not fit ``schema``, or None."""
    key = json.dumps(schema, sort_keys=True)
    validator = _VALIDATORS.get(key)
    if validator is None:
        validator = _VALIDATORS[key] = Draft202012Validator(schema)
    error = best_match(validator.iter_errors(answer))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.path) or "the answer"
    return f"{where}: {error.message[:200]}"


def rows_problem(rows: list[dict[str, Any]] | None, answer: Any) -> str | None:
    """Why ``answer`` does not present exactly ``rows`` (the episode's rows it must answer from), or None.

    One row: its id is among the answer's values, and a top-level ``id`` is that id. Many: every object of
    the answer's list of records carries the id of one of the rows (no invented records)."""
    if rows is None:
        return None
    ids = {_key(r.get("id")) for r in rows}
    if len(rows) == 1 and not _records(answer):
        top = answer.get("id") if isinstance(answer, dict) else None
        if top is not None and _key(top) not in ids:
            return f"id {top!r} is not the id of the row given ({rows[0].get('id')!r})"
        if _key(rows[0].get("id")) not in _scalars(answer):
            return f"the answer does not present the row {rows[0].get('id')!r}"
        return None
    records = _records(answer)
    invented = [r.get("id") for r in records if "id" in r and _key(r.get("id")) not in ids]
    if invented:
        return f"records {invented[:3]!r} are not among the rows given ({sorted(ids)[:5]})"
    if len(records) > len(rows):
        return f"{len(records)} records where the state has {len(rows)}"
    return None


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _scalars(node: Any, depth: int = 0) -> set[str]:
    if depth > 3:
        return set()
    if isinstance(node, dict):
        return set().union(*(_scalars(v, depth + 1) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(_scalars(v, depth + 1) for v in node[:50])) if node else set()
    return {_key(node)}


def _records(answer: Any) -> list[dict[str, Any]]:
    """The answer's list of records: the answer itself if it is one, else its first list of objects."""
    if isinstance(answer, list):
        return [r for r in answer if isinstance(r, dict)]
    if isinstance(answer, dict):
        for value in answer.values():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                return value
    return []


def simulate(model: WorldModel, request: SimRequest, cache: AnswerCache, *, attempts: int = 3) -> Any:
    """A validated answer for ``request`` (cached), or a ``ToolError`` after ``attempts`` tries."""
    key = request.cache_key(model.name)
    cached = cache.get(key)
    if cached is not None:
        return cached
    feedback: str | None = None
    for _ in range(max(1, attempts)):
        try:
            candidate = model.answer(request, feedback)
        except WorldModelError as exc:
            feedback = f"The previous attempt failed: {exc}"
            continue
        problem = answer_problem(request.output_schema, candidate) or rows_problem(request.rows, candidate)
        if problem is None:
            canonical = json.loads(json.dumps(candidate, sort_keys=True, default=str))  # the cached form, always
            cache.put(key, canonical)
            return canonical
        feedback = (f"Your answer did not match the output schema or the state ({problem}). Answer again with JSON "
                    "that matches the schema and presents exactly the rows of the state given.")
    raise ToolError(
        "internal_error",
        f"{request.service}.{request.tool} is simulated and its world model ({model.name}) gave no valid answer "
        f"after {attempts} tries ({feedback or 'no answer'}); nothing was changed. Try again or use another tool.",
    )
