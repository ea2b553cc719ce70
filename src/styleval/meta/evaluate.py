"""Meta-evaluation as data: a :class:`MetaTask` names every choice, :func:`run` applies it.

Like mt-metrics-eval, a figure such as "BLEURT .610" is only meaningful with its conventions spelled out: which
aspect, system or segment level, which statistic, how per-item figures are averaged, how ties count, which
direction(s) and systems are in, how lower-is-better metrics are oriented and how annotators are aggregated.
``MetaTask.name`` spells all of them and ``MetaTask.from_name`` reads one back.

Inputs:

* the human side: :class:`~styleval.meta.judgments.Judgments` (aggregated per segment with ``task.human``), or an
  already aggregated segment table (system, segment, score[, direction]);
* the metric side: a metric table (system, segment, metric, score[, direction]).

Rows are matched on (system, segment); a (system, segment) missing on either side is dropped. The statistics
themselves come from :mod:`styleval.stats.correlation`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from styleval.errors import InputError
from styleval.records import Direction

from . import _stats
from .aggregate import segment_scores
from .judgments import Judgments

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
            raise ValueError(f"MetaTask.{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")

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
            raise ValueError("aggregate='pooled' needs a pairwise method (kendall_tau_like, pairwise_accuracy)")
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
            raise ValueError("average_by/aggregate apply to segment level only; use 'none'/'mean' at system level")
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
                raise ValueError(f"bad MetaTask name component {part!r}")
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
    """The outcome of :func:`run`: the task, one CorrelationResult per metric, and what was used."""

    task: MetaTask
    results: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, metric: str) -> Any:
        return self.results[metric]

    def statistic(self, metric: str) -> float:
        return float(self.results[metric].statistic)

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: metric, statistic, pvalue, n, task (the canonical name), then every task field."""
        choices = asdict(self.task)
        choices["systems"] = "*" if self.task.systems is None else ",".join(self.task.systems)
        choices["exclude"] = ",".join(self.task.exclude)
        rows = [{"metric": metric, "statistic": res.statistic, "pvalue": res.pvalue, "n": res.n,
                 "task": self.task.name, **choices} for metric, res in self.results.items()]
        return pd.DataFrame(rows)


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
    table["system"] = table["system"].astype(str)
    table["segment"] = table["segment"].astype(str)
    return table


def _filter(task: MetaTask, table: pd.DataFrame) -> pd.DataFrame:
    if task.direction != "both":
        if "direction" not in table.columns:
            raise InputError(f"direction {task.direction!r} asked for but the human table has no directions")
        table = table[table["direction"] == task.direction]
    if task.systems is not None:
        table = table[table["system"].isin(task.systems)]
    if task.exclude:
        table = table[~table["system"].isin(task.exclude)]
    return table


def run(task: MetaTask, human_table: Judgments | pd.DataFrame, metric_table: pd.DataFrame, *,
        metrics: Iterable[str] | None = None, lower_is_better: Iterable[str] = ()) -> MetaResult:
    """Correlate every metric in ``metric_table`` (or those named) with the human scores, as ``task`` says."""
    human = _filter(task, _human_table(task, human_table))
    if human.empty:
        raise InputError(f"no human scores left for task {task.name}")
    lower = set(lower_is_better)
    mt = metric_table.copy()
    mt["system"] = mt["system"].astype(str)
    mt["segment"] = mt["segment"].astype(str)
    names = list(dict.fromkeys(mt["metric"])) if metrics is None else list(metrics)
    unknown = [m for m in names if m not in set(mt["metric"])]
    if unknown:
        raise InputError(f"metric(s) not in the metric table: {', '.join(unknown)}")
    keys = ["system", "segment"]
    hum = human[keys + ["score"]].rename(columns={"score": "human"})
    results: dict[str, Any] = {}
    used: dict[str, Any] = {}
    for metric in names:
        one = mt.loc[mt["metric"] == metric, keys + ["score"]]
        if one.duplicated(keys).any():
            raise InputError(f"metric {metric!r} has several scores for one (system, segment)")
        merged = hum.merge(one, on=keys, how="inner")
        flip = task.orientation == "abs" and metric in lower
        merged["metric"] = np.asarray(_stats.orient(merged["score"].to_numpy(float), lower_is_better=flip),
                                      dtype=float)
        results[metric] = _correlate(task, merged)
        used[metric] = {"n_systems": merged["system"].nunique(), "n_segments": merged["segment"].nunique(),
                        "negated": flip}
    options = {"systems": sorted(set(human["system"])), "metrics": used, "method_kwargs": task.method_kwargs}
    return MetaResult(task, results, options)


def _correlate(task: MetaTask, merged: pd.DataFrame):
    kwargs = task.method_kwargs
    if task.level == "system":
        per = merged.groupby("system", sort=True)[["metric", "human"]].mean()
        return _stats.system_level(per["metric"].to_numpy(), per["human"].to_numpy(), method=task.method,
                                   **kwargs)
    if task.average_by == "none":
        m = merged["metric"].to_numpy(float)[None, :]
        h = merged["human"].to_numpy(float)[None, :]
        return _stats.segment_level(m, h, method=task.method, average_by="none", **kwargs)
    metric = merged.pivot(index="system", columns="segment", values="metric")
    human = merged.pivot(index="system", columns="segment", values="human")
    if task.average_by == "item":  # inputs need every system; drop incomplete inputs
        complete = metric.notna().all(axis=0) & human.notna().all(axis=0)
        metric, human = metric.loc[:, complete], human.loc[:, complete]
    else:
        complete = metric.notna().all(axis=1) & human.notna().all(axis=1)
        metric, human = metric.loc[complete], human.loc[complete]
    return _stats.segment_level(metric.to_numpy(float), human.to_numpy(float), method=task.method,
                                average_by=task.average_by, **task.segment_kwargs, **kwargs)


def run_many(tasks: Iterable[MetaTask], human_table: Judgments | pd.DataFrame, metric_table: pd.DataFrame,
             **kwargs: Any) -> pd.DataFrame:
    """:func:`run` for several tasks, stacked with :meth:`MetaResult.to_frame`."""
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
