"""The litellm path end to end against a local, scripted OpenAI-compatible server (no network)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, tool_call
from harness.agents import AgentConfig, make_agent
from harness.cli import main
from harness.collect import CollectConfig, collect
from harness.errors import AgentUnavailableError

pytest.importorskip("litellm")
pytest.importorskip("tenacity")
pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

MODEL = "hosted_vllm/Qwen/Qwen3-8B"


def note_task_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Plays the note task like vLLM's hermes parser would report it, with one malformed call first."""
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done == 0:
        return {"content": None, "tool_calls": [
            tool_call("chatcmpl-tool-9f2", "crm__search_contacts", '{"query": "David Anderson"'),  # bad JSON
            tool_call("chatcmpl-tool-a41", "crm__search_contacts", {"query": "David Anderson"}),
        ]}
    if done == 2:
        return {"content": "", "tool_calls": [tool_call("chatcmpl-tool-c77", "crm__add_note", {
            "entity_type": "company", "entity_id": "co_0004", "body": "Renewal call booked"})]}
    return {"content": "I added the note to Johnston-Roberts.", "reasoning_content": "All done."}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_litellm_agent_solves_a_task_through_an_openai_compatible_server(tmp_path: Path, tasks_file: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(note_task_reply) as server:
        code = main(["collect", "--tasks", str(tasks_file), "--agent", f"litellm:{MODEL}", "--api-base", server.url,
                     "--out", str(out), "--temperature", "0.3", "--max-tokens", "256", "--no-progress",
                     "--concurrency", "1", "--mode", "direct"])  # the scripted replies call direct-mode tools
    assert code == 0
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    note = next(r for r in records if "note-on-company" in r["criteria"])
    assert note["passed"] and note["agent"] == f"litellm:{MODEL}"
    assert json.loads(note["messages"][3]["content"])["error"]["code"] == "invalid_argument"  # the bad call
    assert note["messages"][2]["tool_calls"][0]["id"] == "call_0_0"  # our ids, not the server's
    assert note["messages"][-1] == {"role": "assistant", "content": "I added the note to Johnston-Roberts.",
                                    "reasoning_content": "All done."}
    first = server.requests[0]
    assert first["model"] == "Qwen/Qwen3-8B" and first["temperature"] == 0.3 and first["max_tokens"] == 256
    assert isinstance(first["seed"], int) and any(t["function"]["name"] == "crm__add_note" for t in first["tools"])
    later = next(r for r in server.requests if len(r["messages"]) > 3)
    assert later["messages"][2]["tool_calls"][0]["id"] == "call_0_0"
    assert all("reasoning_content" not in m for r in server.requests for m in r["messages"])


def test_an_endpoint_where_nothing_listens_stops_the_run_at_once_with_one_line(
    tmp_path: Path, tasks_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: a missing model server cost 45 s of silent retries before its error."""
    from harness.agents.litellm_agent import import_litellm

    litellm = import_litellm()
    real, sent = litellm.acompletion, []

    async def counted(**request: Any) -> Any:
        sent.append(request)
        return await real(**request)

    monkeypatch.setattr(litellm, "acompletion", counted)
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    code = main(["collect", "--tasks", str(tasks_file), "--agent", f"litellm:{MODEL}", "--api-base", url,
                 "--concurrency", "1", "--out", str(tmp_path / "run"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(sent) == 1  # not retried: the default is 4 retries
    assert err[-1] == (f"harness: error: nothing answers at {url} for model {MODEL} (connection refused: Connect call "
                       f"failed ('127.0.0.1', {url.split(':')[2].split('/')[0]})): start the model server there and "
                       "wait until it says it is ready, or fix --api-base")
    assert "Traceback" not in "\n".join(err)
    assert not (tmp_path / "run" / "trajectories.jsonl").read_text()  # nothing half-done was written


def test_transient_server_errors_are_retried_with_backoff_and_each_wait_is_said(
    tmp_path: Path, tasks_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOpenAI(lambda body: 503) as server:
        agent = make_agent(AgentConfig(f"litellm:{MODEL}", api_base=server.url, retries=2, retry_wait=0.01), {})
        with pytest.raises(AgentUnavailableError, match="after 3 attempt"):
            collect(CollectConfig(out=tmp_path / "run", tasks_file=tasks_file, progress=False, concurrency=1),
                    agent=agent, log=lambda _: None)
    assert len(server.requests) == 3
    said = [r.getMessage() for r in caplog.records if r.name == "harness.agents.litellm_agent"]
    assert [m.split(" failed")[0] for m in said] == [f"model {MODEL} at {server.url}: attempt {n} of 3" for n in (1, 2)]
    assert all("ServiceUnavailableError" in m and "trying again in 0 s" in m for m in said), said


def test_api_key_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                           tasks_file: Path) -> None:
    monkeypatch.delenv("COMPOWORLD_TEST_KEY", raising=False)
    code = main(["collect", "--tasks", str(tasks_file), "--agent", f"litellm:{MODEL}", "--api-key-env",
                 "COMPOWORLD_TEST_KEY", "--out", str(tmp_path / "run")])
    assert code == 2
