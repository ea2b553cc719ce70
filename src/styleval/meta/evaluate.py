"""Meta-evaluation as data: a :class:`MetaTask` names every choice, :func:`run` applies it.

Like mt-metrics-eval, a figure such as "BLEURT .610" is only meaningful with its conventions spelled out: which
aspect, system or segment level, which statistic, how per-item figures are averaged, how ties count, which
direction(s) and systems are in, how lower-is-better metrics are oriented and how annotators are aggregated.
``MetaTask.name`` spells all of them and ``MetaTask.from_name`` reads one back.

Inputs:

* the human side: :class:`~styleval.meta.judgments.Judgments` (aggregated per segment with ``task.human``), or an
  already aggregated segment table (system, segment, score[, direction]);
* the metric side: a metric table (system, segment, metric, score[, direction]).

Rows are matched on (system, segment) as strings. A metric row of a kept system without a human score is an error
(or, asked for, left out and counted); a human score without a metric score is left out and counted; a missing
(NaN) metric score is left out and counted. The statistics themselves come from :mod:`styleval.stats`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
import math
import warnings
from typing import Any, Callable, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from styleval.errors import InputError, check_choice
from styleval.progress import Progress
from styleval.records import Direction

from styleval.stats import correlation as stats_correlation
from styleval.stats import significance as _sig

from . import _stats
from . import scores as _scores
from .aggregate import segment_scores
from .judgments import Judgments, direction_column

LEVELS = ("system", "segment")
METHODS = ("pearson", "spearman", "kendall", "kendall_b", "kendall_c", "kendall_tau_like", "pairwise_accuracy")
_METHOD_ALIASES = {"kendall_like": "kendall_tau_like"}
AVERAGE_BY = ("none", "item", "system")
AGGREGATE = ("mean", "pooled")
UNDEFINED = ("skip", "zero")
PAIRWISE = ("kendall_tau_like", "pairwise_accuracy")
ORIENTATIONS = ("abs", "signed")
HUMAN = ("mean", "z")


@dataclass(frozen=True)
class MetaTask:
    """Every choice behind one meta-evaluation figure.

    aspect: the human aspect judged (``content``, ``style``...).
    level: ``"segment"`` (correlate per segment scores) or ``"system"`` (correlate per-system means over the
        segments both sides have).
    method: ``pearson``, ``spearman``, ``kendall`` (= ``kendall_b``, scipy's tau-b), ``kendall_c``,
        ``kendall_tau_like`` (WMT-style (concordant - discordant) / (concordant + discordant) over pairs;
        ``kendall_like`` is accepted as an alias), ``pairwise_accuracy``.
    average_by: segment level only. ``"none"``: one statistic over all (system, segment) pairs pooled;
        ``"item"``: one statistic per input over its systems, then combined over inputs; ``"system"``: one per
        system over its segments, then combined.
    aggregate: how per-group statistics are combined (average_by item/system): ``"mean"`` of the per-group
        statistics (every input weighs the same), or ``"pooled"`` (pairwise methods only: sum the concordant and
        discordant counts over groups, so every pair weighs the same).
    undefined: groups whose statistic is undefined (e.g. every human score tied) are ``"skip"``-ped or count as
        ``"zero"``.
    threshold, tie_rule, human_ties, metric_ties: pairwise methods only. A human difference ``|d| <= threshold``
        (``tie_rule="le"``) or ``< threshold`` (``"lt"``) is a tie; ``human_ties="skip"`` leaves those pairs out,
        ``"match"`` counts them correct iff the metric ties too. ``metric_ties`` (``kendall_tau_like`` only) says
        how a metric tie on a non-tied human pair counts: ``"discordant"`` (Lai et al. 2022, WMT17), ``"skip"``,
        ``"half"``, ``"concordant"``. For ``pairwise_accuracy`` ``human_ties`` is its ``ties`` argument (Lai et
        al.'s ``pair_acc`` is ``human_ties="match"``).
    direction: a ``source->target`` direction to keep, or ``"both"`` (pooled).
    orientation: ``"abs"``: lower-is-better metrics are negated before anything is computed, so every figure reads
        "positive = agrees with humans" (Lai et al. 2022 negate WMD and perplexity); ``"signed"``: scores as
        stored, so a distance correlates negatively (Mir et al. 2019 report WMD as -.457).
    systems: the systems in, or None for every system both sides have; exclude: systems taken out after that
        (``("ref",)`` for Lai et al.'s 8 systems).
    human: ``"mean"`` of the raw annotator scores, or ``"z"``: mean of per-annotator z-scores (``ddof`` 0 =
        population standard deviation; the standardisation uses all systems, including excluded ones).
    """

    aspect: str
    level: Literal["system", "segment"] = "segment"
    method: str = "pearson"
    average_by: Literal["none", "item", "system"] = "none"
    aggregate: Literal["mean", "pooled"] = "mean"
    undefined: Literal["skip", "zero"] = "skip"
    threshold: float = 0.0
    tie_rule: Literal["le", "lt"] = "le"
    human_ties: str = "skip"
    metric_ties: str = "discordant"
    direction: str = "both"
    orientation: Literal["abs", "signed"] = "abs"
    systems: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    human: Literal["mean", "z"] = "mean"
    ddof: int = 0

    def __post_init__(self) -> None:
        def bad(name: str, allowed: Sequence[str]) -> None:
            raise InputError(f"MetaTask.{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")

        object.__setattr__(self, "method", _METHOD_ALIASES.get(self.method, self.method))
        if self.level not in LEVELS:
            bad("level", LEVELS)
        if self.method not in METHODS:
            bad("method", METHODS)
        if self.average_by not in AVERAGE_BY:
            bad("average_by", AVERAGE_BY)
        if self.aggregate not in AGGREGATE:
            bad("aggregate", AGGREGATE)
        if self.undefined not in UNDEFINED:
            bad("undefined", UNDEFINED)
        if self.aggregate == "pooled" and self.method not in PAIRWISE:
            raise InputError("aggregate='pooled' needs a pairwise method (kendall_tau_like, pairwise_accuracy)")
        if self.tie_rule not in ("le", "lt"):
            bad("tie_rule", ("le", "lt"))
        if self.human_ties not in ("skip", "match"):
            bad("human_ties", ("skip", "match"))
        if self.metric_ties not in ("discordant", "concordant", "skip", "half"):
            bad("metric_ties", ("discordant", "concordant", "skip", "half"))
        if self.orientation not in ORIENTATIONS:
            bad("orientation", ORIENTATIONS)
        if self.human not in HUMAN:
            bad("human", HUMAN)
        if self.level == "system" and (self.average_by != "none" or self.aggregate != "mean"):
            raise InputError("average_by/aggregate apply to segment level only; use 'none'/'mean' at system level")
        if self.direction != "both":
            object.__setattr__(self, "direction", str(Direction.parse(self.direction)))
        if self.systems is not None:
            object.__setattr__(self, "systems", tuple(str(s) for s in self.systems))
        object.__setattr__(self, "exclude", tuple(str(s) for s in self.exclude))
        object.__setattr__(self, "threshold", float(self.threshold))

    # ----------------------------------------------------------------------------------------- naming
    @property
    def name(self) -> str:
        """Canonical ``key=value`` string with every choice, in field order, ``;``-separated."""
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "systems":
                text = "*" if value is None else ",".join(value)
            elif f.name == "exclude":
                text = ",".join(value) or "-"
            elif f.name == "threshold":
                text = f"{value:g}"
            else:
                text = str(value)
            parts.append(f"{f.name}={text}")
        return ";".join(parts)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def from_name(cls, name: str) -> "MetaTask":
        """Inverse of :attr:`name`."""
        kwargs: dict[str, Any] = {}
        known = {f.name for f in fields(cls)}
        for part in name.split(";"):
            key, sep, text = part.partition("=")
            if not sep or key not in known:
                raise InputError(f"bad MetaTask name component {part!r}")
            if key == "systems":
                kwargs[key] = None if text == "*" else tuple(text.split(","))
            elif key == "exclude":
                kwargs[key] = () if text == "-" else tuple(text.split(","))
            elif key == "threshold":
                kwargs[key] = float(text)
            elif key == "ddof":
                kwargs[key] = int(text)
            else:
                kwargs[key] = text
        return cls(**kwargs)

    def with_(self, **changes: Any) -> "MetaTask":
        return replace(self, **changes)

    @property
    def method_kwargs(self) -> dict[str, Any]:
        """The keyword arguments for the statistic itself (tie handling of the pairwise methods)."""
        if self.method == "kendall_tau_like":
            return {"threshold": self.threshold, "tie_rule": self.tie_rule, "human_ties": self.human_ties,
                    "metric_ties": self.metric_ties}
        if self.method == "pairwise_accuracy":
            return {"threshold": self.threshold, "tie_rule": self.tie_rule, "ties": self.human_ties}
        return {}

    @property
    def segment_kwargs(self) -> dict[str, Any]:
        """How per-group statistics are combined (segment level with average_by item/system)."""
        if self.level == "segment" and self.average_by != "none":
            return {"aggregate": self.aggregate, "undefined": self.undefined}
        return {}


@dataclass
class MetaResult:
    """The outcome of :func:`run`: the task, one CorrelationResult per metric, and what was used.

    ``options`` records the data behind the figures (systems, per-metric counts of points, dropped NaN scores,
    unmatched rows, whether a metric was negated) and the resampling choices. The optional parts are filled when
    :func:`run` is asked for them: ``cis`` (metric -> bootstrap :class:`~styleval.stats.ConfidenceInterval`),
    ``tests`` (metric -> comparison with the best metric: ``{"williams": {...}, "permutation": {...}}``) and
    ``curves`` (metric -> ``{"top": [(N, r)...], "last": [...]}``, system level only). ``notes`` holds a plain
    explanation for every figure that is undefined or degenerate (constant scores, all ties, two systems...).
    """

    task: MetaTask
    results: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    cis: dict[str, Any] = field(default_factory=dict)
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    curves: dict[str, dict[str, list[tuple[int, float]]]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    best: str | None = None
    #: metric -> the (system, segment, human, metric) rows behind its figure, lower-is-better already negated
    oriented: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def __getitem__(self, metric: str) -> Any:
        return self.results[metric]

    @property
    def metrics(self) -> list[str]:
        return list(self.results)

    def statistic(self, metric: str) -> float:
        return float(self.results[metric].statistic)

    def _choices(self) -> dict[str, Any]:
        choices = asdict(self.task)
        choices["systems"] = "*" if self.task.systems is None else ",".join(self.task.systems)
        choices["exclude"] = ",".join(self.task.exclude)
        return choices

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: metric, statistic, pvalue, n, [ci_low, ci_high,] [significance columns,] note,
        task (the canonical name), then every task field."""
        rows = []
        for metric, res in self.results.items():
            row: dict[str, Any] = {"metric": metric, "statistic": res.statistic, "pvalue": res.pvalue, "n": res.n}
            if self.cis:
                ci = self.cis.get(metric)
                row["ci_low"] = ci.low if ci is not None else np.nan
                row["ci_high"] = ci.high if ci is not None else np.nan
            if self.tests:
                row["best"] = metric == self.best
                for kind in ("williams", "permutation"):
                    if any(kind in t for t in self.tests.values()):
                        test = self.tests.get(metric, {}).get(kind, {})
                        row[f"{kind}_p"] = test.get("pvalue", np.nan)
            row["note"] = "; ".join(self.notes.get(metric, []))
            row["task"] = self.task.name
            row.update(self._choices())
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON-ready data (NaN becomes None)."""
        out: dict[str, Any] = {"task": self.task.name, "choices": self._choices(), "best": self.best,
                               "metrics": {}}
        for metric, res in self.results.items():
            entry: dict[str, Any] = {"statistic": _clean(res.statistic), "pvalue": _clean(res.pvalue), "n": res.n,
                                     "method": res.method, "options": _jsonable(res.options),
                                     "notes": self.notes.get(metric, [])}
            if metric in self.cis:
                ci = self.cis[metric]
                entry["ci"] = {"low": _clean(ci.low), "high": _clean(ci.high), "confidence": ci.confidence,
                               "n_resamples": ci.n_resamples, "n_valid": ci.n_valid, **_jsonable(ci.options)}
            if metric in self.tests:
                entry["vs_best"] = _jsonable(self.tests[metric])
            if metric in self.curves:
                entry["curves"] = {k: [[n, _clean(r)] for n, r in v] for k, v in self.curves[metric].items()}
            out["metrics"][metric] = entry
        out["options"] = _jsonable(self.options)
        return out


def _clean(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _clean(float(value))
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def _human_table(task: MetaTask, human: Judgments | pd.DataFrame) -> pd.DataFrame:
    if isinstance(human, Judgments):
        table = segment_scores(human, task.aspect, human=task.human, ddof=task.ddof)
    else:
        table = human.copy()
        if "aspect" in table.columns:
            table = table[table["aspect"] == task.aspect]
        missing = [c for c in ("system", "segment", "score") if c not in table.columns]
        if missing:
            raise InputError(f"human table lacks column(s) {', '.join(missing)}")
        if "direction" in table.columns:
            table["direction"] = direction_column(table["direction"])
    table["system"] = table["system"].astype(str)
    table["segment"] = table["segment"].astype(str)
    return table


def _filter_systems(task: MetaTask, table: pd.DataFrame) -> pd.DataFrame:
    if task.systems is not None:
        table = table[table["system"].isin(task.systems)]
    if task.exclude:
        table = table[~table["system"].isin(task.exclude)]
    return table


def _filter(task: MetaTask, table: pd.DataFrame) -> pd.DataFrame:
    if task.direction != "both":
        if "direction" not in table.columns:
            raise InputError(f"direction {task.direction!r} asked for but the human table has no directions")
        present = sorted({str(d) for d in table["direction"].dropna().unique()})
        if task.direction not in present:
            raise InputError(f"direction {task.direction!r} not in the human judgments (directions: "
                             f"{', '.join(present) or 'none'})")
        table = table[table["direction"] == task.direction]
    return _filter_systems(task, table)


SIGNIFICANCE = ("none", "williams", "permutation", "both")
_WILLIAMS_METHODS = ("pearson", "spearman")


@dataclass(frozen=True)
class MetaRunOptions:
    """How :func:`run` treats the data and what it adds to each correlation.

    ``nan``: ``"omit"`` drops missing metric scores and counts them, ``"raise"`` refuses them; ``unmatched``:
    ``"error"`` refuses metric rows without a human score, ``"report"`` leaves them out and counts them; ``ci``:
    bootstrap resamples of the inputs (segments) for a percentile interval at ``confidence`` (0: none);
    ``significance``: compare every metric with the best one (``"williams"``, ``"permutation"`` with
    ``n_permutations`` resamples, ``"both"`` or ``"none"``); ``seed`` seeds both; ``curves`` (system level):
    correlations over the top-N and last-N systems, from ``curves_min_n`` systems up."""

    nan: str = "omit"
    unmatched: str = "error"
    ci: int = 0
    confidence: float = 0.95
    significance: str = "none"
    n_permutations: int = 1000
    seed: int | None = 0
    curves: bool = False
    curves_min_n: int = 3

    def __post_init__(self) -> None:
        check_choice("nan", self.nan, ("omit", "raise"))
        check_choice("unmatched", self.unmatched, ("error", "report"))
        check_choice("significance", self.significance, SIGNIFICANCE)


def run(task: MetaTask, human_table: Judgments | pd.DataFrame, metric_table: pd.DataFrame, *,
        metrics: Iterable[str] | None = None, lower_is_better: Iterable[str] = (),
        options: MetaRunOptions | None = None, progress: Progress | None = None) -> MetaResult:
    """Correlate every metric in ``metric_table`` (or those named) with the human scores, as ``task`` says.

    Joining is on (system, segment) as strings. Metric rows of the systems the task keeps whose (system,
    segment) has no human score of the aspect are an :class:`InputError` naming their number per metric and
    examples (``options.unmatched="error"``, the default); ``"report"`` leaves them out and records the counts in
    ``options["metrics"][m]["n_unmatched"]`` of the result. Missing metric scores (NaN) are dropped and counted
    (``n_nan_dropped``; ``options.nan="raise"`` makes them an error).

    Optional extras (:class:`MetaRunOptions`): ``ci`` bootstrap resamples of inputs (segments) for a percentile
    confidence interval of every figure; ``significance`` compares every metric with the best one (the highest
    statistic): ``"williams"`` (Pearson/Spearman over one vector: system level, or segment level with
    ``average_by="none"``; one-sided), ``"permutation"`` (paired permutation test, ``n_permutations`` resamples,
    any task) or ``"both"``; ``curves`` (system level): correlations over the top-N and last-N systems sorted by
    human score. ``progress`` hears the stages: correlating, the intervals and the tests, each counting metrics.
    """
    opts = options or MetaRunOptions()
    nan, unmatched, ci, confidence = opts.nan, opts.unmatched, opts.ci, opts.confidence
    significance, n_permutations, seed = opts.significance, opts.n_permutations, opts.seed
    curves, curves_min_n = opts.curves, opts.curves_min_n
    aspect_table = _human_table(task, human_table)
    if aspect_table.empty:
        raise InputError(f"no human scores for aspect {task.aspect!r}")
    human = _filter(task, aspect_table)
    if human.empty:
        raise InputError(f"no human scores left for task {task.name}")
    lower = set(lower_is_better)
    mt = metric_table.copy()
    mt["system"] = mt["system"].astype(str)
    mt["segment"] = mt["segment"].astype(str)
    names = list(dict.fromkeys(mt["metric"])) if metrics is None else list(metrics)
    unknown = [m for m in names if m not in set(mt["metric"])]
    if unknown:
        raise InputError(f"metric(s) not in the metric table: {', '.join(unknown)} (present: "
                         f"{', '.join(list(dict.fromkeys(mt['metric']))[:20])})")
    mt = _filter_systems(task, mt[mt["metric"].isin(names)])
    stray = _scores.unmatched_rows(aspect_table, mt)
    if len(stray) and unmatched == "error":
        raise InputError(_scores.describe_unmatched(stray, aspect_table, len(mt), task.aspect))
    stray_counts = stray.groupby("metric").size().to_dict() if len(stray) else {}
    keys = ["system", "segment"]
    hum = human[keys + ["score"]].rename(columns={"score": "human"})
    results: dict[str, Any] = {}
    used: dict[str, Any] = {}
    notes: dict[str, list[str]] = {}
    oriented: dict[str, pd.DataFrame] = {}
    for k, metric in enumerate(names):
        if progress:
            progress(f"correlating · {metric} [metrics]", k, len(names))
        one = mt.loc[mt["metric"] == metric, keys + ["score"]]
        if one.duplicated(keys).any():
            raise InputError(f"metric {metric!r} has several scores for one (system, segment)")
        merged = hum.merge(one, on=keys, how="inner")
        n_nan = int(merged["score"].isna().sum())
        if n_nan and nan == "raise":
            ex = merged.loc[merged["score"].isna(), keys].head(3)
            raise InputError(f"metric {metric!r} has {n_nan} missing (NaN) score(s), e.g. "
                             + "; ".join(f"system={r.system!r} segment={r.segment!r}" for r in ex.itertuples()))
        merged = merged[merged["score"].notna()]
        if merged.empty:
            raise InputError(f"metric {metric!r} has no score for any (system, segment) the humans judged under "
                             f"task {task.name}")
        flip = task.orientation == "abs" and metric in lower
        merged = merged.assign(metric=np.asarray(
            _stats.orient(merged["score"].to_numpy(float), lower_is_better=flip), dtype=float))
        oriented[metric] = merged
        results[metric] = _correlate(task, merged)
        used[metric] = {"n_systems": merged["system"].nunique(), "n_segments": merged["segment"].nunique(),
                        "n_points": len(merged), "negated": flip, "n_nan_dropped": n_nan,
                        "n_unmatched": int(stray_counts.get(metric, 0)),
                        "n_human_without_score": int(len(hum) - len(merged))}
        inputs = input_completeness(task, merged)
        if inputs is not None:
            used[metric]["inputs"] = inputs
        notes[metric] = _notes(task, results[metric], used[metric])
    recorded: dict[str, Any] = {"systems": sorted(set(human["system"])), "metrics": used,
                               "method_kwargs": task.method_kwargs, "unmatched": unmatched, "nan": nan}
    out = MetaResult(task, results, recorded, notes=notes, oriented=oriented)
    if ci:
        out.cis = {}
        for k, (m, frame) in enumerate(oriented.items()):
            if progress:
                progress(f"bootstrap intervals · {m} [metrics]", k, len(oriented))
            out.cis[m] = _bootstrap(task, frame, ci, confidence, seed)
        recorded["ci"] = {"n_resamples": ci, "confidence": confidence, "seed": seed, "unit": "item",
                         "method": "percentile"}
    if significance != "none":
        if progress:
            progress(f"{significance} tests against the best metric", 0, 1)
        _compare_with_best(out, oriented, significance, n_permutations, seed)
    if curves:
        if task.level != "system":
            raise InputError("top-N/last-N curves are defined over systems: use a system-level task")
        for metric, frame in oriented.items():
            per = frame.groupby("system", sort=True)[["metric", "human"]].mean()
            if len(per) < curves_min_n:
                notes[metric].append(f"no top-N curves: {len(per)} systems < min N {curves_min_n}")
                continue
            top, last = stats_correlation.top_n_correlations(per["metric"].to_numpy(), per["human"].to_numpy(),
                                                             method=task.method, min_n=curves_min_n,
                                                             **task.method_kwargs)
            out.curves[metric] = {"top": top, "last": last}
        recorded["curves"] = {"min_n": curves_min_n, "order": "systems sorted by mean human score, best first"}
    return out


#: above this share of metric ties among the pairs the humans order, a tau-like figure under
#: ``metric_ties="discordant"`` (or ``"concordant"``) says more about ties than about agreement: a note says so
TIE_NOTE_SHARE = 0.25


def ties_note(task: MetaTask, options: dict[str, Any]) -> str:
    """A note when metric ties dominate a Kendall tau-like figure that counts them one way (mt-metrics-eval and
    WMT23 treat ties explicitly: Deutsch et al. 2023's tie calibration, the acc-eq statistic); "" otherwise."""
    tied, ordered = options.get("metric_tie_pairs"), options.get("human_ordered_pairs")
    if task.method != "kendall_tau_like" or task.metric_ties not in ("discordant", "concordant") or not ordered \
            or tied is None or tied / ordered <= TIE_NOTE_SHARE:
        return ""
    return (f"{int(tied)} of {int(ordered)} pairs the humans order are metric ties ({tied / ordered:.0%}), each "
            f"counted {task.metric_ties} (metric_ties={task.metric_ties}): the figure mostly measures how often the "
            "metric ties (a 0/1 metric such as style_accuracy ties on most pairs), not "
            f"{'anti-' if task.metric_ties == 'discordant' else ''}correlation; a tie-aware figure: "
            "metric_ties=skip or half, or pairwise_accuracy with human_ties=match (WMT23's acc-eq)")


def _notes(task: MetaTask, res: Any, used: dict[str, Any]) -> list[str]:
    notes = []
    opts = res.options
    tie_note = ties_note(task, opts)
    if tie_note:
        notes.append(tie_note)
    flags = set(opts.get("flags", []))
    if math.isnan(res.statistic):
        notes.append(opts.get("note") or "undefined (NaN)")
    elif "constant_x" in flags or "constant_y" in flags:
        notes.append(opts.get("note", "constant scores"))
    if task.level == "system" and used["n_systems"] == 2:
        notes.append("only 2 systems: a correlation over 2 points is always +-1")
    elif "n<3" in flags:
        notes.append("fewer than 3 points")
    if opts.get("n_undefined"):
        notes.append(f"{opts['n_undefined']} of {opts.get('n_groups')} groups undefined "
                     f"({'skipped' if task.undefined == 'skip' else 'counted as 0'})")
    if used["n_nan_dropped"]:
        notes.append(f"{used['n_nan_dropped']} missing (NaN) metric score(s) left out")
    if used["n_unmatched"]:
        notes.append(f"{used['n_unmatched']} metric row(s) without a human score left out")
    return notes


# ------------------------------------------------------------------------------------ matrices and statistics
def _matrices(task: MetaTask, merged: pd.DataFrame, columns: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
    """(systems x segments) matrices of each column and of the human scores; NaN where a cell is missing in any.

    For ``average_by="item"`` only inputs every system has are kept; for ``"system"`` only systems with every
    input (the convention of the figures reproduced in docs/meta-conventions.md).
    """
    wide = merged.pivot(index="system", columns="segment", values=list(columns) + ["human"])
    mats = [wide[c].to_numpy(float) for c in columns]
    human = wide["human"].to_numpy(float)
    missing = np.isnan(human)
    for m in mats:
        missing |= np.isnan(m)
    if task.level == "segment" and task.average_by == "item":
        keep = ~missing.any(axis=0)
        mats, human, missing = [m[:, keep] for m in mats], human[:, keep], missing[:, keep]
    elif task.level == "segment" and task.average_by == "system":
        keep = ~missing.any(axis=1)
        mats, human, missing = [m[keep] for m in mats], human[keep], missing[keep]
    mats = [np.where(missing, np.nan, m) for m in mats]
    return mats, np.where(missing, np.nan, human)


def _statistic_fn(task: MetaTask) -> Callable[[np.ndarray, np.ndarray], Any]:
    """The task's statistic as a function of (systems x segments) matrices with NaN for missing cells."""
    kwargs = task.method_kwargs
    if task.level == "system":
        def system_fn(m: np.ndarray, h: np.ndarray) -> Any:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ms, hs = np.nanmean(m, axis=1), np.nanmean(h, axis=1)
            ok = ~(np.isnan(ms) | np.isnan(hs))
            if ok.sum() < 2:
                raise InputError(f"a system-level correlation needs at least 2 systems; this task keeps "
                                 f"{int(ok.sum())}")
            return _stats.system_level(ms[ok], hs[ok], method=task.method, **kwargs)
        return system_fn

    # a callable segment_level that the bootstrap and the permutation test run vectorised where they can
    return _stats.SegmentStatistic(task.method, average_by=task.average_by, nan_policy="omit",
                                   **task.segment_kwargs, **kwargs)


def statistic_function(task: MetaTask) -> Callable[[np.ndarray, np.ndarray], Any]:
    """The task's statistic as a function of (systems x segments) metric and human matrices (NaN: missing)."""
    return _statistic_fn(task)


def paired_matrices(task: MetaTask, a: pd.DataFrame, b: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two metrics' rows (:attr:`MetaResult.oriented`) on the cells both have, as the task's (systems x segments)
    matrices: (metric a, metric b, human), ready for a paired test of the two correlations."""
    keys = ["system", "segment"]
    pair = a[keys + ["human", "metric"]].rename(columns={"metric": "a"}).merge(
        b[keys + ["metric"]].rename(columns={"metric": "b"}), on=keys)
    (ma, mb), h = _matrices(task, pair, ["a", "b"])
    return ma, mb, h


def input_completeness(task: MetaTask, merged: pd.DataFrame) -> dict[str, Any] | None:
    """For a per-input task (segment level, ``average_by="item"``): the inputs kept (every system the task keeps has
    a judgment and a score on them), those dropped, and per system how many of the dropped it lacks; None for
    other tasks. ``merged``: the (system, segment) cells with both a human and a metric score."""
    if task.level != "segment" or task.average_by != "item" or merged.empty:
        return None
    present = pd.crosstab(merged["system"], merged["segment"]) > 0
    complete = present.all(axis=0)
    lacking = (~present.loc[:, ~complete]).sum(axis=1)
    return {"kept": int(complete.sum()), "dropped": int((~complete).sum()), "systems": int(len(present)),
            "lacking": {str(s): int(n) for s, n in lacking.items() if n}}


def _correlate(task: MetaTask, merged: pd.DataFrame) -> Any:
    (m,), h = _matrices(task, merged, ["metric"])
    if h.size == 0 or np.isnan(h).all():
        inputs = input_completeness(task, merged)
        if inputs and inputs["lacking"]:
            total = inputs["kept"] + inputs["dropped"]
            who = ", ".join(f"{s} lacks {n} of {total}" for s, n in sorted(inputs["lacking"].items()))
            raise InputError(f"no complete data left for task {task.name}: a per-input task keeps only the inputs "
                             f"every system has (a judgment and a score), and no input of the {total} has all "
                             f"{inputs['systems']} systems ({who}); leave the incomplete systems out (exclude) or "
                             f"use a pooled convention (pearson, spearman, kendall)")
        raise InputError(f"no complete data left for task {task.name}")
    return _statistic_fn(task)(m, h)


def _bootstrap(task: MetaTask, merged: pd.DataFrame, n: int, confidence: float, seed: int | None) -> Any:
    (m,), h = _matrices(task, merged, ["metric"])
    return stats_correlation.bootstrap_correlation_ci(m, h, _statistic_fn(task), n_resamples=n,
                                                      confidence=confidence, seed=seed, unit="item",
                                                      nan_policy="omit")


def _compare_with_best(out: MetaResult, oriented: dict[str, pd.DataFrame], significance: str,
                       n_permutations: int, seed: int | None) -> None:
    task = out.task
    finite = {m: r.statistic for m, r in out.results.items() if not math.isnan(r.statistic)}
    if not finite:
        return
    best = max(finite, key=lambda m: finite[m])
    out.best = best
    fn = _statistic_fn(task)
    keys = ["system", "segment"]
    base = oriented[best][keys + ["human", "metric"]].rename(columns={"metric": "a"})
    for metric in out.results:
        if metric == best:
            continue
        pair = base.merge(oriented[metric][keys + ["metric"]].rename(columns={"metric": "b"}), on=keys)
        tests: dict[str, Any] = {}
        (a, b), h = _matrices(task, pair, ["a", "b"])
        if significance in ("williams", "both"):
            tests["williams"] = _williams(task, fn, a, b, h)
        if significance in ("permutation", "both"):
            try:
                res = _sig.permutation_test_correlation_difference(a, b, h, fn, n_resamples=n_permutations,
                                                                   seed=seed, unit="cell")
                tests["permutation"] = {"pvalue": res.pvalue, "delta": res.delta, "corr_best": res.corr_a,
                                        "corr_metric": res.corr_b, "n_resamples": res.n_resamples,
                                        "alternative": "greater (best > metric)", **res.options}
            except InputError as exc:
                tests["permutation"] = {"pvalue": float("nan"), "not_applicable": str(exc)}
        out.tests[metric] = tests
    out.options["significance"] = {"method": significance, "best": best, "n_permutations": n_permutations,
                                   "seed": seed, "williams": "one-sided, best > metric",
                                   "permutation": "paired, unit=cell, standardized, one-sided"}


def _williams(task: MetaTask, fn: Callable[[np.ndarray, np.ndarray], Any], a: np.ndarray, b: np.ndarray,
              h: np.ndarray) -> dict[str, Any]:
    if task.method not in _WILLIAMS_METHODS or (task.level == "segment" and task.average_by != "none"):
        return {"pvalue": float("nan"), "not_applicable": "Williams needs a Pearson/Spearman correlation over one "
                "vector of points (system level, or segment level with average_by=none); use permutation"}
    r12 = float(fn(a, h).statistic)
    r13 = float(fn(b, h).statistic)
    r23 = float(fn(a, b).statistic)
    n = int(fn(a, h).n)
    if any(math.isnan(r) for r in (r12, r13, r23)):
        return {"pvalue": float("nan"), "not_applicable": "a correlation is undefined (constant scores)"}
    if n <= 3:
        return {"pvalue": float("nan"), "not_applicable": f"Williams needs more than 3 points; got {n}"}
    t, p = _sig.williams_test(r12, r13, r23, n)
    return {"pvalue": p, "t": t, "r_best": r12, "r_metric": r13, "r_best_metric": r23, "n": n}


def run_many(tasks: Iterable[MetaTask], human_table: Judgments | pd.DataFrame, metric_table: pd.DataFrame,
             **kwargs: Any) -> pd.DataFrame:
    """:func:`run` for several tasks (``kwargs`` are :func:`run`'s), stacked with :meth:`MetaResult.to_frame`."""
    frames = [run(t, human_table, metric_table, **kwargs).to_frame() for t in tasks]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def inter_rater_pearson(j: Judgments, aspect: str, *, slot=None, systems: Sequence[str] | None = None,
                        exclude: Sequence[str] = ()) -> Any:
    """Pearson between two rater slots over every (system, segment) both rated.

    ``slot`` maps an annotator id to its slot (e.g. Lai et al.'s ``survey4/rater2`` -> ``rater2``: each survey
    had its own two raters and the paper pools "first rater" against "second rater"); default: the annotator id
    itself. There must be exactly two slots.
    """
    frame = j.filter(aspect=aspect, systems=systems, exclude_systems=exclude).frame
    frame["slot"] = frame["annotator"].map(slot) if slot is not None else frame["annotator"]
    slots = sorted(frame["slot"].unique())
    if len(slots) != 2:
        raise InputError(f"need exactly two rater slots, found {len(slots)}: {', '.join(map(str, slots))}")
    wide = frame.pivot_table(index=["system", "segment"], columns="slot", values="score", aggfunc="mean").dropna()
    return _stats.pearson(wide[slots[0]].to_numpy(float), wide[slots[1]].to_numpy(float))
