"""From trajectories.jsonl to the conversational dataset SFTTrainer takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.training.conftest import WriteRun
from tests.training.trajectories import make_trajectory
from training.errors import TrainingInputError
from training.sft_data import build_sft_data, split_tasks

pytestmark = pytest.mark.train
pytest.importorskip("datasets")


def _records(n_tasks: int) -> list[dict]:
    records = []
    for t in range(n_tasks):
        # Two distinct passing conversations per task (the final answer names the task) and one failure.
        records += [
            make_trajectory(f"task-{t}", 0, answer=f"Done {t}."),
            make_trajectory(f"task-{t}", 1, answer=f"Answer {t}."),
        ]
        records.append(make_trajectory(f"task-{t}", 2, passed=False))
    return records


def test_keeps_passing_trajectories_and_drops_duplicates(write_run: WriteRun) -> None:
    records = [make_trajectory("a", 0), make_trajectory("a", 1), make_trajectory("a", 2, passed=False)]
    data = build_sft_data(write_run(records), val_fraction=0.0)
    assert data.stats["n_trajectories"] == 3
    assert data.stats["n_passed"] == 2
    assert data.stats["n_duplicates"] == 1  # rollouts 0 and 1 are the same conversation
    assert data.stats["n_examples"] == len(data.train) == 1
    assert data.validation is None
    assert data.train.column_names == ["messages", "tools"]


def test_messages_are_normalised_for_the_chat_template(write_run: WriteRun) -> None:
    record = make_trajectory("a")
    record["messages"].append({"role": "user", "content": "thanks"})  # nothing to learn after the last answer
    data = build_sft_data(write_run([record]), val_fraction=0.0)
    messages = data.train[0]["messages"]
    assert [m["role"] for m in messages] == [m["role"] for m in record["messages"][:-1]]
    call = messages[2]["tool_calls"][0]
    assert messages[2]["content"] == ""  # null content of a tool-calling turn
    assert call["function"] == {"name": "crm__search_contacts", "arguments": '{"query": "Ana Ruiz"}'}
    tool_message = messages[3]
    assert tool_message["name"] == "crm__search_contacts"  # resolved from tool_call_id
    assert tool_message["tool_call_id"] == "call_1"
    assert json.loads(data.train[0]["tools"]) == record["tools"]
    # Arrow filled the keys a call does not use with nulls: the strings kept each call's own keys.
    note_call = messages[9]["tool_calls"][0]["function"]
    assert json.loads(note_call["arguments"]) == {"ticket_id": "T-1042", "note": "Refunded re_0007"}


def test_split_is_by_task_and_deterministic(write_run: WriteRun) -> None:
    run_dir = write_run(_records(10))
    first = build_sft_data(run_dir, val_fraction=0.3, seed=1)
    again = build_sft_data(run_dir, val_fraction=0.3, seed=1)
    assert first.stats["n_validation_tasks"] == 3 and first.stats["n_train_tasks"] == 7
    assert first.stats["n_train_examples"] == 14 and first.stats["n_validation_examples"] == 6
    assert first.train.to_list() == again.train.to_list()
    assert first.validation is not None and again.validation is not None
    assert first.validation.to_list() == again.validation.to_list()

    def tasks(dataset) -> list[str]:
        return sorted(row["messages"][-1]["content"].split()[-1] for row in dataset)

    train_tasks, val_tasks = tasks(first.train), tasks(first.validation)
    # Both rollouts of a task land on the same side.
    assert len(set(train_tasks)) == 7 and train_tasks == sorted(2 * list(set(train_tasks)))
    assert len(set(val_tasks)) == 3 and val_tasks == sorted(2 * list(set(val_tasks)))
    assert not set(train_tasks) & set(val_tasks)


def test_split_does_not_depend_on_line_order(write_run: WriteRun) -> None:
    records = _records(6)
    ordered = build_sft_data(write_run(records), val_fraction=0.5, seed=3)
    shuffled = build_sft_data(write_run(records[::-1]), val_fraction=0.5, seed=3)
    assert ordered.train.to_list() == shuffled.train.to_list()


def test_split_tasks_never_empties_train() -> None:
    assert split_tasks({"only"}, val_fraction=0.9, seed=0) == set()
    assert len(split_tasks({"a", "b"}, val_fraction=0.9, seed=0)) == 1
    assert split_tasks({f"t{i}" for i in range(20)}, val_fraction=0.25, seed=0) != split_tasks(
        {f"t{i}" for i in range(20)}, val_fraction=0.25, seed=1
    )


@pytest.mark.parametrize("arguments", ['{"query": "Ana', "[" * 100_000 + "]" * 100_000, "1" * 5_000])
def test_malformed_tool_call_arguments_are_skipped(write_run: WriteRun, arguments: str) -> None:
    bad = make_trajectory("b")
    bad["messages"][2]["tool_calls"][0]["function"]["arguments"] = arguments
    data = build_sft_data(write_run([make_trajectory("a"), bad]), val_fraction=0.0)
    assert data.stats["n_skipped_malformed"] == 1 and len(data.train) == 1


def test_missing_run_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TrainingInputError, match="does not exist: run `harness collect` first"):
        build_sft_data(tmp_path / "nope")


def test_missing_trajectories_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TrainingInputError, match="no trajectories.jsonl in .*: run `harness collect` first"):
        build_sft_data(tmp_path)


def test_empty_run_is_a_clear_error(write_run: WriteRun) -> None:
    with pytest.raises(TrainingInputError, match="no trajectories: the run is empty"):
        build_sft_data(write_run([]))


def test_run_without_a_passing_trajectory_is_a_clear_error(write_run: WriteRun) -> None:
    with pytest.raises(TrainingInputError, match="none of the 2 trajectories .* passed"):
        build_sft_data(write_run([make_trajectory("a", passed=False), make_trajectory("b", passed=False)]))


def test_corrupt_line_is_named(write_run: WriteRun) -> None:
    run_dir = write_run([make_trajectory("a"), make_trajectory("b")])
    path = run_dir / "trajectories.jsonl"
    path.write_text(path.read_text() + '{"schema_version": 1, "task_id": "c", "mess\n')
    with pytest.raises(TrainingInputError, match=r"line 3: corrupt line, not valid JSON"):
        build_sft_data(run_dir)
    path.write_bytes(b"\n" + json.dumps(make_trajectory("a")).encode() + b"\n\xff\xfe\n")
    with pytest.raises(TrainingInputError, match=r"line 3: corrupt line, not UTF-8"):
        build_sft_data(run_dir)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema_version": 99}, "schema_version 99 is not supported"),
        ({"passed": "yes"}, "passed must be true or false"),
        ({"messages": []}, "messages must be a non-empty list"),
        ({"task_id": ""}, "task_id must be a non-empty string"),
    ],
)
def test_invalid_record_is_named(write_run: WriteRun, change: dict, message: str) -> None:
    record = make_trajectory("a") | change
    with pytest.raises(TrainingInputError, match=f"line 2: {message}"):
        build_sft_data(write_run([make_trajectory("b"), record]))


def test_record_missing_a_field_is_named(write_run: WriteRun) -> None:
    record = make_trajectory("a")
    del record["tools"]
    with pytest.raises(TrainingInputError, match="line 1: missing field"):
        build_sft_data(write_run([record]))


def test_bad_message_role_is_named(write_run: WriteRun) -> None:
    record = make_trajectory("a")
    record["messages"][1]["role"] = "human"
    with pytest.raises(TrainingInputError, match="line 1, message 1: role must be one of"):
        build_sft_data(write_run([record]))
