"""A hook through which model wrappers persist their per-text outputs, without knowing where they go.

The sentence encoder's embeddings (through :class:`~styleval.models.pool.EmbeddingCache`) and the LM pass of the
fluency metrics (``metrics/fluency/_lm.py``) ask :func:`active_store` after their in-memory caches miss, and hand
what they computed to it. No store is active by default, so the default path only pays one ``None`` check;
:func:`use_store` activates one for a block (the streaming engine does so with ``--cache``; the SQLite
implementation is :class:`styleval.engine.model_cache.ModelOutputCache`).

A namespace names the model and every option that changes its output (content hash, layer, maximum length,
LM backend ...); a store adds the runtime (library versions, device) itself. Values are tuples of arrays, returned
bit for bit as they were stored.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Mapping, Protocol, Sequence

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
