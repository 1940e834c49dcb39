"""One consistent world: every invoice a seeded text of any library service names is in the books.

An email, a ticket, an issue or a text message that names an invoice names one that accounting holds,
states its amount (the total or what is still due) and belongs to the customer the text is from or
about: a text that names a customer organisation (its name, an email at its domain, a phone of its
people or its main line) names one of that organisation's invoices.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, World
from mcp_services.registry import LIBRARY

SEEDS = (0, 1)
INVOICE = re.compile(r"\bINV-[0-9A-Z]+(?:-[0-9A-Z]+)*")
AMOUNT = re.compile(r"\b\d{1,3}(?:,\d{3})*\.\d{2} USD\b")
#: A sentence of a text (a full stop inside an amount does not end it).
SENTENCE = re.compile(r"[^.!?\n]+(?:\.\d[^.!?\n]*)*")


def seeded_texts(seed: int) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(service, table, row) of every seeded row of every library service."""
    with Episode.create(list(LIBRARY), world_seed=seed) as episode:
        dumps = {name: store.dump() for name, store in episode.stores.items()}
    for service, tables in dumps.items():
        for table, rows in tables.items():
            for row in rows.values():
                yield service, table, row


def strings(value: Any) -> Iterator[str]:
    """Every text in a row, its lists and its JSON columns included."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            yield value
            return
        if isinstance(decoded, (dict, list)):
            yield from strings(decoded)
        else:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def organisations_named(world: World, text: str) -> set[str]:
    """The customer organisations a row names: by name, an email domain, a person's phone or a main line."""
    named = set()
    for org in world.organisations[1:]:
        if org.name in text or f"@{org.domain}" in text or org.phone in text:
            named.add(org.id)
    for person in world.customers:
        if person.phone in text:
            named.add(person.organisation_id)
    return named


@pytest.fixture(scope="module", params=SEEDS)
def world_texts(request: pytest.FixtureRequest) -> tuple[World, dict[str, dict[str, Any]], list[tuple[str, str, str]]]:
    seed = request.param
    rows = list(seeded_texts(seed))
    books = {row["id"]: row for service, table, row in rows if (service, table) == ("accounting", "invoices")}
    texts = [(service, table, "\n".join(strings(row))) for service, table, row in rows
             if (service, table) != ("accounting", "invoices")]
    return World.from_seed(seed), books, texts


def test_the_scan_sees_invoices_named_in_several_services(world_texts: Any) -> None:
    _, books, texts = world_texts
    assert len(books) == 120
    naming = {service for service, _, text in texts if INVOICE.search(text)}
    assert {"mailbox", "helpdesk", "projects", "sms", "files", "payments"} <= naming


def test_every_invoice_a_seeded_text_names_is_in_accounting(world_texts: Any) -> None:
    _, books, texts = world_texts
    unknown = sorted({(service, table, number) for service, table, text in texts
                      for number in INVOICE.findall(text) if number not in books})
    assert not unknown, f"{len(unknown)} invoice numbers accounting does not hold, e.g. {unknown[:5]}"


def test_an_amount_stated_beside_an_invoice_is_its_total_or_what_is_due(world_texts: Any) -> None:
    _, books, texts = world_texts
    wrong = []
    checked = 0
    for service, table, text in texts:
        for sentence in SENTENCE.findall(text):
            numbers = [n for n in INVOICE.findall(sentence) if n in books]
            if len(numbers) != 1:
                continue
            amounts = list(AMOUNT.finditer(sentence))
            if not amounts:
                continue
            # The amount nearest the number is the invoice's (a quote or a part may come further on).
            at = sentence.index(numbers[0])
            nearest = min(amounts, key=lambda m: min(abs(m.start() - at), abs(m.end() - at))).group()
            invoice = books[numbers[0]]
            allowed = {f"{invoice['total']:,.2f} USD", f"{invoice['amount_due']:,.2f} USD"}
            checked += 1
            if nearest not in allowed:
                wrong.append((service, table, numbers[0], nearest, sorted(allowed)))
    assert checked >= 20, "the texts should state some invoices' amounts"
    assert not wrong, f"{len(wrong)} amounts that are not the invoice's, e.g. {wrong[:3]}"


def test_an_invoice_belongs_to_the_customer_the_text_names(world_texts: Any) -> None:
    world, books, texts = world_texts
    plan = world.plan
    strangers = []
    for service, table, text in texts:
        named = organisations_named(world, text)
        for number in set(INVOICE.findall(text)) & set(books):
            owner = plan.invoice(number)
            assert owner is not None
            if named and owner.organisation_id not in named:
                strangers.append((service, table, number, owner.organisation_id, sorted(named)))
    assert not strangers, f"{len(strangers)} invoices of another customer, e.g. {strangers[:3]}"
