"""An on-disk cache of segment statistics, so that a killed run started again recomputes only what is missing.

Keyed by the metric's identity (its signature computed without a batch: name, version, parameters, resources
with their content hashes, library versions) and a hash of everything a segment's statistics can depend on
(output, source, references, direction). Values are the statistics row as float64 bytes (so a cached row is
bit for bit the computed one) and the names of the flags the metric set on that segment. Every row carries a
checksum over its key and value (:func:`styleval.sqlitedb.row_check`): a row whose bytes changed, or that was torn,
fails it when read and is computed again (and overwritten), never used. Stored in SQLite through
:class:`~styleval.sqlitedb.SQLiteFile` (one transaction per chunk: a SIGKILL loses at most the chunk in flight).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import OutputError
from ..metrics.base import Metric
from ..records import Record
from ..sqlitedb import SQLiteFile, row_check

# "segment_stats" replaced "stats" (rows without a checksum) when checksums came: old files recompute once
_SCHEMA = """
CREATE TABLE IF NOT EXISTS segment_stats (
    metric BLOB NOT NULL, segment BLOB NOT NULL, n_stats INTEGER NOT NULL, row BLOB NOT NULL, flags TEXT,
    checksum BLOB NOT NULL, PRIMARY KEY (metric, segment)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS metrics (metric BLOB PRIMARY KEY, signature TEXT NOT NULL, resources TEXT);
"""


def metric_key(metric: Metric) -> tuple[bytes, str]:
    """A digest of the metric's identity and the identity as text."""
    ident = f"{metric.metric_id.label}|{metric.signature(None)}"
    return hashlib.blake2b(ident.encode("utf-8"), digest_size=16).digest(), ident


def segment_key(record: Record) -> bytes:
    """A digest of the texts and direction a segment's statistics may depend on."""
    text = json.dumps([record.output, record.source, list(record.references),
                       None if record.direction is None else str(record.direction)], ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _decode(n: int, row: bytes, flags: str | None) -> tuple[np.ndarray, list[str]] | None:
    """A stored row, or None when its bytes are not ``n`` floats and a list of flag names."""
    if len(row) != 8 * n:
        return None
    try:
        names: Any = json.loads(flags) if flags else []
    except json.JSONDecodeError:
        return None
    if not isinstance(names, list) or not all(isinstance(f, str) for f in names):
        return None
    return np.frombuffer(row, dtype=np.float64).copy(), names


class StatsCache:
    """Segment statistics by (metric, segment text) in a SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self._file = SQLiteFile(path, _SCHEMA, "the statistics cache")
        self.path = self._file.path
        self.hits = 0
        self.misses = 0
        self.rejected = 0  # rows that failed their checksum (changed or torn) and were recomputed

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "StatsCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lookup(self, metric: bytes, segments: Sequence[bytes], n_stats: int | None
               ) -> dict[bytes, tuple[np.ndarray, list[str]]]:
        """Cached rows (and flag names) of those ``segments`` that are in the cache with a valid checksum."""
        found: dict[bytes, tuple[np.ndarray, list[str]]] = {}
        unique = list(dict.fromkeys(segments))
        for seg, n, row, flags, check in self._file.query_in(
                "SELECT segment, n_stats, row, flags, checksum FROM segment_stats WHERE metric = ? AND segment IN "
                "({marks})", (metric,), unique):
            if n_stats is not None and n != n_stats:
                continue
            decoded = _decode(int(n), bytes(row), flags) if check == row_check(metric, seg, n, row, flags) else None
            if decoded is None:
                self.rejected += 1
                continue
            found[seg] = decoded
        self.hits += sum(1 for s in segments if s in found)
        self.misses += sum(1 for s in segments if s not in found)
        return found

    def store(self, metric: bytes, signature: str, segments: Sequence[bytes], values: np.ndarray,
              flags: Sequence[list[str]], resources: dict[str, str]) -> None:
        """Statistics rows of ``segments`` (one transaction)."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        rows = []
        for k, seg in enumerate(segments):
            row, names = values[k].tobytes(), json.dumps(flags[k]) if flags[k] else None
            rows.append((metric, seg, values.shape[1], row, names,
                         row_check(metric, seg, values.shape[1], row, names)))
        self._file.write([("INSERT OR REPLACE INTO segment_stats VALUES (?, ?, ?, ?, ?, ?)", rows),
                          ("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)",
                           [(metric, signature, json.dumps(resources, sort_keys=True))])])

    def resources(self, metric: bytes) -> dict[str, str]:
        """Resources the metric resolved when it computed the cached rows."""
        rows = self._file.query("SELECT resources FROM metrics WHERE metric = ?", (metric,))
        try:
            value = json.loads(rows[0][0]) if rows and rows[0][0] else {}
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise OutputError("the statistics cache has a corrupt 'metrics' row (resources not a JSON object of "
                              "strings); delete the file (it is a styleval cache: nothing else is lost)", self.path)
        return value
