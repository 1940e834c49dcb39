"""Limits per client on streamable HTTP, each answered with a clear error, never with a dead server.

- open sessions per client (``--max-sessions-per-client``): a request that would open one more gets
  429 and a JSON-RPC error; the client's other sessions go on. (Sessions exist for clients that
  speak the initialize handshake, 2025-11-25 and before; 2026-07-28 requests are sessionless.)
- requests per second per client (``--calls-per-second``, a token bucket holding one second's
  worth): a request beyond it gets 429 with ``Retry-After`` and a JSON-RPC error; the next one,
  once the bucket has refilled, is served as usual.
- the size of one tool result (``--max-result-bytes``): a bigger result is answered with a JSON-RPC
  error that says so (``EpisodeServer`` applies it); the session goes on.

A client is who it authenticated as (the token's client and subject) and where it connects from
(behind a reverse proxy on this machine, uvicorn takes the address from ``X-Forwarded-For``).
The SDK's own limit on sessions for all clients together (10,000) and its idle timeout (30
minutes) stay as they are. The 429 bodies are JSON-RPC errors, so the SDK's client raises them as
``MCPError`` with this message for the request that was refused.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LIMIT_EXCEEDED", "NO_LIMITS", "ClientLimits", "Limits", "limit_error"]

#: JSON-RPC code of a limit's error (in the range JSON-RPC leaves to implementations; 29 as in 429).
LIMIT_EXCEEDED = -32029
_MAX_TRACKED_CLIENTS = 10_000  # buckets kept; the least recently seen go first
_SESSION_HEADER = "mcp-session-id"


@dataclass(frozen=True)
class Limits:
    """Per-client limits; None: no limit. The defaults let a cluster's workers share one token."""

    sessions_per_client: int | None = 256
    calls_per_second: float | None = 500.0
    max_result_bytes: int | None = 1_000_000

    def __post_init__(self) -> None:
        for name, flag in (("sessions_per_client", "--max-sessions-per-client"),
                           ("calls_per_second", "--calls-per-second"),
                           ("max_result_bytes", "--max-result-bytes")):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{flag} must be a positive number (0 on the command line: no limit), not {value!r}")

    def describe(self) -> str:
        def shown(value: float | None, unit: str) -> str:
            return "no limit" if value is None else f"{value:,g} {unit}"

        return (f"per client: {shown(self.sessions_per_client, 'open sessions')}, "
                f"{shown(self.calls_per_second, 'requests/s')}; {shown(self.max_result_bytes, 'bytes')} per result")


NO_LIMITS = Limits(sessions_per_client=None, calls_per_second=None, max_result_bytes=None)


def limit_error(message: str, limit: str, **data: Any) -> dict[str, Any]:
    """A JSON-RPC error for a refused request (its id is unknown here: null)."""
    return {"jsonrpc": "2.0", "id": None, "error": {"code": LIMIT_EXCEEDED, "message": message,
                                                     "data": {"limit": limit, **data}}}


class _Bucket:
    __slots__ = ("tokens", "stamp")

    def __init__(self, capacity: float, stamp: float) -> None:
        self.tokens = capacity
        self.stamp = stamp


class ClientLimits:
    """ASGI middleware inside the SDK's authentication (``scope["user"]`` is set) and in front of
    its ``/mcp`` route. ``session_ids`` is the live set of the session manager's sessions."""

    def __init__(
        self, app: ASGIApp, limits: Limits, session_ids: Any, authenticated: bool = False, paths: Sequence[str] = ("/mcp",)
    ) -> None:
        self.app = app
        self.limits = limits
        self.authenticated = authenticated  # requests without a valid token are left to the SDK's 401
        self.session_ids = session_ids  # supports `in`: the sessions the SDK still serves
        self.paths = {path.rstrip("/") for path in paths}
        self._buckets: OrderedDict[tuple[Any, ...], _Bucket] = OrderedDict()
        self._sessions: dict[tuple[Any, ...], set[str]] = {}  # each client's sessions (some may have ended)
        self._opening: dict[tuple[Any, ...], int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["path"].rstrip("/") not in self.paths
                or self.authenticated and not isinstance(scope.get("user"), AuthenticatedUser)):
            await self.app(scope, receive, send)
            return
        client = _client(scope)
        rate = self.limits.calls_per_second
        if rate is not None and scope["method"] == "POST":
            wait = self._take(client, rate)
            if wait > 0:
                message = (f"Too many requests: this server takes {rate:,g} per second from one client "
                           f"(--calls-per-second); retry in {wait:.2f} s")
                await _refuse(send, limit_error(message, "calls_per_second", retry_after_s=round(wait, 3)),
                              retry_after=max(1, math.ceil(wait)))
                return
        if self.limits.sessions_per_client is None or not _opens_session(scope):
            await self.app(scope, receive, send)
            return
        owned = self._sessions.setdefault(client, set())
        owned.difference_update([sid for sid in owned if sid not in self.session_ids])  # ended meanwhile
        if len(owned) + self._opening.get(client, 0) >= self.limits.sessions_per_client:
            message = (f"Too many open sessions: this server allows {self.limits.sessions_per_client:,} at once per "
                       "client (--max-sessions-per-client); close one (DELETE with its Mcp-Session-Id) or let an idle "
                       "one expire, then try again")
            await _refuse(send, limit_error(message, "sessions_per_client", open=len(owned)))
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for key, value in message.get("headers", ()):
                    if key.lower() == _SESSION_HEADER.encode():
                        owned.add(value.decode("latin-1"))
            await send(message)

        self._opening[client] = self._opening.get(client, 0) + 1  # counted while its first answer is on the way
        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening[client] -= 1
            if not self._opening[client]:
                del self._opening[client]
            if not owned and client not in self._opening:
                self._sessions.pop(client, None)

    def _take(self, client: tuple[Any, ...], rate: float) -> float:
        """Take one request from ``client``'s bucket: 0, or the seconds until one is there."""
        now = time.monotonic()
        capacity = max(rate, 1.0)
        bucket = self._buckets.pop(client, None) or _Bucket(capacity, now)
        self._buckets[client] = bucket  # most recently seen last
        while len(self._buckets) > _MAX_TRACKED_CLIENTS:
            self._buckets.popitem(last=False)
        bucket.tokens = min(capacity, bucket.tokens + (now - bucket.stamp) * rate)
        bucket.stamp = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / rate


def _client(scope: Scope) -> tuple[Any, ...]:
    user = scope.get("user")
    principal = tuple(authorization_context(user).values()) if isinstance(user, AuthenticatedUser) else ()
    peer = scope.get("client")
    return (*principal, peer[0] if peer else None)


def _opens_session(scope: Scope) -> bool:
    """A POST the SDK would answer by opening a session (no session id; a handshake-era request)."""
    if scope["method"] != "POST":
        return False
    headers = {key.lower(): value for key, value in scope.get("headers", ())}
    if _SESSION_HEADER.encode() in headers:
        return False
    version = headers.get(b"mcp-protocol-version")
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


async def _refuse(send: Send, body: dict[str, Any], *, retry_after: int | None = None) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
