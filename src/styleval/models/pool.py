"""One model pool per process: each model is loaded lazily, once, and shared by every metric.

``get_pool().get(key, loader)`` runs ``loader`` at most once per key, even when threads ask at the same
time (a lock per key; other keys load in parallel). The helpers :func:`word_vectors` and :func:`spacy_pipeline`
here, and :func:`~.encoder.sentence_encoder` and :func:`~.encoder.transformer` in :mod:`.encoder`, resolve a
name (catalog, local path, or hub id when allowed) and load it through the pool. :class:`EmbeddingCache` keeps per-text
embeddings keyed by model hash (and layer), in memory and optionally on disk (``STYLEVAL_CACHE`` or an
explicit folder), so that BERTScore, sentence cosine and their variants encode each distinct text once; while a
model-output store is active (:mod:`.outputs`, the streaming engine's ``--cache``) it is consulted and filled too.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import InputError, ResourceUnavailableError
from ..progress import stage
from . import catalog as cat
from .outputs import active_store
from .passes import timed
from .spec import model_spec

_torch_configured = False
_torch_lock = threading.Lock()


def core_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def thread_count() -> int:
    """Intra-op threads for a model runtime: ``STYLEVAL_THREADS``, else the usable core count."""
    env = os.environ.get("STYLEVAL_THREADS", "").strip()
    return int(env) if env.isdigit() and int(env) > 0 else core_count()


def configure_torch() -> None:
    """Set torch's intra-op threads to the usable core count (``STYLEVAL_THREADS`` overrides), once."""
    global _torch_configured
    with _torch_lock:
        if _torch_configured:
            return
        import torch

        n = thread_count()
        if torch.get_num_threads() != n:
            torch.set_num_threads(n)
        _torch_configured = True


class ModelPool:
    """A thread-safe cache of loaded models: ``get(key, loader)`` loads once per key."""

    def __init__(self) -> None:
        self._items: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: str, loader: Callable[[], Any], what: str | None = None) -> Any:
        """The model stored under ``key``, loaded by ``loader`` the first time; the load is reported as the stage
        ``loading WHAT`` (:func:`styleval.progress.stage`; ``what`` defaults to the key's kind)."""
        try:
            return self._items[key]
        except KeyError:
            pass
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._items:
                label = what or key.split(":")[0]
                with stage(f"loading {label}"), timed("load", label):
                    self._items[key] = loader()
            return self._items[key]

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def keys(self) -> list[str]:
        return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._locks.clear()


_POOL = ModelPool()


def get_pool() -> ModelPool:
    return _POOL


# -- loaders ------------------------------------------------------------------------------------
def word_vectors(name: str = cat.DEFAULT_WORD_VECTORS, *, allow_hub: bool | None = None):
    """Word vectors by catalog name or path (word2vec text/binary, GloVe text, GloVe package folder)."""
    from .vectors import load_vectors

    spec = model_spec(name, expect=cat.WORD_VECTORS, allow_hub=allow_hub)
    path, fmt = spec.path, spec.vector_format
    if path is None or fmt is None:
        raise InputError(f"word vectors {name!r} resolved to no local file")
    return _POOL.get(spec.key, lambda: load_vectors(path, fmt), f"word vectors {spec.display}")


def _need(module: str, extra: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ResourceUnavailableError(f"this needs the {module!r} library: pip install 'styleval[{extra}]'")


def spacy_pipeline(name: str = cat.DEFAULT_SPACY):
    spec = model_spec(name, expect=cat.SPACY)
    _need("spacy", "nlp")

    def load():
        import spacy

        if spec.entry is not None:
            return spacy.load(spec.entry.module)
        return spacy.load(spec.path)

    return _POOL.get("spacy:" + spec.key, load, f"spaCy pipeline {spec.display}")


# -- embedding cache ----------------------------------------------------------------------------
class EmbeddingCache:
    """Per-text arrays (token or sentence embeddings) keyed by a namespace (model hash, layer ...) and text.

    In memory: least-recently-used entries go once ``max_bytes`` is exceeded. On disk (optional): a SQLite
    file ``<folder>/embeddings.sqlite``, used when a folder is given or ``STYLEVAL_CACHE`` is set.
    """

    def __init__(self, max_bytes: int = 1 << 30, disk_dir: str | Path | None = None) -> None:
        self.max_bytes = max_bytes
        self._mem: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._bytes = 0
        self._lock = threading.RLock()
        self._disk: dict[str, sqlite3.Connection] = {}
        self.disk_dir = disk_dir
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _size(value: Any) -> int:
        if isinstance(value, tuple):
            return sum(EmbeddingCache._size(v) for v in value)
        return int(getattr(value, "nbytes", 64))

    def _disk_conn(self, disk_dir: str | Path | None) -> sqlite3.Connection | None:
        folder = disk_dir if disk_dir is not None else (self.disk_dir or os.environ.get("STYLEVAL_CACHE") or None)
        if not folder:
            return None
        folder = str(Path(folder).expanduser())
        conn = self._disk.get(folder)
        if conn is None:
            Path(folder).mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(os.path.join(folder, "embeddings.sqlite"), check_same_thread=False)
            conn.execute("CREATE TABLE IF NOT EXISTS emb (k TEXT PRIMARY KEY, v BLOB)")
            self._disk[folder] = conn
        return conn

    @staticmethod
    def _disk_key(namespace: str, text: str) -> str:
        return hashlib.sha256(f"{namespace}\0{text}".encode("utf-8")).hexdigest()

    def get_many(self, namespace: str, texts: list[str], disk_dir: str | Path | None = None) -> dict[str, Any]:
        found: dict[str, Any] = {}
        with self._lock:
            for t in texts:
                k = (namespace, t)
                if k in self._mem:
                    self._mem.move_to_end(k)
                    found[t] = self._mem[k]
            missing = [t for t in texts if t not in found]
            store = active_store() if missing else None
            if store is not None:  # a model-output store (the streaming engine's --cache): outputs of past runs
                for t, arrays in store.get_many(namespace, missing).items():
                    value = arrays[0] if len(arrays) == 1 else arrays
                    found[t] = value
                    self._put_mem(namespace, t, value)
                missing = [t for t in missing if t not in found]
            conn = self._disk_conn(disk_dir) if missing else None
            if conn is not None:
                import io

                for t in missing:
                    row = conn.execute("SELECT v FROM emb WHERE k = ?", (self._disk_key(namespace, t),)).fetchone()
                    if row is not None:
                        with np.load(io.BytesIO(row[0]), allow_pickle=False) as z:
                            value = tuple(z[f"a{i}"] for i in range(len(z.files)))
                        value = value[0] if len(value) == 1 else value
                        found[t] = value
                        self._put_mem(namespace, t, value)
            self.hits += len(found)
            self.misses += len(texts) - len(found)
        return found

    def _put_mem(self, namespace: str, text: str, value: Any) -> None:
        k = (namespace, text)
        if k in self._mem:
            return
        self._mem[k] = value
        self._bytes += self._size(value)
        while self._bytes > self.max_bytes and len(self._mem) > 1:
            _, old = self._mem.popitem(last=False)
            self._bytes -= self._size(old)

    def put_many(self, namespace: str, items: dict[str, Any], disk_dir: str | Path | None = None) -> None:
        with self._lock:
            for t, v in items.items():
                self._put_mem(namespace, t, v)
            store = active_store()
            if store is not None and items:
                store.put_many(namespace, {t: v if isinstance(v, tuple) else (v,) for t, v in items.items()})
            conn = self._disk_conn(disk_dir)
            if conn is not None and items:
                import io

                rows = []
                for t, v in items.items():
                    buf = io.BytesIO()
                    arrays = v if isinstance(v, tuple) else (v,)
                    np.savez(buf, **{f"a{i}": a for i, a in enumerate(arrays)})
                    rows.append((self._disk_key(namespace, t), buf.getvalue()))
                conn.executemany("INSERT OR REPLACE INTO emb (k, v) VALUES (?, ?)", rows)
                conn.commit()

    def clear(self) -> None:
        with self._lock:
            self._mem.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._mem)


_EMB_CACHE = EmbeddingCache()


def embedding_cache() -> EmbeddingCache:
    return _EMB_CACHE
