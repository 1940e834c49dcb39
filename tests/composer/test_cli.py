"""The command line: bad input is one error line and exit status 2, never a traceback or a stray file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from composer.cli import main
from mcp_services.tasks.spec import TaskSpec, write_tasks


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("composer: error:")
    assert "Traceback" not in err
    return lines[0]


def test_an_unknown_service_is_one_clear_error_and_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    code, _, err = _run(capsys, "generate", "--n", "3", "--services", "crm,helpdesk,nosuch", "--out", str(out))
    assert code == 2
    assert "nosuch" in _one_error_line(err)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_impossible_constraints_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    for argv in (
        ("--services", "crm", "--archetypes", "double-charge-refund"),  # the refund workflow needs payments
        ("--archetypes", "no-such-archetype"),
        ("--families", "astrology"),
        ("--n", "0"),
    ):
        args = ["generate", "--out", str(out), *argv]
        if "--n" not in argv:
            args += ["--n", "2"]
        code, _, err = _run(capsys, *args)
        assert code == 2, argv
        _one_error_line(err)
        assert not out.exists()


def test_a_missing_empty_or_corrupt_task_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text('{"id": "x", "schema_version": 1\n')
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(json.dumps({"schema_version": 1, "id": "x"}) + "\n")
    for path in (tmp_path / "missing.jsonl", empty, corrupt, wrong):
        for command in ("stats", "verify"):
            code, _, err = _run(capsys, command, str(path))
            assert code == 2, (command, path)
            _one_error_line(err)


def test_usage_mistakes_are_one_line_too(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["generate"])
    assert exc.value.code == 2
    _one_error_line(capsys.readouterr().err)


def test_stats_and_verify_read_a_generated_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, tasks: list[TaskSpec]) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks[:3])
    code, out, _ = _run(capsys, "stats", str(path), "--json")
    assert code == 0
    stats = json.loads(out)
    assert stats["tasks"] == 3 and set(stats["capability_share"]) == {
        "sequential-dependency", "cross-service-constraint", "distractor-avoidance", "information-question", "policy"
    }
    code, out, _ = _run(capsys, "verify", str(path), "--quiet")
    assert code == 0
    assert "3 of 3 tasks pass verification" in out


def test_verify_names_a_task_that_fails_and_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path, tasks: list[TaskSpec]) -> None:
    task = next(t for t in tasks if t.answer is None)
    broken = TaskSpec.build(**{**task.model_dump(exclude={"id"}), "plan": task.plan[:1]})
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [broken])
    code, out, _ = _run(capsys, "verify", str(path), "--quiet")
    assert code == 1
    assert broken.id in out and "fails criteria" in out


def test_generate_writes_a_task_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    code, _, err = _run(
        capsys, "generate", "--n", "2", "--seed", "5", "--services", "crm,helpdesk,mailbox,payments", "--out", str(out)
    )
    assert code == 0, err
    assert "candidates" in err  # progress and the summary go to stderr
    assert out.read_text().count("\n") >= 1


def test_graph_writes_its_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "graph", "--out", str(tmp_path / "g"), "--services", "crm,helpdesk", "--no-picture")
    assert code == 0
    assert (tmp_path / "g" / "graph.json").exists() and (tmp_path / "g" / "graph.graphml").exists()
    assert "edges" in out


def test_audit_shows_every_reference_resolved_and_json_has_the_agreed_shape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tasks: list[TaskSpec]
) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks[:4])
    code, out, _ = _run(capsys, "audit", str(path))
    assert code == 0 and "0 referring expression(s) that do not pick out their own record" in out
    assert "exactly this record" in out
    code, out, _ = _run(capsys, "audit", str(path), "--json", "--id", tasks[0].id[:8])
    record = json.loads(out)
    assert record["id"] == tasks[0].id
    assert {"id", "references", "flows", "traps"} <= set(record)
    for ref in record["references"]:
        assert {"text", "service", "table", "key", "relation"} <= set(ref)


def test_archetypes_lists_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "archetypes", "--json")
    rows = json.loads(out)
    assert code == 0 and {r["family"] for r in rows} >= {"support", "sales", "finance", "operations"}
