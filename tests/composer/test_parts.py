"""Small parts: plan expressions, house-rule numbers, matchers, the paraphrase guard."""

from __future__ import annotations

import random

from composer.derive import _matcher
from composer.paraphrase import accept, paraphrase
from composer.phrasing import instruction, steps_text
from composer.plan import Composed, Cond, ListOf, Lit, MissingValue, Ref, resolve
from composer.scenario import Brief


def test_expressions_resolve_against_the_items_earlier_steps_picked() -> None:
    items = [{"email": "a@x.example", "amount": 120.0}, {"id": "tk_1"}]
    assert resolve(Ref(0, "email"), items) == "a@x.example"
    assert resolve(ListOf((Ref(0, "email"), Lit("b@x.example"))), items) == ["a@x.example", "b@x.example"]
    assert resolve(Composed(("Ticket ", Ref(1, "id"), ".")), items) == "Ticket tk_1."
    assert resolve(Cond(Ref(0, "amount"), 100.0, "high", "normal"), items) == "high"
    assert resolve(Cond(Ref(0, "amount"), 150.0, "high", "normal"), items) == "normal"
    try:
        resolve(Ref(1, "missing"), items)
    except MissingValue:
        pass
    else:  # pragma: no cover
        raise AssertionError("a missing field must not resolve")


def test_columns_match_the_arguments_that_produced_them() -> None:
    items = [{"id": "re_7"}]
    note = Composed(("Refunded ", Ref(0, "id"), "."))
    assert _matcher(note, "Refunded re_7.", "Refunded re_7.", items) == {"$states": [{"kind": "text", "value": "re_7"}]}
    assert _matcher(note, "Refunded re_7.", "", items) is None  # an empty column never matches text
    assert _matcher(Lit(["a@x.example"]), ["a@x.example"], ["a@x.example", "b@x.example"], items) == {"$includes": ["a@x.example"]}
    assert _matcher(Lit(12.5), 12.5, 12.5, items) == {"$approx": 12.5}
    assert _matcher(Lit("closed"), "closed", "open", items) is None


def test_a_paraphrase_that_loses_an_anchor_or_leaks_a_value_is_rejected() -> None:
    keep, forbid = ["Ana Ruiz", "Tuesday 14 January 2025"], ["re_0007"]
    good = "It's Tuesday 14 January 2025: please refund Ana Ruiz's duplicate charge."
    assert accept(good, keep, forbid)
    assert not accept("Please refund Ana's charge.", keep, forbid)
    assert not accept(good + " Use re_0007.", keep, forbid)
    assert paraphrase("x", keep, forbid, lambda system, text: good) == good
    assert paraphrase("x", keep, forbid, lambda system, text: "lost it") is None

    def broken(system: str, text: str) -> str:
        raise RuntimeError("model down")

    assert paraphrase("x", keep, forbid, broken) is None


def test_a_request_states_the_date_only_when_it_leans_on_it() -> None:
    def request(goal: str, needs_date: bool = False) -> str:
        brief = Brief(intro="Ana Ruiz emailed this morning", goal=goal, needs_date=needs_date)
        return instruction(brief, [], "goal", random.Random(0), now="2025-03-13T09:00:00Z")

    date = "Thursday 13 March 2025"
    for goal in ("Move her meeting on Friday to Monday", "Record the payment, dated today", "Book it for next week"):
        assert date in request(goal), goal
    for goal in ("Move her meeting to Friday 21 March at 10:00 UTC", "Reply with the ticket number"):
        assert date not in request(goal), goal
    assert date in request("Reply with the ticket number", needs_date=True)


def test_guided_steps_never_repeat_a_connector_back_to_back() -> None:
    clauses = ["read the rules", "find the account manager", "forward the email", "reply with the name", "note it"]
    for seed in range(40):
        sentences = steps_text(clauses, random.Random(seed)).split(". ")
        openers = [s.split(" ")[0] for s in sentences[1:]]
        assert all(a != b for a, b in zip(openers, openers[1:])), sentences


def test_fields_are_said_as_people_say_them() -> None:
    from composer.phrasing import spoken_field

    assert spoken_field("GeoMatchLevel") == "geo match level"
    assert spoken_field("due_date") == "due date"
    assert spoken_field("SKU") == "SKU"


def test_a_question_about_a_time_uses_its_verb_or_is_not_asked() -> None:
    from composer.archetypes.questions import _Question
    from mcp_services.kernel.schema import FieldDef

    def question(name: str) -> str | None:
        f = FieldDef(name=name, type="string", semantic="datetime")
        return _Question(f, "the invoice").question if _Question.timed_noun(f) else None

    assert question("paid_at") == "when the invoice was paid"
    assert question("created_at") == "when the invoice was created"
    assert question("send_at") == "when the invoice goes out"
    assert question("starts_at") == "when the invoice starts"
    assert question("announcement_at") is None  # no "when ... was announcement"
