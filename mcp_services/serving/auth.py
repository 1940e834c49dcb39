"""Who may call a server over streamable HTTP: bearer tokens, checked with the MCP SDK's own pieces.

MCP's authorization spec makes an HTTP server an OAuth 2.1 resource server: it answers a request
without a valid bearer token with 401 and ``WWW-Authenticate``, and checks every token it is given.
The SDK (mcp 2.3.0) ships that: ``AuthSettings``, the ``TokenVerifier`` protocol, and the bearer
middleware that ``streamable_http_app(auth=..., token_verifier=...)`` puts in front of ``/mcp``.
What is ours is the two verifiers:

- ``StaticTokenVerifier``: one shared secret, read from an environment variable (never from the
  command line, where every user of the machine can read it), compared in constant time. There is
  no authorization server to point clients at, so the 401 names none and no protected-resource
  metadata is published: a client is given the token.
- ``JwtVerifier``: tokens signed by an identity provider (``--auth-issuer``), verified by PyJWT
  against the issuer's JWKS (imported on first use; mcp itself depends on ``pyjwt[crypto]``). The
  token's issuer, audience (this server's URL, RFC 8707) and expiry are checked. The 401 then points
  at the protected-resource metadata (RFC 9728), which names the issuer, as the spec says.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "AuthConfig",
    "AuthConfigError",
    "BearerGate",
    "JwtVerifier",
    "QueryTokenRefusal",
    "StaticTokenVerifier",
    "bearer_header",
    "refuse_url_credentials",
    "server_proof",
    "token_from_env",
]

MIN_TOKEN_CHARS = 16
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOKEN_RECIPE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
#: Signature algorithms a JWT may use: asymmetric only (a public key must never verify an HMAC).
_JWT_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
_CLOCK_SKEW_S = 30
_QUERY_TOKEN_NAMES = {"access_token", "token", "auth", "authorization", "bearer", "api_key", "apikey", "key"}


class AuthConfigError(ValueError):
    """Auth options that cannot work (a missing variable, a token where a name belongs...): one line."""


def token_from_env(name: str, flag: str = "--auth-token-env") -> str:
    """The token held in environment variable ``name``."""
    if not _ENV_NAME.match(name):
        raise AuthConfigError(
            f"{flag} takes the NAME of an environment variable that holds the token, not the token itself "
            f"(e.g. export MCP_TOKEN=...; {flag} MCP_TOKEN)"
        )
    token = os.environ.get(name, "").strip()
    if not token:
        raise AuthConfigError(f"{flag} {name}: the environment variable {name} is not set or empty")
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise AuthConfigError(
            f"{flag} {name}: the token must be at least {MIN_TOKEN_CHARS} characters without spaces; make one "
            f"with: {_TOKEN_RECIPE}"
        )
    return token


def refuse_url_credentials(url: str, what: str = "the URL") -> None:
    """A token in a URL ends up in logs, proxies and shell history: refuse it, saying how to pass it."""
    parts = urlsplit(url)
    if parts.username or parts.password or parts.query:
        raise AuthConfigError(
            f"{what} carries credentials or a query ({parts.scheme}://{parts.hostname or ''}...): a token in a URL is "
            "refused; put it in an environment variable and pass its name with --auth-token-env NAME (it is sent as "
            "the header Authorization: Bearer TOKEN)"
        )


def bearer_header(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def server_proof(token: str) -> str:
    """What a server that holds ``token`` shows its client (in ``serverInfo``) to prove it holds it,
    without showing the token."""
    return hmac.new(token.encode(), b"compoworld-server-proof", hashlib.sha256).hexdigest()[:32]


class StaticTokenVerifier(TokenVerifier):
    """Accepts exactly one token, compared in constant time."""

    CLIENT_ID = "static-token"

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id=self.CLIENT_ID, scopes=[])


class JwtVerifier(TokenVerifier):
    """Tokens signed by ``issuer``'s keys (its JWKS at ``jwks_url``), issued for ``audience``."""

    def __init__(self, issuer: str, audience: str, jwks_url: str) -> None:
        import jwt  # a dependency of mcp itself; imported only when an issuer is configured

        self._jwt = jwt
        self.issuer = issuer
        self.audience = audience
        self.jwks = jwt.PyJWKClient(jwks_url, cache_keys=True, lifespan=300, timeout=10)

    def check_keys(self) -> None:
        """Fetch the JWKS now, so that a wrong URL fails at start-up rather than on the first client."""
        try:
            self.jwks.get_jwk_set(refresh=True)
        except self._jwt.PyJWKClientError as exc:
            raise AuthConfigError(f"cannot read the issuer's keys at {self.jwks.uri}: {exc}") from None

    async def verify_token(self, token: str) -> AccessToken | None:
        # PyJWKClient fetches keys with urllib (blocking): off the event loop.
        return await anyio.to_thread.run_sync(self._verify, token)

    def _verify(self, token: str) -> AccessToken | None:
        jwt = self._jwt
        try:
            key = self.jwks.get_signing_key_from_jwt(token)
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=_JWT_ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                leeway=_CLOCK_SKEW_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError):
            return None  # expired, another issuer or audience, a bad signature, an unknown key: 401
        scope = claims.get("scope", claims.get("scp", ""))
        scopes = scope.split() if isinstance(scope, str) else [str(s) for s in scope or ()]
        client = claims.get("client_id") or claims.get("azp") or claims.get("sub") or "unknown"
        return AccessToken(
            token=token,
            client_id=str(client),
            scopes=scopes,
            expires_at=int(claims["exp"]),
            resource=self.audience,
            subject=str(claims["sub"]) if "sub" in claims else None,
            claims=claims,
        )


def discover_jwks_url(issuer: str, timeout: float = 10.0) -> str:
    """The issuer's ``jwks_uri``, from its OAuth (RFC 8414) or OpenID Connect discovery document."""
    import httpx

    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    candidates = [
        f"{parts.scheme}://{parts.netloc}/.well-known/oauth-authorization-server{path}",
        f"{issuer.rstrip('/')}/.well-known/openid-configuration",
    ]
    problems = []
    for url in candidates:
        try:
            response = httpx.get(url, timeout=timeout)
            if response.status_code == 200:
                jwks = response.json().get("jwks_uri")
                if isinstance(jwks, str) and jwks:
                    return jwks
                problems.append(f"{url} names no jwks_uri")
            else:
                problems.append(f"{url}: HTTP {response.status_code}")
        except (httpx.HTTPError, ValueError) as exc:
            problems.append(f"{url}: {type(exc).__name__}")
    raise AuthConfigError(
        f"--auth-issuer {issuer}: found no JWKS ({'; '.join(problems)}); pass its key set's URL with --auth-jwks-url"
    )


@dataclass(frozen=True)
class AuthConfig:
    """How an HTTP server checks bearer tokens: a static ``token``, or JWTs from ``issuer``."""

    token: str | None = None
    issuer: str | None = None
    jwks_url: str | None = None  # default: the issuer's discovery document says

    def __post_init__(self) -> None:
        if (self.token is None) == (self.issuer is None):
            raise AuthConfigError("give one of --auth-token-env NAME and --auth-issuer URL")
        if self.issuer is not None:
            for url, flag in ((self.issuer, "--auth-issuer"), (self.jwks_url, "--auth-jwks-url")):
                if url is not None and urlsplit(url).scheme not in ("http", "https"):
                    raise AuthConfigError(f"{flag} must be an http(s) URL, not {url!r}")
        elif self.jwks_url is not None:
            raise AuthConfigError("--auth-jwks-url is for --auth-issuer")

    def __repr__(self) -> str:  # never print the token
        return f"AuthConfig(token={'***' if self.token else None}, issuer={self.issuer!r})"

    def build(self, resource_url: str) -> tuple[AuthSettings, TokenVerifier]:
        """The SDK's settings and a verifier, for a server that clients reach at ``resource_url``."""
        if self.token is not None:
            # No authorization server issues this token: none is named, and no metadata points at one.
            # (AuthSettings requires an issuer URL; without resource_server_url it is never published.)
            settings = AuthSettings.model_validate({"issuer_url": resource_url, "resource_server_url": None})
            return settings, StaticTokenVerifier(self.token)
        assert self.issuer is not None
        verifier = JwtVerifier(self.issuer, resource_url, self.jwks_url or discover_jwks_url(self.issuer))
        verifier.check_keys()
        # The verifier checks the audience itself (validate_token_resource=False says so to the SDK).
        # Validated from strings, as the model keeps them: an issuer compares as an exact string (RFC 8414).
        settings = AuthSettings.model_validate(
            {"issuer_url": self.issuer, "resource_server_url": resource_url, "validate_token_resource": False}
        )
        return settings, verifier


class QueryTokenRefusal:
    """ASGI middleware: a request that carries a token in its query string gets 401 saying how to send
    it (the SDK reads only the header, RFC 6750's and MCP's one way, and would just say 401)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"").decode("latin-1") if scope["type"] == "http" else ""
        if query and any(name.lower() in _QUERY_TOKEN_NAMES for name, _ in parse_qsl(query, keep_blank_values=True)):
            body = json.dumps({
                "error": "invalid_request",
                "error_description": "a token in the URL is refused (URLs end up in logs); send it as the header "
                                     "Authorization: Bearer TOKEN",
            }).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"www-authenticate", b'Bearer error="invalid_request"')]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class BearerGate:
    """ASGI middleware for an app that is not MCP (the OpenEnv server): every HTTP request and every
    WebSocket handshake must carry ``Authorization: Bearer TOKEN``. Others get 401 (HTTP), or their
    handshake is refused (403) before the socket opens."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._admits(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: the handshake gets 403
            return
        body = b'{"detail": "a bearer token is required: send the header Authorization: Bearer TOKEN"}'
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"www-authenticate", b'Bearer error="invalid_token"')]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _admits(self, scope: Scope) -> bool:
        given = next((value for key, value in scope.get("headers", ()) if key.lower() == b"authorization"), b"")
        # The scheme is case-insensitive (RFC 6750); the token is compared in constant time.
        return hmac.compare_digest(given[:7].lower() + given[7:], self._expected)
