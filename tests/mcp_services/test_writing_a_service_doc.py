"""The service shown in docs/writing-a-service.md is real: it loads, seeds, and its rules hold."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from mcp_services.kernel import Episode, Service

DOC = Path(__file__).parents[2] / "docs" / "writing-a-service.md"


@pytest.fixture(scope="module")
def loyalty() -> Service:
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert code is not None
    module = types.ModuleType("loyalty_doc_example")
    sys.modules[module.__name__] = module  # dataclasses and typing resolve annotations through it
    exec(compile(code.group(1), str(DOC), "exec"), module.__dict__)  # noqa: S102 - our own documentation
    service: Service = module.service
    return service


def test_the_documented_service_is_under_300_lines_and_declares_intents(loyalty: Service) -> None:
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert code is not None and len(code.group(1).splitlines()) < 300
    assert {t.intent for t in loyalty.tools.values()} == {"find", "pay"}
    assert loyalty.entities["redemption"].definition.field("member_id").role == "member"  # type: ignore[union-attr]


def test_the_documented_service_redeems_points_and_refuses_more_than_held(loyalty: Service) -> None:
    episode = Episode([loyalty], 0)
    member = episode.call("loyalty", "search_members", {"limit": 1}).data["items"][0]
    assert member["is_gold"] == (member["tier"] == "gold")
    too_many = episode.call("loyalty", "redeem_points", {"member_id": member["id"], "points": member["points"] + 1})
    assert too_many.error_code == "invalid_argument" and not episode.diff()["loyalty"]
    done = episode.call("loyalty", "redeem_points", {"member_id": member["id"], "points": 1, "note": "Mug"})
    assert done.success and done.data["status"] == "pending"
    after = episode.call("loyalty", "search_members", {"query": member["email"]}).data["items"][0]
    assert after["points"] == member["points"] - 1


def test_the_guide_states_the_contract_s_minimum_tool_count_and_what_the_example_lacks(loyalty: Service) -> None:
    from tests.mcp_services.test_library_contract import MIN_TOOLS

    text = " ".join(DOC.read_text().split())
    assert f"**at least {MIN_TOOLS} tools** (`MIN_TOOLS`)" in text
    assert f"at least {MIN_TOOLS} tools, where the example here has {len(loyalty.tools)})" in text
    assert MIN_TOOLS - len(loyalty.tools) == 10 and "to join the library it needs ten more tools" in text


def test_the_documented_service_passes_the_contract_s_checks_of_each_tool(loyalty: Service) -> None:
    from tests.mcp_services import test_library_contract as contract

    seeded = contract.Seeded(loyalty)
    try:
        for tool in loyalty.tools.values():
            contract.check_described(tool)
            assert contract.TOOL_NAME.match(tool.name)
            seeded.reset()
            contract.test_bad_arguments_are_refused_and_change_nothing("loyalty", tool.name, seeded)
            if contract.id_params(tool):
                seeded.reset()
                contract.test_unknown_ids_are_refused_and_change_nothing("loyalty", tool.name, seeded)
            if tool.effect == "read":
                seeded.reset()
                contract.test_read_tool_changes_nothing("loyalty", tool.name, seeded)
    finally:
        seeded.episode.close()
