"""styleval.stats.agreement against krippendorff, statsmodels, sklearn and pandas."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from styleval.errors import InputError
from styleval.stats import cohen_kappa, fleiss_kappa, krippendorff_alpha, pairwise_pearson

krippendorff = pytest.importorskip("krippendorff")

LEVELS = ["nominal", "ordinal", "interval", "ratio"]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", p. 8: 4 observers x 12 units, missing values.
CLASSIC = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])


@pytest.mark.parametrize("level,expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
                                            ("ratio", 0.797)])
def test_krippendorff_classic_example(level, expected):
    ours = krippendorff_alpha(CLASSIC, level=level)
    assert ours == pytest.approx(expected, abs=5e-4)
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=CLASSIC, level_of_measurement=level), abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_krippendorff_random_with_missing(level, seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 8, size=40)
    data = np.clip(truth[None, :] + rng.integers(-1, 2, size=(5, 40)), 0, 9).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("level", ["interval", "ratio", "ordinal"])
def test_krippendorff_continuous_scores(level):
    rng = np.random.default_rng(9)
    truth = rng.uniform(0, 100, size=60)
    data = np.round(truth[None, :] + rng.normal(scale=15, size=(3, 60)), 1).clip(0, 100)
    data[rng.random(data.shape) < 0.15] = np.nan
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(ref, abs=1e-9)


def test_krippendorff_edge_cases():
    assert math.isnan(krippendorff_alpha(np.full((3, 5), 2.0), level="nominal"))
    assert math.isnan(krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]])))  # nothing pairable
    assert krippendorff_alpha(np.array([[1, 2, 3], [1, 2, 3.0]]), level="ordinal") == pytest.approx(1.0)
    with pytest.raises(InputError, match="level"):
        krippendorff_alpha(CLASSIC, level="cardinal")
    with pytest.raises(InputError, match="2-D"):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(InputError, match="non-negative"):
        krippendorff_alpha(np.array([[-1.0, 2.0], [1.0, 2.0]]), level="ratio")


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(weights):
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    a = rng.integers(1, 6, size=200)
    b = np.clip(a + rng.integers(-1, 2, size=200), 1, 5)
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(
        metrics.cohen_kappa_score(a, b, weights=weights), abs=1e-12)
    labels = [0, 1, 2, 3, 4, 5, 6]  # unused categories change the weighted positions
    assert cohen_kappa(a, b, weights=weights, labels=labels) == pytest.approx(
        metrics.cohen_kappa_score(a, b, weights=weights, labels=labels), abs=1e-12)


def test_cohen_kappa_strings_missing_and_edges():
    metrics = pytest.importorskip("sklearn.metrics")
    a = ["formal", "informal", "formal", "neutral", "informal", "formal"]
    b = ["formal", "formal", "formal", "neutral", "informal", "neutral"]
    assert cohen_kappa(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b))
    x = np.array([1.0, 2.0, np.nan, 2.0, 1.0])
    y = np.array([1.0, 2.0, 1.0, 1.0, 1.0])
    with pytest.raises(InputError, match="missing"):
        cohen_kappa(x, y)
    keep = ~np.isnan(x)
    assert cohen_kappa(x, y, nan_policy="omit") == pytest.approx(metrics.cohen_kappa_score(x[keep], y[keep]))
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    with pytest.raises(InputError, match="a has 2 labels, b has 3"):
        cohen_kappa([1, 2], [1, 2, 3])
    with pytest.raises(InputError, match="not in labels"):
        cohen_kappa([1, 2], [1, 3], labels=[1, 2])


def test_fleiss_kappa_matches_statsmodels():
    ir = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 4, size=50)
    ratings = np.where(rng.random((50, 6)) < 0.7, truth[:, None], rng.integers(0, 4, size=(50, 6)))
    table, _ = ir.aggregate_raters(ratings)
    for method in ("fleiss", "randolph"):
        ref = ir.fleiss_kappa(table, method=method)
        assert fleiss_kappa(table, method=method) == pytest.approx(ref, abs=1e-12)
        assert fleiss_kappa(ratings, input="ratings", method=method) == pytest.approx(ref, abs=1e-12)
    labels = np.array([["a", "b"], ["a", "a"], ["b", "b"], ["c", "b"]])
    table2, _ = ir.aggregate_raters(np.unique(labels, return_inverse=True)[1].reshape(labels.shape))
    assert fleiss_kappa(labels, input="ratings") == pytest.approx(ir.fleiss_kappa(table2))


def test_fleiss_kappa_errors():
    with pytest.raises(InputError, match="same number of ratings"):
        fleiss_kappa([[2, 1], [1, 1]])
    with pytest.raises(InputError, match="krippendorff_alpha"):
        fleiss_kappa([[1.0, np.nan], [1.0, 2.0]], input="ratings")
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))


def test_pairwise_pearson_matches_pandas():
    rng = np.random.default_rng(2)
    truth = rng.normal(size=80)
    ratings = truth[:, None] + rng.normal(scale=0.7, size=(80, 4))
    ratings[rng.random(ratings.shape) < 0.1] = np.nan
    for method in ("pearson", "spearman"):
        corr = pd.DataFrame(ratings).corr(method=method).to_numpy()
        ref = corr[np.triu_indices(4, k=1)].mean()
        assert pairwise_pearson(ratings, method=method) == pytest.approx(ref, abs=1e-12)
    with pytest.raises(InputError, match="NaN"):
        pairwise_pearson(ratings, nan_policy="raise")
    with pytest.raises(InputError, match="at least 2 annotators"):
        pairwise_pearson(ratings[:, :1])
    const = np.column_stack([np.ones(5), np.arange(5.0), np.arange(5.0)])
    assert pairwise_pearson(const) == pytest.approx(1.0)  # constant annotator's pairs are undefined, left out
