"""Model folders shipped inside the package or given as paths: one lookup for every kind of trained model."""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError, UnknownNameError

MANIFEST = "model.json"


def shipped_folders(directory: Path) -> dict[str, Path]:
    """Names and folders of the models shipped in ``directory`` (each sub-folder with a model.json)."""
    return {p.name: p for p in sorted(directory.iterdir()) if (p / MANIFEST).is_file()}


def resolve_model_folder(name: str | Path, directory: Path, kind: str) -> Path:
    """A shipped model's name (a sub-folder of ``directory``), or a path to a model folder -> the folder; ``kind``
    (e.g. "style model") names the model in errors."""
    shipped = shipped_folders(directory)
    if str(name) in shipped:
        return shipped[str(name)]
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / MANIFEST).is_file():
            raise InputError(f"not a styleval {kind} folder (no {MANIFEST})", path)
        return path.resolve()
    if any(sep in str(name) for sep in ("/", "\\")) or str(name).startswith("."):
        raise InputError(f"{kind} folder not found", path)
    raise UnknownNameError(kind, str(name), list(shipped))
