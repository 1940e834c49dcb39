"""The vocabulary of tool intents: what a tool is for, in the words of the work people do.

Every tool declares one intent (``refund``, ``notify``, ``note``...) and a few phrases: how a person
asks a colleague to do it ("refund {charge_id}", "issue a refund for {charge_id}"). Placeholders name
the tool's parameters; the composer fills them with a referring expression for the record or value a
parameter receives. Scenario archetypes are motifs over intents, so a generated service whose tools
declare intents takes part in the same workflows as the hand-written library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

Effect = Literal["read", "write"]

#: Intent -> (effect, meaning). Keep it small: an intent is a kind of work, not a tool name.
INTENTS: dict[str, tuple[Effect, str]] = {
    # reads
    "find": ("read", "search or list records by their fields"),
    "get": ("read", "read one record by its id or key"),
    "check": ("read", "read a status, balance, availability, summary or report"),
    # generic record writes
    "create": ("write", "create a record"),
    "update": ("write", "change fields of an existing record"),
    "delete": ("write", "delete, archive or trash a record"),
    "restore": ("write", "bring back an archived, trashed or deleted record"),
    "link": ("write", "attach or relate one record to another"),
    "tag": ("write", "add or remove a label, tag or category"),
    # people and communication
    "notify": ("write", "send a new message to people (email, text, direct message, call)"),
    "reply": ("write", "answer within an existing conversation (a thread, a ticket, a message)"),
    "post": ("write", "post a message in a shared channel or space"),
    "forward": ("write", "pass an existing message on to someone else"),
    "draft": ("write", "prepare a message or document without sending it"),
    "note": ("write", "add an internal note or comment to a record"),
    "assign": ("write", "give a record to a person to own or work on"),
    "invite": ("write", "add people to an event, channel, meeting, project or record"),
    "remove": ("write", "take a person or item out of a group, list, event or record"),
    "share": ("write", "give someone access to a file, document or record"),
    "opt_out": ("write", "record that someone does not want to be contacted"),
    # workflow
    "transition": ("write", "move a record to another stage or status of its workflow"),
    "close": ("write", "close, resolve, complete or mark a record as done"),
    "reopen": ("write", "reopen a closed or completed record"),
    "approve": ("write", "approve a request, report, invoice or change"),
    "reject": ("write", "reject or decline a request, application or change"),
    "submit": ("write", "submit something for review or approval"),
    "publish": ("write", "make a draft public"),
    "send": ("write", "send a document or item (an invoice, a contract, a campaign) to its recipients"),
    # time
    "schedule": ("write", "put an event, meeting, call or appointment in a calendar"),
    "reschedule": ("write", "move an event, meeting or due date to another time"),
    "cancel": ("write", "cancel an event, order, request, subscription or booking"),
    "book": ("write", "reserve a room, resource or slot"),
    # money and goods
    "charge": ("write", "take or capture a payment"),
    "refund": ("write", "give money back for a charge, order or payment"),
    "invoice": ("write", "issue an invoice or a payment request"),
    "pay": ("write", "record a payment received or made"),
    "ship": ("write", "create a shipment or label, or fulfil an order"),
}

READ_INTENTS = frozenset(name for name, (effect, _) in INTENTS.items() if effect == "read")

#: A parameter in a phrase: ``{ticket_id}``, or a generated API's own spelling (``{GroupId}``).
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def placeholders(phrase: str) -> list[str]:
    """The parameter names a phrase refers to, in order."""
    return PLACEHOLDER.findall(phrase)


def intent_problems(intent: str | None, effect: Effect, phrases: Iterable[str], params: Iterable[str]) -> list[str]:
    """What is wrong with a tool's declared intent and phrases (empty when they are fine)."""
    problems: list[str] = []
    if intent is not None:
        declared = INTENTS.get(intent)
        if declared is None:
            problems.append(f"unknown intent {intent!r}; known intents: {', '.join(sorted(INTENTS))}")
        elif declared[0] != effect:
            problems.append(f"intent {intent!r} is a {declared[0]} intent but the tool's effect is {effect!r}")
    known = set(params)
    for phrase in phrases:
        if not phrase.strip():
            problems.append("a phrase must not be empty")
        for name in placeholders(phrase):
            if name not in known:
                problems.append(f"phrase {phrase!r} names {{{name}}}, which is not a parameter")
    return problems
