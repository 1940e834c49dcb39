"""How values read in what people write: whether a text states an amount, a date, a time, an id or a decision.

A grade that checks a message's content must accept every usual way of writing a fact: 2,774.00,
$2,774 and 2774 are one amount; 13 October, Oct 13 and 2025-10-13 are one date; 14:00, 2pm and
2:00 PM are one time. A decision is read both ways: a denial must say so, and must not also say the
request is approved ("not approved" is a denial, not an approval).

``states(text, kind, value)`` is the one entry point; ``FACT_KINDS`` lists the kinds it reads.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

FactKind = Literal["text", "money", "number", "date", "datetime", "time", "decision", "premise"]
FACT_KINDS: tuple[FactKind, ...] = ("text", "money", "number", "date", "datetime", "time", "decision", "premise")

__all__ = ["FACT_KINDS", "FactKind", "counts_in", "kind_of", "numbers_in", "own_words", "states"]

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")

# A number as people write it: 2,774.00 / 2774 / $2,774 / 2 774,00 is not read (one convention, the world's).
# Digits inside an id (INV-2774, #1027, re_0007) are not an amount.
_NUMBER = re.compile(
    r"(?<![\w.,#/-])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w-])|(?<![\w.,#/-])-?\d+(?:\.\d+)?(?![\w-])"
)


def kind_of(value: Any) -> FactKind:
    """How a value is read in a text when nothing says otherwise: an amount, a date, a time, or an id or name as written."""
    if isinstance(value, bool):
        return "text"
    if isinstance(value, float):
        return "money"
    if isinstance(value, int):
        return "number"
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", value):
        return "datetime"
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}$", value):
        return "date"
    return "text"


def numbers_in(text: str) -> list[float]:
    """Every number the text states (thousands separators and currency signs allowed around it)."""
    found: list[float] = []
    for match in _NUMBER.finditer(text.replace("\u00a0", " ")):
        raw = match.group(0).replace(",", "")
        try:
            found.append(float(raw))
        except ValueError:  # pragma: no cover - the pattern only matches numbers
            continue
    return found


#: Numbers people write out in words ("three open tickets", "twenty-one days"): read as a count, never as an amount.
_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_WORD_NUMBER = re.compile(rf"\b(?:({'|'.join(_TENS)})(?:[\s-]+({'|'.join(_UNITS[1:10])}))?|({'|'.join(_UNITS)}))\b")
#: Where a digit belongs to a date or a clock time ("12 May", "May 12", "14:00"), not to a count.
_MONTH = rf"(?:{'|'.join(_MONTHS)}|{'|'.join(m[:3] for m in _MONTHS)}|sept)\b\.?"
_DATE_PART = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTH}(?:,?\s+\d{{4}})?"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?"
    r"|\b\d{1,2}[:.h]\d{2}\b|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)(?![a-z])|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",
    re.IGNORECASE,
)


def counts_in(text: str) -> list[float]:
    """Every count or whole number the text states, in digits or in words ("3", "three", "twenty-one"), leaving out the
    digits of a date or a time ("12 May", "14:00" state no count of 12 or 14)."""
    bare = _DATE_PART.sub(" ", text.replace("\u00a0", " "))
    found = numbers_in(bare)
    for match in _WORD_NUMBER.finditer(bare.lower()):
        tens, unit, alone = match.groups()
        found.append(float(_UNITS.index(alone)) if alone else float(20 + 10 * _TENS.index(tens) + (_UNITS.index(unit) if unit else 0)))
    return found


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


#: One spelling for words that British and American English spell apart (cancelled / canceled).
_SPELLINGS = re.compile(r"\b(cancel|label|model|travel|signal|level|total)l(ed|ing)\b")
#: A waitlist is also a "waiting list" or a "wait list", and someone on it is "waitlisted".
_WAITLIST = re.compile(r"\bwait(?:ing)?[- ]?list(?:ed)?\b")


def _spelled(text: str) -> str:
    return _WAITLIST.sub("waitlist", _SPELLINGS.sub(r"\1\2", _norm(text)))


def _has_token(text: str, needle: str) -> bool:
    """``needle`` stands in ``text`` on its own: not as part of a longer id or word (INV-1027 is not in INV-10270),
    and, for an outcome, not negated in its clause ("we will not move you on to the phone screen" does not say the
    phone screen; "no longer pending" does not say pending); case, quotes and punctuation aside ("Q3 plan" is 'q3-plan'),
    either spelling of cancel(l)ed."""
    words = _plain(needle).split()
    if not words:
        return False
    pattern = re.compile(r"(?<![a-z0-9])" + r"[^a-z0-9]+".join(map(re.escape, words)) + r"(?![a-z0-9])")
    norm = _spelled(text).replace("\u2019", "'")
    flat = norm.replace("n't", "nt").replace("'", " ")  # won't -> wont, Wendy's -> wendy s: as _plain reads the needle
    # A negation unsays an outcome (a state, a next step: a few lower-case words), never a name or a number ("we will
    # not text +1 768 555 1729 again" states the number; "no receipt for the United Airlines flight" states the merchant).
    outcome = len(words) <= 3 and needle == needle.lower() and not any(ch.isdigit() for ch in needle)
    for match in pattern.finditer(flat):
        if not outcome or not _negated(_CLAUSE_END.split(flat[: match.start()])[-1]):
            return True
    return False


#: Where a clause ends: a stop, a comma or a colon before a space (not inside 2,774.00 or INV.1027), or "but".
_CLAUSE_END = re.compile(r"[.;:!?,\n]+(?=\s|$)|\s(?:but|however|although)\s")
#: A negation that governs the words after it in its clause (up to six of them: "will not move you on to the").
_NEGATED = re.compile(
    r"\b(?:not|never|no|none|nor|cannot|unable|cant|wont|isnt|wasnt|dont|didnt|doesnt|arent|werent|couldnt|wouldnt|"
    r"shouldnt|havent|hasnt|hadnt|neither)\b(?:\s+\w+){0,6}\s*$"
)


def _clauses(text: str) -> list[str]:
    return _CLAUSE_END.split(_spelled(text).replace("\u2019", "'"))


def _plain(text: str) -> str:
    """Words only: lower case, won't -> wont, other punctuation and quotes (a possessive's too) as spaces."""
    text = _spelled(text).replace("\u2019", "'").replace("n't", "nt")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def _negated(before: str) -> bool:
    """Whether the words just before a phrase in its clause negate it."""
    return bool(_NEGATED.search(_plain(before)))


def _date_of(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}", value):
        return date.fromisoformat(value[:10])
    return None


def _states_date(text: str, day: date) -> bool:
    norm = _norm(text)
    if day.isoformat() in norm:
        return True
    month = _MONTHS[day.month - 1]
    months = rf"(?:{month}|{month[:3]}\.?{'|sept' if day.month == 9 else ''})"
    number = rf"0?{day.day}(?:st|nd|rd|th)?"
    if re.search(rf"(?<![\d]){number}(?:\s+of)?\s+{months}(?![a-z])", norm):
        return True
    if re.search(rf"(?<![a-z]){months}\s+{number}(?![\d])", norm):
        return True
    # Numeric day/month, either order, with the year: 13/10/2025, 10/13/2025, 13.10.2025.
    for first, second in ((day.day, day.month), (day.month, day.day)):
        if re.search(rf"(?<!\d)0?{first}[/.]0?{second}[/.](?:{day.year}|{day.year % 100:02d})(?!\d)", norm):
            return True
    return False


def _time_forms(hour: int, minute: int) -> list[str]:
    """Patterns for one clock time: 14:00, 14.00, 14h00, 2pm, 2 p.m., 2:00 PM (minutes optional when on the hour)."""
    twelve = hour % 12 or 12
    suffix = r"\s*(?:pm|p\.m\.)" if hour >= 12 else r"\s*(?:am|a\.m\.)"
    forms = [rf"(?<!\d)0?{hour}[:.h]{minute:02d}(?!\d)"]
    if minute == 0:
        forms.append(rf"(?<!\d){twelve}(?::00)?{suffix}")
        if hour == 12:
            forms.append(r"\bnoon\b")
    else:
        forms.append(rf"(?<!\d){twelve}:{minute:02d}{suffix}")
    return forms


def _states_time(text: str, hour: int, minute: int) -> bool:
    norm = _norm(text)
    return any(re.search(form, norm) for form in _time_forms(hour, minute))


# "Approval" alone is no claim ("it needs approval"): an approval is said in the past or as a grant.
_APPROVE = re.compile(
    r"\b(?:approved|(?:i|we|can|could|will|'ll|happy to|able to) approve|granted|accepted|confirmed|go ahead|signed off)\b"
)
_PENDING = re.compile(
    r"\b(?:under review|pending|awaiting|waiting (?:for|on)|needs? (?:an? )?(?:approval|sign-off|review)|for (?:\w+ )?approval|"
    r"passed (?:it |this )?(?:on|along)|escalated|being reviewed|(?:will|'ll|to) (?:review|decide)|reviewing|with (?:\w+ ){1,4}for (?:review|approval))\b"
)
_DENY = re.compile(
    r"\b(?:den(?:y|ied|ial)|declin(?:e|ed)|reject(?:ed)?|turn(?:ed)? down|refus(?:e|ed)|unable to approve|"
    r"(?:can ?not|can't|cannot|won't|will not|couldn't|could not|not able to|not be able to) (?:approve|grant|accept|agree)|"
    r"(?:not|n't) (?:be |been )?(?:approved|granted|accepted)|(?:sent|send|sending|returned|handed)(?: \S+){0,4}? back)\b"
)


def _claims(text: str, pattern: re.Pattern[str]) -> bool:
    """Whether the text states ``pattern`` without a negation just before it ("not approved" claims no approval)."""
    for clause in _clauses(text):
        if any(not _negated(clause[: match.start()]) for match in pattern.finditer(clause)):
            return True
    return False


#: Why the asker's premise is false, in the usual ways of saying it: the work was done before they asked
#: ("already", "was reimbursed on 16 January", "has been opted out since"), or what they say they sent is not there.
_PREMISES: dict[str, re.Pattern[str]] = {
    # Not the words of work done now: "since you asked, I paid it", "I paid it earlier today", "as of today you're paid".
    "already": re.compile(r"\b(already|previously|earlier(?! today| this (morning|afternoon|evening))|before you (asked|wrote)|"
                          r"back on|since(?! you (asked|wrote|emailed|requested|mentioned))|as of(?! (today|now|right now))|"
                          r"existing (candidate|profile|record|contact|entry)|(was|were|has been|have been|had been) \w+ed on)\b",
                          re.IGNORECASE),
    "not attached": re.compile(r"\b(not attached|(was|wasn't|isn't|is) not (attached|included)|(wasn't|isn't) "
                               r"(attached|included)|no (attachment|receipt)|nothing (was )?attached|without (the|a|any) "
                               r"(receipt|attachment)|did ?n[o']t (come through|include|attach)|missing)\b", re.IGNORECASE),
    # What they ask to take off is not on it: "Ben isn't in the channel", "was never added", "no longer a watcher".
    "not there": re.compile(r"(\b(already (off|removed|gone|taken off)|no longer|never (been )?(on|in|added|invited|tagged|there))|"
                            r"(\bnot|n't|\bnever) (\w+ ){0,2}(on|in|a member|member|among|part of|listed|there|attending|"
                            r"an? (attendee|watcher|recipient|participant|guest)|tagged|labell?ed|have|has|carry|carries))\b",
                            re.IGNORECASE),
    # The work was held back, in the agent's own words (the reason it gives may be negative itself: "X says the problem
    # has not come back"): "I left it as it is", "I haven't approved it", "we held off", "nothing changed".
    "not done": re.compile(r"\b((I|we)( have| had| did| do| am| will| would|'ve|'d|'m|'ll)?( not|n't| never)\b|"
                           r"(I|we) (won't|didn't|haven't|hadn't|don't)|left (\S+ ){0,8}as (it|they) (is|are|was|were|stands?)|"
                           r"held (\S+ )?off|hold(ing)? off|on hold|nothing (was |has been )?(changed|done)|no changes?\b|unchanged)",
                           re.IGNORECASE),
    # The record is not ours to change: "I only have view access", "read-only for me", "I can't edit it", "ask its owner".
    "no access": re.compile(r"(\b(view[- ]only|read[- ]only|only (an? )?(reader|viewer)|only (have |has |got )?(view|read|viewing|reading)|"
                            r"no (edit|write|editing) (access|rights|permission)|permission|access denied|"
                            r"(can ?not|cannot|couldn't|could not|unable to|not able to|not allowed to|not permitted to) (\w+ )?"
                            r"(edit|change|update|modify|add|share|delete|remove|make)|(its|the) owner)|"
                            r"(can't|don't|doesn't|didn't|isn't|aren't) (\w+ ){0,2}(edit|change|update|modify|add to|share|delete|"
                            r"remove|write|editor|writer))\b", re.IGNORECASE),
}


def _states_premise(text: str, premise: str) -> bool:
    """Whether the text says why the asker's premise is false (see ``_PREMISES``)."""
    pattern = _PREMISES.get(premise)
    if pattern is None:
        raise ValueError(f"a premise is one of {', '.join(sorted(_PREMISES))}, not {premise!r}")
    return pattern.search(text) is not None


def _states_decision(text: str, decision: str) -> bool:
    """A decision stated one way and not the others: "approve", "deny", or "pending" (passed on for someone to decide)."""
    approves, denies = _claims(text, _APPROVE), _claims(text, _DENY)
    if decision == "approve":
        return approves and not denies
    if decision == "deny":
        return denies and not approves
    if decision == "pending":
        return _claims(text, _PENDING) and not approves and not denies
    raise ValueError(f"a decision is 'approve', 'deny' or 'pending', not {decision!r}")


_QUOTE_HEADER = re.compile(r"^\s*On .{4,200} wrote:\s*$")


_FORWARDED = re.compile(r"^-{3,}\s*Forwarded message\s*-{3,}", re.IGNORECASE | re.MULTILINE)


#: The line an email reply puts above the message it quotes ("On 2025-03-13T10:58:48Z, Ana Ruiz <ana@x> wrote:").


def own_words(text: str) -> str:
    """What a text says itself: without the earlier message a reply quotes (its ``>`` lines and the line above them)
    and without what a forward forwards (from its "---------- Forwarded message ---------" line on), so a fact the
    customer wrote is not taken for the answer stating it."""
    forwarded = _FORWARDED.search(text)
    if forwarded is not None:
        text = text[: forwarded.start()]
    lines = text.splitlines()
    kept = [line for n, line in enumerate(lines)
            if not line.lstrip().startswith(">")
            and not (_QUOTE_HEADER.match(line) and any(later.lstrip().startswith(">") for later in lines[n + 1:]))]
    return "\n".join(kept)


def states(text: str | None, kind: FactKind, value: Any) -> bool:
    """Whether ``text`` states ``value`` read as ``kind`` (see the module docstring), in its own words (``own_words``)."""
    if not isinstance(text, str) or not text.strip():
        return False
    text = own_words(text)
    if not text.strip():
        return False
    if kind == "text":
        return _has_token(text, str(value))
    if kind in ("money", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return any(abs(n - float(value)) <= 0.005 for n in (numbers_in(text) if kind == "money" else counts_in(text)))
    if kind == "date":
        day = _date_of(value)
        return day is not None and _states_date(text, day)
    if kind in ("datetime", "time"):
        if not isinstance(value, str) or not re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", value):
            return False
        hour, minute = int(value[11:13]), int(value[14:16])
        day = _date_of(value)
        on_day = kind == "time" or (day is not None and _states_date(text, day))
        return on_day and _states_time(text, hour, minute)
    if kind == "decision":
        return _states_decision(text, str(value))
    if kind == "premise":
        return _states_premise(text, str(value))
    raise ValueError(f"unknown fact kind {kind!r}; known: {', '.join(FACT_KINDS)}")
