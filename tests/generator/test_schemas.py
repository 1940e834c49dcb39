"""Input-schema hygiene: what is normalised (with a note) and what is rejected (with a reason)."""

from __future__ import annotations

import pytest

from generator.schemas import SchemaRejected, check_schema, mcp_tool_problems, normalise_input_schema


def test_openapi_30_nullable_and_boolean_exclusive_minimum_become_draft_2020_12() -> None:
    result = normalise_input_schema({"type": "object", "properties": {
        "reason": {"type": "string", "nullable": True},
        "weight": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        "count": {"type": "integer", "minimum": 1, "exclusiveMinimum": False},
    }})
    props = result.schema["properties"]
    assert props["reason"]["type"] == ["string", "null"]
    assert props["weight"] == {"type": "number", "exclusiveMinimum": 0}
    assert props["count"] == {"type": "integer", "minimum": 1}
    check_schema(result.schema)


def test_unicode_property_patterns_are_translated_or_dropped_with_a_note() -> None:
    result = normalise_input_schema({"type": "object", "properties": {
        "name": {"type": "string", "pattern": r"^\p{L}[\p{L}\p{N} _-]*$"},
        "code": {"type": "string", "pattern": r"^[^\P{Lu}]+$"},
    }})
    assert "pattern" in result.schema["properties"]["name"]
    assert "pattern" not in result.schema["properties"]["code"]
    assert any("translated pattern" in n for n in result.notes)
    assert any("dropped pattern" in n for n in result.notes)


def test_parameter_names_are_normalised_and_credentials_dropped() -> None:
    result = normalise_input_schema({"type": "object", "required": ["page[size]", "token"], "properties": {
        "page[size]": {"type": "integer"}, "token": {"type": "string"}, "X-Api-Key": {"type": "string"},
        "$filter": {"type": "string"}}})
    assert set(result.schema["properties"]) == {"page_size", "filter"}
    assert result.schema["required"] == ["page_size"]
    assert result.renamed == {"page_size": "page[size]", "filter": "$filter"}
    assert result.schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "#/definitions/Nope"}}}, "unresolvable reference"),
        ({"type": "object", "properties": {"a": {"type": "widget"}}}, "unknown type 'widget'"),
        ({"type": "array"}, "must be an object"),
        ("not a schema", "not a JSON object"),
        ({"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 390} for i in range(200)}},
         "too large"),
    ],
)
def test_broken_schemas_are_rejected_with_a_reason(schema: object, reason: str) -> None:
    with pytest.raises(SchemaRejected, match=reason):
        normalise_input_schema(schema)


def test_local_refs_are_expanded_and_cycles_cut() -> None:
    result = normalise_input_schema({"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}},
                                     "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}})
    child = result.schema["properties"]["node"]["properties"]["child"]
    assert child["description"] == "(recursive schema omitted)"


def test_defaults_and_examples_that_do_not_fit_their_schema_are_dropped() -> None:
    result = normalise_input_schema({"type": "object", "properties": {
        "n": {"type": "integer", "default": "ten", "example": 3}}})
    assert result.schema["properties"]["n"] == {"type": "integer", "examples": [3]}


def test_the_mcp_tool_schema_check_catches_a_non_object_input_schema() -> None:
    assert mcp_tool_problems({"name": "t", "inputSchema": {"type": "object"}}) == []
    assert mcp_tool_problems({"name": "t", "inputSchema": {"type": "string"}})


def test_parameters_that_clash_once_normalised_are_kept_under_distinct_names() -> None:
    result = normalise_input_schema({"type": "object", "properties": {
        "DateSent": {"type": "string"}, "DateSent<": {"type": "string"}, "DateSent>": {"type": "string"},
        "a_b": {}, "a-b": {}}})
    assert set(result.schema["properties"]) == {"DateSent", "DateSent_before", "DateSent_after", "a_b", "a_b_2"}
    assert result.renamed["DateSent_before"] == "DateSent<"


def test_request_wrappers_become_parameters_of_their_own() -> None:
    result = normalise_input_schema({"type": "object", "required": ["id", "body"], "properties": {
        "id": {"type": "string"},
        "body": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "email": {"type": "string"}, "id": {"type": "string"}}}}})
    props = result.schema["properties"]
    assert {"id", "name", "email"} <= set(props)
    assert props["body"]["properties"] == {"id": {"type": "string"}}  # the clashing field stays wrapped
    assert set(result.schema["required"]) == {"id", "name"}
