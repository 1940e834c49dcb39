"""Checks on what a message says: every message a task requires must state the facts the request or the rule demands.

A step that writes a message (an email, a chat post, a text, a note or comment on a record) states
facts: the ones its workflow declares (``Said``: the decision, the amount, the new time) and every
looked-up value inside the text it writes. Each becomes part of the message row's check, read in any
usual surface form (``mcp_services.tasks.surface``): a fact whose value the world holds is matched by
value; a value of a record the plan itself creates (a discount code the agent chose, the id of the
ticket it opened) is checked through the agent's own record (``CarriedValue``), never through the
reference run's literal. A step may also name what its message must not state (``StepNote.unsaid``: the other
candidates), so that a message listing every candidate fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcp_services.tasks.checks import CarriedValue, Check, RowAbsent, RowExists
from mcp_services.tasks.surface import kind_of, states

from composer.plan import Composed, Lit, Ref, StepSpec, field_value, resolve
from composer.scenario import TEXT_PARAMS, Said, StepNote

#: The text a lazy agent writes in every message: it names the right thread and none of the facts.
EMPTY_TEXT = "Thanks, this is handled."


def text_param(spec: StepSpec) -> str | None:
    """The parameter that carries the text a step writes (a body, a note, a message)."""
    names = [name for name, _ in spec.args]
    for name in TEXT_PARAMS:
        if name in names:
            return name
    return None


def facts_of(spec: StepSpec, note: StepNote) -> list[Said]:
    """The facts a message step must state: declared ones, then the looked-up values in its composed text that the
    step's words ask for (a reply "with the join link" must hold the link; a link the reference's welcome email
    happens to hold is not asked for). With no declared fact, every looked-up value in the text is one."""
    found = list(note.facts)
    param = text_param(spec)
    expr = spec.arg(param) if param else None
    if isinstance(expr, Composed):
        declared = {f.value for f in found}
        nouns = {ref: noun for ref, noun in note.mentions}
        asked = note.say.lower()
        for part in expr.parts:
            if isinstance(part, Ref) and part not in declared:
                noun = nouns.get(part, part.field.replace("_", " "))
                if note.facts and _bare(noun) not in asked:
                    continue
                found.append(Said(noun, part))
                declared.add(part)
    return found


#: The stages whose writes are the work a report tells of (lookups, the trigger and follow-ups are not).
_WORK_STAGES = ("act", "decide")


def reported_acts(notes: Sequence[StepNote], step: int, message: bool) -> list[int]:
    """The steps whose outcome a message step reports: every earlier act of the workflow, when the step is a message of
    the report stage. Its criterion holds their checks too, so "Done: I restored the file" earns nothing while the file
    stays in the trash, and a refused approval reported as approved fails."""
    if not message or notes[step].stage != "report":
        return []
    return [k for k in range(step) if notes[k].stage in _WORK_STAGES]


def guessable(value: Any, words: Sequence[str]) -> bool:
    """Whether an answer is only a normalisation of words the request states (the carrier "USPS" -> code ``usps``;
    "Pro Plan" -> ``pro_plan``): an agent could answer it without looking anything up."""
    if not isinstance(value, str):
        return False
    want = _words(value)
    return bool(want) and any(f" {want} " in f" {_words(text)} " for text in words)


def other_figures(answer: Any, items: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The figures of ``items`` (records a run read) an answer of ``answer``'s kind could state instead: the other amounts
    for an amount, the other whole numbers (counts, quantities, durations) for a count, the other days for a date. An
    answer that states one of them beside the right figure lists figures instead of answering."""
    kind = kind_of(answer)
    if kind not in ("money", "number", "date", "datetime"):
        return []
    found: list[Any] = []
    for item in items:
        for value in item.values():
            other: Any = None
            if kind == "money" and isinstance(value, float) and value > 0 and abs(value - float(answer)) > 0.005:
                other = value
            elif kind == "number" and isinstance(value, int) and not isinstance(value, bool) and value > 0 and value != answer:
                other = value
            elif kind in ("date", "datetime") and kind_of(value) in ("date", "datetime") and str(value)[:10] != str(answer)[:10]:
                other = str(value)[:10]  # the other day at all: a time on it says the same day
            if other is not None and other not in found:
                found.append(other)
    return found


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.casefold()).split())


def _bare(noun: str) -> str:
    """A fact's noun without its article, as a step's words name it ("the meeting link" -> "meeting link")."""
    return noun.lower().removeprefix("the ").removeprefix("a ").removeprefix("an ")


#: Where a message a call does not word itself keeps its text (the body of a draft it sends).
_STORED_TEXT = ("body", "text", "message", "content")


def _text_column(row: Mapping[str, Any], text: str) -> str | None:
    for column, cell in row.items():
        if isinstance(cell, str) and cell.strip() and (cell == text or text.strip() in cell):
            return column
    return None


def content_checks(
    spec: StepSpec,
    note: StepNote,
    arguments: Mapping[str, Any],
    items: Sequence[Mapping[str, Any] | None],
    step_checks: Sequence[RowExists],
    touched: Sequence[tuple[str, Mapping[str, Any]]],
    created: Mapping[tuple[int, str], tuple[RowExists, str]],
    services: Sequence[str] = (),
) -> tuple[list[RowExists], list[Check], list[str]]:
    """The step's row checks with its facts demanded in the message text, the carried-value checks, and problems.

    ``touched``: (table, row) the step added or changed, as they are at the end of the run; ``created``: (step,
    field) -> the row check of the record an earlier write created (its values are the agent's own); ``services``: the
    service of each step (a record's other forms are told apart among the same service's records). A problem is
    a declared fact the reference's own text does not state, or a message the run stored nowhere.
    """
    facts = facts_of(spec, note)
    param = text_param(spec)
    text = arguments.get(param) if param else None
    if param is None and facts:  # a message whose text the call does not pass (a draft sent): the text it stored
        text = next((row[c] for _, row in touched for c in _STORED_TEXT if isinstance(row.get(c), str) and row[c].strip()), None)
    rows = list(step_checks)
    if not facts or not isinstance(text, str):
        return rows, [], []
    where = next(((table, column) for table, row in touched if (column := _text_column(row, text))), None)
    if where is None:
        return rows, [], [f"{spec.service}.{spec.tool} stored its text in no row"]
    table, column = where
    n = next((i for i, c in enumerate(rows) if c.table == table), None)
    if n is None:
        rows.append(RowExists(id=f"{spec.service}-{table.replace('_', '-')}-message", service=spec.service, table=table,
                              change="added_or_changed", match={}))
        n = len(rows) - 1
    check = rows[n]
    literal: list[dict[str, Any]] = []
    carried: list[Check] = []
    problems: list[str] = []
    for fact in facts:
        value = _value(fact, items)
        if value is None:
            continue
        kind = fact.kind or kind_of(value)
        origin = created.get((fact.value.step, fact.value.field)) if isinstance(fact.value, Ref) else None
        if origin is not None and isinstance(fact.value, Ref):
            source, source_column = origin
            carried.append(
                CarriedValue(
                    id=f"{check.id}-states-{fact.value.field.replace('_', '-')}",
                    description=f"The message states {fact.noun}, from the record the plan created",
                    source_service=source.service, source_table=source.table, source_match=dict(source.match),
                    source_column=source_column, service=check.service, table=check.table,
                    match={c: w for c, w in check.match.items() if c != column}, column=column,
                )
            )
        elif states(text, kind, value):
            forms = identifying_forms(fact, items, services) if kind == "text" else []
            literal.append({"kind": kind, "value": value, **({"forms": forms} if forms else {})})
        else:
            problems.append(f"{spec.service}.{spec.tool}: the text does not state {fact.noun} ({value!r}): {text[:120]!r}")
    match = {c: w for c, w in check.match.items() if c != column}
    if literal:
        match[column] = {"$states": literal}
    rows[n] = check.model_copy(update={"match": match})
    if literal or carried:  # a message that states its facts must not also state the other candidates
        carried += _unsaid_checks(note, items, check, column)
    return rows, carried, problems


#: Fields that name a record: its id, number, key or reference, title or label.
_NAMING = re.compile(r"^(?:id|key|code|number|reference|ref|title|name|subject|label|display_name|"
                     r"(?!phone|po_|tax|fax|vat|routing|account|bank)[a-z]+_number)$")
#: Fields that say whose a record is: the person or company it belongs to.
_OWNER = re.compile(r"^(?:customer|company|client|contact|requester|recipient|account|caller|from|vendor|payee)_?name$")


def identifying_forms(fact: Said, items: Sequence[Mapping[str, Any] | None], services: Sequence[str]) -> list[str]:
    """The other forms that name the record a fact names (a Ref to its id, number or title): its other identifying
    fields, and the person or company it belongs to where no other record of its service that the task touches
    belongs to them too. A message naming the record by any of them names it."""
    ref = fact.value
    if fact.exact or not isinstance(ref, Ref) or ref.step >= len(items) or not _NAMING.match(ref.field):
        return []
    record = items[ref.step]
    if not isinstance(record, Mapping):
        return []
    own = field_value(record, ref.field)
    others = [item for k, item in enumerate(items) if isinstance(item, Mapping) and k < len(services) and ref.step < len(services)
              and services[k] == services[ref.step] and item.get("id") != record.get("id")]
    forms: list[str] = []
    for name, cell in record.items():
        if not isinstance(cell, str) or len(cell.strip()) < 3 or cell == own or name == ref.field or "@" in cell:
            continue
        naming = bool(_NAMING.match(name))
        owner = bool(_OWNER.match(name))
        if not (naming or owner):
            continue
        if owner and any(cell in (v for v in item.values() if isinstance(v, str)) for item in others):
            continue  # they own another record the task touches: their name alone does not pick this one out
        if cell not in forms:
            forms.append(cell)
    return forms


def _unsaid_checks(note: StepNote, items: Sequence[Mapping[str, Any] | None], check: RowExists, column: str) -> list[Check]:
    found: list[Check] = []
    for n, fact in enumerate(note.unsaid, 1):
        value = _value(fact, items)
        if value is None:
            continue
        found.append(RowAbsent(
            id=f"{check.id}-not-{n}", description=f"The message does not also state {fact.noun}", service=check.service,
            table=check.table, match={column: {"$states": [{"kind": fact.kind or kind_of(value), "value": value}]}},
        ))
    return found


def _value(fact: Said, items: Sequence[Mapping[str, Any] | None]) -> Any:
    expr = fact.value
    if isinstance(expr, Ref):
        value = field_value(items[expr.step], expr.field) if expr.step < len(items) else None
    elif isinstance(expr, Lit):
        value = expr.value
    else:
        try:
            value = resolve(expr, items)
        except LookupError:
            return None
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


__all__ = ["EMPTY_TEXT", "content_checks", "facts_of", "guessable", "identifying_forms", "other_figures", "reported_acts", "text_param"]
