"""Random walks that extend a workflow with the follow-ups real work has.

From the records a workflow found or wrote (the records in play) and the values it produced that
people pass on (declared ``mention``s: a refund id, a ticket number, a new time), a seeded walk adds
follow-up steps along natural flows only:

- ``note``: the value goes on a record in play, or on the person's own record in another system
  (a CRM contact, a candidate), found through its ``self`` role;
- ``tell``: a colleague hears about it (the person's account owner, through the CRM's owner role, or
  the colleague the family of work involves), by a direct message or an email, after finding them
  in a directory;
- ``tag``, ``assign``, ``invite``: a record in play gets a stated label, an owner, a watcher;
- ``close``: the message that started the work is marked done (a voicemail archived, a ticket solved);
- ``follow-up``: a task, a calendar hold or a callback to check on it later, at a stated time.

Every step is chosen by intent on the record's kind, among whatever service holds it, so a generated
service that declares intents takes part. Each added step gets its clause in the request (the goal's
"also ..."), its checks (derived like every step's) and its place in the plan. A move that cannot be
completed leaves nothing behind (``Scenario.attempt``). Same scenario, same seed: same walk.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from mcp_services.kernel.world import Person

from composer.catalog import ToolInfo
from composer.kinds import MESSAGE_INTENTS, Kind, system_name
from composer.phrases import phrase
from composer.plan import Composed, Expr, ListOf, Lit, Ref, refs_of, resolve, step_refs
from composer.scenario import Rec, Said, Scenario, Skip, Stage, Step
from composer.stages.acts import tools_for
from composer.stages.lookup import lookup

#: Colleagues each family of work involves, most likely first.
FAMILY_ROLES: dict[str, tuple[str, ...]] = {
    "support": ("support lead", "support agent", "engineering lead", "account executive"),
    "finance": ("finance lead", "accountant", "account executive"),
    "sales": ("account executive", "sales lead", "support lead"),
    "operations": ("office manager", "product manager", "support lead"),
    "hr": ("office manager", "finance lead"),
    "marketing": ("product manager", "sales lead", "account executive"),
}
#: Labels people put on records, per family of work.
FAMILY_TAGS: dict[str, tuple[str, ...]] = {
    "support": ("customer-reported", "follow-up", "key-account", "escalated"),
    "finance": ("billing", "refund", "finance-review", "follow-up"),
    "sales": ("renewal", "key-account", "follow-up", "hot-lead"),
    "operations": ("follow-up", "ops", "priority"),
    "hr": ("hr", "follow-up", "confidential"),
    "marketing": ("campaign", "follow-up", "events"),
}
#: The names a check mark reaction goes by in chat: any of them marks a message done.
_CHECK_MARKS = ("white_check_mark", "heavy_check_mark", "ballot_box_with_check", "✅")
#: The kinds of follow-up a walk adds (the stage graph draws them).
MOVES = ("note", "tell", "tag", "assign", "invite", "close", "follow-up")
#: How many follow-ups a walk adds, and how likely each count is.
LENGTHS = (0, 1, 2, 3)
LENGTH_WEIGHTS = (0.15, 0.35, 0.32, 0.18)
_ASSIGNEE = ("assignee_email", "owner_email", "assignee")


@dataclass(frozen=True)
class InPlay:
    """A record the workflow found or wrote: the latest step whose item it is, its kind, how the request names it,
    whether the plan wrote or created it, and how it read when the plan first saw it (None: the plan made it)."""

    step: int
    kind: Kind
    name: str
    written: bool
    created: bool
    first: Mapping[str, object] | None


@dataclass(frozen=True)
class Passed:
    """A value people pass on (a declared mention) of a record the workflow wrote."""

    ref: Ref
    noun: str


#: Words that say a value is a number people quote ("the refund id", "the ticket number", "the issue key").
_ID_WORDS = re.compile(r"\b(id|ID|number|reference|key|code|link)\b")


class Walk:
    """One walk over a built scenario (see the module docstring)."""

    def __init__(self, s: Scenario, rng: random.Random) -> None:
        self.s = s
        self.rng = rng
        self.done: list[str] = []
        self._used: set[tuple[str, int]] = set()
        self._colleague: Person | None = None

    # -- what is in play -------------------------------------------------------------------------------

    def in_play(self) -> list[InPlay]:
        s = self.s
        latest: dict[tuple[str, str], InPlay] = {}
        for j, (spec, item) in enumerate(zip(s.specs, s.items, strict=True)):
            tool = s.catalog.tool(spec.service, spec.tool)
            if not tool.entity or not isinstance(item, Mapping) or item.get("id") is None:
                continue
            if s.notes[j].stage == "consult":  # a rule or a table the work reads is not what its follow-ups touch
                continue
            service, entity = tool.entity.split(".", 1)
            kind = s.kinds.get(service, entity)
            if kind is None:
                continue
            key = (kind.key, str(item["id"]))
            before = latest.get(key)
            if before is None:
                created = tool.is_write and s.kinds.naming(tool, service, entity) is None
                latest[key] = InPlay(j, kind, s.names.get(j) or f"the {kind.noun}", tool.is_write, created, None if created else item)
            else:
                latest[key] = InPlay(j, kind, s.names.get(j) or before.name, before.written or tool.is_write, before.created, before.first)
        return list(latest.values())

    def passed(self) -> list[Passed]:
        """Values of written records worth passing on, ids first."""
        s = self.s
        stated = {e.value for spec in s.specs for _, e in spec.args if isinstance(e, Lit) and e.stated and isinstance(e.value, (str, int, float))}
        found: list[Passed] = []
        for record in self.in_play():
            if not record.written:
                continue
            item = s.items[record.step] or {}
            for field_name, noun in record.kind.mentions().items():
                value = item.get(field_name)
                if not isinstance(value, (str, int, float)) or isinstance(value, bool) or value == "" or value in stated:
                    continue  # only a plain value passes on in words; one the request gave is no news
                if record.first is not None and record.first.get(field_name) == value:
                    continue  # what the record already said before the work is no news either
                if field_name == "id" and not _ID_WORDS.search(noun):
                    continue  # "the application" is app_0059: a system's own number, not news a colleague uses
                found.append(Passed(Ref(record.step, field_name), noun))
        found.sort(key=lambda p: (not p.ref.field.endswith("id") and p.ref.field not in ("id", "key", "number"), p.ref.step))
        return found

    @property
    def person(self) -> Person | None:
        s = self.s
        if s.arrival is not None:
            return s.arrival.person  # type: ignore[no-any-return]
        return s.subject

    def family(self) -> str:
        return self.s.archetype.family

    # -- the walk -------------------------------------------------------------------------------------

    def extend(self, count: int) -> list[str]:
        moves: list[tuple[str, Callable[[], str]]] = []
        records = self.in_play()
        values = self.passed()
        person = self.person
        for value in values[:1]:
            for record in records:
                if record.step != value.ref.step:
                    moves.append(("note", lambda r=record, v=value: self.note_on(r, v)))
            if person is not None:
                moves.append(("note", lambda v=value: self.note_on_person(v)))
            moves.append(("tell", lambda v=value: self.tell(v)))
        customer = person is not None and person.organisation_id != self.s.world.home_organisation_id
        trigger = self.s.arrival.step.index if self.s.arrival is not None else None
        for record in records:
            if self._is_message_we_wrote(record):
                continue  # our own reply is not what a colleague tags, assigns or watches
            if not customer and record.step != trigger:
                continue  # a colleague's request is theirs: done as asked, then the message marked, nothing more
            moves.append(("tag", lambda r=record: self.tag(r)))
            if customer:
                moves.append(("assign", lambda r=record: self.assign(r)))
                moves.append(("invite", lambda r=record: self.invite(r)))
        if self.s.arrival is not None:
            moves.append(("close", self.close_trigger))
        if customer:
            moves.append(("follow-up", self.follow_up))  # a check-in is owed to a customer, not to a colleague
        self.rng.shuffle(moves)
        kinds_done: set[str] = set()
        for kind, move in moves:
            if len(self.done) >= count:
                break
            if kind in kinds_done:
                continue
            try:
                with self.s.attempt():
                    clause = move()
            except Skip:
                continue
            kinds_done.add(kind)
            self.done.append(kind)
            self.s.brief.also.append(clause)
        return self.done

    # -- the moves --------------------------------------------------------------------------------------

    def _is_message_we_wrote(self, record: InPlay) -> bool:
        tool = self.s.catalog.tool(self.s.specs[record.step].service, self.s.specs[record.step].tool)
        return tool.is_write and tool.intent in MESSAGE_INTENTS

    def _step(self, record: InPlay) -> Step:
        s = self.s
        return Step(record.step, record.kind.service, s.specs[record.step].tool, s.items[record.step])

    def _note(self, target: Step, target_name: str, value: Passed) -> str:
        s = self.s
        candidates = tools_for(s, target, "note")
        if not candidates:
            raise Skip("no note tool")
        tool, named = sorted(candidates, key=lambda pair: pair[0].name)[0]
        param = next((p.name for p in tool.params if p.required and p.name in _TEXT and p.name not in named), None)
        if param is None:
            raise Skip(f"{tool.key} takes no text")
        topic = s.topic or s.archetype.title.split(":")[0]
        body = Composed((f"Re {topic}: {value.noun} ", value.ref, "."))
        clause = f"note {value.noun} on {target_name}"
        s.call(tool.service, tool.name, {**named, param: body}, say=clause, stage="follow-up",
               facts=[Said(value.noun, value.ref)], mentions=[(value.ref, value.noun)])
        return clause

    def note_on(self, record: InPlay, value: Passed) -> str:
        if ("note", record.step) in self._used:
            raise Skip("already noted there")
        if self.said_on(record.step, value.ref):
            raise Skip("the workflow's own message there states it already")
        self._used.add(("note", record.step))
        return self._note(self._step(record), record.name, value)

    def _acted(self, record: InPlay, intent: str) -> bool:
        """Whether a step of the workflow already did ``intent`` on ``record`` (named it by its id)."""
        s = self.s
        key = str((s.items[record.step] or {}).get("id"))
        for spec in s.specs:
            if s.catalog.tool(spec.service, spec.tool).intent != intent:
                continue
            try:
                if key in {str(resolve(expr, s.items)) for _, expr in spec.args}:
                    return True
            except LookupError:
                continue
        return False

    def said_on(self, step: int, value: Ref) -> bool:
        """Whether a message the workflow wrote on the record of ``step`` (a reply on the ticket) states ``value``."""
        s = self.s
        record = (s.specs[step].service, str((s.items[step] or {}).get("id")))

        def names(ref: Ref) -> bool:
            return (s.specs[ref.step].service, str((s.items[ref.step] or {}).get("id"))) == record

        for spec in s.specs:
            on_record = any(names(r) for _, e in spec.args if not isinstance(e, Composed) for r in refs_of(e))
            if on_record and any(isinstance(e, Composed) and value in e.parts for _, e in spec.args):
                return True
        return False

    def note_on_person(self, value: Passed) -> str:
        """The value on the person's own record in another system (their CRM contact, their candidate profile)."""
        s = self.s
        person = self.person
        assert person is not None
        used = {s.specs[j].service for j in range(len(s.specs))}
        options = [k for k in s.kinds if k.is_person and k.acting("note")]
        self.rng.shuffle(options)
        options.sort(key=lambda k: k.service in used)  # another system than the ones the workflow used, first
        for kind in options:
            rec = own_record(s, kind, person)
            if rec is None:
                continue
            name = record_name(s, kind, person)
            found = lookup(s, rec, {"email": person.email, "query": person.name, "name": person.name},
                           say=f"find {name}", stage="follow-up", name=name)
            return self._note(found, name, value)
        raise Skip("the person has no record with notes elsewhere")

    def colleague(self) -> Person:
        """A colleague this family of work involves (the same one for the whole walk), never the user or the asker."""
        if self._colleague is not None:
            return self._colleague
        s = self.s
        asker = s.arrival.sender.email if s.arrival is not None else None
        roles = list(FAMILY_ROLES.get(self.family(), ()))
        self.rng.shuffle(roles)
        for role in roles:
            try:
                person = s.world.team_member(role)
            except KeyError:
                continue
            if person.email not in (s.world.user.email, asker):
                self._colleague = person
                return person
        raise Skip("no colleague to involve")

    def _talked_to(self, person: Person) -> bool:
        """Whether the workflow already wrote to ``person`` (answered their request, told them): no second FYI."""
        s = self.s
        if s.arrival is not None and s.arrival.sender.email == person.email:
            return True
        for spec in s.specs:
            if not s.catalog.tool(spec.service, spec.tool).is_write:
                continue
            try:
                values = [resolve(expr, s.items) for _, expr in spec.args]
            except LookupError:
                continue
            if person.email in json.dumps(values, default=str):
                return True
        return False

    def tell(self, value: Passed) -> str:
        s = self.s
        colleague = self.colleague()
        if self._talked_to(colleague):
            raise Skip(f"{colleague.name} already heard from us")
        recipient, found = directory(s, colleague)
        person = self.person
        customer = person is not None and person.organisation_id != s.world.home_organisation_id
        about = f" about {person.first_name}" if customer and person is not None else ""
        body = Composed((f"FYI{about}: {value.noun} is ", value.ref, "."))
        clause = f"let {colleague.name} know {value.noun}"
        facts = [Said(value.noun, value.ref)]
        if s.has("chat") and (not s.has("mailbox") or self.rng.random() < 0.5):
            dm = s.call("chat", "open_direct_message", {"user_email": recipient}, say="", stage="follow-up", guided=False)
            s.notes[dm.index].told = colleague.email  # the way in, not a change of its own
            told = s.call("chat", "post_message", {"channel": dm.ref("id"), "text": body}, say=clause, stage="follow-up",
                          facts=facts, mentions=[(value.ref, value.noun)], require_change=True)
        elif s.has("mailbox"):
            told = s.call("mailbox", "send_email", {"to": ListOf((recipient,)), "subject": Lit(s.topic or "FYI", stated=False),
                                                    "body": body},
                          say=clause, stage="follow-up", facts=facts, mentions=[(value.ref, value.noun)])
        else:
            raise Skip("no way to reach a colleague")
        s.notes[told.index].told = colleague.email  # any channel that reaches them will do
        return clause

    def tag(self, record: InPlay) -> str:
        s = self.s
        for tool, named in tools_for(s, self._step(record), "tag"):
            param = next((p for p in tool.params if p.name not in named and p.json_type in ("string", "array") and not p.enum
                          and (p.required or p.name in ("add", "add_labels", "tags", "labels"))), None)
            if param is None:
                continue
            if param.semtype is None and not param.is_list:  # a reaction (by its emoji's name), not a label
                s.call(tool.service, tool.name, {**named, param.name: _CHECK_MARKS[0]}, say=f"react to {record.name} with a ✅",
                       stage="follow-up", require_change=True, accept={param.name: list(_CHECK_MARKS)})
                return f"react to {record.name} with a ✅"
            label = self.rng.choice(FAMILY_TAGS.get(self.family(), ("follow-up",)))
            value: Expr = ListOf((Lit(label),)) if param.is_list else Lit(label)
            words = phrase(tool, {**{k: record.name for k in named}, param.name: f'"{label}"'})
            if words is None:
                continue
            s.call(tool.service, tool.name, {**named, param.name: value}, say=words, stage="follow-up", require_change=True)
            return words
        raise Skip("no tag tool")

    def decided(self, step: int, params: Sequence[str] = (), intents: Sequence[str] = ()) -> bool:
        """Whether a step of the workflow already set one of ``params`` (or did one of ``intents``) on the record of
        ``step``: a follow-up must not undo what the work decided (the queue's assignee, a ticket left pending)."""
        s = self.s
        for j, spec in enumerate(s.specs):
            on_record = j == step or any(r.step == step for r in step_refs(spec))
            tool = s.catalog.tool(spec.service, spec.tool)
            if on_record and tool.is_write and (any(name in params for name, _ in spec.args) or tool.intent in intents):
                return True
        return False

    def assign(self, record: InPlay) -> str:
        s = self.s
        if self.decided(record.step, _ASSIGNEE):
            raise Skip("the workflow already gave it an owner")
        target = self._step(record)
        if self._acted(record, "assign") or any(name in _ASSIGNEE for name, _ in s.specs[record.step].args):
            raise Skip("the workflow already chose who owns it")
        colleague = self.colleague()
        options = tools_for(s, target, "assign")
        options += [(t, a) for t, a in tools_for(s, target, "update") if any(t.param(n) for n in _ASSIGNEE)]
        for tool, named in options:
            param = next((n for n in _ASSIGNEE if tool.param(n) is not None), None)
            if param is None:
                continue
            recipient, _ = directory(s, colleague)
            words = f"assign {record.name} to {colleague.name}"
            s.call(tool.service, tool.name, {**named, param: recipient}, say=words, stage="follow-up", require_change=True)
            return words
        raise Skip("no assign tool")

    def invite(self, record: InPlay) -> str:
        s = self.s
        colleague = self.colleague()
        for tool, named in tools_for(s, self._step(record), "invite"):
            param = next((p for p in tool.params if p.required and p.name not in named and p.semtype == "email_address"), None)
            if param is None:
                continue
            recipient, _ = directory(s, colleague)
            value: Expr = ListOf((recipient,)) if param.is_list else recipient
            words = phrase(tool, {**{k: record.name for k in named}, param.name: colleague.name}) or f"add {colleague.name} to {record.name}"
            s.call(tool.service, tool.name, {**named, param.name: value}, say=words, stage="follow-up", require_change=True)
            return words
        raise Skip("no invite tool")

    def close_trigger(self) -> str:
        s = self.s
        arrival = s.arrival
        if self.decided(arrival.step.index, ("status",), ("update", "close", "transition")):
            raise Skip("the workflow already decided where the trigger stands")
        for tool, named in tools_for(s, arrival.step, "close"):
            if any(p.required and p.name not in named for p in tool.params):
                continue
            words = phrase(tool, {k: arrival.reference for k in named})
            if words is None:
                continue
            s.call(tool.service, tool.name, dict(named), say=f"{words} once it is handled", stage="follow-up", require_change=True)
            return f"{words} once it is handled"
        raise Skip("the trigger has nothing to close")

    def _follow_up_project(self) -> Rec:
        """Where follow-ups go: a project named for them, else one a colleague of this family of work owns."""
        s = self.s
        projects = [p for p in s.records("tasks", "project") if not p.get("archived")]
        named = [p for p in projects if "follow" in str(p["name"]).lower()]
        if named and self.family() in ("support", "sales", "finance"):
            return named[0]
        owners = set()
        for role in FAMILY_ROLES.get(self.family(), ()):
            try:
                owners.add(s.world.team_member(role).email)
            except KeyError:
                continue
        owned = [p for p in projects if p.get("owner_email") in owners]
        if not owned:
            raise Skip("no project for follow-ups")
        return owned[0]

    def follow_up(self) -> str:
        s = self.s
        person = self.person
        assert person is not None
        if person.organisation_id == s.world.home_organisation_id:
            raise Skip("a teammate's question needs no follow-up with them")
        when = _next_working_day(s, self.rng.randint(2, 6))
        spoken = f"{when.strftime('%A')} {when.day} {when.strftime('%B')}"
        topic = s.topic or s.archetype.title.split(":")[0]
        options = []
        if s.has("tasks"):
            options.append("task")
        if s.has("calendar"):
            options.append("hold")
        if s.arrival is not None and s.arrival.channel == "voice":
            options.append("callback")
        if not options:
            raise Skip("nowhere to put a follow-up")
        choice = self.rng.choice(options)
        if choice == "task":
            project = self._follow_up_project()
            found = lookup(s, project, {"query": project["name"], "name": project["name"]}, say=f"find the {project['name']} project",
                           stage="follow-up")
            name = f"Follow up with {person.name}"
            s.call("tasks", "create_task", {"project_id": found.ref("id"), "name": name, "due_on": when.strftime("%Y-%m-%d"),
                                            "notes": Lit(f"Re {topic}", stated=False)},
                   say=f'add a task "{name}" to the {project["name"]} project, due {spoken}', stage="follow-up", require_change=True)
            s.brief.anchors.append(project["name"])
            return f'add a task "{name}" to the {project["name"]} project, due {spoken}'
        at = when.replace(hour=self.rng.choice((9, 10, 14, 15)), minute=0, second=0)
        iso = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        clock = at.strftime("%H:%M")
        if choice == "hold":
            title = f"Check in with {person.name}"
            end = (at + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
            s.call("calendar", "create_event", {"title": title, "start": iso, "end": end,
                                                "description": Lit(f"Re {topic}", stated=False)},
                   say=f'put half an hour in the calendar on {spoken} at {clock} called "{title}"', stage="follow-up", require_change=True)
            return f'put half an hour in the calendar on {spoken} at {clock} called "{title}"'
        colleague = self.colleague()
        recipient, _ = directory(s, colleague)
        s.call("voice", "schedule_callback", {"call_id": s.arrival.step.ref("id"), "assignee_email": recipient, "due_at": iso},
               say=f"have {colleague.name} call {person.first_name} back on {spoken} at {clock}", stage="follow-up", require_change=True)
        return f"have {colleague.name} call {person.first_name} back on {spoken} at {clock}"


_TEXT = ("body", "note", "text", "content", "comment", "message")


def record_name(s: Scenario, kind: Kind, person: Person) -> str:
    """How people name a person's own record in a system: "Ana's CRM contact", "Ana's record in Marketing"."""
    title = system_name(s.catalog, kind.service)
    if title.isupper():
        return f"{person.first_name}'s {title} {kind.noun}"
    return f"{person.first_name}'s record in {title}"


def own_record(s: Scenario, kind: Kind, person: Person) -> Rec | None:
    """The one record of ``kind`` that is ``person`` (its ``self`` email is theirs), or None."""
    for path in kind.person_paths(role="self", value="email"):
        if "." in path.path:
            continue
        found = [r for r in s.records(kind.service, kind.entity, where={path.path: person.email})
                 if not r.get("archived") and r.get("status") not in ("archived", "deleted")]
        if len(found) == 1:
            return found[0]
    return None


def address_book(
    s: Scenario, person: Person, kinds: Sequence[Kind], known: Mapping[str, Expr | str], *, say: str, stage: Stage,
    name: bool = False,
) -> Ref | None:
    """The person's email address on their own record in the first of ``kinds`` a read finds from ``known``, as a
    looked-up value (``name``: the request names that record for later steps); None when no kind has one."""
    for kind in kinds:
        rec = own_record(s, kind, person)
        if rec is None:
            continue
        column = next((p.path for p in kind.person_paths(role="self", value="email") if "." not in p.path), None)
        if column is None:
            continue
        try:
            found = lookup(s, rec, known, say=say, stage=stage, name=record_name(s, kind, person) if name else "")
        except Skip:
            continue
        return found.ref(column)
    return None


def directory(s: Scenario, colleague: Person) -> tuple[Expr, Step | None]:
    """The colleague's address as the agent finds it: through a directory of the team (chat, HR, a tool's users),
    as a looked-up value; or, with no directory mounted, as the address itself."""
    kinds = [k for k in s.kinds if k.is_person and k.service in _DIRECTORIES and s.has(k.service)]
    s.rng.shuffle(kinds)
    kinds.sort(key=lambda k: k.service not in ("chat", "hr"))  # where people look a colleague up first
    found = address_book(s, colleague, kinds, {"query": colleague.name, "name": colleague.name, "real_name": colleague.name},
                         say=f"find {colleague.first_name}'s address", stage="follow-up")
    if found is None:
        return Lit(colleague.email), None
    return found, Step(found.step, s.specs[found.step].service, s.specs[found.step].tool, s.items[found.step])


#: Services whose people records are the team (a directory an agent looks colleagues up in).
_DIRECTORIES = frozenset({"chat", "hr", "tasks", "meetings", "voice", "recruiting", "expenses", "projects"})


def _next_working_day(s: Scenario, days: int):  # type: ignore[no-untyped-def]
    moment = s.world.now_dt + timedelta(days=days)
    while moment.weekday() >= 5:
        moment += timedelta(days=1)
    return moment


def walk_length(rng: random.Random) -> int:
    return rng.choices(LENGTHS, weights=LENGTH_WEIGHTS)[0]


def extend(s: Scenario, rng: random.Random, count: int | None = None) -> list[str]:
    """Add up to ``count`` follow-ups (default: a seeded length) to a built scenario; returns their kinds."""
    return Walk(s, rng).extend(walk_length(rng) if count is None else count)


__all__ = ["FAMILY_ROLES", "FAMILY_TAGS", "MOVES", "InPlay", "Passed", "Walk", "address_book", "directory", "extend", "own_record",
           "phrase", "record_name", "walk_length"]
