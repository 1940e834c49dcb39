"""Instructions from plans, by templates: the goal, the anchors and the date, never a looked-up value.

Each write becomes a clause built from its tool: a verb frame (per tool where one is written, per
verb otherwise), the item it acts on (named by ``Describer``), whom it reaches, and what the agent
must put in it ("mentioning the refund id"). Sentence frames, connectors, the date line and the
order of optional parts vary with the task's random stream, so a set of tasks does not read as one
sentence with blanks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from composer.catalog import Catalog, Param, ToolInfo
from composer.describe import Describer
from composer.distractors import Distractor
from composer.plan import Composed, Cond, Expr, ListOf, Lit, Ref, StepSpec
from composer.policy import Policy
from composer.walk import PERSON_TYPES
from composer.words import article, field_label, long_date, money, param_label, plural, when

#: Frames for particular tools ({target}, {to}, {extra}); others are built from the verb.
TOOL_FRAMES: dict[str, tuple[str, ...]] = {
    "refund_charge": ("refund {target}{extra}", "issue a refund for {target}{extra}"),
    "close_ticket": ("close {target}{extra}", "mark {target} as closed{extra}"),
    "solve_ticket": ("solve {target}{extra}", "mark {target} as solved{extra}"),
    "add_ticket_note": ("add an internal note to {target}{extra}", "leave an internal note on {target}{extra}"),
    "add_ticket_reply": ("reply publicly on {target}{extra}", "post a public reply on {target}{extra}"),
    "send_email": ("send an email to {to}{extra}", "email {to}{extra}", "write to {to} by email{extra}"),
    "send_message": ("send a text message to {to}{extra}", "text {to}{extra}"),
    "post_message": ("post a message in {target}{extra}", "write in {target}{extra}"),
    "forward_message": ("forward {target} to {to}{extra}",),
    "reply_to_message": ("reply to {target}{extra}", "answer {target}{extra}"),
    "create_ticket": ("open a support ticket for {to}{extra}", "create a ticket for {to}{extra}"),
    "create_event": ("schedule a meeting{to_with}{extra}", "put a meeting in the calendar{to_with}{extra}"),
    "share_file": ("share {target} with {to}{extra}", "give {to} access to {target}{extra}"),
    "assign_issue": ("assign {target} to {to}{extra}",),
    "do_transition": ("move {target} along its workflow{extra}",),
    "approve_invoice": ("approve {target}{extra}",),
    "void_invoice": ("void {target}{extra}",),
    "email_invoice": ("email {target}{to_to}{extra}", "send {target} by email{to_to}{extra}"),
    "add_attendees": ("add {to} to {target}{extra}", "invite {to} to {target}{extra}"),
    "invite_to_channel": ("invite {to} to {target}{extra}",),
    "open_direct_message": ("open a direct message with {to}{extra}",),
    "add_watcher": ("add {to} as a watcher of {target}{extra}",),
    "create_issue": ("create an issue in {target}{extra}", "file an issue in {target}{extra}"),
    "add_comment": ("comment on {target}{extra}", "add a comment to {target}{extra}"),
    "add_note": ("add a note to {target}{extra}", "note on {target}{extra}"),
    "update_deal_stage": ("move {target} to a new stage{extra}",),
    "add_opt_out": ("opt {to} out of our text messages{extra}", "record that {to} does not want text messages{extra}"),
    "create_draft": ("draft an email to {to}{extra}", "prepare a draft email to {to}{extra}"),
    "create_customer": ("add {to} as a payments customer{extra}",),
    "create_contact": ("add {to} as a contact{extra}",),
    "book_room": ("book a room for {target}{extra}",),
    "cancel_event": ("cancel {target}{extra}",),
    "move_event": ("move {target}{extra}", "reschedule {target}{extra}"),
    "respond_to_event": ("respond to {target}{extra}",),
    "create_payment": ("record a payment{extra}",),
    "create_payment_link": ("create a payment link{to_for}{extra}",),
    "capture_charge": ("capture {target}{extra}",),
    "update_ticket": ("update {target}{extra}",),
    "trash_message": ("move {target} to the trash{extra}",),
    "set_channel_topic": ("set the topic of {target}{extra}",),
}

_RECIPIENT_PREP = {"share": "with", "invite": "to", "create": "for", "open": "for", "assign": "to"}

_DATE_LINES = ("It is {date}.", "Today is {date}.", "Date: {date}.", "(Today: {date}.)")
_CONTEXT_LINES = (
    "This is about {anchor}.",
    "I'm looking after {anchor} today.",
    "{anchor_cap} needs some attention.",
    "Please help me with {anchor}.",
)
_CONNECTORS = ("Then", "After that,", "Next,", "Also", "Once that is done,")
_QUESTIONS = (
    "What is {value}?",
    "Tell me {value}.",
    "Reply with {value}.",
    "Let me know {value}.",
)
_CAUTIONS = (
    "Be careful: more than one {noun} looks like the one I mean.",
    "Leave any other {nouns} alone.",
    "Do not touch the other {nouns}.",
)


@dataclass(frozen=True, slots=True)
class Instruction:
    text: str
    stated: list[str]  # anchors and literal values the text must contain


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class Verbaliser:
    def __init__(
        self,
        catalog: Catalog,
        describer: Describer,
        specs: Sequence[StepSpec],
        rng: random.Random,
        *,
        now: str,
        currency: str = "USD",
    ) -> None:
        self.catalog = catalog
        self.d = describer
        self.specs = specs
        self.rng = rng
        self.now = now
        self.currency = currency
        self.stated: list[str] = []
        self.target_noun: str | None = None

    # -- naming, with short forms after the first mention ----------------------------------------------

    def name(self, step: int) -> str:
        return self.d.entity(step)

    # -- clauses -------------------------------------------------------------------------------------------

    def clause(self, j: int) -> str:
        spec = self.specs[j]
        tool = self.catalog.tool(spec.service, spec.tool)
        target: Ref | None = None
        recipients: list[str] = []
        extras: list[str] = []
        recipient_param: str | None = None
        recipient_steps: set[int] = set()
        for name, expr in spec.args:
            param = tool.param(name)
            if param is None:
                continue
            refs = [expr] if isinstance(expr, Ref) else [e for e in expr.items if isinstance(e, Ref)] if isinstance(expr, ListOf) else []
            if refs and param.semtype in PERSON_TYPES:
                if recipient_param is None:
                    recipient_param = name
                    recipient_steps = {r.step for r in refs}
                    recipients += [self._recipient(r) for r in refs]
                elif not param.is_list and all(r.step in recipient_steps for r in refs):
                    continue  # the same person's name or number, already named
                else:
                    extras.append(f"with {' and '.join(self._recipient(r) for r in refs)} in {param_label(name)}")
                continue
            if target is None and isinstance(expr, Ref) and self._is_item_key(expr):
                target = expr
                target_text = self.name(expr.step)  # named in the order the sentence reads
                continue
            phrase = self._extra(tool, param, expr, target is not None)
            if phrase:
                extras.append(phrase)
        if target is None:
            target_text = ""
        self.target_noun = self.d.noun(target.step) if target is not None else None
        to_text = " and ".join(recipients)
        frame = self._frame(tool, target_text, to_text)
        extra = ""
        if extras:
            extra = ", " + ", ".join(extras) if len(extras) > 1 or self.rng.random() < 0.5 else " " + extras[0]
        text = frame.format(
            target=target_text,
            to=to_text,
            to_with=f" with {to_text}" if to_text else "",
            to_to=f" to {to_text}" if to_text else "",
            to_for=f" for {to_text}" if to_text else "",
            extra=extra,
        )
        return " ".join(text.split())

    def _is_item_key(self, ref: Ref) -> bool:
        tool = self.d.tool(ref.step)
        return ref.field == tool.key_field or (ref.step == 0 and ref.field == tool.key_field)

    def _recipient(self, ref: Ref) -> str:
        return self.d.recipient(ref)

    def _frame(self, tool: ToolInfo, target: str, to: str) -> str:
        frames = TOOL_FRAMES.get(tool.name)
        if frames:
            usable = [f for f in frames if ("{target}" not in f or target) and ("{to}" not in f or to)]
            if usable:
                return self.rng.choice(usable)
        verb = tool.verb
        words = tool.object_words
        noun = words.split(" ")[-1] if words else ""
        prep = _RECIPIENT_PREP.get(verb, "to")
        to_part = f" {prep} {to}" if to else ""
        if target:
            if words.startswith("to "):
                return f"{verb} to {{target}}{to_part}{{extra}}"
            entity_noun = self.target_noun or ""
            if not noun or noun in target or noun.rstrip("s") in entity_noun:
                return f"{verb} {{target}}{to_part}{{extra}}"
            return f"{verb} {article(words)} {words} for {{target}}{to_part}{{extra}}"
        if not noun:
            return f"{verb}{to_part}{{extra}}"
        return f"{verb} {article(noun)} {words}{to_part}{{extra}}"

    def _extra(self, tool: ToolInfo, param: Param, expr: Expr, has_target: bool) -> str | None:
        label = param_label(param.name)
        if isinstance(expr, Lit):
            if not expr.stated:
                return None
            return self._literal(param, expr.value, has_target)
        if isinstance(expr, Cond):
            return f"with the {label} the house rule below calls for"
        if isinstance(expr, Composed):
            refs = [p for p in expr.parts if isinstance(p, Ref)]
            if refs:
                named = " and ".join(self.d.value(r) for r in refs)
                return self.rng.choice((f"mentioning {named} in the {label}", f"with a {label} that mentions {named}"))
            text = "".join(p for p in expr.parts if isinstance(p, str)).split("\n")[0].strip()
            if not text:
                return None
            return self._literal(param, text, has_target)
        if isinstance(expr, ListOf):
            lits = [e.value for e in expr.items if isinstance(e, Lit) and e.stated]
            refs = [e for e in expr.items if isinstance(e, Ref)]
            parts = []
            if lits:
                self.stated += [str(v) for v in lits]
                parts.append(f"with {label} " + ", ".join(f"'{v}'" for v in lits))
            if refs:
                parts.append(f"with {label} from " + " and ".join(self.d.value(r) for r in refs))
            return ", ".join(parts) or None
        if isinstance(expr, Ref):
            if param.semtype == "money":
                return f"for {self.d.value(expr)}"
            if param.semtype and param.semtype.startswith("id:"):
                prep = {"move": "into", "copy": "into", "link": "to", "merge": "into", "assign": "to"}.get(tool.verb, "for")
                return f"{prep} {self.name(expr.step)}"
            return f"using {self.d.value(expr)} as the {label}"
        return None

    def _literal(self, param: Param, value: Any, has_target: bool) -> str | None:
        label = param_label(param.name)
        semtype = param.semtype
        if isinstance(value, bool):
            return f"with {label} turned on" if value else f"with {label} turned off"
        if param.enum:
            self.stated.append(str(value))
            return f"setting its {label} to {value}" if has_target else f"with {label} {value}"
        if semtype == "datetime" and isinstance(value, str):
            self.stated.append(when(value))
            if "end" in param.name or "max" in param.name:
                return f"ending {when(value)}"
            return f"starting {when(value)}" if "start" in param.name else f"with {label} {when(value)}"
        if semtype == "date":
            self.stated.append(str(value))
            return f"with {label} {value}"
        if semtype == "money" or (isinstance(value, float) and semtype is None):
            self.stated.append(f"{float(value):,.2f}")
            return f"for {money(value, self.currency)}"
        if semtype == "channel_name":
            self.stated.append(str(value))
            return f"in #{value}"
        if isinstance(value, (int, float)):
            self.stated.append(str(value))
            return f"with {label} {value}"
        if isinstance(value, str):
            self.stated.append(value)
            if semtype == "text" or param.name in ("body", "text", "note", "comment", "message", "description", "content"):
                return f"saying \"{value}\""
            if semtype == "subject" or param.name in ("subject", "title", "summary", "name", "topic"):
                return self.rng.choice((f"titled \"{value}\"", f"with the {label} \"{value}\""))
            return f"with {label} \"{value}\""
        return None

    # -- the whole instruction ------------------------------------------------------------------------------

    def instruction(
        self,
        *,
        answer: Ref | None,
        policy: Policy | None,
        distractors: Sequence[Distractor],
    ) -> Instruction:
        parts: list[str] = [self.rng.choice(_DATE_LINES).format(date=long_date(self.now))]
        self.stated.append(long_date(self.now))
        writes = [j for j, s in enumerate(self.specs) if self.catalog.tool(s.service, s.tool).is_write]
        self.stated.append(self.d.anchor.value)
        self.d.tracking, self.d.mentioned = True, set()
        if self.rng.random() < 0.4:
            anchor_text = self.d.entity(0)
            parts.append(self.rng.choice(_CONTEXT_LINES).format(anchor=anchor_text, anchor_cap=_cap(anchor_text)))
        clauses = [self.clause(j) for j in writes]
        question = self.rng.choice(_QUESTIONS).format(value=self.d.value(answer)) if answer is not None else None
        if 0 not in self.d.mentioned:
            anchor_text = self.d.entity(0)
            parts.append(self.rng.choice(_CONTEXT_LINES).format(anchor=anchor_text, anchor_cap=_cap(anchor_text)))
        if clauses:
            if len(clauses) > 2 and self.rng.random() < 0.3:
                parts.append("Please do the following:")
                parts.extend(f"{n}. {_cap(c)}." for n, c in enumerate(clauses, 1))
            else:
                sentences = [_cap(clauses[0]) + "."]
                for n, c in enumerate(clauses[1:], 1):
                    connector = "Finally," if n == len(clauses) - 1 and n > 1 and self.rng.random() < 0.5 else self.rng.choice(_CONNECTORS)
                    sentences.append(f"{connector} {c}.")
                parts.append(" ".join(sentences))
        if question is not None:
            parts.append(question)
        if policy is not None:
            parts.append(self.policy_sentence(policy))
        if distractors and self.rng.random() < 0.5:
            noun = self.d.noun(distractors[0].step)
            parts.append(self.rng.choice(_CAUTIONS).format(noun=noun, nouns=plural(noun)))
        for d in distractors:
            value = d.differs[1]
            self.stated.append(f"{value:,.2f}" if isinstance(value, float) else str(value) if not (isinstance(value, str) and "T" in value[10:11]) else value[:4])
        text = " ".join(p.strip() for p in parts if p.strip())
        return Instruction(text=text, stated=[s for s in self.stated if s])

    def policy_sentence(self, policy: Policy) -> str:
        spec = self.specs[policy.step]
        if policy.kind == "threshold" and policy.source is not None and policy.threshold is not None:
            label = field_label(policy.param)
            source = self.d.value(policy.source)
            self.stated += [str(policy.above), str(policy.otherwise)]
            limit = money(policy.threshold, self.currency)
            return self.rng.choice(
                (
                    f"House rule: if {source} is above {limit}, the {label} must be {policy.above}; otherwise it must be {policy.otherwise}.",
                    f"Our policy: when {source} exceeds {limit}, use {label} {policy.above}, else {policy.otherwise}.",
                )
            )
        noun = self.catalog.tool(spec.service, spec.tool).object_words or "message"
        self.stated.append(str(policy.expected))
        return self.rng.choice(
            (
                f"House rule: end the {param_label(policy.param)} of every {noun} you write with \"{policy.expected}\".",
                f"Remember our sign-off rule: finish the {noun} with \"{policy.expected}\".",
            )
        )

    # -- rubric phrases -------------------------------------------------------------------------------------------

    def step_summary(self, j: int) -> str:
        saved = self.d.tracking, set(self.d.mentioned), list(self.stated)
        self.d.tracking = False
        try:
            return _cap(self.clause(j))
        finally:
            self.d.tracking, self.d.mentioned, self.stated = saved

    def distractor_summary(self, distractor: Distractor) -> str:
        noun = self.d.noun(distractor.step)
        path, value = distractor.differs
        return f"Leaves alone the other {noun} whose {field_label(path)} is not {value}"

    def policy_summary(self, policy: Policy) -> str:
        if policy.kind == "threshold":
            return f"Applies the house rule: {field_label(policy.param)} is {policy.expected}"
        return f"Signs off with \"{policy.expected}\" as the house rule asks"

    def answer_summary(self, ref: Ref) -> str:
        return f"Reports {self.d.value(ref)}"
