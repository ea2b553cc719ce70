"""Shipped preservation models: each sub-folder is a model folder (see :mod:`styleval.preservation.model`): the default
and the fast one. The names and folders come from the registry (:mod:`styleval.models.registry`)."""
from __future__ import annotations

from pathlib import Path

from ...models import registry
from ..model import PreservationModel

PRETRAINED_DIR = registry.shipped_dir(registry.PRESERVATION)
DEFAULT_MODEL = str(registry.default(registry.PRESERVATION))
#: The feature head alone (version 1 of preservation-minilm): about twice as fast, weaker on held-out data.
FAST_MODEL = "preservation-minilm-fast"


def shipped_models() -> dict[str, Path]:
    """Names and folders of the models shipped inside the package."""
    return registry.shipped(registry.PRESERVATION)


def resolve_preservation_model(name: str | Path) -> Path:
    """A shipped model's name, or a path to a model folder -> the folder."""
    return registry.resolve(registry.PRESERVATION, name)


def load_preservation_model(name: str | Path = DEFAULT_MODEL, backend: str = "auto") -> PreservationModel:
    """Load a preservation model once per process and encoder backend (through the model pool)."""
    from ...models.onnx_encoder import resolve_backend
    from ...models.pool import get_pool

    folder = resolve_preservation_model(name)
    chosen = resolve_backend(backend)
    return get_pool().get(f"preservation:{folder}:{chosen}", lambda: PreservationModel.load(folder, backend=chosen),
                          f"preservation model {Path(folder).name}")
