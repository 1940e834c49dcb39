"""Tool errors: what went wrong, said so that a model (or a person) can fix the call."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """The stable error codes of the result envelope."""

    INVALID_ARGUMENT = "invalid_argument"  # wrong type, missing, extra or out-of-range argument
    NOT_FOUND = "not_found"  # an id or name that does not exist
    INVALID_STATE = "invalid_state"  # a transition the entity's state does not allow
    CONFLICT = "conflict"  # would duplicate something that must be unique
    PERMISSION_DENIED = "permission_denied"  # a rule of the service forbids it
    NOT_IMPLEMENTED = "not_implemented"  # a tool this environment lists but cannot carry out (nothing changed)
    STORE_BUSY = "store_busy"  # another process holds the store's write lock; retry the call
    UNKNOWN_SERVICE = "unknown_service"
    UNKNOWN_TOOL = "unknown_tool"
    INTERNAL_ERROR = "internal_error"  # a bug in the service; state is unchanged


class ToolError(Exception):
    """Raised inside a tool to fail the call: the transaction is rolled back, nothing changes.

    ``message`` says what was wrong and how to fix it, e.g.
    ``ToolError.not_found("charge", "ch_0999", hint="Use list_charges to find a charge id.")``.
    """

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message

    @classmethod
    def not_found(cls, entity: str, key: object, hint: str = "") -> ToolError:
        shown = repr(key) if isinstance(key, (str, int)) and len(str(key)) <= 80 else f"{str(key)[:60]!r}... (cut)"
        text = f"No {entity} with id {shown} exists."
        return cls(ErrorCode.NOT_FOUND, f"{text} {hint}".strip())

    @classmethod
    def invalid_state(cls, message: str) -> ToolError:
        return cls(ErrorCode.INVALID_STATE, message)

    @classmethod
    def invalid_argument(cls, message: str) -> ToolError:
        return cls(ErrorCode.INVALID_ARGUMENT, message)

    @classmethod
    def conflict(cls, message: str) -> ToolError:
        return cls(ErrorCode.CONFLICT, message)

    @classmethod
    def not_implemented(cls, message: str) -> ToolError:
        return cls(ErrorCode.NOT_IMPLEMENTED, message)

    @classmethod
    def permission_denied(cls, message: str) -> ToolError:
        return cls(ErrorCode.PERMISSION_DENIED, message)
