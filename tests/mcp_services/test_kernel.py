"""The kernel: world, stores, transactions, snapshots, diffs and episodes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcp_services.kernel import Cursor, Episode, Limit, Page, Service, Store, ToolContext, World, derived
from mcp_services.kernel.errors import ErrorCode
from mcp_services.kernel.semantic import EntityId, semantic_type_of
from mcp_services.kernel.tools import parse_docstring
from tests.mcp_services.tiny_service import service as ledger


def dump_json(episode: Episode) -> str:
    return json.dumps(episode.dump(), sort_keys=True)


@pytest.fixture
def episode() -> Episode:
    ep = Episode([ledger], world_seed=3)
    yield ep
    ep.close()


def test_same_seed_gives_byte_identical_world_and_different_seeds_differ() -> None:
    assert World.from_seed(5).to_json() == World.from_seed(5).to_json()
    assert World.from_seed(5).to_json() != World.from_seed(6).to_json()
    code = "from mcp_services.kernel import World; print(World.from_seed(5).to_json())"
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert fresh == World.from_seed(5).to_json()


def test_world_people_belong_to_its_organisations_and_emails_are_unique() -> None:
    world = World.from_seed(0)
    domains = {o.id: o.domain for o in world.organisations}
    assert len({p.email for p in world.people}) == len(world.people)
    for person in world.people:
        assert person.email.endswith("@" + domains[person.organisation_id])
    assert world.user in world.team and world.team_member("finance lead").organisation_id == world.home_organisation_id


def test_failed_write_half_way_leaves_nothing(episode: Episode) -> None:
    before = dump_json(episode)
    result = episode.call("ledger", "transfer", {"source_id": "acc_0001", "target_id": "acc_0002", "amount": 500})
    assert not result.success and result.error_code == ErrorCode.INVALID_STATE
    assert dump_json(episode) == before
    # the id counter rolled back too: the next successful transfer gets the first id
    ok = episode.call("ledger", "transfer", {"source_id": "acc_0001", "target_id": "acc_0002", "amount": 5})
    assert ok.success
    assert list(episode.diff()["ledger"].table("transfers").added) == ["tr_0001"]


def test_unexpected_exception_rolls_back_and_hides_internals(episode: Episode) -> None:
    before = dump_json(episode)
    result = episode.call("ledger", "crash", {"owner": "Ann Lee"})
    assert result.error_code == ErrorCode.INTERNAL_ERROR
    assert "boom" not in (result.error_message or "") and "Traceback" not in (result.error_message or "")
    assert dump_json(episode) == before


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"source_id": "acc_0001", "target_id": "acc_0002"}, "'amount' is required"),
        ({"source_id": "acc_0001", "target_id": "acc_0002", "amount": 1, "memo": "x"}, "'memo' is not a parameter"),
        ({"source_id": "acc_0001", "target_id": "acc_0002", "amount": "lots"}, "'amount'"),
        ({"source_id": "acc_0001", "target_id": "acc_0002", "amount": -4}, "greater than or equal to 0"),
    ],
)
def test_bad_arguments_name_the_problem_and_change_nothing(episode: Episode, arguments: dict, fragment: str) -> None:
    before = dump_json(episode)
    result = episode.call("ledger", "transfer", arguments)
    assert result.error_code == ErrorCode.INVALID_ARGUMENT
    assert fragment in (result.error_message or "")
    assert dump_json(episode) == before


def test_unknown_tool_and_service_suggest_the_right_names(episode: Episode) -> None:
    result = episode.call("ledger", "transfr", {})
    assert result.error_code == ErrorCode.UNKNOWN_TOOL and "transfer" in (result.error_message or "")
    assert episode.call("bank", "transfer", {}).error_code == ErrorCode.UNKNOWN_SERVICE


def test_missing_id_is_not_found_and_changes_nothing(episode: Episode) -> None:
    before = dump_json(episode)
    result = episode.call("ledger", "transfer", {"source_id": "acc_0404", "target_id": "acc_0002", "amount": 1})
    assert result.error_code == ErrorCode.NOT_FOUND and "acc_0404" in (result.error_message or "")
    assert dump_json(episode) == before


def test_envelope_shapes() -> None:
    ep = Episode([ledger], 0)
    ok = ep.call("ledger", "list_accounts", {"limit": 2}).envelope()
    assert ok["success"] is True and len(ok["data"]["items"]) == 2 and ok["data"]["next_cursor"] == "2"
    bad = ep.call("ledger", "list_accounts", {"limit": 0}).envelope()
    assert bad["success"] is False and set(bad["error"]) == {"code", "message"}
    jsonschema.validate(ok, ledger.tools["list_accounts"].output_schema)
    jsonschema.validate(bad, ledger.tools["list_accounts"].output_schema)


def test_pagination_walks_every_row_once() -> None:
    ep = Episode([ledger], 0)
    seen, cursor = [], None
    while True:
        page = ep.call("ledger", "list_accounts", {"limit": 5, "cursor": cursor}).data
        seen += [a["id"] for a in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 12
    assert ep.call("ledger", "list_accounts", {"cursor": "abc"}).error_code == ErrorCode.INVALID_ARGUMENT


def test_reset_restores_the_initial_state_and_snapshots_round_trip(episode: Episode) -> None:
    initial = dump_json(episode)
    episode.call("ledger", "transfer", {"source_id": "acc_0001", "target_id": "acc_0002", "amount": 5})
    middle = episode.snapshot()
    middle_dump = dump_json(episode)
    episode.call("ledger", "transfer", {"source_id": "acc_0003", "target_id": "acc_0002", "amount": 7})
    episode.reset(middle)
    assert dump_json(episode) == middle_dump
    episode.reset()
    assert dump_json(episode) == initial


def test_diff_reports_added_changed_and_deleted_rows_per_table(episode: Episode) -> None:
    episode.call("ledger", "transfer", {"source_id": "acc_0001", "target_id": "acc_0002", "amount": 5})
    diff = episode.diff()["ledger"]
    assert set(diff.table("transfers").added) == {"tr_0001"}
    changed = diff.table("accounts").changed
    assert set(changed) == {"acc_0001", "acc_0002"}
    assert changed["acc_0001"].fields == ["balance"] and changed["acc_0001"].after["balance"] == 95.0
    store = episode.stores["ledger"]
    with store.transaction() as tx:
        tx.conn.execute('DELETE FROM "transfers"')
    assert not episode.diff()["ledger"].table("transfers")  # added then deleted: no net change
    assert "_kernel_counters" not in diff.tables


def test_two_episodes_never_see_each_others_writes() -> None:
    a, b = Episode([ledger], 0), Episode([ledger], 0)
    a.call("ledger", "transfer", {"source_id": "acc_0001", "target_id": "acc_0002", "amount": 5})
    assert dump_json(a) != dump_json(b)
    assert not any(b.diff().values())


def test_setup_records_become_the_initial_state(episode: Episode) -> None:
    episode.apply_setup([{"service": "ledger", "table": "accounts", "row": {"id": "acc_9000", "owner": "Zed Ko", "email": "zed@ko.example", "balance": 3.0}}])
    assert not any(episode.diff().values())
    episode.reset()
    assert "acc_9000" in episode.dump()["ledger"]["accounts"]
    with pytest.raises(ValueError, match="no column"):
        episode.apply_setup([{"service": "ledger", "table": "accounts", "row": {"id": "x", "colour": "red"}}])
    with pytest.raises(ValueError, match="not mounted"):
        episode.apply_setup([{"service": "crm", "table": "contacts", "row": {}}])


def test_schemas_carry_semantic_types_and_forbid_extra_arguments() -> None:
    tool = ledger.tools["transfer"]
    props = tool.input_schema["properties"]
    assert semantic_type_of(props["source_id"]) == "id:ledger.account"
    assert semantic_type_of(props["amount"]) == "money"
    assert props["amount"]["description"] == "How much to move."
    assert tool.input_schema["additionalProperties"] is False
    out = tool.data_schema
    assert semantic_type_of(out["properties"]["email"]) == "email_address"
    assert out["properties"]["email"]["format"] == "email"
    jsonschema.Draft202012Validator.check_schema(tool.output_schema)


def test_docstring_args_section_is_split_from_the_description() -> None:
    description, args = parse_docstring(
        """Do a thing.

        More detail.

        Args:
            first: The first
                argument, continued.
            second (int): The second.

        Returns:
            Something.
        """
    )
    assert description == "Do a thing.\n\nMore detail."
    assert args == {"first": "The first argument, continued.", "second": "The second."}


def test_file_store_survives_restart_and_rejects_another_seed(tmp_path: Path) -> None:
    paths = {"ledger": tmp_path / "ledger.sqlite"}
    first = Episode([ledger], 0, db_paths=paths)
    first.call("ledger", "transfer", {"source_id": "acc_0001", "target_id": "acc_0002", "amount": 5})
    first.close()
    again = Episode([ledger], 0, db_paths=paths)
    assert again.dump()["ledger"]["accounts"]["acc_0001"]["balance"] == 95.0
    again.close()
    with pytest.raises(ValueError, match="world seed"):
        Episode([ledger], 1, db_paths=paths)


def test_file_store_killed_mid_call_reopens_consistent(tmp_path: Path) -> None:
    """A process killed with SIGKILL inside a write transaction leaves the file as it was before."""
    db = tmp_path / "ledger.sqlite"
    script = textwrap.dedent(
        f"""
        import os, signal
        from mcp_services.kernel import Episode
        from tests.mcp_services.tiny_service import service
        ep = Episode([service], 0, db_paths={{"ledger": {str(db)!r}}})
        ep.call("ledger", "transfer", {{"source_id": "acc_0001", "target_id": "acc_0002", "amount": 5}})
        store = ep.stores["ledger"]
        with store.transaction() as tx:
            tx.conn.execute(
                'INSERT INTO "transfers" (id, source_id, target_id, amount) VALUES (?, ?, ?, ?)',
                ("tr_half", "acc_0001", "acc_0002", 1.0),
            )
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2], capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    reopened = Episode([ledger], 0, db_paths={"ledger": db})
    transfers = reopened.dump()["ledger"]["transfers"]
    assert list(transfers) == ["tr_0001"]
    assert reopened.stores["ledger"]._raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    reopened.close()


def test_store_from_another_service_file_is_refused(tmp_path: Path) -> None:
    from mcp_services.library.crm import service as crm

    path = tmp_path / "x.sqlite"
    Episode([crm], 0, db_paths={"crm": path}).close()
    with pytest.raises(ValueError, match="does not hold this service's state"):
        Store.open_file(ledger.metadata, path)



def test_fast_diff_equals_the_diff_of_full_dumps_across_services() -> None:
    from mcp_services.kernel import diff_states

    episode = Episode.create(["crm", "mailbox", "helpdesk"], 0)
    episode.call("crm", "archive_contact", {"contact_id": "ct_0003"})
    episode.call("crm", "create_deal", {"name": "Renewal", "company_id": "co_0001", "amount": 10})
    sent = episode.call("mailbox", "send_email", {"to": ["a@b.example"], "subject": "Hi", "body": "Hello"})
    assert sent.success
    fast = {name: d.to_dict() for name, d in episode.diff().items()}
    initial, now = episode.initial_dump(), episode.dump()
    slow = {name: diff_states(initial[name], now[name]).to_dict() for name in now}
    assert fast == slow and fast["mailbox"] and not fast["helpdesk"]


def test_setup_marker_survives_reopening_a_file_backed_episode(tmp_path: Path) -> None:
    paths = {"ledger": tmp_path / "ledger.sqlite"}
    row = {"id": "acc_9000", "owner": "Zed Ko", "email": "zed@ko.example", "balance": 3.0}
    first = Episode([ledger], 0, db_paths=paths)
    assert first.setup_marker() is None
    first.apply_setup([{"service": "ledger", "table": "accounts", "row": row}], marker="task-1")
    first.close()
    again = Episode([ledger], 0, db_paths=paths)
    assert again.setup_marker() == "task-1"
    again.close()


def test_a_tool_declares_a_known_intent_and_phrases_that_name_its_parameters() -> None:
    svc = Service("intents_probe", "Probe.")

    def refund(ctx: ToolContext, charge_id: str) -> str:
        """Refund a charge."""
        return charge_id

    svc.tool("write", intent="refund", phrases=("refund {charge_id}",))(refund)
    assert svc.tools["refund"].intent == "refund"
    assert svc.tools["refund"].phrases == ("refund {charge_id}",)
    with pytest.raises(ValueError, match="unknown intent 'refundify'"):
        svc.tool("write", name="refund2", intent="refundify")(refund)
    with pytest.raises(ValueError, match="is a write intent but the tool's effect is 'read'"):
        svc.tool("read", name="refund3", intent="refund")(refund)
    with pytest.raises(ValueError, match=r"names \{invoice_id\}, which is not a parameter"):
        svc.tool("write", name="refund4", intent="refund", phrases=("refund {invoice_id}",))(refund)


def test_setup_records_move_id_counters_past_their_ids(episode: Episode) -> None:
    episode.apply_setup(
        [{"service": "ledger", "table": "transfers", "row": {"id": "tr_0100", "source_id": "acc_0001", "target_id": "acc_0002", "amount": 1.0}}]
    )
    episode.call("ledger", "transfer", {"source_id": "acc_0001", "target_id": "acc_0002", "amount": 5})
    assert set(episode.diff()["ledger"].table("transfers").added) == {"tr_0101"}


def test_a_world_event_writes_what_arrives_and_is_not_a_tool() -> None:
    svc = Service("events_probe", "Probe.")

    @svc.entity(table="notes", prefix="n")
    class Note:
        id: EntityId("events_probe.note")  # type: ignore[valid-type]  # EntityId is a type factory
        text: str

    @svc.event("note_arrived")
    def note_arrived(ctx: ToolContext, text: str) -> str:
        return ctx.insert(Note(id=ctx.new_id("n"), text=text)).id

    episode = Episode([svc], 0)
    assert episode.run_event("events_probe", "note_arrived", text="hello") == "n_0001"
    assert "note_arrived" not in svc.tools
    with pytest.raises(KeyError, match="has no event 'nope'"):
        episode.run_event("events_probe", "nope")


def test_a_batch_derived_value_is_computed_once_per_result() -> None:
    svc = Service("batch_probe", "Probe.")
    calls: list[int] = []

    def counts(db: Any, records: Any) -> list[int]:
        calls.append(len(records))
        total = db.sql('SELECT COUNT(*) FROM "items"')[0][0]
        return [r.n + total for r in records]

    @svc.entity(table="items", prefix="it")
    class Item:
        id: EntityId("batch_probe.item")  # type: ignore[valid-type]  # EntityId is a type factory
        n: int
        shown = derived(int, batch=counts)

    @svc.seeder
    def seed(ctx: ToolContext) -> None:
        ctx.insert_many([Item(id=ctx.new_id("it"), n=i) for i in range(3)])

    def list_items(ctx: ToolContext, limit: Limit = 20, cursor: Cursor = None) -> Page[Item]:
        """List items."""
        return ctx.query(Item).page(limit, cursor)

    list_items.__annotations__["return"] = Page[Item]  # a local class: resolve the annotation here
    svc.tool("read", intent="find")(list_items)
    page = Episode([svc], 0).call("batch_probe", "list_items", {}).data
    assert [i["shown"] for i in page["items"]] == [3, 4, 5] and calls == [3]


def test_the_fast_diff_equals_the_diff_of_two_full_dumps_for_every_kind_of_change() -> None:
    """Diffs read only the rows on changed pages; they must find exactly what comparing every row finds."""
    from mcp_services.kernel.diff import diff_states

    episode = Episode.create(["crm"], 0)
    store = episode.stores["crm"]
    changes = [
        'UPDATE "contacts" SET job_title = \'CEO\' WHERE id = \'ct_0002\'',  # a small in-place change
        'DELETE FROM "notes" WHERE id = \'nt_0003\'',
        'INSERT INTO "notes" (id, entity_type, entity_id, body, author_email, created_at) '
        "VALUES ('nt_0900', 'contact', 'ct_0001', 'x', 'a@b.example', '2025-01-01T00:00:00Z')",
        "UPDATE \"notes\" SET body = printf('%.9000c', 'y') WHERE id = 'nt_0001'",  # spills onto overflow pages
        "UPDATE \"notes\" SET body = body || 'z' WHERE id = 'nt_0001'",  # changes only an overflow page
        'UPDATE "deals" SET amount = amount + 1',  # every row of a table
    ]
    for change in changes:
        image = store.snapshot()
        before = store.dump_image(image)
        with store.transaction() as tx:
            tx.conn.execute(change)
        assert diff_states(*store.changed_rows_since(image)).to_dict() == diff_states(before, store.dump()).to_dict(), change


def test_records_of_entities_declared_as_data_are_frozen_and_map_keyword_columns() -> None:
    import dataclasses as dc

    from mcp_services.kernel.entity import entity_class
    from mcp_services.kernel.records import Query
    from mcp_services.kernel.schema import EntityDef, FieldDef

    svc = Service("sms", "Text messages.")
    definition = EntityDef(name="message", table="messages", timestamps=False,
                           fields=[FieldDef(name="from", type="string"), FieldDef(name="body", type="string")])
    runtime = svc.add_entity(entity_class("sms", definition), definition)
    record = runtime.record({"id": "m2", "from": "+15550101", "body": "hi"})
    assert record.from_ == "+15550101" and runtime.dump(record) == {"id": "m2", "from": "+15550101", "body": "hi"}
    with pytest.raises(dc.FrozenInstanceError):
        record.body = "changed"
    store = Store.in_memory(svc.metadata)
    with store.transaction() as tx:
        ctx = ToolContext(tx, World.from_seed(1), "sms")
        ctx.insert(record)
        ctx.insert(runtime.record({"id": "m1", "from": "+15550102", "body": "yo"}))
        assert ctx.update(record, **{"from": "+15550103"}) == runtime.record({"id": "m2", "from": "+15550103", "body": "hi"})
        assert [m.id for m in Query(tx.conn, runtime).in_insertion_order().all()] == ["m2", "m1"]
        assert [m.id for m in Query(tx.conn, runtime).all()] == ["m1", "m2"]
        assert Query(tx.conn, runtime).where(**{"from": "+15550103"}).page_at(1, 0).items[0].body == "hi"
    store.close()
