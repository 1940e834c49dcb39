"""Hostile input never crashes a call, never bloats a reply and never slips into the state (issue 16).

A fuzz pass over every tool of the library replaces each parameter in turn with values a careless or
hostile caller sends (wrong JSON types, bool/number confusion, blank and huge strings, NUL, LIKE
wildcards, impossible dates, deep nesting, unicode) and asserts what a user relies on: no exception
out of ``Episode.call``, no ``internal_error``, no error message over the bound, no change when a call
fails, and results that match their schema when it succeeds.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcp_services.kernel import Episode
from mcp_services.kernel.bounds import MAX_ERROR_LENGTH, MAX_STRING, argument_problem
from mcp_services.kernel.semantic import semantic_type_of
from mcp_services.registry import LIBRARY
from tests.mcp_services.test_library_contract import Seeded, build_args, non_null, require

IMPOSSIBLE_DATES = ("2025-13-45", "2025-02-30T25:61:00Z", "2025-02-30")


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


HOSTILE: tuple[Any, ...] = (
    True,
    False,
    "yes",
    1e308,
    -1,
    "",
    "   ",
    "a\x00b",
    "%",
    "_",
    *IMPOSSIBLE_DATES,
    "x" * (MAX_STRING + 1),
    "Zoë 🚀 — ünïcode",
    _deep(60),
    {"$gt": ""},
    "9" * 30,
)


def _changed_rows(episode: Episode) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for state in episode.diff().values():
        for table in state.tables.values():
            rows += list(table.added.values()) + [c.after for c in table.changed.values()]
    return rows


@pytest.mark.parametrize("service_name", LIBRARY)
def test_hostile_arguments_never_crash_bloat_or_corrupt(service_name: str) -> None:
    seeded = Seeded(require(service_name))
    episode = seeded.episode
    failures: list[str] = []
    for tool in seeded.service.tools.values():
        base = build_args(seeded, tool, "seeded")
        schema = tool.input_schema
        defs = schema.get("$defs", {})
        for param, raw in schema.get("properties", {}).items():
            semantic = semantic_type_of(non_null(raw, defs)) or semantic_type_of(raw)
            for value in HOSTILE:
                args = {**base, param: value}
                try:
                    result = episode.call(service_name, tool.name, args)
                except Exception as exc:  # noqa: BLE001 - the point of the test
                    failures.append(f"{tool.name}({param}={str(value)[:30]!r}) raised {type(exc).__name__}")
                    continue
                where = f"{tool.name}({param}={str(value)[:30]!r})"
                if result.error_code == "internal_error":
                    failures.append(f"{where}: internal_error: {result.error_message}")
                if result.success:
                    Draft202012Validator(tool.output_schema).validate(result.envelope())
                    if semantic in ("date", "datetime") and value in IMPOSSIBLE_DATES:
                        failures.append(f"{where}: accepted an impossible date")
                    for row in _changed_rows(episode):
                        text = json.dumps(row, ensure_ascii=False)
                        if "\\u0000" in text or len(text) > 4 * MAX_STRING:
                            failures.append(f"{where}: stored a NUL or an oversized value")
                else:
                    if len(result.error_message or "") > MAX_ERROR_LENGTH:
                        failures.append(f"{where}: error message of {len(result.error_message or '')} characters")
                    if not seeded.unchanged():
                        failures.append(f"{where}: failed but changed the state")
                if episode.changed_services():
                    seeded.reset()
    assert not failures, f"{len(failures)} problems, e.g.:\n" + "\n".join(failures[:15])


def test_bool_for_a_number_and_a_string_for_a_bool_are_refused() -> None:
    episode = Episode.create(["crm"], 0)
    deal = episode.call("crm", "create_deal", {"name": "Probe", "company_id": "co_0001", "amount": True})
    assert deal.error_code == "invalid_argument" and "amount" in (deal.error_message or "")
    search = episode.call("crm", "search_contacts", {"include_archived": "yes"})
    assert search.error_code == "invalid_argument"
    assert not episode.diff()["crm"]


def test_an_impossible_date_is_refused_with_what_is_wrong() -> None:
    episode = Episode.create(["crm"], 0)
    result = episode.call(
        "crm", "create_deal", {"name": "Probe", "company_id": "co_0001", "amount": 10.0, "close_date": "2025-13-45"}
    )
    assert result.error_code == "invalid_argument"
    assert "not a real calendar date" in (result.error_message or "")


def test_percent_and_underscore_are_searched_literally() -> None:
    episode = Episode.create(["crm"], 0)
    everyone = episode.call("crm", "search_contacts", {"limit": 100}).data["total"]
    assert everyone > 10
    for wildcard in ("%", "_"):
        assert episode.call("crm", "search_contacts", {"query": wildcard}).data["total"] == 0


def test_errors_echo_huge_or_deep_input_abridged() -> None:
    episode = Episode.create(["crm"], 0)
    huge_id = episode.call("crm", "get_contact", {"contact_id": "c" * 1_000_000})
    assert huge_id.error_code == "invalid_argument" and len(huge_id.error_message or "") <= MAX_ERROR_LENGTH
    many_keys = episode.call("crm", "get_contact", {f"k{i}": i for i in range(100_000)})
    assert many_keys.error_code == "invalid_argument" and len(many_keys.error_message or "") <= MAX_ERROR_LENGTH
    deep = episode.call("crm", "search_contacts", {"query": _deep(100_000)})
    assert deep.error_code == "invalid_argument" and "nested" in (deep.error_message or "")
    unknown = episode.call("crm", "x" * 100_000, {})
    assert unknown.error_code == "unknown_tool" and len(unknown.error_message or "") <= MAX_ERROR_LENGTH


def test_argument_problem_names_the_field_and_the_limit() -> None:
    assert argument_problem({"a": {"b": "x" * (MAX_STRING + 1)}}) == (
        f"'a.b' is {MAX_STRING + 1:,} characters long; at most {MAX_STRING:,} are accepted"
    )
    assert argument_problem({"name": "Ana\x00"}) is not None
    assert argument_problem({"ok": [1, 2, {"nested": "fine"}]}) is None


def test_a_bad_cursor_is_a_user_error_not_an_internal_one() -> None:
    episode = Episode.create(["crm"], 0)
    for cursor in ("²", "9" * 30, "-1", "abc"):
        result = episode.call("crm", "search_contacts", {"cursor": cursor})
        assert result.error_code == "invalid_argument", cursor


def _write_notes(db: str, worker: int, n: int, results: Any) -> None:
    episode = Episode.create(["crm"], 0, db_dir=Path(db))
    codes = []
    for i in range(n):
        result = episode.call("crm", "add_note", {"entity_type": "contact", "entity_id": "ct_0001", "body": f"w{worker}-{i}"})
        codes.append(result.error_code or "ok")
    episode.close()
    results.put(codes)


def test_two_processes_writing_one_file_store_both_succeed(tmp_path: Path) -> None:
    Episode.create(["crm"], 0, db_dir=tmp_path).close()  # create the file once
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    results = context.Queue()
    workers = [context.Process(target=_write_notes, args=(str(tmp_path), w, 150, results)) for w in range(2)]
    for worker in workers:
        worker.start()
    codes = [code for _ in workers for code in results.get(timeout=120)]
    for worker in workers:
        worker.join(30)
    assert codes.count("ok") == 300, {c: codes.count(c) for c in set(codes)}
    episode = Episode.create(["crm"], 0, db_dir=tmp_path)
    notes = episode.call("crm", "list_notes", {"entity_type": "contact", "entity_id": "ct_0001", "limit": 1}).data
    assert notes["total"] >= 300
