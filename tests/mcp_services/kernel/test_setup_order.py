"""Task setup rows go in parents first, whatever order they were planted in: a document planted in a folder that was
planted after another file no longer breaks the episode with a foreign key error."""

from __future__ import annotations

from mcp_services.kernel.episode import Episode
from mcp_services.library import files


def test_insert_order_puts_a_table_after_the_tables_its_foreign_keys_point_to() -> None:
    episode = Episode([files.service], 0)
    store = episode.stores["files"]
    order = store.insert_order(["files", "folders"])
    assert order.index("folders") < order.index("files")


def _row(episode: Episode, table: str, **changes: object) -> dict[str, object]:
    """A copy of a seeded row of ``table`` (every column as stored) with ``changes``."""
    conn = episode.stores["files"]._raw  # noqa: SLF001 - the test builds setup rows as the composer records them
    cursor = conn.execute(f'SELECT * FROM "{table}" LIMIT 1')
    row = dict(zip([c[0] for c in cursor.description], cursor.fetchone()))
    return {**row, **changes}


def test_a_file_planted_before_its_folder_is_set_up_without_error() -> None:
    episode = Episode([files.service], 0)
    folder = _row(episode, "folders", id="folder_0900", name="Policies 2")
    document = _row(episode, "files", id="file_0900", name="Rule.md", parent_id="folder_0900")
    episode.apply_setup([{"service": "files", "table": "files", "row": document},
                         {"service": "files", "table": "folders", "row": folder}])
    found = episode.call("files", "get_file", {"file_id": "file_0900"})
    assert found.success and found.data["parent_id"] == "folder_0900"
