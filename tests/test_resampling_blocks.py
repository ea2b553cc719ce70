"""Blocked resampling (issue #46): intervals and paired tests draw and reduce their resamples a block at a time, and
give the numbers of the one-shot implementation bit for bit.

The oracle is the code as it was before blocking, copied here: the whole index matrix (or mask matrix) drawn at
once, then reduced. Every comparison is exact equality (``==`` on floats), on sizes that put block boundaries in
the middle of the draws (the block size is lowered so that small inputs cross many of them).
"""
from __future__ import annotations

import numpy as np
import pytest

from styleval.stats import significance as sig
from styleval.stats._results import percentile_interval


# --- the oracle: the one-shot implementation, as it was -------------------------------------------------------

def _old_resampled_sums(stats: np.ndarray, idx: np.ndarray) -> np.ndarray:
    n_res, n = idx.shape
    out = np.empty((n_res, stats.shape[1]))
    # 4_000_000 before blocking; read from the module so that the tests with small blocks compare products of the
    # same shapes (a one-row product may round differently from a many-row one: BLAS takes another kernel)
    chunk = max(1, sig.BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, n_res, chunk):
        sub = idx[start:start + chunk]
        rows = np.repeat(np.arange(len(sub)), n)
        counts = np.bincount(rows * n + sub.ravel(), minlength=len(sub) * n).reshape(len(sub), n)
        out[start:start + chunk] = counts @ stats
    return out


def _old_scores(stats, idx, aggregate, sum_then):
    if sum_then is not None:
        return np.array([float(sum_then(row)) for row in _old_resampled_sums(stats, idx)])
    return np.array([float(aggregate(stats[i])) for i in idx])


def _old_bootstrap_ci(stats, aggregate, sum_then, n_resamples, confidence, seed):
    n = stats.shape[0]
    idx = np.random.default_rng(seed).choice(n, size=(n_resamples, n), replace=True)
    scores = _old_scores(stats, idx, aggregate, sum_then)
    return scores, percentile_interval(scores, confidence)


def _old_paired_bootstrap(a, b, aggregate, sum_then, n_resamples, seed):
    n = a.shape[0]
    idx = np.random.default_rng(seed).choice(n, size=(n_resamples, n), replace=True)
    bs_a = _old_scores(a, idx, aggregate, sum_then)
    bs_b = _old_scores(b, idx, aggregate, sum_then)
    diffs = np.abs(bs_a - bs_b)
    return bs_a, bs_b, diffs - diffs.mean()


def _old_ar(a, b, aggregate, sum_then, n_trials, seed):
    n = a.shape[0]
    pos = np.random.default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)
    if sum_then is not None:
        pf = pos.astype(float)
        nf = 1.0 - pf
        shuf_a = pf @ a + nf @ b
        shuf_b = nf @ a + pf @ b
        sa = np.array([float(sum_then(r)) for r in shuf_a])
        sb = np.array([float(sum_then(r)) for r in shuf_b])
    else:
        sa, sb = np.empty(n_trials), np.empty(n_trials)
        for t in range(n_trials):
            m = pos[t][:, None]
            sa[t] = float(aggregate(np.where(m, a, b)))
            sb[t] = float(aggregate(np.where(m, b, a)))
    return sa, sb


# --- inputs ---------------------------------------------------------------------------------------------------

def _bleu_like(n: int, seed: int) -> np.ndarray:
    """Integer counts (BLEU-like sufficient statistics) and a float column (a mean-like metric)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 30, size=(n, 3)).astype(float)
    return np.column_stack([counts, rng.normal(size=n) * np.pi])


def _ratio(sums: np.ndarray) -> float:
    return float(sums[0] / max(sums[1], 1.0) + sums[3] / 1e3)


def _rows_ratio(rows: np.ndarray) -> float:
    return _ratio(rows.sum(axis=0))


SIZES = [1, 2, 7, 33, 250, 1001]
SEEDS = [0, 12345, 7]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few hundred draws, so that every size below crosses several block boundaries."""
    monkeypatch.setattr(sig, "BLOCK_ELEMENTS", 700)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("seed", SEEDS)
def test_index_blocks_are_the_one_shot_draw(small_blocks, n, seed):
    whole = np.random.default_rng(seed).choice(n, size=(997, n), replace=True)
    blocks = list(sig._index_blocks(np.random.default_rng(seed), n, 997))
    assert len(blocks) > 1 or n * 997 <= 700
    assert np.array_equal(np.concatenate(blocks), whole)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("seed", SEEDS)
def test_mask_blocks_are_the_one_shot_draw(small_blocks, n, seed):
    whole = np.random.default_rng(seed).integers(2, size=(1003, n), dtype=bool)
    blocks = list(sig._mask_blocks(np.random.default_rng(seed), n, 1003))
    assert len(blocks) > 1
    assert np.array_equal(np.concatenate(blocks), whole)


def test_unaligned_boolean_blocks_would_differ():
    """Why mask blocks hold multiples of 32 rows: a block of 5 x 3 draws drops the rest of its 32-bit word."""
    whole = np.random.default_rng(0).integers(2, size=(10, 3), dtype=bool)
    rng = np.random.default_rng(0)
    split = np.concatenate([rng.integers(2, size=(5, 3), dtype=bool), rng.integers(2, size=(5, 3), dtype=bool)])
    assert not np.array_equal(split, whole)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("n", [2, 33, 250, 1001])
@pytest.mark.parametrize("seed", SEEDS)
def test_bootstrap_ci_equals_one_shot(small_blocks, fast, n, seed):
    stats = _bleu_like(n, seed)
    kwargs = {"sum_then": _ratio} if fast else {"aggregate": _rows_ratio}
    ci = sig.bootstrap_ci(stats, n_resamples=300, seed=seed, **kwargs)
    scores, (low, high, mean, n_valid) = _old_bootstrap_ci(stats, None if fast else _rows_ratio,
                                                           _ratio if fast else None, 300, 0.95, seed)
    assert (ci.low, ci.high, ci.mean, ci.n_valid) == (low, high, mean, n_valid)
    assert ci.options["sacrebleu_mean_ci"] == sig.sacrebleu_ci(scores, 0.95)


@pytest.mark.parametrize("n", [33, 1001])
def test_bootstrap_ci_fast_path_default_blocks(n):
    """The block size is the chunk the one-shot code multiplied by; with it the products run on the same row
    blocks as before, also for float statistics."""
    assert sig.BLOCK_ELEMENTS == 4_000_000
    stats = _bleu_like(n, 3)
    ci = sig.bootstrap_ci(stats, n_resamples=1000, seed=3, sum_then=lambda s: float(s[3] / n))
    _, (low, high, mean, _) = _old_bootstrap_ci(stats, None, lambda s: float(s[3] / n), 1000, 0.95, 3)
    assert (ci.low, ci.high, ci.mean) == (low, high, mean)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("n", [2, 33, 1001])
@pytest.mark.parametrize("seed", SEEDS)
def test_paired_bootstrap_equals_one_shot(small_blocks, fast, n, seed):
    a, b = _bleu_like(n, seed), _bleu_like(n, seed + 1)
    kwargs = {"sum_then": _ratio} if fast else {"aggregate": _rows_ratio}
    res = sig.paired_bootstrap(a, b, n_resamples=300, seed=seed, **kwargs)
    bs_a, bs_b, null = _old_paired_bootstrap(a, b, None if fast else _rows_ratio, _ratio if fast else None, 300, seed)
    assert res.pvalue == sig._sacrebleu_p(null, abs(res.delta), False)
    assert (res.mean_a, res.ci_a) == sig.sacrebleu_ci(bs_a)
    assert (res.mean_b, res.ci_b) == sig.sacrebleu_ci(bs_b)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("n", [2, 33, 250])
@pytest.mark.parametrize("seed", SEEDS)
def test_approximate_randomization_equals_one_shot(small_blocks, fast, n, seed):
    a, b = _bleu_like(n, seed), _bleu_like(n, seed + 1)
    kwargs = {"sum_then": _ratio} if fast else {"aggregate": _rows_ratio}
    trials = 500 if fast else 200
    res = sig.approximate_randomization(a, b, n_trials=trials, seed=seed, **kwargs)
    sa, sb = _old_ar(a, b, None if fast else _rows_ratio, _ratio if fast else None, trials, seed)
    assert res.pvalue == sig._sacrebleu_p(np.abs(sa - sb), abs(res.delta), False)


def _null_bit_for_bit(n: int, trials: int) -> None:
    a, b = _bleu_like(n, 5), _bleu_like(n, 6)
    seen: list[float] = []

    def sum_then(sums: np.ndarray) -> float:
        seen.append(float(sums[3]))
        return float(sums[3])

    sig.approximate_randomization(a, b, n_trials=trials, seed=5, sum_then=sum_then)
    new = seen[2:]  # the first two calls score the unshuffled systems
    seen.clear()
    _old_ar(a, b, None, sum_then, trials, 5)
    old = list(seen)
    # new: per block, all of pseudo-A then all of pseudo-B; old: all A then all B
    rows = max(32, (sig.BLOCK_ELEMENTS // n) // 32 * 32)
    new_a, new_b = [], []
    for start in range(0, trials, rows):
        k = min(rows, trials - start)
        new_a += new[:k]
        new_b += new[k:2 * k]
        new = new[2 * k:]
    assert len(new_a) == trials and new_a == old[:trials] and new_b == old[trials:]


def test_approximate_randomization_null_bit_for_bit(small_blocks):
    """The AR null statistics of the fast path, block by block, equal the one-shot products exactly (float
    statistics, so a different summation order would show): blocks of 32 rows against one product."""
    _null_bit_for_bit(120, 400)


def test_approximate_randomization_null_bit_for_bit_default_blocks():
    """The same with the real block size: 10,000 trials over 1,001 segments run as three products, not one."""
    assert sig.BLOCK_ELEMENTS // 1001 < 10_000
    _null_bit_for_bit(1001, 10_000)


def test_memory_of_one_interval_is_bounded():
    """The index matrix is never drawn whole: with 200,000 segments and 1,000 resamples (1.6 GB of int64 drawn at
    once before, here 100 of them), no block holds more than BLOCK_ELEMENTS draws."""
    rng = np.random.default_rng(0)
    sizes = [blk.size for blk in sig._index_blocks(rng, 200_000, 100)]
    assert len(sizes) > 1 and sum(sizes) == 200_000 * 100
    assert max(sizes) <= max(sig.BLOCK_ELEMENTS, 200_000)
