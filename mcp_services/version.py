"""CompoWorld's installed version: what ``--version`` prints and what a server reports as ``serverInfo.version``."""

from __future__ import annotations

from functools import cache
from importlib import metadata

DISTRIBUTION = "compoworld"


@cache
def package_version() -> str:
    """The installed version of the ``compoworld`` distribution."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


__all__ = ["DISTRIBUTION", "package_version"]
