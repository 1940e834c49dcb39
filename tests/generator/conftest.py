from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.spec import ServiceSpec, load_spec

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MCP_NOTES = FIXTURES / "generator_mcp_notes.json"
OPENAPI_PETCLINIC = FIXTURES / "generator_openapi_petclinic.json"
SWAGGER_SHOP = FIXTURES / "generator_swagger_shop.json"
SPECS_SAMPLE = FIXTURES / "generator_specs_sample.jsonl"


def notes_spec_data() -> dict[str, Any]:
    """A small hand-written spec: notebooks own notes; notes can be archived and pinned."""
    note_id = {"type": "string", "x-semantic-type": "id:notes.note"}
    book_id = {"type": "string", "x-semantic-type": "id:notes.notebook"}
    return {
        "name": "notes",
        "title": "Notes",
        "description": "Notebooks and the notes in them.",
        "entities": [
            {"name": "notebook", "table": "notebooks", "key": {"prefix": "nb"}, "label": "name",
             "fields": [{"name": "name", "type": "string", "semantic": "subject"},
                        {"name": "owner_email", "type": "string", "semantic": "email_address", "format": "email"}]},
            {"name": "note", "table": "notes", "key": {"prefix": "note"}, "label": "title",
             "fields": [{"name": "notebook_id", "type": "string", "ref": "notebook", "owner": True,
                         "semantic": "id:notes.notebook"},
                        {"name": "title", "type": "string", "semantic": "subject"},
                        {"name": "body", "type": "string", "semantic": "text"},
                        {"name": "status", "type": "string", "enum": ["active", "archived"]},
                        {"name": "pinned", "type": "boolean"}],
             "state": {"field": "status", "values": ["active", "archived"], "initial": "active", "terminal": ["archived"]}},
        ],
        "tools": [
            {"name": "create_note", "effect": "write", "description": "Create a note in a notebook.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["notebook_id", "title"],
                            "properties": {"notebook_id": book_id, "title": {"type": "string", "minLength": 1},
                                           "body": {"type": "string"}}},
             "behaviour": {"kind": "create", "entity": "note"},
             "bindings": {"notebook_id": {"role": "parent", "entity": "notebook", "column": "notebook_id"},
                          "title": {"role": "field", "column": "title"}, "body": {"role": "field", "column": "body"}}},
            {"name": "get_note", "effect": "read", "description": "Get one note.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["note_id"],
                            "properties": {"note_id": note_id}},
             "behaviour": {"kind": "get", "entity": "note"}, "bindings": {"note_id": {"role": "key", "column": "id"}}},
            {"name": "list_notes", "effect": "read", "description": "List a notebook's notes.",
             "parameters": {"type": "object", "additionalProperties": False,
                            "properties": {"notebook_id": book_id, "status": {"type": "string", "enum": ["active", "archived"]},
                                           "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                                           "cursor": {"type": "string"}}},
             "behaviour": {"kind": "list", "entity": "note"},
             "bindings": {"notebook_id": {"role": "parent", "entity": "notebook", "column": "notebook_id"},
                          "status": {"role": "filter", "column": "status"}, "limit": {"role": "limit"},
                          "cursor": {"role": "cursor"}}},
            {"name": "update_note", "effect": "write", "description": "Change a note's title or body.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["note_id"],
                            "properties": {"note_id": note_id, "title": {"type": "string"}, "body": {"type": "string"}}},
             "behaviour": {"kind": "update", "entity": "note"},
             "bindings": {"note_id": {"role": "key"}, "title": {"role": "field", "column": "title"},
                          "body": {"role": "field", "column": "body"}}},
            {"name": "delete_notebook", "effect": "write", "description": "Delete a notebook and its notes.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["notebook_id"],
                            "properties": {"notebook_id": book_id}},
             "behaviour": {"kind": "delete", "entity": "notebook"}, "bindings": {"notebook_id": {"role": "key"}}},
            {"name": "archive_note", "effect": "write", "description": "Archive a note.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["note_id"],
                            "properties": {"note_id": note_id}},
             "behaviour": {"kind": "transition", "entity": "note",
                           "transition": {"field": "status", "to": "archived", "allowed_from": ["active"]}},
             "bindings": {"note_id": {"role": "key"}}},
            {"name": "pin_note", "effect": "write", "description": "Pin a note.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["note_id"],
                            "properties": {"note_id": note_id}},
             "behaviour": {"kind": "transition", "entity": "note",
                           "transition": {"field": "pinned", "to": True, "allowed_from": [False]}},
             "bindings": {"note_id": {"role": "key"}}},
            {"name": "search_notes", "effect": "read", "description": "Search notes by text.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["query"],
                            "properties": {"query": {"type": "string"}}},
             "behaviour": {"kind": "search", "entity": "note"}, "bindings": {"query": {"role": "search"}}},
            {"name": "suggest_title", "effect": "read", "description": "Suggest a title for a text.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["text"],
                            "properties": {"text": {"type": "string"}}},
             "result": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
             "behaviour": {"kind": "simulated"}},
        ],
    }


@pytest.fixture
def notes_spec() -> ServiceSpec:
    return load_spec(notes_spec_data())


@pytest.fixture
def fresh_catalogs() -> Iterator[None]:
    """Forget cached catalog folders before and after a test that points COMPOWORLD_CATALOG elsewhere."""
    from generator.catalog import catalogs

    catalogs.cache_clear()
    yield
    catalogs.cache_clear()
