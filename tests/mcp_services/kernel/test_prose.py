"""Seeded prose: templates with choices, filled with facts, the same for the same seed."""

from __future__ import annotations

import random

import pytest

from mcp_services.kernel.prose import INDUSTRY_WORDS, choose, industry_facts, letter, write
from mcp_services.kernel.world import INDUSTRIES


def test_a_template_makes_one_choice_per_bracket_nested_and_optional_ones_included() -> None:
    template = "[Hi|Hello] {first}[, thanks [a lot|so much]|]."
    seen = {write(random.Random(n), template, {"first": "Ana"}) for n in range(200)}
    assert seen == {"Hi Ana.", "Hello Ana.", "Hi Ana, thanks a lot.", "Hello Ana, thanks a lot.",
                    "Hi Ana, thanks so much.", "Hello Ana, thanks so much."}


def test_the_same_seed_writes_the_same_text_and_choices_leave_no_stray_spaces() -> None:
    template = "[Sorry for the wait.|] [we checked|We checked] it [today|]. Thanks[,|] {first}"
    texts = [write(random.Random("x"), template, {"first": "Lee"}) for _ in range(3)]
    assert len(set(texts)) == 1
    for n in range(50):
        text = write(random.Random(n), template, {"first": "Lee"})
        assert "  " not in text and " ." not in text and " ," not in text and text[0].isupper()
        assert "We checked" in text  # a sentence starts with a capital whichever choice came before it


def test_an_unbalanced_template_is_refused() -> None:
    with pytest.raises(ValueError, match="unbalanced"):
        choose(random.Random(0), "[Hi|Hello {first}")


def test_a_letter_greets_writes_and_signs_off() -> None:
    text = letter(random.Random(3), "customer", "[Your order|The order] shipped.", {}, to_first="Ana", first="Lee",
                  name="Lee Park", title="Support lead", company="Brightline")
    greeting, body, signoff = text.split("\n\n")
    assert "Ana" in greeting and "shipped" in body and "Lee Park" in signoff


def test_every_industry_has_its_own_words() -> None:
    assert set(INDUSTRY_WORDS) == set(INDUSTRIES)
    facts = industry_facts(random.Random(1), "healthcare")
    assert set(facts) == {"site", "clients", "work", "rush"}
    assert facts["site"] in INDUSTRY_WORDS["healthcare"]["site"]
