"""The OpenEnv adapter: a server on 127.0.0.1 with one private episode per session, and its typed client.

Skips without the ``openenv`` extra.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from adapter_tasks import adapter_tasks, harness_grades
from harness_fixtures import note_task, question_task

from harness.agents.reference import reference_answer, reference_calls
from harness.errors import HarnessInputError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("openenv") is None, reason="needs the openenv extra: pip install -e '.[openenv]'"
)

NOTE = {"entity_type": "company", "entity_id": "co_0004", "body": "Renewal call booked"}


def test_importing_harness_and_its_adapters_package_loads_no_framework() -> None:
    code = (
        "import sys, harness, harness.adapters, harness.adapters.episodes; "
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'verifiers', 'openenv', 'fastmcp', 'datasets'}); "
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


@pytest.fixture()
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    """``create_app(**params)`` served on 127.0.0.1 for one test; yields the base URL."""
    from harness.adapters.openenv import create_app, serving

    params = dict(getattr(request, "param", {}))
    params.setdefault("tasks", list(adapter_tasks()))
    with serving(create_app(**params)) as url:
        yield url


def _status(url: str) -> dict[str, Any]:
    return httpx.get(f"{url}/status", timeout=10).json()


@pytest.mark.parametrize(
    ("served", "mode"),
    [({"mode": "direct"}, "direct"), ({"mode": "discover"}, "discover")],
    indirect=["served"],
)
def test_reference_plans_through_openenv_get_the_harness_grades(served: str, mode: str) -> None:
    from harness.adapters.openenv import CompoWorldClient

    tasks = adapter_tasks()
    expected = harness_grades(tasks, mode)

    async def replay() -> dict[str, Any]:
        finals = {}
        async with CompoWorldClient(served) as env:
            assert [t["id"] for t in await env.list_tasks()] == [t.id for t in tasks]
            for task in tasks:
                start = await env.reset(task_id=task.id)
                assert start.observation.prompt[1]["content"] == task.instruction and start.observation.tools
                for name, arguments in reference_calls(task, mode):
                    step = await env.call(name, json.dumps(arguments))
                    assert not step.done and step.observation.success, step.observation.result
                finals[task.id] = await env.answer(reference_answer(task))
        return finals

    for task_id, final in asyncio.run(replay()).items():
        criteria, rubric_score, passed = expected[task_id]
        grade = final.observation.grade
        assert final.done
        assert (grade["criteria"], grade["rubric_score"], grade["passed"]) == (criteria, rubric_score, passed)
        assert final.reward == rubric_score and grade["stop"] == "answer"
    assert _status(served)["open_episodes"] == 0


TOKEN = "openenv-test-token-0123456789"


@pytest.mark.parametrize("served", [{"tasks": [note_task()], "auth_token": TOKEN}], indirect=True)
def test_with_a_token_only_a_client_that_sends_it_gets_in(served: str) -> None:
    from harness.adapters.openenv import CompoWorldClient

    assert httpx.get(f"{served}/tasks", timeout=10).status_code == 401
    assert httpx.get(f"{served}/tasks", timeout=10, headers={"authorization": "Bearer wrong-token-0123456789"}
                     ).status_code == 401
    task = note_task()

    async def sessions() -> tuple[str, float]:
        with pytest.raises(ConnectionError, match="403"):  # the handshake is refused before a socket opens
            await CompoWorldClient(served).connect()
        async with CompoWorldClient(served, token=TOKEN) as env:
            listed = await env.list_tasks()
            await env.reset(task_id=task.id)
            for name, arguments in reference_calls(task, "direct"):
                await env.call(name, arguments)
            final = await env.answer(reference_answer(task))
        return listed[0]["id"], final.reward

    assert asyncio.run(sessions()) == (task.id, 1.0)
    with pytest.raises(HarnessInputError, match="a token in a URL is refused"):
        CompoWorldClient(f"{served}?token={TOKEN}")


@pytest.mark.parametrize("served", [{"tasks": [note_task()], "reward": "binary"}], indirect=True)
def test_64_concurrent_sessions_each_see_only_their_own_world(served: str) -> None:
    from harness.adapters.openenv import CompoWorldClient

    n = 64
    task_id = note_task().id

    async def rollouts() -> tuple[list[Any], list[Any], int]:
        clients = [CompoWorldClient(served, message_timeout_s=120) for _ in range(n)]
        try:
            await asyncio.gather(*(c.connect() for c in clients))
            await asyncio.gather(*(c.reset(task_id=task_id) for c in clients))
            open_at_once = (await asyncio.to_thread(_status, served))["open_episodes"]
            notes = [{**NOTE, "body": f"Renewal call booked #{i}#"} for i in range(n)]
            await asyncio.gather(*(c.call("crm__add_note", note) for c, note in zip(clients, notes)))
            # Every session has written before any reads: a shared world would show all 64 notes.
            listing = {"entity_type": "company", "entity_id": "co_0004"}
            seen = await asyncio.gather(*(c.call("crm__list_notes", listing) for c in clients))
            finals = await asyncio.gather(*(c.answer("Done.") for c in clients))
            return seen, finals, open_at_once
        finally:
            await asyncio.gather(*(c.close() for c in clients))

    seen, finals, open_at_once = asyncio.run(rollouts())
    assert open_at_once == n
    for i, step in enumerate(seen):
        bodies = [note["body"] for note in json.loads(step.observation.result)["data"]["items"]]
        assert [b for b in bodies if "#" in b] == [f"Renewal call booked #{i}#"]
    assert all(final.done and final.reward == 1.0 for final in finals)  # one note added each: no collateral
    assert _status(served)["open_episodes"] == 0


@pytest.mark.parametrize("served", [{"tasks": [note_task(), question_task()]}], indirect=True)
def test_bad_calls_get_clear_errors_and_misuse_of_the_session_is_refused(served: str) -> None:
    from harness.adapters.openenv import CompoWorldAction, CompoWorldClient

    async def misuse() -> None:
        async with CompoWorldClient(served) as env:
            with pytest.raises(RuntimeError, match="call reset"):
                await env.call("crm__list_notes", "{}")
            with pytest.raises(RuntimeError, match="no task with id 'nope'"):
                await env.reset(task_id="nope")
            with pytest.raises(RuntimeError, match="reset needs task_id"):
                await env.reset()
            await env.reset(task_id=note_task().id)
            malformed = await env.call("crm__add_note", '{"entity_type": ')
            error = json.loads(malformed.observation.result)["error"]
            assert not malformed.done and error["code"] == "invalid_argument" and "not valid JSON" in error["message"]
            unknown = await env.call("crm__add_notes", NOTE)
            error = json.loads(unknown.observation.result)["error"]
            assert error["code"] == "unknown_tool" and "crm__add_note" in error["message"]
            with pytest.raises(ValueError, match="either a tool call"):
                CompoWorldAction(tool="crm__list_notes", answer="x")  # refused before it is sent
            final = await env.answer("I could not do it.")
            assert final.done and final.reward == 0.0 and final.observation.grade["n_tool_calls"] == 2
            with pytest.raises(RuntimeError, match="has ended"):
                await env.call("crm__add_note", NOTE)
            with pytest.raises(RuntimeError, match="has ended"):
                await env.answer("again")
            assert (await env.state()).done

    asyncio.run(misuse())
    # OpenEnv's stateless HTTP routes: a reset opens and closes an episode at once; a step has none.
    started = httpx.post(f"{served}/reset", json={"task_id": note_task().id}, timeout=30)
    assert started.status_code == 200 and started.json()["observation"]["task_id"] == note_task().id
    refused = httpx.post(f"{served}/step", json={"action": {"answer": "x"}}, timeout=10)
    assert refused.status_code == 409 and "call reset" in refused.json()["detail"]
    deadline = time.monotonic() + 30
    while _status(served)["open_episodes"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _status(served)["open_episodes"] == 0


@pytest.mark.parametrize("served", [{"tasks": [note_task()]}], indirect=True)
def test_a_plain_websocket_client_gets_a_clear_refusal_and_a_dropped_session_closes_its_episode(served: str) -> None:
    from websockets.asyncio.client import connect

    async def send(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
        await ws.send(json.dumps(message))
        return json.loads(await asyncio.wait_for(ws.recv(), timeout=30))

    async def drop() -> int:
        async with connect(served.replace("http://", "ws://") + "/ws") as ws:
            reply = await send(ws, {"type": "reset", "data": {"task_id": note_task().id}})
            assert reply["type"] == "observation"
            reply = await send(ws, {"type": "step", "data": {"tool": "crm__list_notes", "answer": "both"}})
            assert reply["type"] == "error" and reply["data"]["code"] == "VALIDATION_ERROR"
            assert "either a tool call" in json.dumps(reply["data"]["errors"])
            reply = await send(ws, {"type": "step", "data": {"tool": "crm__add_note", "arguments": NOTE}})
            assert json.loads(reply["data"]["observation"]["result"])["success"] is True
            during = (await asyncio.to_thread(_status, served))["open_episodes"]
            ws.transport.abort()  # the connection drops mid-episode: no close message, no answer
            return during

    assert asyncio.run(drop()) == 1
    deadline = time.monotonic() + 30
    while _status(served)["open_episodes"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _status(served)["open_episodes"] == 0


@pytest.mark.parametrize("served", [{"tasks": [note_task()], "max_steps": 2, "reward": "binary"}], indirect=True)
def test_an_episode_ends_and_is_graded_at_the_step_limit(served: str) -> None:
    from harness.adapters.openenv import CompoWorldClient

    async def run() -> tuple[Any, Any]:
        async with CompoWorldClient(served) as env:
            await env.reset(task_id=note_task().id)
            first = await env.call("crm__search_contacts", {"query": "David Anderson"})
            return first, await env.call("crm__add_note", NOTE)

    first, last = asyncio.run(run())
    assert not first.done
    assert last.done and last.reward == 1.0 and last.observation.grade["stop"] == "max_steps"
    assert json.loads(last.observation.result)["success"] is True


def test_a_new_reset_in_the_same_session_starts_from_a_fresh_world() -> None:
    from harness.adapters.openenv import CompoWorldAction, CompoWorldEnvironment

    env = CompoWorldEnvironment.from_tasks([note_task()], reward="binary")
    env.reset(task_id=note_task().id)
    env.step(CompoWorldAction(tool="crm__add_note", arguments=NOTE))
    env.reset(task_id=note_task().id)  # abandons the first episode
    where = {"entity_type": "company", "entity_id": "co_0004"}
    listing = env.step(CompoWorldAction(tool="crm__list_notes", arguments=where))
    assert "Renewal call booked" not in listing.result
    final = env.step(CompoWorldAction(answer="Nothing to do."))
    assert final.done and final.reward == 0.0
    env.close()


def test_reset_takes_a_task_id_prefix_as_every_harness_command_does() -> None:
    from harness.adapters.openenv import CompoWorldEnvironment

    env = CompoWorldEnvironment.from_tasks([note_task(), question_task()], reward="binary")
    try:
        assert env.reset(task_id=note_task().id[:6]).task_id == note_task().id
        assert env.reset(task_id=question_task().id[:4]).task_id == question_task().id
        with pytest.raises(HarnessInputError, match="no task with id 'zz' in this task set"):
            env.reset(task_id="zz")
    finally:
        env.close()


def test_bad_arguments_to_create_app_are_refused_with_a_clear_message() -> None:
    from harness.adapters.openenv import create_app

    tasks = [note_task()]
    with pytest.raises(HarnessInputError, match="CFRR is a group reward"):
        create_app(tasks=tasks, reward="cfrr")
    with pytest.raises(HarnessInputError, match="max_steps must be"):
        create_app(tasks=tasks, max_steps=0)
    with pytest.raises(HarnessInputError, match="mode must be one of"):
        create_app(tasks=tasks, mode="fast")
    with pytest.raises(HarnessInputError, match="task set is empty"):
        create_app(tasks=[])


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("served", [{"tasks": [note_task()]}], indirect=True)
def test_sessions_that_end_normally_log_no_server_traceback(served: str) -> None:
    from harness.adapters.openenv import CompoWorldClient

    records = _Records()
    server_log = logging.getLogger("uvicorn.error")
    server_log.addHandler(records)
    try:

        async def sessions() -> None:
            for _ in range(3):  # the client closes each session as it ends, as a trainer's do
                async with CompoWorldClient(served) as env:
                    await env.reset(task_id=note_task().id)
                    await env.answer("Done.")

        asyncio.run(sessions())
        deadline = time.monotonic() + 30
        while _status(served)["open_episodes"] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the server closes each socket after its session: time for a failure to be logged
    finally:
        server_log.removeHandler(records)
    errors = [r.getMessage() for r in records.records if r.levelno >= logging.WARNING]
    assert errors == []


def test_a_websocket_that_the_client_closed_first_is_a_quiet_end_and_other_errors_still_surface() -> None:
    from starlette.websockets import WebSocketDisconnect

    from harness.adapters.openenv import _QuietSessionEnd

    async def hung_up(scope: Any, receive: Any, send: Any) -> None:
        raise WebSocketDisconnect(code=1006)

    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise WebSocketDisconnect(code=1006) if scope["type"] == "http" else ValueError("a bug")

    asyncio.run(_QuietSessionEnd(hung_up)({"type": "websocket"}, None, None))
    with pytest.raises(WebSocketDisconnect):
        asyncio.run(_QuietSessionEnd(broken)({"type": "http"}, None, None))
    with pytest.raises(ValueError, match="a bug"):
        asyncio.run(_QuietSessionEnd(broken)({"type": "websocket"}, None, None))
