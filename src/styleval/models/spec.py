"""A model name as something loadable (:func:`model_spec`): a shipped name, a catalog name, a local path, or (if
allowed) a hub id. Every model of every metric resolves here: content encoders, style and fluency models (shipped
``model.json`` folders, ``train-style`` folders, transformers classifiers), LMs' base folders.

Catalog names are located the one way the registry locates installed assets (:meth:`.catalog.CatalogEntry.locate`);
a shipped model's name (``shipped=`` the registry kind the caller reads, e.g. ``style``) is the folder the registry
names (:func:`styleval.models.registry.shipped`). A folder holding ``model.json`` is a styleval model folder
(kind :data:`~.catalog.STYLEVAL`; the package that reads it checks its format).

Resolution is offline first. A hub id (``org/name``, or ``org/name@REVISION``) is only accepted when the caller
passes ``allow_hub=True`` or the environment sets ``STYLEVAL_ALLOW_HUB=1``; it is then fetched into the local hub cache
(:mod:`styleval.models.hub`, ``huggingface_hub.snapshot_download``, which honours ``HF_ENDPOINT`` and ``HF_HOME``)
and becomes a folder like any other, signed by its content hash and the commit its revision resolved to
(``model_commit``). Without that permission a name shaped ``org/name`` is refused in one line naming the variable;
any other unknown name that is not a path is an :class:`~styleval.errors.UnknownNameError` listing the catalog. A
catalog model whose package is not installed is a :class:`~styleval.errors.ResourceUnavailableError` saying what
to ``pip install``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, ResourceUnavailableError, UnknownNameError
from . import catalog as cat

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?(@[\w.\-/]+)?$")

WORD2VEC_TEXT = "word2vec-text"
WORD2VEC_BINARY = "word2vec-binary"
GLOVE_TEXT = "glove-text"
GLOVE_NPY = "glove-npy"
VECTOR_FORMATS = (WORD2VEC_TEXT, WORD2VEC_BINARY, GLOVE_TEXT, GLOVE_NPY)


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: what it is, where it lies, where it came from."""

    name: str  # as the user gave it
    kind: str  # one of catalog.KINDS
    path: Path  # local files (a hub id's: its snapshot in the hub cache)
    source: str  # "shipped", "catalog", "path" or "hub"
    vector_format: str | None = None
    hub_id: str | None = None
    entry: cat.CatalogEntry | None = None
    commit: str | None = None  # a hub id's: the commit its revision resolved to

    @property
    def key(self) -> str:
        """Identity used by the pool: the same files give the same key."""
        return f"{self.kind}:{self.vector_format or ''}:{self.path}"

    @property
    def display(self) -> str:
        if self.entry is not None:
            return self.entry.name
        if self.source == "shipped":
            return self.name
        if self.source == "hub":
            return f"{self.hub_id}@{self.commit}" if self.commit else str(self.hub_id)
        return str(self.path)

    def content_hash(self) -> str:
        """sha256 of the files (cached on disk); a hub id's snapshot is hashed like any folder."""
        from .hashing import content_hash

        return content_hash(self.path)

    def identity(self, n: int = 12) -> dict[str, str]:
        """For signatures: model name and a short content hash; a hub model adds the commit it resolved to."""
        out = {"model": self.display, "model_hash": self.content_hash()[:n]}
        if self.commit:
            out["model_commit"] = self.commit
        return out

    def facts(self, prefix: str = "model") -> dict[str, str]:
        """A metric's signature resources for this model: ``<prefix>_hash`` and, for a hub id, ``<prefix>_commit``."""
        ident = self.identity()
        out = {f"{prefix}_hash": ident["model_hash"]}
        if "model_commit" in ident:
            out[f"{prefix}_commit"] = ident["model_commit"]
        return out


def hub_allowed(allow_hub: bool | None = None) -> bool:
    if allow_hub is not None:
        return bool(allow_hub)
    return os.environ.get("STYLEVAL_ALLOW_HUB", "").strip().lower() in ("1", "true", "yes")


def sniff_vector_format(path: Path) -> str:
    """word2vec binary (``.bin``), word2vec text (first line ``<count> <dim>``), or GloVe text."""
    if path.suffix == ".bin":
        return WORD2VEC_BINARY
    if path.suffix == ".npy":
        return GLOVE_NPY
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 16)
    except OSError as exc:
        raise InputError(f"cannot read word vectors: {exc}", path) from None
    parts = first.split()
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return WORD2VEC_TEXT
    if b"\0" in first:
        return WORD2VEC_BINARY
    return GLOVE_TEXT


def _kind_of_path(path: Path, label: str | None = None) -> tuple[str, str | None]:
    """The kind of model a local path holds; ``label`` (a shipped kind's, e.g. "style model") words the error for a
    folder that holds none."""
    if path.is_dir():
        if (path / "modules.json").is_file() or (path / "config_sentence_transformers.json").is_file():
            return cat.SENTENCE_TRANSFORMERS, None
        if (path / "config.json").is_file():
            return cat.TRANSFORMERS, None
        if (path / "model.json").is_file():
            return cat.STYLEVAL, None
        if (path / "meta.json").is_file() and (path / "config.cfg").is_file():
            return cat.SPACY, None
        if (path / "glove_6B_50d_emb.npy").is_file() or any(path.glob("*_emb.npy")):
            return cat.WORD_VECTORS, GLOVE_NPY
        if label is not None:
            raise InputError(f"not a styleval {label} folder (no model.json) nor a transformers model (no "
                             "config.json)", path)
        raise InputError("a model folder must hold a styleval model (model.json), a sentence-transformers model "
                         "(modules.json), a transformers model (config.json), a spaCy pipeline (meta.json + "
                         "config.cfg) or *_emb.npy vectors", path)
    return cat.WORD_VECTORS, sniff_vector_format(path)


def _compatible(kind: str, expect: str | None) -> bool:
    if expect is None or kind == expect:
        return True
    # a sentence-transformers folder contains a transformers model, and vice versa can be wrapped
    return {kind, expect} == {cat.SENTENCE_TRANSFORMERS, cat.TRANSFORMERS}


def model_spec(name: str | os.PathLike[str], *, expect: str | tuple[str, ...] | None = None,
               allow_hub: bool | None = None, shipped: str | None = None) -> ModelSpec:
    """Resolve ``name``: a shipped model's name (of registry kind ``shipped``, when given), a catalog name (or
    alias), an existing local path, or a hub id when allowed.

    ``expect`` (a catalog kind, or several) checks that the model is of a usable kind for the caller.
    """
    text = os.fspath(name).strip()
    if not text:
        raise InputError("empty model name")
    entry = cat.lookup(text)
    folders = _shipped(shipped)
    label = _shipped_label(shipped)
    if text in folders:
        spec = ModelSpec(name=text, kind=cat.STYLEVAL, path=folders[text], source="shipped")
    elif entry is not None and shipped is None:
        path = entry.locate()  # ResourceUnavailableError with the pip hint
        spec = ModelSpec(name=text, kind=entry.kind, path=path, source="catalog",
                         vector_format=entry.vector_format, entry=entry)
    else:
        path = Path(text).expanduser()
        if path.exists():
            kind, fmt = _kind_of_path(path, label)
            spec = ModelSpec(name=text, kind=kind, path=path.resolve(), source="path", vector_format=fmt)
        elif _looks_like_path(text):
            raise (InputError(f"{label} folder not found", path) if label else
                   InputError(f"model path {text!r} does not exist"))
        elif hub_allowed(allow_hub) and _HUB_ID.match(text):
            asked = (expect,) if isinstance(expect, str) else tuple(expect or ())
            if asked and not any(k in (cat.SENTENCE_TRANSFORMERS, cat.TRANSFORMERS) for k in asked):
                raise ResourceUnavailableError(f"{asked[0]} models cannot be fetched from a model hub; give a "
                                               f"local path or one of: {', '.join(cat.names())}")
            from .hub import fetch_snapshot, split_revision

            hub_id, revision = split_revision(text)
            snap = fetch_snapshot(hub_id, revision)
            kind, _fmt = _kind_of_path(snap.path, label)
            spec = ModelSpec(name=text, kind=kind, path=snap.path, source="hub", hub_id=hub_id, commit=snap.commit)
        elif "/" in text.split("@")[0] and _HUB_ID.match(text):
            raise InputError(f"model {text!r} is not a local folder and looks like a hub id: set "
                             "STYLEVAL_ALLOW_HUB=1 to download it from the model hub (styleval fetches nothing "
                             "otherwise), or give the path of a local copy")
        elif label and ("/" in text or "\\" in text):
            raise InputError(f"{label} folder not found (a hub id needs STYLEVAL_ALLOW_HUB=1)", path)
        else:
            if label:
                raise UnknownNameError(label, text, list(folders))
            hint = [*cat.names(), "<a local path>"]
            if not hub_allowed(allow_hub):
                hint.append("<a hub id with STYLEVAL_ALLOW_HUB=1>")
            raise UnknownNameError("model", text, hint)
    kinds = (expect,) if isinstance(expect, str) else expect
    if kinds is not None and not any(_compatible(spec.kind, k) for k in kinds):
        raise InputError(f"model {text!r} is a {spec.kind} model, but a {' or '.join(kinds)} model is needed here")
    return spec


def _shipped_label(kind: str | None) -> str | None:
    """How errors name a shipped kind's models (``style model``), or None."""
    if kind is None:
        return None
    from . import registry

    return registry.SHIPPED[kind].label if kind in registry.SHIPPED else None


def _shipped(kind: str | None) -> dict[str, Path]:
    """The shipped folders of registry kind ``kind`` by name (none when ``kind`` is None)."""
    if kind is None:
        return {}
    from . import registry

    return registry.shipped(kind)


def _looks_like_path(text: str) -> bool:
    return (text.startswith((".", "/", "~")) or os.sep in text and text.count("/") > 1
            or text.endswith((".bin", ".txt", ".vec", ".npy", ".gz")))
