"""Shipped style models: each sub-folder is a model folder (see :mod:`styleval.style_models.model`); the names and
folders come from the registry (:mod:`styleval.models.registry`)."""
from __future__ import annotations

from pathlib import Path

from ...errors import InputError
from ...models import registry
from ..model import StyleModel, match_style, read_style_manifest

#: The ``model`` value that asks for the shipped model covering a corpus's styles (:func:`choose_shipped`).
AUTO = "auto"

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


def choose_shipped(kind: str, styles: set[str] | frozenset[str]) -> str:
    """The first shipped model of ``kind`` (classifier or regressor) whose labels cover ``styles``, read from each
    folder's ``model.json`` without loading a model; the cased slot of a pair is reached through its pair's name,
    never picked on its own."""
    tried = []
    slots = registry.cased_slots(registry.STYLE)
    for name, folder in shipped_models().items():
        if name in slots:
            continue
        meta, _ = read_style_manifest(folder)
        if meta["kind"] != kind:
            continue
        labels = [str(label) for label in meta["labels"]]
        tried.append(f"{name} ({', '.join(labels)})")
        aliases = {str(k): str(v) for k, v in meta.get("aliases", {}).items()}
        if all(match_style(s, labels, aliases) is not None for s in styles):
            return name
    raise InputError(f"no shipped {kind} covers the styles {', '.join(sorted(styles))}; shipped: "
                     f"{'; '.join(tried) or '(none)'}. Train one with `styleval train-style` and pass model=<folder>")
