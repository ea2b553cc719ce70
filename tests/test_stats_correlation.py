"""styleval.stats.correlation: every statistic against scipy or a literal brute-force reference."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as st

from styleval.errors import InputError
from styleval.stats import (
    CorrelationResult,
    bootstrap_correlation_ci,
    kendall,
    kendall_tau_like,
    orient,
    pairwise_accuracy,
    pearson,
    segment_level,
    spearman,
    system_level,
    top_n_correlations,
)


@pytest.fixture
def xy():
    rng = np.random.default_rng(42)
    x = rng.normal(size=60)
    y = 0.5 * x + rng.normal(size=60)
    return x, y


@pytest.fixture
def tied():
    """Integer scores with many ties in both vectors."""
    rng = np.random.default_rng(7)
    h = rng.integers(0, 5, size=40).astype(float)
    m = (h + rng.integers(-2, 3, size=40)).astype(float)
    return m, h


# ---------------------------------------------------------------------------------------------------- classic


def test_pearson_spearman_match_scipy(xy):
    x, y = xy
    for ours, ref in ((pearson, st.pearsonr), (spearman, st.spearmanr)):
        r = ours(x, y)
        s, p = ref(x, y)
        assert isinstance(r, CorrelationResult)
        assert r.statistic == pytest.approx(s, abs=1e-12)
        assert r.pvalue == pytest.approx(p, rel=1e-9)
        assert r.n == 60


@pytest.mark.parametrize("variant", ["b", "c"])
def test_kendall_matches_scipy_with_ties(tied, variant):
    m, h = tied
    r = kendall(m, h, variant=variant)
    ref = st.kendalltau(m, h, variant=variant)
    assert r.statistic == pytest.approx(ref.statistic, abs=1e-12)
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert r.options["variant"] == variant
    assert r.method == f"kendall_{variant}"


def test_spearman_with_ties_matches_scipy(tied):
    m, h = tied
    assert spearman(m, h).statistic == pytest.approx(st.spearmanr(m, h).statistic, abs=1e-12)


def test_nan_raise_says_how_many_and_where(xy):
    x, y = xy
    x = x.copy()
    x[[3, 17]] = np.nan
    with pytest.raises(InputError, match=r"x has 2 NaN values \(at positions \[3, 17\]\)"):
        pearson(x, y)


def test_nan_omit_drops_pairs(xy):
    x, y = xy
    x, y = x.copy(), y.copy()
    x[3] = np.nan
    y[10] = np.nan
    r = pearson(x, y, nan_policy="omit")
    keep = ~(np.isnan(x) | np.isnan(y))
    assert r.statistic == pytest.approx(st.pearsonr(x[keep], y[keep])[0], abs=1e-12)
    assert r.n == 58 and r.options["n_omitted"] == 2


def test_length_mismatch_names_both_lengths():
    with pytest.raises(InputError, match="x has 3 values, y has 4"):
        pearson([1, 2, 3], [1, 2, 3, 4])
    with pytest.raises(InputError, match="metric has 3 values, human has 2"):
        kendall_tau_like([1, 2, 3], [1, 2])


def test_bad_choices_and_inf():
    with pytest.raises(InputError, match="nan_policy"):
        pearson([1, 2, 3], [1, 2, 3], nan_policy="propagate")
    with pytest.raises(InputError, match="variant"):
        kendall([1, 2, 3], [1, 2, 3], variant="a")
    with pytest.raises(InputError, match="infinite"):
        pearson([1, np.inf, 3], [1, 2, 3])


def test_constant_vector_gives_nan_with_note():
    for fn in (pearson, spearman, kendall):
        r = fn([1, 1, 1, 1], [1, 2, 3, 4])
        assert math.isnan(r.statistic) and r.pvalue is None
        assert "constant_x" in r.options["flags"] and "undefined" in r.options["note"]
    r = pearson([1, 2, 3], [5, 5, 5])
    assert "constant_y" in r.options["flags"]


def test_two_points_flagged_and_one_point_rejected():
    r = pearson([1, 2], [3, 1])
    assert r.statistic == pytest.approx(-1.0) and r.pvalue is None and "n<3" in r.options["flags"]
    with pytest.raises(InputError, match="at least 2"):
        pearson([1], [2])
    with pytest.raises(InputError, match="at least 2"):
        pearson([1, np.nan], [2, 3], nan_policy="omit")


# ---------------------------------------------------------------------------------------------------- tau-like


def brute_tau_like(metric, human, threshold=0.0, human_ties="skip", metric_ties="discordant"):
    """Literal pair loop, written independently of the vectorised implementation."""
    c = d = 0.0
    for i, j in itertools.combinations(range(len(human)), 2):
        dh, dm = human[i] - human[j], metric[i] - metric[j]
        if dh == 0 or abs(dh) <= threshold:
            if human_ties == "skip":
                continue
            if dm == 0:
                c += 1
            else:
                d += 1
            continue
        if dm == 0:
            if metric_ties == "discordant":
                d += 1
            elif metric_ties == "concordant":
                c += 1
            elif metric_ties == "half":
                c += 0.5
                d += 0.5
            continue
        if (dh > 0) == (dm > 0):
            c += 1
        else:
            d += 1
    return (c - d) / (c + d) if c + d else float("nan"), c, d


def lai_compute_kenall(list_0, list_1):
    """Lai et al. (2022) kendalltau.py::compute_kenall(human, auto), transcribed."""
    conc = disc = 0
    for i in range(len(list_0)):
        for j in range(i + 1, len(list_0)):
            if list_0[i] == list_0[j]:
                continue
            elif np.sign(list_0[i] - list_0[j]) * np.sign(list_1[i] - list_1[j]) == 1:
                conc += 1
            else:
                disc += 1
    return (conc - disc) / (conc + disc)


@pytest.mark.parametrize("metric_ties", ["discordant", "concordant", "skip", "half"])
@pytest.mark.parametrize("human_ties", ["skip", "match"])
@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_tau_like_matches_brute_force(tied, metric_ties, human_ties, threshold):
    m, h = tied
    r = kendall_tau_like(m, h, threshold=threshold, human_ties=human_ties, metric_ties=metric_ties)
    tau, c, d = brute_tau_like(m, h, threshold, human_ties, metric_ties)
    assert r.statistic == pytest.approx(tau, abs=1e-12)
    assert (r.options["concordant"], r.options["discordant"]) == (c, d)
    assert r.pvalue is None and r.n == len(h)
    n_pairs = len(h) * (len(h) - 1) // 2
    assert r.options["concordant"] + r.options["discordant"] + r.options["skipped"] == n_pairs


def test_tau_like_default_is_lai_compute_kenall(tied):
    m, h = tied
    assert kendall_tau_like(m, h).statistic == pytest.approx(lai_compute_kenall(h, m), abs=1e-12)


def test_tau_like_without_ties_equals_scipy_tau(xy):
    x, y = xy
    assert kendall_tau_like(x, y).statistic == pytest.approx(st.kendalltau(x, y).statistic, abs=1e-12)


def test_tau_like_threshold_rules():
    human = np.array([0.0, 25.0, 60.0])
    metric = np.array([1.0, 2.0, 3.0])
    le = kendall_tau_like(metric, human, threshold=25)  # |25| <= 25 is a tie: 2 pairs left
    lt = kendall_tau_like(metric, human, threshold=25, tie_rule="lt")  # WMT DARR: keep |diff| >= 25
    assert le.options["skipped_human_ties"] == 1 and lt.options["skipped_human_ties"] == 0
    with pytest.raises(InputError, match="threshold"):
        kendall_tau_like(metric, human, threshold=-1)


def test_tau_like_all_human_ties_is_nan():
    r = kendall_tau_like([1, 2, 3], [5, 5, 5])
    assert math.isnan(r.statistic) and "no_pairs" in r.options["flags"]


def test_tau_like_large_input_blocks_agree_with_small():
    rng = np.random.default_rng(3)
    h = rng.integers(0, 20, size=2500).astype(float)
    m = h + rng.normal(size=2500)
    r = kendall_tau_like(m, h)  # 2500 x 2500 pairs exceed one block
    # no metric ties (continuous) -> tau-like over non-human-tie pairs; cross-check through scipy counts
    n = len(h)
    tot = n * (n - 1) // 2
    ties_h = sum(c * (c - 1) // 2 for c in np.unique(h, return_counts=True)[1])
    tau_b = st.kendalltau(m, h).statistic  # = (C - D) / sqrt(tot * (tot - ties_h)) without metric ties
    c_minus_d = tau_b * math.sqrt(tot * (tot - ties_h))
    assert r.statistic == pytest.approx(c_minus_d / (tot - ties_h), abs=1e-9)


# ---------------------------------------------------------------------------------------------------- accuracy


def test_pairwise_accuracy_match_is_lai_pair_acc(tied):
    m, h = tied
    num = all_ = 0
    for i in range(len(m) - 1):  # Lai et al. chatgpt/correlation.py::pair_acc, transcribed
        for j in range(i + 1, len(m)):
            all_ += 1
            if np.sign(m[i] - m[j]) == np.sign(h[i] - h[j]):
                num += 1
    r = pairwise_accuracy(m, h)
    assert r.statistic == pytest.approx(num / all_)
    assert r.options["total"] == all_


def test_pairwise_accuracy_skip(tied):
    m, h = tied
    tau, c, d = brute_tau_like(m, h)
    r = pairwise_accuracy(m, h, ties="skip")
    assert r.statistic == pytest.approx(c / (c + d))


# ---------------------------------------------------------------------------------------------------- grids


@pytest.fixture
def grid():
    rng = np.random.default_rng(11)
    h = rng.integers(0, 4, size=(6, 25)).astype(float)  # 6 systems, 25 items, many ties
    m = h + rng.normal(scale=1.0, size=h.shape)
    h[:, 0] = 2.0  # item 0: all human ties -> undefined
    return m, h


def test_segment_level_none_pools(grid):
    m, h = grid
    r = segment_level(m, h, method="pearson")
    assert r.statistic == pytest.approx(st.pearsonr(m.ravel(), h.ravel())[0], abs=1e-12)
    assert r.n == m.size and r.pvalue is not None and r.options["average_by"] == "none"


@pytest.mark.parametrize("method,ref", [
    ("pearson", lambda a, b: st.pearsonr(a, b)[0]),
    ("spearman", lambda a, b: st.spearmanr(a, b)[0]),
    ("kendall_b", lambda a, b: st.kendalltau(a, b).statistic),
    ("kendall_c", lambda a, b: st.kendalltau(a, b, variant="c").statistic),
    ("kendall_like", lambda a, b: brute_tau_like(a, b)[0]),
])
@pytest.mark.parametrize("average_by", ["item", "system"])
def test_segment_level_averages(grid, method, ref, average_by):
    m, h = grid
    r = segment_level(m, h, method=method, average_by=average_by)
    pairs = zip(m.T, h.T) if average_by == "item" else zip(m, h)
    vals = []
    for a, b in pairs:
        if np.all(b == b[0]):
            continue
        vals.append(ref(a, b))
    assert r.statistic == pytest.approx(np.mean(vals), abs=1e-12)
    assert r.n == len(vals)
    assert r.options["n_undefined"] == (1 if average_by == "item" else 0)


def test_segment_level_pooled_and_zero(grid):
    m, h = grid
    c = d = 0.0
    for a, b in zip(m.T, h.T):
        _, ci, di = brute_tau_like(a, b)
        c, d = c + ci, d + di
    r = segment_level(m, h, method="kendall_like", average_by="item", aggregate="pooled")
    assert r.statistic == pytest.approx((c - d) / (c + d))
    assert r.options["concordant"] == c
    mean_skip = segment_level(m, h, method="kendall_like", average_by="item")
    mean_zero = segment_level(m, h, method="kendall_like", average_by="item", undefined="zero")
    assert mean_zero.statistic == pytest.approx(mean_skip.statistic * 24 / 25)
    with pytest.raises(InputError, match="pooled"):
        segment_level(m, h, method="pearson", average_by="item", aggregate="pooled")


def test_segment_level_method_kwargs_and_nan(grid):
    m, h = grid
    r = segment_level(m, h, method="kendall_like", average_by="item", metric_ties="half")
    assert r.options["metric_ties"] == "half"
    m2 = m.copy()
    m2[2, 5] = np.nan
    with pytest.raises(InputError, match=r"1 NaN value \(at position \[\(2, 5\)\]\)"):
        segment_level(m2, h, method="pearson", average_by="item")
    r = segment_level(m2, h, method="pearson", average_by="item", nan_policy="omit")
    col = ~np.isnan(m2[:, 5])
    ref = [st.pearsonr(a, b)[0] for k, (a, b) in enumerate(zip(m2.T, h.T)) if k not in (0, 5)]
    ref.append(st.pearsonr(m2[col, 5], h[col, 5])[0])
    assert r.statistic == pytest.approx(np.mean(ref), abs=1e-12)
    with pytest.raises(InputError, match="shape mismatch"):
        segment_level(m[:, :3], h, method="pearson")
    with pytest.raises(InputError, match="method"):
        segment_level(m, h, method="cosine")


def test_system_level_and_two_systems():
    r = system_level([0.1, 0.2, 0.4], [10, 30, 20])
    assert r.statistic == pytest.approx(st.pearsonr([0.1, 0.2, 0.4], [10, 30, 20])[0])
    assert r.options["level"] == "system"
    two = system_level([0.1, 0.2], [3, 5])
    assert two.statistic == pytest.approx(1.0) and "n<3" in two.options["flags"]


def test_top_n_correlations():
    human = np.array([5.0, 1.0, 4.0, 2.0, 3.0])
    metric = np.array([0.9, 0.1, 0.2, 0.3, 0.5])
    top, last = top_n_correlations(metric, human, min_n=3)
    order = np.argsort(-human)  # 0, 2, 4, 3, 1
    assert [n for n, _ in top] == [3, 4, 5] and [n for n, _ in last] == [3, 4, 5]
    assert top[0][1] == pytest.approx(st.pearsonr(metric[order[:3]], human[order[:3]])[0])
    assert last[0][1] == pytest.approx(st.pearsonr(metric[order[-3:]], human[order[-3:]])[0])
    assert top[-1][1] == pytest.approx(last[-1][1])
    with pytest.raises(InputError, match="min_n"):
        top_n_correlations(metric, human, min_n=6)


def test_orient():
    np.testing.assert_array_equal(orient([1, 2], False), [-1, -2])
    np.testing.assert_array_equal(orient([1, 2], higher_is_better=True), [1, 2])
    np.testing.assert_array_equal(orient([1, 2], lower_is_better=True), [-1, -2])
    with pytest.raises(InputError):
        orient([1, 2])
    with pytest.raises(InputError):
        orient([1, 2], True, lower_is_better=True)


def test_bootstrap_correlation_ci(grid, xy):
    x, y = xy
    ci = bootstrap_correlation_ci(x, y, pearson, n_resamples=300, seed=1)
    low, high, mean = ci
    assert low < ci.statistic < high and ci.n_valid == 300
    assert tuple(bootstrap_correlation_ci(x, y, pearson, n_resamples=300, seed=1)) == (low, high, mean)
    # manual replication of the draws
    idx = np.random.default_rng(1).integers(0, len(x), size=(300, len(x)))
    vals = [st.pearsonr(x[i], y[i])[0] for i in idx]
    assert low == pytest.approx(np.quantile(vals, 0.025)) and mean == pytest.approx(np.mean(vals))
    m, h = grid
    by_item = bootstrap_correlation_ci(
        m, h, lambda a, b: segment_level(a, b, method="kendall_like", average_by="item"), n_resamples=100)
    assert by_item.low <= by_item.statistic <= by_item.high
    cells = bootstrap_correlation_ci(m, h, pearson, n_resamples=100, unit="cell")
    assert cells.options["unit"] == "cell"
