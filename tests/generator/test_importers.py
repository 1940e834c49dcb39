"""Importers: MCP dumps, OpenAPI 3, Swagger 2 and the shared specs file; never a crash for one bad service."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.importers import SourceError, detect_format, read_source
from generator.importers.raw import RawService
from tests.generator.conftest import MCP_NOTES, OPENAPI_PETCLINIC, SPECS_SAMPLE, SWAGGER_SHOP


def _one(path: Path, fmt: str = "auto") -> RawService:
    services = list(read_source(path, fmt))  # type: ignore[arg-type]
    assert len(services) == 1 and isinstance(services[0], RawService)
    return services[0]


def test_formats_are_detected_from_content() -> None:
    assert detect_format(MCP_NOTES) == "mcp"
    assert detect_format(OPENAPI_PETCLINIC) == "openapi"
    assert detect_format(SWAGGER_SHOP) == "openapi"
    assert detect_format(SPECS_SAMPLE) == "specs-jsonl"


def test_an_mcp_dump_keeps_good_tools_and_flags_bad_names() -> None:
    service = _one(MCP_NOTES)
    assert service.name == "generator_mcp_notes"
    problems = {t.name: t.problem for t in service.tools if t.problem}
    assert "bad name with spaces" in problems and "not a valid MCP tool name" in problems["bad name with spaces"]
    first_get = next(t for t in service.tools if t.name == "get_note")
    assert first_get.read_only is True


def test_an_mcp_json_lines_dump_is_one_service_per_line(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    lines = [{"service": "alpha", "description": "A", "tools": [{"name": "list_items", "inputSchema": {"type": "object"}}]},
             {"service": "beta", "description": "B", "tools": [{"name": "get_item", "inputSchema": {"type": "object"}}]}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n{broken\n")
    services = list(read_source(path, "mcp"))
    assert [s.name for s in services] == ["alpha", "beta", "line_3"]
    assert services[2].problem and "not JSON" in services[2].problem


def test_openapi3_merges_parameters_and_body_and_keeps_response_schemas() -> None:
    service = _one(OPENAPI_PETCLINIC)
    tools = {t.name: t for t in service.tools}
    create = tools["createOwner"]
    assert (create.method, create.path) == ("POST", "/owners")
    assert set(create.input_schema["properties"]) == {"first_name", "last_name", "email", "phone", "city"}
    assert create.input_schema["required"] == ["first_name", "last_name"]
    assert create.output_schema["properties"]["id"] == {"type": "string"}
    assert tools["getOwner"].input_schema["required"] == ["ownerId"]  # path-level parameter via $ref
    assert tools["brokenReport"].problem == "unresolvable reference '#/components/parameters/DoesNotExist'"


def test_swagger2_reads_body_and_form_parameters() -> None:
    service = _one(SWAGGER_SHOP)
    tools = {t.name: t for t in service.tools}
    assert set(tools["createOrder"].input_schema["properties"]) == {"customer_email", "total", "currency", "note"}
    assert tools["attachInvoice"].input_schema["properties"]["file"]["type"] == "file"
    assert service.format == "swagger-2"


def test_the_specs_file_is_streamed_and_filtered_by_name() -> None:
    names = [s.name for s in read_source(SPECS_SAMPLE, "specs-jsonl", keep=lambda n: n != "medium.com")]
    assert "medium.com" not in names and "twilio.com:twilio_fax_v1" in names
    fax = next(s for s in read_source(SPECS_SAMPLE, "specs-jsonl") if s.name == "twilio.com:twilio_fax_v1")
    assert isinstance(fax, RawService) and fax.license == "CC0-1.0"
    assert {t.method for t in fax.tools} == {"GET", "DELETE"}


def test_a_file_that_is_no_known_format_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    with pytest.raises(SourceError, match="cannot tell the format"):
        list(read_source(path))
    with pytest.raises(SourceError, match="no such file"):
        list(read_source(tmp_path / "missing.json"))
