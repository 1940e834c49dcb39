"""The change tracker's diffs equal Episode.diff(), and checkpoints bring the change log back."""

from __future__ import annotations

from composer.catalog import Catalog
from composer.runner import Runner


def _dicts(diff):  # type: ignore[no-untyped-def]
    return {name: d.to_dict() for name, d in diff.items()}


def test_tracked_diff_equals_the_episode_diff_after_adds_changes_and_deletes(catalog: Catalog) -> None:
    runner = Runner(catalog, 5)
    runner.fresh()
    tickets = runner.call("helpdesk", "search_tickets", {"status": "open", "limit": 1}).data["items"]
    assert runner.call("helpdesk", "add_ticket_note", {"ticket_id": tickets[0]["id"], "note": "checked"}).success
    assert runner.call("helpdesk", "close_ticket", {"ticket_id": tickets[0]["id"]}).success
    assert runner.call("mailbox", "send_email", {"to": ["a@b.example"], "subject": "Hi", "body": "x"}).success
    drafts = runner.call("mailbox", "list_drafts", {}).data["items"]
    assert runner.call("mailbox", "delete_draft", {"draft_id": drafts[0]["id"]}).success
    assert _dicts(runner.diff()) == _dicts(runner.episode.diff())


def test_a_rollback_restores_rows_and_the_change_log(catalog: Catalog) -> None:
    runner = Runner(catalog, 5)
    runner.fresh()
    checkpoint = runner.checkpoint("mailbox")
    assert runner.call("mailbox", "send_email", {"to": ["a@b.example"], "subject": "Hi", "body": "x"}).success
    assert runner.diff()["mailbox"]
    runner.rollback("mailbox", checkpoint)
    assert not runner.diff()["mailbox"]
    assert _dicts(runner.diff()) == _dicts(runner.episode.diff())


def test_fresh_brings_back_the_seeded_state_byte_for_byte(catalog: Catalog) -> None:
    runner = Runner(catalog, 5)
    before = {name: store.snapshot() for name, store in runner.episode.stores.items()}
    assert runner.call("crm", "add_note", {"entity_type": "contact", "entity_id": "ct_0001", "body": "x"}).success
    runner.fresh()
    assert {name: store.snapshot() for name, store in runner.episode.stores.items()} == before


def test_memoised_calls_give_the_same_state_and_results(catalog: Catalog) -> None:
    plain, memo = Runner(catalog, 5), Runner(catalog, 5, memo=True)
    calls = [
        ("crm", "search_contacts", {"query": "a", "limit": 3}),
        ("crm", "add_note", {"entity_type": "contact", "entity_id": "ct_0002", "body": "noted"}),
        ("crm", "list_notes", {"entity_type": "contact", "entity_id": "ct_0002"}),
    ]
    for _ in range(2):  # the second round is served from the memo
        for runner in (plain, memo):
            runner.fresh()
        for service, tool, args in calls:
            assert plain.call(service, tool, args).envelope() == memo.call(service, tool, args).envelope()
        assert _dicts(plain.diff()) == _dicts(memo.diff())
    assert memo.hits >= len(calls)
