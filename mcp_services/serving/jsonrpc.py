"""JSON-RPC's answers to messages that cannot be read, on both transports.

The SDK (mcp 2.3.0) drops a stdio line it cannot read, so the client waits for its own timeout,
and its streamable-HTTP transport (protocol 2025-11-25 and before) answers a JSON value that is
not a JSON-RPC message with -32602. The spec says: -32700 (parse error) for text that is not JSON
(ours: also JSON nested deeper than the SDK's parser accepts), -32600 (invalid request) for JSON
that is not a request object, with the request's id where one can be read (``"id": null`` otherwise).

- stdio: ``AnsweringReadStream`` wraps the SDK transport's read stream, where an unreadable line
  arrives as the parser's exception, and writes the answer to the transport's write stream.
- HTTP: ``JsonRpcBodyCheck`` is ASGI middleware that reads a POSTed body the SDK would accept
  (same Host/Origin/content-type checks, same size limit), answers it if it cannot be read with
  the same parser, and hands it on untouched otherwise.

Neither echoes the message: the answers are short, whatever was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import anyio
import pydantic_core
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AnsweringReadStream", "JsonRpcBodyCheck", "invalid_request", "parse_error", "rejection"]

_INVALID = 'not a JSON-RPC 2.0 message: a request needs "jsonrpc": "2.0", a string "method" and an "id"'


def _answer(request_id: int | str | None, error: ErrorData) -> JSONRPCError:
    # No id to answer to: JSON-RPC 2.0 writes "id": null (as the SDK does; MCP's schema leaves it out).
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def parse_error(detail: str) -> JSONRPCError:
    return _answer(None, ErrorData(code=PARSE_ERROR, message=f"Parse error: {detail[:200]}"))


def invalid_request(request_id: int | str | None) -> JSONRPCError:
    return _answer(request_id, ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {_INVALID}"))


def request_id_of(value: Any) -> int | str | None:
    """The id of a would-be request, if it has a usable one (so the client's pending call resolves)."""
    if not isinstance(value, dict):
        return None
    found = value.get("id")
    if isinstance(found, str) and len(found) <= 200 or isinstance(found, int) and not isinstance(found, bool):
        return found
    return None


def rejection(error: ValidationError) -> JSONRPCError:
    """The answer to a message the SDK's parser (``jsonrpc_message_adapter``) refused."""
    details = error.errors(include_url=False)
    if any(detail["type"] == "json_invalid" for detail in details):
        return parse_error(str(details[0]["msg"]).removeprefix("Invalid JSON: "))
    # A field missing from the message itself (e.g. "result" for the response member of the union)
    # carries the whole message as its input: that is where the id is.
    for detail in details:
        if detail["type"] == "missing" and len(detail["loc"]) <= 2:
            return invalid_request(request_id_of(detail.get("input")))
    return invalid_request(None)


class AnsweringReadStream:
    """The stdio transport's read stream, minus unreadable lines: each is answered instead."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:  # the SDK's dispatcher restores the sender's context from it
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            answer = rejection(item) if isinstance(item, ValidationError) else parse_error("unreadable message")
            await self._write.send(SessionMessage(answer))

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class JsonRpcBodyCheck:
    """ASGI middleware in front of a streamable-HTTP MCP app (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        security: TransportSecuritySettings,
        paths: Sequence[str] = ("/mcp",),
        max_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
        authenticated: bool = False,
    ) -> None:
        self.app = app
        self.authenticated = authenticated  # only authenticated requests are read: the rest get the SDK's 401
        self.security = TransportSecurityMiddleware(security)
        self.paths = {path.rstrip("/") for path in paths}
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") not in self.paths
                or self.authenticated and not isinstance(scope.get("user"), AuthenticatedUser)):
            await self.app(scope, receive, send)
            return
        # What the SDK refuses for its own reasons (Host, Origin, content type, size) it answers itself.
        if await self.security.validate_request(Request(scope), is_post=True) is not None:
            await self.app(scope, receive, send)
            return
        read: list[Message] = []
        size, complete = 0, False
        while not complete and size <= self.max_body_size:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            complete = not message.get("more_body", False)
        if complete and size <= self.max_body_size:
            answer = _check(b"".join(m.get("body", b"") for m in read))
            if answer is not None:
                body = answer.model_dump_json(by_alias=True, exclude_unset=True).encode()
                await Response(body, status_code=400, media_type="application/json")(scope, receive, send)
                return

        async def replay() -> Message:
            return read.pop(0) if read else await receive()

        await self.app(scope, replay, send)


def _check(body: bytes) -> JSONRPCError | None:
    """The answer to ``body`` if the SDK cannot use it as a message, else None."""
    try:
        value = pydantic_core.from_json(body)  # the parser (and depth limit) the SDK's HTTP transport uses
    except ValueError as exc:
        return parse_error(str(exc))
    try:
        jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return invalid_request(request_id_of(value))
    return None
