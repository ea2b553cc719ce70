"""styleval.stats.significance: Williams test, permutation test, and sacrebleu-compatible paired tests."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from styleval.errors import InputError
from styleval.stats import (
    approximate_randomization,
    bootstrap_ci,
    paired_bootstrap,
    pearson,
    permutation_test_correlation_difference,
    sacrebleu_ci,
    segment_level,
    williams_test,
)

# ---------------------------------------------------------------------------------------------------- Williams


def mtme_williams(r12, r13, r23, n, one_sided=True):
    """mt-metrics-eval stats.py WilliamsTest, transcribed (returns p only)."""
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r23 * r13
    rbar = (r12 + r13) / 2
    tnum = (r12 - r13) * np.sqrt((n - 1) * (1 + r23))
    tden = np.sqrt(2 * (n - 1) / (n - 3) * k + rbar ** 2 * (1 - r23) ** 3)
    p = st.t.sf(np.abs(tnum / tden), n - 3)
    return p if one_sided else 2 * p


def test_williams_known_value():
    # psych::r.test(103, .4, .5, .1) (Williams case, two-tailed). By hand: K = 1 - .16 - .25 - .01 + .04 = .62,
    # t = -.1 * sqrt(102 * 1.1) / sqrt(2 * 102/100 * .62 + .45^2 * .9^3) = -1.05925 / 1.18844 = -0.8913
    t, p = williams_test(0.4, 0.5, 0.1, 103, one_sided=False)
    assert t == pytest.approx(-0.8913, abs=5e-4)
    assert p == pytest.approx(2 * st.t.sf(0.8913, 100), abs=1e-3)
    assert 0.37 < p < 0.38


@pytest.mark.parametrize("args", [(0.9, 0.8, 0.85, 30), (0.3, 0.5, 0.2, 100), (0.62, 0.6, 0.95, 500),
                                  (-0.2, 0.1, 0.4, 12)])
def test_williams_matches_mt_metrics_eval(args):
    for one_sided in (True, False):
        t, p = williams_test(*args, one_sided=one_sided)
        assert p == pytest.approx(mtme_williams(*args, one_sided=one_sided), rel=1e-12)


def test_williams_symmetry_and_alternatives():
    t1, p1 = williams_test(0.8, 0.7, 0.6, 50)
    t2, p2 = williams_test(0.7, 0.8, 0.6, 50)
    assert t1 == pytest.approx(-t2) and p1 == pytest.approx(p2)
    assert t1 > 0
    _, pg = williams_test(0.8, 0.7, 0.6, 50, alternative="greater")
    _, pl = williams_test(0.8, 0.7, 0.6, 50, alternative="less")
    _, p2s = williams_test(0.8, 0.7, 0.6, 50, alternative="two-sided")
    assert pg == pytest.approx(p1) and pg + pl == pytest.approx(1.0) and p2s == pytest.approx(2 * p1)
    t, p = williams_test(0.5, 0.5, 0.3, 40)
    assert t == 0.0 and p == pytest.approx(0.5)
    # stronger dependence between the metrics makes the same gap more significant
    assert williams_test(0.8, 0.7, 0.9, 50)[1] < williams_test(0.8, 0.7, 0.6, 50)[1]


def test_williams_rejects_bad_input():
    with pytest.raises(InputError, match="n > 3"):
        williams_test(0.5, 0.4, 0.3, 3)
    with pytest.raises(InputError, match="r13"):
        williams_test(0.5, 1.4, 0.3, 30)
    with pytest.raises(InputError, match="cannot all hold"):
        williams_test(0.9, -0.9, 0.9, 30)


def test_williams_from_data_matches_formula():
    rng = np.random.default_rng(5)
    h = rng.normal(size=200)
    a = h + rng.normal(scale=0.8, size=200)
    b = h + rng.normal(scale=1.2, size=200)
    r12, r13, r23 = pearson(h, a).statistic, pearson(h, b).statistic, pearson(a, b).statistic
    t, p = williams_test(r12, r13, r23, 200)
    assert t > 0 and p == pytest.approx(mtme_williams(r12, r13, r23, 200))


# ---------------------------------------------------------------------------------------------------- permutation


def _pearson_stat(m, h):
    return st.pearsonr(m.ravel(), h.ravel())[0]


def test_permutation_identical_metrics_p_is_one():
    rng = np.random.default_rng(0)
    h = rng.normal(size=50)
    a = h + rng.normal(size=50)
    res = permutation_test_correlation_difference(a, a.copy(), h, _pearson_stat, n_resamples=200)
    assert res.delta == 0.0 and res.pvalue == 1.0


def test_permutation_detects_a_better_metric_and_is_reproducible():
    rng = np.random.default_rng(1)
    h = rng.normal(size=120)
    good = h + rng.normal(scale=0.3, size=120)
    bad = h + rng.normal(scale=2.0, size=120)
    res = permutation_test_correlation_difference(good, bad, h, pearson, n_resamples=300, seed=3)
    delta, p = res
    assert delta > 0 and p < 0.01
    assert res.corr_a == pytest.approx(st.pearsonr(good, h)[0])
    again = permutation_test_correlation_difference(good, bad, h, pearson, n_resamples=300, seed=3)
    assert again.pvalue == p
    rev = permutation_test_correlation_difference(bad, good, h, pearson, n_resamples=300, seed=3)
    assert rev.delta == pytest.approx(-delta) and rev.pvalue > 0.95
    two = permutation_test_correlation_difference(bad, good, h, pearson, n_resamples=300, seed=3,
                                                  alternative="two-sided", add_one=True)
    assert two.pvalue < 0.02


def test_permutation_manual_replication():
    """Same draws, literal mt-metrics-eval loop (z-scored metrics, per-cell swaps, count delta* >= delta)."""
    rng = np.random.default_rng(2)
    h = rng.normal(size=30)
    a = 2 * h + rng.normal(size=30) + 10
    b = h + rng.normal(scale=1.5, size=30)
    res = permutation_test_correlation_difference(a, b, h, _pearson_stat, n_resamples=100, seed=9)
    za, zb = st.zscore(a), st.zscore(b)
    delta = _pearson_stat(za, h) - _pearson_stat(zb, h)
    masks = np.random.default_rng(9).integers(0, 2, size=(100, 30), dtype=bool)
    count = 0
    for w in masks:
        m1, m2 = np.where(w, zb, za), np.where(w, za, zb)
        count += (_pearson_stat(m1, h) - _pearson_stat(m2, h)) >= delta
    assert res.delta == pytest.approx(delta) and res.pvalue == pytest.approx(count / 100)


def test_permutation_2d_units():
    rng = np.random.default_rng(4)
    h = rng.normal(size=(5, 20))
    a = h + rng.normal(scale=0.5, size=h.shape)
    b = h + rng.normal(scale=0.5, size=h.shape)

    def fn(m, hh):
        return segment_level(m, hh, method="pearson", average_by="item")

    for unit in ("cell", "item"):
        res = permutation_test_correlation_difference(a, b, h, fn, n_resamples=50, unit=unit)
        assert 0.0 <= res.pvalue <= 1.0 and res.options["unit"] == unit
    with pytest.raises(InputError, match="unit='item'"):
        permutation_test_correlation_difference(a[0], b[0], h[0], pearson, unit="item")
    with pytest.raises(InputError, match="shape mismatch"):
        permutation_test_correlation_difference(a, b[:, :3], h, fn)


# ---------------------------------------------------------------------------------------------------- corpus tests


def _bleu_setup():
    sacrebleu = pytest.importorskip("sacrebleu")
    from sacrebleu.metrics import BLEU

    rng = np.random.default_rng(0)
    words = "the a cat dog sat on mat ran fast slow big small red blue green old".split()
    refs = [" ".join(rng.choice(words, 9)) for _ in range(80)]

    def noisy(p):
        out = []
        for r in refs:
            out.append(" ".join(w if rng.random() > p else str(rng.choice(words)) for w in r.split()))
        return out

    metric = BLEU()
    hyp_a, hyp_b = noisy(0.30), noisy(0.30)
    stats_a = metric._extract_corpus_statistics(hyp_a, [refs])
    stats_b = metric._extract_corpus_statistics(hyp_b, [refs])
    return sacrebleu, metric, refs, hyp_b, stats_a, stats_b


def test_paired_bootstrap_matches_sacrebleu():
    sacrebleu, metric, refs, hyp_b, stats_a, stats_b = _bleu_setup()
    from sacrebleu import significance as sig

    base = sig.Result(metric._aggregate_and_compute(stats_a).score)
    _, out = sig._paired_bs_test({"BLEU": (stats_a, base)}, "b", hyp_b, [refs], {"BLEU": metric},
                                 n_samples=500, seed=12345)
    ref = out["BLEU"]

    def sum_then(s):
        return metric._compute_score_from_stats(list(s)).score

    ours = paired_bootstrap(stats_b, stats_a, sum_then=sum_then, n_resamples=500, seed=12345)
    assert 0.01 < ref.p_value < 0.99  # a non-trivial comparison
    assert ours.pvalue == pytest.approx(ref.p_value, abs=1e-12)
    strict = paired_bootstrap(stats_b, stats_a, sum_then=sum_then, n_resamples=500, seed=12345, strict=True)
    assert strict.pvalue == pytest.approx(ref.p_value, abs=1e-12)
    assert ours.score_a == pytest.approx(ref.score)
    assert ours.mean_a == pytest.approx(ref.mean, rel=1e-6)  # sacrebleu sums float32 stats
    assert ours.ci_a == pytest.approx(ref.ci, rel=1e-5)
    slow = paired_bootstrap(stats_b, stats_a, lambda rows: sum_then(rows.sum(axis=0)), n_resamples=500,
                            seed=12345)
    assert slow.pvalue == ours.pvalue and slow.mean_b == pytest.approx(ours.mean_b, rel=1e-12)


def test_approximate_randomization_matches_sacrebleu():
    sacrebleu, metric, refs, hyp_b, stats_a, stats_b = _bleu_setup()
    from sacrebleu import significance as sig

    base = sig.Result(metric._aggregate_and_compute(stats_a).score)
    _, out = sig._paired_ar_test({"BLEU": (stats_a, base)}, "b", hyp_b, [refs], {"BLEU": metric},
                                 n_samples=1000, seed=12345)

    def sum_then(s):
        return metric._compute_score_from_stats(list(s)).score

    ours = approximate_randomization(stats_a, stats_b, sum_then=sum_then, n_trials=1000, seed=12345)
    assert 0.01 < out["BLEU"].p_value < 0.99
    assert ours.pvalue == pytest.approx(out["BLEU"].p_value, abs=1e-12)
    strict = approximate_randomization(stats_a, stats_b, sum_then=sum_then, n_trials=1000, seed=12345, strict=True)
    assert strict.pvalue == pytest.approx(out["BLEU"].p_value, abs=1e-12)
    slow = approximate_randomization(stats_a, stats_b, lambda r: sum_then(r.sum(axis=0)), n_trials=1000,
                                     seed=12345)
    assert slow.pvalue == ours.pvalue


def test_sacrebleu_ci_and_bootstrap_ci():
    pytest.importorskip("sacrebleu")
    from sacrebleu.significance import estimate_ci

    scores = np.random.default_rng(3).normal(size=999)
    assert sacrebleu_ci(scores) == pytest.approx(estimate_ci(scores))
    seg = np.random.default_rng(4).normal(loc=1.0, size=(200, 1))
    ci = bootstrap_ci(seg, lambda rows: rows.mean(), n_resamples=400, seed=7)
    fast = bootstrap_ci(seg, sum_then=lambda s: s[0] / 200, n_resamples=400, seed=7)
    low, high, mean = ci
    assert (low, high, mean) == pytest.approx(tuple(fast), rel=1e-12)
    idx = np.random.default_rng(7).choice(200, size=(400, 200), replace=True)
    vals = seg[idx, 0].mean(axis=1)
    assert low == pytest.approx(np.quantile(vals, 0.025)) and high == pytest.approx(np.quantile(vals, 0.975))
    assert ci.statistic == pytest.approx(seg.mean()) and low < ci.statistic < high
    assert ci.options["sacrebleu_mean_ci"] == pytest.approx(estimate_ci(vals))


def test_paired_tests_edge_cases():
    a = np.arange(20, dtype=float)
    same = paired_bootstrap(a, a.copy(), lambda r: r.mean(), n_resamples=100)
    assert same.delta == 0.0 and same.pvalue == pytest.approx(1.0)
    ar = approximate_randomization(a, a.copy(), lambda r: r.mean(), n_trials=100)
    assert ar.pvalue == pytest.approx(1.0)  # ties count as extreme: a system against itself is never significant
    # sacrebleu's literal strict '>' calls a system different from itself (p = 1 / (n + 1))
    assert approximate_randomization(a, a.copy(), lambda r: r.mean(), n_trials=100, strict=True).pvalue == 1 / 101
    assert paired_bootstrap(a, a.copy(), lambda r: r.mean(), n_resamples=100, strict=True).pvalue == 1 / 101
    with pytest.raises(InputError, match="same segments"):
        paired_bootstrap(a, a[:10], lambda r: r.mean())
    with pytest.raises(InputError, match="aggregate or sum_then|give aggregate"):
        paired_bootstrap(a, a)
    with pytest.raises(InputError, match="disagree"):
        bootstrap_ci(a, lambda r: r.mean(), sum_then=lambda s: s[0])
    with pytest.raises(InputError, match="NaN"):
        bootstrap_ci(np.array([1.0, np.nan]), lambda r: r.mean())
    with pytest.raises(InputError, match="n_resamples"):
        bootstrap_ci(a, lambda r: r.mean(), n_resamples=0)
    with pytest.raises(InputError, match="confidence"):
        bootstrap_ci(a, lambda r: r.mean(), confidence=95)
    assert math.isfinite(paired_bootstrap(a, a[::-1].copy(), lambda r: r[:5].mean(), n_resamples=50).pvalue)
