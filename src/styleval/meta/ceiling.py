"""The humans' own reliability on a meta-evaluation task: the ceiling of any metric's figure, one rater against the
rest, and the metrics' figures on items where the raters agree and where they do not.

Everything follows the task's convention: its aspect, direction, systems, human aggregation (raw scores or
per-annotator z-scores) and statistic (:func:`~styleval.meta.evaluate.statistic_function`), so a ceiling sits on the
same scale as the metrics' figures beside it. The statistics are :mod:`styleval.stats.reliability`'s.

Agreement strata (:func:`agreement_strata`) -- the bin rule, fixed: a cell's disagreement is the standard deviation
(ddof 0) of its ratings (for two raters, half their difference); the unit the task's statistic averages over is
stratified: an input (its cells' mean disagreement) for per-input statistics, a cell for pooled ones, a cell within
its system for per-system ones. Units judged by two raters or more are sorted by disagreement; those at or below the
median form the ``agree`` stratum, the others ``disagree``. Units with one rater are in neither (counted).
System-level tasks have no strata (their points are systems, each judged over every input).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from styleval.errors import InputError
from styleval.stats import correlation as stats_correlation
from styleval.stats import reliability as rel

from .aggregate import standardise
from .evaluate import MetaResult, MetaTask, _filter, paired_matrices, statistic_function
from .judgments import Judgments

ASSUMPTION = ("the human mean is a true score plus rater noise independent of it and of any metric; a metric can at "
              "best equal the true score, so its figure cannot exceed the square root of the mean's reliability "
              "(split-half, Spearman-Brown to the full number of raters)")
RANK_ASSUMPTION = ("; the halves are compared with Pearson's r at the task's level and grouping (within inputs for a "
                   "per-input statistic) and the ceiling is carried to the task's statistic under bivariate normality "
                   "(Kendall: tau = 2/pi asin(r); Spearman: rho = 6/pi asin(r/2); pairwise accuracy as (1 + tau) / 2)")
PAIRWISE_ASSUMPTION = ("; the halves are compared with Pearson's r within inputs, and the ceiling is the expected "
                       "figure of the true score on the very pairs the convention counts (human ties skipped), its "
                       "true difference normal around reliability x the human difference")
SINGLE = "one score per item (the set releases means or a single rating): the raters' agreement is unknown, no ceiling"


@dataclass(frozen=True)
class RatingCube:
    """A task's ratings as a ``(systems, segments, raters)`` cube (NaN: not rated), with the labels of each axis."""

    cube: np.ndarray
    systems: list[str]
    segments: list[str]
    raters: list[str]

    @property
    def per_cell(self) -> np.ndarray:
        return rel.raters_per_cell(self.cube)


def rating_cube(task: MetaTask, judgments: Judgments) -> RatingCube:
    """The ratings a task's human mean is made of: its aspect, direction and systems, raw scores or per-annotator
    z-scores (standardised over every system, as :func:`~styleval.meta.aggregate.z_scores` does)."""
    frame = standardise(judgments, ddof=task.ddof) if task.human == "z" else judgments.frame
    frame = frame[frame["aspect"] == task.aspect]
    if frame.empty:
        raise InputError(f"no judgments for aspect {task.aspect!r}", judgments.source)
    frame = _filter(task, frame)
    if frame.empty:
        raise InputError(f"no judgments left for task {task.name}", judgments.source)
    value = "z" if task.human == "z" else "score"
    systems = sorted(frame["system"].unique())
    segments = sorted(frame["segment"].unique())
    raters = sorted(frame["annotator"].unique())
    cube = np.full((len(systems), len(segments), len(raters)), np.nan)
    s = pd.Index(systems).get_indexer(frame["system"])
    g = pd.Index(segments).get_indexer(frame["segment"])
    r = pd.Index(raters).get_indexer(frame["annotator"])
    cube[s, g, r] = frame[value].to_numpy(float)
    return RatingCube(cube, systems, segments, raters)


@dataclass
class TaskCeiling:
    """A task's human ceiling: split-half reliability and the ceiling it implies, one rater against the rest (each
    with an interval), or why there is none (``single``: one score per item)."""

    task: MetaTask
    single: bool
    result: rel.Reliability | None = None
    raters: list[str] = field(default_factory=list)
    n_cells: int = 0
    n_cells_single: int = 0  # cells with one rating, left out of the split halves
    mean_raters: float = math.nan
    notes: list[str] = field(default_factory=list)

    @property
    def ceiling(self) -> float:
        return math.nan if self.result is None else float(self.result.ceiling)

    @property
    def one_rater(self) -> float:
        return math.nan if self.result is None else float(self.result.one_rater)

    def interval(self, name: str) -> tuple[float, float]:
        ci = None if self.result is None else self.result.cis.get(name)
        return (math.nan, math.nan) if ci is None else (float(ci.low), float(ci.high))

    def share(self, figure: float) -> float:
        """A metric's figure as a share of the ceiling (NaN when the ceiling is undefined or not positive)."""
        c = self.ceiling
        return figure / c if c > 0 and not math.isnan(figure) else math.nan

    @property
    def assumption(self) -> str:
        if self.task.method == "pearson":
            return ASSUMPTION
        return ASSUMPTION + (PAIRWISE_ASSUMPTION if uses_pairwise_ceiling(self.task) else RANK_ASSUMPTION)

    def to_dict(self) -> dict[str, Any]:
        if self.single or self.result is None:
            return {"task": self.task.name, "available": False, "why": SINGLE if self.single else "; ".join(self.notes),
                    "notes": self.notes}
        r = self.result

        def clean(x: float) -> float | None:
            return None if x is None or math.isnan(x) else float(x)

        figures = {"half": r.half, "reliability": r.reliability, "ceiling": r.ceiling, "one_rater": r.one_rater}
        return {"task": self.task.name, "available": True, "method": r.method,
                **{k: clean(v) for k, v in figures.items()},
                "ci": {k: [clean(ci.low), clean(ci.high)] for k, ci in r.cis.items()},
                "confidence": next(iter(r.cis.values())).confidence if r.cis else None,
                "raters": [{"rater": self.raters[p.rater], "statistic": clean(p.statistic), "n_cells": p.n_cells,
                            **({"note": p.note} if p.note else {})} for p in r.raters],
                "n_cells": self.n_cells, "n_cells_one_rater": self.n_cells_single,
                "mean_raters_per_cell": self.mean_raters, "assumption": self.assumption,
                "split_half": {"n_splits": r.options["n_splits"], "seed": r.options["seed"],
                               "halves": "floor(k/2) and ceil(k/2) raters of each cell, both roles",
                               "spearman_brown_factor": 2},
                "one_rater_mean": "each rater against the mean of the others on its cells; mean weighted by cells",
                "notes": self.notes}

    def describe(self, digits: int = 3) -> list[str]:
        """Lines for a terminal: the ceiling, one rater, their intervals and the assumption."""
        if self.single or self.result is None:
            return [f"human ceiling: none: {SINGLE if self.single else '; '.join(self.notes)}"]
        r = self.result

        def num(x: float) -> str:
            return "nan" if math.isnan(x) else f"{x:.{digits}f}"

        def ci(name: str) -> str:
            low, high = self.interval(name)
            figure = getattr(r, name)
            return "" if math.isnan(low) or math.isnan(figure) else f" [{num(low)}, {num(high)}]"

        lines = [f"human ceiling {num(r.ceiling)}{ci('ceiling')} (split-half {num(r.half)}{ci('half')}, reliability "
                 f"of the mean of {self.mean_raters:.2g} raters {num(r.reliability)}{ci('reliability')}); one rater "
                 f"vs the rest {num(r.one_rater)}{ci('one_rater')}",
                 f"  assumption: {self.assumption}"]
        lines += [f"  note: {n}" for n in self.notes]
        return lines


def uses_pairwise_ceiling(task: MetaTask) -> bool:
    """Whether the ceiling is the true score's expected figure on the convention's pairs (a segment-level pairwise
    statistic that skips human ties, averaged per group or pooled over every pair)."""
    return task.method in ("kendall_tau_like", "pairwise_accuracy") and task.human_ties == "skip" \
        and task.level == "segment" and not (task.average_by != "none" and task.aggregate == "pooled")


def half_comparison(task: MetaTask, human: np.ndarray | None = None) -> dict[str, Any]:
    """How the split halves are compared: Pearson's r at the task's level and grouping (within inputs for a per-input
    statistic, within systems for a per-system one, over system means at system level), since a pairwise tie rule
    written for a metric (a metric's tie on a pair the humans order is discordant) would count a rater's ties --
    frequent on a rating scale -- against the humans' own agreement; the ceiling is then carried to the task's
    statistic: for a pairwise statistic that skips human ties, as the expected figure of the true score on the pairs
    the convention counts (:func:`~styleval.stats.reliability.pairwise_ceiling`, from the ``human`` mean matrix),
    else under bivariate normality. Pearson tasks compare the halves with their own statistic."""
    ceiling_of = None
    if uses_pairwise_ceiling(task) and human is not None:
        ceiling_of = rel.pairwise_ceiling(human, average_by=task.average_by, threshold=task.threshold,
                                          tie_rule=task.tie_rule, accuracy=task.method == "pairwise_accuracy")
    if task.method == "pearson":
        return {}
    if task.level == "system":
        return {"halves": rel.Halves(statistic_function(task.with_(method="pearson")), "pearson")}
    return {"halves": rel.Halves(rel.within_pearson(task.average_by), "pearson", ceiling_of)}


def task_ceiling(task: MetaTask, judgments: Judgments, *, n_splits: int = 20, ci: int = 200,
                 confidence: float = 0.95, seed: int | None = 0) -> TaskCeiling:
    """The human ceiling of ``task`` on ``judgments``, with ``ci`` bootstrap resamples of inputs (0: none)."""
    ratings = rating_cube(task, judgments)
    k = ratings.per_cell
    rated = k > 0
    out = TaskCeiling(task, single=bool(k.max() < 2), raters=ratings.raters, n_cells=int(rated.sum()),
                      n_cells_single=int((k == 1).sum()), mean_raters=float(k[rated].mean()))
    if out.single:
        return out
    if out.n_cells_single:
        out.notes.append(f"{out.n_cells_single} of {out.n_cells} judged cells have one rating: left out of the split "
                         "halves (they cannot be split), kept in one rater's figure only where others rated too")
    result = rel.reliability(ratings.cube, statistic_function(task), task.method, n_splits=n_splits,
                             n_resamples=ci if ratings.cube.shape[1] >= 2 else 0, confidence=confidence, seed=seed,
                             **half_comparison(task, rel.human_mean(ratings.cube)))
    out.result = result
    if math.isnan(result.half):
        out.notes.append("the split halves' figure is undefined (constant or fully tied half means)")
    elif math.isnan(result.ceiling):
        out.notes.append(f"the two halves do not agree (split-half {result.half:.3f} <= 0): no reliability, no ceiling")
    low, high = out.interval("ceiling")
    if not math.isnan(result.ceiling) and not low <= result.ceiling <= high:
        out.notes.append("the ceiling lies outside its percentile interval: inputs drawn twice in a resample make "
                         "means over inputs less reliable, so resampled ceilings sit low (read the interval's width)")
    for p in result.raters:
        if p.note:
            out.notes.append(f"rater {ratings.raters[p.rater]}: {p.note}: no figure")
    return out


# ------------------------------------------------------------------------------------------------ strata
STRATA = ("agree", "disagree")
BIN_RULE = ("a cell's disagreement is the standard deviation (ddof 0) of its ratings; per-input statistics "
            "stratify inputs by their cells' mean disagreement, other segment-level statistics stratify cells; "
            "units at or below the median disagreement are 'agree', the others 'disagree'; units with one rating "
            "are in neither")


@dataclass
class Strata:
    """Each metric's figure on the ``agree`` and ``disagree`` strata of a task, with intervals and ranks."""

    task: MetaTask
    unit: str  # "input" or "cell"
    sizes: dict[str, int]  # units per stratum
    threshold: float  # the median disagreement
    figures: dict[str, dict[str, tuple[float, float, float, int]]]  # metric -> stratum -> (figure, low, high, n)
    ranks: dict[str, dict[str, int]]  # metric -> stratum -> rank by figure (1 = best)
    n_single: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def rank_changes(self) -> list[str]:
        """The metrics whose rank among the others differs between the strata."""
        return [m for m, r in self.ranks.items() if len(set(r.values())) > 1]

    def to_dict(self) -> dict[str, Any]:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {"task": self.task.name, "unit": self.unit, "rule": BIN_RULE,
                "median_disagreement": clean(self.threshold),
                "sizes": self.sizes, "units_with_one_rating": self.n_single,
                "metrics": {m: {s: {"statistic": clean(f), "ci": [clean(lo), clean(hi)], "n": n,
                                    "rank": self.ranks[m].get(s)} for s, (f, lo, hi, n) in per.items()}
                            for m, per in self.figures.items()},
                "rank_changes": self.rank_changes, "notes": self.notes}

    def describe(self, digits: int = 3) -> list[str]:
        def num(x: float) -> str:
            return "nan" if math.isnan(x) else f"{x:.{digits}f}"

        lines = [f"agreement strata ({self.unit}s; median rater spread {num(self.threshold)}; agree: "
                 f"{self.sizes['agree']}, disagree: {self.sizes['disagree']}"
                 + (f", {self.n_single} with one rating left out" if self.n_single else "")
                 + "; #rank by figure, RANK CHANGES: a swap between strata, significant only where the intervals "
                   "part):"]
        order = sorted(self.figures, key=lambda m: self.ranks[m].get("agree", 10 ** 6))
        for m in order:
            cells = []
            for s in STRATA:
                f, lo, hi, _ = self.figures[m][s]
                ci = "" if math.isnan(lo) else f" [{num(lo)}, {num(hi)}]"
                cells.append(f"{s} {num(f)}{ci} #{self.ranks[m].get(s, '-')}")
            flag = "  RANK CHANGES" if m in self.rank_changes else ""
            lines.append(f"  {m}: " + "; ".join(cells) + flag)
        lines += [f"  note: {n}" for n in self.notes]
        return lines


def _units(task: MetaTask, ratings: RatingCube) -> tuple[str, pd.DataFrame]:
    """(unit kind, a table of units: system (cells only), segment, disagreement) for the task's statistic."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        spread = np.where(ratings.per_cell >= 2, np.nanstd(ratings.cube, axis=2), np.nan)
        if task.average_by == "item":
            per_item = np.nanmean(spread, axis=0)
            return "input", pd.DataFrame({"segment": ratings.segments, "disagreement": per_item})
    s, g = np.meshgrid(np.arange(len(ratings.systems)), np.arange(len(ratings.segments)), indexing="ij")
    rated = ratings.per_cell.ravel() > 0
    return "cell", pd.DataFrame({"system": np.asarray(ratings.systems)[s.ravel()][rated],
                                 "segment": np.asarray(ratings.segments)[g.ravel()][rated],
                                 "disagreement": spread.ravel()[rated]})


def agreement_strata(result: MetaResult, judgments: Judgments, *, ci: int = 200, confidence: float = 0.95,
                     seed: int | None = 0) -> Strata:
    """Every metric of ``result`` on the task's agree and disagree strata (the bin rule: :data:`BIN_RULE`)."""
    return strata_of(result.task, result.oriented, judgments, ci=ci, confidence=confidence, seed=seed)


def strata_of(task: MetaTask, oriented: dict[str, pd.DataFrame], judgments: Judgments, *, ci: int = 200,
              confidence: float = 0.95, seed: int | None = 0) -> Strata:
    """:func:`agreement_strata` from each metric's rows (:attr:`MetaResult.oriented`, which may come from several
    results of the same task)."""
    if task.level != "segment":
        raise InputError("agreement strata split inputs or cells: a system-level task has none (use its "
                         "segment-level task)")
    ratings = rating_cube(task, judgments)
    if ratings.per_cell.max() < 2:
        raise InputError(f"task {task.aspect} {task.level}: {SINGLE}; no agreement strata either")
    unit, units = _units(task, ratings)
    known = units[units["disagreement"].notna()]
    threshold = float(known["disagreement"].median())
    keys = ["segment"] if unit == "input" else ["system", "segment"]
    members = {"agree": known.loc[known["disagreement"] <= threshold, keys],
               "disagree": known.loc[known["disagreement"] > threshold, keys]}
    out = Strata(task, unit, {s: len(members[s]) for s in STRATA}, threshold, {}, {},
                 n_single=int(units["disagreement"].isna().sum()))
    if not len(members["disagree"]):
        out.notes.append("every unit has the same rater spread (ties everywhere): one stratum only")
    fn = statistic_function(task)
    for metric, frame in oriented.items():
        out.figures[metric] = {}
        for stratum in STRATA:
            part = frame.merge(members[stratum], on=keys)
            out.figures[metric][stratum] = _stratum_figure(task, fn, part, ci, confidence, seed)
    for stratum in STRATA:
        order = sorted((m for m in out.figures if not math.isnan(out.figures[m][stratum][0])),
                       key=lambda m: -out.figures[m][stratum][0])
        for rank, m in enumerate(order, start=1):
            out.ranks.setdefault(m, {})[stratum] = rank
    for m in out.figures:
        out.ranks.setdefault(m, {})
    return out


def _stratum_figure(task: MetaTask, fn: Any, part: pd.DataFrame, ci: int, confidence: float,
                    seed: int | None) -> tuple[float, float, float, int]:
    if part.empty:
        return math.nan, math.nan, math.nan, 0
    m, _, h = paired_matrices(task, part, part)
    n = int((~(np.isnan(m) | np.isnan(h))).sum())
    try:
        figure = float(fn(m, h).statistic)
    except InputError:
        return math.nan, math.nan, math.nan, n
    low = high = math.nan
    if ci and m.shape[1] >= 2:
        interval = stats_correlation.bootstrap_correlation_ci(m, h, fn, n_resamples=ci, confidence=confidence,
                                                              seed=seed, unit="item", nan_policy="omit")
        low, high = float(interval.low), float(interval.high)
    return figure, low, high, n
