"""`harness serve`, `harness grade` and `harness claude-config`: a task for MCP clients and people."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from harness.cli import main
from harness.serve import PROMPT_NAME, build_served_task
from mcp_services.serving.auth import bearer_header
from mcp_services.tasks.spec import TaskSpec

_ROOT = Path(__file__).resolve().parents[2]
_WAIT_S = 90.0  # bound on a server's start-up (imports take seconds on a busy 2-core machine)
_TOKEN = "t" * 20 + "-served-task-token"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _serve_args(tasks_file: Path, task: TaskSpec, db: Path, *extra: str) -> list[str]:
    return ["-m", "harness", "serve", "--tasks", str(tasks_file), "--task", task.id, "--db", str(db), *extra]


async def _do_the_plan(client: Client, task: TaskSpec) -> None:
    for step in task.plan:
        result = await client.call_tool(f"{step.service}__{step.tool}", step.arguments)
        assert not result.is_error and result.structured_content is not None
        assert result.structured_content["success"] is True


async def test_the_served_task_offers_its_instruction_as_a_prompt_and_in_the_instructions(
    tasks: list[TaskSpec],
) -> None:
    task = tasks[2]
    server, episode = build_served_task(task, "discover", None)
    try:
        async with Client(server) as client:
            assert task.instruction in (client.instructions or "")
            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == [PROMPT_NAME]
            prompt = await client.get_prompt(PROMPT_NAME)
            text = prompt.messages[0].content.text  # type: ignore[union-attr]
            assert prompt.messages[0].role == "user" and task.instruction in text and "13 March 2025" in text
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"list_services", "list_tools", "describe_tool", "call_tool"}
    finally:
        episode.close()


@pytest.mark.e2e
async def test_serve_over_stdio_works_with_an_mcp_client_and_grade_grades_the_session(
    tasks_file: Path, tasks: list[TaskSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task, db = tasks[2], tmp_path / "db"
    target = StdioServerParameters(command=sys.executable, args=_serve_args(tasks_file, task, db), env=_env())
    # "legacy": the 2025-11-25 handshake that Claude Desktop and most clients speak today.
    async with Client(target, mode="legacy", read_timeout_seconds=_WAIT_S) as client:
        assert task.instruction in (client.instructions or "")
        assert PROMPT_NAME in [p.name for p in (await client.list_prompts()).prompts]
        assert "crm__update_contact" in {t.name for t in (await client.list_tools()).tools}
        await _do_the_plan(client, task)

    assert main(["grade", "--tasks", str(tasks_file), "--task", task.id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "PASS  customer: Zed Quill is a customer" in out and "passed: 2 of 2 criteria" in out
    assert main(["grade", "--tasks", str(tasks_file), "--task", task.id, "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["criteria"]["customer"]["passed"] is True


@pytest.fixture()
def http_server(tasks_file: Path, tasks: list[TaskSpec], tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`harness serve --transport http --port 0` on 127.0.0.1; yields its URL and db; always stopped."""
    db = tmp_path / "db"
    args = [sys.executable, *_serve_args(tasks_file, tasks[0], db, "--transport", "http", "--port", "0",
                                         "--auth-token-env", "SERVE_TOKEN")]
    process = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**_env(), "SERVE_TOKEN": _TOKEN}, text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stderr or ()], daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + _WAIT_S
        banner = ""
        while " at http://127.0.0.1:" not in banner:  # the URL line (warnings may come first)
            banner = lines.get(timeout=max(deadline - time.monotonic(), 0.001))
        yield banner.split(" at ", 1)[1].split(" ", 1)[0], db
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
        reader.join(timeout=30)


@pytest.mark.e2e
async def test_serve_over_http_works_with_an_mcp_client(
    http_server: tuple[str, Path], tasks_file: Path, tasks: list[TaskSpec], capsys: pytest.CaptureFixture[str]
) -> None:
    url, db = http_server
    task = tasks[0]
    refused = httpx.post(url, content='{"jsonrpc": "2.0", "id": 1, "method": "ping"}', timeout=30,
                         headers={"content-type": "application/json", "accept": "application/json, text/event-stream"})
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer ")
    async with httpx2.AsyncClient(headers=bearer_header(_TOKEN)) as http, Client(
        streamable_http_client(url, http_client=http), read_timeout_seconds=_WAIT_S
    ) as client:
        assert task.instruction in (client.instructions or "")
        prompt = await client.get_prompt(PROMPT_NAME)
        assert task.instruction in prompt.messages[0].content.text  # type: ignore[union-attr]
        await _do_the_plan(client, task)
    # Graded while the server still runs: the state files are read, never written.
    assert main(["grade", "--tasks", str(tasks_file), "--task", task.id, "--db", str(db)]) == 0
    assert "passed: 2 of 2 criteria" in capsys.readouterr().out


async def test_grade_reports_each_criterion_of_an_unfinished_session(
    tasks_file: Path, tasks: list[TaskSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task, db = tasks[2], tmp_path / "db"
    server, episode = build_served_task(task, "direct", db)
    try:
        async with Client(server) as client:  # looks the lead up, never converts them
            await client.call_tool("crm__find_contact_by_email", {"email": "zed.quill@quill.example"})
    finally:
        episode.close()
    assert main(["grade", "--tasks", str(tasks_file), "--task", task.id, "--db", str(db)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  customer" in out and "not passed: 0 of 2 criteria, rubric score 0.000" in out


def test_a_question_task_is_graded_on_the_answer_given(
    tasks_file: Path, tasks: list[TaskSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task, db = tasks[1], tmp_path / "db"
    build_served_task(task, "direct", db)[1].close()
    assert main(["grade", "--tasks", str(tasks_file), "--task", task.id[:6], "--db", str(db)]) == 1
    assert "pass the answer given with --answer" in capsys.readouterr().out
    assert (
        main(
            [
                "grade",
                "--tasks",
                str(tasks_file),
                "--task",
                task.id,
                "--db",
                str(db),
                "--answer",
                "It is worth 21600 USD.",
            ]
        )
        == 0
    )


def _one_error_line(capsys: pytest.CaptureFixture[str], *needles: str) -> None:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("harness: error: "), err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize("command", ["serve", "claude-config", "grade"])
def test_an_unknown_task_id_is_one_clear_error(
    command: str, tasks_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [command, "--tasks", str(tasks_file), "--task", "f00dfeed"]
    args += ["--db", str(tmp_path / "db")] if command != "claude-config" else []
    assert main(args) == 2
    _one_error_line(capsys, "no task with id 'f00dfeed'")


@pytest.mark.parametrize("command", ["serve", "claude-config", "grade"])
def test_a_task_file_of_another_schema_version_is_one_clear_error(
    command: str, tasks: list[TaskSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(tasks[0].to_json()) | {"schema_version": 99}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    args = [command, "--tasks", str(path), "--task", tasks[0].id] + (
        ["--db", str(tmp_path)] if command == "grade" else []
    )
    assert main(args) == 2
    _one_error_line(capsys, "schema_version 99 is not supported")


def test_a_db_folder_belongs_to_one_task(
    tasks_file: Path, tasks: list[TaskSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db"
    build_served_task(tasks[0], "direct", db)[1].close()
    with pytest.raises(ValueError, match=f"holds the state of task {tasks[0].id}"):
        build_served_task(tasks[2], "direct", db)
    assert main(["grade", "--tasks", str(tasks_file), "--task", tasks[2].id, "--db", str(db)]) == 2
    _one_error_line(capsys, f"holds the state of task {tasks[0].id}, not {tasks[2].id}")
    assert main(["grade", "--tasks", str(tasks_file), "--task", tasks[2].id, "--db", str(tmp_path / "none")]) == 2
    _one_error_line(capsys, "serve the task with `harness serve --db")


def test_claude_config_prints_an_entry_that_serves_the_task_and_can_write_it_in_place(
    tasks_file: Path, tasks: list[TaskSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["claude-config", "--tasks", str(tasks_file), "--task", tasks[0].id[:8], "--db", "rel/db"]) == 0
    servers = json.loads(capsys.readouterr().out)["mcpServers"]
    ((name, entry),) = servers.items()
    assert name == f"compoworld-{tasks[0].id[:8]}"
    assert Path(entry["command"]).is_absolute() and entry["args"][:3] == ["-m", "harness", "serve"]
    args = entry["args"]
    assert args[args.index("--task") + 1] == tasks[0].id
    assert Path(args[args.index("--tasks") + 1]) == tasks_file.absolute()
    assert Path(args[args.index("--db") + 1]).is_absolute()

    config_file = tmp_path / "Claude" / "claude_desktop_config.json"
    config_file.parent.mkdir()
    config_file.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}), encoding="utf-8")
    assert (
        main(
            [
                "claude-config",
                "--tasks",
                str(tasks_file),
                "--task",
                tasks[0].id,
                "--write",
                "--config-file",
                str(config_file),
            ]
        )
        == 0
    )
    written = json.loads(config_file.read_text(encoding="utf-8"))
    assert written["theme"] == "dark" and set(written["mcpServers"]) == {"other", name}
    assert "wrote" in capsys.readouterr().err


def test_a_non_loopback_host_is_refused_without_allow_remote_and_without_auth(
    tasks_file: Path, tasks: list[TaskSpec], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["serve", "--tasks", str(tasks_file), "--task", tasks[0].id, "--transport", "http", "--host", "0.0.0.0"]
    assert main(args) == 2
    _one_error_line(capsys, "--allow-remote NAME")
    assert main([*args, "--allow-remote", "box.lan"]) == 2
    _one_error_line(capsys, "require a token with --auth-token-env NAME", "--no-auth")


def test_http_options_without_http_are_refused(tasks_file: Path, tasks: list[TaskSpec],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--tasks", str(tasks_file), "--task", tasks[0].id, "--no-auth"]) == 2
    _one_error_line(capsys, "--no-auth is for --transport http")


def test_serving_beyond_loopback_with_no_auth_warns_and_keeps_the_host_check(
    tasks_file: Path, tasks: list[TaskSpec], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    import harness.serve as serve_module
    from mcp_services.serving.http import HttpServing

    served: list[HttpServing] = []
    real_listen = serve_module.listen

    def listen(host: str, port: int) -> socket.socket:  # tests never listen beyond loopback
        return real_listen("127.0.0.1", 0)

    monkeypatch.setattr(serve_module, "listen", listen)
    monkeypatch.setattr(serve_module, "serve_http", lambda server, sock, http: served.append(http))
    args = ["serve", "--tasks", str(tasks_file), "--task", tasks[0].id, "--transport", "http", "--host", "0.0.0.0",
            "--allow-remote", "box.lan,10.0.0.5", "--no-auth"]
    assert main(args) == 0
    assert [s.names() for s in served] == [("box.lan", "10.0.0.5")]  # the names DNS-rebinding protection admits
    err = capsys.readouterr().err
    assert "warning: --no-auth: serving on 0.0.0.0:" in err and "without authentication" in err
    assert f"can call the tools of task {tasks[0].id} (crm)" in err
    assert "Requests must name one of these hosts: box.lan, 10.0.0.5" in err


def test_a_busy_port_is_one_clear_error(tasks_file: Path, tasks: list[TaskSpec],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        args = ["serve", "--tasks", str(tasks_file), "--task", tasks[0].id, "--transport", "http", "--port", str(port)]
        assert main(args) == 2
    _one_error_line(capsys, f"harness: error: cannot listen on 127.0.0.1:{port} (address already in use; pick "
                            "another --port, or --port 0 for a free one)")
