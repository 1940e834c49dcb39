"""``harness claude-config``: the Claude Desktop entry that serves one task, and writing it in place.

Claude Desktop starts each server in ``mcpServers`` as a stdio subprocess
(``{"command", "args", "env"}``, the shape of ``StdioServerParameters``). The entry runs
``python -m harness serve`` with absolute paths (Claude Desktop's working folder is unknown) and a
file-backed ``--db`` folder, so the work survives a restart and ``harness grade`` can grade it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from harness.errors import HarnessInputError
from mcp_services.files import write_atomically
from mcp_services.registry import provider_environment
from mcp_services.serving.surface import Mode
from mcp_services.tasks.spec import TaskSpec

__all__ = ["claude_config_path", "claude_desktop_entry", "default_db_dir", "merge_entry", "server_name"]

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the folder that holds the harness package


def server_name(task: TaskSpec) -> str:
    return f"compoworld-{task.id[:8]}"


def default_db_dir(task: TaskSpec) -> Path:
    return Path.home() / ".compoworld" / "episodes" / task.id


def claude_desktop_entry(
    tasks_file: Path, task: TaskSpec, *, mode: Mode = "direct", db_dir: Path | None = None, python: str | None = None
) -> dict[str, Any]:
    """One ``mcpServers`` value: absolute interpreter (not resolved: a venv's python is a link), paths, db."""
    db = (db_dir or default_db_dir(task)).expanduser().absolute()
    args = [
        "-m",
        "harness",
        "serve",
        "--tasks",
        str(tasks_file.expanduser().absolute()),
        "--task",
        task.id,
        "--mode",
        mode,
        "--db",
        str(db),
    ]
    # PYTHONPATH imports this checkout even where it is not installed; the provider variables let the
    # server find generated and imported services the task mounts, as this process does.
    env = {"PYTHONPATH": str(_PACKAGE_ROOT), **provider_environment()}
    return {"command": python or os.path.abspath(sys.executable), "args": args, "env": env}


def claude_config_path() -> Path:
    """Where Claude Desktop reads its config on this platform."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return (
            Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
            / "Claude"
            / "claude_desktop_config.json"
        )
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "Claude" / "claude_desktop_config.json"


def merge_entry(config_file: Path, name: str, entry: dict[str, Any]) -> None:
    """Add or replace ``mcpServers[name]`` in ``config_file``, keeping everything else (atomic write)."""
    config: dict[str, Any] = {}
    if config_file.exists():
        try:
            loaded = json.loads(config_file.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise HarnessInputError(
                f"{config_file} is not valid JSON ({exc.msg}); fix it or pass another --config-file"
            ) from None
        if not isinstance(loaded, dict) or not isinstance(loaded.get("mcpServers", {}), dict):
            raise HarnessInputError(f"{config_file} is not a Claude Desktop config (an object with mcpServers)")
        config = loaded
    config.setdefault("mcpServers", {})[name] = entry
    # An existing config keeps its mode (it may hold other servers' keys); a new one gets the umask's.
    mode = stat.S_IMODE(config_file.stat().st_mode) if config_file.exists() else 0o666
    write_atomically(config_file, json.dumps(config, indent=2) + "\n", mode=mode)
