"""Act: a write chosen by its intent on a record, among the tools of whatever service holds that record.

``act(s, "refund", charge, {...})`` finds the tool of the charge's service whose intent is ``refund``
and which takes that charge (a typed id, or a polymorphic ``entity_type`` + ``entity_id`` pair),
names the record in it, and runs it with the other arguments. ``tell`` and ``log`` are the report
stage's two other forms: a word to a colleague (a chat message, or an email) and a line on a record
(a note or comment, by intent ``note``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp_services.tasks.checks import Check

from mcp_services.kernel.world import Person

from composer.catalog import ToolInfo
from composer.plan import Composed, Expr, ListOf, Lit, Ref
from composer.scenario import Rec, Said, Scenario, Skip, Stage, Step, detail

Target = Step | Rec


def _value_of(target: Target, name: str) -> Any:
    return target.value(name) if isinstance(target, Step) else target.get(name)


def _field_of(target: Target, name: str) -> Expr:
    """The target's id (or the natural key a tool names it by), as the step that found it returned it."""
    if isinstance(target, Step):
        return target.ref(name)
    return Lit(target.key if name == "id" else target[name])


def _kind_of(s: Scenario, target: Target) -> tuple[str, str]:
    if isinstance(target, Rec):
        return target.service, target.entity
    info = s.catalog.tool(target.service, target.tool)
    if not info.entity:
        raise Skip(f"{target.service}.{target.tool} returns no record to act on")
    service, entity = info.entity.split(".", 1)
    return service, entity


def tools_for(s: Scenario, target: Target, intent: str) -> list[tuple[ToolInfo, dict[str, Expr]]]:
    """Tools that do ``intent`` on the target record, each with the arguments that name the record."""
    service, entity = _kind_of(s, target)
    found = []
    for tool in s.catalog.tools_of(service):
        if not tool.is_write or tool.intent != intent or tool.simulated:
            continue
        naming = s.kinds.naming(tool, service, entity)
        if naming is None or (naming.field != "id" and _value_of(target, naming.field) in (None, "")):
            continue  # a tool that names records by a key this one lacks (a direct message has no channel name)
        args: dict[str, Expr] = {naming.param: _field_of(target, naming.field)}
        if naming.type_param is not None:
            args[naming.type_param] = Lit(entity)
        found.append((tool, args))
    return found


def act(
    s: Scenario,
    intent: str,
    target: Target,
    args: Mapping[str, Any] | None = None,
    *,
    say: str,
    stage: Stage = "act",
    prefer: str | None = None,
    **options: Any,
) -> Step:
    """Do ``intent`` on ``target`` (a found step or a record) with ``args``; ``prefer`` a tool name when several fit."""
    candidates = tools_for(s, target, intent)
    usable = [(t, a) for t, a in candidates if all(t.param(name) is not None for name in (args or {}))]
    if not usable:
        service, entity = _kind_of(s, target)
        raise Skip(f"no tool of {service} does {intent!r} on a {entity}" + (f" with {', '.join(args or {})}" if args else ""))
    usable.sort(key=lambda pair: (pair[0].name != prefer, len(pair[0].params), pair[0].name))
    tool, named = usable[0]
    return s.call(tool.service, tool.name, {**named, **(args or {})}, say=say, stage=stage, **options)


# -- report: a word to a colleague, a line on a record ---------------------------------------------------


def tell(
    s: Scenario,
    colleague: Person,
    parts: Sequence[str | Ref],
    *,
    say: str,
    facts: Sequence[Said] = (),
    subject: str = "",
    how: Sequence[str] = ("chat", "email"),
) -> Step:
    """Let a colleague know: a direct message in chat, or an email (seeded choice among what is mounted)."""
    if colleague.email == s.world.user.email:
        raise Skip("the user does not message themselves")
    options = [h for h in how if (h == "chat" and s.has("chat")) or (h == "email" and s.has("mailbox"))]
    if not options:
        raise Skip("no way to reach a colleague is mounted")
    body = Composed(tuple(parts))
    if s.rng.choice(options) == "chat":
        dm = s.call("chat", "open_direct_message", {"user_email": colleague.email}, say="", stage="report", guided=False)
        s.notes[dm.index].told = colleague.email  # the way in, not a change of its own
        step = s.call("chat", "post_message", {"channel": dm.ref("id"), "text": body}, say=say, stage="report",
                      facts=facts, guided=True)
    else:
        step = s.call(
            "mailbox", "send_email",
            {"to": ListOf((Lit(colleague.email),)), "subject": detail(subject or "Update"), "body": body},
            say=say, stage="report", facts=facts, guided=True,
        )
    s.notes[step.index].told = colleague.email
    return step


def told_options(s: Scenario, email: str, found: Sequence[Check], carried: Sequence[Check]) -> list[list[Any]]:
    """The other ways a word reaches a colleague, checked alike: an email to them, or a post in a chat with them (one
    they already have, or a new one), stating the same facts. ``found`` and ``carried`` are the checks of the message
    the reference sent: its ``$states`` facts and the values it carries from records the plan made."""
    from mcp_services.tasks.checks import CarriedValue, RowExists

    states = next((want for c in found if isinstance(c, RowExists) for want in c.match.values()
                   if isinstance(want, dict) and "$states" in want), None)
    text = {"$states": states["$states"]} if states else None

    def carry(service: str, table: str, match: dict[str, Any], column: str) -> list[Any]:
        return [c.model_copy(update={"service": service, "table": table, "match": match, "column": column})
                for c in carried if isinstance(c, CarriedValue)]

    options: list[list[Any]] = []
    if s.has("mailbox"):
        to = {"to": {"$includes": [email]}}
        options.append([RowExists(id="told-by-email", service="mailbox", table="messages", change="added",
                                  match={**to, **({"body": text} if text else {})}), *carry("mailbox", "messages", to, "body")])
    if s.has("chat"):
        users = {u["email"]: u.key for u in s.records("chat", "user")}
        me, them = users.get(s.world.user.email), users.get(email)
        if me is not None and them is not None:
            said = {"text": text} if text else {}
            mine = {"user_id": me}
            ims = [c for c in s.records("chat", "channel", where={"kind": "im"})]
            dms = {m["channel_id"] for m in s.records("chat", "membership", where={"user_id": them})} & {c.key for c in ims}
            # The direct message with them: the one they have, or the one opening it makes (the next "dm" id).
            numbers = [int(c.key.rsplit("_", 1)[1]) for c in ims if c.key.rsplit("_", 1)[-1].isdigit()]
            dms.add(f"dm_{max(numbers, default=0) + 1:04d}")
            where = {**mine, "channel_id": {"$in": sorted(dms)}}
            options.append([RowExists(id="told-in-chat", service="chat", table="messages", change="added",
                                      match={**where, **said}), *carry("chat", "messages", where, "text")])
    return options


def log(
    s: Scenario,
    target: Target,
    parts: Sequence[str | Ref],
    *,
    say: str,
    facts: Sequence[Said] = (),
    stage: Stage = "report",
) -> Step:
    """A note or comment on ``target`` (its service's tool of intent ``note``) saying what was done."""
    candidates = tools_for(s, target, "note")
    if not candidates:
        service, entity = _kind_of(s, target)
        raise Skip(f"no tool of {service} notes on a {entity}")
    tool, named = sorted(candidates, key=lambda pair: pair[0].name)[0]
    param = next((p.name for p in tool.params if p.required and p.name in _NOTE_TEXT), None)
    if param is None:
        raise Skip(f"{tool.key} takes no note text")
    return s.call(tool.service, tool.name, {**named, param: Composed(tuple(parts))}, say=say, stage=stage, facts=facts,
                  guided=True)


_NOTE_TEXT = ("body", "note", "text", "content", "comment", "message")


__all__ = ["act", "log", "tell", "told_options", "tools_for"]
