"""Generated services are available by name beside the hand-written library, and compose with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.pipeline import ImportConfig, import_file
from mcp_services.kernel import Episode
from mcp_services.registry import LIBRARY, UnknownServiceError, catalog_names, get_service, service_names
from tests.generator.conftest import OPENAPI_PETCLINIC

HAND_WRITTEN = [
    "crm", "mailbox", "calendar", "chat", "helpdesk", "payments", "accounting", "projects", "files", "sms",
    "hr", "recruiting", "expenses", "marketing", "meetings", "tasks", "voice", "commerce", "shipping", "esign",
    "sheets", "docs", "kb", "forms",
]


@pytest.fixture(scope="module")
def petclinic_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("petclinic")
    result = import_file(OPENAPI_PETCLINIC, ImportConfig(out=out))
    assert result.written == ["generator_openapi_petclinic"]
    return out


@pytest.fixture
def with_catalog(petclinic_catalog: Path, fresh_catalogs: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("COMPOWORLD_CATALOG", str(petclinic_catalog))
    from generator.catalog import catalogs

    catalogs.cache_clear()
    yield
    catalogs.cache_clear()


def test_the_hand_written_library_is_unchanged() -> None:
    # The library only grows: the first services keep their order, and service_names() is the library.
    assert list(LIBRARY)[: len(HAND_WRITTEN)] == HAND_WRITTEN and service_names() == list(LIBRARY)


def test_generated_services_are_served_by_name_beside_the_library(with_catalog: None) -> None:
    names = catalog_names()
    assert names[: len(HAND_WRITTEN)] == HAND_WRITTEN and "generator_openapi_petclinic" in names
    service = get_service("generator_openapi_petclinic")
    assert get_service("generator_openapi_petclinic") is service  # compiled once
    assert "create_owner" in service.tools
    with pytest.raises(UnknownServiceError):
        get_service("no_such_service_anywhere")


def test_an_episode_mounts_generated_and_hand_written_services_together(with_catalog: None) -> None:
    with Episode.create(["crm", "generator_openapi_petclinic"], world_seed=0) as episode:
        owner = episode.call("generator_openapi_petclinic", "create_owner",
                             {"first_name": "Ana", "last_name": "Ruiz", "email": "ana@example.com"})
        assert owner.success, owner.envelope()
        assert episode.call("crm", "search_contacts", {"query": "a"}).success
        changed = episode.diff()
        assert changed["generator_openapi_petclinic"] and not changed["crm"]


def test_the_package_catalog_is_small_and_every_entry_has_its_spec() -> None:
    from generator.catalog import PACKAGE_CATALOG, Catalog

    catalog = Catalog(PACKAGE_CATALOG)
    if not catalog.names():
        pytest.skip("the package catalog has not been built yet")
    size = sum(p.stat().st_size for p in PACKAGE_CATALOG.rglob("*") if p.is_file())
    assert size < 5_000_000
    index = json.loads((PACKAGE_CATALOG / "index.json").read_text())
    assert set(index["services"]) == set(catalog.names())
    assert not set(catalog.names()) & set(LIBRARY)
    name = catalog.names()[0]
    assert set(catalog.spec(name).model_dump()["tools"][0]) >= {"name", "behaviour"}
    counts = catalog.counts()
    # issue 23: the paper's size (10,130 tools) with the big business APIs, and honest statuses: a tool that
    # fails any product invariant is simulated, so the implemented share is what the gate leaves (a floor here)
    assert counts["services"] >= 150 and counts["tools"] >= 10_130
    assert counts["by_status"]["implemented"] + counts["by_status"]["simulated"] == counts["tools"]
    assert counts["by_status"]["implemented"] >= 0.7 * counts["tools"]


def test_the_composer_builds_verified_tasks_that_cross_generated_and_hand_written_services(
    tmp_path: Path, fresh_catalogs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from composer.generate import GenerateConfig, generate

    from generator.catalog import catalogs
    from tests.generator.conftest import SWAGGER_SHOP

    import_file(SWAGGER_SHOP, ImportConfig(out=tmp_path))
    monkeypatch.setenv("COMPOWORLD_CATALOG", str(tmp_path))
    catalogs.cache_clear()
    tasks, report = generate(GenerateConfig(n=12, seed=1, services=("crm", "chat", "mailbox", "generator_swagger_shop"),
                                            distractor_services=0))
    crossing = [t for t in tasks if {s.service for s in t.plan} >= {"crm", "generator_swagger_shop"}]
    assert crossing, report.summary()


async def test_an_mcp_client_lists_and_calls_a_catalog_service_over_stdio() -> None:
    import sys

    from mcp import Client, StdioServerParameters

    from generator.catalog import generated_names

    if "stripe" not in generated_names():
        pytest.skip("the package catalog has no stripe service")
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_services", "serve", "stripe", "crm"])
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        listed = await client.call_tool("stripe__get_customers", {"limit": 2})
        missing = await client.call_tool("stripe__get_customers_customer", {"customer": "cus_missing"})
    assert "stripe__get_customers" in names and "crm__search_contacts" in names
    assert listed.is_error is False and len(listed.structured_content["data"]["items"]) == 2
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
