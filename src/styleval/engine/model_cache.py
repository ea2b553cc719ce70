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
SQLite through :class:`~styleval.sqlitedb.SQLiteFile` (the statistics cache's file is fine: the tables are
separate), one transaction per stored batch, so a SIGKILL loses at most the batch in flight. Every entry carries a
checksum over its key and bytes: an entry whose bytes changed or were torn is computed again, never used.
"""
from __future__ import annotations

import hashlib
import struct
import sys
import threading
from importlib import metadata
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..models.outputs import Arrays
from ..sqlitedb import SQLiteFile, row_check

# "model_entries" replaced "model_outputs" (entries without a checksum) when checksums came
_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_entries (
    namespace BLOB NOT NULL, text BLOB NOT NULL, arrays BLOB NOT NULL, checksum BLOB NOT NULL,
    PRIMARY KEY (namespace, text)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS model_namespaces (namespace BLOB PRIMARY KEY, description TEXT NOT NULL);
"""
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
        self._file = SQLiteFile(path, _SCHEMA, "the model-output cache")
        self.path = self._file.path
        self._lock = threading.Lock()
        self._runtime: str | None = None
        self._namespaces: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0
        self.rejected = 0  # entries that failed their checksum or did not unpack, computed again

    def close(self) -> None:
        self._file.close()

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
            self._file.write([("INSERT OR IGNORE INTO model_namespaces VALUES (?, ?)", [(key, description)])])
            self._namespaces[namespace] = key
        return key

    def get_many(self, namespace: str, texts: Sequence[str]) -> dict[str, Arrays]:
        """Stored outputs of those ``texts`` that are in the cache with a valid checksum."""
        by_key = {text_key(t): t for t in dict.fromkeys(texts)}
        found: dict[str, Arrays] = {}
        with self._lock:
            ns = self._namespace(namespace)
            for key, blob, check in self._file.query_in(
                    "SELECT text, arrays, checksum FROM model_entries WHERE namespace = ? AND text IN ({marks})",
                    (ns,), list(by_key)):
                try:
                    if check != row_check(ns, key, blob):
                        raise ValueError("checksum")
                    found[by_key[key]] = unpack_arrays(blob)
                except ValueError:
                    self.rejected += 1
            self.hits += len(found)
            self.misses += len(by_key) - len(found)
        return found

    def put_many(self, namespace: str, items: Mapping[str, Arrays]) -> None:
        """Store outputs, one transaction."""
        if not items:
            return
        with self._lock:
            ns = self._namespace(namespace)
            rows = []
            for t, v in items.items():
                key, blob = text_key(t), pack_arrays(v)
                rows.append((ns, key, blob, row_check(ns, key, blob)))
            self._file.write([("INSERT OR REPLACE INTO model_entries VALUES (?, ?, ?, ?)", rows)])

    def __len__(self) -> int:
        return int(self._file.query("SELECT COUNT(*) FROM model_entries")[0][0])
