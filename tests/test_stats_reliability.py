"""Split-half reliability, the implied ceiling and one rater against the rest, on synthetic raters of known noise:
ratings = truth + noise, so the true reliability of the mean of k raters is var_t / (var_t + var_e / k), the ceiling
of a metric's Pearson r its square root (Kendall's tau: 2/pi arcsin of it, Greiner's relation), and one rater
against the mean of the k - 1 others correlates var_t / sqrt((var_t + var_e)(var_t + var_e / (k - 1)))."""
from __future__ import annotations

import math

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.stats import SegmentStatistic
from styleval.stats import reliability as rel

SD_NOISE = 1.5  # truth has variance 1
K = 4


def cube(n_systems: int = 8, n_items: int = 200, k: int = K, n_raters: int = 12, seed: int = 1,
         sd: float = SD_NOISE) -> tuple[np.ndarray, np.ndarray]:
    """(truth (systems, items), ratings cube (systems, items, raters)): each cell judged by k of the n_raters."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n_systems, n_items))
    out = np.full((n_systems, n_items, n_raters), np.nan)
    for s in range(n_systems):
        for i in range(n_items):
            who = rng.choice(n_raters, size=k, replace=False)
            out[s, i, who] = truth[s, i] + rng.normal(scale=sd, size=k)
    return truth, out


def true_reliability(k: int = K, sd: float = SD_NOISE) -> float:
    return 1 / (1 + sd ** 2 / k)


POOLED = SegmentStatistic("pearson", average_by="none", nan_policy="omit")
PER_ITEM_TAU = SegmentStatistic("kendall_tau_like", average_by="item", nan_policy="omit", human_ties="skip",
                                metric_ties="discordant")


def test_split_half_reliability_and_ceiling_cover_the_true_values_pearson():
    _, ratings = cube()
    got = rel.reliability(ratings, POOLED, "pearson", n_splits=10, n_resamples=200)
    truth_rel = true_reliability()
    assert got.cis["reliability"].low <= truth_rel <= got.cis["reliability"].high
    assert got.cis["ceiling"].low <= math.sqrt(truth_rel) <= got.cis["ceiling"].high
    assert abs(got.reliability - truth_rel) < 0.03  # 1,600 cells: the estimate is tight
    # the half means of 2 raters each correlate 1 / (1 + var_e / 2)
    assert abs(got.half - 1 / (1 + SD_NOISE ** 2 / 2)) < 0.03
    one = 1 / math.sqrt((1 + SD_NOISE ** 2) * (1 + SD_NOISE ** 2 / (K - 1)))
    assert got.cis["one_rater"].low <= one <= got.cis["one_rater"].high
    assert len(got.raters) == 12 and all(p.n_cells > 0 for p in got.raters)


def test_per_input_kendall_ceiling_is_what_a_perfect_metric_reaches():
    """The truth itself, taken as a metric, reaches the implied ceiling (within its interval)."""
    truth, ratings = cube(n_items=300, seed=3)
    got = rel.reliability(ratings, PER_ITEM_TAU, "kendall_tau_like", n_splits=10, n_resamples=200)
    expected = 2 / math.pi * math.asin(math.sqrt(true_reliability()))
    assert got.cis["ceiling"].low <= expected <= got.cis["ceiling"].high
    human_mean = np.nanmean(ratings, axis=2)
    oracle = PER_ITEM_TAU(truth, human_mean).statistic
    assert got.cis["ceiling"].low <= oracle <= got.cis["ceiling"].high
    assert abs(got.ceiling - oracle) < 0.05


def test_spearman_brown_and_scale_conversions():
    assert rel.spearman_brown(0.5) == pytest.approx(2 / 3)
    assert rel.spearman_brown(0.5, 3) == pytest.approx(0.75)
    for method in ("pearson", "spearman", "kendall_tau_like", "pairwise_accuracy"):
        for r in (-0.3, 0.2, 0.9):
            assert rel.to_pearson(rel.from_pearson(r, method), method) == pytest.approx(r)
    assert rel.from_pearson(1.0, "kendall_tau_like") == pytest.approx(1.0)
    assert rel.from_pearson(0.5, "kendall") == pytest.approx(1 / 3)  # 2/pi asin(.5) = 1/3
    # halves that do not agree: no reliability, no ceiling
    reliability, ceiling = rel.reliability_and_ceiling(-0.1, "pearson")
    assert math.isnan(reliability) and math.isnan(ceiling)


def test_split_halves_partition_each_cells_raters():
    _, ratings = cube(n_systems=2, n_items=5, k=5, n_raters=7)
    a, b = rel.random_halves(ratings, np.random.default_rng(0))
    total = np.nansum(ratings, axis=2)
    np.testing.assert_allclose(a * 2 + b * 3, total)  # floor(5/2) = 2 raters in A, 3 in B


def test_cells_with_one_rater_are_left_out_and_raters_with_one_cell_get_no_figure():
    _, ratings = cube(n_systems=4, n_items=30, k=2, n_raters=4, seed=3)
    ratings[:, :5, :] = np.nan
    ratings[:, :5, 0] = 1.0 + np.arange(20).reshape(4, 5)  # 20 cells of one rating each
    lonely = np.full(ratings.shape[:2] + (1,), np.nan)
    lonely[0, 0, 0] = 3.0  # rater 4 judged one cell, which rater 0 judged too
    ratings = np.concatenate([ratings, lonely], axis=2)
    a, b = rel.random_halves(ratings[:, 1:], np.random.default_rng(0))
    assert np.isnan(a[:, :4]).all() and np.isnan(b[:, :4]).all()
    one, per = rel.one_vs_rest(ratings, POOLED)
    assert math.isnan(per[4].statistic) and per[4].n_cells == 1 and "single cell" in per[4].note
    assert not math.isnan(one)


def test_constant_rater_and_ties_everywhere():
    _, ratings = cube(n_systems=3, n_items=20, k=2, n_raters=3, seed=4)
    ratings[..., 2] = np.where(np.isnan(ratings[..., 2]), np.nan, 5.0)
    _, per = rel.one_vs_rest(ratings, POOLED)
    assert math.isnan(per[2].statistic) and per[2].note == "constant scores"
    tied = np.where(np.isnan(ratings), np.nan, 1.0)
    got = rel.reliability(tied, PER_ITEM_TAU, "kendall_tau_like", n_splits=3, n_resamples=20)
    assert math.isnan(got.half) and math.isnan(got.ceiling) and math.isnan(got.one_rater)


def test_bad_ratings_are_refused():
    with pytest.raises(InputError, match="3"):
        rel.as_cube(np.zeros((2, 3)))
    with pytest.raises(InputError, match="infinite"):
        rel.as_cube(np.full((1, 2, 2), np.inf))
    with pytest.raises(InputError, match="n_splits"):
        rel.split_half(np.zeros((1, 2, 2)), POOLED, n_splits=0)
