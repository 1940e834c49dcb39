"""Reading intent from REST paths and tool names, and assembling entities and bindings."""

from __future__ import annotations

from typing import Any

import pytest

from generator.importers.raw import RawService, RawTool
from generator.planner import plan_service
from generator.planner.intents import PreparedTool, analyse
from generator.schemas import normalise_input_schema


def _tool(name: str, method: str | None = None, path: str | None = None, props: dict[str, Any] | None = None,
          required: list[str] | None = None) -> PreparedTool:
    schema = normalise_input_schema({"type": "object", "properties": props or {}, "required": required or []})
    return PreparedTool(name=name, source=name, description="", schema=schema.schema, method=method, path=path,
                        renamed=schema.renamed)


@pytest.mark.parametrize(
    ("method", "path", "props", "kind", "entity", "extra"),
    [
        ("GET", "/v1/boards/{idBoard}/lists", {"idBoard": {"type": "string"}}, "list", "list", {"parents": [("board", ["idBoard"])]}),
        ("POST", "/v1/boards/{idBoard}/lists", {"idBoard": {"type": "string"}, "name": {"type": "string"}}, "create", "list", {}),
        ("GET", "/v1/customers/{customer}", {"customer": {"type": "string"}}, "get", "customer", {"keys": {"customer": "id"}}),
        ("DELETE", "/v1/customers/{customer}", {"customer": {"type": "string"}}, "delete", "customer", {}),
        ("POST", "/v1/charges/{charge}/capture", {"charge": {"type": "string"}}, "transition", "charge", {"verb": "capture"}),
        ("POST", "/v1/charges/{charge}/refunds", {"charge": {"type": "string"}}, "create", "refund", {}),
        ("GET", "/users/me", {}, "get", "user", {"current": True}),
        ("GET", "/search/issues", {"q": {"type": "string"}}, "search", "issue", {}),
        ("PUT", "/repos/{owner}/{repo}", {"owner": {"type": "string"}, "repo": {"type": "string"}}, "update", "repo",
         {"keys": {"owner": "owner", "repo": "repo"}}),
        ("DELETE", "/posts/{id}/like", {"id": {"type": "string"}}, "transition", "post", {"toggle_off": True}),
        ("PUT", "/cards/{idCard}/closed", {"idCard": {"type": "string"}, "value": {"type": "string"}}, "update", "card",
         {"setter": ("value", "closed")}),
    ],
)
def test_rest_paths_and_verbs_say_what_a_tool_does(method: str, path: str, props: dict, kind: str, entity: str,
                                                   extra: dict[str, Any]) -> None:
    intent = analyse(_tool("t", method, path, props), frozenset())
    assert (intent.kind, intent.entity) == (kind, entity)
    for key, value in extra.items():
        assert getattr(intent, key) == value


@pytest.mark.parametrize(
    ("name", "path", "props", "required", "kind", "entity"),
    [
        ("chat_post_message", "/chat.postMessage", {"channel": {"type": "string"}, "text": {"type": "string"}}, ["channel"], "send", "message"),
        ("conversations_list", "/conversations.list", {"limit": {"type": "integer"}}, [], "list", "conversation"),
        ("admin_apps_approve", "/admin.apps.approve", {"app_id": {"type": "string"}}, [], "transition", "app"),
        ("list_open_issues", None, {}, [], "list", "open_issue"),
        ("create_an_issue", None, {"title": {"type": "string"}}, ["title"], "create", "issue"),
        ("get_user_by_email", None, {"email": {"type": "string"}}, ["email"], "get", "user"),
        ("summarize_notebook", None, {"notebook_id": {"type": "string"}}, ["notebook_id"], "simulated", None),
    ],
)
def test_rpc_and_mcp_names_say_what_a_tool_does(name: str, path: str | None, props: dict, required: list[str],
                                                kind: str, entity: str | None) -> None:
    intent = analyse(_tool(name, "POST" if path else None, path, props, required), frozenset())
    assert intent.kind == kind
    if entity is not None:
        assert intent.entity == entity
    else:
        assert intent.reason


def _service(tools: list[RawTool], name: str = "shop") -> RawService:
    return RawService(name=name, tools=tools, description="A shop.")


def test_a_planned_service_has_entities_keys_relations_and_states() -> None:
    owner_id = {"type": "string"}
    plan = plan_service(_service([
        RawTool("listOwners", method="GET", path="/owners", input_schema={"type": "object", "properties": {"city": {"type": "string"}, "limit": {"type": "integer"}}}),
        RawTool("createOwner", method="POST", path="/owners", input_schema={"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"}}, "required": ["name"]}),
        RawTool("getOwner", method="GET", path="/owners/{ownerId}", input_schema={"type": "object", "properties": {"ownerId": owner_id}, "required": ["ownerId"]}),
        RawTool("addPet", method="POST", path="/owners/{ownerId}/pets", input_schema={"type": "object", "properties": {"ownerId": owner_id, "species": {"type": "string", "enum": ["dog", "cat"]}}}),
        RawTool("cancelVisit", method="POST", path="/visits/{visitId}/cancel", input_schema={"type": "object", "properties": {"visitId": {"type": "integer"}}}),
        RawTool("get visit", method="GET", path="/visits/{visitId}", input_schema={}, problem="not a valid MCP tool name"),
    ]))
    spec = plan.spec
    assert spec is not None and plan.rejected == {"get visit": "not a valid MCP tool name"}
    owner, pet, visit = spec.entity("owner"), spec.entity("pet"), spec.entity("visit")
    assert owner.person and owner.field("email").semantic == "email_address"  # type: ignore[union-attr]
    assert pet.owner_field is not None and pet.owner_field.ref == "owner"
    assert visit.key.type == "integer" and visit.state is not None and "cancelled" in visit.state.values
    listing = spec.tool("list_owners")
    assert listing.bindings["city"].role == "filter" and listing.bindings["limit"].role == "limit"
    get = spec.tool("get_owner")
    assert get.parameters["properties"]["ownerId"]["x-semantic-type"] == "id:shop.owner"
    assert spec.tool("cancel_visit").behaviour.transition.to == "cancelled"  # type: ignore[union-attr]


def test_duplicate_and_clashing_tool_names_are_rejected_not_fatal() -> None:
    plan = plan_service(_service([
        RawTool("getThing", method="GET", path="/things/{id}", input_schema={"type": "object", "properties": {"id": {"type": "string"}}}),
        RawTool("get_thing", method="GET", path="/things/{id}", input_schema={"type": "object", "properties": {"id": {"type": "string"}}}),
        RawTool("getThing", method="GET", path="/things/{id}", input_schema={}),
    ]))
    assert plan.spec is not None and [t.name for t in plan.spec.tools] == ["get_thing"]
    reasons = list(plan.rejected.values())
    assert any("duplicate tool name 'get_thing' once normalised" in r for r in reasons)
    assert any(r == "duplicate tool name 'getThing'" for r in reasons)


def test_a_huge_spec_is_rejected_as_a_whole() -> None:
    tools = [RawTool(f"get_thing_{i}", input_schema={"type": "object"}) for i in range(901)]
    plan = plan_service(_service(tools))
    assert plan.spec is None and plan.problem is not None and "huge spec" in plan.problem
