"""Correlation statistics for meta-evaluating metrics against human judgments.

Pure functions on numpy arrays: no I/O, no printing. Bad input raises :class:`styleval.errors.InputError`.

Conventions (apply to every function here)
------------------------------------------
* Inputs are paired 1-D arrays (``x``/``metric`` first, ``y``/``human`` second) unless stated otherwise.
  Different lengths are an error that names both lengths.
* ``nan_policy="raise"`` (default) rejects NaN with a message that counts them and lists their positions;
  ``"omit"`` drops every position where either array is NaN (the number dropped is in ``options["n_omitted"]``).
  Infinite values are always an error.
* Fewer than 2 usable points is an error. With exactly 2 points a correlation is always +-1 (or undefined); it is
  returned, with ``pvalue=None`` and ``"n<3"`` in ``options["flags"]``.
* A constant vector makes a correlation undefined: the statistic is NaN (not an error), ``pvalue`` is None, and
  ``options["flags"]`` has ``"constant_x"``/``"constant_y"`` with an explanation in ``options["note"]``. Returning
  NaN (rather than raising) lets item-/system-averaged correlations skip undefined groups, as mt-metrics-eval does.
* ``CorrelationResult.n`` is the number of paired points used (not the number of pairs; pair counts are in
  ``options`` for the pairwise statistics).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy import stats as _st

from styleval.errors import InputError

from ._results import ConfidenceInterval, percentile_interval
from ._validate import as_float_array, check_choice, paired
from .grouped import GroupedPairs, PairRule

__all__ = [
    "CorrelationResult",
    "ConfidenceInterval",
    "pearson",
    "spearman",
    "kendall",
    "kendall_tau_like",
    "pairwise_accuracy",
    "segment_level",
    "SegmentStatistic",
    "system_level",
    "bootstrap_correlation_ci",
    "top_n_correlations",
    "orient",
    "SEGMENT_METHODS",
]


@dataclass(frozen=True)
class CorrelationResult:
    """One correlation-like statistic.

    ``statistic`` may be NaN when undefined (see ``options["flags"]``/``options["note"]``); ``pvalue`` is None when
    no p-value is defined (pairwise statistics, averages over groups, n<3, undefined statistics). ``options``
    records every choice that produced the number (tie handling, variant, averaging, counts, ...).
    """

    statistic: float
    pvalue: float | None
    n: int
    method: str
    options: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        return float(self.statistic)


# --------------------------------------------------------------------------------------------------------------
# classic correlations
# --------------------------------------------------------------------------------------------------------------

def _prepare(x: Any, y: Any, nan_policy: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    xa, ya, n_omitted = paired(x, y, nan_policy=nan_policy)
    if len(xa) < 2:
        extra = f" ({n_omitted} dropped for NaN)" if n_omitted else ""
        raise InputError(f"need at least 2 paired values for a correlation; got {len(xa)}{extra}")
    opts: dict[str, Any] = {"nan_policy": nan_policy, "n_omitted": n_omitted, "flags": []}
    if len(xa) < 3:
        opts["flags"].append("n<3")
    return xa, ya, opts


def _constant_check(xa: np.ndarray, ya: np.ndarray, opts: dict[str, Any]) -> bool:
    """Flag constant inputs; True when the correlation is undefined."""
    undefined = False
    notes = []
    for arr, label in ((xa, "x"), (ya, "y")):
        if np.all(arr == arr[0]):
            opts["flags"].append(f"constant_{label}")
            notes.append(f"{label} is constant")
            undefined = True
    if undefined:
        opts["note"] = "; ".join(notes) + ": correlation undefined (NaN)"
    return undefined


def _scipy_corr(name: str, fn: Callable[..., Any], x: Any, y: Any, nan_policy: str,
                extra_opts: dict[str, Any] | None = None) -> CorrelationResult:
    xa, ya, opts = _prepare(x, y, nan_policy)
    if extra_opts:
        opts.update(extra_opts)
    if _constant_check(xa, ya, opts):
        return CorrelationResult(float("nan"), None, len(xa), name, opts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fn(xa, ya)
    stat = float(res[0])
    pval: float | None = float(res[1])
    if len(xa) < 3:
        pval = None
        opts["note"] = "n<3: a correlation over 2 points is always +-1; no p-value"
    if pval is not None and math.isnan(pval):
        pval = None
    return CorrelationResult(stat, pval, len(xa), name, opts)


def pearson(x: Any, y: Any, *, nan_policy: str = "raise") -> CorrelationResult:
    """Pearson's r with scipy's two-sided p-value."""
    return _scipy_corr("pearson", _st.pearsonr, x, y, nan_policy)


def spearman(x: Any, y: Any, *, nan_policy: str = "raise") -> CorrelationResult:
    """Spearman's rho (Pearson on average ranks, so ties get mid-ranks) with scipy's two-sided p-value."""
    return _scipy_corr("spearman", _st.spearmanr, x, y, nan_policy, {"ties": "average ranks"})


def kendall(x: Any, y: Any, *, variant: str = "b", nan_policy: str = "raise") -> CorrelationResult:
    """Kendall's tau, ``variant="b"`` (tie-adjusted in both variables) or ``"c"`` (Stuart's tau-c), via
    :func:`scipy.stats.kendalltau`; p-value from scipy (``method="auto"``)."""
    check_choice("variant", variant, ("b", "c"))
    return _scipy_corr(f"kendall_{variant}", lambda a, b: _st.kendalltau(a, b, variant=variant), x, y, nan_policy,
                       {"variant": variant})


# --------------------------------------------------------------------------------------------------------------
# pairwise (WMT-style) statistics
# --------------------------------------------------------------------------------------------------------------

HUMAN_TIES = ("skip", "match")
METRIC_TIES = ("discordant", "concordant", "skip", "half")
TIE_RULES = ("le", "lt")
_BLOCK_CELLS = 2_000_000


def _pair_counts(metric: np.ndarray, human: np.ndarray, *, threshold: float, tie_rule: str,
                 human_ties: str, metric_epsilon: float) -> dict[str, int]:
    """Count pair types over all i<j, vectorised in row blocks (memory O(block * n)).

    Returns raw counts: ``agree``/``disagree`` (neither a human nor a metric tie), ``metric_tie`` (metric tie on a
    pair that is not a human tie), ``human_tie`` (human-tie pairs) and, among those, ``human_tie_metric_tie``.
    """
    n = len(human)
    counts = {"agree": 0, "disagree": 0, "metric_tie": 0, "human_tie": 0, "human_tie_metric_tie": 0}
    if n < 2:
        return counts
    block = max(1, _BLOCK_CELLS // n)
    cols = np.arange(n)
    for start in range(0, n - 1, block):
        rows = np.arange(start, min(start + block, n - 1))
        upper = cols[None, :] > rows[:, None]
        dh = human[rows, None] - human[None, :]
        dm = metric[rows, None] - metric[None, :]
        adh = np.abs(dh)
        htie = (dh == 0) | ((adh <= threshold) if tie_rule == "le" else (adh < threshold))
        mtie = np.abs(dm) <= metric_epsilon
        agree = (np.sign(dh) * np.sign(dm)) > 0
        ht = upper & htie
        nt = upper & ~htie
        counts["human_tie"] += int(ht.sum())
        counts["human_tie_metric_tie"] += int((ht & mtie).sum())
        counts["metric_tie"] += int((nt & mtie).sum())
        counts["agree"] += int((nt & ~mtie & agree).sum())
        counts["disagree"] += int((nt & ~mtie & ~agree).sum())
    return counts


def _tau_like_from_counts(raw: dict[str, int], human_ties: str, metric_ties: str) -> dict[str, float]:
    conc = float(raw["agree"])
    disc = float(raw["disagree"])
    skipped_h = skipped_m = 0
    if human_ties == "skip":
        skipped_h = raw["human_tie"]
    else:  # match: a human tie is concordant iff the metric ties too
        conc += raw["human_tie_metric_tie"]
        disc += raw["human_tie"] - raw["human_tie_metric_tie"]
    mt = raw["metric_tie"]
    if metric_ties == "discordant":
        disc += mt
    elif metric_ties == "concordant":
        conc += mt
    elif metric_ties == "half":
        conc += mt / 2
        disc += mt / 2
    else:
        skipped_m = mt
    return {"concordant": conc, "discordant": disc, "skipped_human_ties": skipped_h,
            "skipped_metric_ties": skipped_m, "skipped": skipped_h + skipped_m,
            "human_tie_pairs": raw["human_tie"], "metric_tie_pairs": mt,
            "human_ordered_pairs": raw["agree"] + raw["disagree"] + mt}


def kendall_tau_like(metric: Any, human: Any, *, threshold: float = 0.0, human_ties: str = "skip",
                     metric_ties: str = "discordant", tie_rule: str = "le", metric_epsilon: float = 0.0,
                     nan_policy: str = "raise") -> CorrelationResult:
    """WMT17-style segment-level Kendall's tau-like: ``tau = (C - D) / (C + D)`` over pairs ``i < j``.

    * A pair is a *human tie* when ``h_i == h_j`` or ``|h_i - h_j| <= threshold`` (``tie_rule="le"``, default) /
      ``< threshold`` (``tie_rule="lt"``). ``threshold=0`` means exact ties only. WMT DARR kept only pairs whose
      DA scores differ by at least 25 points: use ``threshold=25, tie_rule="lt"`` for that.
      ``human_ties="skip"`` (default) drops human-tie pairs; ``"match"`` keeps them, counting a pair Concordant
      iff the metric ties too (else Discordant).
    * Otherwise the pair is Concordant when the metric orders it as the humans do, Discordant when it orders it
      the other way. A *metric tie* (``|m_i - m_j| <= metric_epsilon``) is handled per ``metric_ties``:
      ``"discordant"`` (default: the WMT17 convention, also what Lai et al. 2022's ``compute_kenall`` does -- it
      skips human ties but counts metric ties as discordant), ``"concordant"``, ``"skip"`` or ``"half"`` (half a
      C and half a D, i.e. the metric tie scores 0).

    NaN when no pair is counted (e.g. all human ties; flag ``"no_pairs"``). ``pvalue`` is None. ``options`` holds
    the counts: ``concordant``, ``discordant``, ``skipped`` (= ``skipped_human_ties + skipped_metric_ties``),
    ``human_tie_pairs``, ``metric_tie_pairs`` (metric ties among ``human_ordered_pairs``, the pairs the humans
    order), ``n_pairs`` (= C + D).
    """
    check_choice("human_ties", human_ties, HUMAN_TIES)
    check_choice("metric_ties", metric_ties, METRIC_TIES)
    check_choice("tie_rule", tie_rule, TIE_RULES)
    if not (threshold >= 0) or not (metric_epsilon >= 0):
        raise InputError(f"threshold and metric_epsilon must be >= 0; got {threshold!r}, {metric_epsilon!r}")
    m, h, n_omitted = paired(metric, human, nan_policy=nan_policy, names=("metric", "human"))
    if len(h) < 2:
        raise InputError(f"need at least 2 paired values for kendall_tau_like; got {len(h)}")
    raw = _pair_counts(m, h, threshold=threshold, tie_rule=tie_rule, human_ties=human_ties,
                       metric_epsilon=metric_epsilon)
    c = _tau_like_from_counts(raw, human_ties, metric_ties)
    opts: dict[str, Any] = {"threshold": threshold, "tie_rule": tie_rule, "human_ties": human_ties,
                            "metric_ties": metric_ties, "metric_epsilon": metric_epsilon, "nan_policy": nan_policy,
                            "n_omitted": n_omitted, "flags": [], **c, "n_pairs": c["concordant"] + c["discordant"]}
    total = c["concordant"] + c["discordant"]
    if total == 0:
        opts["flags"].append("no_pairs")
        opts["note"] = "no countable pairs (all pairs are human ties or skipped): tau-like undefined (NaN)"
        stat = float("nan")
    else:
        stat = (c["concordant"] - c["discordant"]) / total
    if len(h) < 3:
        opts["flags"].append("n<3")
    return CorrelationResult(float(stat), None, len(h), "kendall_like", opts)


def pairwise_accuracy(metric: Any, human: Any, *, ties: str = "match", threshold: float = 0.0,
                      tie_rule: str = "le", metric_epsilon: float = 0.0,
                      nan_policy: str = "raise") -> CorrelationResult:
    """Share of pairs ``i < j`` that the metric orders the same way as the humans.

    ``ties="match"`` (default): all pairs count, and a pair is correct when ``sign(m_i - m_j) == sign(h_i - h_j)``
    -- so a human tie is correct only if the metric ties too. This is the pairwise accuracy of Kocmi et al. (2021)
    and of Lai et al.'s ``pair_acc``; with ``metric_epsilon``/``threshold`` > 0 it is Deutsch et al. (2023)'s
    tie-calibrated accuracy. ``ties="skip"``: human-tie pairs are dropped and a metric tie on a remaining pair
    counts as wrong. Human ties follow ``threshold``/``tie_rule`` as in :func:`kendall_tau_like`.

    ``options``: ``correct``, ``total``, ``human_tie_pairs``, ``metric_tie_pairs``. NaN when ``total == 0``.
    """
    check_choice("ties", ties, HUMAN_TIES)
    res = kendall_tau_like(metric, human, threshold=threshold, human_ties=ties, metric_ties="discordant",
                           tie_rule=tie_rule, metric_epsilon=metric_epsilon, nan_policy=nan_policy)
    o = res.options
    correct, total = o["concordant"], o["concordant"] + o["discordant"]
    opts = {"ties": ties, "threshold": threshold, "tie_rule": tie_rule, "metric_epsilon": metric_epsilon,
            "nan_policy": nan_policy, "n_omitted": o["n_omitted"], "flags": list(o["flags"]),
            "correct": correct, "total": total, "human_tie_pairs": o["human_tie_pairs"],
            "metric_tie_pairs": o["metric_tie_pairs"]}
    if "note" in o:
        opts["note"] = o["note"]
    stat = correct / total if total else float("nan")
    return CorrelationResult(float(stat), None, res.n, "pairwise_accuracy", opts)


# --------------------------------------------------------------------------------------------------------------
# segment- and system-level wrappers
# --------------------------------------------------------------------------------------------------------------

def _kendall_b(x: Any, y: Any, **kw: Any) -> CorrelationResult:
    return kendall(x, y, variant="b", **kw)


def _kendall_c(x: Any, y: Any, **kw: Any) -> CorrelationResult:
    return kendall(x, y, variant="c", **kw)


SEGMENT_METHODS: dict[str, Callable[..., CorrelationResult]] = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall": kendall,  # variant via method kwargs, default "b"
    "kendall_b": _kendall_b,
    "kendall_c": _kendall_c,
    "kendall_like": kendall_tau_like,
    "kendall_tau_like": kendall_tau_like,  # alias
    "pairwise_accuracy": pairwise_accuracy,
}
_POOLABLE = ("kendall_like", "kendall_tau_like", "pairwise_accuracy")


def _method(method: str) -> Callable[..., CorrelationResult]:
    check_choice("method", method, tuple(SEGMENT_METHODS))
    return SEGMENT_METHODS[method]


def segment_level(metric: Any, human: Any, *, method: str = "pearson", average_by: str = "none",
                  aggregate: str = "mean", undefined: str = "skip", nan_policy: str = "raise",
                  **method_kwargs: Any) -> CorrelationResult:
    """Segment-level correlation over a ``(n_systems, n_items)`` grid of scores (mirrors mt-metrics-eval).

    ``average_by``:

    * ``"none"``: pool every (system, item) cell into one vector and compute ``method`` once (p-value kept).
    * ``"item"``: compute ``method`` across systems for each item (column) and combine over items.
    * ``"system"``: compute ``method`` across items for each system (row) and combine over systems.

    ``aggregate`` (only with ``average_by`` "item"/"system"): ``"mean"`` averages the per-group statistics;
    ``"pooled"`` (only for ``kendall_like`` and ``pairwise_accuracy``) sums the pair counts C and D (or correct and
    total) over the groups and computes one ``(C - D) / (C + D)`` (or ``correct / total``) -- every pair then
    weighs the same, whereas "mean" weighs every item the same. Lai et al. (2022)'s "Kendall tau-like per input"
    is ``method="kendall_like", average_by="item", aggregate="mean"`` (their ``cal_corr_content.py`` averages the
    per-input taus, skipping inputs whose outputs are all human ties).

    Groups whose statistic is undefined (NaN: all human ties, constant vector, fewer than 2 non-NaN cells) are
    skipped (``undefined="skip"``, mt-metrics-eval's default) or counted as 0 (``undefined="zero"``, as Lai et al.'s
    ``corr_sample`` and mt-metrics-eval's ``replace_nans_with_zeros`` do); their number is ``options["n_undefined"]``.

    ``nan_policy="omit"`` drops NaN cells (per group for "item"/"system"). ``**method_kwargs`` go to the statistic
    (e.g. ``metric_ties=``, ``threshold=`` for ``kendall_like``; ``variant=`` for ``kendall``).
    ``n`` is the number of cells (``"none"``) or of groups that contributed (otherwise).
    """
    fn = _method(method)
    check_choice("average_by", average_by, ("none", "item", "system"))
    check_choice("aggregate", aggregate, ("mean", "pooled"))
    check_choice("undefined", undefined, ("skip", "zero"))
    m, h, n_omitted = paired(metric, human, nan_policy=nan_policy, names=("metric", "human"), ndim=2)
    base: dict[str, Any] = {"average_by": average_by, "aggregate": aggregate, "undefined": undefined,
                            "nan_policy": nan_policy, "n_omitted": n_omitted, "shape": tuple(m.shape),
                            **method_kwargs}
    if average_by == "none":
        if aggregate != "mean":
            raise InputError("aggregate='pooled' only applies with average_by='item' or 'system'")
        r = fn(m.ravel(), h.ravel(), nan_policy=nan_policy, **method_kwargs)
        opts = {**r.options, **base}
        return CorrelationResult(r.statistic, r.pvalue, r.n, method, opts)
    if aggregate == "pooled" and method not in _POOLABLE:
        raise InputError(f"aggregate='pooled' needs a pairwise method ({', '.join(_POOLABLE)}); got {method!r}")
    groups = m.T if average_by == "item" else m
    hgroups = h.T if average_by == "item" else h
    vals: list[float] = []
    n_undefined = 0
    conc = disc = 0.0
    tie_counts: dict[str, int] = {}
    for mg, hg in zip(groups, hgroups):
        ok = ~(np.isnan(mg) | np.isnan(hg))
        if ok.sum() < 2:
            n_undefined += 1
            if undefined == "zero":
                vals.append(0.0)
            continue
        r = fn(mg[ok], hg[ok], **method_kwargs)
        for key in ("metric_tie_pairs", "human_ordered_pairs"):  # tie counts over every group (kendall_like)
            if key in r.options:
                tie_counts[key] = tie_counts.get(key, 0) + int(r.options[key])
        if aggregate == "pooled":
            if method == "pairwise_accuracy":
                conc += r.options["correct"]
                disc += r.options["total"] - r.options["correct"]
            else:
                conc += r.options["concordant"]
                disc += r.options["discordant"]
        if math.isnan(r.statistic):
            n_undefined += 1
            if undefined == "zero":
                vals.append(0.0)
            continue
        vals.append(r.statistic)
    opts = {**base, "n_groups": len(groups), "n_undefined": n_undefined, "flags": [], **tie_counts}
    if aggregate == "pooled":
        total = conc + disc
        if method == "pairwise_accuracy":
            opts.update(correct=conc, total=total)
            stat = conc / total if total else float("nan")
        else:
            opts.update(concordant=conc, discordant=disc, n_pairs=total)
            stat = (conc - disc) / total if total else float("nan")
        n_used = len(groups) - n_undefined
    else:
        stat = float(np.mean(vals)) if vals else float("nan")
        n_used = len(vals)
    if math.isnan(stat):
        opts["flags"].append("undefined")
        opts["note"] = f"the statistic is undefined for all {len(groups)} groups"
    return CorrelationResult(float(stat), None, int(n_used), method, opts)


class SegmentStatistic:
    """:func:`segment_level` with its options fixed, as a function of (metric, human) ``(n_systems, n_items)``
    matrices: ``SegmentStatistic("kendall_like", average_by="item")(m, h)`` is ``segment_level(m, h,
    method="kendall_like", average_by="item")``.

    Given as ``fn`` to :func:`bootstrap_correlation_ci` (``unit="item"``, ``average_by="item"``) or to
    :func:`~styleval.stats.significance.permutation_test_correlation_difference`, a pairwise method
    (``kendall_like``, ``pairwise_accuracy``) averaged or pooled per item or system is computed for every resample
    at once from pair kinds classified once (:mod:`styleval.stats.grouped`): the same figures, bit for bit, as
    calling it once per resample, which is what every other statistic gets.
    """

    def __init__(self, method: str, *, average_by: str = "none", aggregate: str = "mean", undefined: str = "skip",
                 nan_policy: str = "raise", **method_kwargs: Any) -> None:
        self.method = method
        self.options: dict[str, Any] = {"average_by": average_by, "aggregate": aggregate, "undefined": undefined,
                                        "nan_policy": nan_policy}
        self.method_kwargs = dict(method_kwargs)
        rule = PairRule.of(method, method_kwargs)
        self.grouped = GroupedPairs(rule, average_by, aggregate, undefined) if (
            rule is not None and average_by in ("item", "system") and aggregate in ("mean", "pooled")
            and undefined in ("skip", "zero")) else None

    def __call__(self, metric: Any, human: Any) -> CorrelationResult:
        return segment_level(metric, human, method=self.method, **self.options, **self.method_kwargs)

    def __repr__(self) -> str:
        options = {**self.options, **self.method_kwargs}
        return f"SegmentStatistic({self.method!r}, {', '.join(f'{k}={v!r}' for k, v in options.items())})"


def system_level(metric_by_system: Any, human_by_system: Any, *, method: str = "pearson",
                 nan_policy: str = "raise", **method_kwargs: Any) -> CorrelationResult:
    """Correlation between per-system scores (1-D, one value per system).

    With two systems Pearson/Spearman/Kendall are always +-1: allowed, with ``"n<3"`` in ``options["flags"]``.
    """
    fn = _method(method)
    m = as_float_array(metric_by_system, "metric_by_system", ndim=1)
    h = as_float_array(human_by_system, "human_by_system", ndim=1)
    r = fn(m, h, nan_policy=nan_policy, **method_kwargs)
    opts = {**r.options, "level": "system", **method_kwargs}
    return CorrelationResult(r.statistic, r.pvalue, r.n, method, opts)


# --------------------------------------------------------------------------------------------------------------
# resampling and subsets
# --------------------------------------------------------------------------------------------------------------

def _as_float(value: Any) -> float:
    if isinstance(value, CorrelationResult):
        return float(value.statistic)
    if isinstance(value, tuple):  # scipy-style (statistic, pvalue)
        return float(value[0])
    return float(value)


def bootstrap_correlation_ci(metric: Any, human: Any, fn: Callable[[np.ndarray, np.ndarray], Any], *,
                             n_resamples: int = 1000, confidence: float = 0.95, seed: int | None = 0,
                             unit: str = "item", nan_policy: str = "raise") -> ConfidenceInterval:
    """Percentile bootstrap CI for ``fn(metric, human)``.

    ``fn`` returns a float, a :class:`CorrelationResult` or a scipy-style ``(statistic, pvalue)`` tuple. For 1-D
    input positions are resampled. For 2-D ``(n_systems, n_items)`` input, ``unit="item"`` resamples whole columns
    (items keep all their systems, so ``fn`` gets 2-D arrays -- use e.g.
    ``lambda m, h: segment_level(m, h, method=..., average_by="item")``); ``unit="cell"`` flattens and resamples
    cells (``fn`` gets 1-D arrays). Resamples where ``fn`` is NaN are left out (``n_valid`` says how many counted).
    Indices are drawn at once from ``np.random.default_rng(seed)``. With ``nan_policy="omit"`` NaN positions are
    dropped from 1-D input up front; 2-D input is passed on as is (``fn`` must handle NaN cells).
    """
    check_choice("unit", unit, ("item", "cell"))
    _check_resampling(n_resamples, confidence)
    m, h, _ = paired(metric, human, nan_policy=nan_policy, names=("metric", "human"), ndim=(1, 2))
    if m.ndim == 2 and unit == "cell":
        m, h = m.ravel(), h.ravel()
    size = m.shape[-1]
    if size < 2:
        raise InputError(f"need at least 2 {'items' if m.ndim == 2 else 'points'} to bootstrap; got {size}")
    observed = _as_float(fn(m, h))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, size, size=(n_resamples, size))
    fast = fn.grouped if isinstance(fn, SegmentStatistic) and m.ndim == 2 else None
    resampled = fast.bootstrap_items(m, h, idx) if fast is not None else None
    if resampled is not None:  # every resample at once, the same figures as the loop below
        stats = resampled
    else:
        stats = np.empty(n_resamples)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in range(n_resamples):
                sel = idx[r]
                try:
                    stats[r] = _as_float(fn(m[..., sel], h[..., sel]))
                except InputError:
                    stats[r] = np.nan
    low, high, mean, n_valid = percentile_interval(stats, confidence)
    return ConfidenceInterval(low, high, mean, observed, confidence, n_resamples, n_valid,
                              {"unit": unit if np.ndim(metric) == 2 else "point", "seed": seed,
                               "method": "percentile", "shape": tuple(np.shape(metric))})


def _check_resampling(n_resamples: int, confidence: float) -> None:
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise InputError(f"n_resamples must be a positive integer; got {n_resamples!r}")
    if not (0.0 < confidence < 1.0):
        raise InputError(f"confidence must be strictly between 0 and 1; got {confidence!r}")


def top_n_correlations(metric_by_system: Any, human_by_system: Any, *, method: str = "pearson", min_n: int = 3,
                       **method_kwargs: Any) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """System-level correlation over the best and the worst systems.

    Systems are sorted by human score, descending (stable for ties). Returns ``(top, last)``: ``top`` lists
    ``(N, statistic)`` for the N best systems and ``last`` for the N worst, for ``N = min_n .. n_systems``.
    Statistics can be NaN (e.g. constant scores among the N).
    """
    fn = _method(method)
    m = as_float_array(metric_by_system, "metric_by_system", ndim=1)
    h = as_float_array(human_by_system, "human_by_system", ndim=1)
    m, h, _ = paired(m, h, names=("metric_by_system", "human_by_system"))
    if not isinstance(min_n, (int, np.integer)) or min_n < 2:
        raise InputError(f"min_n must be an integer >= 2; got {min_n!r}")
    k = len(h)
    if k < min_n:
        raise InputError(f"top_n_correlations needs at least min_n={min_n} systems; got {k}")
    order = np.argsort(-h, kind="stable")
    top, last = [], []
    for n in range(min_n, k + 1):
        t, b = order[:n], order[k - n:]
        top.append((n, float(fn(m[t], h[t], **method_kwargs).statistic)))
        last.append((n, float(fn(m[b], h[b], **method_kwargs).statistic)))
    return top, last


def orient(scores: Any, higher_is_better: bool | None = None, *, lower_is_better: bool | None = None) -> np.ndarray:
    """Return ``scores`` as floats, negated when lower is better, so that higher always means better.

    Give ``higher_is_better`` (positional or keyword) or, equivalently, ``lower_is_better=`` (keyword only).
    Orienting first and then correlating is the same as reporting ``|r|`` for a lower-is-better metric only when
    the correlation comes out negative; Lai et al. (2022) negated WMD and perplexity before correlating
    (``-line['sys'][model][metric]``), which is this function.
    """
    if higher_is_better is None and lower_is_better is None:
        raise InputError("orient needs higher_is_better (or lower_is_better=)")
    if higher_is_better is not None and lower_is_better is not None and bool(higher_is_better) == bool(lower_is_better):
        raise InputError("orient: higher_is_better and lower_is_better contradict each other")
    lower = bool(lower_is_better) if lower_is_better is not None else not bool(higher_is_better)
    arr = as_float_array(scores, "scores")
    return -arr if lower else arr.copy()

