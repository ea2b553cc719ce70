"""Significance clusters among the metrics of one task, as WMT's metrics task reports them.

Metrics are sorted by their correlation, best first. Walking down the list, a metric opens a new cluster (its rank
is one more than the cluster above) when a metric of the current cluster correlates significantly better than it:
a one-sided paired permutation test of the difference of the two correlations
(:func:`styleval.stats.significance.permutation_test_correlation_difference`, mt-metrics-eval's test: the two
metrics' scores z-scored, then swapped cell by cell at random) gives ``p < alpha``. Only the pairs the walk needs
are tested; every p-value computed is kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import InputError
from ..meta.evaluate import MetaResult, paired_matrices, statistic_function
from ..stats.significance import permutation_test_correlation_difference


@dataclass
class Clusters:
    """Ranks (1 = top cluster) of the metrics that have a figure, and the p-values behind them
    (``(better, worse) -> p``)."""

    ranks: dict[str, int]
    pvalues: dict[tuple[str, str], float] = field(default_factory=dict)
    alpha: float = 0.05
    n_permutations: int = 0


def assign_ranks(order: list[str], significant: Callable[[str, str], bool]) -> dict[str, int]:
    """Cluster ranks for ``order`` (best first): a metric starts a new cluster when ``significant(better, it)``
    holds for any metric of the current cluster."""
    ranks: dict[str, int] = {}
    rank, start = 1, 0
    for i, metric in enumerate(order):
        if any(significant(better, metric) for better in order[start:i]):
            rank += 1
            start = i
        ranks[metric] = rank
    return ranks


def significance_clusters(results: dict[str, MetaResult], *, n_permutations: int = 200, alpha: float = 0.05,
                          seed: int = 0) -> Clusters:
    """Clusters of the metrics of one task; ``results``: metric -> its :class:`MetaResult` on that task (one
    metric each, as :func:`styleval.meta.run` gives with ``metrics=[m]``). Metrics with an undefined figure get
    no rank."""
    stats = {m: r.statistic(m) for m, r in results.items()}
    order = sorted((m for m, v in stats.items() if not math.isnan(v)), key=lambda m: -stats[m])
    if not order:
        return Clusters({}, alpha=alpha, n_permutations=n_permutations)
    task = results[order[0]].task
    fn = statistic_function(task)
    pvalues: dict[tuple[str, str], float] = {}

    def significant(better: str, worse: str) -> bool:
        key = (better, worse)
        if key not in pvalues:
            a, b, h = paired_matrices(task, results[better].oriented[better], results[worse].oriented[worse])
            try:
                test = permutation_test_correlation_difference(a, b, h, fn, n_resamples=n_permutations, seed=seed,
                                                               unit="cell")
                pvalues[key] = float(test.pvalue)
            except InputError:  # undefined on the cells both metrics have: no evidence of a difference
                pvalues[key] = float("nan")
        p = pvalues[key]
        return bool(np.isfinite(p) and p < alpha)

    if n_permutations <= 0:  # no test: every metric is its own cluster, in the order of its figure
        return Clusters({m: i + 1 for i, m in enumerate(order)}, alpha=alpha, n_permutations=0)
    ranks = assign_ranks(order, significant)
    return Clusters(ranks, pvalues, alpha, n_permutations)
