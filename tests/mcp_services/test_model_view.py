"""The model's view of a tool: compact, derived from the JSON schemas alone, same tools and arguments as the wire."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from mcp_services import Episode
from mcp_services.registry import LIBRARY, get_services
from mcp_services.serving.model_view import model_parameters, model_summary, model_tool, result_shape, tool_card
from mcp_services.serving.server import build_server
from mcp_services.serving.surface import ToolSurface

ALL_TOOLS = [tool for service in get_services(list(LIBRARY)) for tool in service.tools.values()]


def _nodes(schema: Any) -> list[dict[str, Any]]:
    """Every schema object inside ``schema`` (property maps are maps of names, not schemas)."""
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        found.append(schema)
        for key, value in schema.items():
            children = value.values() if key == "properties" and isinstance(value, dict) else [value]
            for child in children:
                found.extend(_nodes(child))
    elif isinstance(schema, list):
        for item in schema:
            found.extend(_nodes(item))
    return found


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.qualified_name)
def test_every_library_tool_keeps_its_parameters_without_the_wire_only_keywords(tool: Any) -> None:
    full = tool.input_schema
    compact = model_parameters(full)
    jsonschema.Draft202012Validator.check_schema(compact)
    assert compact["type"] == "object"
    assert list(compact["properties"]) == list(full.get("properties", {}))  # same names, same order
    assert compact.get("required", []) == full.get("required", [])
    for node in _nodes(compact):
        assert not {"title", "pattern", "minLength", "maxLength", "default", "$ref", "$defs"} & set(node), node
        assert not any(key.startswith("x-") for key in node), node
        assert {"type": "null"} not in node.get("anyOf", []), node
    for name, schema in full.get("properties", {}).items():
        if "description" in schema:
            assert compact["properties"][name]["description"] == " ".join(schema["description"].split())
    for enum_holder in (n for n in _nodes(full) if "enum" in n):  # every enum survives
        assert any(n.get("enum") == enum_holder["enum"] for n in _nodes(compact))
    assert len(json.dumps(compact)) < len(json.dumps(full))


def test_the_arguments_the_reference_plans_pass_validate_against_the_model_view() -> None:
    # Same arguments accepted: what a correct call sends fits the compact schema, and the server still checks the full one.
    from composer.generate import GenerateConfig, generate

    tasks, _ = generate(GenerateConfig(n=12, seed=0))
    by_name = {tool.qualified_name: tool for tool in ALL_TOOLS}
    checked = 0
    for task in tasks:
        for step in task.plan:
            tool = by_name[f"{step.service}__{step.tool}"]
            jsonschema.validate(dict(step.arguments), model_parameters(tool.input_schema))
            checked += 1
    assert checked >= 20  # calls of a dozen tasks, most of them different tools


def test_optional_values_refs_and_nested_descriptions_are_compacted() -> None:
    schema = {
        "$defs": {"Line": {"title": "Line", "description": "One line.", "type": "object",
                           "properties": {"sku": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "null"}],
                                                  "default": None, "title": "Sku"}},
                           "required": []}},
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}, "description": "The lines."},
            "when": {"anyOf": [{"type": "string", "format": "date", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
                               {"type": "null"}], "default": None, "description": "A  day,\n  if any."},
            "limit": {"type": "integer", "default": 20, "minimum": 1, "maximum": 100},
            "tags": {"type": "object", "additionalProperties": {"type": "string", "x-semantic-type": "tag"}},
        },
        "required": ["lines"],
    }
    assert model_parameters(schema) == {
        "type": "object",
        "properties": {
            "lines": {"type": "array", "description": "The lines.",
                      "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
            "when": {"type": "string", "description": "A day, if any.", "format": "date"},
            "limit": {"type": "integer"},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["lines"],
    }


def test_a_recursive_schema_ends_in_a_bare_type() -> None:
    schema = {"$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
              "type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}}}
    assert model_parameters(schema)["properties"]["root"] == {
        "type": "object", "properties": {"child": {"type": "object"}}
    }
    assert result_shape(schema) == "{root?: {child?}}"


def test_a_result_is_described_by_its_shape() -> None:
    data = {
        "$defs": {"Item": {"type": "object", "properties": {
            "id": {"type": "string", "x-semantic-type": "id:crm.contact"},
            "phone": {"anyOf": [{"type": "string", "pattern": "^\\+[0-9]+$"}, {"type": "null"}]},
            "to": {"type": "array", "items": {"type": "string", "format": "email"}},
            "tags": {"type": "array", "items": {"type": "string"}},
        }, "required": ["id", "phone", "to", "tags"]}},
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}, "total": {"type": "integer"},
                       "next_cursor": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["items", "total"],
    }
    assert result_shape(data) == "{items: [{id, phone, to: [email], tags: [string]}], total, next_cursor?}"
    assert result_shape({"type": "array", "items": {"type": "integer"}}) == "[integer]"
    assert result_shape({"type": "boolean"}) == "boolean"


def test_a_summary_is_the_first_sentence() -> None:
    assert model_summary("Search the mailbox, newest first. Like Gmail search.") == "Search the mailbox, newest first."
    assert model_summary("Log a call, e.g. a follow-up. Then more.") == "Log a call, e.g. a follow-up."
    assert model_summary("No full stop here") == "No full stop here"


def test_the_wire_keeps_the_full_schemas_and_the_model_gets_the_compact_view() -> None:
    import anyio

    episode = Episode.create(["crm", "mailbox"], 0)
    surface = ToolSurface(episode, "direct")
    wire = anyio.run(build_server(episode, "direct").list_tools)
    specs = {tool.qualified_name: tool for service in episode.services.values() for tool in service.tools.values()}
    assert [t.name for t in wire] == [t["function"]["name"] for t in surface.openai_tools()]
    for listed, model in zip(wire, surface.openai_tools(), strict=True):
        spec = specs[listed.name]
        assert listed.input_schema == spec.input_schema and listed.output_schema == spec.output_schema
        assert model == model_tool(spec.qualified_name, spec.description, spec.input_schema)
    email = next(t for t in wire if t.name == "mailbox__send_email").input_schema
    assert "x-semantic-type" in json.dumps(email) and "x-semantic-type" not in json.dumps(surface.openai_tools())


def test_discover_mode_lists_summaries_and_describes_a_tool_by_its_model_view() -> None:
    episode = Episode.create(["mailbox"], 0)
    surface = ToolSurface(episode, "discover")
    spec = episode.services["mailbox"].tools["search_messages"]
    listed = surface.call("list_tools", {"service": "mailbox"}).result.data
    assert next(t for t in listed if t["name"] == "search_messages")["description"] == model_summary(spec.description)
    card = surface.call("describe_tool", {"service": "mailbox", "tool": "search_messages"}).result.data
    assert card == tool_card("mailbox", "search_messages", "read", spec.description, spec.input_schema,
                             spec.data_schema)
    assert card["description"] == " ".join(spec.description.split())  # the whole description, on one line
    assert card["returns"].startswith("{items: [{id, thread_id, from_email,") and "next_cursor" in card["returns"]
    assert "x-semantic-type" not in json.dumps(card)


def test_a_generated_service_gets_the_same_kind_of_view() -> None:
    from mcp_services.registry import catalog_names, get_service

    generated = [name for name in catalog_names() if name not in LIBRARY]
    if not generated:
        pytest.skip("no generated services in this installation")
    service = get_service(generated[0])
    for tool in service.tools.values():
        compact = model_parameters(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(compact)
        assert list(compact["properties"]) == list(tool.input_schema.get("properties", {}))
        assert result_shape(tool.data_schema)
