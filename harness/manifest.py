"""``OUT/manifest.json``: what a run was (config, task set, seeds, versions) and how far it got.

A restarted run must be the same run: ``check_resumable`` compares the identity of the stored
config with the new one and names the first difference.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.errors import RunFileError
from harness.trajectory import SCHEMA_VERSION
from mcp_services.tasks.spec import TaskSpec

__all__ = ["MANIFEST_FILE", "check_resumable", "now_utc", "read_manifest", "tasks_digest", "versions", "write_manifest"]

MANIFEST_FILE = "manifest.json"
_PACKAGES = (
    "compoworld", "mcp", "pydantic", "sqlalchemy", "litellm", "tenacity", "torch", "transformers", "vllm", "datasets",
)
#: Config entries that may change between a run and its restart (they do not change trajectories).
_MAY_CHANGE = frozenset({"concurrency", "rollouts", "transport", "workers", "call_timeout", "episode_timeout"})


def versions() -> dict[str, str]:
    """Python and the installed versions of the packages that shape a trajectory (no imports)."""
    found = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def tasks_digest(tasks: list[TaskSpec]) -> str:
    """Ids are content hashes, so the ordered ids identify the task set."""
    return hashlib.sha256("\n".join(t.id for t in tasks).encode()).hexdigest()


def read_manifest(out: Path) -> dict[str, Any] | None:
    path = out / MANIFEST_FILE
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunFileError(f"{path} is not valid JSON ({exc.msg}); remove it or use another --out") from None
    if not isinstance(manifest, dict) or "config" not in manifest:
        raise RunFileError(f"{path} is not a harness run manifest; use another --out")
    return manifest


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Atomically (write, fsync, rename): a crash never leaves half a manifest."""
    path = out / MANIFEST_FILE
    tmp = out / f".{MANIFEST_FILE}.tmp"
    manifest = {**manifest, "schema_version": SCHEMA_VERSION, "updated_at": now_utc()}
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=True)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _difference(key: str, old: Any, new: Any) -> str:
    """One setting that differs, as a person reads it: ``agent: hf:/nope -> reference``."""
    if isinstance(old, dict) and isinstance(new, dict):
        if old.get("spec") != new.get("spec"):
            return f"{key}: {old.get('spec')} -> {new.get('spec')}"
        inner = next(k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))
        return _difference(f"{key} {inner}", old.get(inner), new.get(inner))
    shown = [json.dumps(v) if isinstance(v, (dict, list)) or v is None else str(v) for v in (old, new)]
    return f"{key}: {shown[0]} -> {shown[1]}"


def check_resumable(stored: dict[str, Any], config: dict[str, Any], digest: str, out: Path) -> None:
    """Raise ``RunFileError`` if ``out`` holds a different run, naming the first difference on one line."""
    old = stored.get("config", {})
    again = "restart with the same arguments, or use another --out"
    for key in sorted(set(old) | set(config)):
        if key in _MAY_CHANGE:
            continue
        if old.get(key) != config.get(key):
            raise RunFileError(
                f"{out} holds a run with other arguments: {_difference(key, old.get(key), config.get(key))}", again
            )
    if stored.get("tasks", {}).get("sha256") != digest:
        raise RunFileError(f"{out} holds a run over a different task set", "restart with the same tasks, or use another --out")
    if config.get("rollouts", 0) < old.get("rollouts", 0):
        raise RunFileError(
            f"{out} holds {old.get('rollouts')} rollouts per task", "--rollouts can grow on a restart, not shrink"
        )


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
