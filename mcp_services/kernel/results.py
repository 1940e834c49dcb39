"""The result envelope every tool call returns, in process and on the wire."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp_services.kernel.bounds import bound_message
from mcp_services.kernel.errors import ErrorCode

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "enum": [code.value for code in ErrorCode]},
        "message": {"type": "string"},
    },
    "required": ["code", "message"],
}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """``{"success": true, "data": ...}`` or ``{"success": false, "error": {...}}``."""

    success: bool
    data: Any = None
    error_code: ErrorCode | None = None
    error_message: str | None = None

    @classmethod
    def ok(cls, data: Any) -> ToolResult:
        return cls(True, data=data)

    @classmethod
    def fail(cls, code: ErrorCode | str, message: str) -> ToolResult:
        return cls(False, error_code=ErrorCode(code), error_message=bound_message(message))

    def envelope(self) -> dict[str, Any]:
        if self.success:
            return {"success": True, "data": self.data}
        return {"success": False, "error": {"code": str(self.error_code), "message": self.error_message}}

    def to_json(self) -> str:
        return json.dumps(self.envelope(), ensure_ascii=False, sort_keys=True)


def envelope_schema(data_schema: dict[str, Any]) -> dict[str, Any]:
    """The output schema of a tool whose ``data`` has ``data_schema``; ``$defs`` move to the top."""
    data_schema = dict(data_schema)
    defs = data_schema.pop("$defs", None)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "data": data_schema,
            "error": ERROR_SCHEMA,
        },
        "required": ["success"],
    }
    if defs:
        schema["$defs"] = defs
    return schema
