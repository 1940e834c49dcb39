"""Layers import only downward: the kernel and the task contract never reach up into the packages
built on them, and the harness never into training."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UPPER = {"composer", "harness", "training", "generator"}


def imported_packages(package: str) -> dict[str, set[str]]:
    """Per module file of ``package``: the top-level packages it imports (lazily or not)."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(REPO))] = names
    return found


@pytest.mark.parametrize(("package", "forbidden"), [
    ("mcp_services", UPPER),
    ("harness", {"training", "generator"}),
])
def test_a_package_imports_nothing_from_the_layers_above_it(package: str, forbidden: set[str]) -> None:
    upward = {module: sorted(names & forbidden) for module, names in imported_packages(package).items()}
    assert {module: names for module, names in upward.items() if names} == {}

