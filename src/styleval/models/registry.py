"""Every shipped model and installed asset, in one place: ``resolve(kind, name)`` -> its folder or file.

Shipped models lie inside the package, one folder per model (a sub-folder holding ``model.json``) under their kind's
directory; installed assets (the MiniLM encoder, GloVe vectors, the spaCy pipeline, SmolLM2) come from PyPI
packages listed in :mod:`.catalog`. The packages' ``pretrained`` modules and loaders ask here.

=================== ================================ ==========================================
kind                where                            names
=================== ================================ ==========================================
``style``           ``style_models/pretrained/``     formality, sentiment and toxicity models
``preservation``    ``preservation/pretrained/``     ``preservation-minilm`` (default), ``-fast``
``acceptability``   ``acceptability/pretrained/``    ``acceptability-smollm2`` (default)
``encoder``         catalog (PyPI)                   ``minilm``
``word-vectors``    catalog (PyPI)                   ``glove-6b-50d``
``spacy``           catalog (PyPI)                   ``spacy-en-sm``
``causal-lm``       catalog (PyPI)                   ``smollm2-135m``
=================== ================================ ==========================================
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, UnknownNameError
from . import catalog as cat

#: The file that marks a model folder.
MANIFEST = "model.json"
_PACKAGE = Path(__file__).resolve().parent.parent

STYLE = "style"
PRESERVATION = "preservation"
ACCEPTABILITY = "acceptability"
ENCODER = "encoder"
WORD_VECTORS = "word-vectors"
SPACY = "spacy"
CAUSAL_LM = "causal-lm"


@dataclass(frozen=True)
class ShippedKind:
    """A kind of model shipped inside the package: its directory (relative to the package), how errors name it,
    and its default model (if any)."""

    directory: str
    label: str
    default: str | None = None

    @property
    def path(self) -> Path:
        return _PACKAGE / self.directory


SHIPPED: dict[str, ShippedKind] = {
    STYLE: ShippedKind("style_models/pretrained", "style model"),
    PRESERVATION: ShippedKind("preservation/pretrained", "preservation model", "preservation-minilm"),
    ACCEPTABILITY: ShippedKind("acceptability/pretrained", "acceptability model", "acceptability-smollm2"),
}

#: Installed assets by kind: the catalog kind they have, and the default name.
INSTALLED: dict[str, tuple[str, str]] = {
    ENCODER: (cat.SENTENCE_TRANSFORMERS, cat.DEFAULT_ENCODER),
    WORD_VECTORS: (cat.WORD_VECTORS, cat.DEFAULT_WORD_VECTORS),
    SPACY: (cat.SPACY, cat.DEFAULT_SPACY),
    CAUSAL_LM: (cat.CAUSAL_LM_GGUF, cat.DEFAULT_CAUSAL_LM),
}

KINDS = (*SHIPPED, *INSTALLED)

#: Shipped models that come as a pair under one name: the name's own folder is the case-blind model, and this folder
#: its cased slot, which the style metrics use under ``case=sensitive`` (and ``auto`` on a cased release).
CASED_SLOTS: dict[str, dict[str, str]] = {STYLE: {"formality-classifier-pt16": "formality-classifier-pt16-cased"}}


def _check_kind(kind: str) -> None:
    if kind not in SHIPPED and kind not in INSTALLED:
        raise InputError(f"unknown kind of model {kind!r}; kinds: {', '.join(KINDS)}")


def shipped_dir(kind: str) -> Path:
    """The package directory of a shipped kind's model folders."""
    _check_kind(kind)
    if kind not in SHIPPED:
        raise InputError(f"{kind!r} models are installed from PyPI, not shipped inside the package")
    return SHIPPED[kind].path


def shipped_folders(directory: Path) -> dict[str, Path]:
    """Names and folders of the models in ``directory`` (each sub-folder with a model.json)."""
    if not directory.is_dir():
        return {}
    return {p.name: p for p in sorted(directory.iterdir()) if (p / MANIFEST).is_file()}


def shipped(kind: str) -> dict[str, Path]:
    """Names and folders of the models of ``kind`` shipped inside the package."""
    return shipped_folders(shipped_dir(kind))


def cased_slot(kind: str, name: str | Path) -> str | None:
    """The shipped name of the cased slot of ``name`` (a shipped pair), or None when ``name`` has none shipped."""
    _check_kind(kind)
    slot = CASED_SLOTS.get(kind, {}).get(str(name))
    return slot if slot is not None and kind in SHIPPED and slot in shipped(kind) else None


def cased_slots(kind: str) -> set[str]:
    """Every shipped name that is the cased slot of a pair (not a model to pick on its own by style)."""
    return set(CASED_SLOTS.get(kind, {}).values())


def default(kind: str) -> str | None:
    """The default model of a kind (``None`` for style models, chosen by direction)."""
    _check_kind(kind)
    return SHIPPED[kind].default if kind in SHIPPED else INSTALLED[kind][1]


def names(kind: str) -> list[str]:
    """The names ``resolve`` knows for ``kind`` (shipped folders, or installable catalog entries)."""
    _check_kind(kind)
    if kind in SHIPPED:
        return list(shipped(kind))
    return [e.name for e in cat.CATALOG.values() if e.kind == INSTALLED[kind][0]]


def read_manifest(folder: str | Path, label: str) -> tuple[dict[str, Any], Path]:
    """A model folder's :data:`MANIFEST`, parsed (a JSON object), and its path; ``label`` (e.g. "style model") names
    the model in errors. Each package checks its own format on the result."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise InputError(f"not a styleval {label} folder (no {MANIFEST})", Path(folder))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc.reason}", path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path, exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"{MANIFEST} must hold a JSON object", path)
    return data, path


def resolve_model_folder(name: str | Path, directory: Path, kind: str) -> Path:
    """A shipped model's name (a sub-folder of ``directory``), or a path to a model folder -> the folder; ``kind``
    (e.g. "style model") names the model in errors."""
    folders = shipped_folders(directory)
    if str(name) in folders:
        return folders[str(name)]
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / MANIFEST).is_file():
            raise InputError(f"not a styleval {kind} folder (no {MANIFEST})", path)
        return path.resolve()
    if any(sep in str(name) for sep in ("/", "\\")) or str(name).startswith("."):
        raise InputError(f"{kind} folder not found", path)
    raise UnknownNameError(kind, str(name), list(folders))


def resolve(kind: str, name: str | Path | None = None) -> Path:
    """The folder (or file) of model ``name`` of ``kind`` (its default when ``None``): a shipped model's name or a
    model folder for shipped kinds, a catalog name for installed ones (an error naming the pip package when it is
    not installed)."""
    _check_kind(kind)
    chosen = name if name is not None else default(kind)
    if chosen is None:
        raise InputError(f"{kind} models have no default; name one of {', '.join(names(kind))}")
    if kind in SHIPPED:
        return resolve_model_folder(chosen, SHIPPED[kind].path, SHIPPED[kind].label)
    entry = cat.lookup(str(chosen))
    if entry is None or entry.kind != INSTALLED[kind][0]:
        raise UnknownNameError(kind, str(chosen), names(kind))
    return entry.locate()
