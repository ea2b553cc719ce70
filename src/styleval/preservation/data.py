"""Training pairs for preservation models and the file format ``styleval train-content`` reads.

A pair file is TSV, CSV or JSONL with a header (or keys) naming at least ``source``, ``output`` and ``score``:

* ``source`` — the text whose meaning should be kept (a source sentence or a reference);
* ``output`` — the rewrite;
* ``score`` — how much meaning the rewrite keeps, a number in [0, 1] (1 = all of it; a style-only rewrite is 1, a
  rewrite with a changed fact is low); human ratings on another scale must be rescaled first;
* ``group`` (optional) — a name for where the pair comes from; every group gets the same total weight in
  training, so a large synthetic group does not drown a small human-rated one;
* ``weight`` (optional) — a positive weight of the pair within its group.

Empty texts, scores outside [0, 1], missing columns and bad numbers are errors naming the file and line.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError

REQUIRED = ("source", "output", "score")


@dataclass
class PairData:
    sources: list[str]
    outputs: list[str]
    scores: list[float]
    groups: list[str] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    origin: str = ""

    def __post_init__(self) -> None:
        n = len(self.sources)
        if not self.groups:
            self.groups = ["pairs"] * n
        if not self.weights:
            self.weights = [1.0] * n
        if not (len(self.outputs) == len(self.scores) == len(self.groups) == len(self.weights) == n):
            raise InputError("sources, outputs, scores, groups and weights differ in length")

    def __len__(self) -> int:
        return len(self.sources)

    def data_hash(self) -> str:
        h = hashlib.sha256()
        for row in zip(self.sources, self.outputs, self.scores, self.groups, self.weights):
            h.update(("\t".join(map(str, row)) + "\n").encode("utf-8"))
        return h.hexdigest()

    def subset(self, index: Sequence[int], origin: str | None = None) -> "PairData":
        pick = list(index)
        return PairData([self.sources[i] for i in pick], [self.outputs[i] for i in pick],
                        [self.scores[i] for i in pick], [self.groups[i] for i in pick],
                        [self.weights[i] for i in pick], self.origin if origin is None else origin)

    @classmethod
    def concat(cls, parts: Sequence["PairData"], origin: str) -> "PairData":
        return cls([s for p in parts for s in p.sources], [o for p in parts for o in p.outputs],
                   [y for p in parts for y in p.scores], [g for p in parts for g in p.groups],
                   [w for p in parts for w in p.weights], origin)

    def group_weights(self) -> np.ndarray:
        """Each pair's weight scaled so that every group sums to the same total (the mean is 1)."""
        w = np.asarray(self.weights, dtype=np.float64)
        groups = np.asarray(self.groups)
        out = np.zeros_like(w)
        names = list(dict.fromkeys(self.groups))
        for g in names:
            m = groups == g
            out[m] = w[m] / w[m].sum()
        return out * len(w) / len(names)

    def group_counts(self) -> dict[str, int]:
        names, counts = np.unique(np.asarray(self.groups), return_counts=True)
        return {str(k): int(v) for k, v in zip(names, counts)}


def _number(value: object, what: str, path: Path, line: int) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{what} {value!r} is not a number", path, line) from None
    if math.isnan(x):
        raise InputError(f"{what} is NaN", path, line)
    return x


def read_pairs(path: str | Path) -> PairData:
    """Read a pair file (``.tsv``, ``.csv`` or ``.jsonl``/``.json``; see the module docstring)."""
    from ..readers.tabular import iter_delimited
    from ..readers.text import iter_json_objects

    p = Path(path)
    if not p.is_file():
        raise InputError("pair file not found", p)
    rows: list[tuple[int, dict[str, object]]] = []
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".json"):
        rows = [(line, obj) for line, obj in iter_json_objects(p)]
        for line, obj in rows:
            if not isinstance(obj, dict):
                raise InputError("expected a JSON object", p, line)
    elif suffix in (".tsv", ".csv", ".txt"):
        header, body = iter_delimited(p, "csv" if suffix == ".csv" else "tsv")
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}; columns present: {', '.join(header)}", p)
        rows = [(line, dict(zip(header, fields))) for line, fields in body]
    else:
        raise InputError("pair files must be .tsv, .csv or .jsonl", p)
    if not rows:
        raise InputError("no pairs", p)
    data = PairData([], [], [], [], [], origin=str(p))
    for line, row in rows:
        missing = [c for c in REQUIRED if c not in row]
        if missing:
            raise InputError(f"missing key(s) {', '.join(missing)}", p, line)
        src, out = row["source"], row["output"]
        if not isinstance(src, str) or not src.strip():
            raise InputError("empty source text", p, line)
        if not isinstance(out, str) or not out.strip():
            raise InputError("empty output text", p, line)
        score = _number(row["score"], "score", p, line)
        if not 0.0 <= score <= 1.0:
            raise InputError(f"score {score} is outside [0, 1] (rescale human ratings first)", p, line)
        weight = 1.0
        if row.get("weight") not in (None, ""):
            weight = _number(row["weight"], "weight", p, line)
            if weight <= 0:
                raise InputError(f"weight {weight} must be positive", p, line)
        group = str(row.get("group") or "pairs")
        data.sources.append(src)
        data.outputs.append(out)
        data.scores.append(score)
        data.groups.append(group)
        data.weights.append(weight)
    return data


def write_pairs(data: PairData, path: str | Path) -> Path:
    """Write ``data`` as a JSONL pair file (one object per pair: source, output, score, group, weight) that
    :func:`read_pairs` reads back unchanged; for sharing built training data or training elsewhere."""
    import json

    p = Path(path)
    with p.open("w", encoding="utf-8") as fh:
        for row in zip(data.sources, data.outputs, data.scores, data.groups, data.weights):
            fh.write(json.dumps(dict(zip((*REQUIRED, "group", "weight"), row)),
                     ensure_ascii=False) + "\n")
    return p
