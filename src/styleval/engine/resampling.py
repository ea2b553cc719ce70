"""Intervals and paired tests resampled from a metric's cached segment statistics (the driver's last step)."""
from __future__ import annotations

from itertools import combinations
from typing import Callable, Sequence

import numpy as np

from ..metrics.base import Metric, MetricResult
from ..results import Comparison
from ..stats.significance import ResampleMemo
from .options import StatisticsOptions


def finite_rows(*stats: np.ndarray) -> np.ndarray:
    """Mask of segments whose statistics are all finite in every given array (NaN marks an unscorable segment,
    e.g. WMD of an output with no in-vocabulary word; the metric's own aggregate leaves those out too)."""
    mask = np.ones(len(stats[0]), dtype=bool)
    for st in stats:
        mask &= np.isfinite(st).all(axis=1)
    return mask


def _rows(stats: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """The rows ``ok`` selects; the array itself (no copy) when that is all of them."""
    return stats if ok.all() else stats[ok]


def resample_memo(metric: Metric) -> ResampleMemo:
    """One metric's shared resample scores, for :func:`add_interval` and :func:`paired_comparison` over all its
    systems (each system resampled once instead of once per interval and per test; the same figures)."""
    return ResampleMemo(metric.aggregate, metric.sum_aggregate())


def add_interval(result: MetricResult, metric: Metric, options: StatisticsOptions,
                 memo: ResampleMemo | None = None) -> None:
    """Set the bootstrap interval of ``result`` from its statistics (or say in ``extra`` why there is none);
    ``memo`` (from :func:`resample_memo` for this metric) shares the resample scores with the paired tests."""
    from ..stats.significance import bootstrap_ci

    stats = metric.resample_stats(result.stats)
    ok = finite_rows(stats)
    if ok.sum() < 2:
        result.extra["ci_skipped"] = f"{int(ok.sum())} scored segment(s); an interval needs 2"
        return
    aggregate, sum_then = (memo.aggregate, memo.sum_then) if memo else (metric.aggregate, metric.sum_aggregate())
    ci = bootstrap_ci(_rows(stats, ok), aggregate, sum_then=sum_then, n_resamples=options.bootstrap,
                      confidence=options.confidence, seed=options.seed, memo=memo)
    result.ci, result.ci_level = (float(ci.low), float(ci.high)), options.confidence
    if not ok.all():
        result.extra["ci_excluded_segments"] = int((~ok).sum())


def paired_comparison(metric: str, system: str, a: np.ndarray, baseline: str, b: np.ndarray,
                      aggregate: Callable[[np.ndarray], float] | None,
                      sum_then: Callable[[np.ndarray], float] | None, options: StatisticsOptions,
                      memo: ResampleMemo | None = None) -> Comparison:
    """``system`` (statistics ``a``) against ``baseline`` (``b``) on the segments finite in both, by the test that
    ``options`` names; ``aggregate``/``sum_then`` turn rows or summed rows into the corpus score (with ``memo``, the
    memo's own objects, :func:`resample_memo`; the paired bootstrap then shares its resamples with the intervals)."""
    from ..stats.significance import approximate_randomization, paired_bootstrap

    ok = finite_rows(a, b)
    if options.significance == "paired-bootstrap":
        test = paired_bootstrap(_rows(a, ok), _rows(b, ok), aggregate, sum_then=sum_then,
                                n_resamples=options.bootstrap, seed=options.seed, memo=memo)
        n = options.bootstrap
    else:
        test = approximate_randomization(_rows(a, ok), _rows(b, ok), aggregate, sum_then=sum_then,
                                         n_trials=options.n_trials, seed=options.seed)
        n = options.n_trials
    return Comparison(metric=metric, system=system, baseline=baseline, delta=float(test.delta),
                      p_value=float(test.pvalue), method=options.significance, n_resamples=n, seed=options.seed,
                      excluded_segments=int((~ok).sum()))


def comparison_pairs(systems: Sequence[str], baseline: str | None) -> list[tuple[str, str]]:
    """The (system, baseline) pairs that paired tests compare: each system against ``baseline``, or every pair."""
    if baseline is not None:
        return [(s, baseline) for s in systems if s != baseline]
    return list(combinations(systems, 2))
