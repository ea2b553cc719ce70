"""The vectorised per-group pairwise statistics under resampling (styleval.stats.grouped) against the scalar path:
``segment_level`` called once per resample, on random data full of ties and on Lai et al. (2022)'s content grids.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from styleval.stats import (
    SegmentStatistic,
    bootstrap_correlation_ci,
    permutation_test_correlation_difference,
    segment_level,
)

TOL = 1e-12
OPTIONS = [
    ("kendall_like", {}),
    ("kendall_like", {"threshold": 1.0}),
    ("kendall_like", {"threshold": 1.0, "tie_rule": "lt", "metric_ties": "half"}),
    ("kendall_like", {"human_ties": "match", "metric_ties": "skip"}),
    ("kendall_like", {"metric_ties": "concordant", "metric_epsilon": 0.5}),
    ("pairwise_accuracy", {}),
    ("pairwise_accuracy", {"ties": "skip", "threshold": 1.0}),
]
GROUPINGS = list(itertools.product(("item", "system"), ("mean", "pooled"), ("skip", "zero")))


def _tied_grids(seed: int, shape=(6, 25)):
    """Small integer scores (many ties), a NaN cell shared by both metrics, a NaN human cell, an item whose
    humans all tie (undefined per item) and an item with one usable cell."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=shape).astype(float)
    b = rng.integers(0, 4, size=shape).astype(float)
    h = rng.integers(0, 3, size=shape).astype(float)
    a[0, 3] = b[0, 3] = np.nan
    h[2, 5] = np.nan
    h[:, 7] = 2.0
    a[1:, 9] = b[1:, 9] = np.nan
    return a, b, h


def _scalar_bootstrap(stat: SegmentStatistic, m, h, idx):
    return np.array([stat(m[:, sel], h[:, sel]).statistic for sel in idx])


def _scalar_permutation(stat: SegmentStatistic, a, b, h, swapped):
    return np.array([stat(np.where(w, b, a), h).statistic - stat(np.where(w, a, b), h).statistic for w in swapped])


def _same(fast, slow):
    assert fast.shape == slow.shape
    assert np.array_equal(np.isnan(fast), np.isnan(slow))
    ok = ~np.isnan(slow)
    assert np.abs(fast[ok] - slow[ok]).max(initial=0.0) <= TOL


@pytest.mark.parametrize("method,kwargs", OPTIONS)
@pytest.mark.parametrize("average_by,aggregate,undefined", GROUPINGS)
def test_every_resample_equals_segment_level_on_tied_random_data(method, kwargs, average_by, aggregate, undefined):
    a, b, h = _tied_grids(7)
    stat = SegmentStatistic(method, average_by=average_by, aggregate=aggregate, undefined=undefined,
                            nan_policy="omit", **kwargs)
    assert stat.grouped is not None
    # the observed figure: the callable is segment_level itself
    ref = segment_level(a, h, method=method, average_by=average_by, aggregate=aggregate, undefined=undefined,
                        nan_policy="omit", **kwargs)
    assert stat(a, h).statistic == ref.statistic or (np.isnan(ref.statistic) and np.isnan(stat(a, h).statistic))
    rng = np.random.default_rng(1)
    swapped = rng.integers(0, 2, size=(40,) + a.shape, dtype=bool)
    deltas = stat.grouped.permuted_deltas(a, b, h, swapped)
    _same(deltas, _scalar_permutation(stat, a, b, h, swapped))
    assert np.isfinite(deltas).sum() > 20  # the check compared real figures, not NaN with NaN
    if average_by == "item":
        idx = rng.integers(0, a.shape[1], size=(40, a.shape[1]))
        _same(stat.grouped.bootstrap_items(a, h, idx), _scalar_bootstrap(stat, a, h, idx))
    else:
        assert stat.grouped.bootstrap_items(a, h, np.zeros((2, a.shape[1]), int)) is None  # loop path instead


def test_public_resampling_functions_give_the_scalar_figures():
    a, b, h = _tied_grids(3)
    stat = SegmentStatistic("kendall_like", average_by="item", nan_policy="omit")

    def scalar(m, x):  # a plain function: the resampling functions call it once per resample
        return segment_level(m, x, method="kendall_like", average_by="item", nan_policy="omit")

    ci_fast = bootstrap_correlation_ci(a, h, stat, n_resamples=200, seed=5, nan_policy="omit")
    ci_slow = bootstrap_correlation_ci(a, h, scalar, n_resamples=200, seed=5, nan_policy="omit")
    assert (ci_fast.low, ci_fast.high, ci_fast.mean, ci_fast.n_valid) == pytest.approx(
        (ci_slow.low, ci_slow.high, ci_slow.mean, ci_slow.n_valid), abs=TOL)
    for unit in ("cell", "item"):
        fast = permutation_test_correlation_difference(a, b, h, stat, n_resamples=200, seed=9, unit=unit)
        slow = permutation_test_correlation_difference(a, b, h, scalar, n_resamples=200, seed=9, unit=unit)
        assert fast.pvalue == slow.pvalue and fast.delta == slow.delta
        assert fast.options["n_valid"] == slow.options["n_valid"] == 200
        assert 0 < slow.pvalue < 1


def test_other_statistics_and_unshared_missing_cells_take_the_scalar_path():
    a, b, h = _tied_grids(4)
    assert SegmentStatistic("pearson", average_by="item", nan_policy="omit").grouped is None
    assert SegmentStatistic("kendall_like", average_by="none").grouped is None
    stat = SegmentStatistic("kendall_like", average_by="item", nan_policy="omit")
    b[4, 4] = np.nan  # missing in B only: the cells A* and B* can use differ by permutation
    swapped = np.ones((3,) + a.shape, dtype=bool)
    assert stat.grouped.permuted_deltas(a, b, h, swapped) is None
    fast = permutation_test_correlation_difference(a, b, h, stat, n_resamples=50, seed=2)
    slow = permutation_test_correlation_difference(a, b, h, lambda m, x: stat(m, x), n_resamples=50, seed=2)
    assert (fast.pvalue, fast.delta) == (slow.pvalue, slow.delta)


# ------------------------------------------------------------------------------------------------ Lai et al. 2022
@pytest.mark.shared_data
@pytest.mark.parametrize("aggregate", ["mean", "pooled"])
def test_lai2022_content_grids_resample_as_the_scalar_path(shared_data, aggregate):
    from test_stats_lai2022 import _grids_txt

    root = shared_data / "lai2022"
    if not root.is_dir():
        pytest.skip("lai2022 data not present")
    human, metrics = _grids_txt(root)
    comet, bleu = metrics["comet"], metrics["bleu"]
    stat = SegmentStatistic("kendall_like", average_by="item", aggregate=aggregate)
    if aggregate == "mean":  # the published figure (test_stats_lai2022.py)
        assert stat(comet, human).statistic == pytest.approx(0.650, abs=0.001)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, human.shape[1], size=(60, human.shape[1]))
    _same(stat.grouped.bootstrap_items(comet, human, idx), _scalar_bootstrap(stat, comet, human, idx))
    swapped = rng.integers(0, 2, size=(60,) + human.shape, dtype=bool)
    za, zb = ((x - x.mean()) / x.std() for x in (comet, bleu))  # as the test standardises them
    _same(stat.grouped.permuted_deltas(za, zb, human, swapped), _scalar_permutation(stat, za, zb, human, swapped))
