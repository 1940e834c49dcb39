"""Services beyond the library come from providers that register themselves; a broken one is named."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points

import pytest

from mcp_services import registry
from mcp_services.kernel import Episode, Service
from mcp_services.registry import (
    ENTRY_POINT_GROUP,
    LIBRARY,
    ServiceProviderError,
    UnknownServiceError,
    catalog_names,
    get_service,
    providers,
    register_provider,
    unregister_provider,
)
from tests.mcp_services import tiny_service


class LedgerProvider:
    def __init__(self, fail_on_build: bool = False) -> None:
        self.fail_on_build = fail_on_build

    def names(self) -> list[str]:
        return ["ledger", "crm"]  # "crm" is the library's: the library keeps it

    def service(self, name: str) -> Service | None:
        if name != "ledger":
            return None
        if self.fail_on_build:
            raise RuntimeError("the ledger spec does not compile")
        return tiny_service.service


@pytest.fixture
def ledger() -> Iterator[None]:
    register_provider("test-ledger", LedgerProvider())
    yield
    unregister_provider("test-ledger")


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EntryPoint]]:
    """The entry points this process sees, replaced for one test."""
    points: list[EntryPoint] = []
    monkeypatch.setattr(registry, "entry_points", lambda group: [p for p in points if p.group == group])
    registry._entry_point_providers.cache_clear()
    yield points
    registry._entry_point_providers.cache_clear()


def test_a_provider_registered_in_code_serves_its_services_beside_the_library(ledger: None) -> None:
    names = catalog_names()
    assert names[: len(LIBRARY)] == list(LIBRARY) and names.count("crm") == 1 and "ledger" in names
    assert get_service("ledger") is tiny_service.service
    with Episode.create(["crm", "ledger"], world_seed=0) as episode:
        assert episode.call("ledger", "list_accounts", {}).success
    with pytest.raises(UnknownServiceError, match="unknown service 'ledgr'"):
        get_service("ledgr")
    with pytest.raises(ValueError, match="already registered"):
        register_provider("test-ledger", LedgerProvider())
    with pytest.raises(TypeError, match="must have names"):
        register_provider("nothing", object())  # type: ignore[arg-type]  # what the check refuses


def test_an_entry_point_provider_loads_on_first_use_and_serves_by_name(installed: list[EntryPoint]) -> None:
    installed.append(EntryPoint("ledger", "tests.mcp_services.test_providers:PROVIDER", ENTRY_POINT_GROUP))
    assert "ledger" in catalog_names() and set(providers()) >= {"ledger"}
    assert get_service("ledger") is tiny_service.service


def test_a_provider_that_fails_to_load_is_an_error_naming_it_and_the_library_still_serves(
    installed: list[EntryPoint],
) -> None:
    installed.append(EntryPoint("broken", "tests.mcp_services.no_such_module:provider", ENTRY_POINT_GROUP))
    with pytest.raises(ServiceProviderError, match=r"service provider 'broken' \(tests.mcp_services.no_such_module"
                                                   r":provider.*failed to load: ModuleNotFoundError"):
        catalog_names()
    with pytest.raises(ServiceProviderError, match="'broken'"):
        get_service("stripe")
    assert get_service("crm").name == "crm"


def test_an_entry_point_that_is_not_a_provider_is_refused_by_name(installed: list[EntryPoint]) -> None:
    installed.append(EntryPoint("tuple", "mcp_services.registry:LIBRARY", ENTRY_POINT_GROUP))
    with pytest.raises(ServiceProviderError, match="service provider 'tuple' .* is not a provider"):
        catalog_names()


def test_a_provider_that_fails_to_build_a_service_is_named_with_the_service() -> None:
    register_provider("test-ledger", LedgerProvider(fail_on_build=True))
    try:
        with pytest.raises(ServiceProviderError, match="'test-ledger' failed to build service 'ledger': RuntimeError"):
            get_service("ledger")
    finally:
        unregister_provider("test-ledger")


def test_the_generator_catalog_registers_through_the_installed_entry_point() -> None:
    points = {p.name: p.value for p in entry_points(group=ENTRY_POINT_GROUP)}
    assert points.get("generator") == "generator.catalog:provider", (
        "the compoworld.services entry points are missing: reinstall the package (pip install -e .)"
    )
    from generator.catalog import provider

    assert providers()["generator"] is provider


PROVIDER = LedgerProvider()
