"""Serving over streamable HTTP: who may connect, and the app that answers them.

The server listens on loopback unless the person serving says otherwise: a non-loopback ``--host``
(``0.0.0.0``, a LAN address) is refused unless ``--allow-remote NAME`` names the host names
clients will use. DNS-rebinding protection stays on either way (the SDK turns it off for any host
but three loopback spellings): a request must carry a ``Host`` (and, from a browser, an
``Origin``) naming loopback or one of those names. There is no authentication, so the CLIs print
a warning when they listen beyond loopback.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from mcp_services.serving.jsonrpc import JsonRpcBodyCheck

__all__ = ["RemoteHostError", "allowed_names", "http_app", "is_loopback", "remote_warning", "transport_security"]

_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]  # as the SDK allows them on loopback
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
_WILDCARDS = ("0.0.0.0", "::", "")


class RemoteHostError(ValueError):
    """A host to listen on that would expose the server, without ``--allow-remote``; or a bad name."""


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
                f"--host {host or repr(host)} would serve on {where}, reachable from other machines, with no "
                "authentication. To allow that, add --allow-remote NAME with the host name (or address) "
                "clients will use, e.g. --allow-remote $(hostname); or serve on 127.0.0.1"
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


def remote_warning(host: str, port: int, names: Sequence[str]) -> str:
    return (
        f"warning: serving on {host}:{port}, beyond loopback and without authentication: anyone who can reach "
        f"it can read and change this state. Requests must name one of these hosts: {', '.join(names)} "
        "(or loopback)."
    )


def http_app(server: MCPServer, names: Sequence[str] = ()) -> ASGIApp:
    """The server's streamable-HTTP app at ``/mcp``, with our host rules and JSON-RPC error answers."""
    security = transport_security(names)
    return JsonRpcBodyCheck(server.streamable_http_app(transport_security=security), security)
