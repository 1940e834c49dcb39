"""SFT with TRL on the CPU: templates, assistant-only labels, the CLI end to end, clear errors."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.training.conftest import WriteRun
from tests.training.trajectories import (
    FINAL_ANSWER,
    INSTRUCTION,
    SYSTEM,
    TOOL_RESULTS,
    make_trajectory,
    short_trajectory,
)
from training.cli import main
from training.errors import TrainingInputError

pytestmark = pytest.mark.train
pytest.importorskip("trl")

REPO = Path(__file__).resolve().parents[2]


def _labelled_spans(input_ids: list[int], labels: list[int]) -> list[list[int]]:
    spans: list[list[int]] = []
    current: list[int] = []
    for token, label in zip(input_ids, labels, strict=True):
        if label != -100:
            assert label == token
            current.append(token)
        elif current:
            spans.append(current)
            current = []
    return spans + ([current] if current else [])


def _assert_only_assistant_text(spans: list[str]) -> None:
    labelled = "".join(spans)
    assert '{"name": "crm__search_contacts", "arguments": {"query": "Ana Ruiz"}}' in labelled
    tickets_call = '{"name": "helpdesk__list_tickets", "arguments": {"email": "ana.ruiz@brightline.example", "status": '
    assert tickets_call + '"open"}}' in labelled  # the second of two parallel calls
    assert "I found Ana." in labelled and FINAL_ANSWER in labelled
    for text in (SYSTEM, INSTRUCTION, "<tools>", "tool_response", *TOOL_RESULTS.values()):
        assert text not in labelled
    for span in spans:  # every turn is trained to stop
        assert span.rstrip("\n").endswith("<|im_end|>")


@contextmanager
def _chat_template(tokenizer: Any, template: str | None) -> Iterator[None]:
    saved = tokenizer.chat_template
    tokenizer.chat_template = template
    try:
        yield
    finally:
        tokenizer.chat_template = saved


def test_qwen3_dataset_labels_only_assistant_tokens(write_run: WriteRun, qwen3_tokenizer: Any, tmp_path: Path) -> None:
    from harness.agents.models import build_tiny_qwen3
    from training.sft import build_trainer, check_chat_template
    from training.sft_data import build_sft_data
    from training.sft_settings import SFTSettings

    from trl.chat_template_utils import qwen3_training_chat_template

    assert check_chat_template(qwen3_tokenizer) == qwen3_training_chat_template
    run_dir = write_run([make_trajectory("a")])
    data = build_sft_data(run_dir, val_fraction=0.0)
    settings = SFTSettings(data=run_dir, out=tmp_path / "out", max_steps=1)
    trainer, _ = build_trainer(
        settings, data, build_tiny_qwen3(qwen3_tokenizer, seed=0), qwen3_tokenizer, str(tmp_path / "scratch")
    )
    example = trainer.train_dataset[0]
    rendered = qwen3_tokenizer.decode(example["input_ids"])
    assert rendered.startswith("<|im_start|>system\n" + SYSTEM)
    assert '"name": "payments__refund_charge"' in rendered  # the tools reached the system turn
    spans = [qwen3_tokenizer.decode(s) for s in _labelled_spans(example["input_ids"], example["labels"])]
    assert len(spans) == 5  # five assistant turns
    _assert_only_assistant_text(spans)


def test_chatml_tools_template_masks_only_assistant_tokens(write_run: WriteRun, qwen3_tokenizer: Any) -> None:
    # The SmolLM2 template, rendered with the Qwen3 tokenizer (same <|im_start|>/<|im_end|> specials) to stay fast.
    from trl.chat_template_utils import (
        is_chat_template_prefix_preserving,
        is_chat_template_stop_token_trained,
        supports_tool_calling,
    )

    from harness.agents.models import chatml_tools_template
    from training.sft import check_chat_template
    from training.sft_data import build_sft_data

    row = build_sft_data(write_run([make_trajectory("a")]), val_fraction=0.0).train[0]
    with _chat_template(qwen3_tokenizer, chatml_tools_template()):
        assert check_chat_template(qwen3_tokenizer) is None  # has markers: SFTTrainer uses it as is
        assert supports_tool_calling(qwen3_tokenizer)
        assert is_chat_template_prefix_preserving(qwen3_tokenizer)
        assert is_chat_template_stop_token_trained(qwen3_tokenizer)
        out = qwen3_tokenizer.apply_chat_template(
            row["messages"], tools=json.loads(row["tools"]), tokenize=True, return_dict=True,
            return_assistant_tokens_mask=True,
        )
    spans = [qwen3_tokenizer.decode(s) for s in _labelled_spans(out["input_ids"], [
        t if m else -100 for t, m in zip(out["input_ids"], out["assistant_masks"], strict=True)
    ])]
    assert len(spans) == 5
    assert not any("<think>" in span for span in spans)
    _assert_only_assistant_text(spans)


def test_template_without_generation_markers_or_tool_calls_is_rejected(qwen3_tokenizer: Any) -> None:
    from training.sft import check_chat_template

    plain = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    with _chat_template(qwen3_tokenizer, plain), pytest.raises(TrainingInputError, match="no {% generation %}"):
        check_chat_template(qwen3_tokenizer)
    drops_tools = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}{% generation %}"
        "{{ m.content }}<|im_end|>{% endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}"
    )
    with _chat_template(qwen3_tokenizer, drops_tools), pytest.raises(TrainingInputError, match="drops tool calls"):
        check_chat_template(qwen3_tokenizer)


def test_tiny_qwen3_is_seeded_and_leaves_global_rng_alone(qwen3_tokenizer: Any) -> None:
    import torch

    from harness.agents.models import build_tiny_qwen3

    torch_state, python_state = torch.random.get_rng_state(), random.getstate()
    first = build_tiny_qwen3(qwen3_tokenizer, seed=7).state_dict()
    second = build_tiny_qwen3(qwen3_tokenizer, seed=7).state_dict()
    other = build_tiny_qwen3(qwen3_tokenizer, seed=8).state_dict()
    assert torch.equal(torch.random.get_rng_state(), torch_state) and random.getstate() == python_state
    name = "model.layers.0.self_attn.q_proj.weight"
    assert torch.equal(first[name], second[name]) and not torch.equal(first[name], other[name])


def test_cli_trains_two_steps_and_saves_everything(write_run: WriteRun, tmp_path: Path) -> None:
    import torch

    run_dir = write_run([short_trajectory("a"), short_trajectory("a", 1), short_trajectory("b"), short_trajectory("c")])
    out = tmp_path / "model"
    rng_before = torch.random.get_rng_state()
    config = tmp_path / "smoke.yaml"
    config.write_text("max_steps: 50\nlearning_rate: 1e-3\nmax_length: 256\n")
    argv = ["sft", "--data", str(run_dir), "--out", str(out), "--model", "tiny-qwen3", "--config", str(config),
            "--max-steps", "2", "--val-fraction", "0.34", "--seed", "3"]
    assert main(argv) == 0
    assert torch.equal(torch.random.get_rng_state(), rng_before)  # the Trainer's set_seed did not leak
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["steps"] == 2 and summary["saved"] == "model"
    assert summary["final_loss"] > 0 and summary["eval_loss"] > 0
    assert summary["split"]["n_duplicates"] == 1
    assert summary["split"]["n_train_tasks"] == 2 and summary["split"]["n_validation_tasks"] == 1
    # Flags win over the config file; the file's other values stay.
    assert summary["settings"]["max_steps"] == 2 and summary["settings"]["learning_rate"] == 1e-3
    assert summary["settings"]["seed"] == 3 and summary["settings"]["max_length"] == 256
    assert summary["chat_template"] == "trl-training-variant"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"):
        assert (out / name).is_file(), name

    from transformers import AutoModelForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    # A saved run is itself a valid --model: a plain Qwen3 and the inference template (TRL re-masks it next time).
    assert AutoModelForCausalLM.from_pretrained(out).config.model_type == "qwen3"
    assert (out / "chat_template.jinja").read_text() == qwen3_chat_template


def test_lora_run_saves_an_adapter_and_repeats_exactly(
    write_run: WriteRun, qwen3_tokenizer: Any, tmp_path: Path
) -> None:
    from harness.agents.models import build_tiny_qwen3
    from training.sft import train_and_save
    from training.sft_data import build_sft_data
    from training.sft_settings import SFTSettings

    run_dir = write_run([short_trajectory("a", with_tools=False), short_trajectory("b", with_tools=False)])
    summaries = []
    for name in ("first", "second"):
        settings = SFTSettings(data=run_dir, out=tmp_path / name, max_steps=1, max_length=256, lora=True, lora_r=4,
                               lora_alpha=8, learning_rate=1e-2, val_fraction=0.0, seed=5)
        data = build_sft_data(settings.data, val_fraction=0.0, seed=5)
        summaries.append(train_and_save(settings, data, build_tiny_qwen3(qwen3_tokenizer, seed=5), qwen3_tokenizer))
    first, second = summaries
    assert first["saved"] == "lora-adapter" and first["steps"] == 1 and first["eval_loss"] is None
    assert (tmp_path / "first" / "adapter_config.json").is_file()
    # Same seed, same output: the same loss and, after the update, byte-identical adapter weights.
    assert first["final_loss"] == second["final_loss"]
    adapter = "adapter_model.safetensors"
    assert (tmp_path / "first" / adapter).read_bytes() == (tmp_path / "second" / adapter).read_bytes()


def _cli_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith("training: error: ")
    return err


def test_cli_missing_run_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _cli_error(capsys, ["sft", "--data", str(tmp_path), "--out", str(tmp_path / "o"), "--model", "tiny-qwen3"])
    assert f"no trajectories.jsonl in {tmp_path}: run `harness collect` first" in err


def test_cli_unknown_model_is_one_line_and_exit_2(
    write_run: WriteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run([short_trajectory("a")])
    argv = ["sft", "--data", str(run_dir), "--out", str(tmp_path / "o"), "--model", str(tmp_path / "nope")]
    err = _cli_error(capsys, argv)
    assert "is neither a built-in name, a known model id nor a model folder" in err


def test_cli_tokenizer_without_chat_template_is_rejected(
    write_run: WriteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    model_dir = tmp_path / "no-template"  # a tiny word-level tokenizer: loads in milliseconds
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")))
    tokenizer.save_pretrained(model_dir)
    run_dir = write_run([short_trajectory("a")])
    err = _cli_error(capsys, ["sft", "--data", str(run_dir), "--out", str(tmp_path / "o"), "--model", str(model_dir)])
    assert err.endswith("tokenizer has no chat template; pass a model whose tokenizer has one")
    assert not (tmp_path / "o").exists()  # rejected before any training


def test_cli_bad_config_is_one_line_and_exit_2(
    write_run: WriteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"learning_rate": 1e-5, "lora_rank": 8}')
    run_dir = write_run([short_trajectory("a")])
    err = _cli_error(capsys, ["sft", "--data", str(run_dir), "--out", str(tmp_path / "o"), "--config", str(config), "--model", "tiny-qwen3"])
    assert "unknown setting(s) lora_rank" in err
    config.write_text("{not json")
    assert "is not valid JSON" in _cli_error(
        capsys, ["sft", "--data", str(run_dir), "--out", str(tmp_path / "o"), "--config", str(config), "--model", "tiny-qwen3"]
    )
    assert "max_steps must be" in _cli_error(
        capsys, ["sft", "--data", str(run_dir), "--out", str(tmp_path / "o"), "--max-steps", "0", "--model", "tiny-qwen3"]
    )


def test_import_training_stays_light() -> None:
    code = (
        "import sys, training, training.cli, training.rewards, training.sft, training.sft_data, harness.agents.models;"
        "heavy = {'torch', 'transformers', 'trl', 'datasets', 'peft'} & set(sys.modules); assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=60)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("COMPOWORLD_SLOW_TESTS"), reason="set COMPOWORLD_SLOW_TESTS=1 (about a minute)")
def test_smollm2_trains_one_step_and_saves_a_plain_model(write_run: WriteRun, tmp_path: Path) -> None:
    from training.sft import run_sft
    from training.sft_settings import SFTSettings

    out = tmp_path / "smollm2"
    summary = run_sft(SFTSettings(data=write_run([short_trajectory("a")]), out=out, model="smollm2", max_steps=1,
                                  max_length=512, val_fraction=0.0))
    assert summary["steps"] == 1 and summary["chat_template"] == "tokenizer"
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config and config["model_type"] == "llama"


def test_max_length_is_the_longest_example_within_the_model_context() -> None:
    from training.sft import fit_lengths

    fit = fit_lengths([900, 1200, 15000], None, 40960)
    assert (fit.max_length, fit.chosen_by, fit.n_dropped, fit.median_tokens) == (15000, "longest example", 0, 1200.0)
    capped = fit_lengths([900, 1200, 15000], None, 4096)
    assert (capped.max_length, capped.chosen_by, capped.n_dropped) == (4096, "model context", 1)
    given = fit_lengths([900, 1200, 15000, 20000], 1000, 40960)
    assert (given.max_length, given.n_dropped) == (1000, 3)
    assert given.describe() == (
        "max_length 1,000 tokens (max_length setting) drops 3 of 4 examples longer than it (longest 20,000); "
        "1 of 4 examples kept"
    )
    with pytest.raises(TrainingInputError, match=r"the shortest is 900 tokens, the longest 15,000; leave --max-length"):
        fit_lengths([900, 1200, 15000], 512, 40960)


def test_a_given_max_length_drops_exactly_the_longer_examples_whole(
    write_run: WriteRun, qwen3_tokenizer: Any, tmp_path: Path
) -> None:
    from harness.agents.models import build_tiny_qwen3
    from training.sft import build_trainer
    from training.sft_data import build_sft_data
    from training.sft_settings import SFTSettings

    run_dir = write_run([short_trajectory("a"), short_trajectory("b"), make_trajectory("c")])
    data = build_sft_data(run_dir, val_fraction=0.0)
    model = build_tiny_qwen3(qwen3_tokenizer, seed=0)
    auto, fit = build_trainer(
        SFTSettings(data=run_dir, out=tmp_path / "o", max_steps=1), data, model, qwen3_tokenizer, str(tmp_path)
    )
    lengths = sorted(len(ids) for ids in auto.train_dataset["input_ids"])
    assert fit.max_length == lengths[-1] and fit.n_dropped == 0 and len(auto.train_dataset) == 3
    settings = SFTSettings(data=run_dir, out=tmp_path / "o", max_steps=1, max_length=lengths[-1] - 1)
    trainer, fit = build_trainer(settings, data, model, qwen3_tokenizer, str(tmp_path))
    assert fit.n_dropped == 1 and len(trainer.train_dataset) == 2
    # The kept examples are whole: nothing was truncated.
    assert sorted(len(ids) for ids in trainer.train_dataset["input_ids"]) == lengths[:2]


def test_cut_long_examples_end_with_an_assistant_turn_instead_of_being_dropped(
    write_run: WriteRun, qwen3_tokenizer: Any, tmp_path: Path
) -> None:
    from harness.agents.models import build_tiny_qwen3
    from training.sft import build_trainer, turn_cut
    from training.sft_data import build_sft_data
    from training.sft_settings import SFTSettings

    run_dir = write_run([short_trajectory("a"), make_trajectory("c")])
    data = build_sft_data(run_dir, val_fraction=0.0)
    model = build_tiny_qwen3(qwen3_tokenizer, seed=0)
    whole, _ = build_trainer(SFTSettings(data=run_dir, out=tmp_path / "o", max_steps=1), data, model,
                             qwen3_tokenizer, str(tmp_path))
    examples = sorted(whole.train_dataset, key=lambda example: len(example["input_ids"]))
    long_ids = examples[-1]["input_ids"]
    limit = len(long_ids) - 1  # one token short: the final answer's turn cannot fit
    settings = SFTSettings(data=run_dir, out=tmp_path / "o", max_steps=1, max_length=limit, cut_long_examples=True)
    trainer, fit = build_trainer(settings, data, model, qwen3_tokenizer, str(tmp_path))
    assert (fit.n_cut, fit.n_dropped, len(trainer.train_dataset)) == (1, 0, 2)
    cut = max(trainer.train_dataset, key=lambda example: len(example["input_ids"]))
    n = len(cut["input_ids"])
    assert n == turn_cut([label != -100 for label in examples[-1]["labels"]], limit) < limit
    assert cut["input_ids"] == long_ids[:n] and len(cut["labels"]) == n  # a prefix, labels cut alike
    text = qwen3_tokenizer.decode(cut["input_ids"])
    assert text.endswith("</tool_call><|im_end|>\n") and cut["labels"][-1] != -100  # the model's own end of turn
    assert fit.kept_mean_tokens == (n + len(examples[0]["input_ids"])) / 2
    assert fit.describe().startswith(f"max_length {limit:,} tokens (max_length setting) cuts 1 of 2 examples longer than it")
    assert fit.describe().endswith("; cut ones end with their last assistant turn that fits); 2 of 2 examples kept")


def test_turn_cut_keeps_whole_turns_only() -> None:
    from training.sft import turn_cut

    trained = [False, False, True, True, False, True, True, True, False]
    assert turn_cut(trained, 9) == 8 and turn_cut(trained, 7) == 4 and turn_cut(trained, 3) is None


def test_cli_max_length_that_keeps_nothing_is_one_line_and_exit_2(
    write_run: WriteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run([short_trajectory("a"), short_trajectory("b")])
    assert main(["sft", "--data", str(run_dir), "--out", str(tmp_path / "o"), "--max-length", "16", "--model", "tiny-qwen3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the datasets library's progress bars
    assert err.startswith("training: error: ") and "Traceback" not in err
    assert "every example is longer than max_length 16 (max_length setting): the shortest is" in err
    assert "leave --max-length out to fit the longest" in err


def test_the_summary_line_s_counts_agree_and_its_loss_has_four_significant_digits() -> None:
    from dataclasses import asdict

    from training.sft import LengthFit, summary_line

    summary = {
        "saved": "model", "settings": {"out": "runs/sft"}, "steps": 2, "final_loss": 11.935921669006348,
        "lengths": asdict(LengthFit(4096, "max_length setting", 49, 45, 6118.0, 9452, 8192)),
        "split": {"n_train_examples": 45, "n_validation_examples": 4},
        "n_train_examples_after_length_fit": 3, "n_validation_examples_after_length_fit": 1,
    }  # fmt: skip
    assert summary_line(summary) == (
        "saved model to runs/sft: 2 steps, final loss 11.94; max_length 4,096 tokens (max_length setting) drops 45 "
        "of 49 examples longer than it (longest 9,452); 4 of 49 examples kept: 3 of 45 training and 1 of 4 "
        "validation examples"
    )
    from training.sft import format_loss

    assert (format_loss(6.013e-05), format_loss(0.5), format_loss(None)) == ("6.013e-05", "0.5", "not logged")
