"""The MCP implementation of the tool seam: each rollout talks to its own task server process.

The episode lives in ``python -m harness.task_server`` with its state in SQLite files in a
temporary folder; the harness reaches it with the official mcp client over stdio or streamable
HTTP. After the rollout the server stops, and the files are reopened here and diffed against a
fresh copy of the task's initial state: the same grade as in process.

A server ends with the harness process, however that ends (``harness.lifeline``). Each episode
folder is named after the harness process that made it (``compoworld-episode-<pid>-...``): a
transport removes, when it starts and when it closes, the folders of harness processes that no
longer run (killed before they could remove their own).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from mcp import Client, MCPError, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from harness.errors import ToolTransportError
from harness.lifeline import PARENT_PID_FLAG
from harness.task_server import META_SERVICE
from harness.tools import CallOutcome
from mcp_services.kernel.bounds import abridge
from mcp_services.kernel.diff import StateDiff
from mcp_services.kernel.errors import ErrorCode
from mcp_services.kernel.results import ToolResult
from mcp_services.serving.model_view import model_tool
from mcp_services.serving.surface import Mode
from mcp_services.tasks.episodes import episode_for
from mcp_services.tasks.spec import TaskSpec, write_tasks

__all__ = ["EPISODE_FOLDER_PREFIX", "McpSession", "McpTransport", "sweep_episode_folders"]

_REQUEST_TIMEOUT = -32001
_REPO_ROOT = Path(__file__).resolve().parent.parent
EPISODE_FOLDER_PREFIX = "compoworld-episode-"


def _server_env() -> dict[str, str]:
    env = dict(os.environ)
    # The child must import this very checkout, whatever the caller's working folder.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def sweep_episode_folders(root: Path | None = None) -> int:
    """Remove the episode folders (under ``root``, default the temp folder) whose harness process
    is gone; the number removed. Folders of live processes, this one's included, stay."""
    if os.name != "posix":  # no cheap, safe liveness check by pid elsewhere
        return 0
    removed = 0
    for folder in (root or Path(tempfile.gettempdir())).glob(f"{EPISODE_FOLDER_PREFIX}*"):
        owner = folder.name[len(EPISODE_FOLDER_PREFIX) :].partition("-")[0]
        if owner.isdigit() and not _alive(int(owner)) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class McpSession:
    def __init__(self, client: Client, task: TaskSpec, db_dir: Path, stack: AsyncExitStack) -> None:
        self._client = client
        self._task = task
        self._db_dir = db_dir
        self._stack = stack

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await self._client.list_tools(cursor=cursor)
            tools.extend(model_tool(t.name, t.description or "", t.input_schema) for t in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools

    async def call(self, name: str, arguments: dict[str, Any], timeout: float | None) -> CallOutcome:
        try:
            result = await self._client.call_tool(name, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == _REQUEST_TIMEOUT:
                failed = ToolResult.fail(
                    ErrorCode.INTERNAL_ERROR,
                    f"{abridge(name)} did not answer within {timeout:g} s; try again or another tool.",
                )
                return CallOutcome(failed.to_json(), False)
            raise ToolTransportError(f"the task server rejected a call to {abridge(name)}: {str(exc)[:500]}") from exc
        except Exception as exc:  # noqa: BLE001 - closed streams, HTTP errors, task groups: the server is gone
            detail = f"{type(exc).__name__}: {str(exc)[:500]}"
            raise ToolTransportError(f"the task server stopped answering: {detail}") from exc
        return _outcome(result)

    async def final_diff(self) -> dict[str, StateDiff]:
        await self._stack.aclose()  # stop the server: its state files are final
        fresh = episode_for(self._task)
        try:
            reopened = episode_for(self._task, db_dir=self._db_dir)
            try:
                return reopened.diff(before=fresh.initial_dump())
            finally:
                reopened.close()
        finally:
            fresh.close()


def _outcome(result: CallToolResult) -> CallOutcome:
    text = next((c.text for c in result.content if isinstance(c, TextContent)), None)
    if text is None:
        text = json.dumps(result.structured_content, ensure_ascii=False, sort_keys=True)
    service = (result.meta or {}).get(META_SERVICE)
    return CallOutcome(text, not result.is_error, service if isinstance(service, str) else None)


class McpTransport:
    """Episodes in task server processes, over ``stdio`` or streamable ``http``."""

    def __init__(
        self, kind: Literal["stdio", "http"], *, python: str = sys.executable, startup_timeout: float = 60.0
    ) -> None:
        if kind not in ("stdio", "http"):
            raise ValueError(f"MCP transport must be stdio or http, not {kind!r}")
        self.kind = kind
        self.name = kind
        self.python = python
        self.startup_timeout = startup_timeout
        sweep_episode_folders()  # what a killed run left behind

    @asynccontextmanager
    async def open(self, task: TaskSpec, mode: Mode) -> AsyncIterator[McpSession]:
        folder = Path(tempfile.mkdtemp(prefix=f"{EPISODE_FOLDER_PREFIX}{os.getpid()}-"))
        try:
            tasks_file = folder / "task.jsonl"
            write_tasks(tasks_file, [task])
            db_dir = folder / "db"
            args = ["-m", "harness.task_server", "--tasks", str(tasks_file), "--task", task.id]
            args += ["--db", str(db_dir), "--mode", mode, "--transport", self.kind]
            args += [PARENT_PID_FLAG, str(os.getpid())]  # the server ends when this process does
            async with AsyncExitStack() as stack:
                if self.kind == "stdio":
                    target: Any = StdioServerParameters(command=self.python, args=args, env=_server_env())
                else:
                    port = _free_port()
                    log = folder / "server.log"
                    await self._start_http(stack, args + ["--port", str(port)], port, log)
                    target = f"http://127.0.0.1:{port}/mcp"
                # The session-wide read timeout bounds the handshake; each call passes its own.
                client = Client(target, read_timeout_seconds=self.startup_timeout)
                try:
                    await stack.enter_async_context(client)
                except Exception as exc:
                    raise ToolTransportError(f"could not connect to the task server ({self.kind}): {exc}") from exc
                session_stack = stack.pop_all()
            try:
                yield McpSession(client, task, db_dir, session_stack)
            finally:
                await session_stack.aclose()  # a no-op when final_diff already stopped the server
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        # Every server lives and dies with its rollout, and removes its folder; this catches what
        # another process of the run (e.g. a killed worker) left.
        sweep_episode_folders()

    async def _start_http(self, stack: AsyncExitStack, args: list[str], port: int, log: Path) -> None:
        with log.open("wb") as sink:  # a file, not a pipe: a pipe nobody reads would block the server
            process = await asyncio.create_subprocess_exec(
                self.python, *args, stdin=asyncio.subprocess.DEVNULL, stdout=sink, stderr=sink, env=_server_env()
            )
        stack.push_async_callback(_stop, process)
        deadline = asyncio.get_running_loop().time() + self.startup_timeout
        while True:
            if process.returncode is not None:
                tail = log.read_text(errors="replace")[-2000:].strip()
                raise ToolTransportError(f"the task server exited with code {process.returncode}: {tail}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise ToolTransportError(
                        f"the task server did not listen on port {port} within {self.startup_timeout:g} s"
                    ) from None
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            return


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
