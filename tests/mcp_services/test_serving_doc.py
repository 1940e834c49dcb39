"""docs/serving.md says what the code does: its commands parse and are accepted, its defaults are the code's."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from mcp_services.cli import _parser
from mcp_services.serving.limits import Limits
from mcp_services.serving.options import http_serving

DOC = (Path(__file__).resolve().parents[2] / "docs" / "serving.md").read_text(encoding="utf-8")


def doc_commands() -> list[list[str]]:
    """Every ``mcp-services`` command of the doc's shell blocks, continuation lines joined."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", DOC, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith(".venv/bin/mcp-services "):
                commands.append(shlex.split(line)[1:])
    return commands


@pytest.mark.parametrize("argv", doc_commands(), ids=lambda argv: " ".join(argv[:3]))
def test_each_command_of_the_doc_is_accepted_as_written(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TOKEN", "a-token-of-the-right-length-0123")
    args = _parser().parse_args(argv)
    if args.command == "serve":
        http = http_serving(args)  # every combination of the doc passes the checks a server makes
        assert http.auth is not None or http.no_auth or http.names() == ()


def test_the_limits_table_gives_the_code_defaults() -> None:
    table = dict(re.findall(r"^\| `(--[a-z-]+) N` \| ([\d,]+)", DOC, flags=re.M))
    defaults = Limits()
    assert table == {
        "--max-sessions-per-client": f"{defaults.sessions_per_client:,}",
        "--calls-per-second": f"{defaults.calls_per_second:,g}",
        "--max-result-bytes": f"{defaults.max_result_bytes:,}",
    }
