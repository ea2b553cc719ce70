"""Pairwise statistics per group (Kendall tau-like, pairwise accuracy) under resampling, vectorised.

:func:`styleval.stats.correlation.segment_level` with ``average_by="item"`` or ``"system"`` counts, in each group,
the pairs of its cells by kind. A bootstrap over items or a paired permutation test used to call it once per
resample (tens of milliseconds for Lai et al.'s 80 inputs x 8 systems). Here each pair's kind is classified once:

* bootstrap over items with ``average_by="item"``: a resampled column is a copy of one column, so the counts of each
  group are computed once and a resample gathers them;
* paired permutation test: every cell takes its metric value from metric A or from metric B, so the kind of a pair
  depends only on which of the two each of its two cells takes; the kinds of the four combinations are classified
  once and a permutation picks one per pair.

Per group the counts become a figure with the same floating-point operations as
:func:`~styleval.stats.correlation.kendall_tau_like` (counts are whole or half numbers, so sums are exact), and the
groups' figures are averaged in the same order with the same ``np.mean``, so every resample's statistic is the
scalar path's bit for bit (``tests/test_stats_grouped.py`` checks it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

#: pair kinds: neither a human nor a metric tie (the metric agrees / disagrees), a metric tie on a pair the humans
#: order, a human tie the metric ties too, a human tie the metric orders
AGREE, DISAGREE, METRIC_TIE, HUMAN_TIE_METRIC_TIE, HUMAN_TIE = range(5)
N_KINDS = 5
#: above this many pairs the precomputed kinds (4 bytes a pair) are not worth it: callers take the scalar path
MAX_PAIRS = 5_000_000
#: (resample, pair) entries classified at once
BLOCK_ENTRIES = 2_000_000

_TAU_KEYS = {"threshold", "tie_rule", "human_ties", "metric_ties", "metric_epsilon"}
_ACCURACY_KEYS = {"threshold", "tie_rule", "ties", "metric_epsilon"}


@dataclass(frozen=True)
class PairRule:
    """How one pair counts: tau-like ``(C - D) / (C + D)`` or, with ``accuracy``, ``C / (C + D)``, with the tie
    options of :func:`~styleval.stats.correlation.kendall_tau_like`."""

    accuracy: bool = False
    human_ties: str = "skip"
    metric_ties: str = "discordant"
    threshold: float = 0.0
    tie_rule: str = "le"
    metric_epsilon: float = 0.0

    @classmethod
    def of(cls, method: str, kwargs: Mapping[str, Any]) -> "PairRule | None":
        """The rule of a pairwise ``method`` with its keyword arguments; None for any other method or for options
        this module does not reproduce (the caller then takes the scalar path, which checks them)."""
        threshold, epsilon = kwargs.get("threshold", 0.0), kwargs.get("metric_epsilon", 0.0)
        if not all(isinstance(x, (int, float, np.integer, np.floating)) for x in (threshold, epsilon)):
            return None
        if method in ("kendall_like", "kendall_tau_like") and set(kwargs) <= _TAU_KEYS:
            rule = cls(False, kwargs.get("human_ties", "skip"), kwargs.get("metric_ties", "discordant"),
                       float(threshold), kwargs.get("tie_rule", "le"), float(epsilon))
        elif method == "pairwise_accuracy" and set(kwargs) <= _ACCURACY_KEYS:
            rule = cls(True, kwargs.get("ties", "match"), "discordant", float(threshold), kwargs.get("tie_rule", "le"),
                       float(epsilon))
        else:
            return None
        valid = (rule.human_ties in ("skip", "match") and rule.tie_rule in ("le", "lt")
                 and rule.metric_ties in ("discordant", "concordant", "skip", "half")
                 and rule.threshold >= 0 and rule.metric_epsilon >= 0)
        return rule if valid else None

    def kinds(self, m_i: np.ndarray, m_j: np.ndarray, h_i: np.ndarray, h_j: np.ndarray) -> np.ndarray:
        """The kind of each pair (i, j), with the comparisons of ``correlation._pair_counts``."""
        dh = h_i - h_j
        dm = m_i - m_j
        adh = np.abs(dh)
        htie = (dh == 0) | ((adh <= self.threshold) if self.tie_rule == "le" else (adh < self.threshold))
        mtie = np.abs(dm) <= self.metric_epsilon
        agree = (np.sign(dh) * np.sign(dm)) > 0
        ordered = np.where(mtie, METRIC_TIE, np.where(agree, AGREE, DISAGREE))
        return np.where(htie, np.where(mtie, HUMAN_TIE_METRIC_TIE, HUMAN_TIE), ordered).astype(np.int8)

    def concordance(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """C and D from counts of shape ``(..., N_KINDS)``, as ``correlation._tau_like_from_counts``."""
        conc = counts[..., AGREE].astype(float)
        disc = counts[..., DISAGREE].astype(float)
        if self.human_ties == "match":  # a human tie is concordant iff the metric ties too
            conc = conc + counts[..., HUMAN_TIE_METRIC_TIE]
            disc = disc + counts[..., HUMAN_TIE]
        mt = counts[..., METRIC_TIE]
        if self.metric_ties == "discordant":
            disc = disc + mt
        elif self.metric_ties == "concordant":
            conc = conc + mt
        elif self.metric_ties == "half":
            conc = conc + mt / 2
            disc = disc + mt / 2
        return conc, disc

    def figure(self, conc: np.ndarray, disc: np.ndarray) -> np.ndarray:
        """The statistic from C and D; NaN where no pair counts."""
        total = conc + disc
        with np.errstate(invalid="ignore", divide="ignore"):
            stat = conc / total if self.accuracy else (conc - disc) / total
        return np.where(total == 0, np.nan, stat)


@dataclass(frozen=True)
class Pairs:
    """The pairs ``i < j`` of usable cells within each group: flat cell indices and the group of each pair."""

    first: np.ndarray
    second: np.ndarray
    group: np.ndarray
    n_groups: int

    @classmethod
    def of(cls, usable: np.ndarray, average_by: str) -> "Pairs":
        """Pairs of a ``(n_systems, n_items)`` mask of usable cells, grouped by item (column) or system (row)."""
        cells = np.arange(usable.size).reshape(usable.shape)
        groups = (cells.T, usable.T) if average_by == "item" else (cells, usable)
        first, second, group = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for g, (row, ok) in enumerate(zip(*groups)):
            kept = row[ok]
            i, j = np.triu_indices(len(kept), 1)
            first.append(kept[i])
            second.append(kept[j])
            group.append(np.full(len(i), g))
        return cls(np.concatenate(first).astype(np.int64), np.concatenate(second).astype(np.int64),
                   np.concatenate(group).astype(np.int64), len(groups[0]))

    def __len__(self) -> int:
        return len(self.first)

    def counts(self, kinds: np.ndarray) -> np.ndarray:
        """Counts per resample, group and kind, shape ``(n_resamples, n_groups, N_KINDS)``, of ``kinds`` of shape
        ``(n_resamples, n_pairs)``."""
        rows = kinds.shape[0]
        key = (np.arange(rows)[:, None] * self.n_groups + self.group[None, :]) * N_KINDS + kinds
        flat = np.bincount(key.ravel(), minlength=rows * self.n_groups * N_KINDS)
        return flat.reshape(rows, self.n_groups, N_KINDS)


@dataclass(frozen=True)
class GroupedPairs:
    """A pairwise statistic per group combined over groups: :func:`segment_level`'s ``average_by`` (item or
    system), ``aggregate`` (mean or pooled) and ``undefined`` (skip or zero), with the ``rule`` of each pair."""

    rule: PairRule
    average_by: str
    aggregate: str = "mean"
    undefined: str = "skip"

    def combine(self, conc: np.ndarray, disc: np.ndarray) -> np.ndarray:
        """One statistic per resample from per-(resample, group) C and D (groups in ``segment_level``'s order)."""
        if self.aggregate == "pooled":  # sums of whole or half counts: exact in any order
            return self.rule.figure(conc.sum(axis=1), disc.sum(axis=1))
        per_group = self.rule.figure(conc, disc)
        out = np.empty(per_group.shape[0])
        for r, row in enumerate(per_group):
            undefined = np.isnan(row)
            vals = np.where(undefined, 0.0, row) if self.undefined == "zero" else row[~undefined]
            out[r] = float(np.mean(vals)) if len(vals) else np.nan
        return out

    def bootstrap_items(self, metric: np.ndarray, human: np.ndarray, idx: np.ndarray) -> np.ndarray | None:
        """The statistic of each resample of items ``idx`` (rows of column indices) of 2-D ``metric``/``human``;
        None where this shortcut does not apply (grouping by system, too many pairs)."""
        if self.average_by != "item" or metric.ndim != 2:
            return None
        usable = ~(np.isnan(metric) | np.isnan(human))
        pairs = Pairs.of(usable, "item")
        if len(pairs) > MAX_PAIRS:
            return None
        m, h = metric.ravel(), human.ravel()
        kinds = self.rule.kinds(m[pairs.first], m[pairs.second], h[pairs.first], h[pairs.second])
        conc, disc = self.rule.concordance(pairs.counts(kinds[None, :])[0])  # per item
        return self.combine(conc[idx], disc[idx])

    def permuted_deltas(self, a: np.ndarray, b: np.ndarray, human: np.ndarray, swapped: np.ndarray
                        ) -> np.ndarray | None:
        """``stat(A*, h) - stat(B*, h)`` for each row of ``swapped`` (``(n_resamples,) + a.shape`` booleans: True
        where A* takes B's score and B* takes A's); None where this shortcut does not apply (A and B missing on
        different cells, too many pairs)."""
        if a.ndim != 2 or not np.array_equal(np.isnan(a), np.isnan(b)):
            return None
        pairs = Pairs.of(~(np.isnan(a) | np.isnan(human)), self.average_by)
        if len(pairs) > MAX_PAIRS:
            return None
        sources = np.stack([a.ravel(), b.ravel()])
        h = human.ravel()
        h_i, h_j = h[pairs.first], h[pairs.second]
        # kinds[2 * s_i + s_j]: the kind when cell i takes metric s_i's score and cell j metric s_j's (0: A, 1: B)
        kinds = np.stack([self.rule.kinds(sources[s_i, pairs.first], sources[s_j, pairs.second], h_i, h_j)
                          for s_i in (0, 1) for s_j in (0, 1)])
        flat = swapped.reshape(len(swapped), -1)
        column = np.arange(len(pairs))[None, :]
        out = np.empty(len(swapped))
        rows = max(1, BLOCK_ENTRIES // max(len(pairs), 1))
        for start in range(0, len(swapped), rows):
            w = flat[start:start + rows].astype(np.int8)
            combo = 2 * w[:, pairs.first] + w[:, pairs.second]
            stat_a = self.combine(*self.rule.concordance(pairs.counts(kinds[combo, column])))
            stat_b = self.combine(*self.rule.concordance(pairs.counts(kinds[3 - combo, column])))
            out[start:start + len(w)] = stat_a - stat_b
        return out
