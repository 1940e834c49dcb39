"""Which services become the library: business and consumer products first, reference data capped, reasons kept."""

from __future__ import annotations

import json
from pathlib import Path

from generator.selection import REFERENCE_SHARE, decide, main


def _specs(tmp_path: Path, heads: list[tuple[str, int, list[str] | None]]) -> Path:
    path = tmp_path / "specs.jsonl"
    lines = [json.dumps({"service": name, "categories": cats, "tools": [{"name": f"t{i}"} for i in range(tools)]})
             for name, tools, cats in heads]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_box_and_hubspot_are_in_and_niche_data_is_out_with_reasons(tmp_path: Path) -> None:
    path = _specs(tmp_path, [
        ("box.com", 227, ["cloud"]), ("hubapi.com:crm", 6, None), ("hubapi.com:events", 1, None),
        ("sportsdata.io:nba-v3-stats", 20, ["entertainment"]), ("azure.com:compute", 40, ["cloud"]),
        ("stripe.com", 384, ["financial"]), ("epa.gov:air", 9, ["open_data"]), ("weatherbit.io", 46, ["location"]),
        ("googleapis.com:gmail", 68, ["analytics"]), ("googleapis.com:compute", 600, ["cloud"]),
    ])
    decisions = {d.candidate.name: d for d in decide(path)}
    assert decisions["box.com"].chosen and decisions["box.com"].kind == "business"
    assert decisions["hubapi.com:crm"].chosen and decisions["hubapi.com:crm"].reason == "crm"
    assert not decisions["hubapi.com:events"].chosen and "fewer than 3 tools" in decisions["hubapi.com:events"].reason
    assert not decisions["sportsdata.io:nba-v3-stats"].chosen
    assert decisions["azure.com:compute"].kind == "infrastructure" and not decisions["azure.com:compute"].chosen
    assert decisions["googleapis.com:gmail"].chosen and not decisions["googleapis.com:compute"].chosen
    assert not decisions["epa.gov:air"].chosen and "open data" in decisions["epa.gov:air"].reason
    # four business products: at most a 5% share of reference data rounds down to none
    assert not decisions["weatherbit.io"].chosen and "share" in decisions["weatherbit.io"].reason


def test_the_selection_files_list_the_chosen_and_say_why_for_every_service(tmp_path: Path) -> None:
    heads = [(f"slack.com{'' if i == 0 else f':x{i}'}", 10, ["messaging"]) for i in range(1)]
    heads += [("stripe.com", 40, None), ("trello.com", 30, None), ("vatapi.com", 11, ["financial"]),
              ("gov.bc.ca:geo", 12, ["open_data"])] + [(f"asana.com:api{i}", 5, None) for i in range(20)]
    path = _specs(tmp_path, heads)
    main([str(path), str(tmp_path)])
    chosen = [line for line in (tmp_path / "selection.txt").read_text().splitlines() if not line.startswith("#")]
    report = (tmp_path / "selection_report.tsv").read_text().splitlines()
    assert len(report) == len(heads) + 1  # every service has a line
    assert "vatapi.com" in chosen and "gov.bc.ca:geo" not in chosen
    reference = [line for line in report[1:] if line.split("\t")[1] == "in" and line.split("\t")[2] == "reference"]
    assert len(reference) / len(chosen) <= REFERENCE_SHARE


def test_the_shipped_selection_is_mostly_business_products() -> None:
    data = Path(__file__).resolve().parents[2] / "generator" / "data"
    rows = [line.split("\t") for line in (data / "selection_report.tsv").read_text().splitlines()[1:]]
    chosen = [r for r in rows if r[1] == "in"]
    assert sum(1 for r in chosen if r[2] == "business") / len(chosen) >= 0.8
    names = {line for line in (data / "selection.txt").read_text().splitlines() if not line.startswith("#")}
    assert names == {r[0] for r in chosen}
    assert {"box.com", "hubapi.com:crm", "stripe.com", "slack.com"} <= names
