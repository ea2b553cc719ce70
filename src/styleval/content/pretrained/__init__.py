"""Shipped preservation models: each sub-folder is a model folder (see :mod:`styleval.content.model`)."""
from __future__ import annotations

from pathlib import Path

from ...errors import InputError, UnknownNameError
from ..model import PreservationModel

PRETRAINED_DIR = Path(__file__).resolve().parent
DEFAULT_MODEL = "preservation-minilm"


def shipped_models() -> dict[str, Path]:
    return {p.name: p for p in sorted(PRETRAINED_DIR.iterdir()) if (p / "model.json").is_file()}


def resolve_preservation_model(name: str | Path) -> Path:
    """A shipped model's name, or a path to a model folder -> the folder."""
    shipped = shipped_models()
    if str(name) in shipped:
        return shipped[str(name)]
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "model.json").is_file():
            raise InputError("not a styleval preservation model folder (no model.json)", path)
        return path.resolve()
    if any(sep in str(name) for sep in ("/", "\\")) or str(name).startswith("."):
        raise InputError("preservation model folder not found", path)
    raise UnknownNameError("preservation model", str(name), list(shipped))


def load_preservation_model(name: str | Path = DEFAULT_MODEL) -> PreservationModel:
    """Load a preservation model once per process (through the model pool)."""
    from ...models.pool import get_pool

    folder = resolve_preservation_model(name)
    return get_pool().get(f"preservation:{folder}", lambda: PreservationModel.load(folder))
