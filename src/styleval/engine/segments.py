"""Segment scores written as they are computed: JSON lines or Parquet, to a partial file renamed at the end."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import MissingDependencyError, OutputError

SEGMENT_FORMATS = ("jsonl", "parquet")


def segment_format(path: str | Path, format: str | None = None) -> str:
    """``jsonl`` or ``parquet``: ``format`` if given, else from the suffix (JSON lines by default)."""
    if format is not None:
        if format not in SEGMENT_FORMATS:
            raise OutputError(f"segment format must be one of {', '.join(SEGMENT_FORMATS)}, got {format!r}", path)
        return format
    return "parquet" if Path(path).suffix.lower() in (".parquet", ".pq") else "jsonl"


class SegmentWriter:
    """Rows ``{system, metric, id, score, empty_output}`` (the columns of ``ScoreResult.write_jsonl`` without the
    signature, which is the metric's and is written once with the corpus scores)."""

    def __init__(self, path: str | Path, format: str | None = None) -> None:
        self.path = Path(path)
        self.format = segment_format(path, format)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.rows = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.format == "jsonl":
                self._fh: Any = open(self.partial, "w", encoding="utf-8")
                self._pq: Any = None
            else:
                try:
                    import pyarrow as pa
                    import pyarrow.parquet as pq
                except ImportError:
                    raise MissingDependencyError("pyarrow", None, "Parquet segment files") from None
                self._pa = pa
                self._schema = pa.schema([("system", pa.string()), ("metric", pa.string()), ("id", pa.string()),
                                          ("score", pa.float64()), ("empty_output", pa.bool_())])
                self._pq = pq.ParquetWriter(str(self.partial), self._schema)
                self._fh = None
        except OSError as exc:
            raise OutputError(f"cannot write segment scores: {exc.strerror or exc}", path) from None

    def write(self, system: str, metric: str, ids: Sequence[str], scores: Sequence[float] | np.ndarray,
              empty: Sequence[bool]) -> None:
        if self.format == "jsonl":
            lines = []
            for i, s, e in zip(ids, scores, empty):
                score = None if math.isnan(s) else float(s)
                lines.append(json.dumps({"system": system, "metric": metric, "id": i, "score": score,
                                         "empty_output": bool(e)}, ensure_ascii=False))
            self._fh.write("\n".join(lines) + "\n" if lines else "")
        else:
            pa = self._pa
            n = len(ids)
            table = pa.Table.from_arrays(
                [pa.array([system] * n), pa.array([metric] * n), pa.array(list(ids), pa.string()),
                 pa.array([None if math.isnan(s) else float(s) for s in scores], pa.float64()),
                 pa.array([bool(e) for e in empty])], schema=self._schema)
            self._pq.write_table(table)
        self.rows += len(ids)

    def finish(self) -> None:
        """Close and move the partial file into place."""
        self._close()
        os.replace(self.partial, self.path)

    def abort(self) -> None:
        """Close and remove the partial file (a failed run leaves no segment file behind)."""
        self._close()
        self.partial.unlink(missing_ok=True)

    def _close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._pq is not None:
            self._pq.close()
            self._pq = None
