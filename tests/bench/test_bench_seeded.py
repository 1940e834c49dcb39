"""bench/bench_seeded.py: a service name the catalog lacks is a one-line error, before any service is seeded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_an_unknown_service_is_a_one_line_error() -> None:
    done = subprocess.run([sys.executable, str(REPO / "bench" / "bench_seeded.py"), "no_such_service"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "no generated service named no_such_service" in done.stderr and "Traceback" not in done.stderr
