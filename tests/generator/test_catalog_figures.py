"""The shipped catalog's figures stay true (issue 13): products people automate, real seeds, named rows,
filters that filter, and tools a person can be asked to use in a sentence."""

from __future__ import annotations

from functools import cache

from mcp_services.kernel.intents import intent_problems

from generator.audit import CatalogFigures, audit_catalog, is_placeholder
from generator.catalog import PACKAGE_CATALOG, Catalog

SEEDED_SAMPLE = 24  # services seeded and read row by row (every service is checked statically)


@cache
def _catalog() -> Catalog:
    return Catalog(PACKAGE_CATALOG)


@cache
def _static() -> CatalogFigures:
    return audit_catalog(_catalog(), seed=False)


@cache
def _seeded() -> CatalogFigures:
    names = _catalog().names()
    step = max(1, len(names) // SEEDED_SAMPLE)
    return audit_catalog(_catalog(), names[::step][:SEEDED_SAMPLE])


def test_placeholder_detection_knows_a_counter_from_a_value() -> None:
    assert is_placeholder("desc-1", "description", "charge") and is_placeholder("customer-3", "customer", "charge")
    assert not is_placeholder("INV-20931", "number", "invoice") and not is_placeholder("billing-team", "channel", "x")


def test_at_least_four_in_five_services_are_business_or_consumer_products() -> None:
    figures = _static()
    assert len(figures.services) >= 150
    assert figures.share("business") >= 0.8
    assert figures.share("reference") <= 0.05


def test_no_list_tool_marked_implemented_ignores_a_declared_filter() -> None:
    assert _static().ignored_filters == []


def test_every_entity_has_a_display_name_and_seeded_rows_fill_it() -> None:
    assert _static().named_share >= 0.95
    seeded = _seeded()
    assert seeded.named_share >= 0.95, [(s.name, s.unnamed[:3]) for s in seeded.services if s.unnamed][:5]


def test_seeded_string_cells_hold_no_placeholders() -> None:
    seeded = _seeded()
    assert sum(s.string_cells for s in seeded.services) > 1000
    assert seeded.placeholder_cells == []


def test_every_tool_declares_an_intent_and_phrases_a_person_would_say() -> None:
    catalog = _catalog()
    for name in catalog.names():
        for tool in catalog.spec(name).tools:
            assert tool.intent and tool.phrases, f"{name}.{tool.name}"
            params = tool.parameters.get("properties", {})
            assert not intent_problems(tool.intent, tool.effect, tool.phrases, params), f"{name}.{tool.name}"
    service = catalog.service(catalog.names()[0])
    tool = next(iter(service.tools.values()))
    assert tool.intent and tool.phrases  # the compiled ToolSpec carries them to the composer
