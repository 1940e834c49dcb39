from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
START_S = 60.0  # bound on a server's start-up (imports take seconds on a busy 2-core machine)


class Served:
    """`mcp-services serve ... --transport http --port 0` on 127.0.0.1: its URL, as it printed it once bound."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_services", "serve", *args, "--transport", "http", "--port", "0"],
            cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + START_S
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                self.stop()
                raise TimeoutError(f"the server printed no URL within {START_S:g} s: {''.join(self.stderr)}") from None
            found = re.search(r"serving on (http://\S+/mcp)", line)
            if found:
                self.url = found.group(1)
                return

    def _read(self) -> None:
        for line in self.proc.stderr or ():
            self.stderr.append(line)
            self.lines.put(line)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def http_server() -> Iterator[Callable[..., str]]:
    """Start `mcp-services serve ... --transport http --port 0`; its URL; always stopped after the test."""
    served: list[Served] = []

    def start(*args: str, env: dict[str, str] | None = None) -> str:
        served.append(Served(*args, env=env))
        return served[-1].url

    yield start
    for server in served:
        server.stop()
