"""How an instruction names the things a plan touches, without giving away what the agent must find.

An item is named by how the agent gets to it: the anchor by the stated fact ("Ana Ruiz"), an item
picked from a list by the detail that tells it apart and whose it is ("the ticket 'Login loop' of
Ana Ruiz"), a linked record through its owner ("the company of Ana Ruiz"), a colleague by their role
("the owner of the company of Ana Ruiz"). A looked-up value is named by what it is and where it
lives ("the invoice number of ..."), never by the value itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from composer.catalog import Catalog, ToolInfo
from composer.plan import Ref, StepSpec, field_value, step_refs
from composer.walk import Anchor, StepNote
from composer.words import article, describe_value, entity_noun, field_label, money, role_of, role_word, when

_CREATE_VERBS = frozenset({"create", "add", "send", "post", "open", "schedule", "book", "log", "record", "copy", "reply", "forward"})
_STATE_FIELDS = ("status", "state", "stage")
_MONEY_WORDS = ("amount", "total", "price", "balance", "due", "paid", "fee", "cost", "value")


class Describer:
    def __init__(
        self,
        catalog: Catalog,
        specs: Sequence[StepSpec],
        notes: Sequence[StepNote],
        items: Sequence[Any],
        anchor: Anchor,
        currency: str = "USD",
    ) -> None:
        self.catalog = catalog
        self.specs = specs
        self.notes = notes
        self.items = items
        self.anchor = anchor
        self.currency = currency
        # While ``tracking``, items named once are named briefly afterwards ("that ticket").
        self.tracking = False
        self.mentioned: set[int] = set()

    def tool(self, step: int) -> ToolInfo:
        spec = self.specs[step]
        return self.catalog.tool(spec.service, spec.tool)

    def noun(self, step: int) -> str:
        tool = self.tool(step)
        if tool.entity:
            noun = entity_noun(tool.entity)
            # "contact" lives in the CRM and in accounting: say which.
            if noun in self.catalog.shared_nouns:
                return f"{tool.service} {noun}"
            return noun
        words = tool.object_words or "item"
        for prefix in ("by ", "to ", "from "):
            if words.startswith(prefix):
                words = words[len(prefix):]
        return words[:-1] if words.endswith("s") and not words.endswith("ss") else words

    # -- items -----------------------------------------------------------------------------------------

    def anchor_phrase(self) -> str:
        a = self.anchor
        noun = self.noun(0)
        name = next((v for p, v in self.notes[0].descriptors if p == "__name__"), None)
        if a.semtype in ("person_name", "company_name"):
            base = a.value
        elif a.semtype in ("email_address", "phone_number") and name:
            base = f"{name} ({a.value})"
        elif a.semtype == "email_address":
            base = f"the {noun} with the email address {a.value}"
        elif a.semtype == "phone_number":
            base = f"the {noun} with the phone number {a.value}"
        elif a.semtype == "channel_name":
            base = f"the #{a.value} channel"
        else:
            base = f"the {noun} '{a.value}'"
        tool = self.tool(0)
        for path, value in self.notes[0].descriptors:
            if path in (a.field, "__name__"):
                continue
            f = tool.field_of(path)
            if f is not None and f.semtype == "company_name":
                base += f" at {value}"
            elif f is not None and f.semtype == "city":
                base += f" in {value}"
            else:
                base += f" ({field_label(path)}: {self._value_text(path, value, f.semtype if f else None)})"
        return base

    def short_anchor(self) -> str:
        name = next((v for p, v in self.notes[0].descriptors if p == "__name__"), None)
        if self.anchor.semtype in ("person_name", "company_name"):
            return self.anchor.value
        return str(name) if name else f"that {self.noun(0)}"

    def entity(self, step: int, depth: int = 0) -> str:
        if self.tracking and step in self.mentioned:
            if step == 0:
                return self.short_anchor()
            noun = self.noun(step)
            if not any(self.noun(s) == noun for s in self.mentioned if s != step):
                return f"that {noun}"
        text = self._entity(step, depth)
        if self.tracking:
            self.mentioned.add(step)
        return text

    def _entity(self, step: int, depth: int) -> str:
        if step == 0:
            return self.anchor_phrase()
        tool = self.tool(step)
        note = self.notes[step]
        noun = self.noun(step)
        if tool.is_write:
            return f"the {noun} you {tool.verb}" if tool.verb not in ("create", "add") else f"the new {noun}"
        parent = note.parent

        def owner() -> str | None:
            # Named only when the phrase uses it: naming marks an item as mentioned.
            if note.via_subject:
                return self.entity(0, depth + 1)  # found through the subject's own details
            if parent is not None and depth < 2:
                return self.entity(parent, depth + 1)
            return None

        via = self._via_field(step)
        if note.sphere == "colleague" and via is not None and role_of(via):
            role = role_word(role_of(via))
            who = owner()
            return f"the {role} of {who}" if who else f"that {role}"
        if tool.result_kind == "object":
            if parent is not None and self.tool(parent).entity == tool.entity and tool.entity:
                return self.entity(parent, depth)
            who = owner()
            return f"the {noun} of {who}" if who else f"that {noun}"
        person = next(
            (
                v
                for p, v in note.descriptors
                if tool.field_of(p) and tool.field_of(p).semtype == "person_name" and role_of(p) == ""  # type: ignore[union-attr]
            ),
            None,
        )
        if person is not None:
            phrase = f"{person}, {article(noun)} {noun}"
            rest = [(p, v) for p, v in note.descriptors if v != person]
        else:
            phrase = f"the {noun}"
            rest = list(note.descriptors)
        for path, value in rest:
            phrase += " " + self._descriptor(tool, path, value)
        if parent != step:
            who = owner()
            if who:
                phrase += f" {'linked to' if person is not None else 'of'} {who}"
        return phrase

    def _via_field(self, step: int) -> str | None:
        """The field of the parent item that led to this step (its first looked-up argument)."""
        parent = self.notes[step].parent
        for ref in step_refs(self.specs[step]):
            if ref.step == parent:
                return ref.field
        return None

    def _descriptor(self, tool: ToolInfo, path: str, value: Any) -> str:
        f = tool.field_of(path)
        semtype = f.semtype if f else None
        if f is not None and f.enum:
            if path in _STATE_FIELDS or path.endswith("_status"):
                return f"that is {value}"
            return f"({field_label(path)}: {value})"
        if semtype == "money":
            if path in ("amount", "total", "amount_due", "unit_amount"):
                return f"of {money(value, self.currency)}"
            return f"with {field_label(path)} {money(value, self.currency)}"
        if semtype == "date":
            return f"dated {value}"
        if semtype == "datetime" and isinstance(value, str):
            return f"({field_label(path)} {when(value)})"
        if semtype == "city":
            return f"in {value}"
        if semtype == "channel_name":
            return f"#{value}"
        if semtype in ("company_name", "person_name"):
            return f"for {value}"
        return f"'{value}'"

    def _value_text(self, path: str, value: Any, semtype: str | None) -> str:
        return describe_value(value, semtype, self.currency)

    # -- values ------------------------------------------------------------------------------------------

    def value(self, ref: Ref) -> str:
        """What a looked-up value is: ``"the invoice number of the invoice of Ana Ruiz"``."""
        if ref.field != self.tool(ref.step).key_field:
            ref = self.origin(ref)
        tool = self.tool(ref.step)
        leaf = ref.field.rsplit(".", 1)[-1]
        if ref.field == tool.key_field:
            kind = "number" if leaf.endswith("number") or leaf in ("sid", "number") else "key" if leaf == "key" else "id"
            noun = self.noun(ref.step)
            owner = self.entity(ref.step, 1)
            return f"the {kind} of {owner}" if noun in owner else f"the {noun} {kind} of {owner}"
        label = field_label(ref.field)
        f = tool.field_of(ref.field)
        if f is not None and f.semtype == "money" and not any(w in label for w in _MONEY_WORDS):
            label += " amount"
        return f"the {label} of {self.entity(ref.step, 1)}"

    def origin(self, ref: Ref) -> Ref:
        """The first read that showed this value (a write's echo of an address names nobody new)."""
        value = self.item_value(ref)
        if value is None or not self.tool(ref.step).is_write:
            return ref
        for step in range(ref.step):
            tool = self.tool(step)
            if tool.is_write:
                continue
            for f in tool.fields:
                if not f.is_list and field_value(self.items[step], f.path) == value:
                    return Ref(step, f.path)
        return ref

    def recipient(self, ref: Ref) -> str:
        """A person a value reaches: the item itself (a contact) or someone named by it (its owner)."""
        ref = self.origin(ref)
        role = role_of(ref.field)
        if role and " ".join(str(self.item_value(ref)).lower().split()) in self._identity():
            return self.entity(0)
        if not role:
            return self.entity(ref.step, 1)
        return f"the {role_word(role)} of {self.entity(ref.step, 1)}"

    def _identity(self) -> set[str]:
        values = {" ".join(str(v).lower().split()) for _, v in self.notes[0].descriptors}
        values.add(" ".join(self.anchor.value.lower().split()))
        item = self.items[0] or {}
        tool = self.tool(0)
        for f in tool.fields:
            v = field_value(item, f.path)
            if f.semtype in ("person_name", "email_address", "phone_number") and role_of(f.path) == "" and v:
                values.add(" ".join(str(v).lower().split()))
        return values

    def stated_values(self) -> list[str]:
        """Every value the instruction states to identify things (anchors and descriptors)."""
        values = [self.anchor.value]
        for note in self.notes:
            values += [str(v) for _, v in note.descriptors]
        return values

    def item_value(self, ref: Ref) -> Any:
        return field_value(self.items[ref.step], ref.field)
