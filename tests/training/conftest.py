"""Pytest fixtures of the training tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WriteRun = Callable[[list[dict[str, Any]]], Path]


@pytest.fixture
def write_run(tmp_path: Path) -> WriteRun:
    """Write records to a fresh RUN_DIR/trajectories.jsonl and return RUN_DIR."""

    def write(records: list[dict[str, Any]]) -> Path:
        run_dir = tmp_path / "run"
        run_dir.mkdir(exist_ok=True)
        lines = [json.dumps(record) for record in records]
        (run_dir / "trajectories.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return run_dir

    return write


@pytest.fixture(scope="session")
def qwen3_tokenizer() -> Any:
    pytest.importorskip("trl")
    from harness.agents.models import TINY_QWEN3, load_tokenizer

    return load_tokenizer(TINY_QWEN3)
