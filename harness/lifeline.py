"""Processes the harness starts (task servers, worker processes) end when the harness does.

A harness killed with -9 cannot stop what it started, so each child stops itself: on Linux the
kernel kills it the moment its parent dies (``prctl(PR_SET_PDEATHSIG)``), and on every POSIX
system a watchdog thread checks the parent's pid twice a second and exits once it is gone. An
orphan has nobody to answer or to record for; its SQLite state is crash-safe, so exiting at once
loses nothing (a resumed run collects that rollout again).

The parent passes its pid (``--parent-pid``) rather than the child reading ``os.getppid()`` on
start-up: a parent that dies while the child is still importing would otherwise go unnoticed. A
child's entry module calls ``die_with_parent_named_in(sys.argv)`` before its heavy imports (seconds
of CPU, tens of seconds on a loaded machine): a parent killed during them ends the child at once,
not once they are done.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["PARENT_PID_FLAG", "die_with_parent", "die_with_parent_named_in"]

PARENT_PID_FLAG = "--parent-pid"
_PR_SET_PDEATHSIG = 1  # from <sys/prctl.h>
_watched: set[int] = set()  # parents this process already watches (one watchdog each)


def die_with_parent_named_in(argv: list[str]) -> None:
    """``die_with_parent`` for the pid that follows ``--parent-pid`` in ``argv``, if one does (the
    argument parser checks it later)."""
    for flag, value in zip(argv, argv[1:]):
        if flag == PARENT_PID_FLAG and value.isdigit():
            die_with_parent(int(value))
            return


def die_with_parent(parent: int, *, interval: float = 0.5) -> None:
    """End this process (exit code 1) when process ``parent`` ends; returns at once."""
    if parent in _watched:
        return
    _watched.add(parent)
    _set_parent_death_signal()
    # The death signal is not retroactive: a parent already gone must be noticed now.
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, interval), name="parent-watchdog", daemon=True).start()


def _set_parent_death_signal() -> None:
    # Linux only. The "parent" is the thread that started us: the harness starts its children from
    # its event loop's thread, which lives as long as they are used.
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl here: the watchdog alone does the job


def _watch(parent: int, interval: float) -> None:
    while os.getppid() == parent:
        time.sleep(interval)
    os._exit(1)  # no clean-up: nobody is left to clean up for, and a stuck one must not hang here
