"""Shared fixtures: one small task set, generated once per test session on part of the library."""

from __future__ import annotations

import pytest

from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.graph import build_graph
from mcp_services.tasks.spec import TaskSpec

#: Services the composer tests compose (every archetype family of the core library, quick to seed).
SERVICES = ("crm", "helpdesk", "mailbox", "payments", "accounting", "files", "chat", "calendar", "sms")
SEED = 0
N = 30


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="session")
def graph(catalog: Catalog):  # type: ignore[no-untyped-def]
    return build_graph(catalog)


@pytest.fixture(scope="session")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=N, seed=SEED, services=SERVICES), catalog)


@pytest.fixture(scope="session")
def tasks(generated: tuple[list[TaskSpec], GenerateReport]) -> list[TaskSpec]:
    return generated[0]
