"""The composer's one error type for bad input: the CLI prints its message on one line and exits 2."""

from __future__ import annotations

from mcp_services.command_line import InputError


class ComposerError(InputError):
    """Bad input (unknown or broken services, impossible constraints, a bad task file): a clear message."""
