"""The product invariants (issue 23): derived from the documented surface and pairs of tools, they can
disagree with the planner, and a tool that fails one is simulated. Each case is a misreading a user met."""

from __future__ import annotations

import copy
from typing import Any

from mcp_services.kernel.episode import Episode

from generator.compiler import compile_service
from generator.gate.contracts import gate_service
from generator.importers.raw import RawService, RawTool
from generator.planner import plan_service
from generator.spec import ServiceSpec, load_spec

ID = {"type": "string"}


def _rest(name: str, method: str, path: str, description: str, properties: dict[str, Any] | None = None,
          required: list[str] | None = None) -> RawTool:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return RawTool(name=name, description=description, input_schema=schema, method=method, path=path)


def _rpc(name: str, description: str, properties: dict[str, Any], required: list[str] | None = None) -> RawTool:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    reads = name.rsplit(".", 1)[-1] in ("list", "info", "members", "history")
    return RawTool(name=name, description=description, input_schema=schema, method="GET" if reads else "POST",
                   path=f"/{name}")


def _plan(tools: list[RawTool], name: str = "shop") -> ServiceSpec:
    result = plan_service(RawService(name=name, tools=tools, description="A product.", format="openapi-3"))
    assert result.spec is not None, result.problem
    return result.spec


def _gated(spec: ServiceSpec) -> dict[str, Any]:
    verdict, _ = gate_service(spec)
    return {t.name: t for t in verdict.tools}


def _failed(verdict: Any) -> set[str]:
    return {c.name for c in verdict.checks if not c.passed}


def chat() -> ServiceSpec:
    """Slack's conversations: created, listed, read, archived, joined, left, invited to, kicked from."""
    channel = {"type": "string", "description": "Conversation ID."}
    return _plan([
        _rpc("conversations.create", "Initiates a public or private channel-based conversation.",
             {"name": {"type": "string"}, "is_private": {"type": "boolean"}}, ["name"]),
        _rpc("conversations.list", "Lists all channels in a Slack team.",
             {"exclude_archived": {"type": "boolean", "description": "Set to true to exclude archived channels."},
              "limit": {"type": "integer"}, "cursor": {"type": "string"}}),
        _rpc("conversations.info", "Retrieve information about a conversation.", {"channel": channel}),
        _rpc("conversations.archive", "Archives a conversation.", {"channel": channel}),
        _rpc("conversations.unarchive", "Reverses conversation archival.", {"channel": channel}),
        _rpc("conversations.setTopic", "Sets the topic for a conversation.", {"channel": channel, "topic": ID}),
        _rpc("conversations.join", "Joins an existing conversation.", {"channel": channel}),
        _rpc("conversations.leave", "Leaves a conversation.", {"channel": channel}),
        _rpc("conversations.invite", "Invites users to a channel.", {"channel": channel, "users": ID}),
        _rpc("conversations.kick", "Removes a user from a conversation.", {"channel": channel, "user": ID}),
        _rpc("conversations.members", "Retrieve members of a conversation.",
             {"channel": channel, "limit": {"type": "integer"}, "cursor": {"type": "string"}}),
        _rpc("users.list", "Lists all users in a Slack team.", {"limit": {"type": "integer"}}),
        _rpc("users.info", "Gets information about a user.", {"user": ID}),
        _rpc("users.setPresence", "Manually sets user presence.", {"presence": ID}),
    ], "chat")


def test_joining_leaving_and_inviting_change_membership_and_never_the_channel() -> None:
    spec = chat()
    assert (spec.tool("conversations_join").behaviour.kind, spec.tool("conversations_leave").behaviour.kind) == ("link", "unlink")
    assert spec.tool("conversations_members").behaviour.entity == spec.tool("conversations_invite").behaviour.entity
    gated = _gated(spec)
    for name in ("conversations_join", "conversations_leave", "conversations_invite", "conversations_kick",
                 "conversations_members", "conversations_info", "conversations_list"):
        assert gated[name].status == "implemented", (name, gated[name].reason)
    with Episode([compile_service(spec)], 0) as episode:
        made = episode.call("chat", "conversations_create", {"name": "launch-plans"}).data
        channels = episode.call("chat", "conversations_list", {"limit": 100}).data["total"]
        assert episode.call("chat", "conversations_join", {"channel": made["id"]}).success
        invited = episode.call("chat", "conversations_invite", {"channel": made["id"], "users": "user_0002,user_0003"})
        assert invited.success and invited.data["id"] == made["id"]
        members = {m["user_id"] for m in episode.call("chat", "conversations_members", {"channel": made["id"]}).data["items"]}
        assert members == {"user_0001", "user_0002", "user_0003"}  # the caller joined; two were invited
        assert episode.call("chat", "conversations_kick", {"channel": made["id"], "user": "user_0002"}).success
        assert episode.call("chat", "conversations_leave", {"channel": made["id"]}).success
        members = {m["user_id"] for m in episode.call("chat", "conversations_members", {"channel": made["id"]}).data["items"]}
        assert members == {"user_0003"}
        again = episode.call("chat", "conversations_leave", {"channel": made["id"]})
        assert not again.success and again.error_code == "invalid_state"
        assert episode.call("chat", "conversations_list", {"limit": 100}).data["total"] == channels  # no channel made or lost
        assert episode.call("chat", "conversations_info", {"channel": made["id"]}).data["name"] == "launch-plans"


def test_a_leave_read_as_deleting_the_channel_fails_action_keeps_row_and_is_simulated() -> None:
    data = chat().model_dump(exclude_none=True)
    leave = next(t for t in data["tools"] if t["name"] == "conversations_leave")
    leave["behaviour"] = {"kind": "delete", "entity": "conversation"}  # what the planner used to read
    leave["bindings"] = {"channel": {"role": "key", "column": "id"}}
    verdict = _gated(load_spec(data))["conversations_leave"]
    assert verdict.status == "simulated" and "action_keeps_row" in _failed(verdict)
    assert "deleted the conversation" in verdict.reason


def test_an_ignored_exclude_archived_flag_fails_params_change_result() -> None:
    spec = chat()
    assert spec.tool("conversations_list").bindings["exclude_archived"].op == "exclude"
    data = spec.model_dump(exclude_none=True)
    listing = next(t for t in data["tools"] if t["name"] == "conversations_list")
    listing["bindings"]["exclude_archived"] = {"role": "option"}
    verdict = _gated(load_spec(data))["conversations_list"]
    assert verdict.status == "simulated" and "params_change_result" in _failed(verdict)
    with Episode([compile_service(spec)], 0) as episode:
        every = episode.call("chat", "conversations_list", {"limit": 100}).data["items"]
        kept = episode.call("chat", "conversations_list", {"limit": 100, "exclude_archived": True}).data["items"]
        assert any(c["status"] == "archived" for c in every) and not any(c["status"] == "archived" for c in kept)


def test_an_rpc_key_named_like_the_resource_is_its_id_and_the_id_a_create_returns_round_trips() -> None:
    spec = _plan([
        _rpc("usergroups.create", "Create a User Group.", {"name": ID, "handle": ID}, ["name"]),
        _rpc("usergroups.disable", "Disable an existing User Group.", {"usergroup": ID}, ["usergroup"]),
        _rpc("usergroups.enable", "Enable a User Group.", {"usergroup": ID}, ["usergroup"]),
        _rpc("usergroups.list", "List all User Groups for a team.",
             {"include_disabled": {"type": "boolean", "description": "Include disabled User Groups."}}),
    ], "groups")
    assert spec.tool("usergroups_disable").bindings["usergroup"].column == "id"
    gated = _gated(spec)
    assert all(v.status == "implemented" for v in gated.values()), {n: v.reason for n, v in gated.items()}
    assert any(c.name == "ids_round_trip" and c.passed for c in gated["usergroups_disable"].checks)
    data = spec.model_dump(exclude_none=True)
    disable = next(t for t in data["tools"] if t["name"] == "usergroups_disable")
    disable["bindings"]["usergroup"]["column"] = "handle"  # looks the id up among handles
    verdict = _gated(load_spec(data))["usergroups_disable"]
    assert verdict.status == "simulated" and "ids_round_trip" in _failed(verdict)


def messaging() -> list[RawTool]:
    sid = {"type": "string", "minLength": 34, "maxLength": 34, "pattern": "^MG[0-9a-fA-F]{32}$"}
    return [
        _rest("ListService", "GET", "/v1/Services", "Retrieve a list of all Services.", {"PageSize": {"type": "integer"}}),
        _rest("CreateService", "POST", "/v1/Services", "Create a Service.", {"FriendlyName": ID}, ["FriendlyName"]),
        _rest("FetchService", "GET", "/v1/Services/{Sid}", "Fetch a Service.", {"Sid": sid}, ["Sid"]),
        _rest("DeleteService", "DELETE", "/v1/Services/{Sid}", "Delete a Service.", {"Sid": sid}, ["Sid"]),
    ]


def test_new_ids_follow_the_pattern_the_spec_declares_for_them() -> None:
    spec = _plan(messaging(), "messaging")
    assert spec.tool("fetch_service").behaviour.entity == spec.tool("create_service").behaviour.entity == "service"
    gated = _gated(spec)
    assert gated["create_service"].status == "implemented", gated["create_service"].reason
    with Episode([compile_service(spec)], 0) as episode:
        made = episode.call("messaging", "create_service", {"FriendlyName": "Alerts"}).data
        assert made["id"].startswith("MG") and len(made["id"]) == 34
        assert episode.call("messaging", "fetch_service", {"Sid": made["id"]}).success
    data = spec.model_dump(exclude_none=True)
    next(e for e in data["entities"] if e["name"] == "service")["key"] = {"prefix": "service"}  # service_0009
    verdict = _gated(load_spec(data))["create_service"]
    assert verdict.status == "simulated" and "ids_round_trip" in _failed(verdict)
    assert "^MG" in verdict.reason


def billing() -> ServiceSpec:
    return _plan([
        _rest("GetCharges", "GET", "/v1/charges", "List charges.", {"limit": {"type": "integer"}}),
        _rest("PostCharges", "POST", "/v1/charges", "Creates a new charge object.",
              {"amount": {"type": "integer"}, "currency": ID}, ["amount"]),
        _rest("GetChargesCharge", "GET", "/v1/charges/{charge}", "Retrieves a charge.", {"charge": ID}, ["charge"]),
        _rest("GetChargesChargeRefunds", "GET", "/v1/charges/{charge}/refunds", "List the refunds of a charge.",
              {"charge": ID, "limit": {"type": "integer"}}, ["charge"]),
        _rest("PostChargesChargeRefunds", "POST", "/v1/charges/{charge}/refunds", "Create a refund of a charge.",
              {"charge": ID, "amount": {"type": "integer"}}, ["charge"]),
        _rest("GetRefunds", "GET", "/v1/refunds", "List refunds.",
              {"charge": {"type": "string", "description": "Only refunds of this charge."}, "limit": {"type": "integer"}}),
        _rest("PostRefunds", "POST", "/v1/refunds", "Create a refund.", {"charge": ID, "amount": {"type": "integer"}}),
        _rest("GetInvoices", "GET", "/v1/invoices", "List invoices.",
              {"status": {"type": "string", "enum": ["draft", "open", "paid", "uncollectible", "void"]},
               "limit": {"type": "integer"}}),
        _rest("PostInvoices", "POST", "/v1/invoices", "Create an invoice.", {"description": ID}),
        _rest("GetInvoicesInvoice", "GET", "/v1/invoices/{invoice}", "Retrieve an invoice.", {"invoice": ID}, ["invoice"]),
        _rest("PostInvoicesInvoiceFinalize", "POST", "/v1/invoices/{invoice}/finalize", "Finalize an invoice.",
              {"invoice": ID}, ["invoice"]),
        _rest("PostInvoicesInvoicePay", "POST", "/v1/invoices/{invoice}/pay", "Pay an invoice.", {"invoice": ID}, ["invoice"]),
        _rest("PostInvoicesInvoiceVoid", "POST", "/v1/invoices/{invoice}/void", "Void an invoice.", {"invoice": ID}, ["invoice"]),
    ], "billing")


def test_a_refund_never_exceeds_what_is_left_of_its_charge_and_its_charge_filter_finds_it() -> None:
    spec = billing()
    gated = _gated(spec)
    for name in ("post_charges_charge_refunds", "post_refunds", "get_refunds"):
        assert gated[name].status == "implemented", (name, gated[name].reason)
    with Episode([compile_service(spec)], 0) as episode:
        charge = episode.call("billing", "post_charges", {"amount": 5000, "currency": "usd"}).data
        too_much = episode.call("billing", "post_charges_charge_refunds", {"charge": charge["id"], "amount": 999_999})
        assert not too_much.success and too_much.error_code == "invalid_argument" and "5000" in (too_much.error_message or "")
        part = episode.call("billing", "post_refunds", {"charge": charge["id"], "amount": 2000}).data
        rest = episode.call("billing", "post_charges_charge_refunds", {"charge": charge["id"]}).data
        assert rest["amount"] == 3000  # without an amount, what is left
        listed = episode.call("billing", "get_refunds", {"charge": charge["id"], "limit": 100}).data["items"]
        assert {r["id"] for r in listed} == {part["id"], rest["id"]}  # the filter reads the refund's own charge
    verdict = _gated(_without_reference(spec, "refund", "charge"))["post_charges_charge_refunds"]
    assert verdict.status == "simulated" and "amount_within_parent" in _failed(verdict)


def _without_reference(spec: ServiceSpec, entity: str, ref: str) -> ServiceSpec:
    """``spec`` with ``entity``'s id of a ``ref`` as a plain column: nothing caps an amount by it."""
    data = spec.model_dump(exclude_none=True)
    for f in next(e for e in data["entities"] if e["name"] == entity)["fields"]:
        if f.get("ref") == ref:
            f.update(ref=None, owner=False, semantic=None)
    return load_spec(data)


def money() -> dict[str, Any]:
    return {"type": "object", "description": "Represents an amount of money.",
            "properties": {"amount": {"type": "integer", "format": "int64"}, "currency": {"type": "string"}}}


def payments() -> ServiceSpec:
    """Square's payments and refunds: amounts are money objects, and a refund names its payment in its body."""
    return _plan([
        _rest("CreatePayment", "POST", "/v2/payments", "Creates a payment using the provided source.",
              {"source_id": ID, "idempotency_key": ID, "amount_money": money(), "tip_money": money()},
              ["source_id", "idempotency_key"]),
        _rest("ListPayments", "GET", "/v2/payments", "Retrieves a list of payments.", {"limit": {"type": "integer"}}),
        _rest("GetPayment", "GET", "/v2/payments/{payment_id}", "Retrieves details for a specific payment.",
              {"payment_id": ID}, ["payment_id"]),
        _rest("RefundPayment", "POST", "/v2/refunds", "Refunds a payment. You can refund the entire payment amount or "
              "a portion of it.", {"idempotency_key": ID, "amount_money": money(), "app_fee_money": money(),
                                   "payment_id": ID, "reason": ID}, ["idempotency_key", "amount_money", "payment_id"]),
        _rest("ListPaymentRefunds", "GET", "/v2/refunds", "Retrieves a list of refunds for the account.",
              {"limit": {"type": "integer"}}),
        _rest("GetPaymentRefund", "GET", "/v2/refunds/{refund_id}", "Retrieves a specific refund.",
              {"refund_id": ID}, ["refund_id"]),
    ], "square")


def test_a_refund_of_a_money_object_never_exceeds_what_is_left_of_the_payment_it_names() -> None:
    spec = payments()
    assert spec.tool("refund_payment").behaviour.kind == "create"
    gated = _gated(spec)
    assert gated["refund_payment"].status == "implemented", gated["refund_payment"].reason
    with Episode([compile_service(spec)], 0) as episode:
        paid = episode.call("square", "create_payment", {"source_id": "cnon:card", "idempotency_key": "p1",
                                                         "amount_money": {"amount": 5000, "currency": "USD"}}).data
        before = episode.dump()
        too_much = episode.call("square", "refund_payment", {"payment_id": paid["id"], "idempotency_key": "r1",
                                                             "amount_money": {"amount": 5001, "currency": "USD"}})
        assert not too_much.success and too_much.error_code == "invalid_argument"
        assert "'amount_money.amount' 5001 is more than is left" in (too_much.error_message or "")
        assert "5000 of 5000" in (too_much.error_message or "") and episode.dump() == before  # nothing changed
        part = episode.call("square", "refund_payment", {"payment_id": paid["id"], "idempotency_key": "r2",
                                                         "amount_money": {"amount": 3000, "currency": "USD"}})
        assert part.success and part.data["amount_money"] == {"amount": 3000, "currency": "USD"}
        again = episode.call("square", "refund_payment", {"payment_id": paid["id"], "idempotency_key": "r3",
                                                          "amount_money": {"amount": 2001, "currency": "USD"}})
        assert not again.success and "2000 of 5000" in (again.error_message or "")  # what the first refund left
        fee = episode.call("square", "refund_payment", {"payment_id": paid["id"], "idempotency_key": "r4",
                                                        "amount_money": {"amount": 2000, "currency": "USD"},
                                                        "app_fee_money": {"amount": 99_999, "currency": "USD"}})
        assert fee.success  # a fee is no share of the payment
        rows = episode.dump()["square"]
        for payment in dict(rows["payments"]).values():  # seeded refunds are shares of their payments too
            refunded = sum(r["amount_money"]["amount"] for r in dict(rows["refunds"]).values()
                           if r["payment_id"] == payment["id"] and r["id"] not in (part.data["id"], fee.data["id"]))
            assert refunded <= payment["amount_money"]["amount"], payment["id"]
    verdict = _gated(_without_reference(spec, "refund", "payment"))["refund_payment"]
    assert verdict.status == "simulated" and "amount_within_parent" in _failed(verdict)


def test_invoice_actions_set_the_statuses_the_api_documents_and_paying_shows_on_the_invoice() -> None:
    spec = billing()
    invoice = spec.entity("invoice")
    assert invoice.state is not None and set(invoice.state.values) == {"draft", "open", "paid", "uncollectible", "void"}
    assert spec.tool("post_invoices_invoice_pay").behaviour.kind == "transition"
    assert spec.tool("post_invoices_invoice_finalize").behaviour.transition.to == "open"  # type: ignore[union-attr]
    gated = _gated(spec)
    assert gated["post_invoices_invoice_pay"].status == "implemented", gated["post_invoices_invoice_pay"].reason
    with Episode([compile_service(spec)], 0) as episode:
        made = episode.call("billing", "post_invoices", {"description": "March"}).data
        assert made["status"] == "draft"
        episode.call("billing", "post_invoices_invoice_finalize", {"invoice": made["id"]})
        assert episode.call("billing", "post_invoices_invoice_pay", {"invoice": made["id"]}).data["status"] == "paid"
        void = episode.call("billing", "post_invoices_invoice_void", {"invoice": made["id"]})
        assert not void.success and void.error_code == "invalid_state"  # a paid invoice cannot be voided
    data = spec.model_dump(exclude_none=True)
    finalize = next(t for t in data["tools"] if t["name"] == "post_invoices_invoice_finalize")
    finalize["behaviour"]["transition"]["to"] = "finalized"
    next(e for e in data["entities"] if e["name"] == "invoice")["state"]["values"].append("finalized")
    next(f for e in data["entities"] if e["name"] == "invoice" for f in e["fields"] if f["name"] == "status")["enum"].append("finalized")
    verdict = _gated(load_spec(data))["post_invoices_invoice_finalize"]
    assert verdict.status == "simulated" and "status_from_enum" in _failed(verdict)


def files() -> ServiceSpec:
    folder = {"type": "string", "description": "The ID of the folder. The root folder of a Box account is always "
                                               "represented by the ID `0`."}
    return _plan([
        _rest("get_folders_id", "GET", "/folders/{folder_id}", "Retrieves details for a folder.", {"folder_id": folder},
              ["folder_id"]),
        _rest("get_folders_id_items", "GET", "/folders/{folder_id}/items", "Retrieves the files in a folder.",
              {"folder_id": folder, "limit": {"type": "integer"}}, ["folder_id"]),
        _rest("get_files_id", "GET", "/files/{file_id}", "Retrieves the details about a file.", {"file_id": ID}, ["file_id"]),
        _rest("post_files_id_trash", "POST", "/files/{file_id}/trash", "Moves a file to the trash.", {"file_id": ID},
              ["file_id"]),
        _rest("get_files_id_comments", "GET", "/files/{file_id}/comments", "Retrieves a list of comments for a file.",
              {"file_id": ID, "limit": {"type": "integer"}}, ["file_id"]),
        _rest("post_comments", "POST", "/comments", "Adds a comment by the user to a specific file, or as a reply to "
              "another comment.",
              {"message": ID, "item": {"type": "object", "description": "The item to attach the comment to.",
                                       "properties": {"id": ID,
                                                      "type": {"type": "string", "enum": ["file", "comment"]}}}},
              ["message", "item"]),
        _rest("get_comments_id", "GET", "/comments/{comment_id}", "Retrieves the message and metadata for a comment.",
              {"comment_id": ID}, ["comment_id"]),
    ], "files")


def test_a_comment_on_a_file_is_listed_by_the_file_and_the_root_folder_alias_resolves() -> None:
    spec = files()
    gated = _gated(spec)
    for name in ("post_comments", "get_folders_id", "post_files_id_trash"):
        assert gated[name].status == "implemented", (name, gated[name].reason)
    assert any(c.name == "aliases_resolve" and c.passed for c in gated["get_folders_id"].checks)
    with Episode([compile_service(spec)], 0) as episode:
        made = episode.call("files", "post_comments", {"message": "Looks good", "item": {"id": "file_0002", "type": "file"}})
        assert made.success and made.data["file_id"] == "file_0002"
        listed = episode.call("files", "get_files_id_comments", {"file_id": "file_0002", "limit": 100}).data["items"]
        assert made.data["id"] in {c["id"] for c in listed}
        root = episode.call("files", "get_folders_id", {"folder_id": "0"}).data
        assert root["id"] == episode.call("files", "get_folders_id", {"folder_id": root["id"]}).data["id"]
        trashed = episode.call("files", "post_files_id_trash", {"file_id": "file_0001"}).data
        assert trashed["trashed"] is True  # a soft delete: the file stays
        assert episode.call("files", "get_files_id", {"file_id": "file_0001"}).success
    data = copy.deepcopy(spec.model_dump(exclude_none=True))
    comment = next(t for t in data["tools"] if t["name"] == "post_comments")
    comment["bindings"]["item"]["column"] = None  # the file must exist, but the comment is not stored under it
    verdict = _gated(load_spec(data))["post_comments"]
    assert verdict.status == "simulated" and "write_visible" in _failed(verdict)
    data = copy.deepcopy(spec.model_dump(exclude_none=True))
    getter = next(t for t in data["tools"] if t["name"] == "get_folders_id")
    getter["bindings"]["folder_id"]["aliases"] = []
    verdict = _gated(load_spec(data))["get_folders_id"]
    assert verdict.status == "simulated" and "aliases_resolve" in _failed(verdict)
