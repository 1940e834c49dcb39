"""Random walks over the dependency graph, run live on a world so every step has real values.

A walk starts at an anchor tool with a fact the instruction can state (a customer's name, a ticket
subject), then repeatedly picks a graph successor of a tool it already called, binding the new
tool's parameters to values earlier steps found (its ``Ref`` arguments are the graph edges it
follows). It prefers crossing into services it has not visited, skips calls that fail, change
nothing or undo an earlier write, and ends at a write (an ``act`` task) or at a read whose result
answers a question (an ``ask`` task). Reads whose results nothing uses are pruned at the end.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

import networkx as nx

from composer.catalog import Catalog, Param, ToolInfo
from composer.graph import ANCHOR_TYPES, UNLINKED_TYPES, accepted_types, is_anchor_tool, polymorphic_partner
from composer.plan import (
    Composed,
    Expr,
    ListOf,
    Lit,
    Ref,
    StepSpec,
    field_value,
    renumber_step,
    resolve,
    step_refs,
)
from composer.runner import Runner, result_items
from composer.words import role_of

Kind = Literal["act", "ask"]

#: Fields that name an item for a person, best first (how the instruction points at one item of a list).
DESCRIPTOR_TYPES = ("subject", "file_name", "channel_name", "product_name", "money", "date", "company_name", "person_name")
DESCRIPTOR_NAMES = ("name", "title", "summary", "subject")

#: Values worth asking about, or mentioning in text the agent writes.
ANSWER_TYPES = frozenset(
    {"email_address", "phone_number", "person_name", "company_name", "money", "date", "url", "product_sku", "file_name", "subject"}
)
MENTION_TYPES = frozenset({"url", "file_name", "product_sku"})

#: Types of the anchor item's own fields that name the subject (its name, email, phone, organisation).
IDENTITY_TYPES = frozenset({"person_name", "email_address", "phone_number", "company_name"})

#: Colleagues whose contact details a customer may be given.
CONTACT_ROLES = frozenset({"owner", "assignee", "lead", "organizer", "account owner", "author"})

#: Person-like types a write binds from one and the same person.
PERSON_TYPES = frozenset({"person_name", "email_address", "phone_number", "username"})

#: Untyped text parameters a write may be given a short phrase for (others, like first_name, need real data).
FREE_LABELS = frozenset({"name", "title", "topic", "summary", "reason", "lost_reason", "note", "comment", "description", "message"})

#: Write verbs that destroy or hide things: allowed, but rarely the point of a task.
DESTRUCTIVE_VERBS = frozenset({"delete", "trash", "remove", "redact", "void", "kick", "archive", "cancel", "release"})

_ANCHOR_WEIGHTS = {"person_name": 1.0, "company_name": 0.6, "email_address": 0.35, "phone_number": 0.2}

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")

_SUBJECTS = (
    "Follow-up",
    "Next steps",
    "Quick update",
    "Action needed",
    "Status update",
    "Summary",
    "Reminder",
    "Checking in",
)
_TEXT_LEADS = (
    "Reference: ",
    "For your records: ",
    "Please see ",
    "Related: ",
    "Noted: ",
    "Details: ",
)
_PLAIN_TEXTS = (
    "Following up on this today.",
    "Handled as discussed.",
    "Please review when you can.",
    "Thanks, all sorted on our side.",
)


class WalkFailed(Exception):
    """A walk that could not be completed; ``reason`` is a short label for the statistics."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Sphere = Literal["subject", "item", "colleague", "other"]


@dataclass(frozen=True, slots=True)
class Fact:
    """A value a step found. ``sphere`` says whom it is about: the task's subject (the anchor's
    person or organisation), an item found through the subject, a colleague named by such an
    item (an owner, an assignee), or something else (not followed)."""

    step: int
    field: str
    semtype: str
    value: Any
    stated: bool
    from_write: bool
    sphere: Sphere
    role: str


@dataclass(slots=True)
class StepNote:
    """What the instruction needs to know about one step's item."""

    entity: str | None
    parent: int | None  # the step whose value led to this item
    descriptors: list[tuple[str, Any]] = field(default_factory=list)
    sphere: str = "subject"  # whom the item is about (see Fact)
    via_subject: bool = False  # found through a value that names the subject itself


@dataclass(frozen=True, slots=True)
class Anchor:
    value: str
    semtype: str
    field: str


@dataclass(slots=True)
class Walk:
    kind: Kind
    specs: list[StepSpec]
    notes: list[StepNote]
    items: list[dict[str, Any]]
    anchor: Anchor
    answer: Ref | None
    explored: int  # calls tried, failures included


@dataclass(frozen=True, slots=True)
class WalkConfig:
    kind: Kind
    target_len: int
    max_calls: int
    min_services: int
    max_services: int = 5


class WalkIndex:
    """What every walk over one catalog needs, computed once: anchor tools and who accepts each type."""

    def __init__(self, catalog: Catalog, graph: nx.DiGraph) -> None:
        self.catalog = catalog
        self.graph = graph
        # (tool, parameter, semantic type of the stated fact): reads whose items *are* things of
        # that type (a contact found by name), so that the fact picks out one item.
        self.anchor_tools: list[tuple[ToolInfo, Param, str]] = []
        for tool in sorted(catalog.tools.values(), key=lambda t: t.key):
            if not is_anchor_tool(tool):
                continue
            own = {f.semtype for f in tool.fields if f.semtype and not f.is_list and "." not in f.path and role_of(f.path) == ""}
            for param in tool.params:
                if any(p.required and p.name != param.name for p in tool.params):
                    continue  # the instruction's fact alone must be enough to call it
                if param.is_search:
                    types = sorted(own & ANCHOR_TYPES)
                elif param.semtype in ANCHOR_TYPES and param.semtype in own and role_of(param.name) == "":
                    types = [param.semtype]
                else:
                    types = []
                self.anchor_tools.extend((tool, param, semtype) for semtype in types)
        self.accepting: dict[str, list[tuple[ToolInfo, Param]]] = {}
        for tool in sorted(catalog.tools.values(), key=lambda t: t.key):
            for param in tool.params:
                for semtype in accepted_types(tool, param):
                    if semtype not in UNLINKED_TYPES:
                        self.accepting.setdefault(semtype, []).append((tool, param))
        # Per semantic type: (tool, param, prior weight) for the tools that accept it, with the
        # checks that depend only on the schema done once.
        self.targets: dict[str, list[tuple[ToolInfo, Param, float]]] = {}
        for semtype, pairs in self.accepting.items():
            for tool, param in pairs:
                if tool.is_write and not _primary_ok(tool, param):
                    continue
                prior = 1.5 if param.required else 1.0
                if tool.is_write and tool.verb in DESTRUCTIVE_VERBS:
                    prior *= 0.25
                self.targets.setdefault(semtype, []).append((tool, param, prior))
        # How often each tool's calls succeeded so far in this run: a tool that keeps failing
        # (a create that always duplicates) is tried less.
        self.tried: dict[str, list[int]] = {}
        # Reads with no required parameter list a service's items (to draw anchors from its data).
        self.listers: dict[tuple[str, str], list[ToolInfo]] = {}
        for tool in sorted(catalog.tools.values(), key=lambda t: t.key):
            if tool.is_write or tool.required or tool.result_kind == "object":
                continue
            for f in tool.fields:
                if f.semtype and not f.is_list and "." not in f.path:
                    self.listers.setdefault((tool.service, f.semtype), []).append(tool)


def is_timestamp(value: Any) -> bool:
    return isinstance(value, str) and bool(_TIMESTAMP.match(value))


class Walker:
    """One walk on ``runner``'s world (the runner is left in the state the walk produced)."""

    def __init__(self, index: WalkIndex, runner: Runner, rng: random.Random, config: WalkConfig) -> None:
        self.index = index
        self.catalog = index.catalog
        self.runner = runner
        self.rng = rng
        self.config = config
        self.specs: list[StepSpec] = []
        self.tools: list[ToolInfo] = []
        self.items: list[dict[str, Any]] = []
        self.notes: list[StepNote] = []
        self.stated: set[tuple[int, str]] = set()
        self.stated_values: set[str] = set()
        self.created: set[tuple[int, str]] = set()  # (step, key field) of items a write created
        self.changed_fields: dict[tuple[str, str, str], set[str]] = {}
        self.selected: set[tuple[str | None, Any]] = set()
        self.spheres: list[Sphere] = []  # whom each step's item is about
        self.identity: set[str] = set()  # normalised values that name the subject
        self.anchor: Anchor | None = None
        self.answer: Ref | None = None
        self.explored = 0
        self.user_email = runner.world.user.email
        world = runner.world
        self.home_values = {_norm(world.home.name), _norm(world.user.name), _norm(world.home.domain)}

    # -- the walk ------------------------------------------------------------------------------------

    def run(self) -> Walk:
        self.runner.fresh()
        self._start()
        cap = self.config.max_calls + 4
        while not self._done():
            if len(self.specs) >= cap or self._useful_count() >= self.config.max_calls:
                raise WalkFailed("walk-too-long")
            if not self._step():
                raise WalkFailed("walk-stuck")
        return self._pruned()

    def _done(self) -> bool:
        if len(self.specs) < 2:
            return False
        last = len(self.specs) - 1
        useful = self._useful(extra=last)
        services = {self.specs[i].service for i in useful}
        if len(useful) < self.config.target_len or len(services) < self.config.min_services:
            return False
        if len(useful) > self.config.max_calls:
            return False
        if self.config.kind == "act":
            return self.tools[last].is_write
        answer = self._answer_field(last)
        if answer is None:
            return False
        self.answer = Ref(last, answer)
        return True

    # -- anchors -------------------------------------------------------------------------------------

    def _start(self) -> None:
        options = list(self.index.anchor_tools)
        weights = [_ANCHOR_WEIGHTS.get(semtype, 0.3) for _, _, semtype in options]
        for _ in range(8):
            if not options:
                break
            pick = self.rng.choices(range(len(options)), weights=weights)[0]
            tool, param, wanted = options.pop(pick)
            weights.pop(pick)
            drawn = self._anchor_value(tool, param, wanted)
            if drawn is None:
                continue
            value, semtype = drawn
            expr: Expr = ListOf((Lit(value),)) if param.is_list else Lit(value)
            self.explored += 1
            result = self.runner.call(tool.service, tool.name, {param.name: resolve(expr, [])})
            if not result.success:
                continue
            items = result_items(tool, result.data)
            matches = [
                (it, f.path)
                for it in items
                for f in tool.fields
                if f.semtype == semtype and role_of(f.path) == "" and _same_text(field_value(it, f.path), value)
            ]
            chosen = {id(it): (it, path) for it, path in matches}
            if len(chosen) != 1:
                continue  # nothing matches, or the anchor alone is ambiguous
            item, path = next(iter(chosen.values()))
            if tool.result_kind != "object" and tool.key_field is None:
                continue
            field_type = (tool.field_of(path).semtype if tool.field_of(path) else None) or semtype
            self.anchor = Anchor(value, field_type, path)
            self._append(
                StepSpec(tool.service, tool.name, ((param.name, expr),), tool.key_field, _key_value(tool, item)),
                tool,
                item,
                StepNote(tool.entity, None, []),
            )
            self.stated.add((0, path))
            self.stated_values.add(_norm(value))
            self.identity.add(_norm(value))
            for f in tool.fields:
                v = field_value(item, f.path)
                if f.semtype in IDENTITY_TYPES and not f.is_list and role_of(f.path) in ("", "company") and v:
                    self.identity.add(_norm(v))
            self.spheres[0] = "subject"
            if semtype in ("email_address", "phone_number"):
                name = next(
                    (field_value(item, f.path) for f in tool.fields
                     if f.semtype in ("person_name", "company_name") and role_of(f.path) == "" and field_value(item, f.path)),
                    None,
                )
                if isinstance(name, str):
                    self.notes[0].descriptors.append(("__name__", name))
                    self.stated_values.add(_norm(name))
            return
        raise WalkFailed("no-anchor")

    def _anchor_value(self, tool: ToolInfo, param: Param, semtype: str) -> tuple[str, str] | None:
        world = self.runner.world
        if semtype == "person_name":
            return self.rng.choice(world.customers).name, semtype
        if semtype == "company_name":
            return self.rng.choice(world.organisations[1:]).name, semtype
        if semtype == "email_address":
            return self.rng.choice(world.customers).email, semtype
        if semtype == "phone_number":
            return self.rng.choice(world.customers).phone, semtype
        if semtype == "product_name":
            return self.rng.choice(world.products).name, semtype
        if semtype == "product_sku":
            return self.rng.choice(world.products).sku, semtype
        value = self._value_from_data(tool.service, semtype)
        return (value, semtype) if value else None

    def _value_from_data(self, service: str, semtype: str) -> str | None:
        """A value of ``semtype`` that exists in ``service`` (a subject, a channel name...)."""
        listers = self.index.listers.get((service, semtype), [])
        if not listers:
            return None
        tool = self.rng.choice(listers)
        self.explored += 1
        result = self.runner.call(tool.service, tool.name, {})
        if not result.success:
            return None
        values = sorted(
            {
                str(v)
                for it in result_items(tool, result.data)
                for f in tool.fields
                if f.semtype == semtype and not f.is_list
                for v in [field_value(it, f.path)]
                if isinstance(v, str) and 3 <= len(v) <= 80
            }
        )
        return self.rng.choice(values) if values else None

    # -- facts -----------------------------------------------------------------------------------------

    def _facts(self) -> list[Fact]:
        facts: list[Fact] = []
        for step, (tool, item) in enumerate(zip(self.tools, self.items, strict=True)):
            for f in tool.fields:
                if f.is_list or not f.semtype:
                    continue
                value = field_value(item, f.path)
                if value is None or value == "" or isinstance(value, (dict, list, bool)):
                    continue
                stated = (step, f.path) in self.stated or _norm(value) in self.stated_values
                # Only person-like fields name someone else (an owner); the rest belong to the item.
                role = role_of(f.path) if f.semtype in PERSON_TYPES else ""
                sphere = self._sphere_of(step, role, value)
                facts.append(Fact(step, f.path, f.semtype, value, stated, tool.is_write, sphere, role))
        return facts

    def _sphere_of(self, step: int, role: str, value: Any) -> Sphere:
        if _norm(value) in self.identity:
            return "subject"
        item_sphere = self.spheres[step]
        if item_sphere in ("subject", "item"):
            return "item" if role == "" else "colleague"
        if item_sphere == "colleague":
            return "colleague" if role == "" else "other"
        return "other"

    # -- one step ----------------------------------------------------------------------------------------

    def _step(self) -> bool:
        facts = self._facts()
        candidates = self._candidates(facts)
        for _ in range(25):
            if not candidates:
                return False
            weights = [w for w, *_ in candidates]
            pick = self.rng.choices(range(len(candidates)), weights=weights)[0]
            _, tool, param, fact = candidates.pop(pick)
            args = self._bind(tool, param, fact, facts)
            if args is None:
                continue
            if tool.is_write and _carries_nothing(tool, args) and self.rng.random() < 0.75:
                continue  # a message with nothing looked up in it is filler
            if self._try(tool, args, fact):
                return True
        return False

    def _candidates(self, facts: list[Fact]) -> list[tuple[float, ToolInfo, Param, Fact]]:
        visited = {s.service for s in self.specs}
        last = len(self.specs) - 1
        last_service = self.specs[-1].service
        used_tools = {t.key for t in self.tools}
        useful = self._useful_count()
        remaining = self.config.target_len - useful
        n_writes = sum(1 for t in self.tools if t.is_write)
        graph = self.index.graph
        tried = self.index.tried
        out: list[tuple[float, ToolInfo, Param, Fact]] = []
        latest: dict[tuple[str, str, str], Fact] = {}
        for fact in facts:  # one fact per value: the same email found twice links the same tools
            latest[(fact.semtype, str(fact.value), fact.sphere)] = fact
        for fact in latest.values():
            if fact.semtype in UNLINKED_TYPES:
                continue
            if fact.value == self.user_email or fact.sphere == "other":
                continue  # the user is not a counterpart, and strangers are not what the task is about
            for tool, param, prior in self.index.targets.get(fact.semtype, ()):
                colleague_search = False
                if not tool.is_write and fact.sphere == "colleague" and tool.result_kind != "object":
                    if fact.semtype not in PERSON_TYPES:
                        continue  # a colleague's other details are not search terms
                    # Searching by a colleague (the issues the account owner reported) reaches
                    # internal services; allowed, but rarely, and only into a new service.
                    colleague_search = tool.service not in visited
                source = self.tools[fact.step]
                if not graph.has_edge(source.key, tool.key):
                    continue
                if tool.is_write and (fact.step, fact.field) in self.created:
                    continue  # never edit what this task just created
                if tool.is_write and fact.sphere == "colleague" and not _recipient_param(tool, param):
                    continue  # colleagues are told or assigned things, not made customers
                if tool.is_write and fact.stated and not param.is_list and fact.semtype.startswith("id:"):
                    continue
                if not tool.is_write and fact.from_write and tool.service == source.service:
                    continue  # re-reading what we just wrote adds nothing
                new_service = tool.service not in visited
                if new_service and len(visited) >= self.config.max_services:
                    continue
                weight = prior
                counts = tried.get(tool.key)
                if counts is not None:
                    weight *= 2.0 * (counts[1] + 1) / (counts[0] + 2)
                if new_service:
                    weight *= 5.0 if len(visited) < self.config.min_services + 1 else 2.0
                elif tool.service != last_service:
                    weight *= 1.5
                if fact.step == last:
                    weight *= 2.0
                    if tool.is_write and not self.tools[last].is_write and fact.field == source.key_field:
                        weight *= 2.0  # act on what was just found
                elif not tool.is_write and not self.tools[last].is_write and self.config.kind == "act":
                    weight *= 0.5  # another search before using the last one's result
                if tool.key in used_tools:
                    weight *= 0.3
                if tool.is_write:
                    weight *= 0.5 if len(self.specs) < 2 else 2.0
                    weight *= 0.4 ** max(0, n_writes - 2)
                    if remaining <= 1 and len(visited) >= self.config.min_services:
                        weight *= 3.0
                    if self.config.kind == "ask":
                        weight *= 0.15
                elif remaining <= 0 and self.config.kind == "act":
                    weight *= 0.2
                if tool.is_write and fact.sphere == "item" and fact.field == source.key_field:
                    weight *= 3.0  # acting on an item the task found is the point of most tasks
                elif tool.is_write and fact.semtype in PERSON_TYPES and tool.verb == "create":
                    weight *= 0.5
                if fact.sphere == "colleague":
                    weight *= 0.5
                if colleague_search:
                    weight *= 0.3
                out.append((weight, tool, param, fact))
        return out

    # -- binding ------------------------------------------------------------------------------------------

    def _bind(self, tool: ToolInfo, param: Param, fact: Fact, facts: list[Fact]) -> dict[str, Expr] | None:
        ref = Ref(fact.step, fact.field)
        args: dict[str, Expr] = {param.name: ListOf((ref,)) if param.is_list else ref}
        partner = polymorphic_partner(tool, param)
        if partner is not None:
            entity = fact.semtype.split(".", 1)[-1]
            if entity not in partner.enum:
                return None
            args[partner.name] = Lit(entity, stated=False)
        used_values = {fact.value}
        for q in tool.params:
            if q.name in args:
                continue
            expr = self._bind_param(tool, q, args, facts, used_values, fact)
            if expr is None:
                if q.required:
                    return None
                continue
            args[q.name] = expr
        ordered = {p.name: args[p.name] for p in tool.params if p.name in args}
        return ordered

    def _bind_param(
        self,
        tool: ToolInfo,
        q: Param,
        args: Mapping[str, Expr],
        facts: list[Fact],
        used_values: set[Any],
        primary: Fact,
    ) -> Expr | None:
        write = tool.is_write
        types = accepted_types(tool, q)
        if q.semtype in PERSON_TYPES and primary.semtype in PERSON_TYPES and not q.is_list:
            # The name and the email of one person come from the same record.
            same = [
                f for f in facts
                if f.step == primary.step and f.role == primary.role and f.semtype == q.semtype and f.value not in used_values
            ]
            if same:
                used_values.add(same[0].value)
                return Ref(same[0].step, same[0].field)
            return None  # another person's name or email would make a chimera
        if q.required:
            if types and q.semtype not in ("text", "subject", "datetime", "date"):
                options = [
                    f
                    for f in facts
                    if f.semtype in types and f.value not in used_values and f.value != self.user_email
                    and f.sphere != "other"
                    and not (write and (f.step, f.field) in self.created and f.semtype.startswith("id:"))
                ]
                if options:
                    chosen = max(options, key=lambda f: (f.step, self.rng.random()))
                    used_values.add(chosen.value)
                    ref = Ref(chosen.step, chosen.field)
                    return ListOf((ref,)) if q.is_list else ref
                return self._literal(tool, q, args, primary, facts) if write else None
            if q.enum:
                return Lit(self._enum_choice(q, primary), stated=write)
            if q.is_search:
                options = [f for f in facts if f.semtype in ("person_name", "company_name", "subject")]
                if not options:
                    return None
                chosen = max(options, key=lambda f: (f.step, self.rng.random()))
                return Ref(chosen.step, chosen.field)
            return self._literal(tool, q, args, primary, facts) if write else None
        if not write:
            return None
        roll = self.rng.random()
        if q.semtype == "text" and roll < 0.3 and not any(isinstance(e, Composed) for e in args.values()):
            return self._composed(tool, q, primary, facts, required=False)
        if q.enum and roll < 0.2 and q.name not in ("currency", "mime_type"):
            return Lit(self._enum_choice(q, primary), stated=True)
        if q.semtype == "email_address" and q.is_list and roll < 0.12:
            options = [
                f
                for f in facts
                if f.semtype == "email_address" and f.value not in used_values and f.value != self.user_email
            ]
            if options:
                chosen = self.rng.choice(options)
                used_values.add(chosen.value)
                return ListOf((Ref(chosen.step, chosen.field),))
        return None

    def _enum_choice(self, q: Param, primary: Fact) -> Any:
        current = field_value(self.items[primary.step], q.name) if primary.step < len(self.items) else None
        options = [v for v in q.enum if v != current] or list(q.enum)
        return self.rng.choice(options)

    def _literal(
        self, tool: ToolInfo, q: Param, args: Mapping[str, Expr], primary: Fact, facts: list[Fact]
    ) -> Expr | None:
        """A value the generator chooses and the instruction states."""
        semtype = q.semtype
        if semtype == "text":
            return self._composed(tool, q, primary, facts, required=True)
        if semtype == "subject" or (semtype is None and q.json_type == "string" and not q.enum and q.name in FREE_LABELS):
            if q.is_list:
                return None
            topic = self.rng.choice(_SUBJECTS)
            name = self._subject_name()
            text = f"{topic}: {name}" if name and self.rng.random() < 0.6 else topic
            return Lit(text)
        if semtype in ("datetime", "date"):
            return Lit(self._future(q.name, semtype, args))
        if semtype == "tag":
            tag = self.rng.choice(("follow-up", "priority", "vip", "escalated", "reviewed"))
            return ListOf((Lit(tag),)) if q.is_list else Lit(tag)
        if semtype == "file_name":
            stem = re.sub(r"[^a-z0-9]+", "-", (self.anchor.value if self.anchor else "notes").lower()).strip("-")
            return Lit(f"{stem}-{self.rng.choice(('notes', 'summary', 'follow-up'))}.txt")
        if semtype == "channel_name":
            value = self._value_from_data(tool.service, "channel_name")
            if value is None:
                return None
            self.stated_values.add(_norm(value))
            return Lit(value)
        if semtype == "money" or (semtype is None and q.json_type == "number"):
            return Lit(float(self.rng.choice((50, 75, 120, 150, 200, 250, 300, 450))))
        if semtype == "quantity" or (semtype is None and q.json_type == "integer"):
            return Lit(self.rng.randint(1, 4))
        if q.json_type == "boolean":
            return Lit(True)
        return None

    def _subject_name(self) -> str | None:
        """The subject's name (a person's or an organisation's), for titles the agent writes."""
        if not self.items:
            return None
        tool, item = self.tools[0], self.items[0]
        for semtype in ("person_name", "company_name"):
            for f in tool.fields:
                value = field_value(item, f.path)
                if f.semtype == semtype and role_of(f.path) == "" and isinstance(value, str):
                    return value
        return self.anchor.value if self.anchor and self.anchor.semtype in ("person_name", "company_name") else None

    def _future(self, name: str, semtype: str, args: Mapping[str, Expr]) -> str:
        now = self.runner.world.now_dt
        if semtype == "date":
            return (now + timedelta(days=self.rng.randint(3, 30))).strftime("%Y-%m-%d")
        starts = [e.value for k, e in args.items() if isinstance(e, Lit) and is_timestamp(e.value)]
        if starts and ("end" in name or "max" in name):
            start = starts[0]
            return _shift(start, minutes=self.rng.choice((30, 60)))
        day = (now + timedelta(days=self.rng.randint(1, 10))).replace(
            hour=self.rng.choice((9, 10, 11, 14, 15, 16)), minute=self.rng.choice((0, 30)), second=0
        )
        return day.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _composed(self, tool: ToolInfo, q: Param, primary: Fact, facts: list[Fact], *, required: bool) -> Expr | None:
        options: list[tuple[float, Fact]] = []
        for f in facts:
            if f.stated or f.value == primary.value or f.value == self.user_email:
                continue
            own_key = f.field == self.tools[f.step].key_field
            if f.sphere == "item":
                if not (f.semtype in MENTION_TYPES or f.semtype == "subject" or (f.semtype.startswith("id:") and own_key)):
                    continue
            elif f.sphere == "colleague":
                # A colleague's contact details (an account owner's email), passed on to someone else.
                if f.semtype not in ("email_address", "phone_number") or primary.sphere == "colleague":
                    continue
                if f.role not in CONTACT_ROLES:
                    continue
            else:
                continue
            text = str(f.value)
            if len(text) < 4 or is_timestamp(text):
                continue
            if f.step == primary.step and f.semtype.startswith("id:") and f.field == self.tools[f.step].key_field:
                continue  # the item's own id in a note on that item says nothing
            weight = 1.0
            if self.tools[f.step].service != tool.service:
                weight *= 3.0
            if f.from_write:
                weight *= 3.0
            if f.semtype.startswith("id:"):
                weight *= 3.0
            if f.sphere == "colleague":
                weight *= 0.3
            options.append((weight, f))
        if options:
            f = self.rng.choices([f for _, f in options], weights=[w for w, _ in options])[0]
            lead = self.rng.choice(_TEXT_LEADS)
            return Composed((lead, Ref(f.step, f.field), "."))
        if not required:
            return None
        return Lit(self.rng.choice(_PLAIN_TEXTS))

    # -- trying a call -------------------------------------------------------------------------------------

    def _try(self, tool: ToolInfo, args: dict[str, Expr], primary: Fact) -> bool:
        try:
            arguments = {name: resolve(expr, self.items) for name, expr in args.items()}
        except LookupError:
            return False
        checkpoint = self.runner.checkpoint(tool.service) if tool.is_write else None
        since = self.runner.tracker.position(tool.service)
        self.explored += 1
        result = self.runner.call(tool.service, tool.name, arguments)
        self.index.tried.setdefault(tool.key, [0, 0])[0] += 1
        if not result.success:
            return False

        def undo() -> bool:
            if checkpoint is not None:
                self.runner.rollback(tool.service, checkpoint)  # the change log comes back with the rows
            return False

        items = result_items(tool, result.data)
        if tool.is_write:
            changes = self.runner.tracker.service_diff(tool.service, since)
            if not changes or self._conflicts(tool.service, changes):
                return undo()
            item = items[0] if items else {}
            descriptors: list[tuple[str, Any]] = []
        elif primary.sphere == "colleague" and tool.result_kind != "object" and _lists_people(tool, primary.semtype):
            # Looking a colleague up in a list: continue with the entry that is that person.
            same = [it for it in items if any(_same_text(field_value(it, f.path), str(primary.value))
                                              for f in tool.fields if f.semtype == primary.semtype and role_of(f.path) == "")]
            if len(same) != 1:
                return False
            item, descriptors = same[0], []
        else:
            choice = self._choose_item(tool, items)
            if choice is None:
                return False
            item, descriptors = choice
        key_value = _key_value(tool, item)
        if not tool.is_write and tool.key_field and (tool.entity, key_value) in self.selected:
            return False  # an item the walk already has: the call would add nothing
        spec = StepSpec(tool.service, tool.name, tuple(args.items()), tool.key_field, key_value)
        lookup = tool.result_kind == "object" or _lists_people(tool, primary.semtype)
        sphere: Sphere = "colleague" if primary.sphere == "colleague" and not tool.is_write and lookup else "item"
        note = StepNote(tool.entity, primary.step, descriptors, sphere, primary.sphere == "subject")
        self._append(spec, tool, item, note, sphere)
        step = len(self.specs) - 1
        for path, _ in descriptors:
            self.stated.add((step, path))
            self.stated_values.add(_norm(field_value(item, path)))
        self.index.tried[tool.key][1] += 1  # counted as a success only once the step is kept
        for expr in args.values():
            if isinstance(expr, Lit) and expr.stated and isinstance(expr.value, str):
                self.stated_values.add(_norm(expr.value))
        if tool.is_write:
            self._record_changes(tool.service, changes)
            if tool.key_field:
                self.created.add((step, tool.key_field))
        return True

    def _choose_item(self, tool: ToolInfo, items: list[dict[str, Any]]) -> tuple[dict[str, Any], list[tuple[str, Any]]] | None:
        if not items:
            return None
        if tool.result_kind == "object":
            return items[0], []
        if tool.key_field is None and len(items) > 1:
            return None
        fresh = [it for it in items if (tool.entity, _key_value(tool, it)) not in self.selected]
        self.rng.shuffle(fresh)
        for item in fresh[:6]:
            descriptors = describe_item(tool, item, items, self.stated_values)
            if descriptors is not None:
                return item, descriptors
        return None

    def _conflicts(self, service: str, changes: Any) -> bool:
        """Whether a write would undo or overwrite what an earlier write of this task did."""
        for table, t in changes.tables.items():
            for key in t.deleted:
                if (service, table, key) in self.changed_fields:
                    return True
            for key, change in t.changed.items():
                meaningful = {f for f in change.fields if not is_timestamp(change.after.get(f))}
                earlier = self.changed_fields.get((service, table, key), set())
                if "+" in earlier or meaningful & earlier:
                    return True
        return False

    def _record_changes(self, service: str, changes: Any) -> None:
        for table, t in changes.tables.items():
            for key, change in t.changed.items():
                meaningful = {f for f in change.fields if not is_timestamp(change.after.get(f))}
                self.changed_fields.setdefault((service, table, key), set()).update(meaningful)
            for key in t.deleted:
                self.changed_fields.setdefault((service, table, key), set()).add("*")
            for key in t.added:
                self.changed_fields.setdefault((service, table, key), set()).add("+")

    def _append(
        self, spec: StepSpec, tool: ToolInfo, item: dict[str, Any], note: StepNote, sphere: Sphere = "subject"
    ) -> None:
        self.spheres.append(sphere)
        self.specs.append(spec)
        self.tools.append(tool)
        self.items.append(item)
        self.notes.append(note)
        if tool.key_field:
            self.selected.add((tool.entity, spec.select_value))

    # -- usefulness and answers -----------------------------------------------------------------------------

    def _useful(self, extra: int | None = None) -> list[int]:
        keep = {i for i, t in enumerate(self.tools) if t.is_write}
        if extra is not None:
            keep.add(extra)
        if self.answer is not None:
            keep.add(self.answer.step)
        pending = sorted(keep, reverse=True)
        while pending:
            i = pending.pop()
            for ref in step_refs(self.specs[i]):
                if ref.step not in keep:
                    keep.add(ref.step)
                    pending.append(ref.step)
        return sorted(keep)

    def _useful_count(self) -> int:
        return len(self._useful())

    def _answer_field(self, step: int) -> str | None:
        tool, item = self.tools[step], self.items[step]
        if tool.is_write and self.rng.random() < 0.5:
            return None
        options: list[str] = []
        for f in tool.fields:
            if f.is_list or not f.semtype or "." in f.path:
                continue
            if not (f.semtype in ANSWER_TYPES or (tool.is_write and f.path == tool.key_field)):
                continue
            value = field_value(item, f.path)
            if value is None or isinstance(value, (bool, dict, list)):
                continue
            if (step, f.path) in self.stated or _norm(value) in self.stated_values:
                continue
            if isinstance(value, str) and (len(value) < 4 or is_timestamp(value)):
                continue
            if isinstance(value, (int, float)) and value <= 0:
                continue
            if value == self.user_email or _norm(value) in self.home_values:
                continue
            options.append(f.path)
        return self.rng.choice(options) if options else None

    # -- pruning ----------------------------------------------------------------------------------------------

    def _pruned(self) -> Walk:
        assert self.anchor is not None
        keep = self._useful(extra=len(self.specs) - 1)
        if 0 not in keep:
            raise WalkFailed("anchor-unused")
        if len(keep) > self.config.max_calls:
            raise WalkFailed("walk-too-long")
        mapping = {old: new for new, old in enumerate(keep)}
        specs = [renumber_step(self.specs[i], mapping) for i in keep]
        notes = [
            StepNote(
                self.notes[i].entity,
                mapping.get(self.notes[i].parent) if self.notes[i].parent is not None else None,
                list(self.notes[i].descriptors),
                self.notes[i].sphere,
                self.notes[i].via_subject,
            )
            for i in keep
        ]
        answer = Ref(mapping[self.answer.step], self.answer.field) if self.answer is not None else None
        return Walk(
            kind=self.config.kind,
            specs=specs,
            notes=notes,
            items=[self.items[i] for i in keep],
            anchor=self.anchor,
            answer=answer,
            explored=self.explored,
        )


def _lists_people(tool: ToolInfo, semtype: str) -> bool:
    """Whether a list's items are people of this kind (a user directory), not things about them."""
    return any(f.semtype == semtype and role_of(f.path) == "" and not f.is_list for f in tool.fields)


def _carries_nothing(tool: ToolInfo, args: Mapping[str, Expr]) -> bool:
    """A write whose text is all boilerplate (no looked-up value in it)."""
    texts = [args[p.name] for p in tool.params if p.semtype == "text" and p.name in args]
    return bool(texts) and not any(isinstance(e, Composed) for e in texts)


def _primary_ok(tool: ToolInfo, param: Param) -> bool:
    """A write is driven by a required parameter (or, if it has none, by its first one of that type)."""
    if param.required:
        return True
    if tool.required:
        return False
    first = next((p for p in tool.params if p.semtype == param.semtype), None)
    return first is not None and first.name == param.name


RECIPIENT_VERBS = frozenset({"share", "invite", "add", "forward", "assign", "open", "send", "lookup"})


def _recipient_param(tool: ToolInfo, param: Param) -> bool:
    """Whether a colleague's address may go here: recipient lists, assignees and owners, shares and invites."""
    role = role_of(param.name)
    return param.is_list or role in ("assignee", "owner") or (role == "" and tool.verb in RECIPIENT_VERBS)


def describe_item(
    tool: ToolInfo, item: Mapping[str, Any], items: list[dict[str, Any]], stated_values: set[str]
) -> list[tuple[str, Any]] | None:
    """A field (and value) that tells ``item`` apart from the other ``items``, or None if none does."""
    candidates: list[str] = []
    for semtype in DESCRIPTOR_TYPES:
        candidates += [f.path for f in tool.fields if f.semtype == semtype and not f.is_list and "." not in f.path]
        if semtype == "subject":
            candidates += [
                f.path
                for f in tool.fields
                if f.semtype is None and f.path in DESCRIPTOR_NAMES and f.json_type == "string" and not f.enum
            ]
    for path in candidates:
        value = item.get(path)
        if value is None or isinstance(value, bool) or (isinstance(value, str) and not 3 <= len(value) <= 80):
            continue
        if isinstance(value, (int, float)) and value <= 0:
            continue
        if _norm(value) in stated_values:
            continue
        if sum(1 for other in items if other.get(path) == value) == 1:
            return [(path, value)]
    return [] if len(items) == 1 else None


def _key_value(tool: ToolInfo, item: Mapping[str, Any]) -> Any:
    return field_value(item, tool.key_field) if tool.key_field else None


def _norm(value: Any) -> str:
    return " ".join(str(value).lower().split())


def _same_text(value: Any, target: str) -> bool:
    return isinstance(value, str) and _norm(value) == _norm(target)


def _shift(iso: str, *, minutes: int) -> str:
    from datetime import datetime

    moment = datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S") + timedelta(minutes=minutes)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
