"""Behaviour of forms a user would notice: what a response must contain, closed forms, finding responses,
the summary, and responses that arrive from outside."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["forms"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def fm(ep: Episode) -> Calls:
    return Calls(ep, "forms")


def form(fm: Calls, title: str) -> dict[str, Any]:
    (found,) = [f for f in fm.all("list_forms") if f["title"] == title]
    return found


def demo_answers(ep: Episode, **changes: Any) -> dict[str, Any]:
    person = ep.world.customers[0]
    answers = {
        "first_name": person.first_name,
        "last_name": person.last_name,
        "email": person.email.upper(),
        "company": "Acme",
        "interest": "pro PLAN",
        "preferred_date": "2025-12-01",
        "preferred_time": "14:00 UTC",
    }
    return {**answers, **changes}


def test_a_response_answers_every_required_question_with_a_value_of_its_type(ep: Episode, fm: Calls) -> None:
    demo = form(fm, "Request a demo")
    made = fm("submit_response", form_id=demo["id"], answers=demo_answers(ep))
    person = ep.world.customers[0]
    assert made["respondent_email"] == person.email and made["respondent_name"] == person.name
    assert made["answers"]["interest"] == "Pro plan"  # the choice as the form spells it
    assert fm("get_form", form_id=demo["id"])["response_count"] == demo["response_count"] + 1
    answers = demo_answers(ep)
    del answers["preferred_date"]
    assert "preferred_date" in fm.refused("submit_response", "invalid_argument", form_id=demo["id"], answers=answers)
    for bad in (
        {"email": "not an email"},
        {"interest": "A pony"},
        {"preferred_date": "2025-02-30"},
        {"preferred_time": 14},
        {"colour": "red"},
        {"company": "   "},
    ):
        fm.refused("submit_response", "invalid_argument", form_id=demo["id"], answers=demo_answers(ep, **bad))


def test_ratings_numbers_and_yes_no_answers_take_their_own_kinds_of_value(ep: Episode, fm: Calls) -> None:
    survey = form(fm, "Support satisfaction survey")
    made = fm("submit_response", form_id=survey["id"], answers={"rating": 4, "recommend": "Yes"})
    assert made["answers"] == {"rating": 4, "recommend": True} and made["respondent_email"] is None
    for bad in (
        {"rating": 6, "recommend": True},
        {"rating": 3.5, "recommend": True},
        {"rating": True, "recommend": True},
        {"rating": 4, "recommend": "maybe"},
    ):
        fm.refused("submit_response", "invalid_argument", form_id=survey["id"], answers=bad)
    refund = form(fm, "Refund request")
    fm.refused(
        "submit_response",
        "invalid_argument",
        form_id=refund["id"],
        answers={
            "full_name": "A B",
            "email": "a@b.example",
            "company": "C",
            "invoice_number": "INV-1",
            "amount": "ten",
            "reason": "x",
        },
    )


def test_a_closed_form_takes_no_responses_until_reopened(ep: Episode, fm: Calls) -> None:
    contact = form(fm, "Contact us")
    answers = {"full_name": "Ana Ruiz", "email": "ana@brightline.example", "topic": "Billing", "message": "Hi"}
    assert fm("close_form", form_id=contact["id"])["status"] == "closed"
    fm.refused("submit_response", "invalid_state", form_id=contact["id"], answers=answers)
    with pytest.raises(ToolError):
        ep.run_event("forms", "response_submitted", form_title="Contact us", answers=answers)
    fm.refused("close_form", "invalid_state", form_id=contact["id"])
    fm("reopen_form", form_id=contact["id"])
    assert fm("submit_response", form_id=contact["id"], answers=answers)["form_title"] == "Contact us"


def test_questions_grow_at_the_end_and_answered_ones_are_never_deleted(fm: Calls) -> None:
    made = fm("create_form", title="Webinar feedback", description="Two questions.")
    assert made["status"] == "open" and made["response_count"] == 0 and made["public_url"].startswith("https://forms.")
    fm("add_question", form_id=made["id"], ref="liked", title="Did you like it?", type="yes_no", required=True)
    topic = fm(
        "add_question",
        form_id=made["id"],
        ref="topic",
        title="Next topic",
        type="multiple_choice",
        choices=["Reports", "API"],
    )
    assert [q["ref"] for q in fm("list_questions", form_id=made["id"])] == ["liked", "topic"] and topic["position"] == 1
    fm.refused("add_question", "conflict", form_id=made["id"], ref="topic", title="Again", type="short_text")
    fm.refused(
        "add_question",
        "invalid_argument",
        form_id=made["id"],
        ref="one",
        title="One",
        type="multiple_choice",
        choices=["A"],
    )
    fm.refused(
        "add_question",
        "invalid_argument",
        form_id=made["id"],
        ref="text",
        title="T",
        type="short_text",
        choices=["A", "B"],
    )
    fm("submit_response", form_id=made["id"], answers={"liked": True, "topic": "API"})
    fm.refused("delete_question", "invalid_state", question_id=topic["id"])
    fm.refused(
        "add_question", "invalid_state", form_id=made["id"], ref="why", title="Why?", type="long_text", required=True
    )
    extra = fm("add_question", form_id=made["id"], ref="why", title="Why?", type="long_text")
    assert fm("delete_question", question_id=extra["id"])["ref"] == "why"


def test_responses_are_found_by_respondent_words_or_one_answer_newest_first(ep: Episode, fm: Calls) -> None:
    contact = form(fm, "Contact us")
    everything = fm.all("list_responses", form_id=contact["id"])
    assert [r["submitted_at"] for r in everything] == sorted((r["submitted_at"] for r in everything), reverse=True)
    someone = everything[0]
    mine = fm.all("search_responses", respondent_email=someone["respondent_email"].upper())
    assert someone["id"] in [r["id"] for r in mine] and all(
        r["respondent_email"] == someone["respondent_email"] for r in mine
    )
    billing = fm.all("search_responses", form_id=contact["id"], question_ref="topic", answer="billing")
    assert billing and all(r["answers"]["topic"] == "Billing" for r in billing)
    assert len(billing) == sum(r["answers"]["topic"] == "Billing" for r in everything)
    words = fm.all("search_responses", query="invoice")
    assert words and all("invoice" in r["answers_text"].lower() for r in words)
    recent = fm.all("list_responses", form_id=contact["id"], since=everything[2]["submitted_at"])
    assert [r["id"] for r in recent] == [r["id"] for r in everything[:3]]
    fm.refused("search_responses", "invalid_argument", question_ref="topic")


def test_the_summary_counts_choices_and_averages_ratings(fm: Calls) -> None:
    survey = form(fm, "Support satisfaction survey")
    responses = fm.all("list_responses", form_id=survey["id"])
    summary = fm("get_form_summary", form_id=survey["id"])
    by_ref = {q["ref"]: q for q in summary["questions"]}
    assert summary["responses"] == len(responses)
    assert by_ref["rating"]["average"] == round(sum(r["answers"]["rating"] for r in responses) / len(responses), 2)
    yes = sum(r["answers"]["recommend"] for r in responses)
    assert by_ref["recommend"]["choices"] == [
        {"choice": "yes", "count": yes},
        {"choice": "no", "count": len(responses) - yes},
    ]


def test_a_submitted_response_from_outside_only_adds_it_and_is_found_by_its_sender(ep: Episode, fm: Calls) -> None:
    key = ep.run_event(
        "forms", "response_submitted", form_title="Request a demo", answers=demo_answers(ep), hours_ago=2
    )
    assert_added_only(ep, "forms")
    found = fm.all("search_responses", respondent_email=ep.world.customers[0].email)
    assert found[0]["id"] == key and found[0]["submitted_at"] < ep.world.now
    with pytest.raises(ToolError):
        ep.run_event("forms", "response_submitted", form_title="Request a demo", answers=demo_answers(ep, email="nope"))
    with pytest.raises(ToolError):
        ep.run_event("forms", "response_submitted", form_title="No such form", answers={})
