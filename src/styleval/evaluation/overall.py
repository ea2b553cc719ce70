"""Overall scores (HM, GM, J) with bootstrap intervals and paired tests that resample segments jointly.

An overall score mixes several metrics, so its interval cannot come from any one metric's interval. Per system the
statistics of the style metric, of the content metric and the per-segment J products are put side by side, one row
per segment; a resample of segment indices then recomputes the style and content corpus scores (through each
metric's own ``aggregate``) and the overall score from the same rows. The resampling, the percentile interval and
the paired tests are those of :mod:`styleval.stats.significance` with the seed, resample count and confidence of the
metrics' own intervals, so on segments whose statistics are all finite the style and content components of every
resample are exactly the resamples behind ``style_accuracy``'s and ``bleu/ref``'s intervals.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ..errors import InputError
from ..metrics.base import Metric
from ..results import Comparison, ScoreResult
from ..scoring import ResamplingOptions, comparison_pairs, finite_rows, paired_comparison

OVERALL_SCORES = ("hm", "gm", "j")
Aggregate = Callable[[np.ndarray], float]


@dataclass(frozen=True)
class Scorer:
    """A corpus score from rows of statistics (``aggregate``) and, where it depends on the column sums only, from
    the summed row (``sum_then``: resampled by matrix products, much faster)."""

    aggregate: Aggregate
    sum_then: Aggregate | None = None


def unit_scale(values: Any, metric: str) -> np.ndarray:
    """Bring a score to [0, 1]: BLEU and chrF ÷ 100, then clipped."""
    v = np.asarray(values, dtype=float)
    if metric.startswith(("bleu", "chrf")):
        v = v / 100.0
    return np.clip(v, 0.0, 1.0)


def _sum_function(metric: Metric, n: int) -> Aggregate | None:
    """The metric's corpus score as a function of its summed statistics, or None where it is not one."""
    fn = metric.sum_aggregate()
    if fn is not None:
        return fn
    cls = type(metric)
    if cls.aggregate is Metric.aggregate and cls.scores_from_stats is Metric.scores_from_stats:
        return lambda sums: float(sums[0]) / n if n else float("nan")  # the default: mean of the first column
    return None


def _combine(name: str, style: float, content: float, content_metric: str) -> float:
    from ..metrics.overall.combine import geometric_mean, harmonic_mean

    s = float(np.clip(style, 0.0, 1.0)) if np.isfinite(style) else float("nan")
    c = float(unit_scale(np.array([content]), content_metric)[0]) if np.isfinite(content) else float("nan")
    if not (np.isfinite(s) and np.isfinite(c)):
        return float("nan")
    return float(harmonic_mean(s, c) if name == "hm" else geometric_mean(s, c))


def overall_scorer(name: str, style: Metric, content: Metric, content_metric: str, k_style: int, k_content: int,
                   n: int) -> Scorer:
    """The scorer of overall score ``name`` over rows ``[style stats | content stats | J segment]`` of ``n``
    segments (``k_style`` and ``k_content`` statistics columns)."""
    if name == "j":
        return Scorer(aggregate=lambda rows: float(np.mean(rows[:, -1])) if len(rows) else float("nan"),
                      sum_then=lambda sums: float(sums[-1]) / n if n else float("nan"))
    if name not in ("hm", "gm"):
        raise InputError(f"unknown overall score {name!r}; known: {', '.join(OVERALL_SCORES)}")
    cut = k_style + k_content

    def aggregate(rows: np.ndarray) -> float:
        return _combine(name, style.aggregate(rows[:, :k_style]), content.aggregate(rows[:, k_style:cut]),
                        content_metric)

    s_sum, c_sum = _sum_function(style, n), _sum_function(content, n)
    if s_sum is None or c_sum is None:
        return Scorer(aggregate=aggregate)

    def from_sums(sums: np.ndarray) -> float:
        return _combine(name, s_sum(sums[:k_style]), c_sum(sums[k_style:cut]), content_metric)

    return Scorer(aggregate=aggregate, sum_then=from_sums)


def interval(stats: np.ndarray, make_scorer: Callable[[int], Scorer], options: ResamplingOptions
             ) -> tuple[tuple[float, float] | None, int]:
    """Percentile bootstrap interval over segments whose statistics are finite, with the metrics' draws
    (:func:`styleval.stats.significance.bootstrap_ci`); returns the interval (None when it cannot be computed)
    and the number of segments left out."""
    from ..stats.significance import bootstrap_ci

    ok = finite_rows(stats)
    if options.bootstrap <= 0 or ok.sum() < 2:
        return None, int((~ok).sum())
    scorer = make_scorer(int(ok.sum()))
    ci = bootstrap_ci(stats[ok], None if scorer.sum_then else scorer.aggregate, sum_then=scorer.sum_then,
                      n_resamples=options.bootstrap, confidence=options.confidence, seed=options.seed)
    if not (np.isfinite(ci.low) and np.isfinite(ci.high)):
        return None, int((~ok).sum())
    return (float(ci.low), float(ci.high)), int((~ok).sum())


def paired_test(name: str, system: str, a: np.ndarray, baseline: str, b: np.ndarray,
                make_scorer: Callable[[int], Scorer], options: ResamplingOptions) -> Comparison:
    """``system`` against ``baseline`` on score ``name``, by the test and draws the metrics' comparisons use."""
    scorer = make_scorer(int(finite_rows(a, b).sum()))
    return paired_comparison(name, system, a, baseline, b, None if scorer.sum_then else scorer.aggregate,
                             scorer.sum_then, options)


# ------------------------------------------------------------------------------------------------- overall
def joint_segments_of(result: ScoreResult, roles: Mapping[str, str], system: str, threshold: float) -> np.ndarray:
    """Per-segment STA·SIM·FL of one system (STA the classifier's 0/1 decision, SIM in [0, 1], FL the perplexity
    indicator, or 1 without a fluency role); a missing factor counts as 0."""
    from ..metrics.overall.combine import joint_segments

    sta = result.get(roles["style"], system)
    sim = result.get(roles["similarity"], system)
    if list(sim.ids) != list(sta.ids):
        raise InputError(f"system {system!r}: style and similarity scores cover different segments")
    sta_seg = np.clip(np.asarray(sta.segment_scores, dtype=float), 0.0, 1.0)
    sim_seg = unit_scale(sim.segment_scores, roles["similarity"])
    if "fluency" in roles:
        fl = result.get(roles["fluency"], system)
        fl_seg = (np.asarray(fl.segment_scores, dtype=float) <= threshold).astype(float)
    else:
        fl_seg = np.ones_like(sta_seg)
    return joint_segments(np.nan_to_num(sta_seg), np.nan_to_num(sim_seg), fl_seg)


def overall_table(result: ScoreResult, metrics: Mapping[str, Metric], roles: Mapping[str, str], threshold: float,
                  options: ResamplingOptions) -> tuple[pd.DataFrame, list[Comparison]]:
    """Overall scores per system with their joint-bootstrap intervals, and the paired tests between systems.

    Rows ``system, score, value, ci_low, ci_high, ci_excluded_segments`` (scores ``hm``, ``gm``, ``j``); ``value``
    is computed from the full data (corpus scores of the style and content metrics, mean of the J products).
    """
    style_name, content_name = roles["style"], roles["content"]
    style, content = metrics[style_name], metrics[content_name]
    rows, stats = [], {}
    for system in result.systems:
        sta = result.get(style_name, system)
        con = result.get(content_name, system)
        if list(con.ids) != list(sta.ids):
            raise InputError(f"system {system!r}: style and content scores cover different segments")
        j_seg = joint_segments_of(result, roles, system, threshold)
        combined = np.column_stack([np.asarray(sta.stats, dtype=float), np.asarray(con.stats, dtype=float), j_seg])
        stats[system] = combined
        values = {"hm": _combine("hm", sta.corpus_score, con.corpus_score, content_name),
                  "gm": _combine("gm", sta.corpus_score, con.corpus_score, content_name),
                  "j": float(np.mean(j_seg)) if j_seg.size else float("nan")}
        for name in OVERALL_SCORES:
            ci, excluded = interval(combined, _factory(name, style, content, content_name, sta, con), options)
            rows.append({"system": system, "score": name, "value": values[name],
                         "ci_low": ci[0] if ci else float("nan"), "ci_high": ci[1] if ci else float("nan"),
                         "ci_excluded_segments": excluded})
    tested = options.significance != "none" and len(result.systems) > 1
    pairs = comparison_pairs(result.systems, options.baseline) if tested else []
    comparisons = []
    for name in OVERALL_SCORES:
        for system, baseline in pairs:
            sta = result.get(style_name, system)
            con = result.get(content_name, system)
            comparisons.append(paired_test(name, system, stats[system], baseline, stats[baseline],
                                           _factory(name, style, content, content_name, sta, con), options))
    columns = ["system", "score", "value", "ci_low", "ci_high", "ci_excluded_segments"]
    return pd.DataFrame(rows, columns=columns), comparisons


def _factory(name: str, style: Metric, content: Metric, content_name: str, sta: Any, con: Any
             ) -> Callable[[int], Scorer]:
    ks, kc = np.asarray(sta.stats).shape[1], np.asarray(con.stats).shape[1]
    return lambda n: overall_scorer(name, style, content, content_name, ks, kc, n)
