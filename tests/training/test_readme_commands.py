"""README's training commands, as written, on a freshly composed default run (CPU, tiny-qwen3).

The commands are read from README.md itself, so the README cannot drift from what is tested. The
default run is README's first command (``harness collect --out runs/default``) with a smaller
candidate count (``--default-tasks``): the same composer, seed and defaults, the first few tasks of
the default set, so that the test stays within a few minutes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.train, pytest.mark.slow]
pytest.importorskip("trl")

from tests.training.readme import in_folder, readme_command  # noqa: E402 - after the skip


@pytest.fixture(scope="module")
def default_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.cli import main as harness_main

    folder = tmp_path_factory.mktemp("readme")
    argv = in_folder(readme_command("harness", "collect --out runs/default"), folder)
    assert harness_main([*argv, "--default-tasks", "4", "--no-progress"]) == 0
    return folder


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # on a shared 2-core machine a second thread mostly spins
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_torch_thread")
def test_readme_sft_smoke_run_trains_on_the_default_run(default_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from training.cli import main
    from training.sft import format_loss

    argv = in_folder(readme_command("training", "sft --data runs/default"), default_run)
    assert main(argv) == 0
    out = Path(argv[argv.index("--out") + 1])
    summary = json.loads((out / "training_summary.json").read_text())
    lengths = summary["lengths"]
    # max_length comes from the data: every trajectory of the default run is kept, whole.
    assert lengths["chosen_by"] == "longest example" and lengths["n_dropped"] == 0
    assert lengths["max_length"] == lengths["longest_tokens"] <= lengths["context"]
    assert summary["steps"] == 2 and summary["n_train_examples_after_length_fit"] == summary["split"]["n_train_examples"]
    stdout = capsys.readouterr().out.strip()
    # It says which model it trained, how big it is and where, before training.
    parameters = summary["resolved_model"]["n_parameters"]
    line = rf"^model tiny-qwen3: Qwen3ForCausalLM, {parameters / 1e6:.1f}M parameters, .*; device (cpu|cuda \(.+\))$"
    assert re.search(line, stdout, re.MULTILINE)
    # The line it prints: counts that agree with each other, and a loss to four significant digits.
    printed = re.search(
        r"final loss (\S+); .*; (\d+) of (\d+) examples kept: (\d+) of (\d+) training and "
        r"(\d+) of (\d+) validation examples$",
        stdout,
    )
    assert printed is not None
    assert printed.group(1) == format_loss(summary["final_loss"])
    kept, total, train_kept, train, val_kept, val = map(int, printed.groups()[1:])
    assert (kept, total) == (train_kept + val_kept, train + val) and train == summary["split"]["n_train_examples"]
    assert (out / "model.safetensors").is_file()


@pytest.mark.usefixtures("one_torch_thread")
def test_readme_rl_smoke_run_trains_on_the_default_tasks(default_run: Path) -> None:
    from training.cli import main

    argv = in_folder(readme_command("training", "rl --tasks runs/default/tasks.jsonl"), default_run)
    assert main(argv) == 0
    out = Path(argv[argv.index("--out") + 1])
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["steps"] == 2 and summary["rollouts"]["episodes"] == 8
    records = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(records) == 8 and all(r["mode"] == "discover" for r in records)
    # Each rollout states the context it took, counted with the policy's own tokenizer.
    assert all(r["n_tokens"] > summary["longest_prompt_tokens"] // 2 for r in records)
