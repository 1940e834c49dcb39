"""The shared parser of infix query languages: ``field op value`` joined by and / or / not and parentheses,
optionally ``order by``. Drive's ``q`` and JQL are both this grammar; a ``Syntax`` says what each allows.

    query  := [expr] [ORDER BY field [ASC|DESC] {, field [ASC|DESC]}]
    expr   := conj {OR conj} ;  conj := unary {AND unary} ;  unary := NOT unary | '(' expr ')' | cond
    cond   := field op value | value IN field (Drive) | field [NOT] IN '(' value {, value} ')' | field IS [NOT] EMPTY
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.query.ast import And, Call, Cond, Node, Not, Or, Query, QueryError, Value

_TOKEN = re.compile(r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<op>!=|<=|>=|!~|=|<|>|~|\(|\)|,)"""
                    r"""|(?P<word>[^\s'"=!<>~(),]+))""")
_SYMBOLS = {"=": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "~": "contains", "!~": "!contains"}


@dataclass(frozen=True)
class Syntax:
    """What one dialect's grammar allows."""

    name: str
    ops: frozenset[str]  # of =, !=, <, <=, >, >=, contains, !contains, in, not in, has, empty
    value_in_field: bool = False  # Drive: ``'1234' in parents``
    bare_values: bool = False  # JQL: ``project = PROJ``, ``status = Done`` without quotes
    order_by: bool = False
    functions: tuple[str, ...] = ()  # as documented (``currentUser``); matched without case
    shown: str = ""  # the operators as the product's documentation writes them
    tilde: bool = False  # ``~`` / ``!~`` for contains (JQL)

    def supported(self) -> str:
        ops = self.shown or ", ".join(sorted(o for o in self.ops if o not in ("has", "empty", "not empty")))
        extra = ["'value' in field"] if self.value_in_field else []
        extra += ["is [not] empty"] if "empty" in self.ops else []
        extra += ["order by field [asc|desc]"] if self.order_by else []
        extra += [f"{f}()" for f in self.functions]
        return f"field op value with {ops}; and, or, not, parentheses" + ("; " + "; ".join(extra) if extra else "")


@dataclass(frozen=True)
class _Tok:
    kind: str  # str, op, word
    text: str
    at: int


def tokens(syntax: Syntax, text: str) -> list[_Tok]:
    out: list[_Tok] = []
    at = 0
    text = text.rstrip()
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None or m.end() == at:
            raise QueryError(syntax.name, text[at:].strip()[:40], "unreadable text (an unclosed quote?)", syntax.supported())
        kind = m.lastgroup or "word"
        out.append(_Tok(kind, m.group(kind), m.start(kind)))
        at = m.end()
    return out


class _Parser:
    def __init__(self, syntax: Syntax, text: str) -> None:
        self.syntax = syntax
        self.text = text
        self.toks = tokens(syntax, text)
        self.i = 0

    # -- helpers ---------------------------------------------------------------------------------------

    def fail(self, problem: str, tok: _Tok | None = None) -> QueryError:
        tok = tok if tok is not None else self.peek()
        part = self.text[tok.at:].strip()[:40] if tok is not None else "the end of the query"
        return QueryError(self.syntax.name, part, problem, self.syntax.supported())

    def peek(self, ahead: int = 0) -> _Tok | None:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else None

    def keyword(self, *words: str, ahead: int = 0) -> bool:
        tok = self.peek(ahead)
        return tok is not None and tok.kind == "word" and tok.text.lower() in words

    def take(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise self.fail("the query ends too early")
        self.i += 1
        return tok

    def expect_op(self, text: str) -> None:
        tok = self.peek()
        if tok is None or tok.kind != "op" or tok.text != text:
            raise self.fail(f"expected {text!r}")
        self.i += 1

    # -- grammar ---------------------------------------------------------------------------------------

    def query(self) -> Query:
        where = None if self.peek() is None or self.keyword("order") else self.expr()
        order: list[tuple[str, bool]] = []
        if self.keyword("order"):
            if not self.syntax.order_by:
                raise self.fail("'order by' is not part of this query (sort with the tool's own order parameter)")
            self.take()
            if not self.keyword("by"):
                raise self.fail("expected 'by' after 'order'")
            self.take()
            while True:
                field = self.take()
                if field.kind == "op":
                    raise self.fail("expected a field to sort by", field)
                descending = False
                if self.keyword("asc", "desc"):
                    descending = self.take().text.lower() == "desc"
                order.append((_unquote(field.text) if field.kind == "str" else field.text, descending))
                if self.peek() is not None and self.peek().text == ",":  # type: ignore[union-attr]
                    self.take()
                    continue
                break
        if self.peek() is not None:
            raise self.fail("expected 'and', 'or' or the end of the query")
        return Query(where, tuple(order))

    def expr(self) -> Node:
        """``or`` binds loosest, then ``and``, then ``not``."""
        return self.joined("or")

    def joined(self, word: str) -> Node:
        parts = [self.joined("and") if word == "or" else self.unary()]
        while self.keyword(word):
            self.take()
            parts.append(self.joined("and") if word == "or" else self.unary())
        if len(parts) == 1:
            return parts[0]
        return Or(tuple(parts)) if word == "or" else And(tuple(parts))

    def unary(self) -> Node:
        if self.keyword("not") and not self.keyword("in", ahead=1):
            self.take()
            return Not(self.unary())
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text == "(":
            self.take()
            inner = self.expr()
            self.expect_op(")")
            return inner
        return self.cond()

    def cond(self) -> Node:
        left = self.take()
        if left.kind == "op":
            raise self.fail("expected a field or a value", left)
        if self.syntax.value_in_field and self.keyword("in") and (left.kind == "str" or not self.syntax.bare_values):
            self.take()
            holder = self.take()
            if holder.kind != "word":
                raise self.fail("expected the field after 'in'", holder)
            return Cond(holder.text, "has", self.literal(left))
        field = _unquote(left.text) if left.kind == "str" else left.text
        op_tok = self.peek()
        if op_tok is None:
            raise self.fail(f"expected an operator after {field!r}")
        op = self.operator()
        if op in ("in", "not in"):
            return Cond(field, op, self.value_list())
        if op in ("empty", "not empty"):
            return Cond(field, op)
        return Cond(field, op, self.value())

    def operator(self) -> str:
        tok = self.take()
        op = _SYMBOLS.get(tok.text) if tok.kind == "op" and (self.syntax.tilde or "~" not in tok.text) else None
        if op is None and tok.kind == "word":
            low = tok.text.lower()
            if low == "not" and self.keyword("in"):
                self.take()
                op = "not in"
            elif low == "is":
                negated = self.keyword("not")
                if negated:
                    self.take()
                if not self.keyword("empty", "null"):
                    raise self.fail("expected 'empty' or 'null' after 'is'")
                self.take()
                op = "not empty" if negated else "empty"
            elif low in ("in", "contains", "has"):
                op = low
        if op is None or op not in self.syntax.ops:
            raise self.fail("unknown operator", tok)
        return op

    def value_list(self) -> tuple[Value, ...]:
        self.expect_op("(")
        values = [self.value()]
        while self.peek() is not None and self.peek().text == ",":  # type: ignore[union-attr]
            self.take()
            values.append(self.value())
        self.expect_op(")")
        return tuple(values)

    def value(self) -> Value:
        return self.literal(self.take())

    def literal(self, tok: _Tok) -> Value:
        if tok.kind == "str":
            return _unquote(tok.text)
        if tok.kind == "op":
            raise self.fail("expected a value", tok)
        low = tok.text.lower()
        if low in ("true", "false"):
            return low == "true"
        if re.fullmatch(r"-?\d+(\.\d+)?", tok.text):
            return float(tok.text) if "." in tok.text else int(tok.text)
        nxt = self.peek()
        if low in {f.lower() for f in self.syntax.functions} and nxt is not None and nxt.text == "(":
            self.take()
            self.expect_op(")")
            return Call(low)
        if self.syntax.bare_values:
            return tok.text
        raise self.fail("a text value must be in quotes", tok)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def parse_infix(syntax: Syntax, text: str) -> Query:
    """``text`` as a ``Query``; ``QueryError`` says which part is wrong and what ``syntax`` supports."""
    return _Parser(syntax, text).query()
