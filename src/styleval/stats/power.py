"""Planning a human study from a pilot: the power to tell two systems apart, and how wide a metric's interval gets.

Both answers come from resampling the pilot, not from a formula, so they carry the pilot's own item-to-item and
rater-to-rater variance (and its skew, its ceiling effects, its ties):

* :func:`pilot_variance` -- from a pilot cube ``(n_systems, n_items, n_raters)`` (NaN: not rated): the pool of
  per-item differences between two systems (every pair of systems, each pair centred on its own mean, shrunk so its
  variance is the true item variance, the rater noise in the pilot's cell means taken out) and the pool of rater
  residuals (a rating minus its cell's mean, scaled by ``sqrt(k / (k - 1))`` so its variance is a single rater's).
* :func:`simulated_power` -- studies of ``n_items`` items each judged by ``n_raters`` raters for both systems are
  drawn from those pools with a true difference ``delta`` added, and each is tested with the paired bootstrap test
  styleval uses between systems (:func:`~styleval.stats.significance.paired_bootstrap`, two-sided, on the mean of the
  per-item differences, sacrebleu's p-value): the power is the share of studies with ``p < alpha``.
* :func:`paired_bootstrap_pvalues`, :func:`approximate_randomization_pvalues` -- those tests for many studies at
  once, with the same draws as ``paired_bootstrap`` / ``approximate_randomization`` for the same seed (the same
  p-value, study by study). On normal data the approximate randomization test has its nominal false alarm rate and
  the power of a paired t-test; the paired bootstrap with sacrebleu's p-value rejects more often than its nominal
  level (about .125 at alpha .05 with 40 items: its p-value is about a one-sided one), so its power is a t-test's at
  that actual level. A plan reports the false alarm rate of the test it simulates.
* :func:`interval_widths` -- the expected width of a statistic's interval for a study of ``n`` items: the central
  ``confidence`` range of the statistic over studies of ``n`` items drawn from the pilot with replacement (the
  range a percentile bootstrap of such a study estimates).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from styleval.errors import InputError

from .correlation import SegmentStatistic
from .reliability import _figure, as_cube
from .significance import _index_blocks, _mask_blocks

#: the paired tests styleval runs between systems (``score --significance``), by their option names
TESTS = ("paired-bootstrap", "approx-randomization")

#: below this many items a pilot cannot say much about the item-to-item variance: refused
MIN_PILOT_ITEMS = 3


def check_target(name: str, value: float, *, low: float = 0.0, high: float = 1.0) -> None:
    """A probability strictly between ``low`` and ``high``, or an :class:`InputError` saying why."""
    if not isinstance(value, (int, float)) or math.isnan(value) or not low < value < high:
        extra = " (a power of 1 needs infinitely many items: ask for .8 or .9)" if name == "power" and value == 1 \
            else ""
        raise InputError(f"{name} must be strictly between {low:g} and {high:g}, not {value!r}{extra}")


@dataclass(frozen=True)
class PilotVariance:
    """What a pilot says about the two sources of noise in a comparison of two systems."""

    item_effects: np.ndarray  # centred per-item true differences between two systems (shrunk)
    residuals: np.ndarray  # one rater's deviation from a cell's mean
    item_variance: float  # variance of the true per-item difference
    rater_variance: float  # variance of one rater's score around its cell's mean
    n_items: int
    n_pairs: int  # pairs of systems pooled
    mean_raters: float  # mean raters per cell in the pilot

    def describe(self) -> str:
        return (f"item-to-item variance of a true difference {self.item_variance:.4g} (sd "
                f"{math.sqrt(self.item_variance):.3g}), one rater's variance around a cell mean "
                f"{self.rater_variance:.4g} (sd {math.sqrt(self.rater_variance):.3g}); from {self.n_items} items, "
                f"{self.n_pairs} pair(s) of systems, "
                f"{self.mean_raters:.2f} raters per cell")


def pilot_variance(ratings: Any, pairs: Sequence[tuple[int, int]] | None = None) -> PilotVariance:
    """The item and rater variance of a pilot cube; ``pairs`` of system indices to pool (default: every pair)."""
    cube = as_cube(ratings)
    n_sys, n_items, _ = cube.shape
    if n_sys < 2:
        raise InputError("a pilot needs at least two systems to plan a comparison of two")
    rated = ~np.isnan(cube)
    k = rated.sum(axis=2)
    if (k >= 1).any(axis=0).sum() < MIN_PILOT_ITEMS:
        raise InputError(f"a pilot of {int((k >= 1).any(axis=0).sum())} item(s) cannot estimate how items vary; "
                         f"a plan needs at least {MIN_PILOT_ITEMS} (20 or more for a plan to lean on)")
    if not (k >= 2).any():
        raise InputError("every cell of the pilot has a single rating: rater noise cannot be told from item "
                         "variance; a plan needs cells judged by two raters or more")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(cube, axis=2)
    several = k >= 2
    scale = np.sqrt(np.where(several, k / np.maximum(k - 1, 1), np.nan))[..., None]
    residuals = ((cube - means[..., None]) * scale)[rated & several[..., None]]
    rater_var = float(np.var(residuals))
    effects, noise = [], []
    for a, b in (pairs if pairs is not None else [(i, j) for i in range(n_sys) for j in range(i + 1, n_sys)]):
        d = means[a] - means[b]
        ok = ~np.isnan(d)
        if ok.sum() < 2:
            continue
        effects.append(d[ok] - d[ok].mean())
        noise.append(rater_var * (1 / k[a, ok] + 1 / k[b, ok]))
    if not effects:
        raise InputError("no two systems of the pilot share two items: nothing to estimate a difference from")
    pooled = np.concatenate(effects)
    observed = float(np.mean([np.var(e, ddof=1) for e in effects]))
    noise_var = float(np.mean(np.concatenate(noise)))
    item_var = max(observed - noise_var, 0.0)
    shrink = math.sqrt(item_var / observed) if observed > 0 else 0.0
    return PilotVariance(pooled * shrink, residuals, item_var, rater_var, n_items, len(effects),
                         float(k[k > 0].mean()))


def paired_bootstrap_pvalues(diffs: Any, *, n_resamples: int = 1000, seed: int | None = 0) -> np.ndarray:
    """The two-sided paired bootstrap p-value of each row of ``diffs`` (``(n_studies, n_items)`` per-item
    differences A - B), as :func:`~styleval.stats.significance.paired_bootstrap` gives it for a mean score: the same
    index draws for the same seed, null ``|d*| - mean|d*|``, p ``(#(null >= |delta|) + 1) / (n_resamples + 1)``."""
    d = np.atleast_2d(np.asarray(diffs, dtype=float))
    n = d.shape[1]
    rng = np.random.default_rng(seed)
    boot = np.empty((n_resamples, d.shape[0]))
    done = 0
    for idx in _index_blocks(rng, n, n_resamples):
        counts = np.zeros((len(idx), n))
        np.add.at(counts, (np.arange(len(idx))[:, None], idx), 1.0)
        boot[done:done + len(idx)] = counts @ d.T / n
        done += len(idx)
    spread = np.abs(boot)
    null = spread - spread.mean(axis=0)
    observed = np.abs(d.mean(axis=1))
    return (np.sum(null >= observed[None, :], axis=0) + 1) / (n_resamples + 1)


def approximate_randomization_pvalues(diffs: Any, *, n_trials: int = 1000, seed: int | None = 0) -> np.ndarray:
    """The paired approximate randomization p-value of each row of ``diffs``, as
    :func:`~styleval.stats.significance.approximate_randomization` gives it for a mean score (the same swap masks
    for the same seed: a swapped item flips the sign of its difference)."""
    d = np.atleast_2d(np.asarray(diffs, dtype=float))
    n = d.shape[1]
    rng = np.random.default_rng(seed)
    shuffled = np.empty((n_trials, d.shape[0]))
    done = 0
    for pos in _mask_blocks(rng, n, n_trials):
        shuffled[done:done + len(pos)] = np.where(pos, 1.0, -1.0) @ d.T / n
        done += len(pos)
    observed = np.abs(d.mean(axis=1))
    return (np.sum(np.abs(shuffled) >= observed[None, :], axis=0) + 1) / (n_trials + 1)


def pvalues(diffs: Any, test: str, *, n_resamples: int, seed: int | None) -> np.ndarray:
    """The p-values of ``test`` (one of :data:`TESTS`) for each row of per-item differences."""
    if test == "paired-bootstrap":
        return paired_bootstrap_pvalues(diffs, n_resamples=n_resamples, seed=seed)
    if test == "approx-randomization":
        return approximate_randomization_pvalues(diffs, n_trials=n_resamples, seed=seed)
    raise InputError(f"test must be one of {', '.join(TESTS)}, not {test!r}")


def simulated_power(pilot: PilotVariance, n_items: int, n_raters: int, delta: float, *, alpha: float = 0.05,
                    n_studies: int = 500, n_resamples: int = 500, seed: int | None = 0,
                    test: str = "paired-bootstrap", allow_zero: bool = False) -> float:
    """The share of simulated studies (``n_items`` x ``n_raters`` per system) whose paired ``test`` finds the true
    difference ``delta`` at level ``alpha``; with ``allow_zero``, ``delta=0`` measures the test's false alarm
    rate on the pilot's noise."""
    if delta == 0 and not allow_zero:
        raise InputError("a difference D of 0 cannot be detected: the share of studies that find it is the false "
                         "alarm rate alpha, whatever the design; give the smallest difference that matters")
    check_target("alpha", alpha)
    if n_items < 2 or n_raters < 1:
        raise InputError(f"a design needs at least 2 items and 1 rater; got {n_items} x {n_raters}")
    rng = np.random.default_rng(seed)
    effects = rng.choice(pilot.item_effects, size=(n_studies, n_items))
    noise_a = rng.choice(pilot.residuals, size=(n_studies, n_items, n_raters)).mean(axis=2)
    noise_b = rng.choice(pilot.residuals, size=(n_studies, n_items, n_raters)).mean(axis=2)
    diffs = delta + effects + noise_a - noise_b
    p = pvalues(diffs, test, n_resamples=n_resamples, seed=None if seed is None else seed + 1)
    return float(np.mean(p < alpha))


def interval_widths(metric: Any, human: Any, statistic: Callable[[np.ndarray, np.ndarray], Any],
                    n_items: Sequence[int], *, n_studies: int = 200, confidence: float = 0.95,
                    seed: int | None = 0) -> dict[int, float]:
    """For each item count: the expected width of the statistic's ``confidence`` interval in a study of that many
    items, from studies drawn from the pilot's items (columns of the ``(n_systems, n_items)`` matrices)."""
    m = np.asarray(metric, dtype=float)
    h = np.asarray(human, dtype=float)
    if m.shape != h.shape or m.ndim != 2:
        raise InputError(f"metric and human must be matrices of one shape; got {m.shape} and {h.shape}")
    if m.shape[1] < MIN_PILOT_ITEMS:
        raise InputError(f"a pilot of {m.shape[1]} item(s) cannot show how the statistic varies; a plan needs at "
                         f"least {MIN_PILOT_ITEMS}")
    check_target("confidence", confidence)
    rng = np.random.default_rng(seed)
    fast = statistic.grouped if isinstance(statistic, SegmentStatistic) else None
    out = {}
    for n in n_items:
        idx = rng.integers(0, m.shape[1], size=(n_studies, int(n)))
        got = fast.bootstrap_items(m, h, idx) if fast is not None else None
        values = np.asarray(got, dtype=float) if got is not None else np.array(
            [_figure(statistic, m[:, sel], h[:, sel]) for sel in idx])
        values = values[~np.isnan(values)]
        if len(values) < 2:
            out[int(n)] = math.nan
            continue
        low, high = np.quantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])
        out[int(n)] = float(high - low)
    return out
