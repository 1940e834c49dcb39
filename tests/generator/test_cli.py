"""``generator import | verify | catalog | show``: files written, counts printed, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main
from tests.generator.conftest import MCP_NOTES, OPENAPI_PETCLINIC, SPECS_SAMPLE


def run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("catalog")
    with pytest.raises(SystemExit) as exit_info:
        main(["import", str(MCP_NOTES), "--out", str(out), "--quiet"])
    assert exit_info.value.code == 0
    return out


def test_import_writes_the_services_and_a_gate_report_of_the_agreed_shape(imported: Path) -> None:
    report = json.loads((imported / "gate_report.json").read_text())
    (service,) = report["services"]
    assert service["name"] == "generator_mcp_notes"
    statuses = {t["name"]: t["status"] for t in service["tools"]}
    assert statuses["create_note"] == "implemented" and statuses["summarize_notebook"] in ("implemented", "simulated")
    assert statuses["bad name with spaces"] == "rejected" and statuses["weird_types"] == "rejected"
    reasons = {t["name"]: t["reason"] for t in service["tools"]}
    assert reasons["link_notes"] == "unresolvable reference '#/$defs/Missing' at properties.link"
    assert all(set(t) == {"name", "status", "reason"} for t in service["tools"])
    assert {p.name for p in imported.iterdir()} == {"gate_report.json", "index.json", "specs.zip"}


def test_catalog_counts_by_status_and_by_source(imported: Path, capsys: Any) -> None:
    code, out, _ = run(["catalog", "--json", "--catalog", str(imported)], capsys)
    counts = json.loads(out)["generated"]
    assert code == 0 and counts["services"] == 1 and counts["tools"] == 13
    assert counts["by_source"]["mcp"]["tools"] == 13
    assert counts["by_status"]["rejected"] == 4 and sum(counts["simulated_because"].values()) == counts["by_status"].get("simulated", 0)
    code, out, _ = run(["catalog", "--catalog", str(imported)], capsys)
    assert out.startswith("generated: 1 services, 13 tools")


def test_verify_re_runs_the_gate_and_reports_no_change(imported: Path, capsys: Any) -> None:
    code, out, err = run(["verify", "--all", "--catalog", str(imported)], capsys)
    assert code == 0, out + err
    assert "1 services re-gated" in out and "0 tools changed status" in out


def test_show_prints_a_spec(imported: Path, capsys: Any) -> None:
    code, out, _ = run(["show", "generator_mcp_notes", "--catalog", str(imported)], capsys)
    assert code == 0 and json.loads(out)["name"] == "generator_mcp_notes"


def test_only_selects_services_and_imports_merge_into_one_catalog(tmp_path: Path, capsys: Any) -> None:
    code, out, err = run(["import", str(SPECS_SAMPLE), "--only", "twilio_fax_v1,medium.com", "--out", str(tmp_path)], capsys)
    assert code == 0 and out.startswith("2 services written")
    assert "gating 2 services" in err and "[2/2]" in err  # progress on stderr
    code, out, _ = run(["import", str(OPENAPI_PETCLINIC), "--format", "openapi", "--out", str(tmp_path), "--quiet"], capsys)
    names = [s["name"] for s in json.loads((tmp_path / "gate_report.json").read_text())["services"]]
    assert names == ["generator_openapi_petclinic", "medium", "twilio_fax_v1"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["import", "/no/such/file.json", "--out", "/tmp/x"], "no such file"),
        (["import", str(MCP_NOTES), "--format", "openapi", "--out", "/tmp/x"], "is not an OpenAPI 3 or Swagger 2 document"),
        (["import", str(SPECS_SAMPLE), "--only", "nothing_like_this", "--out", "/tmp/gen-empty"], "no services imported"),
        (["verify", "--catalog", "/tmp"], "is empty"),
        (["show", "no_such_service", "--catalog", "/tmp"], "no generated service 'no_such_service'"),
    ],
)
def test_user_errors_are_one_line_with_exit_status_2(argv: list[str], message: str, capsys: Any) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_import_into_a_folder_keeping_its_report_compressed_merges_into_it(tmp_path: Path, capsys: Any) -> None:
    import gzip

    code, _, _ = run(["import", str(SPECS_SAMPLE), "--only", "twilio_fax_v1,medium.com", "--out", str(tmp_path), "--quiet"], capsys)
    assert code == 0
    plain, compressed = tmp_path / "gate_report.json", tmp_path / "gate_report.json.gz"
    compressed.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))  # as the package keeps its catalog's report
    plain.unlink()
    code, out, _ = run(["import", str(OPENAPI_PETCLINIC), "--format", "openapi", "--out", str(tmp_path), "--quiet"], capsys)
    assert code == 0 and f"(report: {compressed})" in out
    assert not plain.exists()  # the folder keeps the compressed form
    report = json.loads(gzip.decompress(compressed.read_bytes()))
    assert [s["name"] for s in report["services"]] == ["generator_openapi_petclinic", "medium", "twilio_fax_v1"]
    assert compressed.read_bytes()[4:8] == b"\0\0\0\0"  # no timestamp (gzip -n)


def test_an_unreadable_report_stops_an_import_into_its_folder_before_anything_is_lost(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "gate_report.json.gz").write_bytes(b"not gzip")
    code, _, err = run(["import", str(MCP_NOTES), "--out", str(tmp_path), "--quiet"], capsys)
    assert code == 2 and "cannot merge into" in err
    assert not (tmp_path / "index.json").exists() and (tmp_path / "gate_report.json.gz").read_bytes() == b"not gzip"


def test_only_takes_the_service_name_a_source_gets_when_its_own_is_the_library_s(tmp_path: Path, capsys: Any) -> None:
    line = next(line for line in SPECS_SAMPLE.read_text().splitlines() if '"medium.com"' in line)
    source = tmp_path / "specs.jsonl"
    source.write_text(line.replace('"medium.com"', '"files.com"', 1) + "\n")  # 'files' is a hand-written service's
    out = tmp_path / "catalog"
    code, printed, _ = run(["import", str(source), "--only", "files_api", "--out", str(out), "--quiet"], capsys)
    assert code == 0 and printed.startswith("1 services written"), printed
    index = json.loads((out / "index.json").read_text())["services"]
    assert list(index) == ["files_api"] and index["files_api"]["source_name"] == "files.com"
    for name in ("files_api", "files.com"):  # again, into the folder that names it: replaced
        code, printed, _ = run(["import", str(source), "--only", name, "--out", str(out), "--quiet"], capsys)
        assert code == 0 and printed.startswith("1 services written"), printed


def test_catalog_reasons_give_the_gate_reason_of_every_tool_not_implemented(capsys: Any) -> None:
    code, out, _ = run(["catalog", "--json"], capsys)
    counts = json.loads(out)["generated"]["by_status"]
    code, out, _ = run(["catalog", "--reasons", "--json"], capsys)
    reasons = json.loads(out)
    assert code == 0 and len(reasons) == counts["simulated"] + counts.get("rejected", 0)
    assert all(row["reason"] and row["status"] in ("simulated", "rejected") for row in reasons)
    code, out, _ = run(["catalog", "--reasons", "stripe"], capsys)
    lines = out.splitlines()
    assert lines[-1].endswith("tools not implemented, in 1 services") and len(lines) > 2
    assert all(line.startswith("stripe.") and ": " in line for line in lines[:-1])
    code, _, err = run(["catalog", "--reasons", "no_such_service"], capsys)
    assert code == 2 and err.strip() == "generator: error: not in the catalog: no_such_service (see `generator catalog --list`)"
