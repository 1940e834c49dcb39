"""The shipped catalog's figures stay true (issues 13 and 23): products people automate, the big business
APIs among them, seeds from the World with no filler, named rows, filters that filter, honest statuses
that the README states, and tools a person can be asked to use in a sentence."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

from mcp_services.kernel.intents import intent_problems

from generator.audit import CatalogFigures, audit_catalog, filler_shape, is_placeholder
from generator.catalog import PACKAGE_CATALOG, Catalog
from generator.measures import CAUSES, measure_catalog

REPO = Path(__file__).resolve().parents[2]
BIG_APIS = ("atlassian_jira", "docusign", "trello", "asana", "sendgrid", "squareup", "gitlab")

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


@cache
def _every_seed() -> CatalogFigures:
    return audit_catalog(_catalog())


def _readme_section() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("## Generated services", 1)[1].split("\n## ", 1)[0]
    return " ".join(section.split())  # a figure and its words may be wrapped onto two lines


def _number(text: str) -> int:
    return int(text.replace(",", ""))


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


def test_filler_detection_knows_filler_from_data() -> None:
    assert filler_shape("Quarterly city", "city", "customer") == "<Adjective> <field>"
    assert filler_shape("Customer line1", "line1", "address") == "<Adjective> <field>"
    assert filler_shape("Pilot Audit 1", "name", "project") == "<Word> <Word> <n>"
    assert filler_shape("TRA84846", "tracking_number", "shipment") == "<FIELD><digits>"
    for data in ("Springfield", "Website redesign", "1Z999AA10123456784", "INV-2025-0042", "Hiring plan 2025"):
        assert filler_shape(data, "name", "project") is None


def test_no_seeded_value_in_the_whole_catalog_is_filler_shaped() -> None:
    figures = _every_seed()
    assert len(figures.services) == len(_catalog().names())
    assert figures.summary()["string_values"] > 100_000
    assert figures.filler_values == [], figures.filler_values[:10]


def test_the_catalog_holds_the_big_business_apis_and_the_papers_tool_count() -> None:
    counts = _catalog().counts()
    assert counts["tools"] >= 10_130
    assert set(BIG_APIS) <= set(_catalog().names())
    for name in BIG_APIS:
        statuses = {t.status for t in _catalog().index[name].tools}
        assert statuses == {"implemented", "simulated"}, name  # core resources implemented, the rest simulated


def test_the_readme_states_the_catalogs_figures_as_the_gate_left_them() -> None:
    section = _readme_section()
    counts = _catalog().counts()
    by_status = counts["by_status"]
    head = re.search(r"\*\*([\d,]+) services, ([\d,]+) tools, ([\d,]+) implemented \(([\d.]+)%\)\*\*, ([\d,]+) "
                     r"simulated[^,]*, ([\d,]+) more rejected", section)
    assert head is not None, "README's Generated services section states the catalog's counts"
    services, tools, implemented, share, simulated, rejected = head.groups()
    assert (_number(services), _number(tools)) == (counts["services"], counts["tools"])
    assert (_number(implemented), _number(simulated)) == (by_status["implemented"], by_status["simulated"])
    assert _number(rejected) == by_status.get("rejected", 0)
    assert float(share) == round(100 * by_status["implemented"] / counts["tools"], 1)
    because = counts["simulated_because"]
    demoted = re.search(r"([\d,]+) failed a product invariant", section)
    assert demoted is not None and _number(demoted.group(1)) == because.get("product invariants", 0)
    figures = _static()
    entities = re.search(r"All ([\d,]+) entities have a display name", section)
    assert entities is not None and _number(entities.group(1)) == figures.entities and figures.named_share == 1.0
    values = re.search(r"none of the ([\d,]+) seeded string values", section)
    assert values is not None and _number(values.group(1)) == _every_seed().summary()["string_values"]


#: Services a user tried as each product's user (issue 32): credentials that filtered, bodies dropped, updates
#: and deletes that inserted, actions that changed nothing, query parameters seeded as fields.
TRIED = ("mandrillapp", "postmarkapp_server", "apideck_crm", "paylocity", "googleapis_tasks", "ebay_sell_fulfillment",
         "braze", "brex", "drchrono")


def test_the_services_a_user_tried_show_none_of_the_root_causes() -> None:
    causes = measure_catalog(_catalog(), list(TRIED))
    assert {cause: causes.items(cause) for cause in CAUSES} == {cause: [] for cause in CAUSES}


def test_a_service_named_like_a_better_known_product_says_which_it_is() -> None:
    brex = _catalog().spec("brex")
    assert brex.title == "brex.io KYC API" and "not Brex Inc." in brex.description


def test_every_tracked_file_stays_under_five_megabytes() -> None:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    sizes = {name.decode(): (REPO / name.decode()).stat().st_size for name in tracked if name and (REPO / name.decode()).is_file()}
    assert max(sizes.values()) < 5 * 1024 * 1024, max(sizes, key=sizes.__getitem__)


def test_a_generated_tool_says_whether_it_is_simulated_and_answers_from_state() -> None:
    service = _catalog().service("googleapis_gmail")
    statuses = {t.name: t.status for t in _catalog().index["googleapis_gmail"].tools}
    for name, tool in service.tools.items():
        assert tool.simulated == (statuses[name] == "simulated"), name
        if not tool.simulated:
            assert tool.answers_from_state
