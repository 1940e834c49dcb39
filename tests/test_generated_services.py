"""Generated and imported services can be found and used: listed, suggested when misspelled, served
from a catalog that ``COMPOWORLD_CATALOG`` names, and started by Claude Desktop from that catalog too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from mcp_services.kernel.service import Service
from mcp_services.registry import UnknownServiceError, get_service, register_provider, unregister_provider

REPO = Path(__file__).resolve().parents[1]
MCP_NOTES = REPO / "tests" / "fixtures" / "generator_mcp_notes.json"
IMPORTED = "generator_mcp_notes"  # the service `generator import` makes of that file


def generator(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from generator.cli import main

    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalog folder written by ``generator import`` (not named in COMPOWORLD_CATALOG)."""
    from generator.cli import main

    out = tmp_path_factory.mktemp("imported")
    with pytest.raises(SystemExit) as done:
        main(["import", str(MCP_NOTES), "--out", str(out), "--quiet"])
    assert done.value.code == 0
    return out


def mcp_services(argv: list[str], cwd: Path, catalog: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COMPOWORLD_CATALOG"}
    if catalog is not None:
        env["COMPOWORLD_CATALOG"] = catalog
    return subprocess.run(
        [sys.executable, "-m", "mcp_services", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_catalog_list_names_every_generated_service_with_its_title_and_counts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = generator(["catalog", "--list", "--json"], capsys)
    rows = json.loads(out)
    code_counts, counts_out, _ = generator(["catalog", "--json"], capsys)
    totals = json.loads(counts_out)["generated"]
    assert code == code_counts == 0
    assert len(rows) == totals["services"] and sum(r["tools"] for r in rows) == totals["tools"]
    assert sum(r["implemented"] for r in rows) == totals["by_status"]["implemented"]
    stripe = next(r for r in rows if r["name"] == "stripe")
    assert stripe["title"] and stripe["tools"] == stripe["implemented"] + stripe["simulated"]
    code, table, _ = generator(["catalog", "--list"], capsys)
    lines = table.splitlines()
    assert code == 0 and lines[-1] == f"{len(rows)} generated services"
    assert any(line.startswith("stripe ") and stripe["title"] in line for line in lines)


def test_catalog_list_includes_an_imported_catalog_when_named(
    imported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = generator(["catalog", "--list", "--json", "--catalog", str(imported)], capsys)
    assert code == 0
    assert [(r["name"], r["tools"], r["implemented"]) for r in json.loads(out)] == [(IMPORTED, 13, 13)]


def test_show_suggests_the_closest_generated_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = generator(["show", "strip"], capsys)
    assert code == 2 and err.startswith("generator: error: no generated service 'strip'; did you mean stripe?")
    code, _, err = generator(["show", "crm"], capsys)
    assert code == 2 and "'crm' is a hand-written service, not a generated one" in err


class _Loyalty:
    """A provider registered in code, with one service name and no service behind it."""

    def names(self) -> Iterable[str]:
        return ["loyalty_points"]

    def service(self, name: str) -> Service | None:
        return None


def test_an_unknown_service_suggests_names_of_every_provider() -> None:
    register_provider("test-loyalty", _Loyalty())
    try:
        with pytest.raises(UnknownServiceError) as unknown:
            get_service("loyalty_point")
    finally:
        unregister_provider("test-loyalty")
    assert str(unknown.value).startswith("unknown service 'loyalty_point'; did you mean loyalty_points? (")
    with pytest.raises(UnknownServiceError, match="did you mean stripe"):  # the generator's catalog, a provider
        get_service("strip")


def test_an_imported_service_is_served_from_the_catalog_that_compoworld_catalog_names(
    imported: Path, tmp_path: Path
) -> None:
    refused = mcp_services(["claude-config", IMPORTED], tmp_path, None)
    assert refused.returncode == 2 and f"unknown service {IMPORTED!r}" in refused.stderr
    assert "COMPOWORLD_CATALOG names DIR" in refused.stderr and len(refused.stderr.splitlines()) == 1
    relative = os.path.relpath(imported, tmp_path)
    served = mcp_services(["claude-config", IMPORTED, "--db", "state"], tmp_path, relative)
    assert served.returncode == 0, served.stderr
    (entry,) = json.loads(served.stdout)["mcpServers"].values()
    # Claude Desktop starts the server in a folder of its own, with none of this shell's variables.
    assert entry["env"]["COMPOWORLD_CATALOG"] == str(imported.resolve())
    assert entry["args"][:4] == ["-m", "mcp_services", "serve", IMPORTED]


def test_generator_import_says_how_to_serve_what_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = generator(["import", str(MCP_NOTES), "--out", str(tmp_path / "mine"), "--quiet"], capsys)
    assert code == 0
    assert out.splitlines()[-1] == (
        f"serve one with: COMPOWORLD_CATALOG={(tmp_path / 'mine').resolve()} mcp-services serve {IMPORTED}"
    )


def test_harness_claude_config_passes_the_catalog_path_through(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from harness.desktop import claude_desktop_entry
    from mcp_services.tasks.spec import load_tasks

    task = load_tasks(REPO / "tests" / "fixtures" / "task_contract_v1.jsonl")[0]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPOWORLD_CATALOG", os.pathsep.join(["one", str(tmp_path / "two")]))
    entry = claude_desktop_entry(tmp_path / "tasks.jsonl", task)
    assert entry["env"]["COMPOWORLD_CATALOG"] == os.pathsep.join([str(tmp_path / "one"), str(tmp_path / "two")])
    monkeypatch.delenv("COMPOWORLD_CATALOG")
    assert "COMPOWORLD_CATALOG" not in claude_desktop_entry(tmp_path / "tasks.jsonl", task)["env"]
