"""Settings objects from config files: reading ``.json``/``.yaml`` files and type-checking their values.

Shared by ``SFTSettings`` and ``RLSettings``: a config file holds any subset of a settings
dataclass's fields, command-line flags override it, and unknown keys or wrongly typed values are
errors, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from training.errors import TrainingInputError

__all__ = ["load_config_file", "settings_from_mapping", "settings_values", "typed_value"]

T = TypeVar("T")


def typed_value(name: str, value: Any, hint: Any) -> Any:
    """``value`` checked against the field's type; numeric strings become floats (YAML reads 1e-4 as a string)."""
    members = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    kinds = {typing.get_origin(member) or member for member in members}  # list[str] -> list, dict[...] -> dict
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if value is None and type(None) in kinds:
        return None
    if float in kinds and (is_number or isinstance(value, str)):
        try:
            return float(value)
        except ValueError:
            pass
    elif int in kinds and isinstance(value, int) and not isinstance(value, bool):
        return value
    elif Path in kinds and isinstance(value, str | Path):
        return Path(value)
    elif list in kinds and isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    elif any(kind in kinds and isinstance(value, kind) for kind in (bool, str, dict)):
        return value
    expected = " or ".join(sorted(getattr(kind, "__name__", str(kind)) for kind in kinds))
    raise TrainingInputError(f"setting {name} must be {expected}, got {value!r}")


def settings_from_mapping(cls: type[T], values: Mapping[str, Any], required: Sequence[str]) -> T:
    """An instance of the settings dataclass ``cls`` from ``values``, every value type-checked first."""
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise TrainingInputError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(names)}")
    missing = [name for name in required if values.get(name) is None]
    if missing:
        raise TrainingInputError(f"missing setting(s): {', '.join(missing)}")
    hints = typing.get_type_hints(cls)
    return cls(**{name: typed_value(name, value, hints[name]) for name, value in values.items()})


def load_config_file(path: str | Path) -> dict[str, Any]:
    """The settings in a ``.json``, ``.yaml`` or ``.yml`` file, as a mapping (validated later)."""
    path = Path(path)
    if not path.is_file():
        raise TrainingInputError(f"config file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            raise TrainingInputError(f"config file {path} is not valid JSON: {error}") from None
    elif path.suffix in (".yaml", ".yml"):
        import yaml  # a dependency of transformers and accelerate, so present with the train extra

        try:
            values = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise TrainingInputError(f"config file {path} is not valid YAML: {error}") from None
    else:
        raise TrainingInputError(f"config file {path} must end in .json, .yaml or .yml")
    if not isinstance(values, dict):
        raise TrainingInputError(f"config file {path} must hold a mapping of setting names to values")
    return values


def settings_values(config: str | None, flags: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """A command's settings: the config file's, overridden by the flags actually given (argparse dests
    named like the settings). The model must be named by one or the other: no silent default."""
    values: dict[str, Any] = load_config_file(config) if config else {}
    values.update({name: value for name, value in flags.items() if name in fields and value is not None})
    if not values.get("model"):
        from training.model_choice import resolve_model

        resolve_model(None, config_file=config)  # raises: one line saying how to name one
    return values
