"""bench/bench_kernel.py's call-path comparison runs where tau2-bench is not installed, and says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_call_path_figures_print_and_the_missing_peer_is_named() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_kernel.py"), "--only-call-path", "--quick", "--tau2-python", ""],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any("tau2-bench: skipped" in line for line in lines)
    for tool in ("crm__get_contact", "crm__update_contact", "crm__search_contacts"):
        (line,) = [line for line in lines if tool in line]
        assert float(line.split("median")[1].split("us")[0]) > 0


def test_a_peer_interpreter_that_fails_is_reported_not_raised(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_kernel.py"), "--only-call-path", "--quick",
         "--tau2-python", sys.executable],  # CompoWorld's own Python has no tau2: the peer script fails
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert "could not run it" in proc.stdout
