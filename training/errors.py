"""The one exception type for bad training input, so the CLI can print it as a one-line error."""

from __future__ import annotations

from mcp_services.command_line import InputError

__all__ = ["TrainingInputError"]


class TrainingInputError(InputError):
    """Bad input to a training command (data, model, config): a message for a person, no traceback."""
