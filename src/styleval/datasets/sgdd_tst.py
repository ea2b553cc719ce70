"""SGDD-TST (Babakov et al.): 10,287 (original, formality-rewritten) dialogue utterances (``sgdd-tst/``).

Everything comes from ``metric/SGDD-TST_with_metrics.csv`` (a quoted CSV), parsed once by :func:`table`:
``text1`` the original, ``text2`` the rewrite, ``human`` the mean of 3-6 crowd votes (1-3), then the stored metric
columns. Segments are 0-based row indices ``"0"``..``"10286"`` in every view.

Views: :func:`records` (one record per row) and :func:`frame` (the table as a DataFrame, numeric columns as
numbers; :mod:`styleval.meta.datasets` builds its judgments and metric table from it).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..readers.tabular import iter_delimited
from ..readers.text import StrPath
from ..records import Record
from .paths import dataset_dir, number

FILE = Path("metric") / "SGDD-TST_with_metrics.csv"
TEXT_COLUMNS = ("text1", "text2")
REQUIRED = ("text1", "text2", "human")
HUMAN_SCALE = (1.0, 3.0)  # the crowd's three classes; ``human`` is the mean of 3-6 votes


@dataclass(frozen=True)
class Table:
    """The CSV as read: ``header``, and per data row its first line number and its fields (strings)."""

    path: Path
    header: list[str]
    lines: list[int]
    rows: list[list[str]]


def table(root: StrPath | None) -> Table:
    """Parse the CSV (strict UTF-8, quoted fields); :class:`InputError` names a missing column or a bad row."""
    path = dataset_dir(root, "sgdd-tst") / FILE
    header, raw = iter_delimited(path, "csv", "utf-8")
    for col in REQUIRED:
        if col not in header:
            raise InputError(f"missing column {col!r}; columns present: {', '.join(map(repr, header))}", path)
    lines, rows = [], []
    for line, fields in raw:
        if not fields[header.index("text1")].strip():
            raise InputError("empty source (text1)", path, line)
        lines.append(line)
        rows.append(fields)
    return Table(path, header, lines, rows)


def records(root: StrPath | None, system: str = "sgdd") -> list[Record]:
    """One record per row: ``text1`` the source, ``text2`` the output, one system (default ``"sgdd"``; the meta
    view calls it ``rewrite``), no references, no direction (formality rewriting both ways). ``meta`` holds
    ``human`` and every metric column as floats, NaN where the cell is empty."""
    t = table(root)
    numeric = [(i, c) for i, c in enumerate(t.header) if c not in TEXT_COLUMNS]
    src, out = t.header.index("text1"), t.header.index("text2")
    return [Record(id=str(index), source=fields[src], output=fields[out], system=system,
                   meta={c: number(fields[i], f"column {c!r}", t.path, line) for i, c in numeric})
            for index, (line, fields) in enumerate(zip(t.lines, t.rows))]


def frame(root: StrPath | None) -> tuple[pd.DataFrame, Path]:
    """The table as a DataFrame and the file it came from. Text columns stay strings; every other column becomes
    numeric (empty cells NaN) unless one of its cells is not a number, then it stays strings. ``human`` must be
    a number on the crowd's 1-3 scale in every row (:class:`InputError` naming the line otherwise)."""
    t = table(root)
    columns: dict[str, object] = {}
    for i, name in enumerate(t.header):
        cells = [fields[i] for fields in t.rows]
        if name in TEXT_COLUMNS:
            columns[name] = cells
            continue
        series = pd.Series([c if c.strip() else np.nan for c in cells], dtype=object)
        try:
            columns[name] = pd.to_numeric(series)
        except (TypeError, ValueError):
            columns[name] = cells
    out = pd.DataFrame(columns)
    human = pd.to_numeric(out["human"], errors="coerce")
    bad = human.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"human score {out['human'].iloc[row]!r} is not a number", t.path, t.lines[row])
    off = ~human.between(*HUMAN_SCALE)
    if off.any():
        row = int(np.flatnonzero(off.to_numpy())[0])
        raise InputError(f"human score {human.iloc[row]:g} is not on the crowd's 1-3 scale", t.path, t.lines[row])
    return out, t.path
