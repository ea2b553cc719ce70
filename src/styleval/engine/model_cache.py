"""An on-disk cache of model outputs (sentence and token embeddings, LM token log-probabilities), so that a new
metric configuration over a model some earlier run used reads that model's outputs instead of running it again.

The key of an entry has two parts:

* the namespace: what the model wrapper names (see :mod:`styleval.models.outputs`): the model's content hash
  and every option that changes its output (``st:<hash>:<max length>`` for the sentence encoder,
  ``bertscore:<hash>:L<layer>:max<length>`` for token embeddings, ``lm-logprobs:<hash>:<backend>:...`` for the
  LM pass), joined with the runtime this cache adds itself (versions of torch, transformers,
  sentence-transformers and tokenizers, and the device type), so a different library or device computes afresh;
* a BLAKE2b digest of the text the model saw (for the LM, after the metric's normalisation, so normalisations
  that give the same text share an entry).

Values are the arrays' dtypes, shapes and raw bytes: a cached output is bit for bit the computed one. Stored in
SQLite (the statistics cache's file is fine: the tables are separate), write-ahead log, one transaction per
stored batch, so a SIGKILL loses at most the batch in flight and never leaves a torn entry.
"""
from __future__ import annotations

import hashlib
import sqlite3
import struct
import sys
import threading
from importlib import metadata
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..errors import OutputError
from ..models.outputs import Arrays

_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_outputs (
    namespace BLOB NOT NULL, text BLOB NOT NULL, arrays BLOB NOT NULL, PRIMARY KEY (namespace, text)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS model_namespaces (namespace BLOB PRIMARY KEY, description TEXT NOT NULL);
"""
_LOOKUP_BATCH = 500
_RUNTIME_LIBRARIES = ("torch", "transformers", "sentence-transformers", "tokenizers")


def runtime_identity() -> str:
    """Library versions and device type that the model outputs depend on beyond the model itself."""
    parts = []
    for lib in _RUNTIME_LIBRARIES:
        try:
            parts.append(f"{lib}={metadata.version(lib)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{lib}=none")
    torch = sys.modules.get("torch")
    device = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"
    return ";".join(parts) + f";device={device}"


def pack_arrays(arrays: Arrays) -> bytes:
    """Arrays as bytes: count, then per array its dtype, shape and raw (C-order) data."""
    out = [struct.pack("<I", len(arrays))]
    for a in arrays:
        a = np.asarray(a)
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)  # keeps 0-d arrays 0-d, unlike ascontiguousarray alone
        if a.dtype.hasobject:
            raise TypeError("object arrays cannot be cached")
        dt = a.dtype.str.encode("ascii")
        out.append(struct.pack("<BB", len(dt), a.ndim) + dt + struct.pack(f"<{a.ndim}Q", *a.shape))
        out.append(a.tobytes())
    return b"".join(out)


def unpack_arrays(blob: bytes) -> Arrays:
    """The arrays :func:`pack_arrays` wrote (ValueError when the bytes are not such a record)."""
    try:
        return _unpack(memoryview(blob))
    except (struct.error, TypeError, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed entry: {exc}") from None


def _unpack(view: memoryview) -> Arrays:
    (count,), pos = struct.unpack_from("<I", view, 0), 4
    arrays = []
    for _ in range(count):
        n_dt, ndim = struct.unpack_from("<BB", view, pos)
        pos += 2
        dtype = np.dtype(bytes(view[pos:pos + n_dt]).decode("ascii"))
        pos += n_dt
        shape = struct.unpack_from(f"<{ndim}Q", view, pos)
        pos += 8 * ndim
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if dtype.hasobject or pos + size > len(view):
            raise ValueError("truncated or malformed entry")
        arrays.append(np.frombuffer(view[pos:pos + size], dtype=dtype).reshape(shape).copy())
        pos += size
    if pos != len(view):
        raise ValueError("trailing bytes after the arrays")
    return tuple(arrays)


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class ModelOutputCache:
    """Model outputs by (namespace + runtime, text digest) in a SQLite file; an
    :class:`~styleval.models.outputs.OutputStore`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise OutputError(f"cannot open the model-output cache: {exc}", self.path) from None
        self._lock = threading.Lock()
        self._runtime: str | None = None
        self._namespaces: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ModelOutputCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _namespace(self, namespace: str) -> bytes:
        key = self._namespaces.get(namespace)
        if key is None:
            if self._runtime is None:
                self._runtime = runtime_identity()  # the model has loaded by now: torch's device is known
            description = f"{namespace}|{self._runtime}"
            key = hashlib.blake2b(description.encode("utf-8"), digest_size=16).digest()
            with self._db:
                self._db.execute("BEGIN")
                self._db.execute("INSERT OR IGNORE INTO model_namespaces VALUES (?, ?)", (key, description))
            self._namespaces[namespace] = key
        return key

    def get_many(self, namespace: str, texts: Sequence[str]) -> dict[str, Arrays]:
        """Stored outputs of those ``texts`` that are in the cache."""
        by_key = {text_key(t): t for t in dict.fromkeys(texts)}
        found: dict[str, Arrays] = {}
        keys = list(by_key)
        with self._lock:
            try:
                ns = self._namespace(namespace)
                for start in range(0, len(keys), _LOOKUP_BATCH):
                    part = keys[start:start + _LOOKUP_BATCH]
                    marks = ",".join("?" * len(part))
                    for key, blob in self._db.execute(
                            f"SELECT text, arrays FROM model_outputs WHERE namespace = ? AND text IN ({marks})",
                            (ns, *part)):
                        found[by_key[key]] = unpack_arrays(blob)
            except sqlite3.Error as exc:
                raise OutputError(f"cannot read the model-output cache: {exc}", self.path) from None
            except ValueError as exc:
                raise OutputError(f"the model-output cache has a corrupt entry ({exc}); delete the file to start "
                                  "afresh", self.path) from None
            self.hits += len(found)
            self.misses += len(by_key) - len(found)
        return found

    def put_many(self, namespace: str, items: Mapping[str, Arrays]) -> None:
        """Store outputs, one transaction."""
        if not items:
            return
        with self._lock:
            try:
                ns = self._namespace(namespace)
                rows = [(ns, text_key(t), pack_arrays(v)) for t, v in items.items()]
                with self._db:
                    self._db.execute("BEGIN")
                    self._db.executemany("INSERT OR REPLACE INTO model_outputs VALUES (?, ?, ?)", rows)
            except sqlite3.Error as exc:
                raise OutputError(f"cannot write the model-output cache: {exc}", self.path) from None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM model_outputs").fetchone()[0])
