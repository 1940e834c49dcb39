"""Actions change their target, and paging parameters page (issue 32, causes 'idle_actions' and
'placeholder_values'): small specs written here from the products' public API references."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_services.kernel.episode import Episode

from generator.compiler import compile_service
from generator.gate.contracts import demote_tools, gate_service
from generator.importers.raw import RawService, RawTool
from generator.measures import placeholder_values
from generator.planner import plan_service
from generator.spec import ServiceSpec, load_spec
from tests.generator.test_planner_behaviour import _rest

ID = {"type": "string"}


def _plan(tools: list[RawTool], name: str) -> ServiceSpec:
    result = plan_service(RawService(name=name, tools=tools, description=name, format="openapi-3"), name)
    assert result.spec is not None, result.problem
    return result.spec


# -- an action that records a row changes the row it acts on ---------------------------------------------------

def charges_spec() -> ServiceSpec:
    """Stripe's charges and their refunds (https://docs.stripe.com/api/charges/object: ``refunded``, "Whether the
    charge has been fully refunded. If the charge is only partially refunded, this attribute will still be false")."""
    return _plan([
        _rest("list_charges", "GET", "/v1/charges", "Returns a list of charges.", {"limit": {"type": "integer"}}),
        _rest("create_charge", "POST", "/v1/charges", "Creates a charge.",
              {"amount": {"type": "integer"}, "currency": {"type": "string"}}, ["amount", "currency"]),
        _rest("get_charge", "GET", "/v1/charges/{charge}", "Retrieves a charge.", {"charge": ID}, ["charge"]),
        _rest("refund_charge", "POST", "/v1/charges/{charge}/refund",
              "When you create a new refund, you must specify a Charge to create it on.",
              {"charge": ID, "amount": {"type": "integer"}, "reason": {"type": "string"}}, ["charge"]),
        _rest("list_refunds", "GET", "/v1/charges/{charge}/refunds", "Lists the refunds of a charge.",
              {"charge": ID}, ["charge"]),
    ], "payments")


def _charge(episode: Episode, amount: int) -> dict[str, Any]:
    made = episode.call("payments", "create_charge", {"amount": amount, "currency": "usd"})
    assert made.success, made.error
    return dict(made.data)


def test_refunding_all_of_a_charge_records_a_refund_and_marks_the_charge_refunded() -> None:
    spec = charges_spec()
    refund = spec.tool("refund_charge")
    assert refund.behaviour.kind == "create" and refund.behaviour.marks == {"refunded": True}
    with Episode([compile_service(spec)], 0) as episode:
        charge = _charge(episode, 5000)
        assert not charge.get("refunded")
        done = episode.call("payments", "refund_charge", {"charge": charge["id"]})
        assert done.success, done.error
        assert done.data["amount"] == 5000  # without an amount, the rest of the charge
        assert episode.call("payments", "get_charge", {"charge": charge["id"]}).data["refunded"] is True
        listed = episode.call("payments", "list_refunds", {"charge": charge["id"]}).data["items"]
        assert [r["id"] for r in listed] == [done.data["id"]]


def test_a_partial_refund_leaves_the_charge_unrefunded_until_the_rest_is_refunded() -> None:
    with Episode([compile_service(charges_spec())], 0) as episode:
        charge = _charge(episode, 5000)
        assert episode.call("payments", "refund_charge", {"charge": charge["id"], "amount": 2000}).success
        assert not episode.call("payments", "get_charge", {"charge": charge["id"]}).data["refunded"]
        assert episode.call("payments", "refund_charge", {"charge": charge["id"], "amount": 3000}).success
        assert episode.call("payments", "get_charge", {"charge": charge["id"]}).data["refunded"] is True
        too_much = episode.call("payments", "refund_charge", {"charge": charge["id"], "amount": 1})
        assert not too_much.success  # nothing is left to refund, and nothing changed


def test_the_gate_keeps_a_refund_that_marks_its_charge() -> None:
    verdict, _ = gate_service(charges_spec())
    refund = next(t for t in verdict.tools if t.name == "refund_charge")
    assert refund.status == "implemented", refund.reason


def test_paying_an_order_marks_it_paid() -> None:
    """Square's PayOrder (https://developer.squareup.com/reference/square/orders-api/pay-order): "Pay for an order
    using one or more approved payments"; the order then reads as paid."""
    spec = _plan([
        _rest("create_order", "POST", "/v2/orders", "Creates an order.", {"reference_id": {"type": "string"}}),
        _rest("retrieve_order", "GET", "/v2/orders/{order_id}", "Retrieves an order.", {"order_id": ID}, ["order_id"]),
        _rest("pay_order", "POST", "/v2/orders/{order_id}/pay", "Pay for an order using one or more approved payments.",
              {"order_id": ID, "payment_ids": {"type": "array", "items": {"type": "string"}}}, ["order_id"]),
    ], "orders")
    with Episode([compile_service(spec)], 0) as episode:
        order = episode.call("orders", "create_order", {"reference_id": "ref-1"}).data
        assert episode.call("orders", "pay_order", {"order_id": order["id"], "payment_ids": ["p1"]}).success
        assert episode.call("orders", "retrieve_order", {"order_id": order["id"]}).data["paid"] is True


# -- paging parameters page and are never columns --------------------------------------------------------------

def test_paging_parameters_merged_into_every_operation_are_never_columns_and_an_offset_token_pages() -> None:
    """Asana (https://developers.asana.com/docs/pagination): ``limit`` "Results per page" and ``offset`` "Offset
    token", query parameters of every path, create calls included."""
    paging = {"limit": {"type": "integer", "description": "Results per page. The number of objects to return per page."},
              "offset": {"type": "string", "description": "Offset token. An offset to the next page returned by the API."}}
    spec = _plan([
        _rest("get_teams", "GET", "/teams", "Get teams.", {**paging, "workspace": {"type": "string"}}),
        _rest("create_team", "POST", "/teams", "Create a team.", {**paging, "name": {"type": "string"}}, ["name"]),
        _rest("get_team", "GET", "/teams/{team_gid}", "Get a team.", {**paging, "team_gid": ID}, ["team_gid"]),
        _rest("update_team", "PUT", "/teams/{team_gid}", "Update a team.",
              {**paging, "team_gid": ID, "name": {"type": "string"}}, ["team_gid"]),
    ], "work")
    team = next(e for e in spec.entities if e.name == "team")
    assert not {"limit", "offset"} & {f.name for f in team.fields}
    listing = spec.tool("get_teams").bindings
    assert listing["limit"].role == "limit" and listing["offset"].role == "cursor"
    assert spec.tool("create_team").bindings["limit"].role == "option"
    with Episode([compile_service(spec)], 0) as episode:
        assert placeholder_values(spec, episode.dump()["work"]) == []
        first = episode.call("work", "get_teams", {"limit": 1})
        assert first.success and len(first.data["items"]) == 1 and first.data["next_cursor"]
        second = episode.call("work", "get_teams", {"limit": 1, "offset": first.data["next_cursor"]})
        assert second.success and second.data["items"][0]["id"] != first.data["items"][0]["id"]
        made = episode.call("work", "create_team", {"name": "Platform", "limit": 5})
        assert made.success and "limit" not in made.data


def test_a_parameter_named_like_paging_that_documents_something_else_stays_data() -> None:
    """Jira's reorder of custom field options: ``after`` is "The ID of the custom field option to move after"."""
    spec = _plan([
        _rest("create_option", "POST", "/options", "Creates an option.", {"value": {"type": "string"}}),
        _rest("get_option", "GET", "/options/{id}", "Gets an option.", {"id": ID}, ["id"]),
        _rest("update_option", "PUT", "/options/{id}", "Moves an option.",
              {"id": ID, "after": {"type": "string", "description": "The ID of the custom field option to move after."}},
              ["id"]),
    ], "fields")
    assert spec.tool("update_option").bindings["after"].role == "field"


# -- seeded names and singleton reads ------------------------------------------------------------------------------

def test_rows_of_a_kind_without_names_of_its_own_are_not_all_named_after_one_company() -> None:
    """Braze's canvases and content blocks were all "Chang-Fisher canvas": each row is drawn on its own."""
    spec = _plan([
        _rest("list_canvases", "GET", "/canvas/list", "Export a list of canvases.", {"page": {"type": "integer"}}),
        _rest("create_canvas", "POST", "/canvas/create", "Create a canvas.", {"name": {"type": "string"}}, ["name"]),
        _rest("get_canvas", "GET", "/canvas/details/{canvas_id}", "Export canvas details.", {"canvas_id": ID},
              ["canvas_id"]),
    ], "journeys")
    with Episode([compile_service(spec)], 0) as episode:
        names = [r["name"] for r in episode.dump()["journeys"]["canvases"].values()]
    assert len(names) >= 4 and len(set(names)) > len(names) // 2, names


def test_a_singleton_read_whose_documentation_names_no_field_is_simulated_with_its_reason() -> None:
    """Drive's ``GET /about`` as the specs file gives it (no response schema): not a row named "<company> about"."""
    spec = _plan([
        _rest("about_get", "GET", "/drive/v3/about", "Gets information about the user, the user's Drive, and system "
              "capabilities.", {}),
        _rest("files_list", "GET", "/drive/v3/files", "Lists the user's files.", {"pageSize": {"type": "integer"}}),
        _rest("files_create", "POST", "/drive/v3/files", "Creates a file.", {"name": {"type": "string"}}, ["name"]),
    ], "drive")
    about = spec.tool("about_get")
    assert about.behaviour.kind == "simulated" and about.behaviour.entity is None
    with Episode([compile_service(spec)], 0) as episode:
        answered = episode.call("drive", "about_get", {})
    assert answered.success, answered
    assert not re.search(r"\w about\b", json.dumps(answered.data)), answered.data


def test_accepting_a_merge_request_merges_it() -> None:
    """GitLab's "Merge a merge request" (https://docs.gitlab.com/api/merge_requests/#merge-a-merge-request):
    ``PUT /projects/:id/merge_requests/:merge_request_iid/merge``; its ``state`` is then ``merged``."""
    state = {"type": "string", "enum": ["opened", "closed", "merged"]}
    spec = _plan([
        _rest("list_mrs", "GET", "/projects/{id}/merge_requests", "Get all merge requests for this project.",
              {"id": ID, "state": state}, ["id"]),
        _rest("create_mr", "POST", "/projects/{id}/merge_requests", "Creates a new merge request.",
              {"id": ID, "title": {"type": "string"}, "source_branch": {"type": "string"}}, ["id", "title"]),
        _rest("get_mr", "GET", "/projects/{id}/merge_requests/{merge_request_id}", "Shows a merge request.",
              {"id": ID, "merge_request_id": ID}, ["id", "merge_request_id"]),
        _rest("merge_mr", "PUT", "/projects/{id}/merge_requests/{merge_request_id}/merge",
              "Merge changes submitted with MR.", {"id": ID, "merge_request_id": ID,
                                                  "merge_commit_message": {"type": "string"}},
              ["id", "merge_request_id"]),
        _rest("list_projects", "GET", "/projects", "Get a list of projects."),
    ], "code")
    merge = spec.tool("merge_mr")
    assert merge.behaviour.kind == "transition" and merge.behaviour.transition is not None
    assert merge.behaviour.transition.to == "merged"
    with Episode([compile_service(spec)], 0) as episode:
        opened = next(r for r in episode.dump()["code"]["merge_requests"].values() if r["state"] == "opened")
        args = {"id": opened["project_id"], "merge_request_id": opened["id"]}
        assert episode.call("code", "merge_mr", args).success
        assert episode.call("code", "get_mr", args).data["state"] == "merged"
        assert not episode.call("code", "merge_mr", args).success  # merged already: nothing to merge


# -- nested lists of sub-records become child rows that their reads list -------------------------------------------

def test_an_envelopes_recipients_become_rows_that_its_recipient_list_reads() -> None:
    """DocuSign's Envelopes: create (https://developers.docusign.com/docs/esign-rest-api/reference/envelopes/envelopes/create/)
    takes ``recipients`` ("An array of recipient objects": ``signers``, ``carbonCopies``...), and
    EnvelopeRecipients: list (``GET /envelopes/{envelopeId}/recipients``) returns them."""
    recipients = {"type": "object", "description": "Envelope recipients."}
    spec = _plan([
        _rest("create_envelope", "POST", "/v2.1/accounts/{accountId}/envelopes", "Creates an envelope.",
              {"accountId": ID, "emailSubject": {"type": "string"}, "recipients": recipients}, ["accountId"]),
        _rest("get_envelope", "GET", "/v2.1/accounts/{accountId}/envelopes/{envelopeId}", "Gets an envelope.",
              {"accountId": ID, "envelopeId": ID}, ["accountId", "envelopeId"]),
        _rest("list_recipients", "GET", "/v2.1/accounts/{accountId}/envelopes/{envelopeId}/recipients",
              "Gets the status of recipients for an envelope.", {"accountId": ID, "envelopeId": ID},
              ["accountId", "envelopeId"]),
        _rest("add_recipients", "POST", "/v2.1/accounts/{accountId}/envelopes/{envelopeId}/recipients",
              "Adds one or more recipients to an envelope.",
              {"accountId": ID, "envelopeId": ID, "signers": {"type": "array", "items": {"type": "object"}},
               "carbonCopies": {"type": "array", "items": {"type": "object"}}}, ["accountId", "envelopeId"]),
        _rest("list_accounts", "GET", "/v2.1/accounts", "Lists accounts."),
    ], "esign")
    assert spec.tool("create_envelope").behaviour.children == {"recipients": "recipient"}
    signer = {"email": "amy.lee@example.com", "name": "Amy Lee", "recipientId": "1", "routingOrder": "1"}
    with Episode([compile_service(spec)], 0) as episode:
        account = next(iter(episode.dump()["esign"]["accounts"]))
        made = episode.call("esign", "create_envelope", {"accountId": account, "emailSubject": "Please sign",
                                                         "recipients": {"signers": [signer]}})
        assert made.success, made
        listed = episode.call("esign", "list_recipients", {"accountId": account, "envelopeId": made.data["id"]})
        assert listed.success and [r["signers"] for r in listed.data["items"]] == [[signer]]
        bare = episode.call("esign", "create_envelope", {"accountId": account, "emailSubject": "No one yet"})
        assert episode.call("esign", "list_recipients", {"accountId": account, "envelopeId": bare.data["id"]}
                            ).data["items"] == []


def test_a_quotes_line_items_become_rows_that_its_line_item_list_reads() -> None:
    """Stripe's quotes (https://docs.stripe.com/api/quotes/create): ``line_items``, "A list of line items the customer
    is being quoted for", read back by ``GET /v1/quotes/{quote}/line_items``."""
    spec = _plan([
        _rest("create_quote", "POST", "/v1/quotes", "Creates a quote.",
              {"description": {"type": "string"},
               "line_items": {"type": "array", "items": {"type": "object", "properties": {
                   "price": {"type": "string"}, "quantity": {"type": "integer"}}}}}),
        _rest("get_quote", "GET", "/v1/quotes/{quote}", "Retrieves a quote.", {"quote": ID}, ["quote"]),
        _rest("list_quote_line_items", "GET", "/v1/quotes/{quote}/line_items",
              "When retrieving a quote, there is an includable line_items property containing the first handful of "
              "those items.", {"quote": ID, "limit": {"type": "integer"}}, ["quote"]),
        _rest("add_line_item", "POST", "/v1/quotes/{quote}/line_items", "Adds a line item.",
              {"quote": ID, "price": {"type": "string"}, "quantity": {"type": "integer"}}, ["quote"]),
    ], "quotes")
    assert spec.tool("create_quote").behaviour.children == {"line_items": "line_item"}
    with Episode([compile_service(spec)], 0) as episode:
        made = episode.call("quotes", "create_quote", {"description": "Annual plan", "line_items": [
            {"price": "price_basic", "quantity": 2}, {"price": "price_addon", "quantity": 1}]})
        assert made.success, made
        items = episode.call("quotes", "list_quote_line_items", {"quote": made.data["id"]}).data["items"]
        assert sorted((i["price"], i["quantity"]) for i in items) == [("price_addon", 1), ("price_basic", 2)]


def test_a_demoted_create_keeps_neither_its_marks_nor_its_children() -> None:
    """What only the compiled create does (mark its charge, insert sub-records) goes when the gate demotes it; the
    demoted spec still loads."""
    spec = charges_spec()
    demoted = demote_tools(spec, {"refund_charge"})
    behaviour = demoted.tool("refund_charge").behaviour
    assert behaviour.kind == "simulated" and behaviour.planned == "create"
    assert behaviour.marks is None and behaviour.marks_entity is None and behaviour.children is None
    assert load_spec(demoted.model_dump(mode="json")).tool("refund_charge").behaviour.kind == "simulated"


def test_an_action_relating_a_row_to_another_that_takes_none_of_it_is_simulated_with_its_reason() -> None:
    """drchrono's ``POST /api/consent_forms/{id}/apply_to_appointment`` ("Assign (apply) a consent form to
    appointment") as the specs file gives it takes no appointment: it is no create of a ``to_appointment`` row."""
    tools = [
        _rest("list_forms", "GET", "/api/consent_forms", "Retrieve or search consent forms."),
        _rest("get_form", "GET", "/api/consent_forms/{id}", "Retrieve a consent form.", {"id": ID}, ["id"]),
        _rest("apply_form", "POST", "/api/consent_forms/{id}/apply_to_appointment",
              "Assign (apply) a consent form to appointment", {"id": ID, "doctor": {"type": "integer"}}, ["id"]),
    ]
    result = plan_service(RawService(name="clinic", tools=tools, description="clinic", format="openapi-3"), "clinic")
    assert result.spec is not None
    assert result.spec.tool("apply_form").behaviour.kind == "simulated"
    assert any("no parameter says which appointment" in note for note in result.notes["apply_form"])
    with_one = tools[:2] + [_rest("apply_form", "POST", "/api/consent_forms/{id}/apply_to_appointment",
                                  "Assign (apply) a consent form to appointment",
                                  {"id": ID, "appointment": {"type": "integer"}}, ["id", "appointment"])]
    named = plan_service(RawService(name="clinic", tools=with_one, description="clinic", format="openapi-3"), "clinic")
    assert named.spec is not None and not any("says which" in n for n in named.notes.get("apply_form", []))
