"""RPC methods as documentation names them: ``conversations.invite`` is the ``invite`` method of the
``conversations`` resource. The planner and the gate's surface both read them here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from generator.naming import words
from generator.planner.lexicon import squash, verb_class

_EXTENSION = re.compile(r"\.(json|xml|csv|txt|html|yaml)$", re.I)


def rpc_method(path: str | None, source: str | None) -> list[str] | None:
    """The dotted pieces of an RPC method (``["conversations", "invite"]``), from its path's last segment
    (``/conversations.invite``) or its source name; None for REST paths and plain names."""
    if path:
        last = _EXTENSION.sub("", path.split("?")[0].rstrip("/").rsplit("/", 1)[-1])
        if "." in last and "{" not in last:
            return [p for p in last.split(".") if p]
        return None
    if source and "." in source and " " not in source:
        return [p for p in source.split(".") if p]
    return None


def method_verb(pieces: list[str]) -> str | None:
    """The verb of an RPC method: the first word of its last piece (``setTopic`` -> ``set``)."""
    parts = words(pieces[-1]) if pieces else []
    return parts[0] if parts else None


def resource_keys(methods: Iterable[tuple[list[str], dict[str, Any]]]) -> dict[str, str]:
    """Per RPC resource (``conversations``), the parameter its methods name a row by (``channel``).

    ``methods`` are (pieces, parameter schemas). The key is the scalar parameter that most of a
    resource's methods take, creates and lists aside (they name no existing row)."""
    votes: dict[str, Counter[str]] = {}
    counted: Counter[str] = Counter()
    for pieces, properties in methods:
        if len(pieces) < 2:
            continue
        verb = method_verb(pieces)
        if not verb or verb_class(verb) in ("create", "list") or verb in ("open", "list"):
            continue
        resource = squash(pieces[-2])
        counted[resource] += 1
        for param, schema in properties.items():
            if isinstance(schema, dict) and schema.get("type") in ("string", "integer"):
                votes.setdefault(resource, Counter())[param] += 1
    out: dict[str, str] = {}
    for resource, counts in votes.items():
        param, count = counts.most_common(1)[0]
        if count >= 2 and count * 2 > counted[resource]:
            out[resource] = param
    return out
