"""A hook through which model wrappers persist their per-text outputs, without knowing where they go.

The sentence encoder's embeddings (through :class:`~styleval.models.pool.EmbeddingCache`) and the LM pass of the
fluency metrics (``metrics/fluency/lm_shared.py``) ask :func:`active_store` after their in-memory caches miss, and hand
what they computed to it. No store is active by default, so the default path only pays one ``None`` check;
:func:`use_store` activates one for a block (the streaming engine does so with ``--cache``; the SQLite
implementation is :class:`styleval.engine.model_cache.ModelOutputCache`).

A namespace names the model and every option that changes its output (content hash, layer, maximum length,
LM backend ...); a store adds the runtime (library versions, device) itself. Values are tuples of arrays, returned
bit for bit as they were stored.

Beside that persistent store, a run keeps a memo in memory (:func:`run_memo`, opened by the engine for each chunk
it computes): a model wrapper with no cache of its own (the style model) computes through :func:`memoized`, so two
metrics over one model in one run (``style_accuracy`` and ``style_emd``) run it once per distinct text.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator, Mapping, Protocol, Sequence

import numpy as np

Arrays = tuple[np.ndarray, ...]


class OutputStore(Protocol):
    """Per-text model outputs by (namespace, text)."""

    def get_many(self, namespace: str, texts: Sequence[str]) -> dict[str, Arrays]:
        """The stored outputs of those ``texts`` that are stored."""
        ...

    def put_many(self, namespace: str, items: Mapping[str, Arrays]) -> None:
        """Store outputs (one transaction per call)."""
        ...


_active: OutputStore | None = None
_lock = threading.Lock()


def active_store() -> OutputStore | None:
    """The store model wrappers should consult now, or None."""
    return _active


@contextlib.contextmanager
def use_store(store: OutputStore | None) -> Iterator[None]:
    """Make ``store`` the active one (process-wide, so worker threads see it too) for the block; None leaves
    the current one in place."""
    global _active
    if store is None:
        yield
        return
    with _lock:
        before, _active = _active, store
    try:
        yield
    finally:
        with _lock:
            _active = before


class MemoryStore:
    """Outputs by (namespace, text) in a dict: the per-run memo."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Arrays]] = {}

    def get_many(self, namespace: str, texts: Sequence[str]) -> dict[str, Arrays]:
        items = self._items.get(namespace, {})
        return {t: items[t] for t in texts if t in items}

    def put_many(self, namespace: str, items: Mapping[str, Arrays]) -> None:
        self._items.setdefault(namespace, {}).update(items)


_memo: MemoryStore | None = None


@contextlib.contextmanager
def run_memo() -> Iterator[MemoryStore]:
    """A fresh per-run memo for the block (process-wide, like :func:`use_store`); inside a block that already
    has one, that one stays (a nested run shares it)."""
    global _memo
    with _lock:
        outer = _memo
        memo = _memo = outer if outer is not None else MemoryStore()
    try:
        yield memo
    finally:
        if outer is None:
            with _lock:
                _memo = None


def memoized(namespace: str, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``compute(texts)`` (one row per text) through the active run memo: rows of texts seen earlier in the run
    come from it; the distinct others are computed together, in first-seen order. Without a memo, ``compute``
    runs on ``texts`` as they are. ``compute`` must give each text a row that does not depend on the others."""
    memo = _memo
    if memo is None or len(texts) == 0:
        return compute(list(texts))
    distinct = list(dict.fromkeys(texts))
    found = memo.get_many(namespace, distinct)
    todo = [t for t in distinct if t not in found]
    if todo:
        rows = compute(todo)
        new = {t: (rows[i],) for i, t in enumerate(todo)}
        memo.put_many(namespace, new)
        found.update(new)
    return np.stack([found[t][0] for t in texts])
