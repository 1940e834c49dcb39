"""MCP serving: every service through a real MCP client, in memory, over stdio and over HTTP."""

from __future__ import annotations

import importlib.metadata
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

from mcp_services.cli import main as cli_main
from mcp_services.kernel import Episode
from mcp_services.registry import LIBRARY, get_service
from mcp_services.serving import server as server_module
from mcp_services.serving import http as http_module
from mcp_services.serving.http import HttpServing, allowed_names, http_app
from mcp_services.serving.server import build_server, package_version
from mcp_services.serving.surface import ToolSurface
from tests.mcp_services.conftest import Served

REPO = Path(__file__).resolve().parents[2]
SPEC = json.loads((REPO / "tests" / "fixtures" / "mcp-schema-2025-11-25.json").read_text())
CONTROL_WORDS = ("reset", "snapshot", "episode", "dump_state", "diff", "grade", "reseed")


def spec_validator(definition: str) -> jsonschema.Draft202012Validator:
    schema = {"$schema": SPEC["$schema"], "$defs": SPEC["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(schema)


def first_no_arg_read_tool(name: str) -> str:
    service = get_service(name)
    for tool in service.tools.values():
        if tool.effect == "read" and not tool.input_schema.get("required"):
            return tool.name
    raise AssertionError(f"{name} has no read tool without required parameters")


@pytest.mark.parametrize("name", LIBRARY)
async def test_in_memory_client_lists_and_calls_every_service(name: str) -> None:
    episode = Episode.create([name], 0)
    reference = Episode.create([name], 0)
    tool = first_no_arg_read_tool(name)
    async with Client(build_server(episode)) as client:
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == {f"{name}__{t}" for t in get_service(name).tools}
        assert not any(word in t.name.split("__")[1] for t in listed for word in CONTROL_WORDS)
        result = await client.call_tool(f"{name}__{tool}", {})
    assert result.is_error is False
    assert result.structured_content == reference.call(name, tool, {}).envelope()
    assert json.loads(result.content[0].text) == result.structured_content


async def test_errors_arrive_as_is_error_with_the_envelope() -> None:
    async with Client(build_server(Episode.create(["crm"], 0))) as client:
        missing = await client.call_tool("crm__get_contact", {"contact_id": "ct_9999"})
        wrong = await client.call_tool("crm__get_contact", {"contact_id": 5, "extra": True})
        unknown = await client.call_tool("crm__get_contct", {})
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
    assert wrong.is_error and wrong.structured_content["error"]["code"] == "invalid_argument"
    assert "'extra' is not a parameter" in wrong.structured_content["error"]["message"]
    assert unknown.is_error and "crm__get_contact" in unknown.structured_content["error"]["message"]


async def test_gateway_direct_mode_namespaces_several_services() -> None:
    episode = Episode.create(["crm", "helpdesk"], 0)
    async with Client(build_server(episode, "direct")) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert any(n.startswith("crm__") for n in names) and any(n.startswith("helpdesk__") for n in names)
    assert all("__" in n for n in names)


async def test_gateway_discover_mode_exposes_four_tools_that_reach_every_service() -> None:
    episode = Episode.create(["crm", "helpdesk"], 0)
    async with Client(build_server(episode, "discover")) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        services = (await client.call_tool("list_services", {})).structured_content["data"]
        tools = (await client.call_tool("list_tools", {"service": "crm"})).structured_content["data"]
        described = (await client.call_tool("describe_tool", {"service": "crm", "tool": "get_contact"})).structured_content
        called = await client.call_tool(
            "call_tool", {"service": "crm", "tool": "get_contact", "arguments": {"contact_id": "ct_0001"}}
        )
        bad_service = await client.call_tool("list_tools", {"service": "bank"})
    assert names == ["call_tool", "describe_tool", "list_services", "list_tools"]
    assert [s["name"] for s in services] == ["crm", "helpdesk"]
    assert {t["name"] for t in tools} == set(get_service("crm").tools)
    assert described["data"]["input_schema"]["required"] == ["contact_id"]
    assert called.structured_content == Episode.create(["crm"], 0).call("crm", "get_contact", {"contact_id": "ct_0001"}).envelope()
    assert bad_service.is_error and bad_service.structured_content["error"]["code"] == "unknown_service"


def test_discover_mode_counts_only_calls_that_reach_a_service() -> None:
    surface = ToolSurface(Episode.create(["crm"], 0), "discover")
    assert surface.call("list_services", {}).service is None
    reached = surface.call("call_tool", {"service": "crm", "tool": "get_contact", "arguments": {"contact_id": "ct_0001"}})
    assert (reached.service, reached.tool) == ("crm", "get_contact")


class RawStdioClient:
    """Speaks newline-delimited JSON-RPC to a stdio server so the exact wire messages can be checked."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_services", "serve", *args],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> dict[str, Any] | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"server closed stdout: {self.proc.stderr.read().decode() if self.proc.stderr else ''}"
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return reply

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.mark.e2e
def test_stdio_wire_messages_are_valid_against_the_mcp_spec() -> None:
    client = RawStdioClient("crm", "sms")
    try:
        init = client.send(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "spec-check", "version": "1"}},
        )
        assert init and init["result"]["protocolVersion"] == "2025-11-25"
        assert init["result"]["serverInfo"]["version"] == package_version() == importlib.metadata.version("compoworld")
        spec_validator("InitializeResult").validate(init["result"])
        client.send("notifications/initialized", notify=True)
        listed = client.send("tools/list", {})
        assert listed
        spec_validator("ListToolsResult").validate(listed["result"])
        spec_validator("JSONRPCResponse").validate(listed)
        for tool in listed["result"]["tools"]:
            jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
            jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        ok = client.send("tools/call", {"name": "crm__get_contact", "arguments": {"contact_id": "ct_0001"}})
        bad = client.send("tools/call", {"name": "crm__get_contact", "arguments": {"contact_id": "nope"}})
        for reply in (ok, bad):
            assert reply
            spec_validator("CallToolResult").validate(reply["result"])
            spec_validator("JSONRPCResponse").validate(reply)
        assert ok["result"]["structuredContent"]["success"] is True and not ok["result"].get("isError")
        assert bad["result"]["isError"] is True and bad["result"]["structuredContent"]["error"]["code"] == "not_found"
        schema = next(t for t in listed["result"]["tools"] if t["name"] == "crm__get_contact")["outputSchema"]
        jsonschema.validate(ok["result"]["structuredContent"], schema)
        jsonschema.validate(bad["result"]["structuredContent"], schema)
    finally:
        client.close()


@pytest.mark.e2e
def test_http_transport_serves_tools_on_localhost(http_server: Any) -> None:
    url = http_server("crm")
    assert url.startswith("http://127.0.0.1:")

    async def session() -> tuple[int, dict[str, Any]]:
        async with Client(url) as client:
            tools = (await client.list_tools()).tools
            result = await client.call_tool("crm__archive_contact", {"contact_id": "ct_0002"})
            return len(tools), result.structured_content

    import anyio

    n_tools, result = anyio.run(session)
    assert n_tools == len(get_service("crm").tools)
    assert result["success"] is True and result["data"]["archived"] is True


@pytest.mark.e2e
def test_claude_config_starts_a_server_a_client_can_use_and_state_survives(tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "state"
    assert cli_main(["claude-config", "crm", "helpdesk", "--db", str(db)]) == 0
    config = json.loads(capsys.readouterr().out)
    (entry,) = config["mcpServers"].values()
    assert Path(entry["command"]).is_absolute() and str(db.resolve()) in entry["args"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"], cwd=str(REPO))

    async def archive() -> list[dict[str, Any]]:
        results = []
        for _ in range(2):  # two separate server processes: the second sees the first one's write
            async with Client(params) as client:
                result = await client.call_tool("crm__archive_contact", {"contact_id": "ct_0004"})
                results.append(result.structured_content)
        return results

    import anyio

    first, second = anyio.run(archive)
    assert first["success"] is True
    assert second["error"]["code"] == "invalid_state"
    assert (db / "crm.sqlite").exists() and (db / "helpdesk.sqlite").exists()


def test_list_json_shows_the_whole_library(capsys: Any) -> None:
    assert cli_main(["list", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload) >= 10 and sum(len(s["tools"]) for s in payload) >= 120
    for service in payload:
        assert {"name", "description", "tools"} <= set(service)
        for tool in service["tools"]:
            assert {"name", "effect", "description", "input_schema"} <= set(tool)
            assert tool["effect"] in ("read", "write")


def test_list_table_ends_with_the_totals(capsys: Any) -> None:
    assert cli_main(["list"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(f"{len(LIBRARY)} services, ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "bank"], "unknown service 'bank'"),
        (["claude-config", "crm", "sms", "--db", "/tmp/one.sqlite"], "is one file"),
        (["serve", "crm", "crm"], "named twice"),
    ],
)
def test_cli_bad_input_is_one_clear_line(argv: list[str], message: str, capsys: Any) -> None:
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# -- messages that are not JSON-RPC get JSON-RPC's error answers, on both transports -----------------

UNREADABLE = {
    "not JSON": ("{not json", -32700, None),
    "100,000 levels deep": ('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"arguments": '
                            + "[" * 100_000 + "]" * 100_000 + "}}", -32700, None),
    "a 5,000-digit id": ('{"jsonrpc": "2.0", "id": ' + "1" * 5000 + ', "method": "ping"}', -32700, None),
    "a number": ("42", -32600, None),
    "a batch": ("[]", -32600, None),
    "no jsonrpc field": ('{"id": 7, "method": "ping"}', -32600, 7),
    "a method that is not a string": ('{"jsonrpc": "2.0", "id": "r-8", "method": 5}', -32600, "r-8"),
}


def check_answer(reply: dict[str, Any], code: int, request_id: object) -> None:
    # JSON-RPC 2.0 answers with "id": null where the id cannot be read; MCP's schema leaves it out.
    assert "id" in reply and reply["id"] == request_id
    spec_validator("JSONRPCErrorResponse").validate({k: v for k, v in reply.items() if v is not None})
    assert reply["error"]["code"] == code
    assert len(reply["error"]["message"]) < 300  # short, whatever was sent


class LineClient(RawStdioClient):
    """A stdio server's wire, one line at a time, every read bounded."""

    def __init__(self, *args: str) -> None:
        super().__init__(*args)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.proc.stdout or ()], daemon=True).start()

    def exchange(self, text: str, timeout: float = 60) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        return json.loads(self.lines.get(timeout=timeout))  # queue.Empty (a failure) if no answer comes


@pytest.mark.e2e
def test_stdio_answers_unreadable_lines_with_json_rpc_errors_and_keeps_serving() -> None:
    client = LineClient("crm")
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in client.exchange(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                                       "params": init}))
        for text, code, request_id in UNREADABLE.values():
            check_answer(client.exchange(text), code, request_id)
        assert client.exchange('{"jsonrpc": "2.0", "id": 99, "method": "ping"}') == {"jsonrpc": "2.0", "id": 99,
                                                                                     "result": {}}
    finally:
        client.close()


@pytest.mark.e2e
@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_http_answers_unreadable_bodies_with_json_rpc_errors(http_server: Any, protocol: str) -> None:
    url = http_server("crm")
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": protocol}
    with httpx.Client(timeout=30) as http:
        for text, code, request_id in UNREADABLE.values():
            response = http.post(url, content=text, headers=headers)
            assert response.status_code == 400
            check_answer(response.json(), code, request_id)
        foreign = http.post(url, content="{not json", headers={**headers, "host": "evil.example"})
        assert foreign.status_code == 421  # the host check still comes first


# -- who may connect over HTTP -------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "box.lan"])
def test_a_non_loopback_host_is_refused_without_allow_remote(host: str, capsys: Any) -> None:
    assert cli_main(["serve", "crm", "--transport", "http", "--host", host]) == 2
    err = capsys.readouterr().err
    assert "--allow-remote NAME" in err and "--auth-token-env NAME" in err and "--no-auth" in err
    assert len(err.strip().splitlines()) == 1


def test_a_non_loopback_host_is_refused_without_auth_or_no_auth(capsys: Any) -> None:
    assert cli_main(["serve", "crm", "--transport", "http", "--host", "0.0.0.0", "--allow-remote", "box.lan"]) == 2
    err = capsys.readouterr().err
    assert "require a token with --auth-token-env NAME" in err and "--no-auth" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_hosts_need_no_flag(host: str) -> None:
    assert allowed_names(host) == ()
    assert HttpServing(host=host).names() == ()


def test_allow_remote_names_the_hosts_clients_use() -> None:
    assert allowed_names("0.0.0.0", ["box.lan", "10.0.0.5,Box.Example"]) == ("box.lan", "10.0.0.5", "box.example")
    assert allowed_names("192.168.1.20", ["box.lan"]) == ("box.lan", "192.168.1.20")
    with pytest.raises(ValueError, match="host names or addresses"):
        allowed_names("0.0.0.0", ["http://box.lan/"])
    with pytest.raises(ValueError, match="host names or addresses"):
        allowed_names("0.0.0.0", ["*"])


async def test_with_allow_remote_only_the_named_hosts_get_through() -> None:
    server = build_server(Episode.create(["crm"], 0))
    app = http_app(server, HttpServing(host="0.0.0.0", allow_remote=("box.lan",), no_auth=True), 8765)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

    async def post(**extra: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://box.lan:8765") as http:
            return await http.post("/mcp", content="{not json", headers={**headers, **extra})

    async with server.session_manager.run():
        named = await post()
        loopback = await post(host="127.0.0.1:8765")
        other = await post(host="evil.example:8765")
        rebinding = await post(origin="http://evil.example")
        browser = await post(origin="https://box.lan:8443")
    assert named.status_code == loopback.status_code == browser.status_code == 400  # through: a parse error
    assert named.json()["error"]["code"] == -32700
    assert other.status_code == 421 and rebinding.status_code == 403


@pytest.mark.e2e
def test_a_server_with_allow_remote_admits_requests_that_name_that_host() -> None:
    served = Served("crm", "--host", "127.0.0.1", "--allow-remote", "box.lan")  # loopback only, the name admitted
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    port = served.url.split(":")[2].split("/")[0]
    try:
        named = httpx.post(served.url, content="{", timeout=30, headers={**headers, "host": f"box.lan:{port}"})
        other = httpx.post(served.url, content="{", timeout=30, headers={**headers, "host": f"evil.example:{port}"})
    finally:
        served.stop()
    assert named.status_code == 400 and named.json()["error"]["code"] == -32700
    assert other.status_code == 421
    assert "warning" not in "".join(served.stderr)  # loopback: nothing to warn of


def loopback_listen(host: str, port: int) -> Any:  # tests never listen beyond loopback
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_no_auth_beyond_loopback_says_what_it_exposes(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    served: list[HttpServing] = []
    monkeypatch.setattr(http_module, "listen", loopback_listen)
    monkeypatch.setattr(server_module, "serve_http", lambda server, sock, http: served.append(http))
    argv = ["serve", "crm", "--transport", "http", "--host", "0.0.0.0", "--allow-remote", "box.lan", "--no-auth"]
    assert cli_main(argv) == 0
    assert [(s.host, s.names(), s.auth) for s in served] == [("0.0.0.0", ("box.lan",), None)]
    err = capsys.readouterr().err
    n_tools = len(get_service("crm").tools)
    assert "warning: --no-auth: serving on 0.0.0.0:" in err and "without authentication" in err
    assert f"can call all {n_tools} tools of crm" in err and "Requests must name one of these hosts: box.lan" in err


def test_a_busy_port_is_one_clear_error_before_anything_says_serving(capsys: Any) -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert cli_main(["serve", "crm", "--transport", "http", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"mcp-services: error: cannot listen on 127.0.0.1:{port} (address already in use; pick "
                           "another --port, or --port 0 for a free one)")


def test_connections_to_the_listening_socket_send_without_waiting_for_an_ack() -> None:
    """Every response is written in pieces (headers, then body). With Nagle's algorithm on, the second
    piece waits for the client's delayed ACK: ~40 ms per call on a kept-alive connection (issue 33).
    asyncio (and so uvicorn, which serves on this socket) turns it off only on a socket that says TCP."""
    import asyncio
    import socket

    async def accepted_nodelay() -> int:
        sock = http_module.listen("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Record(asyncio.Protocol):
            def connection_made(self, transport: Any) -> None:
                seen.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Record, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            try:
                return await asyncio.wait_for(seen, 30)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) != 0
