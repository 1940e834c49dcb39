"""The MCP implementation of the tool seam: each rollout talks to its own task server process.

The episode lives in ``python -m harness.task_server`` with its state in SQLite files in a
temporary folder; the harness reaches it with the official mcp client over stdio or streamable
HTTP. After the rollout the server stops, and the files are reopened here and diffed against a
fresh copy of the task's initial state: the same grade as in process.

Over HTTP a rollout reaches its own server and no other. The server binds a free port itself and
reports it on a pipe only this harness holds (no window in which another process can take the
port); it requires a bearer token made for this episode alone (a server of another episode
answers 401); and before the first call the client checks the server's proof that it holds that
token (``serverInfo``), so nothing that happens to listen there passes for it. A server that cannot
start, is not the episode's own, or dies before it has listed its tools, is tried once more, from
the task's initial state; a second failure is one error line with the server's log tail, never a
graded rollout. A server that dies later ends its episode's calls (the rollout is graded on the
state it kept); closing the connection to it says nothing more, so it raises nothing. At most one server per
core starts at a time (start-up is CPU-bound), so a start's timeout holds at any concurrency.

A server ends with the harness process, however that ends (``harness.lifeline``). Each episode
folder is named after the harness process that made it (``compoworld-episode-<pid>-...``): a
transport removes, when it starts and when it closes, the folders of harness processes that no
longer run (killed before they could remove their own).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any, Literal

import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, CallToolResult, TextContent

from harness.errors import TaskServerError, ToolTransportError
from harness.lifeline import PARENT_PID_FLAG
from harness.task_server import META_PROOF, META_SERVICE, proof_description
from harness.tools import CallOutcome
from mcp_services.kernel.bounds import abridge
from mcp_services.kernel.diff import StateDiff
from mcp_services.kernel.errors import ErrorCode
from mcp_services.kernel.results import ToolResult
from mcp_services.serving.auth import bearer_header, server_proof
from mcp_services.serving.model_view import model_tool
from mcp_services.serving.surface import Mode
from mcp_services.tasks.episodes import episode_for
from mcp_services.tasks.spec import TaskSpec, write_tasks

__all__ = ["EPISODE_FOLDER_PREFIX", "TOKEN_ENV", "McpSession", "McpTransport", "sweep_episode_folders"]

_REQUEST_TIMEOUT = -32001
_REPO_ROOT = Path(__file__).resolve().parent.parent
EPISODE_FOLDER_PREFIX = "compoworld-episode-"
TOKEN_ENV = "COMPOWORLD_EPISODE_TOKEN"  # the variable that hands a task server its episode's token
_TRIES = 2  # a task server that fails to start is tried once more
_LOG_TAIL = 1500  # characters of a failed server's log that its error quotes


def _server_env() -> dict[str, str]:
    env = dict(os.environ)
    # The child must import this very checkout, whatever the caller's working folder.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop(TOKEN_ENV, None)
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


def _tail(log: Path) -> str:
    try:
        text = log.read_text(errors="replace").strip()
    except OSError:
        return "(no log)"
    if not text:
        return "(its log is empty)"
    return f"its log ends: {text[-_LOG_TAIL:]}"


def _reason(exc: BaseException) -> str:
    """The innermost useful cause of a failed connection, on one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _list_tools(client: Client) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(model_tool(t.name, t.description or "", t.input_schema) for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools


async def _enter_hosted(stack: AsyncExitStack, client: Client) -> None:
    """Enter ``client`` in a task of its own, until ``stack`` closes (it raises what the handshake raised).

    The SDK's HTTP transport runs each request in a task group entered with the client: a request
    that fails below the protocol (a dead server: a ``ConnectError``) cancels the task that entered
    it. Entered in the rollout's task, that cancelled the rollout itself. Entered here, it ends this
    task only, and the rollout's pending and later calls fail with an ordinary exception."""
    entered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    release = asyncio.Event()

    async def host() -> None:
        try:
            async with client:
                entered.set_result(None)
                await release.wait()
        except Exception as exc:  # noqa: BLE001 - after the handshake, the calls report the failure
            if not entered.done():
                entered.set_exception(exc)

    hosting = asyncio.create_task(host(), name="mcp-client")

    async def stop() -> None:
        release.set()
        if not entered.done():
            hosting.cancel()
        await asyncio.wait([hosting])  # raises only if this task itself is cancelled

    stack.push_async_callback(stop)
    await entered


async def _close(stack: AsyncExitStack) -> None:
    """Stop the server and close the client. The stack runs every callback, the server's stop
    included, whatever the others raise; a client whose server died raises the failed request again
    (a raw ``ConnectError`` in a task group), which the calls have already reported."""
    with suppress(Exception):
        await stack.aclose()


class McpSession:
    def __init__(
        self, client: Client, task: TaskSpec, db_dir: Path, stack: AsyncExitStack, tools: list[dict[str, Any]],
        proof: str | None = None,
    ) -> None:
        self._client = client
        self._task = task
        self._db_dir = db_dir
        self._stack = stack
        self._tools = tools  # listed once the server started (a server that cannot list them is restarted)
        self._proof = proof  # what every result of the episode's own server carries (HTTP)

    async def list_tools(self) -> list[dict[str, Any]]:
        return list(self._tools)

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
            if exc.code == CONNECTION_CLOSED:
                raise ToolTransportError(f"the task server stopped answering: {str(exc)[:500]}") from exc
            raise ToolTransportError(f"the task server rejected a call to {abridge(name)}: {str(exc)[:500]}") from exc
        except Exception as exc:  # noqa: BLE001 - closed streams, HTTP errors, task groups: the server is gone
            detail = f"{type(exc).__name__}: {str(exc)[:500]}"
            raise ToolTransportError(f"the task server stopped answering: {detail}") from exc
        if self._proof is not None and (result.meta or {}).get(META_PROOF) != self._proof:
            raise TaskServerError(
                f"the answer to {abridge(name)} did not come from this episode's task server (no proof of its "
                "token): its server is gone and something else answers on its port; the rollout is not graded"
            )
        return _outcome(result)

    async def final_diff(self) -> dict[str, StateDiff]:
        await _close(self._stack)  # stop the server: its state files are final
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
        # Starting a server is a second or two of CPU (imports): more at once than there are cores
        # would only slow each down, past its timeout under load. Rollouts run at any concurrency.
        self.max_starting = max(1, os.cpu_count() or 1)
        self._starting: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
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
            client, session_stack, tools, proof = await self._start(task, args, folder, db_dir)
            try:
                yield McpSession(client, task, db_dir, session_stack, tools, proof)
            finally:
                await _close(session_stack)  # a no-op when final_diff already stopped the server
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        # Every server lives and dies with its rollout, and removes its folder; this catches what
        # another process of the run (e.g. a killed worker) left.
        sweep_episode_folders()

    async def _start(
        self, task: TaskSpec, args: list[str], folder: Path, db_dir: Path
    ) -> tuple[Client, AsyncExitStack, list[dict[str, Any]], str | None]:
        """A connected client of the episode's own server, the stack that stops both, the server's tools,
        and the proof its results carry (HTTP; None over stdio, whose pipe is the episode's alone)."""
        problems: list[str] = []
        for attempt in range(1, _TRIES + 1):
            shutil.rmtree(db_dir, ignore_errors=True)  # every try starts from the task's initial state
            stack = AsyncExitStack()
            try:
                async with self._start_slot():
                    if self.kind == "stdio":
                        target = StdioServerParameters(command=self.python, args=args, env=_server_env())
                        client, proof = await self._connect(stack, target), None
                    else:
                        token = secrets.token_urlsafe(32)  # this episode's alone: no other server accepts it
                        client = await self._start_http(stack, task, args, token, folder / f"server-{attempt}.log")
                        proof = server_proof(token)
                    tools = await self._tools_of(client)
            except TaskServerError as exc:
                await _close(stack)
                problems.append(f"try {attempt}: {exc}")
                continue
            except BaseException:
                await _close(stack)
                raise
            return client, stack, tools, proof
        raise TaskServerError(
            f"the {self.kind} task server of task {task.id} could not be started ({_TRIES} tries): "
            + "; ".join(problems)
        )

    def _start_slot(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._starting is None or self._starting[0] is not loop:  # one per event loop that uses this transport
            self._starting = (loop, asyncio.Semaphore(self.max_starting))
        return self._starting[1]

    async def _tools_of(self, client: Client) -> list[dict[str, Any]]:
        try:
            return await _list_tools(client)
        except Exception as exc:  # noqa: BLE001 - closed streams, HTTP errors, task groups: the server is gone
            raise TaskServerError(f"it stopped answering before it listed its tools: {_reason(exc)}") from exc

    async def _connect(self, stack: AsyncExitStack, target: Any) -> Client:
        # The session-wide read timeout bounds the handshake; each call passes its own.
        client = Client(target, read_timeout_seconds=self.startup_timeout)
        try:
            await _enter_hosted(stack, client)
        except Exception as exc:
            raise TaskServerError(f"could not connect to it: {_reason(exc)}") from exc
        return client

    async def _start_http(
        self, stack: AsyncExitStack, task: TaskSpec, args: list[str], token: str, log: Path
    ) -> Client:
        env = _server_env() | {TOKEN_ENV: token}
        ready_read, ready_write = os.pipe()
        try:
            with log.open("wb") as sink:  # a file, not a pipe: a pipe nobody reads would block the server
                process = await asyncio.create_subprocess_exec(
                    self.python, *args, "--port", "0", "--auth-token-env", TOKEN_ENV, "--ready-fd", str(ready_write),
                    stdin=asyncio.subprocess.DEVNULL, stdout=sink, stderr=sink, env=env, pass_fds=(ready_write,),
                )
        except BaseException:
            os.close(ready_read)
            raise
        finally:
            os.close(ready_write)  # the child holds its own copy: end of file here means it is gone
        stack.push_async_callback(_stop, process)
        port = await self._read_port(ready_read, process, log)
        refused: list[int] = []  # the SDK's client reports a 401 as a bare "error response": note it here

        async def note_refusal(response: httpx2.Response) -> None:
            if response.status_code in (401, 403):
                refused.append(response.status_code)

        http = httpx2.AsyncClient(headers=bearer_header(token), timeout=httpx2.Timeout(30, read=300),
                                  event_hooks={"response": [note_refusal]})
        stack.push_async_callback(http.aclose)
        try:
            client = await self._connect(stack, streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http))
        except TaskServerError as exc:
            if refused:
                raise TaskServerError(
                    f"what answered on port {port} refused this episode's token ({refused[0]}): it is not this "
                    f"episode's task server; {_tail(log)}"
                ) from exc
            raise TaskServerError(f"port {port}: {exc}; {_tail(log)}") from exc
        info = client.server_info
        if info is None or info.description != proof_description(task, token):
            shown = abridge(info.name) if info is not None else "nothing"
            raise TaskServerError(
                f"what answered on port {port} ({shown}) is not this episode's task server: it shows no proof of "
                f"this episode's token; {_tail(log)}"
            )
        return client

    async def _read_port(self, fd: int, process: asyncio.subprocess.Process, log: Path) -> int:
        """The port the server reports once it listens (it binds the port itself)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        pipe, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0))
        try:
            async with asyncio.timeout(self.startup_timeout):
                line = await reader.readline()
        except TimeoutError:
            raise TaskServerError(
                f"it did not start listening within {self.startup_timeout:g} s; {_tail(log)}"
            ) from None
        finally:
            pipe.close()
        if line.strip().isdigit():
            return int(line)
        try:  # the pipe closed unwritten: the server exited, or is exiting
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            pass
        code = "" if process.returncode is None else f" with code {process.returncode}"
        raise TaskServerError(f"it exited{code} before it listened; {_tail(log)}")


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
