"""The catalog's generated services answer their products' query and address languages through their own tools
(issue 32): Drive ``q``, JQL, Gmail search, and the names products accept for rows besides ids (``me``, an
issue key, a template alias). Calls as a user of each product makes them, checked against its documentation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_services.kernel.episode import Episode
from mcp_services.registry import get_service


def _episode(name: str) -> Iterator[Episode]:
    with Episode([get_service(name)], 0) as episode:
        yield episode


@pytest.fixture
def drive() -> Iterator[Episode]:
    yield from _episode("googleapis_drive")


def _ids(result: Any) -> list[str]:
    assert result.success, result.error_message
    return [item["id"] for item in result.data["items"]]


def test_drive_q_finds_a_new_file_by_name_folder_and_trash_state(drive: Episode) -> None:
    made = drive.call("googleapis_drive", "files_create", {"name": "Q3 Budget", "parents": ["folder_finance"],
                                                           "mimeType": "application/vnd.google-apps.spreadsheet"})
    assert made.success, made.error_message
    new = made.data["id"]
    listed = drive.call("googleapis_drive", "files_list", {"q": "name contains 'Q3 Budget'", "pageSize": 100})
    assert _ids(listed) == [new]  # right after its creation, and nothing else
    assert _ids(drive.call("googleapis_drive", "files_list", {"q": "'folder_finance' in parents"})) == [new]
    trashed_before = _ids(drive.call("googleapis_drive", "files_list", {"q": "trashed = true", "pageSize": 100}))
    assert trashed_before and new not in trashed_before
    assert drive.call("googleapis_drive", "files_update", {"fileId": new, "trashed": True}).success
    assert new in _ids(drive.call("googleapis_drive", "files_list", {"q": "trashed = true", "pageSize": 100}))
    assert _ids(drive.call("googleapis_drive", "files_list",
                           {"q": "name contains 'Q3 Budget' and trashed = false"})) == []
    sheets = _ids(drive.call("googleapis_drive", "files_list",
                             {"q": "mimeType = 'application/vnd.google-apps.spreadsheet' and 'folder_finance' in parents"}))
    assert sheets == [new]


def test_a_drive_query_drive_cannot_read_is_invalid_argument_and_changes_nothing(drive: Episode) -> None:
    before = drive.dump()
    bad = drive.call("googleapis_drive", "files_list", {"q": "name contains Q3"})
    assert str(bad.error_code) == "invalid_argument"
    assert "'q'" in str(bad.error_message) and "'Q3'" in str(bad.error_message) and "contains" in str(bad.error_message)
    unknown = drive.call("googleapis_drive", "files_list", {"q": "colour = 'red'"})
    assert str(unknown.error_code) == "invalid_argument" and "unknown field 'colour'" in str(unknown.error_message)
    assert drive.dump() == before


def test_composio_drive_speaks_the_same_q() -> None:
    with Episode([get_service("googledrive")], 0) as episode:
        tools = episode.call("googledrive", "list_files", {"q": "trashed = false"})
        assert tools.success, tools.error_message
        names = [f["name"] for f in tools.data["items"]]
        first = names[0].split()[0]
        found = episode.call("googledrive", "list_files", {"q": f"name contains '{first}' and trashed = false"})
        assert _ids(found) and all(first.lower() in f["name"].lower() for f in found.data["items"])
        assert str(episode.call("googledrive", "list_files", {"q": "report"}).error_code) == "invalid_argument"


def _mail(episode: Episode, sender: str, subject: str, labels: list[str], thread: str) -> str:
    made = episode.call("googleapis_gmail", "users_messages_insert", {
        "userId": "me", "threadId": thread, "labelIds": labels, "snippet": f"about {subject.lower()}",
        "headers": [{"name": "From", "value": sender}, {"name": "Subject", "value": subject}]})
    assert made.success, made.error_message
    return str(made.data["id"])


def test_gmail_search_operators_select_messages_and_their_threads() -> None:
    with Episode([get_service("googleapis_gmail")], 0) as episode:
        dinner = _mail(episode, "Amy Lee <amy@acme.example>", "Dinner and a movie", ["INBOX", "UNREAD"], "thread_0001")
        report = _mail(episode, "david@acme.example", "Q3 report", ["INBOX"], "thread_0004")

        def search(q: str, tool: str = "users_messages_list") -> list[str]:
            return _ids(episode.call("googleapis_gmail", tool, {"userId": "me", "q": q, "maxResults": 100}))

        assert search("from:amy is:unread subject:(dinner movie)") == [dinner]
        assert sorted(search("from:amy OR from:david")) == sorted([dinner, report])
        assert search("is:read from:david") == [report]
        assert search('subject:"Q3 report" -from:amy') == [report]
        assert search("from:amy", "users_threads_list") == ["thread_0001"]  # a thread whose message matches
        bad = episode.call("googleapis_gmail", "users_messages_list", {"userId": "me", "q": "is:shiny"})
        assert str(bad.error_code) == "invalid_argument" and "is:shiny" in str(bad.error_message)


def test_jql_answers_from_the_issues_with_its_operators_and_order() -> None:
    with Episode([get_service("atlassian_jira")], 0) as episode:
        rows = [r for r in episode.dump()["atlassian_jira"]["issues"].values()]  # type: ignore[union-attr]
        status = str(rows[0]["status"])
        same = sorted((r for r in rows if r["status"] == status), key=lambda r: str(r["created_at"]), reverse=True)
        for tool in ("search_for_issues_using_jql", "search_for_issues_using_jql_post"):
            found = episode.call("atlassian_jira", tool, {"jql": f'status = "{status}" ORDER BY created DESC',
                                                          "maxResults": 50})
            assert _ids(found) == [str(r["id"]) for r in same]
            page = episode.call("atlassian_jira", tool, {"jql": f"status = {status} order by created desc",
                                                         "maxResults": 1, "startAt": 1})
            assert _ids(page) == [str(same[1]["id"])] and page.data["total"] == len(same)
        assert sorted(_ids(episode.call("atlassian_jira", "search_for_issues_using_jql",
                                        {"jql": f"status != {status}", "maxResults": 50}))) == \
            sorted(str(r["id"]) for r in rows if r["status"] != status)
        bad = episode.call("atlassian_jira", "search_for_issues_using_jql", {"jql": "status = "})
        assert str(bad.error_code) == "invalid_argument" and "JQL" in str(bad.error_message)
        assert "search" not in episode.diff() or not episode.changed_services()  # a search writes nothing


def test_rows_are_named_as_the_product_names_them_me_usernames_and_aliases() -> None:
    with Episode([get_service("trello")], 0) as episode:
        me = episode.call("trello", "get_members_by_id_member", {"idMember": "me"})
        assert me.success, me.error_message
        other = [r for r in episode.dump()["trello"]["members"].values() if r["id"] != me.data["id"]][0]  # type: ignore[union-attr]
        by_name = episode.call("trello", "get_members_by_id_member", {"idMember": other["username"]})
        assert by_name.success and by_name.data["id"] == other["id"]
    token: dict[str, str] = {}  # the server token every call carries is no parameter (nor a row filter)
    with Episode([get_service("postmarkapp_server")], 0) as episode:
        template = next(iter(episode.dump()["postmarkapp_server"]["templates"].values()))  # type: ignore[union-attr]
        got = episode.call("postmarkapp_server", "get_single_template", {**token, "templateIdOrAlias": template["Alias"]})
        assert got.success and got.data["id"] == template["id"]
        edited = episode.call("postmarkapp_server", "update_template",
                              {**token, "templateIdOrAlias": template["Alias"], "Name": "Welcome email"})
        assert edited.success and edited.data["id"] == template["id"] and edited.data["Name"] == "Welcome email"
        missing = episode.call("postmarkapp_server", "get_single_template", {**token, "templateIdOrAlias": "no-such-alias"})
        assert str(missing.error_code) == "not_found"


def test_sheets_a1_ranges_address_a_typed_grid_and_add_sheet_adds_a_tab() -> None:
    with Episode([get_service("googleapis_sheets")], 0) as episode:
        def call(tool: str, **args: Any) -> Any:
            return episode.call("googleapis_sheets", tool, {"spreadsheetId": "spr_0001", **args})

        missing = call("spreadsheets_values_update", range="Summary!A1:B2", values=[["Region", "Total"]])
        assert str(missing.error_code) == "invalid_argument" and "Unable to parse range" in str(missing.error_message)
        added = call("spreadsheets_batch_update", requests=[{"addSheet": {"properties": {"title": "Summary"}}}])
        assert added.success, added.error_message
        titles = [t["properties"]["title"] for t in call("spreadsheets_get").data["sheets"]]
        assert titles[-1] == "Summary"  # a new tab, after the ones it had
        written = call("spreadsheets_values_update", range="Summary!A1:B2", valueInputOption="USER_ENTERED",
                       values=[["Region", "Total"], ["North", "1200"]])
        assert written.success and written.data["updatedRange"] == "Summary!A1:B2" and written.data["updatedCells"] == 4
        shown = call("spreadsheets_values_get", range="Summary!A1:B2")
        assert shown.data == {"range": "Summary!A1:B2", "majorDimension": "ROWS",
                              "values": [["Region", "Total"], ["North", "1200"]]}
        typed = call("spreadsheets_values_get", range="Summary!B2", valueRenderOption="UNFORMATTED_VALUE")
        assert typed.data["values"] == [[1200]]  # USER_ENTERED parsed the number
        appended = call("spreadsheets_values_append", range="Summary!A:B", valueInputOption="USER_ENTERED",
                        values=[["South", "800"]])
        assert appended.data["updates"]["updatedRange"] == "Summary!A3:B3"
        assert call("spreadsheets_values_get", range="Summary!A:A", majorDimension="COLUMNS").data["values"] == \
            [["Region", "North", "South"]]
        before = episode.dump()
        too_big = call("spreadsheets_values_update", range="Summary!A1:B2", values=[["a", "b", "c"]])
        assert str(too_big.error_code) == "invalid_argument" and episode.dump() == before
        bad = call("spreadsheets_values_get", range="Summary!B2:A1")
        assert str(bad.error_code) == "invalid_argument" and "ends before it starts" in str(bad.error_message)
        assert call("spreadsheets_values_clear", range="Summary!A3:B3").data["clearedRange"] == "Summary!A3:B3"
        assert call("spreadsheets_values_get", range="Summary").data["values"] == [["Region", "Total"], ["North", "1200"]]
        batch = call("spreadsheets_values_batch_get", ranges=["Summary!A1", "Sheet1!A1:B2"])
        summary, seeded = batch.data["valueRanges"]
        assert summary["values"] == [["Region"]] and seeded["values"][0] == ["Name", "Email"]  # a seeded table
        assert str(call("spreadsheets_batch_update", requests=[{"addSheet": {"properties": {"title": "Summary"}}}])
                   .error_code) == "invalid_argument"  # a tab of that name already exists


def _jira_like() -> Any:
    """A spec shaped as Jira's issues are once their ``fields`` are unwrapped: a key, a project, a summary."""
    from generator.compiler import compile_service
    from generator.spec import ServiceSpec

    issue_key = {"type": "string", "description": "The ID or key of the issue."}
    spec = ServiceSpec.model_validate({
        "name": "tracker", "title": "Tracker", "description": "Issues in projects.",
        "entities": [{"name": "issue", "table": "issues", "key": {"prefix": "issue"}, "label": "summary", "seed_rows": 0,
                      "fields": [{"name": "key", "type": "string"}, {"name": "project", "type": "object"},
                                 {"name": "summary", "type": "string"}, {"name": "status", "type": "string"},
                                 {"name": "created", "type": "string"}]}],
        "tools": [
            {"name": "get_issue", "effect": "read", "description": "Returns an issue.",
             "parameters": {"type": "object", "properties": {"issueIdOrKey": issue_key}, "required": ["issueIdOrKey"]},
             "behaviour": {"kind": "get", "entity": "issue"}, "bindings": {"issueIdOrKey": {"role": "key"}}},
            {"name": "search_issues", "effect": "read", "description": "Searches for issues using JQL.",
             "parameters": {"type": "object", "properties": {
                 "jql": {"type": "string", "description": "The JQL that defines the search."},
                 "maxResults": {"type": "integer"}}},
             "behaviour": {"kind": "search", "entity": "issue"}, "bindings": {"maxResults": {"role": "limit"}}}]})
    return compile_service(spec)


def test_a_jira_issue_is_named_by_its_key_and_found_by_jql_with_its_fields() -> None:
    service = _jira_like()
    rows = [{"id": f"issue_000{i}", "key": f"{p}-{i}", "project": {"key": p, "name": name}, "summary": summary,
             "status": status, "created": f"2025-03-0{i}T09:00:00Z"}
            for i, (p, name, summary, status) in enumerate([("OPS", "Operations", "Printer jams", "In Progress"),
                                                            ("OPS", "Operations", "VPN login error", "In Progress"),
                                                            ("WEB", "Website", "Checkout login error", "Done")], 1)]
    with Episode([service], 0) as episode:
        episode.apply_setup([{"service": "tracker", "table": "issues", "row": r} for r in rows])
        assert episode.call("tracker", "get_issue", {"issueIdOrKey": "OPS-2"}).data["id"] == "issue_0002"
        assert episode.call("tracker", "get_issue", {"issueIdOrKey": "issue_0003"}).data["key"] == "WEB-3"
        assert str(episode.call("tracker", "get_issue", {"issueIdOrKey": "OPS-9"}).error_code) == "not_found"
        found = episode.call("tracker", "search_issues",
                             {"jql": 'project = OPS AND status = "In Progress" ORDER BY created DESC'})
        assert [i["key"] for i in found.data["items"]] == ["OPS-2", "OPS-1"]
        texts = episode.call("tracker", "search_issues", {"jql": 'summary ~ "login error" and project != OPS'})
        assert [i["key"] for i in texts.data["items"]] == ["WEB-3"]


def test_the_catalog_s_query_parameters_are_read_in_their_products_dialects_once() -> None:
    from generator.catalog import PACKAGE_CATALOG, Catalog
    from generator.query.apply import with_languages

    catalog = Catalog(PACKAGE_CATALOG)
    spoken = {}
    for name in ("googleapis_drive", "googledrive", "googleapis_gmail", "atlassian_jira", "googleapis_sheets"):
        spec = with_languages(catalog.spec(name))
        assert with_languages(spec).model_dump() == spec.model_dump()  # read once: a rebuilt spec stays as it is
        spoken.update({(name, t.name): (b.dialect, t.effect, t.behaviour.entity)
                       for t in spec.tools for b in t.bindings.values() if b.role == "query"})
    assert spoken[("googleapis_drive", "files_list")] == ("drive", "read", "file")
    assert spoken[("googledrive", "list_files")][0] == "drive"
    assert spoken[("googleapis_gmail", "users_messages_list")] == ("gmail", "read", "message")
    assert spoken[("atlassian_jira", "search_for_issues_using_jql_post")] == ("jql", "read", "issue")  # a POSTed search
    assert spoken[("googleapis_sheets", "spreadsheets_values_get")] == ("a1", "read", "grid_cell")
    assert ("atlassian_jira", "create_filter") not in spoken  # a filter's stored JQL is a value, not a search


def test_drive_order_by_sorts_what_q_selects(drive: Episode) -> None:
    listed = drive.call("googleapis_drive", "files_list", {"q": "trashed = false", "orderBy": "modifiedTime desc",
                                                           "pageSize": 100})
    assert listed.success, listed.error_message
    times = [f["modifiedTime"] for f in listed.data["items"]]
    assert times == sorted(times, reverse=True) and all(f["trashed"] is False for f in listed.data["items"])
    names = [f["name"] for f in drive.call("googleapis_drive", "files_list", {"orderBy": "name", "pageSize": 100}).data["items"]]
    assert names == sorted(names, key=str.casefold)
    assert str(drive.call("googleapis_drive", "files_list", {"orderBy": "name sideways"}).error_code) == "invalid_argument"


def test_apideck_s_filter_object_narrows_the_list_by_its_fields() -> None:
    from mcp_services.kernel.store import rows_of

    with Episode([get_service("apideck_accounting")], 0) as episode:
        row = rows_of(episode.dump()["apideck_accounting"], "customers")[1]
        scope: dict[str, str] = {}  # Apideck's consumer and app ids are headers every call carries, never row filters
        word = str(row["company_name"]).split()[0].lower()
        found = episode.call("apideck_accounting", "customers_all", {**scope, "filter": {"company_name": word}})
        assert found.success, found.error_message
        assert row["id"] in _ids(found) and all(word in i["company_name"].lower() for i in found.data["items"])
        assert _ids(episode.call("apideck_accounting", "customers_all",
                                 {**scope, "filter": {"company_name": "no such company"}})) == []


def test_google_tasks_show_completed_leaves_completed_tasks_out_only_when_false() -> None:
    with Episode([get_service("googleapis_tasks")], 0) as episode:
        done = episode.call("googleapis_tasks", "tasks_patch", {"tasklist": "list_0001", "task": "task_0001",
                                                                "status": "completed"})
        assert done.success, done.error_message

        def listed(**flags: Any) -> list[str]:
            return _ids(episode.call("googleapis_tasks", "tasks_list", {"tasklist": "list_0001", "maxResults": 100,
                                                                        "showHidden": True, **flags}))

        assert "task_0001" in listed()  # the documented default is True
        assert "task_0001" in listed(showCompleted=True)
        hidden_done = listed(showCompleted=False)
        assert "task_0001" not in hidden_done and set(hidden_done) < set(listed())


def test_every_spec_read_in_its_products_languages_is_a_valid_spec() -> None:
    """The gate keeps the spec with_languages gives; it must load again (a POSTed search is a read that finds)."""
    from generator.catalog import PACKAGE_CATALOG, Catalog
    from generator.query.apply import with_languages
    from generator.spec import load_spec

    catalog = Catalog(PACKAGE_CATALOG)
    speaking: set[str] = set()
    for name in catalog.names():
        spoken = with_languages(catalog.spec(name))
        load_spec(spoken.model_dump(mode="json", exclude_none=True))  # raises SpecError, naming the problem
        # the stored spec of a service gated since may already speak its language: the result is what counts
        if any(b.dialect or b.alternates for t in spoken.tools for b in t.bindings.values()):
            speaking.add(name)
    assert {"googleapis_drive", "googledrive", "atlassian_jira", "jira", "googleapis_gmail", "googleapis_sheets",
            "trello", "postmarkapp_server"} <= speaking
    posted = with_languages(catalog.spec("atlassian_jira")).tool("search_for_issues_using_jql_post")
    assert (posted.effect, posted.intent, posted.phrases) == ("read", "find", ["find the issues matching {jql}"])
