"""The overall scores of an evaluation: ``hm``, ``gm`` and ``j`` metrics over the battery's own metrics.

The scores themselves are the registered composite metrics of :mod:`styleval.metrics.overall.composite` (one
definition for ``styleval score`` and ``styleval evaluate``): scored by the same engine call as the rest of the
battery, they reuse the style, content and fluency statistics of that call, and their bootstrap intervals and
paired tests resample those statistics jointly over segments, with the seed, resample count and confidence of the
metrics' own intervals. This module picks their components from the battery's roles and presents their results
as the evaluation's overall table.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from ..errors import InputError
from ..metrics.base import Metric
from ..metrics.overall import GeometricMean, HarmonicMean, JointScore
from ..results import Comparison, ScoreResult

OVERALL_SCORES = ("hm", "gm", "j")
OVERALL_COLUMNS = ["system", "score", "value", "ci_low", "ci_high", "ci_excluded_segments"]


def overall_metrics(roles: Mapping[str, Metric], fluency_threshold: float | None) -> list[Metric]:
    """``hm``, ``gm`` (style and content roles) and ``j`` (style, similarity and, when there is one, fluency role
    with ``fluency_threshold``) over the metric instances that play those roles."""
    missing = [role for role in ("style", "content", "similarity") if role not in roles]
    if missing:
        raise InputError(f"overall scores: no metric plays {', '.join(map(repr, missing))} in the battery")
    style, content = roles["style"], roles["content"]
    fluency = roles.get("fluency")
    return [HarmonicMean(style=style, content=content), GeometricMean(style=style, content=content),
            JointScore(style=style, similarity=roles["similarity"], fluency=fluency,
                       fluency_threshold=fluency_threshold if fluency is not None else None)]


def split_overall(result: ScoreResult) -> tuple[ScoreResult, pd.DataFrame, list[Comparison]]:
    """The per-aspect results, the overall table (rows ``system, score, value, ci_low, ci_high,
    ci_excluded_segments``) and the overall scores' paired tests, from one engine result."""
    aspect_results = [r for r in result.results if r.metric not in OVERALL_SCORES]
    rows = []
    for name in OVERALL_SCORES:
        for system in result.systems:
            r = result.get(name, system)
            rows.append({"system": system, "score": name, "value": r.corpus_score,
                         "ci_low": r.ci[0] if r.ci else np.nan, "ci_high": r.ci[1] if r.ci else np.nan,
                         "ci_excluded_segments": int(r.extra.get("ci_excluded_segments", 0))})
    overall_comparisons = [c for c in result.comparisons if c.metric in OVERALL_SCORES]
    rest = ScoreResult(results=aspect_results,
                       comparisons=[c for c in result.comparisons if c.metric not in OVERALL_SCORES],
                       settings=result.settings, texts=result.texts)
    return rest, pd.DataFrame(rows, columns=OVERALL_COLUMNS), overall_comparisons
