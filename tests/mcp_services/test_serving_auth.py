"""Serving to other machines: bearer tokens (static, or JWTs from an issuer) and limits per client,
all over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcp_services.cli import main as cli_main
from mcp_services.registry import get_service
from mcp_services.serving.auth import bearer_header
from mcp_services.serving.limits import LIMIT_EXCEEDED
from tests.mcp_services.conftest import Served

pytestmark = pytest.mark.e2e

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
PING = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


@asynccontextmanager
async def connect(url: str, token: str | None, **options: Any) -> AsyncIterator[Client]:
    """An MCP client of ``url`` that sends ``token`` as a bearer token."""
    headers = bearer_header(token) if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120, **options) as client:
            yield client


def leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


@pytest.fixture(scope="module")
def token_server() -> Iterator[tuple[str, str]]:
    """`mcp-services serve crm --auth-token-env MCP_TOKEN`: its URL and token."""
    token = secrets.token_urlsafe(32)
    served = Served("crm", "--auth-token-env", "MCP_TOKEN", env={"MCP_TOKEN": token})
    try:
        yield served.url, token
    finally:
        served.stop()


def test_without_the_token_a_request_gets_401_with_www_authenticate_and_changes_nothing(
    token_server: tuple[str, str],
) -> None:
    url, token = token_server
    archive = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "crm__archive_contact", "arguments": {"contact_id": "ct_0003"}}})
    for credentials in ({}, {"authorization": "Bearer " + "x" * 43}, {"authorization": f"Basic {token}"}):
        response = httpx.post(url, content=archive, headers={**HEADERS, **credentials}, timeout=30)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    garbage = httpx.post(url, content="{not json", headers=HEADERS, timeout=30)
    assert garbage.status_code == 401  # nothing is read for a client without the token, not even a parse error
    in_query = httpx.post(f"{url}?access_token={token}", content=PING, headers=HEADERS, timeout=30)
    assert in_query.status_code == 401 and "send it as the header Authorization: Bearer" in in_query.text

    async def contact() -> dict[str, Any]:
        async with connect(url, token) as client:
            result = await client.call_tool("crm__get_contact", {"contact_id": "ct_0003"})
            return result.structured_content or {}

    assert asyncio.run(contact())["data"]["archived"] is False


def test_with_the_token_every_tool_answers(token_server: tuple[str, str]) -> None:
    url, token = token_server

    async def call_all() -> tuple[set[str], list[dict[str, Any]]]:
        async with connect(url, token) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            results = [(await client.call_tool(name, {})).structured_content or {} for name in sorted(names)]
            return names, results

    names, results = asyncio.run(call_all())
    assert names == {f"crm__{t}" for t in get_service("crm").tools}
    # Each tool ran and answered with its envelope (many need arguments: their own validation error).
    assert all(r["success"] is True or r["error"]["code"] in ("invalid_argument", "not_found") for r in results)
    assert any(r["success"] for r in results)


def test_200_concurrent_clients_with_the_token_see_no_errors(token_server: tuple[str, str]) -> None:
    url, token = token_server

    async def one(i: int) -> dict[str, Any]:
        mode = "legacy" if i % 2 else "auto"  # sessions (2025-11-25) and sessionless requests (2026-07-28)
        async with connect(url, token, mode=mode) as client:
            assert len((await client.list_tools()).tools) == len(get_service("crm").tools)
            result = await client.call_tool("crm__get_contact", {"contact_id": "ct_0001"})
            assert not result.is_error
            return result.structured_content or {}

    async def all_of_them() -> list[dict[str, Any] | BaseException]:
        return await asyncio.gather(*(one(i) for i in range(200)), return_exceptions=True)

    results = asyncio.run(all_of_them())
    errors = [r for r in results if isinstance(r, BaseException)]
    assert errors == []
    assert len({json.dumps(r, sort_keys=True) for r in results}) == 1


# -- tokens from an identity provider ------------------------------------------------------------------


class Issuer:
    """An identity provider on 127.0.0.1: OpenID discovery and a JWKS with one EC key, made here."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
        jwks = json.dumps({"keys": [public | {"kid": "k1", "alg": "ES256", "use": "sig"}]}).encode()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                documents = {"/.well-known/openid-configuration": json.dumps(
                    {"issuer": outer.url, "jwks_uri": f"{outer.url}/jwks.json"}).encode(), "/jwks.json": jwks}
                body = documents.get(self.path)
                self.send_response(200 if body else 404)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(body or b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def token(self, audience: str, *, expires_in: int = 300, issuer: str | None = None, key: Any = None) -> str:
        claims = {"iss": issuer or self.url, "aud": audience, "sub": "worker-7", "client_id": "rl-cluster",
                  "exp": int(time.time()) + expires_in, "scope": "tools"}
        return jwt.encode(claims, key or self.key, algorithm="ES256", headers={"kid": "k1"})

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture(scope="module")
def issuer_server() -> Iterator[tuple[Issuer, str]]:
    issuer = Issuer()
    served = Served("crm", "--auth-issuer", issuer.url)
    try:
        yield issuer, served.url
    finally:
        served.stop()
        issuer.close()


def test_an_issuers_token_for_this_server_works_and_the_401_points_at_the_metadata(
    issuer_server: tuple[Issuer, str],
) -> None:
    issuer, url = issuer_server
    refused = httpx.post(url, content=PING, headers=HEADERS, timeout=30)
    metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert refused.status_code == 401 and f'resource_metadata="{metadata_url}"' in refused.headers["www-authenticate"]
    metadata = httpx.get(metadata_url, timeout=30).json()
    assert metadata["resource"] == url and metadata["authorization_servers"] == [issuer.url]
    assert metadata["bearer_methods_supported"] == ["header"]

    async def use() -> dict[str, Any]:
        async with connect(url, issuer.token(url)) as client:
            return (await client.call_tool("crm__get_contact", {"contact_id": "ct_0001"})).structured_content or {}

    assert asyncio.run(use())["success"] is True


def test_an_expired_foreign_or_misaddressed_token_gets_401(issuer_server: tuple[Issuer, str]) -> None:
    issuer, url = issuer_server
    bad = {
        "expired": issuer.token(url, expires_in=-3600),
        "for another server": issuer.token("http://127.0.0.1:1/mcp"),
        "from another issuer": issuer.token(url, issuer="http://127.0.0.1:2"),
        "signed by another key": issuer.token(url, key=ec.generate_private_key(ec.SECP256R1())),
        "not a JWT": secrets.token_urlsafe(32),
    }
    for what, token in bad.items():
        response = httpx.post(url, content=PING, headers={**HEADERS, **bearer_header(token)}, timeout=30)
        assert response.status_code == 401, what


# -- refusing tokens where they do not belong ------------------------------------------------------------


def test_a_token_on_the_command_line_is_refused_with_the_way_to_pass_it(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli_main(["serve", "crm", "--transport", "http", "--auth-token", "s3cret-s3cret-s3cret"])
    assert exit_.value.code == 2
    assert "--auth-token is refused" in capsys.readouterr().err
    assert cli_main(["serve", "crm", "--transport", "http", "--auth-token-env", "s3cret-s3cret=="]) == 2
    assert "the NAME of an environment variable" in capsys.readouterr().err
    assert cli_main(["serve", "crm", "--transport", "http", "--auth-token-env", "COMPOWORLD_UNSET_VAR"]) == 2
    assert "COMPOWORLD_UNSET_VAR is not set" in capsys.readouterr().err


def test_claude_config_writes_the_header_entry_for_claude_code_and_says_where_desktop_cannot(capsys: Any) -> None:
    assert cli_main(["claude-config", "crm", "--url", "https://box.lan/mcp", "--auth-token-env", "MCP_TOKEN"]) == 0
    captured = capsys.readouterr()
    entry = json.loads(captured.out)["mcpServers"]["compoworld-crm"]
    assert entry == {"type": "http", "url": "https://box.lan/mcp", "headers": {"Authorization": "Bearer ${MCP_TOKEN}"}}
    assert "Claude Desktop's config file starts only local (stdio) servers" in captured.err
    assert "mcp-remote" in captured.err
    assert cli_main(["claude-config", "crm", "--url", "https://box.lan/mcp?token=abc"]) == 2
    assert "a token in a URL is refused" in capsys.readouterr().err


# -- limits per client -------------------------------------------------------------------------------------


def test_beyond_the_session_and_result_limits_a_client_gets_clear_errors_and_goes_on() -> None:
    token = secrets.token_urlsafe(32)
    served = Served("crm", "--auth-token-env", "T", "--max-sessions-per-client", "2", "--calls-per-second", "0",
                    "--max-result-bytes", "2000", env={"T": token})

    async def scenario() -> None:
        async with connect(served.url, token, mode="legacy") as first, connect(served.url, token, mode="legacy"):
            with pytest.raises(BaseException) as third:  # the SDK's client raises it inside a task group
                async with connect(served.url, token, mode="legacy"):
                    pass
            refusal = leaf(third.value)
            assert isinstance(refusal, MCPError) and refusal.error.code == LIMIT_EXCEEDED
            assert "Too many open sessions: this server allows 2 at once per client" in refusal.error.message
            with pytest.raises(MCPError) as too_big:
                await first.call_tool("crm__search_contacts", {"query": ""})
            assert too_big.value.error.code == LIMIT_EXCEEDED and "more than the 2,000" in too_big.value.error.message
            small = await first.call_tool("crm__get_contact", {"contact_id": "ct_0001"})  # the session goes on
            assert small.structured_content and small.structured_content["success"] is True
        async with connect(served.url, token, mode="legacy") as again:  # both closed: room again
            assert len((await again.list_tools()).tools) == len(get_service("crm").tools)

    try:
        asyncio.run(scenario())
    finally:
        served.stop()


def test_beyond_the_request_rate_a_client_gets_429_with_retry_after_and_is_served_after_it() -> None:
    served = Served("crm", "--calls-per-second", "2")
    try:
        with httpx.Client(timeout=30) as http:
            answers = [http.post(served.url, content=PING, headers={**HEADERS, "mcp-protocol-version": "2025-11-25"})
                       for _ in range(4)]
            refused = next(a for a in answers if a.status_code == 429)
            assert refused.json()["error"]["code"] == LIMIT_EXCEEDED
            assert "2 per second from one client" in refused.json()["error"]["message"]
            time.sleep(float(refused.headers["retry-after"]))  # wait as the server asks
            later = http.post(served.url, content="{not json", headers=HEADERS)
        assert later.status_code == 400 and later.json()["error"]["code"] == -32700  # served, not refused
        assert served.proc.poll() is None
    finally:
        served.stop()
