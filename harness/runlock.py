"""One writer per run folder: ``harness collect`` holds an OS lock on ``OUT/.collect.lock`` while it runs.

Two collects on one folder (a double click, a scheduler's retry) would both run to the end and
write every rollout twice. The lock is taken before anything else is written to the folder, and a
second collect is refused at once, naming the pid that holds it. It is ``flock`` on an open file:
the kernel releases it when the holder ends, however it ends (kill -9 included), so a killed run
resumes at once. The file stays (removing it would let two processes lock two different files).
Children do not inherit it: Python opens files close-on-exec, and the harness starts its task
servers and workers with exec.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import RunFileError

__all__ = ["LOCK_FILE", "RunFolderBusyError", "hold_run_folder"]

LOCK_FILE = ".collect.lock"


class RunFolderBusyError(RunFileError):
    """Another live process is writing this run folder."""


@contextmanager
def hold_run_folder(out: Path) -> Iterator[None]:
    """Hold ``out`` for this process (creating it) for the ``with`` block; refuse if another holds it.
    A folder this call created, and that holds nothing but the lock when the block ends, is removed."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no flock; one writer is then up to the user
        yield
        return
    if out.exists() and not out.is_dir():
        raise RunFileError(f"--out {out} exists and is not a folder")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        who = f"pid {holder}" if holder.isdigit() else "a process that has not written its pid yet"
        raise RunFolderBusyError(
            f"{out} is being written by another harness collect ({who}); wait for it to finish or stop it, then run "
            "this command again: a stopped run resumes where it stopped"
        ) from None
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        if created and [p.name for p in out.iterdir()] == [LOCK_FILE]:
            try:
                path.unlink()  # a run that wrote nothing leaves no folder behind
                out.rmdir()
            except OSError:
                pass  # another collect has just started in it: it is theirs now
        os.close(fd)
