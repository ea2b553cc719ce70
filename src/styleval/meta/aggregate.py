"""From individual judgments to one human score per segment and per system.

* :func:`mean_scores` — the plain mean over annotators of each (system, segment).
* :func:`z_scores` — direct-assessment standardisation: every annotator's raw scores for one aspect are shifted by
  that annotator's mean and divided by that annotator's standard deviation, then averaged over annotators per
  (system, segment). ``ddof=0`` (population standard deviation) is the default because it is what Lai et al. (2022)
  used for the z-scores they ship (checked: their stored z-scores match ddof=0 to 5e-5, ddof=1 only to 9e-3);
  ``ddof=1`` gives the sample standard deviation. An annotator whose scores are all equal gets z = 0.
* :func:`system_scores` — the mean of a segment-level table per system.
* :func:`rao_tetreault_average_rank` — Rao & Tetreault (2018): average rank per system.

Segment tables are DataFrames with columns ``system``, ``segment``, ``score`` (and ``direction`` when the
judgments carry one).
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from styleval.errors import InputError

from .judgments import Judgments

HumanAggregation = Literal["mean", "z"]


def _select(j: Judgments, aspect: str | None) -> pd.DataFrame:
    frame = j.frame
    if aspect is not None:
        frame = frame[frame["aspect"] == aspect]
        if frame.empty:
            raise InputError(f"no judgments for aspect {aspect!r} (aspects: {', '.join(j.aspects)})", j.source)
    elif frame["aspect"].nunique() > 1:
        raise InputError(f"several aspects ({', '.join(j.aspects)}); name one", j.source)
    return frame


def _per_segment(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    keys = ["system", "segment"]
    out = frame.groupby(keys, sort=False).agg(score=(column, "mean"), n_annotators=("annotator", "nunique"))
    out = out.reset_index()
    if frame["direction"].notna().any():
        direction = frame.groupby(keys, sort=False)["direction"].first().reset_index()
        out = out.merge(direction, on=keys, how="left")
    return out


def mean_scores(j: Judgments, aspect: str | None = None) -> pd.DataFrame:
    """Mean over annotators of each (system, segment): columns system, segment, score, n_annotators[, direction]."""
    return _per_segment(_select(j, aspect), "score")


def standardise(j: Judgments, *, ddof: int = 0) -> pd.DataFrame:
    """The long table with a ``z`` column: each annotator's scores standardised within each aspect."""
    frame = j.frame
    grouped = frame.groupby(["annotator", "aspect"], sort=False)["score"]
    mean = grouped.transform("mean")
    std = grouped.transform(lambda s: s.std(ddof=ddof) if len(s) > ddof else np.nan)
    z = (frame["score"] - mean) / std.where(std > 0)
    frame["z"] = z.fillna(0.0)
    return frame


def z_scores(j: Judgments, aspect: str | None = None, *, ddof: int = 0) -> pd.DataFrame:
    """Per-annotator z-scores averaged per (system, segment).

    The standardisation uses *all* of an annotator's judgments of the aspect (every system, including references
    if they were rated), so call it on the full judgment set and filter systems afterwards.
    """
    keep = _select(j, aspect).index  # same index as j.frame; raises on an unknown/ambiguous aspect
    frame = standardise(j, ddof=ddof).loc[keep]
    return _per_segment(frame, "z")


def segment_scores(j: Judgments, aspect: str | None = None, *, human: HumanAggregation = "mean",
                   ddof: int = 0) -> pd.DataFrame:
    """:func:`mean_scores` or :func:`z_scores`, by name."""
    if human == "mean":
        return mean_scores(j, aspect)
    if human == "z":
        return z_scores(j, aspect, ddof=ddof)
    raise InputError(f"human aggregation must be 'mean' or 'z', not {human!r}")


def system_scores(table: Judgments | pd.DataFrame, aspect: str | None = None, *, human: HumanAggregation = "mean",
                  ddof: int = 0) -> pd.DataFrame:
    """Mean score per system.

    ``table`` is either :class:`Judgments` (aggregated per segment with ``human`` first, then averaged over
    segments, so every segment weighs the same whatever its number of annotators) or a segment table
    (system, segment, score) or a metric table (system, segment, metric, score), averaged per (metric,) system.
    Columns of the result: [metric,] system, score, n_segments.
    """
    if isinstance(table, Judgments):
        table = segment_scores(table, aspect, human=human, ddof=ddof)
    keys = (["metric"] if "metric" in table.columns else []) + ["system"]
    out = table.groupby(keys, sort=False).agg(score=("score", "mean"), n_segments=("segment", "nunique"))
    return out.reset_index()


def rao_tetreault_average_rank(j: Judgments | pd.DataFrame, aspect: str | None = None, *,
                               from_scores: bool = False, ties: str = "min") -> pd.DataFrame:
    """Average rank per system (Rao & Tetreault 2018, GYAFC human evaluation).

    Each annotator ranks the systems' outputs for one input (1 = best); a system's figure is the mean of all the
    ranks it received over inputs and annotators, i.e. the weighted average of ranks

        AvgRank(s) = sum_r r * c_s(r) / sum_r c_s(r)

    where c_s(r) is how often system s was ranked r. Lower is better.

    ``j`` holds the ranks as scores (``from_scores=False``), or graded scores (higher = better) that are first
    turned into ranks per (segment, annotator) (``from_scores=True``) with pandas' ``ties`` method (``"min"``:
    competition ranking 1, 2, 2, 4, as when annotators may give equal ranks; ``"average"``: 1, 2.5, 2.5, 4).
    Returns columns system, average_rank, n (ranks received), sorted best first.

    This is the overall-rank figure of the paper's Table 5 (mean over its 500 sentences and 5 judgments each). Its
    six mean ranks per domain sum to 15.58 (E&M) and 14.96 (F&R), well below the 21 of untied ranks of six
    rewrites, so the workers' ties shared the best rank: ranks given as they were, or ``ties="min"`` (not
    ``"average"``, which always sums to 21), match it (tests/test_overall.py).
    """
    frame = _select(j, aspect) if isinstance(j, Judgments) else j.copy()
    if from_scores:
        frame["rank"] = frame.groupby(["segment", "annotator"], sort=False)["score"].rank(
            method=ties, ascending=False)
    else:
        frame["rank"] = frame["score"]
        if (frame["rank"] < 1).any():
            raise InputError("ranks must be >= 1 (use from_scores=True for graded scores)")
    counts = frame.groupby(["system", "rank"]).size().rename("count").reset_index()
    counts["weighted"] = counts["rank"] * counts["count"]
    per = counts.groupby("system").agg(weighted=("weighted", "sum"), n=("count", "sum"))
    per["average_rank"] = per["weighted"] / per["n"]
    out = per.reset_index()[["system", "average_rank", "n"]]
    return out.sort_values(["average_rank", "system"]).reset_index(drop=True)
