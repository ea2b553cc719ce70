"""Significance tests: comparing two metrics' correlations, and comparing two systems' corpus scores.

Pure functions on numpy arrays; bad input raises :class:`styleval.errors.InputError`.

* :func:`williams_test` -- difference between two dependent correlations sharing a variable (WMT, Graham & Baldwin
  2014); same formula as mt-metrics-eval's ``WilliamsTest`` and R ``psych::r.test(n, r12, r13, r23)``.
* :func:`permutation_test_correlation_difference` -- paired permutation test of ``corr(a, h) - corr(b, h)``
  (mt-metrics-eval's ``PermutationSigDiff``, PERM-BOTH of Deutsch et al. 2021).
* :func:`paired_bootstrap`, :func:`approximate_randomization`, :func:`bootstrap_ci` -- tests and intervals for
  corpus scores computed from cached per-segment statistics, following sacrebleu's ``significance.py``
  conventions (same random draws for the same seed, same p-value formula).
"""
from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
from scipy import stats as _st

from styleval.errors import InputError

from ._results import ConfidenceInterval, percentile_interval
from ._validate import as_float_array, check_choice
from .correlation import CorrelationResult, SegmentStatistic, _check_resampling

__all__ = [
    "williams_test",
    "permutation_test_correlation_difference",
    "PermutationTestResult",
    "PairedTestResult",
    "paired_bootstrap",
    "approximate_randomization",
    "bootstrap_ci",
    "sacrebleu_ci",
    "ResampleMemo",
]


# --------------------------------------------------------------------------------------------------------------
# Williams test
# --------------------------------------------------------------------------------------------------------------

def williams_test(r12: float, r13: float, r23: float, n: int, *, one_sided: bool = True,
                  alternative: str | None = None) -> tuple[float, float]:
    """Williams (1959) t-test for ``r12 != r13`` where both correlations share variable 1.

    ``r12`` = corr(human, metric A), ``r13`` = corr(human, metric B), ``r23`` = corr(metric A, metric B), ``n`` =
    number of points. With ``K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23`` (the determinant of the correlation
    matrix) and ``rbar = (r12 + r13) / 2``::

        t = (r12 - r13) * sqrt((n - 1)(1 + r23)) / sqrt(2 K (n - 1)/(n - 3) + rbar^2 (1 - r23)^3),  df = n - 3

    Returns ``(t, p)``. ``t > 0`` means metric A correlates better. P-values, following mt-metrics-eval's
    ``WilliamsTest``: ``one_sided=True`` gives ``P(T > |t|)``, the one-sided p-value in the direction the data
    favour (as used in WMT: "is the better-looking metric significantly better?"); ``one_sided=False`` doubles it
    (two-sided, as ``psych::r.test``). ``alternative`` overrides that: ``"greater"`` (H1: r12 > r13, ``P(T > t)``),
    ``"less"`` (``P(T < t)``) or ``"two-sided"``.
    """
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not isinstance(r, (int, float, np.floating, np.integer)) or math.isnan(r) or not -1.0 <= r <= 1.0:
            raise InputError(f"{name} must be a correlation in [-1, 1]; got {r!r}")
    if not isinstance(n, (int, np.integer)) or n <= 3:
        raise InputError(f"williams_test needs an integer n > 3 (df = n - 3); got {n!r}")
    if alternative is not None:
        check_choice("alternative", alternative, ("greater", "less", "two-sided"))
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    if k < -1e-12:
        raise InputError(f"r12={r12}, r13={r13}, r23={r23} cannot all hold at once (correlation matrix "
                         f"determinant {k:.3g} < 0)")
    k = max(k, 0.0)
    rbar = (r12 + r13) / 2
    num = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    den = math.sqrt(2 * (n - 1) / (n - 3) * k + rbar ** 2 * (1 - r23) ** 3)
    if den == 0:
        if num == 0:
            return float("nan"), float("nan")
        t = math.copysign(math.inf, num)
    else:
        t = num / den
    df = n - 3
    if alternative == "greater":
        p = float(_st.t.sf(t, df))
    elif alternative == "less":
        p = float(_st.t.cdf(t, df))
    else:
        p = float(_st.t.sf(abs(t), df))
        if alternative == "two-sided" or (alternative is None and not one_sided):
            p = min(1.0, 2 * p)
    return float(t), p


# --------------------------------------------------------------------------------------------------------------
# permutation test for a correlation difference
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PermutationTestResult:
    """``delta = corr(a, h) - corr(b, h)``; ``pvalue`` per ``options["alternative"]``.

    Unpacks as ``(delta, pvalue)``.
    """

    delta: float
    pvalue: float
    corr_a: float
    corr_b: float
    n_resamples: int
    options: dict[str, Any] = field(default_factory=dict)

    def __iter__(self):
        return iter((self.delta, self.pvalue))


def _stat(value: Any) -> float:
    if isinstance(value, CorrelationResult):
        return float(value.statistic)
    if isinstance(value, tuple):
        return float(value[0])
    return float(value)


def _zscore(a: np.ndarray) -> np.ndarray:
    mu = np.nanmean(a)
    sd = np.nanstd(a)
    return (a - mu) / sd if sd > 0 else a - mu


def permutation_test_correlation_difference(
        metric_a: Any, metric_b: Any, human: Any, fn: Callable[[np.ndarray, np.ndarray], Any], *,
        n_resamples: int = 1000, seed: int | None = 0, unit: str = "cell", standardize: bool = True,
        alternative: str = "greater", add_one: bool = False) -> PermutationTestResult:
    """Paired permutation test of ``corr(a, h) - corr(b, h)`` (mt-metrics-eval ``PermutationSigDiff``).

    ``fn(metric, human)`` returns a float, a :class:`CorrelationResult` or a scipy-style tuple; it gets arrays of
    the input's shape (for 2-D ``(n_systems, n_items)`` input, pass e.g.
    ``lambda m, h: segment_level(m, h, method="kendall_like", average_by="item")``).

    Each resample swaps metric A's and metric B's score independently with probability 1/2 per ``unit``:
    ``"cell"`` (every score; mt-metrics-eval's choice -- for 1-D input this is per item) or ``"item"`` (whole
    columns of 2-D input). With ``standardize=True`` (mt-metrics-eval's choice) both metrics are z-scored first
    (over all their non-NaN scores) so that swapping scores between metrics on different scales is meaningful;
    this leaves Pearson/Spearman/Kendall of each metric unchanged.

    ``alternative="greater"`` (default; H1: A correlates better): p = share of resamples with
    ``delta* >= delta``; ``"two-sided"``: share with ``|delta*| >= |delta|``. ``add_one=True`` uses
    ``(count + 1) / (n_resamples + 1)``; the default ``count / n_resamples`` is mt-metrics-eval's. Resamples where
    ``fn`` is NaN are dropped (``options["n_valid"]``). Unpacks as ``(delta, p)``.
    """
    check_choice("unit", unit, ("cell", "item"))
    check_choice("alternative", alternative, ("greater", "two-sided"))
    _check_resampling(n_resamples, 0.5)
    a = as_float_array(metric_a, "metric_a", ndim=(1, 2))
    b = as_float_array(metric_b, "metric_b", ndim=(1, 2))
    h = as_float_array(human, "human", ndim=(1, 2))
    for arr, name in ((b, "metric_b"), (h, "human")):
        if arr.shape != a.shape:
            raise InputError(f"shape mismatch: metric_a has shape {a.shape}, {name} has shape {arr.shape}")
    if unit == "item" and a.ndim != 2:
        raise InputError("unit='item' needs 2-D (n_systems, n_items) input; for 1-D input use unit='cell'")
    if standardize:
        a, b = _zscore(a), _zscore(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        corr_a, corr_b = _stat(fn(a, h)), _stat(fn(b, h))
        delta = corr_a - corr_b
        if math.isnan(delta):
            raise InputError(f"the correlation is undefined on the unpermuted data (corr_a={corr_a}, "
                             f"corr_b={corr_b}); nothing to test")
        rng = np.random.default_rng(seed)
        shape = (n_resamples,) + ((a.shape[1],) if unit == "item" else a.shape)
        masks = rng.integers(0, 2, size=shape, dtype=bool)
        deltas = _permuted_deltas(fn, a, b, h, masks, unit)
    valid = deltas[~np.isnan(deltas)]
    if alternative == "greater":
        count = int((valid >= delta).sum())
    else:
        count = int((np.abs(valid) >= abs(delta)).sum())
    nv = len(valid)
    if nv == 0:
        p = float("nan")
    else:
        p = (count + 1) / (nv + 1) if add_one else count / nv
    opts = {"unit": unit, "standardize": standardize, "alternative": alternative, "add_one": add_one,
            "seed": seed, "n_valid": nv, "count": count}
    return PermutationTestResult(float(delta), float(p), corr_a, corr_b, n_resamples, opts)


def _permuted_deltas(fn: Callable[[np.ndarray, np.ndarray], Any], a: np.ndarray, b: np.ndarray, h: np.ndarray,
                     masks: np.ndarray, unit: str) -> np.ndarray:
    """``fn(A*, h) - fn(B*, h)`` per resample, A* taking B's score where the mask is True (B* the other way round);
    a :class:`SegmentStatistic` with a pairwise method per group does every resample at once, the same figures."""
    swapped = masks if unit == "cell" or a.ndim != 2 else np.broadcast_to(masks[:, None, :], masks.shape[:1] + a.shape)
    fast = fn.grouped if isinstance(fn, SegmentStatistic) else None
    deltas = fast.permuted_deltas(a, b, h, swapped) if fast is not None else None
    if deltas is not None:
        return deltas
    deltas = np.empty(len(masks))
    for r in range(len(masks)):
        w = masks[r] if unit == "cell" else np.broadcast_to(masks[r][None, :], a.shape)
        pa = np.where(w, b, a)
        pb = np.where(w, a, b)
        try:
            deltas[r] = _stat(fn(pa, h)) - _stat(fn(pb, h))
        except InputError:
            deltas[r] = np.nan
    return deltas


# --------------------------------------------------------------------------------------------------------------
# corpus-score tests over cached per-segment statistics (sacrebleu conventions)
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairedTestResult:
    """Result of a paired test between system A and system B.

    ``delta = score_a - score_b`` (signed); the test is two-sided on ``|delta|`` as in sacrebleu.
    ``mean_*``/``ci_*`` follow sacrebleu's report "mean (+- ci)": the mean of the bootstrap resample scores and
    the *half-width* of the central ``confidence`` interval of the sorted resample scores (sacrebleu's
    ``estimate_ci``); None when not computed. Unpacks as ``(delta, pvalue)``.
    """

    score_a: float
    score_b: float
    delta: float
    pvalue: float
    n_resamples: int
    method: str
    mean_a: float | None = None
    ci_a: float | None = None
    mean_b: float | None = None
    ci_b: float | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __iter__(self):
        return iter((self.delta, self.pvalue))


def sacrebleu_ci(scores: Any, confidence: float = 0.95) -> tuple[float, float]:
    """sacrebleu's ``estimate_ci``: ``(mean, half_width)`` from the sorted scores, with
    ``lower = sorted[n * (1 - confidence) / 2]`` (``n // 40`` at 95%) and ``upper = sorted[n - lower_idx - 1]``."""
    s = np.sort(np.asarray(scores, dtype=float))
    n = len(s)
    if n == 0:
        raise InputError("no scores to estimate a confidence interval from")
    if abs(confidence - 0.95) < 1e-12:
        lower_idx = n // 40  # exactly sacrebleu's integer arithmetic
    else:
        lower_idx = int(math.floor(n * (1.0 - confidence) / 2.0))
    upper_idx = n - lower_idx - 1
    return float(s.mean()), float(0.5 * (s[upper_idx] - s[lower_idx]))


def _stats_matrix(stats: Any, name: str) -> np.ndarray:
    arr = as_float_array(stats, name, ndim=(1, 2))
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.shape[0] < 1:
        raise InputError(f"{name} has no segments")
    if np.isnan(arr).any():
        raise InputError(f"{name}: per-segment statistics contain NaN "
                         f"({int(np.isnan(arr).any(axis=1).sum())} segment(s)); drop or fill them first")
    return arr


def _scorers(aggregate: Callable[[np.ndarray], float] | None, sum_then: Callable[[np.ndarray], float] | None,
             samples: list[np.ndarray]) -> Callable[[np.ndarray], float]:
    """Return the full-data scorer and check that aggregate and sum_then agree when both are given."""
    if aggregate is None and sum_then is None:
        raise InputError("give aggregate (stats rows -> score) or sum_then (summed stats -> score)")
    if aggregate is not None and sum_then is not None:
        for s in samples:
            x, y = float(aggregate(s)), float(sum_then(s.sum(axis=0)))
            if not (x == y or (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)):
                raise InputError(f"aggregate and sum_then disagree on the full data ({x!r} vs {y!r}); sum_then must "
                                 f"satisfy sum_then(stats.sum(axis=0)) == aggregate(stats)")
    if sum_then is not None:
        return lambda s: float(sum_then(s.sum(axis=0)))
    return lambda s: float(aggregate(s))  # type: ignore[misc]


#: Resample index entries drawn and reduced at once (32 MB of int64). The fast path's matrix products run on blocks
#: of exactly this many rows (``max(1, BLOCK_ELEMENTS // n)``), as before blocking, so their sums are bit for bit
#: those of one whole-matrix draw.
BLOCK_ELEMENTS = 4_000_000


def _index_blocks(rng: np.random.Generator, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    """``rng.choice(n, size=(n_resamples, n))`` in blocks of rows, drawn one block at a time.

    ``choice`` with replacement and no weights draws 64-bit integers below ``n`` from the generator's 32-bit
    stream, which keeps no buffer between calls that the next block would miss, so the blocks concatenated are the
    whole draw bit for bit (``tests/test_resampling_blocks.py`` checks it against the one-shot draw).
    """
    rows = max(1, BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, n_resamples, rows):
        yield rng.choice(n, size=(min(rows, n_resamples - start), n), replace=True)


def _mask_blocks(rng: np.random.Generator, n: int, n_trials: int) -> Iterator[np.ndarray]:
    """``rng.integers(2, size=(n_trials, n), dtype=bool)`` in blocks of rows.

    Boolean draws take 32 of them from each 32-bit word and drop the rest of the word when the call ends, so every
    block but the last holds a multiple of 32 rows (hence of 32 draws) and no bit is dropped between blocks."""
    rows = max(32, (BLOCK_ELEMENTS // max(n, 1)) // 32 * 32)
    for start in range(0, n_trials, rows):
        yield rng.integers(2, size=(min(rows, n_trials - start), n), dtype=bool)


def _resampled_sums(stats: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Sum of ``stats[idx[r]]`` for every resample r of one block: a (counts x stats) matrix product."""
    counts = np.zeros((idx.shape[0], stats.shape[0]))
    for r, row in enumerate(idx):
        counts[r] = np.bincount(row, minlength=stats.shape[0])
    return counts @ stats


def _bootstrap_scores(stats: np.ndarray, idx: np.ndarray, aggregate, sum_then) -> np.ndarray:
    """Corpus scores of the resamples of one block of indices."""
    if sum_then is not None:
        return np.array([float(sum_then(row)) for row in _resampled_sums(stats, idx)])
    return np.array([float(aggregate(stats[i])) for i in idx])


def _resample_scores(stats: np.ndarray, aggregate, sum_then, n_resamples: int, seed: int | None) -> np.ndarray:
    """The corpus scores of ``n_resamples`` bootstrap resamples of ``stats``, indices from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    return np.concatenate([_bootstrap_scores(stats, idx, aggregate, sum_then)
                           for idx in _index_blocks(rng, stats.shape[0], n_resamples)])


class ResampleMemo:
    """Bootstrap resample scores of one scoring function, computed once per statistics array.

    An interval and every paired bootstrap test with the same seed and segment count draw the same indices, so a
    system's resample scores are the same numbers in each; with ten systems, one metric's intervals and 45 pairwise
    tests need 10 passes over the resamples instead of 100. Keyed by the statistics' bytes and shape, the number of
    resamples and the seed; holds ``n_resamples`` floats per entry, so memory stays flat in the segment count.
    Give it to :func:`bootstrap_ci` and :func:`paired_bootstrap` with the same ``aggregate`` and ``sum_then``
    objects it was made with.
    """

    def __init__(self, aggregate: Callable[[np.ndarray], float] | None,
                 sum_then: Callable[[np.ndarray], float] | None) -> None:
        self.aggregate, self.sum_then = aggregate, sum_then
        self._scores: dict[tuple[bytes, tuple[int, ...], int, int | None], np.ndarray] = {}
        self.hits = 0

    def scores(self, stats: np.ndarray, aggregate: Callable[[np.ndarray], float] | None,
               sum_then: Callable[[np.ndarray], float] | None, n_resamples: int, seed: int | None) -> np.ndarray:
        """The resample scores of ``stats`` (computed on the first call for these statistics)."""
        if aggregate is not self.aggregate or sum_then is not self.sum_then:
            raise ValueError("a ResampleMemo serves the aggregate and sum_then it was made with")
        digest = hashlib.blake2b(np.ascontiguousarray(stats).tobytes(), digest_size=16).digest()
        key = (digest, stats.shape, n_resamples, seed)
        found = self._scores.get(key)
        if found is None:
            found = self._scores[key] = _resample_scores(stats, aggregate, sum_then, n_resamples, seed)
            found.setflags(write=False)  # shared by every interval and test that reads it
        else:
            self.hits += 1
        return found


def _sacrebleu_p(null_stats: np.ndarray, observed: float, strict: bool) -> float:
    """sacrebleu's ``_compute_p_value`` with +1 smoothing: ``(#(null > observed) + 1) / (n + 1)`` when ``strict``
    (sacrebleu, literally), else ``(#(null >= observed) + 1) / (n + 1)``.

    Why not strict by default: sacrebleu counts only null statistics strictly greater than the observed one, so two
    identical systems get ``p = 1 / (n + 1)`` ("significantly different") because every null statistic and the
    observed one are exactly 0. Counting ties as extreme (the usual permutation-test definition) gives ``p = 1``
    there and the same p-value as sacrebleu whenever no null statistic equals the observed one exactly (the generic
    case, checked against sacrebleu in the tests).
    """
    c = int(np.sum(null_stats > observed)) if strict else int(np.sum(null_stats >= observed))
    return (c + 1) / (len(null_stats) + 1)


def _pair_inputs(stats_a: Any, stats_b: Any) -> tuple[np.ndarray, np.ndarray]:
    a = _stats_matrix(stats_a, "stats_a")
    b = _stats_matrix(stats_b, "stats_b")
    if a.shape != b.shape:
        raise InputError(f"stats_a has shape {a.shape} but stats_b has shape {b.shape}; a paired test needs the "
                         f"same segments and statistics for both systems")
    return a, b


def paired_bootstrap(stats_a: Any, stats_b: Any, aggregate: Callable[[np.ndarray], float] | None = None, *,
                     n_resamples: int = 1000, seed: int | None = 0, confidence: float = 0.95,
                     sum_then: Callable[[np.ndarray], float] | None = None,
                     strict: bool = False, memo: ResampleMemo | None = None) -> PairedTestResult:
    """Paired bootstrap resampling test (Koehn 2004), as sacrebleu's ``_paired_bs_test``.

    ``stats_a``/``stats_b``: per-segment statistics of shape ``(n_segments, k)`` (or ``(n_segments,)``), rows
    aligned. ``aggregate(rows) -> float`` computes a corpus score from rows; alternatively (fast path) give
    ``sum_then(summed_row) -> float`` for scores that depend on the column sums only (BLEU/chrF sufficient
    statistics; a mean is ``sum_then=lambda s: s[0] / n``): resampled sums are then a matrix product of
    resample counts and stats. If both are given they must agree on the full data.

    Conventions (sacrebleu): indices ``np.random.default_rng(seed).choice(n, size=(n_resamples, n))`` shared by
    both systems; null statistic ``|score*_a - score*_b| - mean(|score*_a - score*_b|)``; p-value
    ``(#(null > |delta|) + 1) / (n_resamples + 1)`` -- with ``strict=True``; the default ``strict=False`` counts
    ``>=`` instead, so that a system compared with itself gets p = 1 rather than sacrebleu's 1/(n+1) (identical
    to sacrebleu otherwise unless a null statistic equals the observed one exactly). ``mean_*``/``ci_*`` are
    sacrebleu's "mean (+- half-width)" of each system's resample scores. ``memo``: a :class:`ResampleMemo` that
    shares each system's resample scores with other tests and intervals (the same figures).
    """
    _check_resampling(n_resamples, confidence)
    a, b = _pair_inputs(stats_a, stats_b)
    score = _scorers(aggregate, sum_then, [a, b])
    score_a, score_b = score(a), score(b)
    delta = score_a - score_b
    n = a.shape[0]
    if memo is not None:  # each system's scores from the same draws as below, computed once per memo
        bs_a = memo.scores(a, aggregate, sum_then, n_resamples, seed)
        bs_b = memo.scores(b, aggregate, sum_then, n_resamples, seed)
    else:
        rng = np.random.default_rng(seed)
        bs_a, bs_b = np.empty(n_resamples), np.empty(n_resamples)
        done = 0
        for idx in _index_blocks(rng, n, n_resamples):  # one block of draws in memory at a time
            bs_a[done:done + len(idx)] = _bootstrap_scores(a, idx, aggregate, sum_then)
            bs_b[done:done + len(idx)] = _bootstrap_scores(b, idx, aggregate, sum_then)
            done += len(idx)
    diffs = np.abs(bs_a - bs_b)
    p = _sacrebleu_p(diffs - diffs.mean(), abs(delta), strict)
    mean_a, ci_a = sacrebleu_ci(bs_a, confidence)
    mean_b, ci_b = sacrebleu_ci(bs_b, confidence)
    cmp = ">" if strict else ">="
    opts = {"seed": seed, "confidence": confidence, "fast_path": sum_then is not None, "n_segments": n,
            "strict": strict, "sides": "two-sided",
            "p_value": f"(#(|d*| - mean|d*| {cmp} |delta|) + 1) / (n_resamples + 1)"}
    return PairedTestResult(score_a, score_b, delta, p, n_resamples, "paired_bootstrap",
                            mean_a, ci_a, mean_b, ci_b, opts)


def approximate_randomization(stats_a: Any, stats_b: Any, aggregate: Callable[[np.ndarray], float] | None = None,
                              *, n_trials: int = 10000, seed: int | None = 0,
                              sum_then: Callable[[np.ndarray], float] | None = None,
                              strict: bool = False) -> PairedTestResult:
    """Paired approximate randomization test (Riezler & Maxwell 2005), as sacrebleu's ``_paired_ar_test``.

    Each trial swaps system A's and B's statistics row by row with probability 1/2 (mask
    ``np.random.default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)``, True keeping A's row in pseudo
    system A). P-value ``(#(|score*_a - score*_b| >= |delta|) + 1) / (n_trials + 1)``; ``strict=True`` uses
    sacrebleu's literal '>' (which gives a system compared with itself p = 1/(n+1) instead of 1). With
    ``sum_then`` the shuffled sums are ``mask @ a + ~mask @ b``.
    """
    _check_resampling(n_trials, 0.5)
    a, b = _pair_inputs(stats_a, stats_b)
    score = _scorers(aggregate, sum_then, [a, b])
    score_a, score_b = score(a), score(b)
    delta = score_a - score_b
    n = a.shape[0]
    rng = np.random.default_rng(seed)
    sa, sb = np.empty(n_trials), np.empty(n_trials)
    done = 0
    for pos in _mask_blocks(rng, n, n_trials):  # one block of masks in memory at a time
        if sum_then is not None:
            pf = pos.astype(float)
            nf = 1.0 - pf
            shuf_a = pf @ a + nf @ b
            shuf_b = nf @ a + pf @ b
            sa[done:done + len(pos)] = [float(sum_then(r)) for r in shuf_a]
            sb[done:done + len(pos)] = [float(sum_then(r)) for r in shuf_b]
        else:
            for t, row in enumerate(pos, start=done):
                m = row[:, None]
                sa[t] = float(aggregate(np.where(m, a, b)))  # type: ignore[misc]
                sb[t] = float(aggregate(np.where(m, b, a)))  # type: ignore[misc]
        done += len(pos)
    p = _sacrebleu_p(np.abs(sa - sb), abs(delta), strict)
    cmp = ">" if strict else ">="
    opts = {"seed": seed, "fast_path": sum_then is not None, "n_segments": n, "strict": strict,
            "sides": "two-sided", "p_value": f"(#(|d*| {cmp} |delta|) + 1) / (n_trials + 1)"}
    return PairedTestResult(score_a, score_b, delta, p, n_trials, "approximate_randomization", options=opts)


def bootstrap_ci(stats: Any, aggregate: Callable[[np.ndarray], float] | None = None, *, n_resamples: int = 1000,
                 confidence: float = 0.95, seed: int | None = 0,
                 sum_then: Callable[[np.ndarray], float] | None = None,
                 memo: ResampleMemo | None = None) -> ConfidenceInterval:
    """Percentile bootstrap CI of a corpus score over resampled segments.

    Returns a :class:`ConfidenceInterval` that unpacks as ``(low, high, mean_of_resamples)``; ``low``/``high`` are
    numpy's linearly interpolated ``(1 - confidence)/2`` and ``(1 + confidence)/2`` quantiles. Its
    ``options["sacrebleu_mean_ci"]`` gives sacrebleu's ``(mean, half_width)`` for the same resamples. Same draws
    as sacrebleu for the same seed (``rng.choice(n, size=(n_resamples, n))``); ``sum_then`` as in
    :func:`paired_bootstrap`, and so is ``memo``.
    """
    _check_resampling(n_resamples, confidence)
    s = _stats_matrix(stats, "stats")
    score = _scorers(aggregate, sum_then, [s])
    observed = score(s)
    n = s.shape[0]
    scores = (memo.scores(s, aggregate, sum_then, n_resamples, seed) if memo is not None
              else _resample_scores(s, aggregate, sum_then, n_resamples, seed))
    low, high, mean, n_valid = percentile_interval(scores, confidence)
    opts = {"seed": seed, "method": "percentile", "fast_path": sum_then is not None, "n_segments": n}
    if n_valid:
        opts["sacrebleu_mean_ci"] = sacrebleu_ci(scores[~np.isnan(scores)], confidence)
    return ConfidenceInterval(low, high, mean, observed, confidence, n_resamples, n_valid, opts)

