"""Follow-ups a company's written procedure asks for, after a workflow's own work.

No follow-up is a stock chore: each comes from a procedure written in the data (a document in the
Policies folder of the shared drive, or a manager's standing email to the team) that the request only
points at, so the agent must read it and work out what it asks for this request. From the records a
workflow found or wrote (the records in play) and the values it produced that people pass on (declared
``mention``s: a refund id, a ticket number, a new time), a seeded walk tries follow-ups along natural
flows only:

- ``note``: the value goes on a record in play, or on the person's own record in another system
  (a CRM contact, a candidate), found through its ``self`` role;
- ``tell``: a colleague the family of work involves hears about it, by a direct message or an email,
  after finding them in a directory (for a customer's request);
- ``tag``, ``assign``, ``invite``: a record in play gets a label, an owner, a watcher;
- ``close``: the message that started the work is marked done (a voicemail archived, a chat message
  reacted to).

The follow-ups that the world lets this work have become the procedure's clauses for requests of this
kind (from a customer or from a colleague; the other kind's clause is written beside them and does not
apply). The procedure is planted, the plan reads it, then does what it asks: those steps are not said in
the request (the agent reads them), and are checked like every step. Every step is chosen by intent on
the record's kind, among whatever service holds it, so a generated service that declares intents takes
part. Same scenario, same seed: same walk.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

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
MOVES = ("note", "tell", "tag", "assign", "invite", "close")
#: The procedure each family of work writes its follow-ups down in.
PROCEDURES: dict[str, str] = {
    "support": "Support request follow-up procedure",
    "finance": "Billing request follow-up procedure",
    "sales": "Sales request follow-up procedure",
    "operations": "Request follow-up procedure",
    "hr": "People team follow-up procedure",
    "marketing": "Marketing request follow-up procedure",
}
#: Who a procedure's branch is for: someone outside the company (a customer, a candidate), or a colleague.
ASKERS = {"customer": "outside the company (a customer, a candidate, a partner)", "colleague": "a colleague"}
#: What the procedure asks after the other kind of request (the branch that does not apply to this one).
OTHER_BRANCH = {
    "customer": "note what was done on their CRM contact and let their account owner know",
    "colleague": "mark their message done, nothing more",
}
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
        self._role = ""  # the colleague's role, as a procedure names them

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
        """Up to ``count`` follow-ups that a procedure written in the data asks for (``procedure``): none without one."""
        if count <= 0:
            return []
        s = self.s
        states = (self.rng.getstate(), s.rng.getstate())
        try:  # a trial: which follow-ups the world lets this work have (then undone, to be done after reading the procedure)
            with s.attempt():
                rules = self._moves(count)
                raise Skip("trial")
        except Skip:
            pass
        if not rules:
            return []
        self._reset(states)
        try:
            with s.attempt():
                read = self.procedure(rules)
                self._reset(states)
                start = len(s.specs)
                if self._moves(count) != rules:
                    raise Skip("the follow-ups came out otherwise after reading the procedure")
                for note in s.notes[start:]:
                    note.guided = False  # the request points at the procedure; what it asks the agent reads there
                s.decide("procedure", read)
        except Skip:
            self.done = []
            return []
        return self.done

    def _reset(self, states: tuple[object, object]) -> None:
        self.rng.setstate(states[0])  # type: ignore[arg-type]
        self.s.rng.setstate(states[1])  # type: ignore[arg-type]
        self.done, self._used, self._colleague, self._role = [], set(), None, ""

    def _moves(self, count: int) -> list[str]:
        """Do up to ``count`` follow-ups (each in its own attempt); returns how the procedure words each."""
        moves: list[tuple[str, Callable[[], str]]] = []
        records = self.in_play()
        values = self.passed()
        person = self.person
        customer = self.customer
        for value in values[:1]:
            for record in records:
                if record.step != value.ref.step:
                    moves.append(("note", partial(self.note_on, record, value)))
            if person is not None:
                moves.append(("note", partial(self.note_on_person, value)))
            if customer:
                moves.append(("tell", partial(self.tell, value)))
        trigger = self.s.arrival.step.index if self.s.arrival is not None else None
        for record in records:
            if self._is_message_we_wrote(record):
                continue  # our own reply is not what a colleague tags, assigns or watches
            if not customer and record.step != trigger:
                continue  # a colleague's request is theirs: done as asked, then the message marked, nothing more
            moves.append(("tag", partial(self.tag, record)))
            if customer:
                moves.append(("assign", partial(self.assign, record)))
                moves.append(("invite", partial(self.invite, record)))
        if self.s.arrival is not None:
            moves.append(("close", self.close_trigger))
        self.rng.shuffle(moves)
        kinds_done: set[str] = set()
        rules: list[str] = []
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
            rules.append(clause)
        return rules

    @property
    def customer(self) -> bool:
        person = self.person
        return person is not None and person.organisation_id != self.s.world.home_organisation_id

    def procedure(self, rules: Sequence[str]) -> str:
        """Write down the procedure that asks for ``rules`` (a document in the Policies folder, or a manager's standing
        email, wherever the plan has not written yet), add the step that reads it, and point the request at it."""
        from composer.stages.rules import policy_document, policy_email

        s = self.s
        title = PROCEDURES.get(self.family(), PROCEDURES["operations"])
        ours, other = ("customer", "colleague") if self.customer else ("colleague", "customer")
        text = (f"Once a request from {ASKERS[ours]} is handled:\n\n" + "".join(f"- {_cap(r)}.\n" for r in rules)
                + f"\nOnce a request from {ASKERS[other]} is handled: {OTHER_BRANCH[other]}.")
        manager = self._author()
        places = [p for p in ("files", "mailbox") if s.has(p) and not s.written(p) and (p == "files" or manager is not None)]
        if not places:
            raise Skip("nowhere left to write a procedure down")
        where = s.rng.choice(places)
        if where == "files" or manager is None:
            rec = policy_document(s, title, text)
            known = {"query": title, "name": f"{title}.md"}
            pointer = f"then follow our {title.lower()} (in the Policies folder of the shared drive)"
        else:
            body = f"Hi all,\n\nFrom now on, please stick to this {title.lower()}:\n\n{text}\n\nThanks,\n{manager.name}"
            rec = policy_email(s, manager, title, body)
            known = {"query": title, "subject": title, "from_email": manager.email}
            pointer = f"then follow the {title.lower()} {manager.first_name} emailed the team"
        lookup(s, rec, known, say=f"check our {title.lower()}", stage="consult")
        s.brief.constraints.append(_cap(pointer.removeprefix("then ")))
        return title

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
        return self._note(self._step(record), f"the {record.kind.noun}", value)

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
            title = system_name(s.catalog, kind.service)
            return self._note(found, f"their {title} {kind.noun}" if title.isupper() else f"their record in {title}", value)
        raise Skip("the person has no record with notes elsewhere")

    def role(self) -> str:
        """The colleague as a written procedure names them: "the support lead (Dana Lee)"."""
        colleague = self.colleague()
        return f"the {self._role} ({colleague.name})"

    def _author(self) -> Person | None:
        """The manager who emails the team this family's procedure (the first of its roles who is not the user)."""
        for role in (*FAMILY_ROLES.get(self.family(), ())[:2], "operations manager", "office manager"):
            try:
                person = self.s.world.team_member(role)
            except KeyError:
                continue
            if person.email != self.s.world.user.email:
                return person
        return None

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
                self._colleague, self._role = person, role
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
        clause = f"let {self.role()} know {value.noun}"
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
                words = f"react to their {record.kind.noun} with a ✅"
                s.call(tool.service, tool.name, {**named, param.name: _CHECK_MARKS[0]}, say=words,
                       stage="follow-up", require_change=True, accept={param.name: list(_CHECK_MARKS)})
                return words
            label = self.rng.choice(FAMILY_TAGS.get(self.family(), ("follow-up",)))
            value: Expr = ListOf((Lit(label),)) if param.is_list else Lit(label)
            labelled = phrase(tool, {**{k: f"the {record.kind.noun}" for k in named}, param.name: f'"{label}"'})
            if labelled is None:
                continue
            s.call(tool.service, tool.name, {**named, param.name: value}, say=labelled, stage="follow-up", require_change=True)
            return labelled
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
            words = f"assign the {record.kind.noun} to {self.role()}"
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
            words = phrase(tool, {**{k: f"the {record.kind.noun}" for k in named}, param.name: self.role()}) or \
                f"add {self.role()} to the {record.kind.noun}"
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
            kind = s.kinds.get(*tool.entity.split(".", 1)) if tool.entity else None
            words = phrase(tool, {k: f"their {kind.noun if kind is not None else 'message'}" for k in named})
            if words is None:
                continue
            s.call(tool.service, tool.name, dict(named), say=f"{words} once it is handled", stage="follow-up", require_change=True)
            return f"{words} once it is handled"
        raise Skip("the trigger has nothing to close")


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


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def walk_length(rng: random.Random) -> int:
    return rng.choices(LENGTHS, weights=LENGTH_WEIGHTS)[0]


def extend(s: Scenario, rng: random.Random, count: int | None = None) -> list[str]:
    """Add up to ``count`` follow-ups (default: a seeded length) to a built scenario; returns their kinds."""
    return Walk(s, rng).extend(walk_length(rng) if count is None else count)


__all__ = ["FAMILY_ROLES", "FAMILY_TAGS", "MOVES", "InPlay", "Passed", "Walk", "address_book", "directory", "extend", "own_record",
           "phrase", "record_name", "walk_length"]
