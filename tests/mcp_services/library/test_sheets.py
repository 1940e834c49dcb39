"""Behaviour of sheets a user would notice: the tables workflows consult, lookups, appends, edits, ranges."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.policies import policy_plan
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["sheets", "crm", "forms"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def sh(ep: Episode) -> Calls:
    return Calls(ep, "sheets")


def book(sh: Calls, title: str) -> dict[str, Any]:
    (found,) = [s for s in sh.all("list_spreadsheets", query=title) if s["title"] == title]
    return found


def tab(sh: Calls, title: str, name: str) -> dict[str, Any]:
    return next(t for t in sh("list_sheets", spreadsheet_id=book(sh, title)["id"]) if t["title"] == name)


def test_the_account_hierarchy_lists_every_crm_company_with_the_plans_tier_and_manager(ep: Episode, sh: Calls) -> None:
    plan = policy_plan(ep.world)
    rows = sh.all("list_rows", sheet_id=tab(sh, "Account hierarchy", "Accounts")["id"])
    crm = {c["name"]: c for c in Calls(ep, "crm").all("search_companies")}
    assert sorted(r["values"]["Company"] for r in rows) == sorted(crm)
    for row in rows:
        values = row["values"]
        account = plan.account(values["Domain"])
        assert crm[values["Company"]]["domain"] == values["Domain"]
        assert (values["Tier"], values["Account manager email"], values["Parent account"]) == (
            account.tier,
            account.manager_email,
            account.parent or "",
        )
    assert [r["row_number"] for r in rows] == list(range(2, len(rows) + 2))  # the header is row 1


def test_a_lookup_across_a_spreadsheet_finds_the_product_in_every_years_tab(ep: Episode, sh: Calls) -> None:
    product = ep.world.products[1]
    prices = book(sh, "Price list")
    found = sh("find_rows", spreadsheet_id=prices["id"], value=product.name.upper(), column="product")["items"]
    year = ep.world.now_dt.year
    assert [r["sheet_title"] for r in found] == [f"{year} prices", f"{year - 1} prices"]
    assert found[0]["values"]["List price (USD)"] == f"{product.unit_price:.2f}"
    assert float(found[1]["values"]["List price (USD)"]) < product.unit_price
    partial = sh("find_rows", spreadsheet_id=prices["id"], value="plan (monthly)", match="contains")["items"]
    assert {r["values"]["Product"] for r in partial} == {
        p.name for p in ep.world.products if "plan (monthly)" in p.name
    }
    message = sh.refused("find_rows", "invalid_argument", sheet_id=found[0]["sheet_id"], value="x", column="Colour")
    assert "List price (USD)" in message  # says which columns there are
    sh.refused("find_rows", "invalid_argument", value=product.name)  # neither a sheet nor a spreadsheet


def test_a_row_appended_by_name_or_in_order_lands_below_the_last_row(sh: Calls) -> None:
    sheet = tab(sh, "Office supplies order", "This month")  # the user is a writer of it
    before = sh.all("list_rows", sheet_id=sheet["id"])
    by_name = sh("append_row", sheet_id=sheet["id"], fields={"item": "Desk lamp", "Status": "Requested"})
    assert by_name["values"] == {"Item": "Desk lamp", "Quantity": "", "Requested by": "", "Status": "Requested"}
    in_order = sh("append_row", sheet_id=sheet["id"], values=["Webcam HD", "2"])
    assert in_order["cells"] == ["Webcam HD", "2", "", ""] and in_order["key"] == "Webcam HD"
    assert [r["row_number"] for r in sh.all("list_rows", sheet_id=sheet["id"])][-2:] == [
        len(before) + 2,
        len(before) + 3,
    ]
    sh.refused("append_row", "invalid_argument", sheet_id=sheet["id"])
    sh.refused("append_row", "invalid_argument", sheet_id=sheet["id"], values=["a"], fields={"Item": "b"})
    sh.refused("append_row", "invalid_argument", sheet_id=sheet["id"], values=["a", "b", "c", "d", "e"])
    sh.refused("append_row", "invalid_argument", sheet_id=sheet["id"], fields={"Colour": "red"})
    sh.refused("append_row", "invalid_argument", sheet_id=sheet["id"], values=["", " "])


def test_an_update_changes_only_the_named_cells_and_a_deletion_moves_rows_up(sh: Calls) -> None:
    sheet = tab(sh, "Office supplies order", "This month")
    rows = sh.all("list_rows", sheet_id=sheet["id"])
    first, second = rows[0], rows[1]
    updated = sh("update_row", row_id=first["id"], fields={"Status": "Delivered"})
    assert updated["values"] == {**first["values"], "Status": "Delivered"}
    renamed = sh("update_row", row_id=first["id"], fields={"Item": "Sticky notes"})
    assert renamed["key"] == "Sticky notes"
    assert sh("find_rows", sheet_id=sheet["id"], value="sticky NOTES", column="Item")["items"][0]["id"] == first["id"]
    sh.refused("update_row", "invalid_argument", row_id=first["id"], fields={"Item": "Sticky notes"})  # nothing changes
    sh.refused("update_row", "invalid_argument", row_id=first["id"], fields={})
    gone = sh("delete_row", row_id=first["id"])
    assert gone["row_number"] == 2 and gone["values"]["Item"] == "Sticky notes"
    assert sh("get_row", row_id=second["id"])["row_number"] == 2
    sh.refused("get_row", "not_found", row_id=first["id"])


def test_a_reader_reads_the_sheet_but_every_change_is_refused_and_changes_nothing(ep: Episode, sh: Calls) -> None:
    me = ep.world.user.email
    accounts = book(sh, "Account hierarchy")
    assert accounts["access"][me] == "reader"
    sheet = tab(sh, "Account hierarchy", "Accounts")
    row = sh.all("list_rows", sheet_id=sheet["id"])[0]  # reading is open to everyone at the company
    message = sh.refused("append_row", "permission_denied", sheet_id=sheet["id"], values=["Acme"])
    assert "reader" in message and accounts["owner_email"] in message  # says who to ask
    sh.refused("update_row", "permission_denied", row_id=row["id"], fields={"Tier": "Gold"})
    sh.refused("delete_row", "permission_denied", row_id=row["id"])
    sh.refused("add_column", "permission_denied", sheet_id=sheet["id"], name="Notes")
    sh.refused("add_sheet", "permission_denied", spreadsheet_id=accounts["id"], title="Old", columns=["A"])
    sh.refused("share_spreadsheet", "permission_denied", spreadsheet_id=accounts["id"], email="a@b.example")
    prices = book(sh, "Price list")  # not shared with the user at all
    assert me not in prices["access"] and prices["owner_email"] != me
    price_tab = prices["sheets"][0]["sheet_id"]
    assert sh("get_values", sheet_id=price_tab, range="A1:A1")["values"] == [["SKU"]]
    assert "not among" in sh.refused("append_row", "permission_denied", sheet_id=price_tab, values=["X-1"])


def test_a_writer_may_change_and_share_what_it_was_shared_with(ep: Episode, sh: Calls) -> None:
    me = ep.world.user.email
    for event in policy_plan(ep.world).events:  # the guest lists are the registration workflow's to fill
        guests = book(sh, event.guest_list_title)
        assert guests["access"][me] == "writer"
        row = sh("append_row", sheet_id=tab(sh, event.guest_list_title, "Guests")["id"], values=["Ana Ruiz"])
        assert row["key"] == "Ana Ruiz"
    shared = sh("share_spreadsheet", spreadsheet_id=guests["id"], email="ana@b.example")
    assert shared["access"]["ana@b.example"] == "reader"


def test_a1_ranges_read_the_header_and_cells_as_the_sheet_shows_them(sh: Calls) -> None:
    sheet = tab(sh, "Routing", "Lead routing")
    rows = sh.all("list_rows", sheet_id=sheet["id"])
    assert sh("get_values", sheet_id=sheet["id"], range="A1:B2")["values"] == [
        ["Region", "Owner"],
        rows[0]["cells"][:2],
    ]
    assert sh("get_values", sheet_id=sheet["id"], range="c:c")["values"] == [["Owner email"]] + [
        [r["cells"][2]] for r in rows
    ]
    assert sh("get_values", sheet_id=sheet["id"], range="A3")["values"] == [[rows[1]["cells"][0]]]
    assert len(sh("get_values", sheet_id=sheet["id"])["values"]) == len(rows) + 1
    for bad in ("B2:A1", "1A", "A1:B2:C3", "AAA1"):
        sh.refused("get_values", "invalid_argument", sheet_id=sheet["id"], range=bad)


def test_tabs_and_columns_are_unique_and_sharing_sets_who_may_edit(ep: Episode, sh: Calls) -> None:
    made = sh("create_spreadsheet", title="Renewals Q3", columns=["Company", "Renewal date"], sheet_title="Due")
    assert made["owner_email"] == ep.world.user.email and [t["title"] for t in made["sheets"]] == ["Due"]
    sh.refused("add_sheet", "conflict", spreadsheet_id=made["id"], title="due", columns=["A"])
    second = sh("add_sheet", spreadsheet_id=made["id"], title="Done", columns=["Company"])
    assert [t["title"] for t in sh("get_spreadsheet", spreadsheet_id=made["id"])["sheets"]] == ["Due", "Done"]
    assert sh("add_column", sheet_id=second["id"], name="Owner")["columns"] == ["Company", "Owner"]
    sh.refused("add_column", "invalid_argument", sheet_id=second["id"], name="owner")
    sh.refused("create_spreadsheet", "invalid_argument", title="Dupes", columns=["A", "a"])
    colleague = ep.world.team[3].email
    assert sh("share_spreadsheet", spreadsheet_id=made["id"], email=colleague)["access"] == {colleague: "reader"}
    assert sh("share_spreadsheet", spreadsheet_id=made["id"], email=colleague, role="writer")["access"] == {
        colleague: "writer"
    }
    sh.refused("share_spreadsheet", "invalid_state", spreadsheet_id=made["id"], email=colleague, role="writer")
    sh.refused("share_spreadsheet", "invalid_state", spreadsheet_id=made["id"], email=ep.world.user.email)


def test_every_event_guest_list_agrees_with_its_registration_form(ep: Episode, sh: Calls) -> None:
    forms = Calls(ep, "forms")
    for event in policy_plan(ep.world).events:
        guests = sh.all("list_rows", sheet_id=tab(sh, event.guest_list_title, "Guests")["id"])
        (form,) = [f for f in forms.all("list_forms") if f["title"] == event.form_title]
        responses = forms.all("list_responses", form_id=form["id"])
        assert sorted(g["values"]["Email"] for g in guests) == sorted(r["respondent_email"] for r in responses)
        assert sorted(g["values"]["Registered at"] for g in guests) == sorted(r["submitted_at"] for r in responses)
        assert sum(g["values"]["Status"] == "Registered" for g in guests) == event.registered


def test_a_row_added_from_outside_only_adds_it(ep: Episode, sh: Calls) -> None:
    sheet = tab(sh, "Office supplies order", "This month")
    key = ep.run_event(
        "sheets", "row_added", sheet_id=sheet["id"], values=["Desk lamp", "2", "Ana", "Requested"], hours_ago=2
    )
    assert_added_only(ep, "sheets")
    row = sh("get_row", row_id=key)
    assert row["values"]["Item"] == "Desk lamp" and row["created_at"] < ep.world.now
    with pytest.raises(ToolError):
        ep.run_event("sheets", "row_added", sheet_id=sheet["id"], values=["a", "b", "c", "d", "e"])
