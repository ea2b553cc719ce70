"""Shared resample scores (issue #46): one metric's intervals and paired bootstrap tests draw the same indices for
the same seed, so the driver resamples each system once (``ResampleMemo``) instead of once per interval and per
test. The figures must be those of the functions called one by one without a memo, exactly (``==`` on floats).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from styleval.datasets import read_yelp_dualrl
from styleval.engine.options import StatisticsOptions
from styleval.metrics import registry
from styleval.metrics.base import Batch, SegmentStats
from styleval.scoring import score_records
from styleval.stats.significance import ResampleMemo, bootstrap_ci, paired_bootstrap


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def test_memo_gives_the_unshared_figures_and_hits(shared_data):
    """Three yelp-dualrl systems' BLEU statistics: intervals and all three pairwise tests through one memo equal
    the plain calls, and the tests compute nothing new (six lookups, six hits)."""
    records = read_yelp_dualrl(shared_data / "yelp-dualrl")
    systems = list(dict.fromkeys(r.system for r in records))[:3]
    bleu = registry.create("bleu")
    stats = {s: SegmentStats.of(bleu.segment_stats(Batch.from_records([r for r in records if r.system == s][:150])))
             .values for s in systems}
    sum_then = bleu.sum_aggregate()
    memo = ResampleMemo(bleu.aggregate, sum_then)
    for s in systems:
        shared = bootstrap_ci(stats[s], memo.aggregate, sum_then=sum_then, n_resamples=300, seed=7, memo=memo)
        plain = bootstrap_ci(stats[s], bleu.aggregate, sum_then=sum_then, n_resamples=300, seed=7)
        assert (shared.low, shared.high, shared.mean) == (plain.low, plain.high, plain.mean)
    assert memo.hits == 0
    for i, a in enumerate(systems):
        for b in systems[i + 1:]:
            shared_t = paired_bootstrap(stats[a], stats[b], memo.aggregate, sum_then=sum_then, n_resamples=300,
                                        seed=7, memo=memo)
            plain_t = paired_bootstrap(stats[a], stats[b], bleu.aggregate, sum_then=sum_then, n_resamples=300,
                                       seed=7)
            assert shared_t.pvalue == plain_t.pvalue and shared_t.delta == plain_t.delta
            assert (shared_t.mean_a, shared_t.ci_a, shared_t.mean_b, shared_t.ci_b) == \
                   (plain_t.mean_a, plain_t.ci_a, plain_t.mean_b, plain_t.ci_b)
    assert memo.hits == 6


def test_memo_refuses_another_scoring_function():
    memo = ResampleMemo(None, lambda s: float(s[0]))
    with pytest.raises(ValueError, match="aggregate and sum_then it was made with"):
        bootstrap_ci(np.ones((5, 1)), None, sum_then=lambda s: float(s[0]), n_resamples=10, memo=memo)


@pytest.mark.parametrize("spec", ["bleu", "chrf", "ter", "meteor"])
def test_driver_figures_equal_the_plain_functions(shared_data, spec):
    """score_records (which shares a memo per metric) against bootstrap_ci / paired_bootstrap called one by one on
    the result's own statistics: four systems, every interval and every pairwise p-value identical."""
    records = read_yelp_dualrl(shared_data / "yelp-dualrl")
    systems = list(dict.fromkeys(r.system for r in records))[:4]
    subset = [r for s in systems for r in [x for x in records if x.system == s][:60]]
    metric = registry.create(spec)
    options = StatisticsOptions(bootstrap=200, significance="paired-bootstrap", seed=3)
    result = score_records(subset, [metric], options=options)
    by_system = {r.system: r for r in result.results}
    sum_then = metric.sum_aggregate()
    for r in result.results:
        ok = np.isfinite(r.stats).all(axis=1)
        ci = bootstrap_ci(r.stats[ok], metric.aggregate, sum_then=sum_then, n_resamples=200, seed=3)
        assert _same(r.ci[0], float(ci.low)) and _same(r.ci[1], float(ci.high))
    assert len(result.comparisons) == 6
    for c in result.comparisons:
        a, b = by_system[c.system].stats, by_system[c.baseline].stats
        ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
        test = paired_bootstrap(a[ok], b[ok], metric.aggregate, sum_then=sum_then, n_resamples=200, seed=3)
        assert c.p_value == float(test.pvalue) and _same(c.delta, float(test.delta))
