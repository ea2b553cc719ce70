"""Shipped style models: each sub-folder is a model folder (see :mod:`styleval.style.model`)."""
from __future__ import annotations

from pathlib import Path

from ...errors import InputError, UnknownNameError
from ..model import StyleModel

PRETRAINED_DIR = Path(__file__).resolve().parent


def shipped_models() -> dict[str, Path]:
    """Names and folders of the models shipped inside the package."""
    return {p.name: p for p in sorted(PRETRAINED_DIR.iterdir()) if (p / "model.json").is_file()}


def resolve_style_model(name: str | Path) -> Path:
    """A shipped model's name, or a path to a model folder -> the folder."""
    shipped = shipped_models()
    if str(name) in shipped:
        return shipped[str(name)]
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "model.json").is_file():
            raise InputError("not a styleval style model folder (no model.json)", path)
        return path.resolve()
    if any(sep in str(name) for sep in ("/", "\\")) or str(name).startswith("."):
        raise InputError("style model folder not found", path)
    raise UnknownNameError("style model", str(name), list(shipped))


def load_style_model(name: str | Path) -> StyleModel:
    """Load a style model once per process (through the model pool)."""
    from ...models.pool import get_pool

    folder = resolve_style_model(name)
    return get_pool().get(f"style:{folder}", lambda: StyleModel.load(folder))
