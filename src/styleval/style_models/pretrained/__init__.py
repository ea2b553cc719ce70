"""Shipped style models: each sub-folder is a model folder (see :mod:`styleval.style_models.model`)."""
from __future__ import annotations

from pathlib import Path

from ...models.folders import resolve_model_folder, shipped_folders
from ..model import StyleModel

PRETRAINED_DIR = Path(__file__).resolve().parent


def shipped_models() -> dict[str, Path]:
    """Names and folders of the models shipped inside the package."""
    return shipped_folders(PRETRAINED_DIR)


def resolve_style_model(name: str | Path) -> Path:
    """A shipped model's name, or a path to a model folder -> the folder."""
    return resolve_model_folder(name, PRETRAINED_DIR, "style model")


def load_style_model(name: str | Path) -> StyleModel:
    """Load a style model once per process (through the model pool)."""
    from ...models.pool import get_pool

    folder = resolve_style_model(name)
    return get_pool().get(f"style:{folder}", lambda: StyleModel.load(folder))
