"""README's command lines, read from README.md itself so that tests run what README shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

__all__ = ["REPO", "in_folder", "readme_command"]

REPO = Path(__file__).resolve().parents[2]
_COMMAND = re.compile(r"^\.venv/bin/(harness|training) (.+?)(?:\s+#.*)?$")


def readme_command(program: str, starts: str) -> list[str]:
    """The arguments of the README command line ``.venv/bin/PROGRAM STARTS...`` (a comment after it is dropped)."""
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        for part in line.split("&&"):
            match = _COMMAND.match(part.strip())
            if match and match.group(1) == program and match.group(2).startswith(starts):
                return shlex.split(match.group(2))
    raise AssertionError(f"README.md has no `.venv/bin/{program} {starts}...` command")


def in_folder(argv: list[str], folder: Path) -> list[str]:
    """``argv`` with its ``runs/...`` paths moved under ``folder``."""
    return [str(folder / arg) if arg.startswith("runs/") else arg for arg in argv]
