"""Reading source files: plain or gzip-compressed text."""

from __future__ import annotations

import gzip
from pathlib import Path

from generator.importers.raw import SourceError


def read_text(path: Path) -> str:
    """The file's text (gunzipped when it is gzip), or a ``SourceError`` that says why not."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise SourceError(f"{path} looks gzip-compressed but cannot be decompressed ({exc})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SourceError(f"{path} is not UTF-8 text") from None


def iter_lines(path: Path):  # type: ignore[no-untyped-def]
    """The file's lines, streamed (the specs file is 110 MB unpacked)."""
    opener = gzip.open if _is_gzip(path) else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
            yield from handle
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}") from None


def _is_gzip(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"\x1f\x8b"
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None
