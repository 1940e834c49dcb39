"""Gmail's search box language (support.google.com/mail/answer/7190) as conditions of the shared ``Query``.

Terms are joined by AND when side by side; ``OR`` or ``{a b}`` gives alternatives, ``-term`` leaves rows out,
``( )`` groups, ``"..."`` is an exact phrase, ``operator:value`` narrows a field: ``from:amy`` ``subject:(dinner
movie)`` ``is:unread`` ``label:work`` ``has:attachment`` ``after:2024/04/16`` ``newer_than:2d``...
"""

from __future__ import annotations

import re

from generator.query.ast import And, Cond, Node, Not, Or, Query, QueryError

#: Header operators: the text of that header (or the column named so) holds the words.
HEADERS = ("from", "to", "cc", "bcc", "subject", "deliveredto", "list", "filename", "rfc822msgid")
#: ``is:`` / ``in:`` values that are system labels.
LABELS = {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT", "inbox": "INBOX", "sent": "SENT",
          "draft": "DRAFT", "drafts": "DRAFT", "spam": "SPAM", "trash": "TRASH", "chats": "CHAT", "snoozed": "SNOOZED"}
CATEGORIES = {"primary": "CATEGORY_PERSONAL", "social": "CATEGORY_SOCIAL", "promotions": "CATEGORY_PROMOTIONS",
              "updates": "CATEGORY_UPDATES", "forums": "CATEGORY_FORUMS", "reservations": "CATEGORY_RESERVATIONS",
              "purchases": "CATEGORY_PURCHASES"}
OPERATORS = (*HEADERS, "label", "category", "is", "in", "has", "after", "before", "older", "newer", "older_than",
             "newer_than", "larger", "smaller", "size")
SUPPORTED = ("words, \"exact phrases\", -term, AND, OR, {a b}, ( ), and " + ", ".join(f"{o}:" for o in OPERATORS)
             + " (is: " + ", ".join(["read", *LABELS]) + "; has:attachment)")
_TOKEN = re.compile(r'\s*(?:(?P<open>-?\(|-?\{)|(?P<close>[)}])|(?P<term>-?(?:[A-Za-z_]+:)?(?:"[^"]*"|\([^)]*\)|\{[^}]*\}|[^\s(){}"]+)|-?"[^"]*"))')
_UNITS = {"d": "d", "m": "m", "y": "y"}


def _error(part: str, problem: str) -> QueryError:
    return QueryError("Gmail search", part, problem, SUPPORTED)


def _size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmM]?)", text)
    if m is None:
        raise _error(text, "a size is a number of bytes, or one with K or M")
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]


def _date(text: str) -> str:
    m = re.fullmatch(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})", text)
    if m is not None:
        return f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"
    if text.isdigit():
        return text  # seconds since the epoch
    raise _error(text, "a date is YYYY/MM/DD or seconds since the epoch")


def _words(field: str, op: str, text: str) -> Node:
    """``subject:(a b)`` every word; ``subject:{a b}`` any word; ``subject:"a b"`` the phrase; else one word."""
    if text.startswith("(") and text.endswith(")"):
        parts = text[1:-1].split()
        return And(tuple(Cond(field, op, w) for w in parts)) if len(parts) > 1 else Cond(field, op, text[1:-1].strip())
    if text.startswith("{") and text.endswith("}"):
        return Or(tuple(Cond(field, op, w) for w in text[1:-1].split()))
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        return Cond(field, "phrase", text[1:-1])
    return Cond(field, op, text)


def _operator(name: str, value: str, raw: str) -> Node | None:
    """One ``name:value`` term as a condition (None: it selects every row, ``in:anywhere``)."""
    low = value.lower().strip('"')
    if name in HEADERS:
        return _words(name, "contains", value)
    if name == "label":
        return Cond("labelIds", "has", value.strip('"'))
    if name == "category":
        if low not in CATEGORIES:
            raise _error(raw, f"unknown category (one of {', '.join(CATEGORIES)})")
        return Cond("labelIds", "has", CATEGORIES[low])
    if name in ("is", "in"):
        if name == "in" and low == "anywhere":
            return None
        if low == "read":
            return Not(Cond("labelIds", "has", "UNREAD"))
        if low not in LABELS:
            raise _error(raw, f"unknown {name}: value")
        return Cond("labelIds", "has", LABELS[low])
    if name == "has":
        if low != "attachment":
            raise _error(raw, "only has:attachment is supported")
        return Cond("attachment", "not empty")
    if name in ("after", "newer", "before", "older"):
        return Cond("date", ">=" if name in ("after", "newer") else "<", _date(low))
    if name in ("older_than", "newer_than"):
        m = re.fullmatch(r"(\d+)([dmy])", low)
        if m is None:
            raise _error(raw, "a relative age is a number with d, m or y (newer_than:2d)")
        return Cond("date", "<" if name == "older_than" else ">=", f"-{m.group(1)}{_UNITS[m.group(2)]}")
    if name in ("larger", "size"):
        return Cond("sizeEstimate", ">=" if name == "larger" else "=", _size(low))
    if name == "smaller":
        return Cond("sizeEstimate", "<", _size(low))
    raise _error(raw, f"unknown operator {name}:")


def _term(raw: str) -> Node | None:
    negated = raw.startswith("-") and len(raw) > 1
    text = raw[1:] if negated else raw
    m = re.fullmatch(r"([A-Za-z_]+):(.+)", text, flags=re.S)
    if m is not None:
        name = m.group(1).lower()
        if name not in OPERATORS:
            raise _error(raw, f"unknown operator {name}:")
        node = _operator(name, m.group(2), raw)
    elif text.startswith("+"):
        node = Cond("text", "phrase", text[1:])  # +word: exactly that word
    else:
        node = _words("text", "contains", text)
    if node is None:
        return None
    return Not(node) if negated else node


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks: list[tuple[str, str]] = []
        at = 0
        text = text.rstrip()
        while at < len(text):
            m = _TOKEN.match(text, at)
            if m is None or m.end() == at:
                raise _error(text[at:].strip()[:40], "unreadable text (an unclosed quote or bracket?)")
            kind = m.lastgroup or "term"
            self.toks.append((kind, m.group(kind)))
            at = m.end()
        self.i = 0

    def group(self, closer: str | None) -> Node | None:
        """Terms up to ``closer`` (None: the end): side by side they all hold; ``a OR b`` binds the terms beside it."""
        parts: list[Node] = []
        alternative = False
        while self.i < len(self.toks):
            kind, text = self.toks[self.i]
            if kind == "close":
                if closer is None or text != closer:
                    raise _error(text, "a bracket closes that was never opened")
                self.i += 1
                break
            self.i += 1
            if kind == "term" and text == "AND":
                continue  # ``from:amy AND to:david``: the same as side by side
            if kind == "term" and text == "OR":
                if not parts or alternative:
                    raise _error("OR", "OR needs a term on each side")
                alternative = True
                continue
            if kind == "open":
                inner = self.group(")") if text.endswith("(") else self.any_of()
                node = None if inner is None else (Not(inner) if text.startswith("-") else inner)
            else:
                node = _term(text)
            if node is None:
                continue
            if alternative:
                before = parts.pop()
                parts.append(Or((*(before.parts if isinstance(before, Or) else (before,)), node)))
                alternative = False
            else:
                parts.append(node)
        else:
            if closer is not None:
                raise _error(self.text[-40:], f"a bracket is never closed with {closer!r}")
        if alternative:
            raise _error("OR", "OR needs a term on each side")
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def any_of(self) -> Node | None:
        """``{a b c}``: any of the terms."""
        parts: list[Node] = []
        while self.i < len(self.toks):
            kind, text = self.toks[self.i]
            self.i += 1
            if kind == "close":
                if text != "}":
                    raise _error(text, "'{' is closed by ')'")
                break
            node = _term(text) if kind == "term" else self.group(")") if text.endswith("(") else self.any_of()
            if node is not None:
                parts.append(Not(node) if kind == "open" and text.startswith("-") else node)
        return None if not parts else parts[0] if len(parts) == 1 else Or(tuple(parts))


def parse_gmail(text: str) -> Query:
    """A Gmail search as a ``Query`` (no order: Gmail lists newest first)."""
    return Query(_Parser(text).group(None), (("date", True),))
