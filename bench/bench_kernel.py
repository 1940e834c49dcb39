"""Kernel benchmarks (issue 2): prints figures, asserts nothing.

    python bench/bench_kernel.py [--quick]

1. reset of a store from its snapshot (the CRM padded to ~1,000 rows);
2. a read tool call in process vs the bare SQLite queries it runs;
3. the same call through MCP (in memory, stdio, HTTP) vs a bare SDK server on the same transport;
4. building an episode of every library service; memory of 1,000 concurrent episodes x 5 services;
5. the agent's whole call path (surface, validation, transaction, result, JSON text) for a get by id,
   a write and a 20-item search, beside tau2-bench's ``get_response`` measured in tau2's own
   interpreter (``--tau2-python``, or $TAU2_PYTHON; skipped where tau2 is not installed; set
   $TAU2_DATA_DIR to tau2-bench's data/ folder when tau2 is installed from a source checkout).
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp_services.kernel import Episode  # noqa: E402
from mcp_services.registry import LIBRARY  # noqa: E402
from mcp_services.serving.surface import ToolSurface  # noqa: E402


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def us(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1e6:8.1f} us, p90 {sorted(samples)[int(len(samples) * 0.9)] * 1e6:8.1f} us"


def rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def padded_crm() -> Episode:
    episode = Episode.create(["crm"], 0)
    rows = episode.stores["crm"].count_rows()
    notes = [
        {
            "service": "crm",
            "table": "notes",
            "row": {
                "id": f"nt_pad_{i:04d}",
                "entity_type": "contact",
                "entity_id": "ct_0001",
                "body": f"Padding note {i} about a renewal and pricing.",
                "author_email": "pad@example.com",
                "created_at": "2025-01-01T00:00:00Z",
            },
        }
        for i in range(max(0, 1000 - rows))
    ]
    episode.apply_setup(notes)
    return episode


def bench_reset(n: int) -> None:
    episode = padded_crm()
    store = episode.stores["crm"]
    image = store.snapshot()
    print(f"[reset] crm store with {store.count_rows()} rows, image {len(image) / 1024:.0f} KiB")
    print(f"  store.restore(snapshot):        {us(timed(lambda: store.restore(image), n))}")
    print(f"  episode.reset() (1 service):     {us(timed(episode.reset, n))}")


def bench_read_call(n: int) -> None:
    episode = Episode.create(["crm"], 0)
    raw: sqlite3.Connection = episode.stores["crm"]._raw
    args = {"contact_id": "ct_0007"}

    def bare_get() -> None:
        row = raw.execute("SELECT * FROM contacts WHERE id = ?", ("ct_0007",)).fetchone()
        raw.execute("SELECT name FROM companies WHERE id = ?", (row[5],)).fetchone()

    def bare_search() -> None:
        like = "%an%"
        where = (
            "(first_name LIKE ? OR last_name LIKE ? OR first_name || ' ' || last_name LIKE ? OR email LIKE ? "
            "OR job_title LIKE ?) AND archived = 0"
        )
        raw.execute(f"SELECT COUNT(*) FROM contacts WHERE {where}", (like,) * 5).fetchone()
        rows = raw.execute(
            f"SELECT * FROM contacts WHERE {where} ORDER BY last_name, first_name, id LIMIT 20", (like,) * 5
        ).fetchall()
        for row in rows:
            raw.execute("SELECT name FROM companies WHERE id = ?", (row[5],)).fetchone()

    for label, tool, arguments, bare in (
        ("get_contact", "get_contact", args, bare_get),
        ("search_contacts", "search_contacts", {"query": "an"}, bare_search),
    ):
        timed(lambda: episode.call("crm", tool, arguments), 50)
        ours = timed(lambda: episode.call("crm", tool, arguments), n)
        base = timed(bare, n)
        ratio = statistics.median(ours) / statistics.median(base)
        print(f"[read call] crm.{label}")
        print(f"  in process (validate, transaction, ORM, result): {us(ours)}")
        print(f"  bare sqlite3 queries it runs:                     {us(base)}  -> ratio {ratio:.1f}x")


def bare_server_script() -> str:
    return (
        "import sqlite3, sys\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "from mcp_services.kernel import Episode\n"
        "episode = Episode.create(['crm'], 0)\n"
        "raw = episode.stores['crm']._raw\n"
        "server = MCPServer('bare')\n"
        "@server.tool()\n"
        "def get_contact(contact_id: str) -> dict:\n"
        "    cur = raw.execute('SELECT * FROM contacts WHERE id = ?', (contact_id,))\n"
        "    cols = [c[0] for c in cur.description]\n"
        "    return dict(zip(cols, cur.fetchone()))\n"
        "if sys.argv[1] == 'stdio':\n"
        "    server.run('stdio')\n"
        "else:\n"
        "    server.run('streamable-http', host='127.0.0.1', port=int(sys.argv[2]))\n"
    )


def bench_mcp(n: int) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.server.mcpserver import MCPServer

    from mcp_services.serving.server import build_server

    episode = Episode.create(["crm"], 0)
    raw = episode.stores["crm"]._raw
    bare = MCPServer("bare")

    @bare.tool()
    def get_contact(contact_id: str) -> dict[str, Any]:
        cur = raw.execute("SELECT * FROM contacts WHERE id = ?", (contact_id,))
        cols = [c[0] for c in cur.description]
        return dict(zip(cols, cur.fetchone(), strict=True))

    script = REPO / "bench" / ".bare_server.py"
    script.write_text(bare_server_script())

    async def measure(ours: Any, bare: Any) -> tuple[list[float], list[float]]:
        """Both servers' call times, their calls alternated on two open clients: a busy machine slows
        both alike, so the ratio holds where one server measured after the other would not."""
        samples: tuple[list[float], list[float]] = ([], [])
        async with Client(ours) as ours_client, Client(bare) as bare_client:
            pair = ((ours_client, "crm__get_contact", samples[0]), (bare_client, "get_contact", samples[1]))
            for i in range(20 + n):
                for client, tool, kept in pair if i % 2 else pair[::-1]:
                    start = time.perf_counter()
                    await client.call_tool(tool, {"contact_id": "ct_0007"})
                    if i >= 20:  # the first calls warm both up
                        kept.append(time.perf_counter() - start)
        return samples

    def line(label: str, samples: tuple[list[float], list[float]]) -> str:
        ours, base = samples
        return f"  {label:<10} ours {us(ours)} | bare {us(base)} | ratio {statistics.median(ours) / statistics.median(base):.2f}x"

    def free_port() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

    def start_http(cmd: list[str], port: int) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return proc
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    print(f"[mcp] crm get_contact, {n} sequential calls per transport (ours vs a bare MCPServer tool, calls alternated)")
    print(line("in memory:", anyio.run(measure, build_server(episode), bare)))

    py = sys.executable
    ours_stdio = StdioServerParameters(command=py, args=["-m", "mcp_services", "serve", "crm"], cwd=str(REPO))
    bare_stdio = StdioServerParameters(command=py, args=[str(script), "stdio"], cwd=str(REPO), env={"PYTHONPATH": str(REPO)})
    print(line("stdio:", anyio.run(measure, ours_stdio, bare_stdio)))

    port_a, port_b = free_port(), free_port()
    procs = [
        start_http([py, "-m", "mcp_services", "serve", "crm", "--transport", "http", "--port", str(port_a)], port_a),
        start_http([py, str(script), "http", str(port_b)], port_b),
    ]
    try:
        print(line("http:", anyio.run(measure, f"http://127.0.0.1:{port_a}/mcp", f"http://127.0.0.1:{port_b}/mcp")))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
        script.unlink(missing_ok=True)


def bench_episodes(n_episodes: int) -> None:
    names = list(LIBRARY)
    Episode.create(names, 0).close()  # warm the per-seed images
    build = timed(lambda: Episode.create(names, 0).close(), 30)
    print(f"[episodes] build an episode of all {len(names)} library services: {us(build)}")
    five = names[:5]
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    episodes = [Episode.create(five, 0) for _ in range(n_episodes)]
    elapsed = time.perf_counter() - start
    for i, episode in enumerate(episodes):  # every episode is live: write to each
        episode.call("crm", "add_note", {"entity_type": "contact", "entity_id": "ct_0001", "body": f"note {i}"})
    gc.collect()
    after = rss_mb()
    rows = sum(e.stores[s].count_rows() for e in episodes[:1] for s in five)
    print(
        f"  {n_episodes} concurrent episodes x 5 services ({', '.join(five)}; {rows} rows each): "
        f"+{after - before:.0f} MiB RSS ({(after - before) / n_episodes:.2f} MiB per episode), built in {elapsed:.1f} s"
    )
    for episode in episodes:
        episode.close()


def tau2_figures(python: str | None, n: int) -> dict[str, Any] | None:
    """tau2's side, measured by bench/peers/tau2_calls.py in tau2's interpreter (it needs Python >= 3.12)."""
    if not python:
        print("  tau2-bench: skipped (give --tau2-python or $TAU2_PYTHON: an interpreter with tau2 installed)")
        return None
    script = REPO / "bench" / "peers" / "tau2_calls.py"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # tau2 imports litellm: no network fetch
    proc = subprocess.run([python, str(script), str(n)], capture_output=True, text=True, timeout=600, env=env)
    if proc.returncode != 0:
        print(f"  tau2-bench: skipped ({python} could not run it: {proc.stderr.strip().splitlines()[-1:]})")
        return None
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def bench_call_path(n: int, tau2_python: str | None) -> None:
    surface = ToolSurface(Episode.create(["crm"], 0), "direct")
    calls = {
        "get": ("crm__get_contact", {"contact_id": "ct_0007"}),
        "write": ("crm__update_contact", {"contact_id": "ct_0007", "job_title": "Head of Operations"}),
        "search": ("crm__search_contacts", {"query": "a", "limit": 20}),
    }
    for name, arguments in calls.values():
        result = surface.call(name, arguments).result
        assert result.ok, result.to_json()
    ours = {}
    for label, (name, arguments) in calls.items():
        timed(lambda: surface.call(name, arguments).result.to_json(), 50)
        ours[label] = statistics.median(timed(lambda: surface.call(name, arguments).result.to_json(), n)) * 1e6
    peer = tau2_figures(tau2_python, n)
    print("[call path] the agent's whole path in process: tool name -> validated call -> JSON text")
    peer_tools = {"get": "get_user_details", "write": "modify_user_address", "search": "find_user_id_by_email"}
    for label, (name, _) in calls.items():
        line = f"  {label:<6} {name:<24} median {ours[label]:7.1f} us"
        if peer:
            theirs = peer[label]["median_us"]
            line += f"   tau2 {peer['version']} retail {peer_tools[label]:<22} {theirs:7.1f} us  ({ours[label] / theirs:.2f}x)"
        print(line)
    print("  targets (issue 11): get and write no slower than tau2's get_response; a 20-item search under 250 us")


def main() -> None:
    from mcp_services.command_line import configure_logging

    # Before any MCPServer exists: each configures the root logger at INFO (one line per HTTP request) unless
    # logging is configured already.
    configure_logging()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations and 100 episodes instead of 1,000")
    parser.add_argument("--skip-mcp", action="store_true", help="skip the stdio/HTTP transport measurements")
    parser.add_argument(
        "--tau2-python", default=os.environ.get("TAU2_PYTHON"), help="a Python (>= 3.12) with tau2-bench installed"
    )
    parser.add_argument("--only-call-path", action="store_true", help="measure only the call path (and tau2's)")
    args = parser.parse_args()
    n = 200 if args.quick else 2000
    bench_call_path(n, args.tau2_python)
    if args.only_call_path:
        return
    bench_reset(n)
    bench_read_call(n)
    if not args.skip_mcp:
        bench_mcp(100 if args.quick else 500)
    bench_episodes(100 if args.quick else 1000)


if __name__ == "__main__":
    main()
