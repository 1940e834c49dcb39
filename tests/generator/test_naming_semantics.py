"""Names the generator emits, and the semantic types it reads from field names and schemas."""

from __future__ import annotations

import random
import re

import pytest

from generator.naming import param_name, plural, service_name, singular, snake, tool_name
from generator.regexgen import string_matching
from generator.semantics import infer_semantic
from mcp_services.kernel.tools import TOOL_NAME_PATTERN


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("getActionsByIdAction", "get_actions_by_id_action"), ("chat.postMessage", "chat_post_message"),
     ("page[size]", "page_size"), ("HTTPResponseCode", "http_response_code"), ("X-Request-Id", "x_request_id")],
)
def test_snake_case_handles_every_convention(raw: str, expected: str) -> None:
    assert snake(raw) == expected


@pytest.mark.parametrize(
    ("noun", "single"),
    [("categories", "category"), ("addresses", "address"), ("statuses", "status"), ("people", "person"),
     ("boxes", "box"), ("cards", "card"), ("status", "status"), ("purchases", "purchase"), ("data", "data")],
)
def test_singular_and_plural_are_inverse_enough_for_table_names(noun: str, single: str) -> None:
    assert singular(noun) == single
    assert singular(plural(single)) == single


def test_service_and_tool_names_fit_the_kernel() -> None:
    assert service_name("slack.com") == "slack"
    assert service_name("atlassian.com:jira") == "atlassian_jira"
    assert service_name("twilio.com:twilio_fax_v1") == "twilio_fax_v1"
    long = tool_name("get_members_board_backgrounds_by_id_member_by_id_board_background")
    assert TOOL_NAME_PATTERN.match(long) and len(long) <= 48
    assert long == tool_name("get_members_board_backgrounds_by_id_member_by_id_board_background")  # stable
    assert param_name("$filter") == "filter" and param_name("page[size]") == "page_size"


@pytest.mark.parametrize(
    ("name", "schema", "entity", "semantic"),
    [
        ("email", {"type": "string"}, None, "email_address"),
        ("customer_email", {"type": "string"}, None, "email_address"),
        ("mobile", {"type": "string"}, None, "phone_number"),
        ("name", {"type": "string"}, "customer", "person_name"),
        ("name", {"type": "string"}, "company", "company_name"),
        ("name", {"type": "string"}, "board", None),
        ("amount", {"type": "number"}, None, "money"),
        ("amount", {"type": "string"}, None, None),
        ("currency", {"type": "string"}, None, "currency"),
        ("created_at", {"type": "string"}, None, "datetime"),
        ("due", {"type": "string", "format": "date"}, None, "date"),
        ("website", {"type": "string"}, None, "url"),
        ("quantity", {"type": "integer"}, None, "quantity"),
        ("status", {"type": "string", "enum": ["a", "b"]}, None, None),
        ("subject", {"type": "string"}, None, "subject"),
    ],
)
def test_fields_map_to_the_shared_semantic_types(name: str, schema: dict, entity: str | None, semantic: str | None) -> None:
    assert infer_semantic(name, schema, entity) == semantic


@pytest.mark.parametrize("pattern", [r"^[0-9a-f]{24}$", r"^ch_[A-Za-z0-9]{8}$", r"^(foo|bar)-\d{3}$", r"^[\w.-]{3,10}$"])
def test_strings_are_generated_to_match_patterns(pattern: str) -> None:
    value = string_matching(pattern, random.Random(1))
    assert value is not None and re.search(pattern, value)
