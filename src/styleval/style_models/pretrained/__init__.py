"""Shipped style models: each sub-folder is a model folder (see :mod:`styleval.style_models.model`); the names and
folders come from the registry (:mod:`styleval.models.registry`). :func:`load_style_model` loads any style model
(a shipped name, a ``train-style`` folder, a transformers classifier folder or an allowed hub id) through the one
resolution path of :func:`styleval.models.spec.model_spec`."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Union

from ...errors import InputError
from ...models import catalog as cat
from ...models import registry
from ..model import StyleModel, match_style, read_style_manifest

if TYPE_CHECKING:
    from ...models.spec import ModelSpec
    from ..transformers_model import TransformersStyleModel

AnyStyleModel = Union[StyleModel, "TransformersStyleModel"]

#: The ``model`` value that asks for the shipped model covering a corpus's styles (:func:`choose_shipped`).
AUTO = "auto"

PRETRAINED_DIR = registry.shipped_dir(registry.STYLE)


def shipped_models() -> dict[str, Path]:
    """Names and folders of the models shipped inside the package."""
    return registry.shipped(registry.STYLE)


def resolve_style_model(name: str | Path) -> Path:
    """A shipped model's name, or a path to a model folder -> the folder."""
    return registry.resolve(registry.STYLE, name)


def style_model_spec(name: str | Path) -> "ModelSpec":
    """A style model's resolved spec: a shipped name or styleval folder (kind ``styleval``), a transformers folder
    or an allowed hub id (kind ``transformers``)."""
    from ...models.spec import model_spec

    return model_spec(name, shipped=registry.STYLE, expect=(cat.STYLEVAL, cat.TRANSFORMERS))


def load_style_model(name: str | Path, *, labels: str | None = None, threshold: float | None = None,
                     batch_size: int = 32) -> AnyStyleModel:
    """Load a style model once per process (through the model pool): a styleval model, or a transformers sequence
    classifier read with ``labels`` and ``threshold`` (:mod:`styleval.style_models.transformers_model`)."""
    from ...models.pool import get_pool

    spec = style_model_spec(name)
    if spec.kind == cat.TRANSFORMERS:
        from ...models.classifier import load_classifier
        from ..transformers_model import TransformersStyleModel

        return TransformersStyleModel.of(load_classifier(spec), labels, threshold, batch_size)
    if labels is not None or threshold is not None:
        raise InputError(f"labels= and threshold= read a transformers classifier; {str(name)!r} is a styleval style "
                         "model, whose labels and calibration are in its folder")
    folder = spec.path
    assert folder is not None  # noqa: S101 - a styleval model is a local folder
    return get_pool().get(f"style:{folder}", lambda: StyleModel.load(folder), f"style model {folder.name}")


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
