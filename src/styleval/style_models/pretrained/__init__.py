"""Shipped style models: each sub-folder is a model folder (see :mod:`styleval.style_models.model`); the names and
folders come from the registry (:mod:`styleval.models.registry`)."""
from __future__ import annotations

from pathlib import Path

from ...models import registry
from ..model import StyleModel

PRETRAINED_DIR = registry.shipped_dir(registry.STYLE)


def shipped_models() -> dict[str, Path]:
    """Names and folders of the models shipped inside the package."""
    return registry.shipped(registry.STYLE)


def resolve_style_model(name: str | Path) -> Path:
    """A shipped model's name, or a path to a model folder -> the folder."""
    return registry.resolve(registry.STYLE, name)


def load_style_model(name: str | Path) -> StyleModel:
    """Load a style model once per process (through the model pool)."""
    from ...models.pool import get_pool

    folder = resolve_style_model(name)
    return get_pool().get(f"style:{folder}", lambda: StyleModel.load(folder), f"style model {Path(folder).name}")
