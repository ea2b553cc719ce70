"""How well human raters follow each other, and the ceiling that sets for any metric's correlation with their mean.

Ratings come as a cube ``(n_systems, n_items, n_raters)``: one slice per rater, NaN where that rater did not rate
the (system, item) cell. ``statistic(metric, human)`` is a correlation of two ``(n_systems, n_items)`` matrices with
NaN for missing cells (a :class:`~styleval.stats.correlation.SegmentStatistic`, or a system-level function), so
every figure here is computed under the same convention as the metrics' own.

* :func:`split_half` -- the raters of each cell split at random into two halves (``floor(k/2)`` and ``ceil(k/2)``
  raters), the statistic between the two halves' means, averaged over many splits and over both roles (the
  statistic may be asymmetric: a metric's ties count differently from the humans'). Cells with one rater cannot be
  split and are left out (counted).
* :func:`reliability_and_ceiling` -- the Spearman-Brown step from half to full length (factor 2) and the ceiling
  it implies. Classical test theory: the human mean is a true score plus rater noise independent of it and of any
  metric; a metric can at best equal the true score, whose correlation with the mean of the raters is the square
  root of the mean's reliability. Both formulas hold for Pearson's r; for rank statistics the figure is taken to
  Pearson's scale and back under bivariate normality (Kendall: ``r = sin(pi tau / 2)``, Greiner's relation;
  Spearman: ``r = 2 sin(pi rho / 6)``; pairwise accuracy as ``(1 + tau) / 2``).
* :func:`one_vs_rest` -- each rater's scores taken as a metric against the mean of the other raters of the same
  cells (the "human" rows of WMT tables), per rater and as their mean weighted by cells.
* :func:`bootstrap_items` -- a percentile interval for any of these by resampling items (whole columns).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from styleval.errors import InputError

from ._results import ConfidenceInterval, percentile_interval
from ._validate import as_float_array
from .correlation import SegmentStatistic, _as_float, _check_resampling

Statistic = Callable[[np.ndarray, np.ndarray], Any]

#: the statistics whose figures go to Pearson's scale through Greiner's relation (bivariate normality)
KENDALL_LIKE = ("kendall", "kendall_b", "kendall_c", "kendall_tau_like")


def as_cube(ratings: Any) -> np.ndarray:
    """A float ``(n_systems, n_items, n_raters)`` array; NaN means "not rated", infinities are refused."""
    cube = as_float_array(ratings, "ratings", ndim=3)
    if np.isinf(cube).any():
        raise InputError("ratings hold an infinite value; a missing rating is NaN")
    return cube


def raters_per_cell(cube: np.ndarray) -> np.ndarray:
    """How many raters rated each (system, item) cell."""
    return (~np.isnan(cube)).sum(axis=2)


def _quiet_mean(values: np.ndarray, axis: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=axis)


def human_mean(cube: np.ndarray) -> np.ndarray:
    """The mean rating of each (system, item) cell, NaN where nobody rated it."""
    return _quiet_mean(cube, 2)


def random_halves(cube: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One random split of each cell's raters: the means of half A (``floor(k/2)`` raters) and half B (the rest),
    NaN in both where a cell has fewer than two raters."""
    rated = ~np.isnan(cube)
    keys = np.where(rated, rng.random(cube.shape), np.inf)
    order = np.argsort(np.argsort(keys, axis=2), axis=2)  # each rating's place in its cell's random order
    k = rated.sum(axis=2, keepdims=True)
    in_a = rated & (order < k // 2)
    in_b = rated & ~in_a
    a = _quiet_mean(np.where(in_a, cube, np.nan), 2)
    b = _quiet_mean(np.where(in_b, cube, np.nan), 2)
    single = k[..., 0] < 2
    return np.where(single, np.nan, a), np.where(single, np.nan, b)


def _figure(statistic: Statistic, m: np.ndarray, h: np.ndarray) -> float:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _as_float(statistic(m, h))
    except InputError:
        return math.nan


def _resampled(statistic: Statistic, m: np.ndarray, h: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The statistic on each resample of items (rows of ``idx``): at once where a pairwise statistic allows."""
    fast = statistic.grouped if isinstance(statistic, SegmentStatistic) else None
    got = fast.bootstrap_items(m, h, idx) if fast is not None else None
    if got is not None:
        return np.asarray(got, dtype=float)
    return np.array([_figure(statistic, m[:, sel], h[:, sel]) for sel in idx])


def _both_roles(statistic: Statistic, a: np.ndarray, b: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    if idx is None:
        return np.array([(_figure(statistic, a, b) + _figure(statistic, b, a)) / 2])
    return (_resampled(statistic, a, b, idx) + _resampled(statistic, b, a, idx)) / 2


def split_half(ratings: Any, statistic: Statistic, *, n_splits: int = 20, seed: int | None = 0) -> float:
    """The statistic between the means of two random halves of each cell's raters, averaged over ``n_splits``
    splits and both roles; NaN when no cell has two raters or the statistic is undefined on every split."""
    cube = as_cube(ratings)
    values = [v for v in _split_values(cube, statistic, n_splits, seed, None)[:, 0] if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan


def _split_values(cube: np.ndarray, statistic: Statistic, n_splits: int, seed: int | None,
                  idx: np.ndarray | None) -> np.ndarray:
    """(n_splits, n_resamples or 1) figures between halves, one row per split."""
    if not isinstance(n_splits, (int, np.integer)) or n_splits < 1:
        raise InputError(f"n_splits must be a positive integer; got {n_splits!r}")
    rng = np.random.default_rng(seed)
    return np.stack([_both_roles(statistic, *random_halves(cube, rng), idx) for _ in range(n_splits)])


def spearman_brown(r: float | np.ndarray, factor: float = 2.0) -> Any:
    """The reliability of a mean ``factor`` times as long as one whose reliability is ``r``."""
    r = np.asarray(r, dtype=float)
    with np.errstate(all="ignore"):
        out = factor * r / (1 + (factor - 1) * r)
    return float(out) if out.ndim == 0 else out


def to_pearson(value: float | np.ndarray, method: str) -> Any:
    """A figure of ``method`` on Pearson's scale under bivariate normality (identity for Pearson)."""
    v = np.asarray(value, dtype=float)
    if method in KENDALL_LIKE:
        out = np.sin(np.pi * v / 2)
    elif method == "spearman":
        out = 2 * np.sin(np.pi * v / 6)
    elif method == "pairwise_accuracy":
        out = np.sin(np.pi * (2 * v - 1) / 2)
    else:
        out = v
    return float(out) if out.ndim == 0 else out


def from_pearson(r: float | np.ndarray, method: str) -> Any:
    """The inverse of :func:`to_pearson`."""
    v = np.clip(np.asarray(r, dtype=float), -1.0, 1.0)
    if method in KENDALL_LIKE:
        out = 2 / np.pi * np.arcsin(v)
    elif method == "spearman":
        out = 6 / np.pi * np.arcsin(v / 2)
    elif method == "pairwise_accuracy":
        out = (1 + 2 / np.pi * np.arcsin(v)) / 2
    else:
        out = v
    out = np.where(np.isnan(np.asarray(r, dtype=float)), np.nan, out)
    return float(out) if out.ndim == 0 else out


def reliability_and_ceiling(half: float | np.ndarray, method: str, half_method: str | None = None
                            ) -> tuple[Any, Any]:
    """(reliability of the full mean on Pearson's scale, the ceiling on ``method``'s scale) from a split-half
    figure on ``half_method``'s scale (default ``method``); NaN where the halves do not correlate positively."""
    r_half = np.asarray(to_pearson(half, half_method or method), dtype=float)
    with np.errstate(invalid="ignore"):
        reliability = np.where(r_half > 0, spearman_brown(r_half), np.nan)
        ceiling = from_pearson(np.sqrt(reliability), method)
    rel = float(reliability) if reliability.ndim == 0 else reliability
    return rel, ceiling


@dataclass(frozen=True)
class RaterFigure:
    """One rater taken as a metric against the mean of the others on the cells it shares with them."""

    rater: int
    statistic: float
    n_cells: int
    note: str = ""


def within_pearson(groups: str) -> Statistic:
    """Pearson's r of two ``(n_systems, n_items)`` matrices over their cells after centring each item's column
    (``groups="item"``: the within-input agreement a per-input statistic reads), each system's row (``"system"``) or
    nothing (``"none"``); NaN cells (in either) are left out first."""
    if groups not in ("item", "system", "none"):
        raise InputError(f"groups must be item, system or none, not {groups!r}")

    def statistic(m: np.ndarray, h: np.ndarray) -> float:
        both = ~(np.isnan(m) | np.isnan(h))
        x, y = np.where(both, m, np.nan), np.where(both, h, np.nan)
        if groups == "item":
            x, y = x - _quiet_mean(x, 0)[None, :], y - _quiet_mean(y, 0)[None, :]
        elif groups == "system":
            x, y = x - _quiet_mean(x, 1)[:, None], y - _quiet_mean(y, 1)[:, None]
        x, y = x[both], y[both]
        if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
            return math.nan
        return float(np.corrcoef(x, y)[0, 1])

    return statistic


#: above this many pairs of cells a pooled pairwise ceiling averages over a fixed random sample of them
MAX_CEILING_PAIRS = 2_000_000


def _some_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i < j) of n cells, or an unbiased fixed random sample of MAX_CEILING_PAIRS of them."""
    if n * (n - 1) // 2 <= MAX_CEILING_PAIRS:
        return np.triu_indices(n, 1)
    rng = np.random.default_rng(0)
    i = rng.integers(0, n, size=MAX_CEILING_PAIRS * 2)
    j = rng.integers(0, n, size=MAX_CEILING_PAIRS * 2)
    keep = i != j
    i, j = i[keep][:MAX_CEILING_PAIRS], j[keep][:MAX_CEILING_PAIRS]
    return np.minimum(i, j), np.maximum(i, j)


def pairwise_ceiling(human: Any, *, average_by: str = "item", threshold: float = 0.0, tie_rule: str = "le",
                     accuracy: bool = False) -> Callable[[Any, np.ndarray | None], Any]:
    """The expected figure of a perfect metric (the true score) under a pairwise convention that skips the pairs the
    humans tie, as a function of the human mean's reliability.

    For each pair the convention counts (outputs of one input, ``average_by="item"``; of one system, ``"system"``;
    any two, ``"none"``; human difference ``d`` beyond ``threshold``), the true difference given ``d`` is normal
    with mean ``rel * d`` and variance ``2 var_t (1 - rel)`` (``var_t = rel * var_h``, ``var_h`` the human mean's
    variance within the groups): the true score orders the pair as the humans do with probability
    ``Phi(sqrt(rel / (1 - rel)) |d| / sqrt(2 var_h))``. The figure is the mean of ``2 Phi - 1`` (Kendall tau-like;
    ``Phi`` for accuracy) per group, then over groups, as the convention averages -- over the very pairs it counts,
    so the pairs skipped as human ties (the hardest) are skipped here too. Pooled over more than
    :data:`MAX_CEILING_PAIRS` pairs, the mean is over a fixed random sample of that many."""
    from scipy.special import ndtr

    h = as_float_array(human, "human", ndim=2)
    if average_by == "system":
        h = h.T
    groups, diffs = [], []
    if average_by == "none":
        flat = h[~np.isnan(h)]
        i, j = _some_pairs(len(flat))
        diffs.append(np.abs(flat[i] - flat[j]))
        groups.append(np.zeros(len(i), dtype=int))
        centred = flat - flat.mean()
    else:
        centred_cols = []
        for g in range(h.shape[1]):
            col = h[:, g][~np.isnan(h[:, g])]
            i, j = np.triu_indices(len(col), 1)
            diffs.append(np.abs(col[i] - col[j]))
            groups.append(np.full(len(i), g))
            centred_cols.append(col - col.mean() if len(col) else col)
        centred = np.concatenate(centred_cols) if centred_cols else np.zeros(0)
    d, group = np.concatenate(diffs), np.concatenate(groups)
    kept = d > threshold if tie_rule == "le" else d >= threshold
    d, group = d[kept], group[kept]
    n_groups = 1 if average_by == "none" else h.shape[1]
    var_h = float(np.mean(centred ** 2)) if len(centred) else math.nan
    per_group_n = np.bincount(group, minlength=n_groups)

    def ceiling_of(reliability: Any, idx: np.ndarray | None) -> Any:
        rels = np.atleast_1d(np.asarray(reliability, dtype=float))
        out = np.empty(len(rels))
        for r, value in enumerate(rels):
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.sqrt(value / (1 - value)) * d / math.sqrt(2 * var_h) if value < 1 else np.full(len(d), np.inf)
            p = ndtr(z)
            per_pair = p if accuracy else 2 * p - 1
            sums = np.bincount(group, weights=per_pair, minlength=n_groups)
            with np.errstate(invalid="ignore", divide="ignore"):
                means = sums / per_group_n
            chosen = np.arange(n_groups) if idx is None or average_by != "item" else idx[r]
            vals = means[chosen]
            vals = vals[~np.isnan(vals)]
            out[r] = float(vals.mean()) if len(vals) else math.nan
        return float(out[0]) if np.ndim(reliability) == 0 else out

    return ceiling_of


def one_vs_rest(ratings: Any, statistic: Statistic) -> tuple[float, list[RaterFigure]]:
    """Each rater against the mean of the other raters of its cells, and the mean of the defined figures weighted by
    each rater's number of cells (NaN when none is defined). A rater who shares fewer than two cells with others,
    or whose figure is undefined (constant scores), gets NaN and a note saying why."""
    cube = as_cube(ratings)
    per = [_rater_figure(cube, j, statistic) for j in range(cube.shape[2])]
    return _weighted(per), per


def _rater_figure(cube: np.ndarray, j: int, statistic: Statistic) -> RaterFigure:
    mine, rest = _rater_and_rest(cube, j)
    n = int((~np.isnan(mine)).sum())
    if n == 0:
        return RaterFigure(j, math.nan, 0, "shares no cell with another rater")
    if n == 1:
        return RaterFigure(j, math.nan, 1, "judged a single cell that another rater judged too: no correlation")
    value = _figure(statistic, mine, rest)
    if math.isnan(value):
        own = mine[~np.isnan(mine)]
        why = "constant scores" if np.all(own == own[0]) else "undefined on its cells (ties or too few per group)"
        return RaterFigure(j, value, n, why)
    return RaterFigure(j, value, n)


def _rater_and_rest(cube: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    mine = cube[:, :, j]
    others = np.delete(cube, j, axis=2)
    rest = _quiet_mean(others, 2)
    shared = ~(np.isnan(mine) | np.isnan(rest))
    return np.where(shared, mine, np.nan), np.where(shared, rest, np.nan)


def _weighted(per: list[RaterFigure]) -> float:
    ok = [p for p in per if not math.isnan(p.statistic)]
    if not ok:
        return math.nan
    return float(np.average([p.statistic for p in ok], weights=[p.n_cells for p in ok]))


@dataclass(frozen=True)
class Reliability:
    """Split-half reliability, the ceiling it implies and one rater against the rest, each with an interval.

    ``half``: the statistic between half means; ``reliability``: of the full mean on Pearson's scale (Spearman-Brown,
    factor 2); ``ceiling``: the highest figure a metric can expect on the statistic's own scale; ``one_rater``: the
    cell-weighted mean of :func:`one_vs_rest`; ``cis``: name -> interval; ``raters``: the per-rater figures."""

    method: str
    half: float
    reliability: float
    ceiling: float
    one_rater: float
    raters: list[RaterFigure]
    cis: dict[str, ConfidenceInterval] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Halves:
    """How the split halves are compared and the ceiling drawn from them: ``statistic`` on ``scale``'s scale
    (Pearson's r by default: a correlation between halves is a reliability); ``ceiling_of(reliability, idx)`` gives
    the ceiling of each reliability (an array over resamples of items ``idx``, or a float for the data as they are,
    ``idx=None``); None: ``from_pearson(sqrt(reliability), method)``."""

    statistic: Statistic | None = None
    scale: str | None = None
    ceiling_of: Callable[[Any, np.ndarray | None], Any] | None = None


def reliability(ratings: Any, statistic: Statistic, method: str, *, n_splits: int = 20, n_resamples: int = 200,
                confidence: float = 0.95, seed: int | None = 0, halves: Halves | None = None) -> Reliability:
    """:func:`split_half`, :func:`reliability_and_ceiling` and :func:`one_vs_rest` of ``ratings`` with percentile
    intervals from ``n_resamples`` resamples of items (0: none). The same splits serve every resample; where no
    cell has more than two raters there is one split (its two roles), whatever ``n_splits`` says.

    ``halves`` (default: ``statistic`` on ``method``'s scale) compares the halves, e.g. with :func:`within_pearson`
    where the task's own statistic would count a rater's ties as a metric's, and may draw the ceiling its own way;
    the ceiling is on ``method``'s scale and ``one_rater`` uses ``statistic``."""
    halves = halves or Halves()
    scale = halves.scale or method
    cube = as_cube(ratings)
    if raters_per_cell(cube).max() <= 2:  # two raters split one way only (both roles are computed anyway)
        n_splits = 1
    split = _split_values(cube, halves.statistic or statistic, n_splits, seed, None)[:, 0]
    half = float(np.nanmean(split)) if np.isfinite(split).any() else math.nan
    rel, ceiling = reliability_and_ceiling(half, method, scale)
    if halves.ceiling_of is not None:
        ceiling = math.nan if math.isnan(rel) else float(halves.ceiling_of(rel, None))
    one, per = one_vs_rest(cube, statistic)
    out = Reliability(method, half, rel, ceiling, one, per,
                      options={"n_splits": n_splits, "seed": seed, "spearman_brown_factor": 2,
                               "n_raters": int(cube.shape[2]), "half_method": scale})
    if n_resamples:
        out.cis.update(bootstrap_items(cube, statistic, method, n_splits=n_splits, n_resamples=n_resamples,
                                       confidence=confidence, seed=seed, halves=halves))
    return out


def bootstrap_items(ratings: Any, statistic: Statistic, method: str, *, n_splits: int = 20, n_resamples: int = 200,
                    confidence: float = 0.95, seed: int | None = 0, halves: Halves | None = None
                    ) -> dict[str, ConfidenceInterval]:
    """Percentile intervals of the split-half figure, the reliability, the ceiling and the one-rater figure over
    ``n_resamples`` resamples of items (columns, with replacement); each resample keeps the splits of the full
    data, so the interval is the items' uncertainty, not the splits'."""
    _check_resampling(n_resamples, confidence)
    cube = as_cube(ratings)
    n_items = cube.shape[1]
    if n_items < 2:
        raise InputError(f"need at least 2 items to bootstrap; got {n_items}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_items, size=(n_resamples, n_items))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        halves = halves or Halves()
        half = np.nanmean(_split_values(cube, halves.statistic or statistic, n_splits, seed, idx), axis=0)
    rel, ceiling = reliability_and_ceiling(half, method, halves.scale)
    if halves.ceiling_of is not None:
        ceiling = np.where(np.isnan(rel), np.nan, halves.ceiling_of(np.nan_to_num(rel), idx))
    raters = np.stack([_rater_resamples(cube, j, statistic, idx) for j in range(cube.shape[2])])
    one = _weighted_rows(raters, cube, idx)
    opts = {"unit": "item", "seed": seed, "method": "percentile", "n_splits": n_splits}
    out = {}
    for name, values in (("half", half), ("reliability", rel), ("ceiling", ceiling), ("one_rater", one)):
        low, high, mean, n_valid = percentile_interval(np.asarray(values, dtype=float), confidence)
        out[name] = ConfidenceInterval(low, high, mean, math.nan, confidence, n_resamples, n_valid, dict(opts))
    return out


def _rater_resamples(cube: np.ndarray, j: int, statistic: Statistic, idx: np.ndarray) -> np.ndarray:
    mine, rest = _rater_and_rest(cube, j)
    if (~np.isnan(mine)).sum() < 2:
        return np.full(len(idx), np.nan)
    return _resampled(statistic, mine, rest, idx)


def _weighted_rows(values: np.ndarray, cube: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per resample, the mean of the raters' figures weighted by the cells each has in that resample."""
    cells = np.stack([(~np.isnan(_rater_and_rest(cube, j)[0])).sum(axis=0) for j in range(cube.shape[2])])
    weights = cells[:, idx].sum(axis=2).astype(float)  # (raters, resamples)
    weights = np.where(np.isnan(values), 0.0, weights)
    total = weights.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (np.nan_to_num(values) * weights).sum(axis=0) / total, np.nan)
