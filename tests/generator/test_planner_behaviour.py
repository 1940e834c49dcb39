"""The planner reads what a REST operation does to which resource (issue 13's misreadings, each as a case)."""

from __future__ import annotations

from typing import Any

from mcp_services.kernel.episode import Episode
from mcp_services.kernel.intents import intent_problems

from generator.compiler import compile_service
from generator.gate.contracts import gate_service
from generator.importers.raw import RawService, RawTool
from generator.planner import plan_service
from generator.roundtrip import round_trips
from generator.spec import ServiceSpec


def _rest(name: str, method: str, path: str, description: str, properties: dict[str, Any] | None = None,
          required: list[str] | None = None) -> RawTool:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return RawTool(name=name, description=description, input_schema=schema, method=method, path=path)


def _plan(tools: list[RawTool], name: str = "shop") -> ServiceSpec:
    result = plan_service(RawService(name=name, tools=tools, description="A shop.", format="openapi-3"))
    assert result.spec is not None, result.problem
    return result.spec


ID = {"type": "string"}


def payments_spec() -> ServiceSpec:
    return _plan([
        _rest("list_charges", "GET", "/v1/charges", "Returns a list of charges you've previously created.",
              {"customer": {"type": "string", "description": "Only return charges for this customer ID."},
               "limit": {"type": "integer"}, "body": {"type": "object"}}),
        _rest("post_charges", "POST", "/v1/charges", "Creates a new charge object.",
              {"amount": {"type": "integer"}, "currency": {"type": "string"}, "description": {"type": "string"}},
              ["amount", "currency"]),
        _rest("get_charge", "GET", "/v1/charges/{charge}", "Retrieves the details of a charge.", {"charge": ID}, ["charge"]),
        _rest("post_charges_charge_refund", "POST", "/v1/charges/{charge}/refund",
              "When you create a new refund, you must specify a charge to create it on.",
              {"charge": ID, "amount": {"type": "integer"}, "reason": {"type": "string"}}, ["charge"]),
        _rest("list_refunds", "GET", "/v1/charges/{charge}/refunds", "Lists the refunds of a charge.",
              {"charge": ID, "limit": {"type": "integer"}}, ["charge"]),
        _rest("list_customers", "GET", "/v1/customers", "Returns a list of your customers.",
              {"email": {"type": "string"}, "limit": {"type": "integer"}}),
        _rest("create_customer", "POST", "/v1/customers", "Creates a new customer object.",
              {"body": {"type": "object", "properties": {"email": {"type": "string"}, "name": {"type": "string"}}}}),
        _rest("get_customer", "GET", "/v1/customers/{customer}", "Retrieves a customer.", {"customer": ID}, ["customer"]),
        _rest("list_groups", "GET", "/v1/groups", "Lists customer groups.", {"limit": {"type": "integer"}}),
        _rest("create_group", "POST", "/v1/groups", "Creates a customer group.",
              {"group": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}, ["group"]),
        _rest("add_group_to_customer", "PUT", "/v1/customers/{customer_id}/groups/{group_id}",
              "Adds a group membership to a customer.", {"customer_id": ID, "group_id": ID}, ["customer_id", "group_id"]),
        _rest("remove_group_from_customer", "DELETE", "/v1/customers/{customer_id}/groups/{group_id}",
              "Removes a group membership from a customer.", {"customer_id": ID, "group_id": ID},
              ["customer_id", "group_id"]),
    ])


def test_refunding_a_charge_creates_a_refund_and_leaves_the_charge_alone() -> None:
    spec = payments_spec()
    refund = spec.tool("post_charges_charge_refund")
    assert (refund.behaviour.kind, refund.behaviour.entity) == ("create", "refund")
    assert refund.bindings["charge"].role == "parent"
    assert refund.intent == "refund" and any("{charge}" in p for p in refund.phrases)
    service = compile_service(spec)
    with Episode([service], 0) as episode:
        charge = episode.call("shop", "get_charge", {"charge": "charge_0001"}).data
        made = episode.call("shop", "post_charges_charge_refund", {"charge": "charge_0001", "amount": 10})
        assert made.success and made.data["charge_id"] == "charge_0001" and made.data["amount"] == 10
        assert episode.call("shop", "get_charge", {"charge": "charge_0001"}).data == charge  # not rewritten
        listed = episode.call("shop", "list_refunds", {"charge": "charge_0001", "limit": 100}).data["items"]
        assert made.data["id"] in {r["id"] for r in listed}


def test_removing_a_group_from_a_customer_removes_the_membership_not_the_group() -> None:
    spec = payments_spec()
    remove = spec.tool("remove_group_from_customer")
    assert remove.behaviour.entity == "customer_group" and remove.behaviour.kind == "delete"
    add = spec.tool("add_group_to_customer")
    assert (add.behaviour.kind, add.behaviour.entity) == ("create", "customer_group")
    service = compile_service(spec)
    with Episode([service], 0) as episode:
        groups = episode.call("shop", "list_groups", {"limit": 100}).data["total"]
        link = episode.call("shop", "add_group_to_customer", {"customer_id": "customer_0002", "group_id": "group_0003"})
        assert link.success, link.error_message
        gone = episode.call("shop", "remove_group_from_customer", {"customer_id": "customer_0002", "group_id": "group_0003"})
        assert gone.success, gone.error_message
        assert episode.call("shop", "list_groups", {"limit": 100}).data["total"] == groups


def test_request_wrappers_are_not_entities_or_columns() -> None:
    spec = payments_spec()
    columns = {f.name for e in spec.entities for f in e.fields}
    assert not {"body", "group", "data"} & columns
    assert "body" not in spec.tool("list_charges").parameters["properties"]  # a read has no body
    assert spec.tool("create_customer").bindings["email"].role == "field"
    assert spec.tool("create_group").bindings["name"].role == "field"


def test_a_filter_parameter_filters_and_the_gate_proves_it() -> None:
    spec = payments_spec()
    listing = spec.tool("list_charges")
    assert listing.bindings["customer"].role == "filter"
    verdict, _ = gate_service(spec)
    statuses = {t.name: t for t in verdict.tools}
    assert statuses["list_charges"].status == "implemented", statuses["list_charges"].reason
    assert any(c.name == "filters_narrow" and c.passed for c in statuses["list_charges"].checks)


def test_every_entity_has_a_display_name_and_every_tool_an_intent_read_from_its_description() -> None:
    spec = payments_spec()
    assert all(e.label for e in spec.entities)
    for tool in spec.tools:
        assert tool.intent and tool.phrases
        assert not intent_problems(tool.intent, tool.effect, tool.phrases, tool.parameters["properties"])
    assert spec.tool("list_customers").intent == "find"
    assert spec.tool("get_charge").phrases[0] == "retrieve the charge {charge}"  # "Retrieves the details of a charge."
    refund = spec.tool("post_charges_charge_refund")
    assert not any("post charges" in p for p in refund.phrases)  # never the tool's name split into words


def test_an_rpc_key_named_like_the_resource_takes_the_id_the_create_returned() -> None:
    rpc = [
        RawTool("conversations.create", "Initiates a public or private channel-based conversation.",
                {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        RawTool("conversations.setTopic", "Sets the topic for a conversation.",
                {"type": "object", "properties": {"channel": {"type": "string"}, "topic": {"type": "string"}},
                 "required": ["channel", "topic"]}),
        RawTool("conversations.list", "Lists all channels in a Slack team.",
                {"type": "object", "properties": {"limit": {"type": "integer"}}}),
    ]
    spec = plan_service(RawService(name="chat", tools=rpc, description="Chat.", format="mcp")).spec
    assert spec is not None
    topic = spec.tool("conversations_set_topic")
    assert topic.bindings["channel"].column == "id"
    with Episode([compile_service(spec)], 0) as episode:
        made = episode.call("chat", "conversations_create", {"name": "launch-plans"})
        assert made.success
        changed = episode.call("chat", "conversations_set_topic", {"channel": made.data["id"], "topic": "Q3 launch"})
        assert changed.success and changed.data["topic"] == "Q3 launch"
    assert topic.phrases[0] == "set the topic for a conversation {channel}"


def boards_spec() -> ServiceSpec:
    """Trello's boards, lists and cards: a card names its list id-first (``idList``), in its create and in its update."""
    return _plan([
        _rest("addBoards", "POST", "/boards", "Create a board.", {"name": ID}, ["name"]),
        _rest("getBoardsByIdBoard", "GET", "/boards/{idBoard}", "Get a board.", {"idBoard": ID}, ["idBoard"]),
        _rest("getBoardsListsByIdBoard", "GET", "/boards/{idBoard}/lists", "Get the lists of a board.",
              {"idBoard": ID}, ["idBoard"]),
        _rest("addLists", "POST", "/lists", "Create a list.", {"name": ID, "idBoard": ID}, ["name", "idBoard"]),
        _rest("getListsByIdList", "GET", "/lists/{idList}", "Get a list.", {"idList": ID}, ["idList"]),
        _rest("getListsCardsByIdList", "GET", "/lists/{idList}/cards", "Get the cards of a list.",
              {"idList": ID, "limit": {"type": "integer"}}, ["idList"]),
        _rest("addCards", "POST", "/cards", "Create a card.", {"name": ID, "desc": ID, "idList": ID}, ["idList"]),
        _rest("getListsCardsByIdListByIdCard", "GET", "/lists/{idList}/cards/{idCard}", "Get a card of a list.",
              {"idList": ID, "idCard": ID}, ["idList", "idCard"]),
        _rest("getCardsByIdCard", "GET", "/cards/{idCard}", "Get a card.", {"idCard": ID}, ["idCard"]),
        _rest("updateCardsByIdCard", "PUT", "/cards/{idCard}", "Update a card.",
              {"idCard": ID, "name": ID, "desc": ID, "idList": ID}, ["idCard"]),
        _rest("updateListsByIdList", "PUT", "/lists/{idList}", "Update a list.",
              {"idList": ID, "name": ID, "idBoard": {"type": "string", "description": "The board of the list. Can't be updated."}},
              ["idList"]),
        _rest("updateCardsIdListByIdCard", "PUT", "/cards/{idCard}/idList", "Update the list of a card.",
              {"idCard": ID, "value": {"type": "string", "description": "id of the list the card should be moved to"}},
              ["idCard", "value"]),
    ], "boards")


def test_updating_a_cards_list_moves_it_to_that_list() -> None:
    spec = boards_spec()
    assert spec.entity("card").field("idList") is None  # idList is the card's list_id: one column
    assert spec.tool("add_cards").bindings["idList"].column == "list_id"
    move = spec.tool("update_cards_by_id_card").bindings["idList"]
    assert (move.role, move.column) == ("field", "list_id")  # optional in the update: a move, not where to look
    assert spec.tool("update_cards_id_list_by_id_card").bindings["value"].column == "list_id"
    assert spec.tool("update_lists_by_id_list").bindings["idBoard"].role == "parent"  # documented as fixed: no move
    verdict, _ = gate_service(spec)
    statuses = {t.name: (t.status, t.reason) for t in verdict.tools}
    assert all(status == "implemented" for status, _ in statuses.values()), statuses
    with Episode([compile_service(spec)], 0) as episode:
        first, second = ("list_0001", "list_0002")
        card = episode.call("boards", "add_cards", {"name": "Fix the gate", "idList": first}).data
        assert card["list_id"] == first

        def listed(list_id: str) -> set[str]:
            return {c["id"] for c in episode.call("boards", "get_lists_cards_by_id_list", {"idList": list_id, "limit": 100}).data["items"]}

        assert card["id"] in listed(first) and card["id"] not in listed(second)
        moved = episode.call("boards", "update_cards_by_id_card", {"idCard": card["id"], "idList": second})
        assert moved.success and moved.data["list_id"] == second
        assert card["id"] in listed(second) and card["id"] not in listed(first)
        assert episode.call("boards", "get_cards_by_id_card", {"idCard": card["id"]}).data["list_id"] == second
        before = episode.dump()
        nowhere = episode.call("boards", "update_cards_by_id_card", {"idCard": card["id"], "idList": "list_9999"})
        assert not nowhere.success and nowhere.error_code == "not_found" and episode.dump() == before
        renamed = episode.call("boards", "update_cards_by_id_card", {"idCard": card["id"], "name": "Fixed"}).data
        assert renamed["list_id"] == second  # an update that names no list leaves the card where it is
        back = episode.call("boards", "update_cards_id_list_by_id_card", {"idCard": card["id"], "value": first})
        assert back.success and card["id"] in listed(first) and card["id"] not in listed(second)  # PUT .../idList {value}
    trips = round_trips(compile_service(spec), statuses)  # a moved card is read where it now is
    assert trips.failing() == {}, trips.failing()
