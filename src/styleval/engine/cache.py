"""An on-disk cache of segment statistics, so that a killed run started again recomputes only what is missing.

Keyed by the metric's identity (its signature computed without a batch: name, version, parameters, resources
with their content hashes, library versions) and a hash of everything a segment's statistics can depend on
(output, source, references, direction). Values are the statistics row as float64 bytes (so a cached row is
bit for bit the computed one) and the names of the flags the metric set on that segment. Stored in SQLite
(one transaction per chunk: a SIGKILL loses at most the chunk in flight, never leaves a torn row).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import OutputError
from ..metrics.base import Metric
from ..records import Record

_SCHEMA = """
CREATE TABLE IF NOT EXISTS stats (
    metric BLOB NOT NULL, segment BLOB NOT NULL, n_stats INTEGER NOT NULL, row BLOB NOT NULL, flags TEXT,
    PRIMARY KEY (metric, segment)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS metrics (metric BLOB PRIMARY KEY, signature TEXT NOT NULL, resources TEXT);
"""
_LOOKUP_BATCH = 500


def metric_key(metric: Metric) -> tuple[bytes, str]:
    """A digest of the metric's identity and the identity as text."""
    ident = f"{metric.metric_id.label}|{metric.signature(None)}"
    return hashlib.blake2b(ident.encode("utf-8"), digest_size=16).digest(), ident


def segment_key(record: Record) -> bytes:
    """A digest of the texts and direction a segment's statistics may depend on."""
    text = json.dumps([record.output, record.source, list(record.references),
                       None if record.direction is None else str(record.direction)], ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class StatsCache:
    """Segment statistics by (metric, segment text) in a SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise OutputError(f"cannot open the statistics cache: {exc}", self.path) from None
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "StatsCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lookup(self, metric: bytes, segments: Sequence[bytes], n_stats: int | None
               ) -> dict[bytes, tuple[np.ndarray, list[str]]]:
        """Cached rows (and flag names) of those ``segments`` that are in the cache."""
        found: dict[bytes, tuple[np.ndarray, list[str]]] = {}
        unique = list(dict.fromkeys(segments))
        for start in range(0, len(unique), _LOOKUP_BATCH):
            part = unique[start:start + _LOOKUP_BATCH]
            marks = ",".join("?" * len(part))
            for seg, n, row, flags in self._db.execute(
                    f"SELECT segment, n_stats, row, flags FROM stats WHERE metric = ? AND segment IN ({marks})",
                    (metric, *part)):
                if n_stats is not None and n != n_stats:
                    continue
                found[seg] = (np.frombuffer(row, dtype=np.float64).copy(), json.loads(flags) if flags else [])
        self.hits += sum(1 for s in segments if s in found)
        self.misses += sum(1 for s in segments if s not in found)
        return found

    def store(self, metric: bytes, signature: str, segments: Sequence[bytes], values: np.ndarray,
              flags: Sequence[list[str]], resources: dict[str, str]) -> None:
        """Statistics rows of ``segments`` (one transaction)."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        rows = [(metric, seg, values.shape[1], values[k].tobytes(), json.dumps(flags[k]) if flags[k] else None)
                for k, seg in enumerate(segments)]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO stats VALUES (?, ?, ?, ?, ?)", rows)
            self._db.execute("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)",
                             (metric, signature, json.dumps(resources, sort_keys=True)))

    def resources(self, metric: bytes) -> dict[str, str]:
        """Resources the metric resolved when it computed the cached rows."""
        row = self._db.execute("SELECT resources FROM metrics WHERE metric = ?", (metric,)).fetchone()
        return json.loads(row[0]) if row and row[0] else {}
