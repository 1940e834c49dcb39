"""What a service's tools say together about each resource, read before entities are assembled.

One tool alone can mislead the planner: ``conversations.info(channel)`` names no id parameter, but
every other ``conversations.*`` method names its conversation by ``channel``; ``POST /invoices/{id}/pay``
looks like it creates a payment, but the invoice's documented statuses include ``paid``. Reading
all of a resource's tools at once settles it:

- ``rpc_rows``: an RPC resource's methods take the row by the parameter most of them use;
- ``memberships``: member reads (``conversations.members``) list the rows joins and invites add;
- ``documented_states``: the statuses the product documents for an entity (its list filter, its bodies);
- ``creating_actions``: an action whose state the row's documented statuses name changes the row;
- ``state_value``: the documented status a verb leads to (``finalize`` -> ``open``, ``void`` -> ``void``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from generator.naming import singular, snake, words
from generator.planner.intents import Intent, PreparedTool
from generator.planner.lexicon import MARKING_VERBS, TRANSITIONS, squash, verb_class
from generator.routes import method_verb, resource_keys, rpc_method

#: Documented statuses a verb's state may go by, beyond its own stem (first match wins).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "finalized": ("open", "final", "issued", "finalised"),
    "cancelled": ("canceled", "cancelled"),
    "voided": ("void", "voided", "canceled", "cancelled"),
    "captured": ("succeeded", "captured", "paid"),
    "confirmed": ("confirmed", "processing", "succeeded"),
    "completed": ("completed", "complete", "done", "closed", "finished"),
    "closed": ("closed", "done", "resolved", "completed"),
    "open": ("open", "opened", "reopened", "active", "new", "todo", "to_do"),
    "active": ("active", "enabled", "open", "live"),
    "inactive": ("inactive", "disabled", "deactivated"),
    "enabled": ("enabled", "active"),
    "disabled": ("disabled", "inactive", "deactivated"),
    "archived": ("archived", "inactive"),
    "approved": ("approved", "accepted"),
    "rejected": ("rejected", "declined", "denied"),
    "published": ("published", "live", "public"),
    "submitted": ("submitted", "pending", "in_review"),
    "sent": ("sent", "delivered", "queued"),
    "paid": ("paid", "succeeded", "settled"),
    "refunded": ("refunded",),
    "started": ("started", "in_progress", "running", "active"),
    "stopped": ("stopped", "paused", "inactive"),
    "paused": ("paused", "on_hold", "inactive"),
    "resolved": ("resolved", "closed", "done"),
    "signed": ("signed", "completed"),
    "shipped": ("shipped", "fulfilled", "in_transit"),
    "delivered": ("delivered", "completed"),
    "fulfilled": ("fulfilled", "completed", "shipped"),
    "expired": ("expired",),
    "suspended": ("suspended", "paused", "inactive"),
    "verified": ("verified", "approved"),
}
#: Statuses a new row starts in, by preference.
STARTING = ("draft", "pending", "new", "open", "created", "active", "requires_payment_method", "queued",
            "scheduled", "not_started", "todo", "to_do", "incomplete", "unsubmitted", "requires_input",
            "requires_confirmation", "unpaid", "enabled", "processing")
STATE_FIELDS = ("status", "state")


class _Planned(Protocol):
    tool: PreparedTool
    intent: Intent


def method_of(tool: PreparedTool) -> list[str] | None:
    return rpc_method(tool.path, None) if tool.path else rpc_method(None, tool.source)


def rpc_rows(planned: Sequence[_Planned]) -> None:
    """RPC methods name their resource's row by the resource's key (``conversations.info(channel)``)."""
    methods = [(m, p.tool.properties) for p in planned if (m := method_of(p.tool))]
    keys = resource_keys(methods)
    for p in planned:
        pieces = method_of(p.tool)
        if not pieces or len(pieces) < 2 or p.intent.entity is None:
            continue
        key = keys.get(squash(pieces[-2]))
        intent, verb = p.intent, method_verb(pieces) or ""
        if key is None or key not in p.tool.properties or _resource(pieces) != intent.entity:
            continue
        if intent.kind in ("get", "update", "delete", "transition") and not intent.current:
            if not intent.keys or list(intent.keys.values()) == [key]:
                intent.keys = {key: "id"}  # usergroups.disable(usergroup): the usergroup's id
        elif intent.kind in ("list", "search") and verb_class(verb) == "get":
            intent.kind, intent.keys = "get", {key: "id"}  # conversations.info(channel)
        elif intent.kind in ("link", "unlink"):
            intent.parents = [(intent.entity.removesuffix("_member"), [key])]
            intent.members = [m for m in intent.members if m != key]


def _resource(pieces: list[str]) -> str:
    return singular(snake(pieces[-2]))


def memberships(planned: Sequence[_Planned]) -> None:
    """Reads of a resource's members list the link rows its joins and invites add (``conversations.members``),
    and ``GET /tasks/{id}/tags`` lists the links ``addTag`` makes."""
    linked = {p.intent.entity.removesuffix("_member"): p.intent for p in planned
              if p.intent.kind in ("link", "unlink") and p.intent.entity and not p.intent.member_entity}
    tagged = {(p.intent.parents[0][0], p.intent.member_entity): p.intent.entity for p in planned
              if p.intent.kind in ("link", "unlink") and p.intent.member_entity and p.intent.parents}
    for p in planned:
        intent = p.intent
        if intent.kind in ("list", "search") and intent.parents and (intent.parents[0][0], intent.entity) in tagged:
            intent.entity = tagged[(intent.parents[0][0], intent.entity)]
            continue
        if intent.kind not in ("list", "search") or not linked:
            continue
        pieces = method_of(p.tool)
        if pieces and len(pieces) >= 2 and words(pieces[-1])[-1:] == ["members"]:
            row = _resource(pieces)
            link = linked.get(row)
            if link is not None and link.parents:
                key = link.parents[0][1][0]
                if key in p.tool.properties:
                    intent.entity, intent.parents, intent.keys = f"{row}_member", [(row, [key])], {}


def documented_states(planned: Sequence[_Planned]) -> dict[str, list[str]]:
    """Entity -> the statuses its tools document (enums of parameters named ``status`` or ``state``)."""
    out: dict[str, list[str]] = {}
    for p in planned:
        entity = p.intent.entity
        if not entity:
            continue
        for param, schema in p.tool.properties.items():
            if squash(param) not in STATE_FIELDS or not isinstance(schema, dict):
                continue
            enum = schema.get("enum") or (schema.get("items") or {}).get("enum")
            if isinstance(enum, list):
                values = out.setdefault(entity, [])
                values.extend(str(v) for v in enum if isinstance(v, str) and v and str(v) not in values)
    return out


def creating_actions(planned: Sequence[_Planned], states: dict[str, list[str]]) -> None:
    """``POST /invoices/{id}/pay`` sets the invoice to ``paid`` when the invoice's statuses include it."""
    for p in planned:
        action = p.intent.action
        if action is None or p.intent.kind != "create":
            continue
        verb, row, keys = action
        target = TRANSITIONS.get(verb)
        documented = states.get(row, [])
        if target is None or target[0] != "status" or not keys or state_value(str(target[1]), documented) is None:
            if verb in MARKING_VERBS and keys:  # the record is made, and the row shows it (``refunded``)
                p.intent.marks = (row, MARKING_VERBS[verb])
            continue
        p.intent = Intent(kind="transition", entity=row, keys={keys[0]: "id"} if len(keys) == 1 else {k: k for k in keys},
                          parents=p.intent.parents[1:], verb=verb, style=p.intent.style)


def state_value(target: str, documented: Sequence[Any]) -> str | None:
    """The documented status ``target`` (a verb's state, ``voided``) goes by, or None when none fits."""
    values = [str(v) for v in documented]
    lowered = {v.lower(): v for v in values}
    if target.lower() in lowered:
        return lowered[target.lower()]
    stem = _stem(target)
    for value in values:
        if _stem(value) == stem:
            return value
    for synonym in SYNONYMS.get(target, ()):
        if synonym in lowered:
            return lowered[synonym]
    return None


def starting_state(values: Sequence[str]) -> str:
    """The status a new row starts in: a starting word the product documents, else its first."""
    lowered = {v.lower(): v for v in values}
    return next((lowered[s] for s in STARTING if s in lowered), values[0])


def _stem(word: str) -> str:
    word = word.lower().replace("-", "_")
    for suffix in ("led", "ed", "d", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] if suffix != "led" else word[:-3] + "l"
    return word
