"""A tool's phrases as requests: made whole before use, filled with referring expressions, never with seams.

Generated tools' phrases come from their documentation's first sentence, and some do not read as a request
("assign the consent form to appointment {id}", where ``{id}`` is the consent form; "end the active for the ad
campaign {campaign_id}"). ``whole`` repairs what has one reading ("end the active ad campaign {campaign_id}") and
refuses the rest; a tool none of whose phrases is whole is left out of requests (``composer stats`` counts them).
``phrase`` fills a whole phrase and refuses a filled text with a seam left in it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcp_services.kernel.intents import PLACEHOLDER, placeholders

from composer.catalog import ToolInfo

#: Words that may stand right before a placeholder: articles, prepositions, and words that introduce a value.
_LEADS = frozenset({"the", "a", "an", "to", "for", "of", "from", "in", "on", "with", "into", "about", "by", "at",
                    "as", "named", "called", "titled", "labelled", "labeled", "and", "or", "via", "under", "onto",
                    "than", "is", "be", "using", "between", "within", "over", "after", "before", "until", "saying",
                    "that", "against", "reading", "says", "stating", "per", "starting", "ending", "due", "until",
                    "new", "our", "my", "your", "their", "his", "her", "its", "this", "each", "every", "open"})
#: State words a description uses as adjectives ("Ends the active campaign"): never the noun of a phrase.
_ADJECTIVES = frozenset({"active", "inactive", "public", "private", "current", "default", "primary", "existing",
                         "specified", "specific", "selected", "latest", "pending", "archived", "open", "closed",
                         "live", "enabled", "disabled", "paused", "shared", "deleted", "expired", "new", "old",
                         "given", "whole", "entire", "main", "single", "multiple", "several", "other", "own"})
#: Words that say "the id of" after a noun ("the tenant id {tenant_id}").
_ID_WORDS = frozenset({"id", "ids", "key", "uuid", "sid", "number", "no", "code", "gid", "name"})
#: A referring expression that names its own noun: "Ana's voicemail", "the ticket Ana opened".
REFERRING = re.compile(r"^(?:the |their |[A-Z][a-z]+'s )")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_A_VOWEL = re.compile(r"\ba (?=(?!u[nst]|use|one|eu)[aeiou])", re.I)
_SAID_TWICE = re.compile(r"\bthe (\w+) (?:from|to|of|for|in|on) the \1\b")
_ADJ_FOR = re.compile(r"\bthe (\w+) (?:for|of) the ((?:\w+ ){0,2}?)(\w+) (?=\{)")


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace(".", " ")
    return [_singular(w.lower()) for w in spaced.split() if w.lower() not in ("id", "ids", "uuid", "key", "sid")]


def names_of(tool: ToolInfo) -> Callable[[str], set[str]]:
    """The nouns each parameter of ``tool`` may be called by: its entity's (``id:svc.consent_form`` -> form,
    consent form), its own name's words, and for the tool's own id (``id``), the tool's entity."""
    own = (tool.entity or "").rsplit(".", 1)[-1]

    def nouns(param: str) -> set[str]:
        found: set[str] = set(_words(param))
        spec = tool.param(param)
        entity = spec.semtype.rsplit(".", 1)[-1] if spec is not None and spec.semtype and spec.semtype.startswith("id:") \
            else (own if param.lower() in ("id", "key", "uuid") or not found else "")
        found |= set(_words(entity))
        return found

    return nouns


def whole(text: str, nouns: Callable[[str], set[str]]) -> str | None:
    """``text`` as a whole request, repaired where it has one reading, or None where it cannot be made whole.

    A noun right before a placeholder must be that parameter's own ("archive the call {call_id}"), never another
    row's ("to appointment {id}" where ``id`` is the consent form); a state word is no noun ("end the active for
    the ad campaign {campaign_id}" is "end the active ad campaign {campaign_id}")."""
    text = _ADJ_FOR.sub(lambda m: f"the {m.group(1)} {m.group(2)}{m.group(3)} " if m.group(1) in _ADJECTIVES
                        else m.group(0), text)
    text = _A_VOWEL.sub("an ", text)  # "create a event" -> "create an event"
    if _SAID_TWICE.search(text):
        return None  # "delete the task from the task {task}"
    if re.search(r"\b(?:the|a|an) (?:the|a|an|to|from|for|of|in|on|with|by|instead|also|then|not|please)\b", text) or re.search(r"\b(\w+) \1\b", text):
        return None  # "the the", "create a to appointment", "create an instead", "post post"
    if re.search(r"\bto (?!the\b|a\b|an\b)[a-z]+ for the\b", text):
        return None  # "assign the consent form to appointment for the record {id}": a bare noun split off a tool's name
    for match in PLACEHOLDER.finditer(text):
        lead_in = text[:match.start()].rstrip()
        if not lead_in or lead_in.endswith((":", ",", "}", '"', "'", "(")):
            continue  # a value after a colon or another value: "note on {order_id}: {note}"
        plain = PLACEHOLDER.sub(" , ", lead_in)  # the words said, never the placeholders' own names
        before = _WORD.findall(plain.rsplit(",", 1)[-1])
        while len(before) > 2 and before[-1].lower() in _ID_WORDS:
            before.pop()  # "by xero tenant id {xero_tenant_id}": the words before the id are its noun
        if len(before) < 2:
            continue  # a verb or a value leads it in: "refund {charge_id}", "apply {a} to {b}"
        word = before[-1].lower()
        if word in _LEADS:
            continue
        own = nouns(match.group(1))
        if _singular(word) in own or _squash(word) in {_squash(match.group(1)), *own}:
            continue
        said = re.findall(r"\b(?:the|a|an)\s+((?:\w+\s+){0,2}\w+)", " ".join(before[:-1]), flags=re.I)
        if own & {_singular(w.lower()) for phrase_ in said for w in phrase_.split()}:
            return None  # the row was named earlier ("the consent form"): this placeholder follows another row's noun
    return text


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())
    return text


_WHOLE: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}


def whole_phrases(tool: ToolInfo) -> tuple[str, ...]:
    """The phrases of ``tool`` that read as requests (repaired where they can be); read once per tool."""
    key = (tool.key, tool.phrases)
    if key not in _WHOLE:
        nouns = names_of(tool)
        _WHOLE[key] = tuple(dict.fromkeys(w for p in tool.phrases if (w := whole(p, nouns)) is not None))
    return _WHOLE[key]


def seams(text: str) -> list[str]:
    """The seams left in a filled request: an unfilled placeholder, doubled articles or words, a bare noun before a
    referring expression ("to appointment the consent form")."""
    found = re.findall(r"\{\w+\}", text)
    found += [m.group(0) for m in re.finditer(r"\b(?:the|a|an) (?:the|a|an)\b|\b(\w{3,}) \1\b", text)]
    return found


def phrase(tool: ToolInfo, fills: Mapping[str, str]) -> str | None:
    """The tool's phrase that says the most of ``fills`` (the first such), with every placeholder filled; None
    when no phrase of the tool reads whole.

    A placeholder that a tool writes after its own noun ("archive the call {call_id}") takes a referring
    expression without that noun in front ("archive Ana's voicemail", not "archive the call Ana's voicemail").
    """
    usable = [text for text in whole_phrases(tool) if all(n in fills for n in placeholders(text))]
    for text in sorted(usable, key=lambda t: -len(set(placeholders(t)))):  # stable: the first of equals first
        filled = _filled(text, fills)
        if not seams(filled):
            return filled
    return None


def _filled(text: str, fills: Mapping[str, str]) -> str:
    for name in placeholders(text):
        fill = fills[name]
        if REFERRING.match(fill):
            # "archive the call {call_id}" and "accept dispute {dispute_id}" take "the dispute for Ana" without
            # their own noun; "the customer of {label_id}" keeps its words.
            text = re.sub(rf"\bthe (?:(?!of |for |to |with |from )[A-Za-z]+ ){{1,3}}(?=\{{{name}\}})", "", text)
            words = fill.split()
            if fill.startswith(("the ", "their ")) and len(words) > 1:  # "to a task {task_gid}" + "the task ...": drop "task"
                text = re.sub(rf"\b{re.escape(words[1])} (?=\{{{name}\}})", "", text)
            text = re.sub(rf"\b(?:an?|the) (?=\{{{name}\}})", "", text)  # "send a {campaign}": not "send a the campaign"
    return PLACEHOLDER.sub(lambda m: fills[m.group(1)], text)


def phrase_figures(tools: Iterable[ToolInfo], examples: int = 5) -> dict[str, Any]:
    """How many tools' phrases read whole: phrased tools, phrases repaired, and the tools left out of requests
    because none of their phrases can be made whole (with a few of them)."""
    phrased = [t for t in tools if t.phrases]
    dropped = [t for t in phrased if not whole_phrases(t)]
    repaired = sum(1 for t in phrased for p in t.phrases if p not in whole_phrases(t)
                   and whole(p, names_of(t)) is not None)
    return {"phrased_tools": len(phrased), "phrases_repaired": repaired, "tools_left_out": len(dropped),
            "left_out_examples": [f"{t.key}: {t.phrases[0]}" for t in dropped[:examples]]}
