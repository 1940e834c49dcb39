"""Compiled services behave like hand-written ones: typed state, rules, errors, world-seeded rows, MCP."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from generator.compiler import compile_service
from generator.spec import ServiceSpec, load_spec
from tests.generator.conftest import notes_spec_data
from mcp_services.kernel import Episode
from mcp_services.registry import get_service
from mcp_services.serving.server import build_server


@pytest.fixture
def episode(notes_spec: ServiceSpec) -> Any:
    with Episode([compile_service(notes_spec)], world_seed=3) as ep:
        yield ep


def ok(ep: Episode, tool: str, args: dict[str, Any] | None = None) -> Any:
    result = ep.call("notes", tool, args or {})
    assert result.success, result.envelope()
    return result.data


def err(ep: Episode, tool: str, args: dict[str, Any]) -> tuple[str, str]:
    before = ep.dump()
    result = ep.call("notes", tool, args)
    assert not result.success
    assert ep.dump() == before, "a failed call changed the state"
    return str(result.error_code), result.error_message or ""


def test_seeded_rows_come_from_the_world(episode: Episode) -> None:
    emails = {p.email for p in episode.world.people}
    notebooks = episode.dump()["notes"]["notebooks"]
    assert len(notebooks) == 8
    assert all(row["owner_email"] in emails for row in notebooks.values())
    notes = episode.dump()["notes"]["notes"]
    assert {row["notebook_id"] for row in notes.values()} <= set(notebooks)
    assert {row["status"] for row in notes.values()} == {"active", "archived"}


def test_create_then_get_round_trips_and_ids_continue_the_sequence(episode: Episode) -> None:
    created = ok(episode, "create_note", {"notebook_id": "nb_0002", "title": "Q3 plan", "body": "Draft"})
    assert created["id"] == "note_0011" and created["status"] == "active" and created["pinned"] is False
    assert created["created_at"] == episode.world.now
    assert ok(episode, "get_note", {"note_id": created["id"]}) == created


def test_list_filters_by_parent_and_field_and_pages_with_a_cursor(episode: Episode) -> None:
    first = ok(episode, "list_notes", {"limit": 4})
    assert len(first["items"]) == 4 and first["total"] == 10 and first["next_cursor"] == "4"
    rest = ok(episode, "list_notes", {"limit": 100, "cursor": first["next_cursor"]})
    assert rest["next_cursor"] is None and len(rest["items"]) == 6
    archived = ok(episode, "list_notes", {"status": "archived"})["items"]
    assert archived and all(n["status"] == "archived" for n in archived)
    book = archived[0]["notebook_id"]
    assert all(n["notebook_id"] == book for n in ok(episode, "list_notes", {"notebook_id": book})["items"])
    assert err(episode, "list_notes", {"cursor": "abc"})[0] == "invalid_argument"


def test_search_matches_text_fields(episode: Episode) -> None:
    title = ok(episode, "get_note", {"note_id": "note_0001"})["title"]
    found = ok(episode, "search_notes", {"query": title.split()[0]})["items"]
    assert "note_0001" in {n["id"] for n in found}


def test_transitions_keep_their_rules(episode: Episode) -> None:
    active = next(n for n in ok(episode, "list_notes", {"status": "active"})["items"])
    assert ok(episode, "archive_note", {"note_id": active["id"]})["status"] == "archived"
    code, message = err(episode, "archive_note", {"note_id": active["id"]})
    assert code == "invalid_state" and "already" in message
    assert ok(episode, "pin_note", {"note_id": active["id"]})["pinned"] is True
    assert err(episode, "pin_note", {"note_id": active["id"]})[0] == "invalid_state"


def test_update_changes_only_what_is_passed(episode: Episode) -> None:
    before = ok(episode, "get_note", {"note_id": "note_0003"})
    after = ok(episode, "update_note", {"note_id": "note_0003", "title": "Renamed"})
    assert after["title"] == "Renamed" and after["body"] == before["body"]
    code, message = err(episode, "update_note", {"note_id": "note_0003"})
    assert code == "invalid_argument" and "at least one field" in message


def test_deleting_a_parent_deletes_what_it_owns(episode: Episode) -> None:
    owned = [n for n in episode.dump()["notes"]["notes"].values() if n["notebook_id"] == "nb_0001"]
    assert owned
    assert ok(episode, "delete_notebook", {"notebook_id": "nb_0001"}) == {"id": "nb_0001", "deleted": True}
    remaining = episode.dump()["notes"]["notes"].values()
    assert not [n for n in remaining if n["notebook_id"] == "nb_0001"]
    assert err(episode, "get_note", {"note_id": owned[0]["id"]})[0] == "not_found"


def test_bad_input_is_refused_with_a_message_that_says_how_to_fix_it(episode: Episode) -> None:
    code, message = err(episode, "create_note", {"notebook_id": "nb_0002", "title": "", "colour": "red"})
    assert code == "invalid_argument"
    assert "'colour' is not a parameter of this tool" in message and "'title'" in message
    code, message = err(episode, "create_note", {"notebook_id": "nb_9999", "title": "x"})
    assert code == "not_found" and "nb_9999" in message
    code, message = err(episode, "get_note", {"note_id": "note_9999"})
    assert code == "not_found" and "list_notes" in message


def test_a_simulated_tool_answers_from_the_world_model_consistently(episode: Episode) -> None:
    first = ok(episode, "suggest_title", {"text": "Quarterly numbers"})
    assert isinstance(first["title"], str) and first["title"]
    assert ok(episode, "suggest_title", {"text": "Quarterly numbers"}) == first


def test_generated_and_hand_written_services_share_one_episode_and_world(notes_spec: ServiceSpec) -> None:
    with Episode([compile_service(notes_spec), get_service("crm")], world_seed=0) as ep:
        owner = next(iter(ep.dump()["notes"]["notebooks"].values()))["owner_email"]
        contact = ep.call("crm", "find_contact_by_email", {"email": owner})
        person = {p.email for p in ep.world.people}
        assert owner in person
        assert contact.success or contact.error_code == "not_found"  # team members are not CRM contacts
        assert ep.call("notes", "list_notes", {}).success


async def test_an_mcp_client_lists_and_calls_a_compiled_service(notes_spec: ServiceSpec) -> None:
    episode = Episode([compile_service(notes_spec)], world_seed=0)
    async with Client(build_server(episode)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "notes__create_note" in tools and tools["notes__get_note"].annotations.read_only_hint is True
        result = await client.call_tool("notes__get_note", {"note_id": "note_0001"})
        missing = await client.call_tool("notes__get_note", {"note_id": "nope"})
    assert result.is_error is False and result.structured_content["data"]["id"] == "note_0001"
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"


def test_entities_are_registered_on_the_kernel_and_search_their_text_fields(notes_spec: ServiceSpec) -> None:
    service = compile_service(notes_spec)
    assert set(service.entities) == {"notebook", "note"}
    note = service.entities["note"]
    assert note.table.name == "notes" and note.search_columns == ("title", "body", "status")
    assert note.definition.field("notebook_id") is not None and note.definition.field("notebook_id").ref == "notebook"


def test_search_is_the_kernels_one_escaped_word_search(episode: Episode) -> None:
    exact = ok(episode, "create_note", {"notebook_id": "nb_0001", "title": "Budget 50% done"})
    other = ok(episode, "create_note", {"notebook_id": "nb_0001", "title": "Budget 500 done"})
    assert [n["id"] for n in ok(episode, "search_notes", {"query": "50%"})["items"]] == [exact["id"]]
    both = {n["id"] for n in ok(episode, "search_notes", {"query": "DONE budget"})["items"]}
    assert both == {exact["id"], other["id"]}  # every word, any order, any case
    assert ok(episode, "search_notes", {"query": "budget zzqx"})["items"] == []
    code, message = err(episode, "search_notes", {"query": "word " * 200})
    assert code == "invalid_argument" and "at most 500 characters" in message


def test_a_field_named_like_a_python_keyword_is_stored_and_returned() -> None:
    data = notes_spec_data()
    data["entities"][1]["fields"].append({"name": "from", "type": "string", "semantic": "email_address"})
    create = data["tools"][0]
    create["parameters"]["properties"]["from"] = {"type": "string"}
    create["bindings"]["from"] = {"role": "field", "column": "from"}
    update = next(t for t in data["tools"] if t["name"] == "update_note")
    update["parameters"]["properties"]["from"] = {"type": "string"}
    update["bindings"]["from"] = {"role": "field", "column": "from"}
    with Episode([compile_service(load_spec(data))], world_seed=3) as ep:
        created = ok(ep, "create_note", {"notebook_id": "nb_0001", "title": "Hi", "from": "ana@example.com"})
        assert created["from"] == "ana@example.com"
        changed = ok(ep, "update_note", {"note_id": created["id"], "from": "bo@example.com"})
        assert changed["from"] == "bo@example.com" and changed["title"] == "Hi"
        assert ep.dump()["notes"]["notes"][created["id"]]["from"] == "bo@example.com"


def test_a_path_parameter_takes_the_id_as_a_number_or_as_its_digits() -> None:
    """SendGrid returns list ids as numbers and documents {list_id} as a string in one path, an integer in
    another: a URL carries either, so both forms name the row; a body parameter keeps its declared type."""
    from tests.generator.test_invariants import _plan, _rest

    text, number = {"type": "string"}, {"type": "integer"}
    spec = _plan([
        _rest("post_lists", "POST", "/lists", "Create a list.", {"name": text}, ["name"]),
        _rest("get_lists", "GET", "/lists", "Retrieve all lists.", {"limit": number}),
        _rest("get_list", "GET", "/lists/{list_id}", "Retrieve a single list.", {"list_id": text}, ["list_id"]),
        _rest("patch_list", "PATCH", "/lists/{list_id}", "Update a list.", {"list_id": number, "name": text},
              ["list_id"]),
    ], "notes")  # the helpers here call the service "notes"
    with Episode([compile_service(spec)], 0) as ep:
        created = ok(ep, "post_lists", {"name": "Newsletter"})
        assert isinstance(created["id"], int)
        assert ok(ep, "get_list", {"list_id": created["id"]})["name"] == "Newsletter"
        assert ok(ep, "patch_list", {"list_id": str(created["id"]), "name": "Digest"})["name"] == "Digest"
        code, message = err(ep, "post_lists", {"name": 7})
        assert code == "invalid_argument" and "'name' must be of type string" in message
