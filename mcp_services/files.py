"""Writing a file whole or not at all, with the permissions a plain ``open(path, "w")`` would give it.

``tempfile.mkstemp`` makes its file 0600 whatever the umask, and renaming it into place keeps that:
a task file or a report written that way could not be read by the rest of a team. Here the
temporary file is created with ``os.open(..., 0o666)``, so the umask applies as it does for ``open``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_writer", "write_atomically"]


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int = 0o666) -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace ``path`` when the block ends without an error.

    A crash or an exception leaves the old file (or none), never half a file. ``mode`` is filtered
    by the umask, as for ``open``; pass an existing file's mode to keep it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomically(path: str | os.PathLike[str], data: str | bytes, *, mode: int = 0o666) -> int:
    """Write ``data`` (text as UTF-8) to ``path`` with ``atomic_writer``; the bytes written."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_writer(path, mode=mode) as handle:
        handle.write(payload)
    return len(payload)
