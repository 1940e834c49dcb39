"""A progress bar on stderr: redrawn in place on a terminal, a line every few seconds otherwise.

A run whose estimate passes an hour says so once, in a line of its own, as soon as the first item
gives a rate: a long run should never look like a hung one.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    def __init__(self, total: int, *, done: int = 0, label: str = "rollouts", stream: TextIO | None = None,
                 enabled: bool = True, warn: Callable[[str], None] | None = None, long_s: float = 3600.0) -> None:
        self.total = total
        self.done = done
        self.passed = 0
        self.new = 0
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self._tty = self.stream.isatty()
        self._started = time.monotonic()
        self._last = 0.0
        self._warn = warn
        self._long_s = long_s

    def update(self, passed: bool) -> None:
        self.done += 1
        self.new += 1
        self.passed += passed
        now = time.monotonic()
        if self._warn is not None:
            self._warn_if_long(now)
        if now - self._last >= (0.1 if self._tty else 5.0) or self.done == self.total:
            self._last = now
            self._draw(now)

    def _warn_if_long(self, now: float) -> None:
        left = self.total - self.done
        per_item = (now - self._started) / self.new
        if left and per_item * left >= self._long_s and self._warn is not None:
            self._warn(
                f"at {per_item:.0f} s per {self.label.rstrip('s')} so far, the {left} {self.label} left take about "
                f"{per_item * left / 3600:.1f} hours (fewer tasks or rollouts, or a faster model, take less)"
            )
        self._warn = None  # the first rate decides: said once, or not at all

    def _draw(self, now: float) -> None:
        if not self.enabled:
            return
        elapsed = max(now - self._started, 1e-9)
        rate = self.new / elapsed
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        pass_rate = 100.0 * self.passed / self.new if self.new else 0.0
        text = (
            f"[{bar}] {self.done}/{self.total} {self.label}  passed {pass_rate:5.1f}%  "
            f"{rate:6.1f}/s  eta {left:5.0f}s"
        )
        self.stream.write(("\r" + text) if self._tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._tty and self.new:
            self.stream.write("\n")
            self.stream.flush()
