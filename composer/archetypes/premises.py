"""Premises a colleague's request takes for granted that the data can make false: the work is so already.

"Could you add Ana to the #launch channel?" when Ana is in it; "tag the page "Release process" as
"engineering"" when it carries that tag; "assign ENG-42 to Cory" when it is Cory's; "move the kickoff to
Thursday at 10:00" when it is at that time; "take Ben off the channel" when Ben is not in it. The request reads
the same either way; the record (its fields, or the records that point at it: attendees, recipients, shares)
decides. Where the premise is false the right work is to change nothing and tell the asker why; where it holds,
the work is done as asked.

``held_already`` finds, for a request's deciding value, one the record holds already (or, for a removal, one it
does not hold), with the reason the reply gives and the facts it must state. ``composer.archetypes.requests``
plants nothing for it: it names that value in the request instead of a new one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_services.kernel.world import Person

from composer.catalog import Param, ToolInfo
from composer.kinds import Kind
from composer.phrasing import long_date, spoken_field
from composer.plan import Lit
from composer.resolve import value_at
from composer.scenario import Rec, Said, Scenario

#: Intents whose request names a value the record may hold already (a person, a tag, a state, a time).
SAME = frozenset({"assign", "invite", "share", "tag", "transition", "reschedule", "remove", "link", "update"})
#: How often a request of those intents finds its value held already (tried first; most records allow it).
HELD_ALREADY = 0.4
#: Parameters that name the person a request adds: all are set from the one person the record has already.
_PERSON_PARAMS = {"first_name": "first_name", "last_name": "last_name", "name": "name", "email": "email", "phone": "phone"}
_TAG_NAMES = frozenset({"tags", "labels", "tag", "label", "add", "add_labels", "remove_labels", "remove"})
#: Fields a record keeps its start in, beside a parameter of the same name.
_STARTS = ("start", "start_time", "starts_at", "scheduled_at", "start_at")


@dataclass(frozen=True)
class Held:
    """A value the request names that the record holds already (or, for a removal, does not hold).

    ``values``: the arguments to set (each parameter's value); ``words``: how the request states each; ``person``:
    the person named (looked up as the agent would); ``reason``: the reply's sentence, with ``{name}`` for the
    record's name; ``facts``: what the reply must state; ``said``: the value's words, which the record's own name must
    not give away."""

    values: Mapping[str, Any]
    words: Mapping[str, str]
    reason: str
    facts: tuple[Said, ...]
    said: str
    person: Person | None = None
    person_param: str = ""
    #: Whether the reply must name the record: not where it says what is not on it (a negation unsays a lower-case
    #: name in a report's check: "Ben isn't in #launch"), nor where whom to ask is the point (the file, not the tab).
    names_record: bool = True


def members_of(s: Scenario, kind: Kind, rec: Rec) -> list[Person]:
    """The people of the world a record holds now (attendees, watchers, recipients, members, shares): the records of
    its service that point at it and name a person by their address, and the addresses kept on the record itself (a
    list of addresses or of people, or a map from address to role)."""
    people = {p.email: p for p in s.world.people}
    found: list[Person] = []
    for other in s.kinds:
        if other.service != kind.service:
            continue
        refs = [f.name for f in other.runtime.definition.fields if f.ref == kind.entity]
        emails = [p.path for p in other.person_paths(value="email")]  # "email", or "user_id.email" through a ref
        for ref in refs:
            for row in s.records(other.service, other.entity, where={ref: rec["id"]}):
                if _left(row):
                    continue
                addresses = (str(value_at(s.view, row, e) or "").lower() for e in emails)
                found += [people[a] for a in addresses if a in people]
    for value in rec.row.values():
        items: list[Any] = list(value) if isinstance(value, (list, dict)) else []
        for item in items:
            address = item.get("email") if isinstance(item, dict) else item
            if isinstance(address, str) and address.lower() in people:
                found.append(people[address.lower()])
    return [p for p in dict.fromkeys(found) if p.email != s.world.user.email]


def _left(row: Rec) -> bool:
    """Whether a membership row says the person is no longer on the record (a cancelled registration, a removed
    recipient)."""
    status = str(row.get("status") or "").lower()
    return any(word in status for word in ("cancel", "removed", "left", "revoked", "denied"))


def held_already(s: Scenario, tool: ToolInfo, kind: Kind, rec: Rec, stated: Mapping[str, str]) -> Held | None:
    """A value for the request's deciding parameter (one of ``stated``: those the request states) that the record holds
    already, or None where the record holds none the tool can be asked for."""
    intent = tool.intent or ""
    params = [p for p in tool.params if p.name in stated]
    if intent == "remove" and not any(p.semtype == "email_address" for p in tool.params):
        return _off(kind, rec)
    if intent in ("assign", "invite", "share", "remove"):
        return _person(s, tool, kind, rec, intent)
    if intent == "tag":
        param = next((p for p in params if p.semtype == "tag" or p.name in _TAG_NAMES), None)
        return _tag(s, tool, rec, param) if param is not None else None
    if intent == "transition":
        param = next((p for p in params if p.enum), None)
        return _state(rec, param) if param is not None else None
    if intent == "update":  # the one field the request changes: a choice (a priority, a stage) or a date
        param = next((p for p in params if p.enum or p.semtype in ("datetime", "date")), None)
        if param is None:
            return None
        return _state(rec, param, field=spoken_field(param.name)) if param.enum else _time(s, rec, param, (), spoken_field(param.name))
    if intent == "reschedule":
        param = next((p for p in params if p.semtype in ("datetime", "date")), None)
        return _time(s, rec, param) if param is not None else None
    if intent == "link":
        return _linked(s, tool, kind, rec, params)
    return None


def _person(s: Scenario, tool: ToolInfo, kind: Kind, rec: Rec, intent: str) -> Held | None:
    email = next((p for p in tool.params if p.semtype == "email_address" and p.name not in ("cc", "bcc")), None)
    if email is None:
        return None
    if intent == "assign":
        current = str(rec.get(email.name) or rec.get("assignee_email") or "").lower()
        holders = [p for p in s.world.team if p.email == current]
    elif intent == "remove":  # a colleague the record does not hold: there is nobody to take off
        on = {p.email for p in members_of(s, kind, rec)}
        holders = [p for p in s.world.team if p.email not in on and p.email != s.world.user.email]
    else:
        holders = members_of(s, kind, rec)
    if not holders:
        return None
    person = s.rng.choice(holders)
    values: dict[str, Any] = {email.name: [person.email] if email.is_list else person.email}
    words = {email.name: person.name}
    for param in tool.params:  # a tool that adds a person by name as well (a recipient): the same person's
        attribute = _PERSON_PARAMS.get(param.name) if param.name != email.name else None
        if attribute is not None and (param.required or param.semtype == "person_name"):
            values[param.name] = getattr(person, attribute)
            words[param.name] = str(getattr(person, attribute))
    who = Said("who", Lit(person.first_name), "text")
    if intent == "remove":
        return Held(values, words, f"{{Name}} is as you want it: {person.name} is not on it, so there is nobody to take off.",
                    (who, _NOT_THERE), person.name, person, email.name, names_record=False)
    reason = {"assign": f"{{Name}} is already assigned to {person.name}.",
              "invite": f"{person.name} is already on {{name}}.",
              "share": f"{{Name}} is already shared with {person.name}."}[intent]
    return Held(values, words, reason, (who, _ALREADY), person.name, person, email.name)


_ALREADY = Said("that it was so already", Lit("already"), "premise")
#: (What is not on a record is said in a negated clause, "Ben isn't in #launch": no lower-case name or tag is demanded
#: beside it, since a negation unsays such words in a report's check: ``Held.names_record``.)
_NOT_THERE = Said("that it was not there", Lit("not there"), "premise")


def _off(kind: Kind, rec: Rec) -> Held | None:
    """A record that is itself someone's place on another (a registration, a share) and says they are off it already."""
    state = rec.get(kind.state_field) if kind.state_field else None
    if not isinstance(state, str) or not _left(rec):
        return None
    spoken = state.replace("_", " ")
    return Held({}, {}, f"{{Name}} is already {spoken}.", (Said("where it stands", Lit(spoken), "text"), _ALREADY), spoken)


def _tags(rec: Rec) -> list[str]:
    for name in ("tags", "labels", "label_names", "label_ids"):
        value = rec.get(name)
        if isinstance(value, list):
            return [t for t in value if isinstance(t, str)]
    return []


def _tag(s: Scenario, tool: ToolInfo, rec: Rec, param: Param) -> Held | None:
    present = [t for t in _tags(rec) if t.islower() and 2 < len(t) < 40]
    removing = "remove" in tool.name or param.name.startswith("remove")
    if removing:  # what they ask to take off is not on it
        options = [t for t in ("q3-review", "needs-follow-up", "customer-facing", "archive-candidate") if t not in present]
        label = s.rng.choice(options)
        return Held({param.name: [label] if param.is_list else label}, {param.name: f'"{label}"'},
                    f'{{Name}} is as you want it: "{label}" is not one of its tags, so there is nothing to take off.',
                    (_NOT_THERE,), label, names_record=False)
    if not present:
        return None
    label = s.rng.choice(present)
    return Held({param.name: [label] if param.is_list else label}, {param.name: f'"{label}"'},
                f'{{Name}} already has the tag "{label}".', (Said("the label", Lit(label), "text"), _ALREADY), label)


def _state(rec: Rec, param: Param, field: str = "") -> Held | None:
    current = rec.get(param.name)
    if not isinstance(current, str) or current not in param.enum:
        return None
    spoken = current.replace("_", " ")
    reason = f'{{Name}} already has {field} "{spoken}".' if field else f'{{Name}} is already at "{spoken}".'
    return Held({param.name: current}, {param.name: spoken}, reason,
                (Said("where it stands", Lit(spoken), "text"), _ALREADY), spoken)


def _time(s: Scenario, rec: Rec, param: Param, fields: tuple[str, ...] = _STARTS, field: str = "") -> Held | None:
    current = next((rec.get(f) for f in (param.name, *fields) if isinstance(rec.get(f), str)), None)
    if current is None or len(current) < (10 if param.semtype == "date" else 16) or current <= s.world.now:
        return None  # (only what is still to come is moved)
    if param.semtype == "date":
        spoken = long_date(current)
        reason = f"{{Name}} already has {field} {spoken}." if field else f"{{Name}} is already on {spoken}."
        return Held({param.name: current[:10]}, {param.name: spoken}, reason,
                    (Said("the date", Lit(current[:10]), "date"), _ALREADY), spoken)
    value = current[:19] + "Z" if not current.endswith("Z") else current
    spoken = f"{long_date(value)} at {value[11:16]}"
    reason = f"{{Name}} already has {field} {spoken}." if field else f"{{Name}} is already at {spoken}."
    return Held({param.name: value}, {param.name: spoken}, reason,
                (Said("the time", Lit(value), "datetime"), _ALREADY), spoken)


def _linked(s: Scenario, tool: ToolInfo, kind: Kind, rec: Rec, params: list[Param]) -> Held | None:
    """A record of the same service that points at ``rec`` already and carries the value the request names (a document
    of that name on the envelope)."""
    for param in params:
        if param.semtype not in ("file_name", "subject") and param.name not in ("name", "title"):
            continue
        for other in s.kinds:
            if other.service != kind.service or not any(f.ref == kind.entity for f in other.runtime.definition.fields):
                continue
            ref = next(f.name for f in other.runtime.definition.fields if f.ref == kind.entity)
            names = [r.get(param.name) for r in s.records(other.service, other.entity, where={ref: rec["id"]})]
            names = [n for n in names if isinstance(n, str) and n]
            if names:
                name = s.rng.choice(names)
                return Held({param.name: name}, {param.name: f'"{name}"'}, f'{{Name}} already has "{name}" on it.',
                            (Said(f"the {other.noun}", Lit(name), "text"), _ALREADY), name)
    return None


#: How often a request is tried first on a record the agent may only read (where a service states who may edit).
NOT_THEIRS = 0.35


def not_theirs(s: Scenario, kind: Kind, rec: Rec, asker: Person) -> Held | None:
    """Where the record belongs to a file whose roles the service states (a spreadsheet's owner, its writers and
    readers) and the agent may only read it: the work is not ours to do, and the asker hears whom to ask.

    The record itself, or the one it lies in (a tab's spreadsheet, a row's tab's spreadsheet), states the roles; the
    asker may not change it either (an owner asks nobody to change their own file)."""
    governing = _with_roles(s, kind, rec, depth=2)
    if governing is None:
        return None
    owner_email, access, title = governing
    me = s.world.user.email
    if any(who == owner_email or access.get(who) == "writer" for who in (me, asker.email)):
        return None  # ours to change, or the asker's own to change (who would not ask us)
    owner = next((p for p in s.world.team if p.email == owner_email), None)
    if owner is None:
        return None
    writers = [p.name for p in s.world.team if access.get(p.email) == "writer" and p.email != me]
    also = f" ({' or '.join(writers)} can edit it too)" if writers else ""
    title = title.replace("{", "{{").replace("}", "}}")
    return Held({}, {}, f'I only have view access to "{title}", so I could not change {{name}}. {owner.name} owns it{also}: it '
                "is theirs to change, or to give me edit access.",
                (Said("whom to ask", Lit(owner.first_name), "text"), Said("that it is not ours to change", Lit("no access"), "premise")),
                title, names_record=False)


def states_roles(s: Scenario, kind: Kind, depth: int = 2) -> bool:
    """Whether records of ``kind``, or what they lie in, state who may change them (an owner and an access list)."""
    names = {f.name for f in kind.runtime.definition.fields}
    if {"owner_email", "access"} <= names:
        return True
    parents = [s.kinds.get(kind.service, f.ref) for f in kind.runtime.definition.fields if f.ref and f.ref != kind.entity]
    return depth > 0 and any(p is not None and states_roles(s, p, depth - 1) for p in parents)


def _with_roles(s: Scenario, kind: Kind, rec: Rec, depth: int) -> tuple[str, dict[str, str], str] | None:
    """(owner, access, title) of the record or of what it lies in, where one of them states its roles."""
    owner, access = rec.get("owner_email"), rec.get("access")
    if isinstance(owner, str) and isinstance(access, dict):
        return owner.lower(), {str(k).lower(): str(v) for k, v in access.items()}, str(rec.get(kind.label or "id") or rec.key)
    if depth == 0:
        return None
    for f in kind.runtime.definition.fields:
        parent_kind = s.kinds.get(kind.service, f.ref) if f.ref and f.ref != kind.entity else None
        if parent_kind is None or rec.get(f.name) is None:
            continue
        parents = s.records(kind.service, parent_kind.entity, where={"id": rec[f.name]})
        if parents:
            return _with_roles(s, parent_kind, parents[0], depth - 1)
    return None


__all__ = ["HELD_ALREADY", "NOT_THEIRS", "SAME", "Held", "held_already", "members_of", "not_theirs", "states_roles"]
