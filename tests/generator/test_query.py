"""The products' query languages on one parser (generator.query), written from each product's documentation:
Drive's "Search query terms and operators", Atlassian's JQL keywords and operators, Gmail's search operators."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from generator.query import Call, QueryError, Resolver, parse, select
from generator.query.dialects import DIALECTS

NOW = datetime(2025, 4, 1, 12, 0, tzinfo=timezone.utc)


def _ids(dialect: str, text: str, rows: list[dict[str, Any]], me: frozenset[str] = frozenset(),
         names: dict[str, str] | None = None) -> list[str]:
    spoken = DIALECTS[dialect]
    columns = sorted({c for r in rows for c in r})
    resolver = Resolver(spoken.title, columns, spoken.synonyms, me, names or {}, NOW, spoken.getters, spoken.supported)
    return [rows[i]["id"] for i in select(parse(dialect, text), rows, resolver)]


FILES = [
    {"id": "f1", "name": "Q3 Budget", "mimeType": "application/vnd.google-apps.spreadsheet", "trashed": False,
     "starred": True, "parents": ["folder_a"], "modifiedTime": "2025-03-02T10:00:00Z",
     "owners": [{"emailAddress": "ana@acme.example"}], "description": "Numbers for the board"},
    {"id": "f2", "name": "Q3 Budget (old)", "mimeType": "application/pdf", "trashed": True, "starred": False,
     "parents": ["folder_b"], "modifiedTime": "2024-11-20T09:00:00Z", "owners": [{"emailAddress": "bo@acme.example"}]},
    {"id": "f3", "name": "Team offsite", "mimeType": "application/vnd.google-apps.folder", "trashed": False,
     "starred": False, "parents": ["folder_a"], "modifiedTime": "2025-01-15T08:00:00Z", "owners": []},
]


def test_drive_terms_from_the_reference_select_the_files_a_user_means() -> None:
    assert _ids("drive", "name contains 'Q3 Budget'", FILES) == ["f1", "f2"]
    assert _ids("drive", "name = 'Q3 Budget'", FILES) == ["f1"]
    assert _ids("drive", "trashed = true", FILES) == ["f2"]
    assert _ids("drive", "'folder_a' in parents", FILES) == ["f1", "f3"]
    assert _ids("drive", "mimeType = 'application/vnd.google-apps.folder'", FILES) == ["f3"]
    assert _ids("drive", "modifiedTime > '2025-01-01T00:00:00'", FILES) == ["f1", "f3"]
    assert _ids("drive", "'folder_a' in parents and not mimeType = 'application/vnd.google-apps.folder'", FILES) == ["f1"]
    assert _ids("drive", "starred = true or trashed = true", FILES) == ["f1", "f2"]
    assert _ids("drive", "fullText contains 'board'", FILES) == ["f1"]
    assert _ids("drive", "'ana@acme.example' in owners", FILES) == ["f1"]
    assert _ids("drive", "'me' in owners", FILES, me=frozenset({"bo@acme.example"})) == ["f2"]


@pytest.mark.parametrize(("text", "part"), [
    ("budget", "the end of the query"),            # a bare word is no Drive query
    ("name contains Q3", "Q3"),                    # text values are quoted
    ("name ~ 'Q3'", "~ 'Q3'"),                      # JQL's operator, not Drive's
    ("name contains 'Q3' order by name", "order by name"),  # Drive sorts with orderBy, not in q
    ("properties has { key='x' }", "{ key='x' }"),
])
def test_a_drive_query_drive_would_refuse_says_which_part_and_what_is_supported(text: str, part: str) -> None:
    with pytest.raises(QueryError) as caught:
        _ids("drive", text, FILES)
    assert repr(part) in str(caught.value) and "Supported:" in str(caught.value) and "contains" in str(caught.value)


def test_a_drive_query_on_a_field_drive_does_not_have_names_it() -> None:
    with pytest.raises(QueryError, match="unknown field 'colour'.*Supported:.*fullText"):
        _ids("drive", "colour = 'red'", FILES)


ISSUES = [
    {"id": "10001", "key": "OPS-1", "project": {"key": "OPS", "name": "Operations"}, "summary": "Printer jams",
     "status": {"name": "In Progress"}, "assignee": {"accountId": "u1"}, "created": "2025-03-01T09:00:00Z",
     "priority": "High"},
    {"id": "10002", "key": "OPS-2", "project": {"key": "OPS", "name": "Operations"}, "summary": "Login error on VPN",
     "status": {"name": "In Progress"}, "assignee": None, "created": "2025-03-20T09:00:00Z", "priority": "Low"},
    {"id": "10003", "key": "WEB-7", "project": {"key": "WEB", "name": "Website"}, "summary": "Login error on checkout",
     "status": {"name": "Done"}, "assignee": {"accountId": "u2"}, "created": "2025-03-28T09:00:00Z", "priority": "High"},
]


def test_jql_clauses_keywords_and_order_from_the_reference() -> None:
    assert _ids("jql", 'project = OPS AND status = "In Progress" ORDER BY created DESC', ISSUES) == ["10002", "10001"]
    assert _ids("jql", 'project = "Operations" and status = "in progress"', ISSUES) == ["10001", "10002"]
    assert _ids("jql", "project in (OPS, WEB) and priority = High order by created asc", ISSUES) == ["10001", "10003"]
    assert _ids("jql", 'status not in ("Done", "Closed")', ISSUES) == ["10001", "10002"]
    assert _ids("jql", 'summary ~ "login error"', ISSUES) == ["10002", "10003"]
    assert _ids("jql", 'summary !~ "login"', ISSUES) == ["10001"]
    assert _ids("jql", "assignee is empty", ISSUES) == ["10002"]
    assert _ids("jql", "assignee = currentUser()", ISSUES, me=frozenset({"u2"})) == ["10003"]
    assert _ids("jql", "created >= -7d", ISSUES) == ["10003"]  # the clock is 2025-04-01
    assert _ids("jql", "key = WEB-7 or not (project = WEB or priority = High)", ISSUES) == ["10002", "10003"]
    assert parse("jql", "assignee = currentUser()").where.value == Call("currentuser")  # type: ignore[union-attr]


def test_a_jql_query_jira_would_refuse_names_the_part() -> None:
    with pytest.raises(QueryError, match=r"expected a value at .= OPS..*Supported:.*~.*order by"):
        parse("jql", "project == OPS")
    with pytest.raises(QueryError, match=r"unknown field 'sprintt'.*Supported:.*summary"):
        _ids("jql", "sprintt = 5", ISSUES)
    with pytest.raises(QueryError, match=r"expected 'and', 'or' or the end of the query at 'status"):
        parse("jql", "project = OPS status = Done")


MAIL = [
    {"id": "m1", "labelIds": ["INBOX", "UNREAD", "Label_7"], "internalDate": "1743246000000", "snippet": "see you at 8",
     "payload": {"headers": [{"name": "From", "value": "Amy Lee <amy@acme.example>"},
                             {"name": "Subject", "value": "Dinner and a movie"}],
                 "parts": [{"filename": "menu.pdf"}]}},
    {"id": "m2", "labelIds": ["INBOX"], "internalDate": "1740000000000", "snippet": "the quarterly numbers",
     "headers": [{"name": "From", "value": "david@acme.example"}, {"name": "Subject", "value": "Q3 report"}]},
    {"id": "m3", "labelIds": ["SENT"], "internalDate": "1743400000000", "trashed": True, "snippet": "dinner booked",
     "headers": [{"name": "To", "value": "amy@acme.example"}, {"name": "Subject", "value": "Dinner"}]},
]


def test_gmail_operators_from_the_help_centre() -> None:
    assert _ids("gmail", "from:amy is:unread subject:(dinner movie)", MAIL) == ["m1"]
    assert _ids("gmail", "from:amy OR from:david", MAIL) == ["m1", "m2"]  # newest first
    assert _ids("gmail", "dinner -movie", MAIL) == ["m3"]
    assert _ids("gmail", "has:attachment", MAIL) == ["m1"]
    assert _ids("gmail", "filename:pdf", MAIL) == ["m1"]
    assert _ids("gmail", "is:read in:inbox", MAIL) == ["m2"]
    assert _ids("gmail", "in:trash", MAIL) == ["m3"]
    assert _ids("gmail", "after:2025/03/01", MAIL) == ["m3", "m1"]
    assert _ids("gmail", "newer_than:4d", MAIL) == ["m3", "m1"]
    assert _ids("gmail", "older_than:4d", MAIL) == ["m2"]
    assert _ids("gmail", 'subject:"Q3 report"', MAIL) == ["m2"]
    assert _ids("gmail", "{quarterly booked}", MAIL) == ["m3", "m2"]
    assert _ids("gmail", "label:vip", MAIL, names={"vip": "Label_7"}) == ["m1"]
    assert _ids("gmail", "to:me", MAIL, me=frozenset({"amy@acme.example"})) == ["m3"]


@pytest.mark.parametrize(("text", "part"), [("foo:bar", "foo:bar"), ("is:shiny", "is:shiny"),
                                            ("after:yesterday", "yesterday"), ("OR dinner", "OR"),
                                            ("(dinner", "(dinner")])
def test_a_gmail_search_gmail_cannot_read_says_which_part(text: str, part: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse("gmail", text)
    assert repr(part) in str(caught.value) and "from:" in str(caught.value)


def test_a1_notation_from_the_sheets_guide() -> None:
    from generator.query.a1 import A1, a1_text, parse_a1

    assert parse_a1("Sheet1!A1:B2") == A1("Sheet1", 1, 1, 2, 2)
    assert parse_a1("'My Custom Sheet'!A:A") == A1("My Custom Sheet", None, 1, None, 1)
    assert parse_a1("Sheet1!1:2") == A1("Sheet1", 1, None, 2, None)
    assert parse_a1("Sheet1!A5:A") == A1("Sheet1", 5, 1, None, 1)
    assert parse_a1("A1:B2") == A1(None, 1, 1, 2, 2) and parse_a1("Sheet1") == A1("Sheet1")
    assert a1_text("My Sheet", 1, 1, 2, 28) == "'My Sheet'!A1:AB2" and a1_text("Summary", 3, 2, 3, 2) == "Summary!B3"
    for bad in ("Sheet1!B2:A1", "Sheet1!A0", "A1:", "Sheet1!1:B"):
        with pytest.raises(QueryError, match="A1 range.*Supported: Sheet1!A1:B2"):
            parse_a1(bad)
