"""Metric score tables for meta-evaluation: reading them, and joining them with human judgments loudly.

A metric table is a DataFrame with columns ``system``, ``segment``, ``metric``, ``score`` (and optionally
``direction``); identifiers are strings. It comes from

* a ``styleval score --json`` file (its ``segments`` block; lower-is-better metrics are named in its ``corpus``
  block), :func:`read_metric_table` recognises it;
* a CSV / TSV / JSON lines table with columns ``system``, ``segment`` (or ``id``), ``metric``, ``score``
  (``styleval score --segments-csv`` / ``--jsonl`` write such tables);
* a :class:`~styleval.results.ScoreResult` in memory (:func:`metric_table_from_result`).

A score that is missing (``null``/empty/NaN) stays in the table as NaN; :func:`styleval.meta.run` counts and drops
it per metric and says so in its result.
"""
from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from styleval.errors import InputError
from styleval.readers.text import iter_json_objects, read_text
from styleval.records import NAME_EDGE, canonical_name, name_problem

from .judgments import direction_column

COLUMNS = ("system", "segment", "metric", "score")
_SEGMENT_ALIASES = ("segment", "id", "segment_id", "seg", "item")
_MAX_EXAMPLES = 5


def _ident(value: Any) -> str:
    """Identifiers as strings in NFC; integral floats (``3.0`` from a numeric column) lose their ``.0``."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return canonical_name(str(value).strip(NAME_EDGE))


def normalise_metric_table(frame: pd.DataFrame, *, source: str | Path | None = None) -> pd.DataFrame:
    """Check and normalise a metric table: string ids, float scores, ``id`` accepted for ``segment``."""
    frame = frame.copy()
    if "segment" not in frame.columns:
        alias = next((c for c in _SEGMENT_ALIASES if c in frame.columns), None)
        if alias is not None:
            frame = frame.rename(columns={alias: "segment"})
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"metric table lacks column(s) {', '.join(map(repr, missing))} (columns present: "
                         f"{', '.join(map(str, frame.columns)) or 'none'}; 'id' is accepted for 'segment')", source)
    for col in ("system", "segment", "metric"):
        empty = frame[col].isna() | (frame[col].astype(str).str.strip() == "")
        if empty.any():
            raise InputError(f"{int(empty.sum())} row(s) with an empty {col!r} (first: row "
                             f"{int(np.flatnonzero(empty.to_numpy())[0]) + 1})", source)
        frame[col] = [_ident(v) for v in frame[col]]
        if col in ("system", "segment"):
            bad = next(((v, p) for v in dict.fromkeys(frame[col]) if (p := name_problem(v, col))), None)
            if bad is not None:
                row = list(frame[col]).index(bad[0])
                raise InputError(f"{bad[1]} (row {row + 1})", source)
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = scores.isna() & frame["score"].notna() & ~frame["score"].astype(str).str.strip().str.lower().isin(
        ("", "nan", "null", "none", "na"))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"score {frame['score'].iloc[row]!r} is not a number (row {row + 1})", source)
    frame["score"] = scores.astype(float)
    if np.isinf(frame["score"]).any():
        raise InputError(f"{int(np.isinf(frame['score']).sum())} infinite score(s)", source)
    dup = frame.duplicated(["system", "segment", "metric"], keep=False)
    if dup.any():
        first = frame.loc[dup].iloc[0]
        raise InputError(f"{int(dup.sum())} rows repeat a (system, segment, metric), e.g. system="
                         f"{first['system']!r} segment={first['segment']!r} metric={first['metric']!r}", source)
    if "direction" in frame.columns:
        frame["direction"] = direction_column(frame["direction"], source)
    keep = [c for c in ("system", "segment", "metric", "score", "direction") if c in frame.columns]
    return frame[keep].reset_index(drop=True)


def metric_table_from_score_dict(data: Mapping[str, Any], *, source: str | Path | None = None) -> pd.DataFrame:
    """The ``segments`` block of a ``styleval score --json`` document as a metric table."""
    blocks = data.get("segments")
    if not isinstance(blocks, list):
        raise InputError("not a 'styleval score --json' file: no 'segments' list", source)
    rows: list[tuple[str, str, str, float]] = []
    for k, block in enumerate(blocks):
        if not isinstance(block, dict) or not {"system", "metric", "scores"} <= block.keys():
            raise InputError(f"segments[{k}] lacks 'system', 'metric' or 'scores'", source)
        for seg, value in block["scores"].items():
            rows.append((str(block["system"]), str(seg), str(block["metric"]),
                         math.nan if value is None else value))
    return normalise_metric_table(pd.DataFrame(rows, columns=list(COLUMNS)), source=source)


def lower_is_better_from_score_dict(data: Mapping[str, Any]) -> set[str]:
    """Metrics flagged ``higher_is_better: false`` in the ``corpus`` block of a score JSON document."""
    return {str(c["metric"]) for c in data.get("corpus", []) or []
            if isinstance(c, dict) and c.get("higher_is_better") is False}


def lower_is_better_from_registry(metrics: Iterable[str]) -> set[str]:
    """Metric names whose registered class says lower is better: ``wmd/src`` (styleval's names), ``ter``, and
    ``src:wmd`` (``group:metric`` names as in :mod:`styleval.meta.datasets`); names of no known metric: none."""
    import re

    from styleval.metrics import registry

    known = registry.available()
    out = set()
    for name in metrics:
        parts = [p for p in re.split(r"[/:]", str(name)) if p]
        classes = [known[p] for p in parts if p in known]
        if classes and not classes[0].higher_is_better:
            out.add(str(name))
    return out


def read_metric_table(path: str | Path, *, format: str | None = None) -> pd.DataFrame:  # noqa: A002
    """Read a metric table from a score JSON file, CSV, TSV or JSON lines (by ``format`` or suffix)."""
    table, _ = read_metric_file(path, format=format)
    return table


def read_metric_file(path: str | Path, *, format: str | None = None,  # noqa: A002
                     encoding: str | None = None) -> tuple[pd.DataFrame, set[str]]:
    """:func:`read_metric_table` plus the metrics the file itself marks lower-is-better (score JSON only).
    ``encoding``: of a CSV, TSV or JSON-lines table (default: UTF-8, or
    :func:`~styleval.readers.text.inputs_encoded`'s); JSON is always UTF-8."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt == "json":
        try:
            data = json.loads(read_text(path, "utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", path, exc.lineno) from None
        if isinstance(data, dict) and "segments" in data:
            return metric_table_from_score_dict(data, source=path), lower_is_better_from_score_dict(data)
        if isinstance(data, list):
            return normalise_metric_table(pd.DataFrame(data), source=path), set()
        raise InputError("JSON file is neither a 'styleval score --json' document nor a list of rows", path)
    if fmt in ("csv", "tsv", "tab"):
        text = read_text(path, encoding)
        try:
            frame = pd.read_csv(io.StringIO(text), sep="," if fmt == "csv" else "\t", dtype=str,
                                keep_default_na=False)
        except pd.errors.ParserError as exc:
            raise InputError(f"cannot parse: {exc}", path) from None
        frame.columns = [str(c).strip() for c in frame.columns]
        return normalise_metric_table(frame, source=path), _lower_column(frame)
    if fmt in ("jsonl", "ndjson"):
        rows = [{k: (str(v) if k in ("system", "segment", "id", "metric") else v) for k, v in obj.items()}
                for _, obj in iter_json_objects(path, encoding)]
        frame = pd.DataFrame(rows)
        return normalise_metric_table(frame, source=path), _lower_column(frame)
    raise InputError(f"unknown metric table format {fmt!r} (use json, csv, tsv or jsonl)", path)


def _lower_column(frame: pd.DataFrame) -> set[str]:
    """Metrics whose optional ``higher_is_better`` column says false."""
    if "higher_is_better" not in frame.columns or "metric" not in frame.columns:
        return set()
    flag = frame["higher_is_better"].astype(str).str.strip().str.lower()
    return {str(m) for m in frame.loc[flag.isin(("false", "0", "no")), "metric"]}


def metric_table_from_result(result: Any) -> pd.DataFrame:
    """A :class:`~styleval.results.ScoreResult` as a metric table (``id`` becomes ``segment``)."""
    frame = result.to_dataframe("segment")
    return normalise_metric_table(frame[["system", "id", "metric", "score"]])


# ------------------------------------------------------------------------------------------------ joining
def unmatched_rows(human: pd.DataFrame, metric_table: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``metric_table`` whose (system, segment) has no human score in ``human`` (system, segment)."""
    keys = pd.MultiIndex.from_frame(human[["system", "segment"]].astype(str))
    mine = pd.MultiIndex.from_frame(metric_table[["system", "segment"]].astype(str))
    return metric_table.loc[~mine.isin(keys)]


def describe_unmatched(unmatched: pd.DataFrame, human: pd.DataFrame, n_total: int, aspect: str) -> str:
    """A message naming how many metric rows match no human score, per metric and system, with examples/hints."""
    per_metric = unmatched.groupby("metric", sort=False).size()
    by_metric = ", ".join(f"{m}: {n}" for m, n in per_metric.head(8).items())
    if len(per_metric) > 8:
        by_metric += f", ... ({len(per_metric) - 8} more metrics)"
    lines = [f"{len(unmatched)} of {n_total} metric score row(s) match no human judgment of aspect {aspect!r} "
             f"on (system, segment) [{by_metric}]"]
    systems = set(human["system"])
    missing_systems = sorted(set(unmatched["system"]) - systems)
    if missing_systems:
        shown = ", ".join(repr(s) for s in missing_systems[:_MAX_EXAMPLES])
        lines.append(f"systems without human scores: {shown}"
                     + (f" (and {len(missing_systems) - _MAX_EXAMPLES} more)"
                        if len(missing_systems) > _MAX_EXAMPLES else "")
                     + f"; humans judged: {', '.join(repr(s) for s in sorted(systems)[:10])}"
                     + ("" if len(systems) <= 10 else ", ..."))
    known = unmatched[unmatched["system"].isin(systems)]
    if not known.empty:
        ex = known.drop_duplicates(["system", "segment"]).head(_MAX_EXAMPLES)
        shown = "; ".join(f"system={r.system!r} segment={r.segment!r}" for r in ex.itertuples())
        human_ids = list(dict.fromkeys(human["segment"]))[:_MAX_EXAMPLES]
        lines.append(f"e.g. {shown}; human segment ids look like {', '.join(map(repr, human_ids))}")
        stripped = {s.lstrip("0") or "0" for s in known["segment"]}
        if stripped & {s.lstrip("0") or "0" for s in human["segment"]} and not (
                set(known["segment"]) & set(human["segment"])):
            lines.append("the ids differ only in leading zeros: write both sides with the same ids")
    lines.append("exclude those systems (--exclude), fix the ids, or pass --allow-unmatched to leave such rows "
                 "out (their count is then reported)")
    return "; ".join(lines)
