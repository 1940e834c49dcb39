"""The compiler's root causes (issue 32), each on a small spec written here: what a user of the product would
notice, for every service with the pattern, not only the ones the issue names."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp_services.kernel.episode import Episode

from generator.catalog import Catalog, failed_check
from generator.compiler import compile_service
from generator.compiler.simulated import write_kind
from generator.gate.contracts import gate_service
from generator.importers.raw import RawService, RawTool
from generator.measures import placeholder_values, plumbing_uses, reversed_ranges
from generator.naming import collision_note, product_title
from generator.pipeline import ImportConfig, import_file
from generator.planner import plan_service
from generator.schemas import service_plumbing
from generator.spec import ServiceSpec, load_spec
from generator.worldmodel import OfflineWorldModel, SimRequest
from tests.generator.test_cli import run
from tests.generator.test_planner_behaviour import _rest

ID = {"type": "string"}


def _plan(tools: list[RawTool], name: str = "mailer", source: str | None = None, title: str | None = None) -> ServiceSpec:
    raw = RawService(name=source or name, tools=tools, description="Mail.", format="openapi-3", title=title)
    result = plan_service(raw, name)
    assert result.spec is not None, result.problem
    return result.spec


# -- 1. credentials and plumbing never filter and are never row data ----------------------------------------

TOKEN = {"type": "string", "description": "The token associated with the Server on which this request will operate."}


def mailer_with_credentials() -> ServiceSpec:
    creds = {"X_Mailer_Server_Token": TOKEN, "key": {"type": "string"}}
    return _plan([
        _rest("list_templates", "GET", "/templates", "Lists templates.",
              {**creds, "label": {"type": "string"}, "count": {"type": "integer"}}, ["X_Mailer_Server_Token"]),
        _rest("create_template", "POST", "/templates", "Creates a template.",
              {**creds, "name": {"type": "string"}, "subject": {"type": "string"}}, ["name"]),
        _rest("get_template", "GET", "/templates/{template_id}", "Gets a template.", {**creds, "template_id": ID},
              ["template_id"]),
        _rest("list_bounces", "GET", "/bounces", "Lists bounces.", {**creds, "count": {"type": "integer"}}),
    ])


def test_a_credential_every_call_carries_is_no_filter_and_no_column() -> None:
    spec = mailer_with_credentials()
    for tool in spec.tools:
        assert not {"X_Mailer_Server_Token", "key"} & set(tool.parameters["properties"]), tool.name
    assert not {"X_Mailer_Server_Token", "key"} & {f.name for e in spec.entities for f in e.fields}
    assert plumbing_uses(spec) == []
    with Episode([compile_service(spec)], 0) as episode:  # every template listed: nothing filters on the key
        listed = episode.call("mailer", "list_templates", {"count": 100})
        assert listed.success and listed.data["total"] == len(episode.dump()["mailer"]["templates"])


def test_plumbing_is_what_most_tools_take_under_a_credential_or_header_name() -> None:
    tools = [{"x_acme_consumer_id": {}, "page_token": {}, "name": {}, "key": {}}] * 3 + [{"name": {}}]
    assert service_plumbing(tools) == frozenset({"x_acme_consumer_id", "key"})
    assert service_plumbing(tools, frozenset({"key"})) == frozenset({"x_acme_consumer_id"})  # /keys/{key} names a row
    assert service_plumbing(tools[:2]) == frozenset()  # two tools say too little


# -- 2. request bodies: free-form wrappers are stored, partial updates merge ----------------------------------

def tracker_spec() -> ServiceSpec:
    fields = {"type": "object", "description": "The issue's fields, by field name.", "additionalProperties": {}}
    return _plan([
        _rest("create_issue", "POST", "/rest/api/3/issue", "Creates an issue.", {"fields": fields}, ["fields"]),
        _rest("get_issue", "GET", "/rest/api/3/issue/{issueIdOrKey}", "Returns an issue.", {"issueIdOrKey": ID},
              ["issueIdOrKey"]),
        _rest("list_issues", "GET", "/rest/api/3/issue", "Lists issues.", {"maxResults": {"type": "integer"}}),
        _rest("edit_issue", "PUT", "/rest/api/3/issue/{issueIdOrKey}", "Edits an issue: only the fields you pass change.",
              {"issueIdOrKey": ID, "fields": fields}, ["issueIdOrKey"]),
    ], name="tracker")


def test_a_free_form_fields_wrapper_is_kept_and_an_update_merges_into_it() -> None:
    spec = tracker_spec()
    assert spec.tool("create_issue").bindings["fields"].role == "field"
    with Episode([compile_service(spec)], 0) as episode:
        made = episode.call("tracker", "create_issue", {"fields": {"summary": "Login fails", "issuetype": "Bug"}})
        assert made.success, made.error_message
        key = made.data["id"]
        got = episode.call("tracker", "get_issue", {"issueIdOrKey": key}).data
        assert got["fields"] == {"summary": "Login fails", "issuetype": "Bug"}
        edited = episode.call("tracker", "edit_issue", {"issueIdOrKey": key, "fields": {"summary": "Login fails on Safari"}})
        assert edited.success, edited.error_message
        got = episode.call("tracker", "get_issue", {"issueIdOrKey": key}).data
        assert got["fields"] == {"summary": "Login fails on Safari", "issuetype": "Bug"}  # the issue type stays


def test_a_partial_update_of_a_nested_object_keeps_what_it_does_not_name() -> None:
    spec = load_spec({
        "name": "people", "description": "People.",
        "entities": [{"name": "employee", "table": "employees", "key": {"prefix": "emp"}, "label": "name",
                      "fields": [{"name": "name", "type": "string"},
                                 {"name": "address", "type": "object", "json_schema": {
                                     "type": "object", "properties": {"city": {"type": "string"},
                                                                      "street": {"type": "string"}}}}]}],
        "tools": [
            {"name": "update_employee", "effect": "write", "description": "Update an employee.",
             "parameters": {"type": "object", "properties": {"employee_id": ID, "address": {
                 "type": "object", "properties": {"city": {"type": "string"}, "street": {"type": "string"}}}},
                            "required": ["employee_id"]},
             "behaviour": {"kind": "update", "entity": "employee"},
             "bindings": {"employee_id": {"role": "key"}, "address": {"role": "field"}}},
        ],
    })
    with Episode([compile_service(spec)], 0) as episode:
        before = episode.dump()["people"]["employees"]["emp_0001"]["address"]
        done = episode.call("people", "update_employee", {"employee_id": "emp_0001", "address": {"city": "Leeds"}})
        assert done.success, done.error_message
        after = episode.dump()["people"]["employees"]["emp_0001"]["address"]
        assert after == {**before, "city": "Leeds"} and after.get("street") == before.get("street")


# -- 3. simulated writes change the named row and never insert; actions change their row or are refused ---------

def templates_spec() -> ServiceSpec:
    """Mandrill's shape: RPC-like POSTs named by the path's last segment, templates named by ``name``."""
    name = {"type": "string", "description": "The immutable name of an existing template."}
    return load_spec({
        "name": "mails", "description": "Mail templates.",
        "entities": [{"name": "template", "table": "templates", "key": {"prefix": "tpl"}, "label": "name",
                      "fields": [{"name": "name", "type": "string"}, {"name": "subject", "type": "string"}]},
                     {"name": "tasklist", "table": "tasklists", "key": {"prefix": "tl"}, "label": "title",
                      "fields": [{"name": "title", "type": "string"}]}],
        "tools": [
            {"name": "templates_list", "effect": "read", "description": "Lists templates.",
             "http": {"method": "POST", "path": "/templates/list.json"},
             "parameters": {"type": "object", "properties": {}}, "behaviour": {"kind": "list", "entity": "template"}},
            {"name": "templates_update", "effect": "write", "description": "Updates a template.",
             "http": {"method": "POST", "path": "/templates/update.json"},
             "parameters": {"type": "object", "properties": {"name": name, "subject": {"type": "string"}},
                            "required": ["name"]},
             "behaviour": {"kind": "simulated", "entity": "template"}},
            {"name": "templates_delete", "effect": "write", "description": "Deletes a template.",
             "http": {"method": "POST", "path": "/templates/delete.json"},
             "parameters": {"type": "object", "properties": {"name": name}, "required": ["name"]},
             "behaviour": {"kind": "simulated", "entity": "template"}},
            {"name": "tasks_clear", "effect": "write", "description": "Clears all completed tasks from the list.",
             "http": {"method": "POST", "path": "/lists/{tasklist}/clear"},
             "parameters": {"type": "object", "properties": {"tasklist": ID}, "required": ["tasklist"]},
             "behaviour": {"kind": "simulated", "entity": "tasklist"}},
        ],
    })


def test_simulated_updates_and_deletes_act_on_the_named_row_and_never_insert() -> None:
    service = compile_service(templates_spec())
    with Episode([service], 0) as episode:
        stored = episode.dump()["mails"]["templates"]
        first = next(iter(stored.values()))
        updated = episode.call("mails", "templates_update", {"name": first["name"], "subject": "Welcome aboard"})
        assert updated.success, updated.error_message
        after = episode.dump()["mails"]["templates"]
        assert len(after) == len(stored) and after[first["id"]]["subject"] == "Welcome aboard"
        deleted = episode.call("mails", "templates_delete", {"name": first["name"]})
        assert deleted.success, deleted.error_message
        assert set(episode.dump()["mails"]["templates"]) == set(stored) - {first["id"]}
        unknown = episode.call("mails", "templates_update", {"name": "No such template", "subject": "x"})
        assert not unknown.success and unknown.error_code == "not_found"
        assert len(episode.dump()["mails"]["templates"]) == len(stored) - 1


def test_a_simulated_action_that_cannot_change_its_row_is_refused_and_changes_nothing() -> None:
    service = compile_service(templates_spec())
    runtime = service.runtime  # type: ignore[attr-defined]
    assert write_kind(runtime, templates_spec().tool("tasks_clear")) is None
    with Episode([service], 0) as episode:
        before = episode.dump()["mails"]
        cleared = episode.call("mails", "tasks_clear", {"tasklist": "tl_0001"})
        assert not cleared.success and cleared.error_code == "not_implemented"
        after = episode.dump()["mails"]
        assert {t: r for t, r in after.items() if t != "simulated_calls"} == \
            {t: r for t, r in before.items() if t != "simulated_calls"}


def test_an_action_that_records_a_row_of_its_own_instead_of_changing_its_target_is_not_implemented() -> None:
    spec = _plan([
        _rest("list_disputes", "GET", "/payment_dispute", "Lists payment disputes.", {"limit": {"type": "integer"}}),
        _rest("get_dispute", "GET", "/payment_dispute/{payment_dispute_id}", "Gets a payment dispute.",
              {"payment_dispute_id": ID}, ["payment_dispute_id"]),
        _rest("create_dispute", "POST", "/payment_dispute", "Opens a payment dispute.",
              {"reason": {"type": "string"}}, ["reason"]),
        _rest("contest_dispute", "POST", "/payment_dispute/{payment_dispute_id}/contest",
              "Contests a payment dispute: the seller disagrees with the buyer's claim.",
              {"payment_dispute_id": ID, "note": {"type": "string"}}, ["payment_dispute_id"]),
    ], name="disputes")
    verdict, _ = gate_service(spec)
    contest = next(t for t in verdict.tools if t.name == "contest_dispute")
    if contest.status == "implemented":  # then contesting changes the dispute a user reads back
        with Episode([compile_service(spec)], 0) as episode:
            before = episode.call("disputes", "get_dispute", {"payment_dispute_id": "payment_dispute_0001"}).data
            done = episode.call("disputes", "contest_dispute", {"payment_dispute_id": "payment_dispute_0001"})
            assert done.success
            after = episode.call("disputes", "get_dispute", {"payment_dispute_id": "payment_dispute_0001"}).data
            assert {k: v for k, v in after.items() if k != "updated_at"} != \
                {k: v for k, v in before.items() if k != "updated_at"}
    else:
        assert contest.reason


# -- 6. seeded data a product holds ----------------------------------------------------------------------

def events_spec() -> ServiceSpec:
    return _plan([
        _rest("list_events", "GET", "/events", "Lists events.",
              {"updated_since": {"type": "string", "format": "date-time"}, "limit": {"type": "integer"},
               "todate": {"type": "string", "format": "date"},
               "offset": {"type": "string", "description": "Integer: how many events to skip."}}),
        _rest("create_event", "POST", "/events", "Creates an event.",
              {"title": {"type": "string"}, "start_at": {"type": "string", "format": "date-time"},
               "end_at": {"type": "string", "format": "date-time"},
               "updated_since": {"type": "string", "format": "date-time"}}, ["title"]),
        _rest("get_event", "GET", "/events/{event_id}", "Gets an event.", {"event_id": ID}, ["event_id"]),
    ], name="calendar")


def test_query_parameters_are_not_columns_and_time_ranges_run_forwards() -> None:
    spec = events_spec()
    event = next(e for e in spec.entities if e.name == "event")
    columns = {f.name for f in event.fields}
    assert not {"updated_since", "offset", "todate"} & columns and {"start_at", "end_at"} <= columns
    assert spec.tool("list_events").bindings["offset"].role == "offset"
    with Episode([compile_service(spec)], 0) as episode:
        dump = episode.dump()["calendar"]
    rows = list(dump["events"].values())
    assert rows and all(r["start_at"] <= r["end_at"] for r in rows)
    assert placeholder_values(spec, dump) == [] and reversed_ranges(spec, dump) == []


# -- 7. names that are the product ------------------------------------------------------------------------

def test_a_service_is_titled_after_its_product_and_a_name_collision_says_which_product() -> None:
    assert product_title("KYC API Documentation", "brex.io") == "brex.io KYC API"
    assert product_title("Fulfillment API", "ebay.com:sell-fulfillment") == "eBay Fulfillment API"
    assert product_title("Drive API", "googleapis.com:drive") == "Google Drive API"
    assert product_title("API v1.0.0", "envoice.in") == "Envoice API"
    assert product_title("Mandrill", "mandrillapp.com") == "Mandrill"
    assert product_title("google_admin", "composio:google_admin") == "google_admin"  # a toolkit is not the product
    assert product_title("GOV.UK Pay API", "payments.service.gov.uk:payments") == "GOV.UK Pay API"
    assert "not Brex Inc." in collision_note("brex.io") and collision_note("brex.com") == ""
    spec = _plan(mailer_with_credentials_tools(), name="brex", source="brex.io", title="KYC API Documentation")
    assert spec.title == "brex.io KYC API" and spec.description.startswith("brex.io's API, not Brex Inc.")


def mailer_with_credentials_tools() -> list[RawTool]:
    return [_rest("list_companies", "GET", "/companies", "Lists companies in the register.", {"limit": {"type": "integer"}}),
            _rest("get_company", "GET", "/companies/{company_id}", "Gets a company.", {"company_id": ID}, ["company_id"])]


# -- issue 33: simulated values of an imported service are typed and plausible ----------------------------------

def test_an_imported_services_simulated_answers_hold_dates_booleans_and_emails(tmp_path: Path) -> None:
    answer = {"type": "object", "properties": {
        "generated_at": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"},
        "period_start": {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "is_active": {"description": "Whether the account is active."},
        "enabled": {"type": "boolean"},
        "owner_email": {"type": "string", "pattern": r"^[a-z0-9.]+@[a-z0-9]+\.[a-z]{2,6}$"},
        "billing_contact": {"type": "string", "format": "email"}}}
    document = {"service": "acme", "description": "Acme accounts.", "tools": [
        {"name": "summarize_account_health", "description": "Summarises the account's health.",
         "inputSchema": {"type": "object", "properties": {}}, "outputSchema": answer, "annotations": {"readOnlyHint": True}},
        {"name": "list_invoices", "description": "Lists invoices.", "inputSchema": {"type": "object", "properties": {}}}]}
    source = tmp_path / "acme.json"
    source.write_text(json.dumps(document))
    import_file(source, ImportConfig(out=tmp_path / "catalog", workers=1))
    catalog = Catalog(tmp_path / "catalog")
    name = catalog.names()[0]
    tool = catalog.spec(name).tool("summarize_account_health")
    assert tool.result is not None and set(answer["properties"]) <= set(tool.result["properties"])
    for seed in range(3):  # what the world model says when no rows answer the call: values from the schema
        data = OfflineWorldModel().answer(SimRequest(
            service=name, tool=tool.name, description=tool.description, effect="read", input_schema=tool.parameters,
            output_schema=tool.result, arguments={}, world_seed=seed))
        assert datetime.strptime(data["generated_at"], "%Y-%m-%dT%H:%M:%SZ").year >= 2000
        assert datetime.strptime(data["period_start"], "%Y-%m-%d").year >= 2000
        assert isinstance(data["enabled"], bool) and isinstance(data["is_active"], bool)
        for key in ("owner_email", "billing_contact"):
            local, _, domain = data[key].partition("@")
            assert len(local) >= 3 and "." in domain and len(domain.split(".")[0]) >= 3, data[key]


def test_generator_catalog_names_the_check_a_simulated_tool_failed(tmp_path: Path, capsys: Any) -> None:
    assert failed_check("compiled behaviour failed the gate: action_keeps_row: the action 'clear' left the list "
                        "'list_0001' it names unchanged") == "action_keeps_row"
    assert failed_check("marked simulated by the planner: the world model answers it") is None
    tasklist = [{"name": "tasklist", "in": "path", "required": True, "schema": {"type": "string"}}]
    document = {"openapi": "3.0.0", "info": {"title": "Tasks API", "version": "1"}, "paths": {
        "/lists": {"get": {"operationId": "list_tasklists", "summary": "Lists the task lists.", "responses": {"200": {"description": "ok"}}},
                   "post": {"operationId": "create_tasklist", "summary": "Creates a task list.", "requestBody": {"content": {
                       "application/json": {"schema": {"type": "object", "properties": {"title": {"type": "string"}}}}}},
                       "responses": {"200": {"description": "ok"}}}},
        "/lists/{tasklist}": {"get": {"operationId": "get_tasklist", "summary": "Gets a task list.", "parameters": tasklist,
                                      "responses": {"200": {"description": "ok"}}}},
        "/lists/{tasklist}/clear": {"post": {"operationId": "clear_tasklist", "parameters": tasklist,
                                             "summary": "Clears all completed tasks from the task list.",
                                             "responses": {"200": {"description": "ok"}}}}}}
    source = tmp_path / "todo_lists.json"
    source.write_text(json.dumps(document))
    import_file(source, ImportConfig(out=tmp_path / "catalog", workers=1))
    code, printed, _ = run(["catalog", "--catalog", str(tmp_path / "catalog")], capsys)
    assert code == 0 and printed.startswith("generated: 1 services")
    catalog = Catalog(tmp_path / "catalog")
    clear = next(t for t in catalog.index[catalog.names()[0]].tools if t.name == "clear_tasklist")
    assert clear.status == "simulated" and failed_check(clear.reason) == "action_keeps_row", clear.reason
    assert f"failed checks: {failed_check(clear.reason)} 1" in printed
