"""``trajectories.jsonl``: durable appends, and reading it back after a crash.

Writes: each batch of whole lines goes out in one ``write`` on an ``O_APPEND`` descriptor and is
``fsync``-ed before the rollouts count as done, so a ``kill -9`` at any moment leaves complete
lines plus at most one torn final line. Reads: a final line without its newline is torn: it is
reported and cut off (that rollout runs again). A bad line anywhere else is corrupt: it is
reported, never skipped in silence.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.trajectory import Trajectory, TrajectoryFormatError

__all__ = ["CorruptLine", "GroupCommit", "RunScan", "TrajectoryWriter", "drop_lines", "scan_run", "truncate"]


@dataclass(frozen=True, slots=True)
class CorruptLine:
    number: int  # 1-based line number
    reason: str

    def describe(self, path: Path) -> str:
        return f"{path}:{self.number}: {self.reason}"


@dataclass(slots=True)
class RunScan:
    """What a trajectory file holds."""

    path: Path
    trajectories: list[Trajectory] = field(default_factory=list)
    line_numbers: list[int] = field(default_factory=list)  # of each trajectory
    corrupt: list[CorruptLine] = field(default_factory=list)
    duplicates: list[CorruptLine] = field(default_factory=list)
    torn_offset: int | None = None  # byte offset where a torn final line starts
    torn_bytes: int = 0

    @property
    def keys(self) -> set[tuple[str, int]]:
        return {t.key for t in self.trajectories}

    @property
    def problems(self) -> list[CorruptLine]:
        return sorted(self.corrupt + self.duplicates, key=lambda c: c.number)


def scan_run(path: Path) -> RunScan:
    """Read every line of ``path`` (missing file: empty run)."""
    scan = RunScan(path)
    if not path.exists():
        return scan
    data = path.read_bytes()
    seen: dict[tuple[str, int], int] = {}
    offset = 0
    number = 0
    while offset < len(data):
        number += 1
        end = data.find(b"\n", offset)
        if end < 0:  # no newline: the write of this line never finished
            scan.torn_offset, scan.torn_bytes = offset, len(data) - offset
            break
        line = data[offset:end]
        offset = end + 1
        if not line.strip():
            scan.corrupt.append(CorruptLine(number, "blank line"))
            continue
        try:
            trajectory = Trajectory.from_line(line)
        except TrajectoryFormatError as exc:
            scan.corrupt.append(CorruptLine(number, f"corrupt line: {exc}"))
            continue
        first = seen.get(trajectory.key)
        if first is not None:
            scan.duplicates.append(
                CorruptLine(
                    number, f"duplicate of line {first} (task {trajectory.task_id}, rollout {trajectory.rollout})"
                )
            )
            continue
        seen[trajectory.key] = number
        scan.trajectories.append(trajectory)
        scan.line_numbers.append(number)
    return scan


def truncate(path: Path, offset: int) -> None:
    """Cut the file at ``offset`` (drops a torn final line), durably."""
    with path.open("r+b") as handle:
        handle.truncate(offset)
        handle.flush()
        os.fsync(handle.fileno())


def drop_lines(path: Path, numbers: Iterable[int], quarantine: Path) -> None:
    """Move the given lines to ``quarantine`` and rewrite ``path`` without them (atomically)."""
    drop = set(numbers)
    lines = path.read_bytes().split(b"\n")
    keep = [line for i, line in enumerate(lines, 1) if i not in drop]
    moved = [line for i, line in enumerate(lines, 1) if i in drop]
    with quarantine.open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in moved))
        handle.flush()
        os.fsync(handle.fileno())
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as handle:
        handle.write(b"\n".join(keep))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class TrajectoryWriter:
    """Appends whole lines durably. One writer per file; not thread-safe (one event loop drives it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, lines: Iterable[str]) -> int:
        payload = "".join(line + "\n" for line in lines).encode("utf-8")
        view = memoryview(payload)
        while view:  # a regular file takes it in one go; a short write just continues
            written = os.write(self._fd, view)
            view = view[written:]
        os.fsync(self._fd)
        return len(payload)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GroupCommit:
    """Writes trajectories in batches, each fsync-ed in a worker thread while episodes go on.

    A trajectory counts as done (``on_durable``) only once its line is on disk; whatever is still
    pending when the process dies is simply collected again on the restart.
    """

    def __init__(self, writer: TrajectoryWriter, on_durable: Callable[[list[Trajectory]], None]) -> None:
        self._writer = writer
        self._on_durable = on_durable
        self._pending: list[Trajectory] = []
        self._flusher: asyncio.Task[None] | None = None

    def add(self, trajectory: Trajectory) -> None:
        if self._flusher is not None and self._flusher.done():
            self._flusher.result()  # a failed write (e.g. a full disk) stops the run here
        self._pending.append(trajectory)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            await asyncio.to_thread(self._writer.append, [t.to_line() for t in batch])
            self._on_durable(batch)

    async def close(self) -> None:
        if self._flusher is not None:
            await self._flusher
        if self._pending:
            await self._flush()
