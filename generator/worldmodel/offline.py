"""The offline world model: the episode's rows in the tool's schema, else schema-driven values.

Deterministic: the answer is a function of the world seed, the tool, the arguments, the state and
the history. Given the rows a call answers from (``request.rows``), it presents them: one row lends
its same-named columns to the answer's properties; many rows fill the answer's list of records, one
record each. Without rows, it remembers what earlier calls said: a property named like an argument
takes the argument's value; otherwise, an earlier answer (or a stored row) about the record an id-like
argument names lends its same-named properties, newest first.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from mcp_services.kernel.world import World

from generator.values import ValueMaker
from generator.worldmodel.base import SimRequest, answer_problem


class OfflineWorldModel:
    name = "offline"

    def answer(self, request: SimRequest, feedback: str | None = None) -> Any:
        rng = random.Random(json.dumps([request.world_seed, request.service, request.tool, request.arguments],
                                       sort_keys=True, default=str))
        maker = ValueMaker(World.from_seed(request.world_seed), rng)
        if request.rows is not None:
            return self._present(maker, request.output_schema, request, request.rows)
        memory = _memory(request)
        return self._value(maker, request.output_schema, request, memory, depth=0, name="")

    def _present(self, maker: ValueMaker, schema: dict[str, Any], request: SimRequest, rows: list[dict[str, Any]]) -> Any:
        """The rows in the tool's schema: its list of records holds one per row, else the first row fills it."""
        props = schema.get("properties") or {}
        listed = next((k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "array"
                       and isinstance(v.get("items"), dict) and v["items"].get("type") == "object"), None)
        if listed is not None and (len(rows) != 1 or "id" not in props):
            memory = {**(rows[0] if len(rows) == 1 else {}), "total": len(rows)}
            out = self._value(maker, {**schema, "properties": {k: v for k, v in props.items() if k != listed}},
                              request, memory, depth=0, name="")
            item = props[listed]["items"]
            out[listed] = [self._value(maker, item, request, row, depth=0, name=listed) for row in rows]
            return out
        return self._value(maker, schema, request, dict(rows[0]) if rows else {}, depth=0, name="")

    def _value(self, maker: ValueMaker, schema: dict[str, Any], request: SimRequest, memory: dict[str, Any],
               depth: int, name: str) -> Any:
        if schema.get("type") == "object" or "properties" in schema:
            props = schema.get("properties") or {}
            out: dict[str, Any] = {}
            for key, sub in props.items():
                remembered = _recall(key, sub, request.arguments, memory) if depth == 0 else None
                if remembered is not None:
                    out[key] = remembered
                elif key == "status" and sub.get("enum") == ["ok"]:
                    out[key] = "ok"
                elif key == "message" and depth == 0 and sub.get("type") == "string":
                    out[key] = f"{request.tool.replace('_', ' ').capitalize()} done (simulated)."
                elif key == "result" and depth == 0 and not sub.get("properties"):
                    out[key] = {k: v for k, v in request.arguments.items()}
                elif key in schema.get("required", []) or depth < 2:
                    out[key] = self._value(maker, sub, request, memory, depth + 1, key)
            return out
        return maker.value(schema, name, prefer_examples=False)


_KEYISH = re.compile(r"(?i)(^id$|_id$|Id$|^key$|_key$|uuid$|sid$|_number$|^number$|^name$|^email$|^slug$)")


def _memory(request: SimRequest) -> dict[str, Any]:
    """Values from earlier answers and stored rows about the record this call names (by an id-like argument).

    Only key-like arguments (``charge_id``, ``email``...) select what is remembered: sharing a status or a
    currency with an earlier call does not make it the same record (so no other call's id leaks in)."""
    wanted = {json.dumps(v, sort_keys=True, default=str) for k, v in request.arguments.items()
              if _KEYISH.search(k) and v not in (None, "", [], {}) and not isinstance(v, (bool, dict, list))}
    memory: dict[str, Any] = {}
    sources: list[dict[str, Any]] = []
    for entry in reversed(request.history):  # newest first
        answer = entry.get("answer")
        if isinstance(answer, dict):
            sources.append({**entry.get("arguments", {}), **answer})
    sources.extend(request.state)
    for source in sources:
        values = {json.dumps(v, sort_keys=True, default=str) for v in source.values() if v not in (None, "", [], {})}
        if wanted & values:
            for key, value in source.items():
                memory.setdefault(key, value)
    return memory


def _recall(key: str, schema: dict[str, Any], arguments: dict[str, Any], memory: dict[str, Any]) -> Any:
    for source in (memory, arguments):
        if key in source and source[key] is not None and answer_problem(schema, source[key]) is None:
            return source[key]
    return None
