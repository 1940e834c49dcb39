"""The files service (Box / Google Drive): what a user of the drive would notice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolResult
from mcp_services.kernel.store import rows_of


@pytest.fixture(scope="module")
def shared_episode() -> Iterator[Episode]:
    episode = Episode.create(["crm", "files"], world_seed=0)
    yield episode
    episode.close()


@pytest.fixture
def ep(shared_episode: Episode) -> Episode:
    shared_episode.reset()
    return shared_episode


def call(ep: Episode, tool: str, **args: Any) -> ToolResult:
    return ep.call("files", tool, args)


def ok(ep: Episode, tool: str, **args: Any) -> Any:
    result = call(ep, tool, **args)
    assert result.success, result.envelope()
    return result.data


def state(ep: Episode) -> str:
    return json.dumps(ep.dump(), sort_keys=True)


def refused(ep: Episode, code: str, tool: str, **args: Any) -> str:
    """Call a tool that must fail with ``code`` and change nothing; returns the error message."""
    before = state(ep)
    result = call(ep, tool, **args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    assert state(ep) == before
    return str(result.error_message)


def items(ep: Episode) -> list[dict[str, Any]]:
    """Every file and folder row of the drive."""
    dump = ep.dump()["files"]
    return rows_of(dump, "folders") + rows_of(dump, "files")


def find(ep: Episode, name: str) -> dict[str, Any]:
    page = ok(ep, "search_files", name=name, limit=100)
    matches = [f for f in page["items"] if f["name"] == name]
    assert len(matches) == 1, (name, [f["name"] for f in page["items"]])
    return matches[0]


def folder(ep: Episode, name: str) -> dict[str, Any]:
    page = ok(ep, "search_folders", query=name, include_trashed=True, limit=100)
    return next(f for f in page["items"] if f["name"] == name)


# -- seeded data -----------------------------------------------------------------------------------


def test_seeded_drive_has_a_folder_per_crm_company_with_its_contract_and_proposal(ep: Episode) -> None:
    companies = [c["name"] for c in rows_of(ep.dump()["crm"], "companies")]
    clients = folder(ep, "Clients")
    listed = ok(ep, "list_folder_items", folder_id=clients["id"], limit=100)["items"]
    assert sorted(f["name"] for f in listed) == sorted(companies)
    assert all(f["type"] == "folder" and f["path"] == f"/Clients/{f['name']}" for f in listed)
    first = listed[0]
    names = [f["name"] for f in ok(ep, "list_folder_items", folder_id=first["id"], limit=100)["items"]]
    assert f"{first['name']} - Master Services Agreement.pdf" in names
    assert any(n.startswith(f"{first['name']} - Proposal ") for n in names)


def test_seeded_drive_is_large_and_varied(ep: Episode) -> None:
    dump = ep.dump()["files"]
    rows = items(ep)
    assert 200 <= len(rows) <= 1000 and 100 <= len(dump["shares"]) <= 1000
    types = {r.get("mime_type") for r in rows}
    assert {"application/pdf", "text/markdown", "text/csv", "image/png"} <= types
    assert any(r["trashed"] for r in rows) and any(r["shared_link_url"] for r in rows)


def test_documents_name_the_same_people_and_emails_as_the_crm(ep: Episode) -> None:
    contacts = {c["email"]: f"{c['first_name']} {c['last_name']}" for c in rows_of(ep.dump()["crm"], "contacts")}
    team = {p.email for p in ep.world.team}
    contract = ok(ep, "search_files", query="MASTER SERVICES AGREEMENT Signed", limit=1)["items"][0]
    text = ok(ep, "download_file", file_id=contract["id"])["content"]
    named = [email for email in contacts if email in text]
    assert named and all(contacts[email] in text for email in named)
    for share in rows_of(ep.dump()["files"], "shares"):
        assert share["email"] in contacts or share["email"] in team
    shares = ok(ep, "list_shares", file_id=contract["id"])["items"]
    assert all(s["person_name"] == contacts[s["email"]] for s in shares if s["email"] in contacts)


def test_invoices_bill_crm_customers_with_amounts(ep: Episode) -> None:
    page = ok(ep, "search_files", name="Invoice INV-", limit=100)
    assert page["total"] >= 50
    invoice = page["items"][0]
    text = ok(ep, "download_file", file_id=invoice["id"])["content"]
    assert "Total due: USD " in text and "Bill to:" in text
    company = invoice["name"].split(" - ", 1)[1].removesuffix(".pdf")
    assert company in {c["name"] for c in rows_of(ep.dump()["crm"], "companies")}


# -- browsing and search ---------------------------------------------------------------------------


def test_root_listing_shows_folders_first_and_pages_through_everything(ep: Episode) -> None:
    first = ok(ep, "list_folder_items", limit=4)
    assert [f["type"] for f in first["items"]] == ["folder"] * 4
    seen = [f["id"] for f in first["items"]]
    cursor = first["next_cursor"]
    while cursor:
        page = ok(ep, "list_folder_items", limit=4, cursor=cursor)
        seen += [f["id"] for f in page["items"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == first["total"]
    assert refused(ep, "invalid_argument", "list_folder_items", cursor="abc")


def test_listing_a_folder_hides_trashed_items(ep: Episode) -> None:
    archive = folder(ep, "Archive")
    names = [f["name"] for f in ok(ep, "list_folder_items", folder_id=archive["id"], limit=100)["items"]]
    assert "Untitled document.txt" not in names and "Old proposals" not in names
    assert names


def test_search_needs_every_word_in_the_name_or_text(ep: Episode) -> None:
    page = ok(ep, "search_files", query="invoice overdue", limit=100)
    assert page["total"] > 0
    for f in page["items"]:
        text = ok(ep, "download_file", file_id=f["id"])["content"].lower() + f["name"].lower()
        assert "invoice" in text and "overdue" in text
    assert ok(ep, "search_files", query="invoice zzzyqx")["total"] == 0


def test_search_filters_by_owner_type_folder_and_sharing(ep: Episode) -> None:
    accountant = ep.world.team_member("accountant").email
    owned = ok(ep, "search_files", owner_email=accountant.upper(), limit=100)["items"]
    assert owned and all(f["owner_email"] == accountant for f in owned)
    csvs = ok(ep, "search_files", mime_type="text/csv", limit=100)["items"]
    assert csvs and all(f["mime_type"] == "text/csv" for f in csvs)
    images = ok(ep, "search_files", mime_type="image/*", limit=100)["items"]
    assert {f["mime_type"] for f in images} == {"image/png", "image/jpeg"}
    finance = folder(ep, "Finance")
    inside = ok(ep, "search_files", folder_id=finance["id"], limit=100)
    assert inside["total"] > 70 and all(f["path"].startswith("/Finance/") for f in inside["items"])
    share = next(s for s in rows_of(ep.dump()["files"], "shares") if s["item_id"].startswith("file_"))
    shared = ok(ep, "search_files", shared_with_email=share["email"], limit=100)["items"]
    assert shared and all(share["email"] in f["shared_with"] for f in shared)


def test_search_filters_by_company_and_modified_dates(ep: Episode) -> None:
    company = ep.world.organisations[1].name
    hits = ok(ep, "search_files", company_name=company, limit=100)["items"]
    assert any(f["name"].startswith(company) for f in hits)
    person = next(p for p in ep.world.customers if p.organisation_id == ep.world.organisations[1].id)
    about = ok(ep, "search_files", person_name=person.name, company_name=company, limit=100)["items"]
    assert about and all(person.name in ok(ep, "download_file", file_id=f["id"])["content"] for f in about)
    today = ep.world.now[:10]
    recent = ok(ep, "search_files", modified_after="2025-01-01", modified_before=today, limit=100)["items"]
    assert recent and all("2025-01-01" <= f["modified_at"][:10] < today for f in recent)
    newest = ok(ep, "search_files", limit=5)["items"]
    assert [f["modified_at"] for f in newest] == sorted((f["modified_at"] for f in newest), reverse=True)


def test_trash_is_searched_only_when_asked(ep: Episode) -> None:
    live = ok(ep, "search_files", name="Proposal draft v1", limit=100)
    trashed = ok(ep, "search_files", name="Proposal draft v1", in_trash=True, limit=100)
    assert live["total"] == 0 and trashed["total"] > 0 and all(f["trashed"] for f in trashed["items"])


def test_unknown_ids_are_not_found(ep: Episode) -> None:
    assert "search_files" in refused(ep, "not_found", "get_file", file_id="file_9999")
    refused(ep, "not_found", "list_folder_items", folder_id="folder_9999")
    refused(ep, "not_found", "search_files", folder_id="folder_9999")
    a_file = find(ep, "Expense policy.md")
    refused(ep, "invalid_argument", "list_folder_items", folder_id=a_file["id"])


# -- create, read, edit ------------------------------------------------------------------------------


def test_created_file_round_trips_through_get_and_download(ep: Episode) -> None:
    notes = folder(ep, "Meeting Notes")
    text = "# Call\nAgreed price."
    created = ok(ep, "create_file", name="Call notes.md", content=text, folder_id=notes["id"], description="Call")
    assert created["mime_type"] == "text/markdown" and created["path"] == "/Meeting Notes/Call notes.md"
    assert created["owner_email"] == ep.world.user.email and created["size"] == len(text)
    assert ok(ep, "get_file", file_id=created["id"]) == created
    assert ok(ep, "download_file", file_id=created["id"])["content"] == text
    assert ok(ep, "search_files", query="agreed price")["items"][0]["id"] == created["id"]


def test_create_file_goes_to_the_root_by_default_and_guesses_plain_text(ep: Episode) -> None:
    created = ok(ep, "create_file", name="todo", content="buy milk")
    assert created["path"] == "/todo" and created["mime_type"] == "text/plain"


def test_a_name_already_used_in_the_folder_is_refused_case_insensitively(ep: Episode) -> None:
    hr = folder(ep, "HR")
    refused(ep, "conflict", "create_file", name="expense POLICY.md", content="x", folder_id=hr["id"])
    refused(ep, "conflict", "create_folder", name="hr")
    refused(ep, "invalid_argument", "create_file", name="a/b.txt", content="x")
    refused(ep, "invalid_argument", "create_file", name="   ", content="x")


def test_binary_files_cannot_be_created_or_edited_from_text(ep: Episode) -> None:
    refused(ep, "invalid_argument", "create_file", name="contract.pdf", content="x")
    pdf = find(ep, "Employee handbook.pdf")
    refused(ep, "invalid_argument", "update_file_content", file_id=pdf["id"], content="x")


def test_images_have_no_text_to_download(ep: Episode) -> None:
    logo = find(ep, "Logo.png")
    assert "no text" in refused(ep, "invalid_argument", "download_file", file_id=logo["id"])


def test_editing_a_text_file_makes_a_new_version(ep: Episode) -> None:
    policy = find(ep, "Expense policy.md")
    updated = ok(ep, "update_file_content", file_id=policy["id"], content="# New policy")
    assert updated["version"] == policy["version"] + 1 and updated["size"] == len("# New policy")
    assert updated["modified_at"] == ep.world.now and updated["modified_by_email"] == ep.world.user.email
    assert ok(ep, "download_file", file_id=policy["id"])["content"] == "# New policy"


def test_folders_are_created_inside_open_folders_only(ep: Episode) -> None:
    created = ok(ep, "create_folder", name="Contracts 2025", parent_id=folder(ep, "Sales")["id"])
    assert created["path"] == "/Sales/Contracts 2025" and created["item_count"] == 0
    old = folder(ep, "Old proposals")
    assert "trash" in refused(ep, "invalid_state", "create_folder", name="New", parent_id=old["id"])


# -- rename, move, copy ----------------------------------------------------------------------------------


def test_rename_changes_the_path_and_refuses_taken_names(ep: Episode) -> None:
    policy = find(ep, "Expense policy.md")
    renamed = ok(ep, "rename_file", file_id=policy["id"], new_name="Expenses.md")
    assert renamed["path"] == "/HR/Expenses.md"
    refused(ep, "conflict", "rename_file", file_id=policy["id"], new_name="Travel policy.docx")
    refused(ep, "invalid_argument", "rename_file", file_id=policy["id"], new_name="Expenses.md")
    assert ok(ep, "rename_file", file_id=policy["id"], new_name="EXPENSES.md")["name"] == "EXPENSES.md"


def test_moving_a_folder_carries_its_contents(ep: Episode) -> None:
    reports = folder(ep, "Reports")
    moved = ok(ep, "move_file", file_id=reports["id"], folder_id=folder(ep, "Archive")["id"])
    assert moved["path"] == "/Archive/Reports"
    budget = ok(ep, "search_files", name="Budget ", limit=1)["items"][0]
    assert budget["path"].startswith("/Archive/Reports/")


def test_a_folder_cannot_move_into_itself_or_where_it_already_is(ep: Episode) -> None:
    finance, invoices = folder(ep, "Finance"), folder(ep, "Invoices")
    refused(ep, "invalid_argument", "move_file", file_id=finance["id"], folder_id=invoices["id"])
    refused(ep, "invalid_argument", "move_file", file_id=finance["id"], folder_id=finance["id"])
    refused(ep, "invalid_state", "move_file", file_id=invoices["id"], folder_id=finance["id"])
    root = ok(ep, "list_folder_items", limit=1)["items"][0]["parent_id"]
    refused(ep, "invalid_argument", "move_file", file_id=root, folder_id=finance["id"])



def test_moving_onto_a_taken_name_is_refused(ep: Episode) -> None:
    sales = folder(ep, "Sales")
    ok(ep, "create_file", name="Expense policy.md", content="draft", folder_id=sales["id"])
    in_hr = next(f for f in ok(ep, "search_files", name="Expense policy.md")["items"] if f["path"].startswith("/HR/"))
    refused(ep, "conflict", "move_file", file_id=in_hr["id"], folder_id=sales["id"])


def test_copy_in_the_same_folder_is_named_copy_of_and_starts_unshared(ep: Episode) -> None:
    contract = ok(ep, "search_files", name="Master Services Agreement", limit=100)["items"]
    shared = next(f for f in contract if f["shared_with"])
    copy = ok(ep, "copy_file", file_id=shared["id"])
    assert copy["name"] == f"Copy of {shared['name']}" and copy["parent_id"] == shared["parent_id"]
    assert copy["shared_with"] == [] and copy["owner_email"] == ep.world.user.email and copy["id"] != shared["id"]
    original = ok(ep, "download_file", file_id=shared["id"])["content"]
    assert ok(ep, "download_file", file_id=copy["id"])["content"] == original
    refused(ep, "conflict", "copy_file", file_id=shared["id"])  # "Copy of ..." now exists
    elsewhere = ok(ep, "copy_file", file_id=shared["id"], folder_id=folder(ep, "Templates")["id"])
    assert elsewhere["name"] == shared["name"]
    refused(ep, "invalid_argument", "copy_file", file_id=folder(ep, "HR")["id"])


# -- sharing ---------------------------------------------------------------------------------------------


def test_sharing_with_a_crm_contact_then_changing_the_role(ep: Episode) -> None:
    contact = rows_of(ep.dump()["crm"], "contacts")[5]
    doc = find(ep, "Sales playbook.docx")
    share = ok(ep, "share_file", file_id=doc["id"], email=contact["email"].upper(), role="commenter")
    assert share["email"] == contact["email"] and share["role"] == "commenter"
    assert share["person_name"] == f"{contact['first_name']} {contact['last_name']}"
    assert share["shared_by_email"] == ep.world.user.email
    assert contact["email"] in ok(ep, "get_file", file_id=doc["id"])["shared_with"]
    refused(ep, "conflict", "share_file", file_id=doc["id"], email=contact["email"], role="commenter")
    changed = ok(ep, "share_file", file_id=doc["id"], email=contact["email"], role="editor")
    assert changed["id"] == share["id"] and changed["role"] == "editor"
    shares = ok(ep, "list_shares", file_id=doc["id"])["items"]
    assert [s["role"] for s in shares if s["email"] == contact["email"]] == ["editor"]


def test_you_cannot_share_with_yourself_or_the_owner(ep: Episode) -> None:
    doc = find(ep, "Sales playbook.docx")
    assert "yourself" in refused(ep, "invalid_argument", "share_file", file_id=doc["id"], email=ep.world.user.email)
    refused(ep, "invalid_argument", "share_file", file_id=doc["id"], email=doc["owner_email"])
    refused(ep, "invalid_argument", "share_file", file_id=doc["id"], email="someone@x.example", role="owner")


def test_removing_a_share_revokes_access(ep: Episode) -> None:
    doc = find(ep, "Sales playbook.docx")
    share = ok(ep, "list_shares", file_id=doc["id"])["items"][0]
    removed = ok(ep, "remove_share", share_id=share["id"])
    assert removed == share
    assert ok(ep, "list_shares", file_id=doc["id"])["total"] == 0
    refused(ep, "not_found", "remove_share", share_id=share["id"])


def test_shared_link_finds_the_file_until_it_is_removed(ep: Episode) -> None:
    doc = find(ep, "Travel policy.docx")
    link = ok(ep, "create_shared_link", file_id=doc["id"], access="organization", expires_on="2099-01-01")
    assert link["url"].startswith("https://") and link["access"] == "organization"
    assert ok(ep, "find_file_by_shared_link", url=link["url"])["id"] == doc["id"]
    again = ok(ep, "create_shared_link", file_id=doc["id"])  # new settings, same URL
    assert again["url"] == link["url"] and again["access"] == "anyone" and again["expires_on"] is None
    assert ok(ep, "remove_shared_link", file_id=doc["id"])["shared_link_url"] is None
    refused(ep, "not_found", "find_file_by_shared_link", url=link["url"])
    refused(ep, "invalid_state", "remove_shared_link", file_id=doc["id"])
    assert ok(ep, "create_shared_link", file_id=doc["id"])["url"] != link["url"]


def test_shared_links_must_expire_in_the_future_and_expired_links_stop_working(ep: Episode) -> None:
    doc = find(ep, "Travel policy.docx")
    refused(ep, "invalid_argument", "create_shared_link", file_id=doc["id"], expires_on=ep.world.now[:10])
    expired = [r for r in items(ep) if r["shared_link_expires_on"] and r["shared_link_expires_on"] < ep.world.now[:10]]
    assert expired
    for row in expired:
        assert "expired" in refused(ep, "invalid_state", "find_file_by_shared_link", url=row["shared_link_url"])


# -- trash -------------------------------------------------------------------------------------------------


def test_trashing_a_folder_trashes_its_contents_and_restoring_brings_them_back(ep: Episode) -> None:
    reports = folder(ep, "Reports")
    inside = ok(ep, "search_files", folder_id=reports["id"], limit=100)["total"]
    trashed = ok(ep, "trash_file", file_id=reports["id"])
    assert trashed["trashed"] and trashed["trashed_at"] == ep.world.now
    assert ok(ep, "search_files", folder_id=reports["id"])["total"] == 0
    trash = ok(ep, "list_trash", limit=100)["items"]
    assert trash[0]["id"] == reports["id"]  # listed once, newest first; its contents are not listed
    assert not any(f["path"].startswith("/Finance/Reports/") for f in trash)
    assert ok(ep, "list_folder_items", folder_id=reports["id"], limit=100)["total"] == inside
    restored = ok(ep, "restore_file", file_id=reports["id"])
    assert not restored["trashed"] and ok(ep, "search_files", folder_id=reports["id"])["total"] == inside


def test_an_item_trashed_on_its_own_stays_in_the_trash_when_its_folder_is_restored(ep: Episode) -> None:
    hr = folder(ep, "HR")
    policy = find(ep, "Expense policy.md")
    ok(ep, "trash_file", file_id=policy["id"])
    ok(ep, "trash_file", file_id=hr["id"])
    ok(ep, "restore_file", file_id=hr["id"])
    assert ok(ep, "get_file", file_id=policy["id"])["trashed"]


def test_an_item_inside_a_trashed_folder_is_restored_elsewhere_only(ep: Episode) -> None:
    old = folder(ep, "Old proposals")
    child = ok(ep, "list_folder_items", folder_id=old["id"])["items"][0]
    assert "Restore that folder" in refused(ep, "invalid_state", "restore_file", file_id=child["id"])
    sales = folder(ep, "Sales")
    restored = ok(ep, "restore_file", file_id=child["id"], folder_id=sales["id"])
    assert restored["parent_id"] == sales["id"] and not restored["trashed"]


def test_restoring_needs_a_free_name_and_a_trashed_item(ep: Episode) -> None:
    untitled = ok(ep, "search_files", name="Untitled document", in_trash=True)["items"][0]
    ok(ep, "create_file", name="Untitled document.txt", content="new", folder_id=untitled["parent_id"])
    refused(ep, "conflict", "restore_file", file_id=untitled["id"])
    refused(ep, "invalid_state", "restore_file", file_id=find(ep, "Expense policy.md")["id"])
    refused(ep, "invalid_state", "trash_file", file_id=untitled["id"])


def test_trashed_items_cannot_be_edited_moved_copied_or_shared(ep: Episode) -> None:
    policy = find(ep, "Expense policy.md")
    ok(ep, "trash_file", file_id=policy["id"])
    sales = folder(ep, "Sales")
    contact = rows_of(ep.dump()["crm"], "contacts")[0]["email"]
    refused(ep, "invalid_state", "share_file", file_id=policy["id"], email=contact)
    refused(ep, "invalid_state", "update_file_content", file_id=policy["id"], content="x")
    refused(ep, "invalid_state", "rename_file", file_id=policy["id"], new_name="x.md")
    refused(ep, "invalid_state", "move_file", file_id=policy["id"], folder_id=sales["id"])
    refused(ep, "invalid_state", "copy_file", file_id=policy["id"])
    refused(ep, "invalid_state", "create_shared_link", file_id=policy["id"])


def test_the_root_folder_cannot_be_trashed_renamed_or_linked(ep: Episode) -> None:
    root = ok(ep, "list_folder_items", limit=1)["items"][0]["parent_id"]
    refused(ep, "invalid_argument", "trash_file", file_id=root)
    refused(ep, "invalid_argument", "rename_file", file_id=root, new_name="Everything")
    refused(ep, "invalid_argument", "create_shared_link", file_id=root)


def test_only_trashed_items_can_be_deleted_permanently(ep: Episode) -> None:
    policy = find(ep, "Expense policy.md")
    assert "trash_file" in refused(ep, "invalid_state", "delete_file_permanently", file_id=policy["id"])
    ok(ep, "trash_file", file_id=policy["id"])
    deleted = ok(ep, "delete_file_permanently", file_id=policy["id"])
    assert deleted == {"id": policy["id"], "type": "file", "name": "Expense policy.md", "deleted_items": 1,
                       "removed_shares": len(policy["shared_with"])}
    refused(ep, "not_found", "get_file", file_id=policy["id"])


def test_deleting_a_trashed_folder_deletes_everything_in_it_and_its_shares(ep: Episode) -> None:
    clients = folder(ep, "Clients")
    before = len(items(ep))
    client = ok(ep, "list_folder_items", folder_id=clients["id"], limit=1)["items"][0]
    below = ok(ep, "list_folder_items", folder_id=client["id"], limit=100)["items"]
    ok(ep, "trash_file", file_id=clients["id"])
    deleted = ok(ep, "delete_file_permanently", file_id=clients["id"])
    assert deleted["deleted_items"] > 15 + len(below) - 1
    remaining = {r["id"] for r in items(ep)}
    assert clients["id"] not in remaining and client["id"] not in remaining
    assert all(f["id"] not in remaining for f in below)
    assert all(s["item_id"] in remaining for s in rows_of(ep.dump()["files"], "shares"))
    assert len(remaining) == before - deleted["deleted_items"]


def test_listings_stay_light_and_a_file_text_is_read_with_download(ep: Episode) -> None:
    hits = ok(ep, "search_files", name="Master Services Agreement.pdf", limit=5)["items"]
    assert hits and all("content" not in f for f in hits)
    text = ok(ep, "download_file", file_id=hits[0]["id"])["content"]
    assert text.startswith("MASTER SERVICES AGREEMENT")
    assert ok(ep, "get_file", file_id=hits[0]["id"])["size"] > len(text)  # a PDF weighs more than its text
