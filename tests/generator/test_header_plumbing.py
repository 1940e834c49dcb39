"""Request headers every call carries are plumbing, whatever their vendor calls them (the held-out check of
bench/heldout: Xero's ``xero-tenant-id``, Walmart's ``WM_SEC.AUTH_SIGNATURE`` and Frankie's ``X-Frankie-CustomerID``
were columns of every record, seeded per row and written by creates). The source spells them as HTTP headers are
spelled (words joined by hyphens or dots); the planner renames them (``xero_tenant_id``) and then drops them."""

from __future__ import annotations

from mcp_services.kernel.episode import Episode

from generator.compiler import compile_service
from generator.importers.raw import RawService
from generator.planner import plan_service
from generator.schemas import service_plumbing
from generator.spec import ServiceSpec
from tests.generator.test_planner_behaviour import _rest

TENANT = {"type": "string", "description": "Xero identifier for Tenant"}
SIGNATURE = {"type": "string", "description": "The vendor's digital signature"}


def _ledger() -> ServiceSpec:
    heads = {"xero-tenant-id": TENANT, "WM_SEC.AUTH_SIGNATURE": SIGNATURE}
    result = plan_service(RawService(name="ledger", description="Accounts.", format="openapi-3", tools=[
        _rest("get_accounts", "GET", "/Accounts", "Retrieves the chart of accounts.",
              {**heads, "where": {"type": "string"}}, ["xero-tenant-id"]),
        _rest("create_account", "POST", "/Accounts", "Creates an account.",
              {**heads, "Name": {"type": "string"}, "Code": {"type": "string"}}, ["xero-tenant-id", "Name"]),
        _rest("get_account", "GET", "/Accounts/{AccountID}", "Retrieves a single chart of accounts.",
              {**heads, "AccountID": {"type": "string"}}, ["xero-tenant-id", "AccountID"]),
        _rest("list_items", "GET", "/Items", "Retrieves items.", {"Accept-Language": {"type": "string"}}),
    ]))
    assert result.spec is not None, result.problem
    return result.spec


def test_header_spelled_parameters_most_tools_take_are_dropped_and_never_columns() -> None:
    spec = _ledger()
    for tool in spec.tools:
        assert not {"xero_tenant_id", "WM_SEC_AUTH_SIGNATURE"} & set(tool.parameters["properties"]), tool.name
    columns = {f.name for e in spec.entities for f in e.fields}
    assert not {"xero_tenant_id", "WM_SEC_AUTH_SIGNATURE"} & columns
    with Episode([compile_service(spec)], 0) as episode:  # a user calls without them, as the API's SDKs set them
        made = episode.call("ledger", "create_account", {"Name": "Sales", "Code": "200"})
        assert made.success, made.error_message
        read = episode.call("ledger", "get_account", {"AccountID": made.data["id"]})
        assert read.success and read.data["Name"] == "Sales"


def test_a_header_spelling_alone_is_not_enough_nor_a_plain_name() -> None:
    tools = [{"accept_language": {}, "page_size": {}, "name": {}}] * 3 + [{"name": {}}]
    spelled = {"accept_language": "Accept-Language", "page_size": "page_size"}
    assert service_plumbing(tools, spelled=spelled) == frozenset({"accept_language"})
    assert service_plumbing(tools) == frozenset()  # named as a query parameter: data
    rare = [{"accept_language": {}}] + [{"name": {}}] * 3  # one tool of four: too few to be what every call carries
    assert service_plumbing(rare, spelled=spelled) == frozenset()
