"""The round-trip suite (issue 23): implemented tools behave together as the product's do, and simulated
reads answer from the episode's rows. The whole catalog is measured by ``bench/bench_generator.py
--roundtrip``; CI runs a sample."""

from __future__ import annotations

from functools import cache

import pytest

from generator.catalog import PACKAGE_CATALOG, Catalog
from generator.compiler import compile_service
from generator.gate.contracts import gate_service
from generator.roundtrip import round_trips, simulated_reads
from generator.spec import load_spec
from tests.generator.test_invariants import billing, chat, files

#: Services of the shipped catalog the suite runs on in CI: products users automate, small enough to be quick.
SAMPLE = ("slack", "googleapis_gmail", "googleapis_calendar", "box", "personio_personnel", "twilio_messaging_v1",
          "salesloft", "apideck_crm", "hubapi_crm", "notion", "asana", "trello",
          # every call needs a tenant header, a list is scoped by it, a search needs its term: the suite fills them
          "xero_payroll_au", "apideck_sms", "hubapi_marketing")
SHARE = 0.95


@cache
def _catalog() -> Catalog:
    return Catalog(PACKAGE_CATALOG)


def _implemented(name: str) -> list[str]:
    return [t.name for t in _catalog().index[name].tools if t.status == "implemented"]


@pytest.mark.parametrize("make", [chat, billing, files], ids=["chat", "billing", "files"])
def test_the_suite_passes_for_what_the_gate_implements_and_flags_a_broken_pair(make: object) -> None:
    spec = make()  # type: ignore[operator]
    verdict, kept = gate_service(spec)
    implemented = [t.name for t in verdict.tools if t.status == "implemented"]
    assert kept is not None and implemented
    trips = round_trips(compile_service(kept), implemented)
    assert trips.share >= SHARE, trips.failing()


def test_a_create_that_drops_what_it_was_given_fails_its_trip() -> None:
    data = billing().model_dump(exclude_none=True)
    create = next(t for t in data["tools"] if t["name"] == "post_invoices")
    create["bindings"]["description"] = {"role": "option"}  # accepted, never stored
    broken = load_spec(data)
    failing = round_trips(compile_service(broken), [t.name for t in broken.tools]).failing()
    assert "description" in failing.get("post_invoices", "")


@pytest.mark.parametrize("name", SAMPLE)
def test_the_shipped_services_pass_their_round_trips(name: str) -> None:
    if name not in _catalog():
        pytest.skip(f"{name} is not in this catalog")
    trips = round_trips(_catalog().service(name), _implemented(name))
    assert len(trips.tools) >= 3
    assert trips.share >= SHARE, sorted(trips.failing().items())[:5]


def test_simulated_reads_of_the_sample_answer_from_state() -> None:
    reads = from_state = 0
    for name in SAMPLE:
        if name in _catalog():
            found = simulated_reads(_catalog().service(name))
            reads += len(found.reads)
            from_state += len(found.from_state)
    assert reads > 20
    assert from_state / reads >= 0.9
    # a read of no entity (Box's OAuth authorize, whose documentation names no field) is answered from its
    # specification, never from a made-up row, and is counted apart
    box = simulated_reads(_catalog().service("box"))
    assert "get_authorize" in box.from_spec and "get_authorize" not in box.reads
