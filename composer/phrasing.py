"""The request, as a person writes it to a colleague: ``guided`` (the steps in plain words) or ``goal``.

Both start from how the work came up (the scenario's intro: "Ana Ruiz emailed this morning about a
double charge.") and end with the constraints (policies to follow, records to leave alone). A
``guided`` request then walks through the steps the archetype said; a ``goal`` request states the
outcome and leaves the planning to the agent. Openings and connectors vary with the task's random
stream, so a task set does not read as one sentence with blanks. The request states today's date only
when it leans on it (a bare weekday, "today", "tomorrow", "next week"): a colleague says the date when
it matters, not out of habit.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from datetime import datetime

from composer.scenario import Brief, Phrasing, StepNote

def long_date(iso: str) -> str:
    """``"2025-01-14T09:30:00Z"`` -> ``"Tuesday 14 January 2025"``."""
    moment = datetime.strptime(iso[:10], "%Y-%m-%d")
    return f"{moment.strftime('%A')} {moment.day} {moment.strftime('%B %Y')}"


_DATE_LINES = ("It is {date}.", "Today is {date}.", "(Today: {date}.)")
_WEEKDAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
#: Words whose meaning depends on today's date: a weekday without its day of the month ("on Friday"),
#: or a day or week named relative to today. "This morning" and "an hour ago" date the trigger, not a task.
_NEEDS_TODAY = re.compile(
    rf"\b(?:(?:{_WEEKDAYS})\b(?! \d)|(?<!earlier )today\b|tomorrow\b|yesterday\b|(?:this|next|last) (?:week|month)\b|weekend\b)",
    re.IGNORECASE,
)
_LIST_OPENERS = ("Could you:", "Please:", "Steps:")
_FIRST = ("", "First, ", "Start by ", "Please ")
_THEN = ("Then ", "After that, ", "Next, ")
_LAST = ("Finally, ", "Last, ", "Then ")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!", ":")) else text + "."


#: Verbs of two syllables stressed on the last, which double their consonant too (submit -> submitting).
_STRESSED_LAST = frozenset({"submit", "admit", "commit", "omit", "permit", "refer", "prefer", "transfer", "forget",
                            "regret", "begin", "unpin", "reset", "upset", "occur", "compel"})


def spoken_field(name: str) -> str:
    """A field or parameter as people say it: "due_date" -> "due date", "GeoMatchLevel" -> "geo match level"; an
    acronym stays as it is ("SKU")."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_", " ", name).split()
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)


def gerund(verb: str) -> str:
    """The -ing form: get -> getting, ship -> shipping, submit -> submitting, share -> sharing, open -> opening."""
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    one_syllable = len(re.findall(r"[aeiou]+", verb)) == 1
    ends_cvc = len(verb) >= 3 and verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou" and verb[-3] not in "aeiou"
    if ends_cvc and (one_syllable or verb in _STRESSED_LAST):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _start(opener: str, clause: str) -> str:
    if opener == "Start by ":
        words = clause.split(" ", 1)
        return f"Start by {gerund(words[0])} {words[1] if len(words) > 1 else ''}".strip()
    return f"{opener}{clause}" if opener else _cap(clause)


#: A manager hands over at most this many steps; more would be the agent's own plan, spelled out.
MAX_GUIDED_STEPS = 4


def manager_steps(clauses: Sequence[str]) -> list[str]:
    """At most ``MAX_GUIDED_STEPS`` clauses, the same clause never twice: the last ones joined with "and"."""
    unique: list[str] = []
    for clause in clauses:
        if clause.strip() and clause not in unique:
            unique.append(clause)
    if len(unique) <= MAX_GUIDED_STEPS:
        return unique
    head, tail = unique[: MAX_GUIDED_STEPS - 1], unique[MAX_GUIDED_STEPS - 1 :]
    return [*head, ", ".join(tail[:-1]) + " and " + tail[-1]]


def steps_text(clauses: Sequence[str], rng: random.Random) -> str:
    """The steps as prose or, for longer plans now and then, as a numbered list."""
    clauses = [c.strip().rstrip(".") for c in clauses if c.strip()]
    if not clauses:
        return ""
    if len(clauses) >= 4 and rng.random() < 0.3:
        lines = [rng.choice(_LIST_OPENERS)]
        lines += [f"{n}. {_cap(c)}." for n, c in enumerate(clauses, 1)]
        return "\n".join(lines)
    if len(clauses) == 1:
        return _sentence(_cap(clauses[0]))
    if len(clauses) == 2:
        return _sentence(f"{_cap(clauses[0])}, then {clauses[1]}") if rng.random() < 0.5 else " ".join(
            [_sentence(_start(rng.choice(_FIRST), clauses[0])), _sentence(rng.choice(_THEN) + clauses[1])]
        )
    sentences = [_sentence(_start(rng.choice(_FIRST), clauses[0]))]
    previous = ""
    for n, clause in enumerate(clauses[1:], 2):
        # Never the same connector twice in a row ("Then ... Then ..." reads like a generated chain).
        previous = rng.choice([c for c in (_LAST if n == len(clauses) else _THEN) if c != previous])
        sentences.append(_sentence(previous + clause))
    return " ".join(sentences)


def instruction(
    brief: Brief, notes: Sequence[StepNote], phrasing: Phrasing, rng: random.Random, *, now: str,
    question: str | None = None,
) -> str:
    """The whole request."""
    parts: list[str] = []
    if brief.intro:
        parts.append(_sentence(brief.intro))
    if phrasing == "guided":
        clauses = [n.say for n in notes if n.needed and n.guided and n.say]
        if question:
            clauses.append(f"tell me {question}")
        parts.append(steps_text(manager_steps(clauses), rng))
    else:
        parts.append(_sentence(brief.goal))
        if brief.also:
            parts.append(_sentence(rng.choice(_ALSO) + _listed(brief.also)))
    parts += [_sentence(c) for c in brief.constraints]
    if brief.needs_date or any(_NEEDS_TODAY.search(part) for part in parts):
        parts.insert(0, rng.choice(_DATE_LINES).format(date=long_date(now)))
    return _join(parts)


_ALSO = ("Also, ", "While you're at it, ", "And please ", "Then ")


def _listed(clauses: Sequence[str]) -> str:
    if len(clauses) == 1:
        return clauses[0]
    return ", ".join(clauses[:-1]) + " and " + clauses[-1]


def _join(parts: Sequence[str]) -> str:
    """Sentences joined by spaces; a numbered list keeps its own lines."""
    out, after_list = "", False
    for part in parts:
        if not part:
            continue
        is_list = "\n" in part
        out = part if not out else out + ("\n" if is_list or after_list else " ") + part
        after_list = is_list or after_list
    return out
