"""Serving over streamable HTTP: who may connect, the socket, and the app that answers them.

The server listens on loopback unless the person serving says otherwise. A non-loopback ``--host``
(``0.0.0.0``, a LAN address) needs two things: ``--allow-remote NAME`` naming the host names clients
will use, and a token to require (``--auth-token-env NAME`` or ``--auth-issuer URL``,
``mcp_services.serving.auth``) or an explicit ``--no-auth``, after which the CLIs say what is
exposed. DNS-rebinding protection stays on either way (the SDK turns it off for any host but three
loopback spellings): a request must carry a ``Host`` (and, from a browser, an ``Origin``) naming
loopback or one of those names. Limits per client apply on top (``mcp_services.serving.limits``).

The socket is bound before anything says "serving on": a busy port is one clear error, and
``--port 0`` reports the port it got.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware

from mcp_services.serving.auth import AuthConfig, AuthConfigError, QueryTokenRefusal, refuse_url_credentials
from mcp_services.serving.jsonrpc import JsonRpcBodyCheck
from mcp_services.serving.limits import ClientLimits, Limits

if TYPE_CHECKING:
    from mcp_services.serving.server import EpisodeServer

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HttpServing",
    "ListenError",
    "RemoteHostError",
    "allowed_names",
    "bound_url",
    "http_app",
    "is_loopback",
    "listen",
    "remote_warning",
    "transport_security",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]  # as the SDK allows them on loopback
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
_WILDCARDS = ("0.0.0.0", "::", "")


class RemoteHostError(ValueError):
    """A host to listen on that would expose the server without the flags that allow it; or a bad name."""


class ListenError(OSError):
    """The address cannot be listened on (a busy port, a privileged one, an address not of this machine)."""


def is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # any other name may resolve anywhere


def allowed_names(host: str, allow_remote: Iterable[str] = ()) -> tuple[str, ...]:
    """The host names clients may use beyond loopback (``--allow-remote``, comma-separated or
    repeated, plus ``host`` itself when it is a specific non-loopback address)."""
    names: list[str] = []
    for entry in allow_remote:
        for name in (part.strip() for part in entry.split(",")):
            if not name:
                continue
            if any(c in name for c in "/*@ \t") or name.startswith("["):
                raise RemoteHostError(
                    f"--allow-remote takes host names or addresses (e.g. box.lan or 192.168.1.20), not {name[:80]!r}"
                )
            names.append(name.lower())
    if not is_loopback(host):
        if not names:
            where = "every interface" if host in _WILDCARDS else host
            raise RemoteHostError(
                f"--host {host or repr(host)} would serve on {where}, reachable from other machines: name the host "
                "clients will use with --allow-remote NAME (e.g. --allow-remote $(hostname)) and require a token "
                "(--auth-token-env NAME), or pass --no-auth to serve with no authentication; or serve on 127.0.0.1"
            )
        if host not in _WILDCARDS and host.lower() not in names:
            names.append(host.strip("[]").lower())
    return tuple(dict.fromkeys(names))


def transport_security(names: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection that admits loopback and ``names`` (any port, http or https)."""
    hosts, origins = list(_LOOPBACK_HOSTS), list(_LOOPBACK_ORIGINS)
    for name in names:
        literal = f"[{name}]" if ":" in name else name  # an IPv6 address
        hosts += [literal, f"{literal}:*"]
        origins += [f"{scheme}://{literal}{port}" for scheme in ("http", "https") for port in ("", ":*")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def remote_warning(host: str, port: int, names: Sequence[str], exposed: str) -> str:
    """What ``--no-auth`` beyond loopback exposes, said once at start-up."""
    return (
        f"warning: --no-auth: serving on {host}:{port}, beyond loopback and without authentication: anyone who can "
        f"reach it can call {exposed}, reading and changing that state. Requests must name one of these hosts: "
        f"{', '.join(names)} (or loopback)."
    )


@dataclass(frozen=True)
class HttpServing:
    """Where and for whom a server listens over HTTP. ``public_url`` is the URL clients use (e.g.
    behind a TLS-terminating proxy); tokens from an issuer must be issued for it."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT  # 0: any free port
    allow_remote: tuple[str, ...] = ()
    auth: AuthConfig | None = None
    no_auth: bool = False
    public_url: str | None = None
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise RemoteHostError(f"--port must be in 0..65535, not {self.port}")
        self.names()
        if self.auth is not None and self.no_auth:
            raise RemoteHostError("--no-auth contradicts --auth-token-env/--auth-issuer: give one or the other")
        if self.auth is None and not self.no_auth and not is_loopback(self.host):
            raise RemoteHostError(
                f"--host {self.host} serves other machines: require a token with --auth-token-env NAME (or "
                "--auth-issuer URL), or pass --no-auth to serve them with no authentication"
            )
        if self.public_url is not None:
            refuse_url_credentials(self.public_url, "--public-url")
            if urlsplit(self.public_url).scheme not in ("http", "https") or not urlsplit(self.public_url).hostname:
                raise AuthConfigError(f"--public-url must be an http(s) URL such as https://box.lan/mcp, not "
                                      f"{self.public_url!r}")

    def names(self) -> tuple[str, ...]:
        """The host names remote clients may use (raises ``RemoteHostError`` on a bad combination)."""
        return allowed_names(self.host, self.allow_remote)

    @property
    def exposed(self) -> bool:
        """Listening beyond loopback with no authentication (the CLIs warn once)."""
        return self.auth is None and not is_loopback(self.host)

    def resource_url(self, port: int) -> str:
        """This server's URL as clients name it: the audience of its tokens, its metadata's resource."""
        if self.public_url is not None:
            return self.public_url
        names = self.names()
        host = self.host if is_loopback(self.host) or not names else names[0]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: a free one), before anything is served on it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY only on connections whose socket says TCP,
    # and an accepted connection inherits this socket's proto. Without it every response, written as
    # headers then body, waits on the client's delayed ACK (Nagle): ~40 ms per call on a kept-alive connection.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart reuses its port at once
        sock.bind((host, port))
        sock.listen(1024)  # an early client waits in the backlog; it is not refused
    except OSError as exc:
        sock.close()
        raise ListenError(exc.errno, _listen_problem(host, port, exc)) from None
    return sock


def _listen_problem(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        why = "address already in use; pick another --port, or --port 0 for a free one"
    elif exc.errno == errno.EACCES:
        why = "permission denied: ports below 1024 need privileges; pick another --port, or --port 0 for a free one"
    elif exc.errno == errno.EADDRNOTAVAIL:
        why = f"{host} is not an address of this machine; use one of its addresses, or 0.0.0.0 for all of them"
    else:
        why = (exc.strerror or type(exc).__name__).lower()
    return f"cannot listen on {host}:{port} ({why})"


def bound_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"


def http_app(server: EpisodeServer, serving: HttpServing, port: int) -> Starlette:
    """The server's streamable-HTTP app at ``/mcp``: the SDK's app and bearer authentication, with our
    host rules, limits per client and JSON-RPC error answers inside the authentication (an
    unauthenticated request gets 401 before anything else is said to it)."""
    security = transport_security(serving.names())
    settings, verifier = serving.auth.build(serving.resource_url(port)) if serving.auth else (None, None)
    app = server.streamable_http_app_with(security, settings, verifier)
    authenticated = verifier is not None
    if authenticated:
        app.user_middleware.append(Middleware(QueryTokenRefusal))
    # mcp==2.3.0 is pinned: its session manager keeps the live sessions in `_server_instances`.
    sessions = server.session_manager._server_instances
    app.user_middleware.append(Middleware(ClientLimits, limits=serving.limits, session_ids=sessions,
                                          authenticated=authenticated))
    app.user_middleware.append(Middleware(JsonRpcBodyCheck, security=security, authenticated=authenticated))
    server.max_result_bytes = serving.limits.max_result_bytes
    return app
