"""``benchmark``: score metrics on every human-judgment set, meta-evaluate each task with the set's convention, rank
the metrics in significance clusters per task and summarise per aspect across tasks.

Per task every metric of the task's aspect kind takes part: the metrics asked for (each column they give, e.g.
``bleu/src`` and ``bleu/ref``), a user's own scores files, and the scores stored with the set (``stored=True``).
A metric whose scoring failed on a set is listed as failed on each of that set's tasks of its kind, with the reason;
a figure computed with missing scores left out carries that note and ``partial=True``. A degenerate task (a
system-level task with fewer than :data:`~styleval.benchmark.sets.MIN_SYSTEMS` systems, a segment-level one with
fewer than :data:`~styleval.benchmark.sets.MIN_ITEMS` judged inputs) keeps its figures and notes but is not ranked,
clustered or averaged into the summary (``TaskResult.degenerate`` says why). A per-input task says how many inputs
it kept and dropped (``TaskResult.inputs``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..meta import run as meta_run
from ..meta.ceiling import Strata, TaskCeiling, strata_of, task_ceiling
from ..meta.evaluate import MetaResult, MetaRunOptions
from ..progress import Progress
from ..readers.text import StrPath
from ..scoring import build_metrics
from .clusters import Clusters, significance_clusters
from .scoring import (Failure, Scored, dry_run_estimate, is_cached, joint_labels, read_user_scores, relabelled,
                      score_metric, user_scores_on)
from .sets import KINDS, MIN_ITEMS, MIN_SYSTEMS, BenchSet, BenchTask, builtin_set, first_inputs

STORED, SCORED, USER = "stored", "scored", "user"


@dataclass
class Row:
    """One metric on one task."""

    metric: str
    origin: str  # scored, stored or user
    statistic: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    n: int = 0
    rank: int | None = None
    notes: list[str] = field(default_factory=list)
    failed: str = ""  # the reason, when the metric could not be scored on this set
    partial: bool = False  # some of its scores were missing (NaN) and left out

    def to_dict(self) -> dict[str, Any]:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {"metric": self.metric, "origin": self.origin, "statistic": clean(self.statistic),
                "ci": [clean(self.ci_low), clean(self.ci_high)], "n": self.n, "rank": self.rank,
                "partial": self.partial, "failed": self.failed or None, "notes": self.notes}


@dataclass
class TaskResult:
    task: BenchTask
    rows: list[Row]
    clusters: Clusters
    degenerate: str = ""  # why the figures are not ranked nor averaged ("" for a task that is)
    inputs: str = ""  # a per-input task: the inputs kept and dropped (every system judged and scored on them)
    ceiling: TaskCeiling | None = None  # the humans' own reliability (BenchStatistics.ceiling)
    strata: Strata | None = None  # the figures where raters agree and where they do not (BenchStatistics.strata)

    def share_of_ceiling(self, row: Row) -> float:
        """A row's figure as a share of the task's human ceiling (NaN without one)."""
        return math.nan if self.ceiling is None or row.failed else self.ceiling.share(row.statistic)

    def row(self, metric: str) -> Row:
        for r in self.rows:
            if r.metric == metric:
                return r
        raise KeyError(metric)


@dataclass
class Summary:
    """One metric across the tasks of one aspect kind."""

    kind: str
    metric: str
    mean: float
    mean_rank: float
    wins: int  # tasks where it is in the top cluster
    n_tasks: int  # tasks with a figure
    n_failed: int


@dataclass
class BenchmarkResult:
    tasks: list[TaskResult]
    signatures: dict[str, str]
    settings: dict[str, Any]
    skipped: list[str] = field(default_factory=list)  # tasks no metric of their kind took part in

    def task(self, set_name: str, aspect: str, level: str, direction: str = "both", group: str = "") -> TaskResult:
        for t in self.tasks:
            bt = t.task
            if (bt.set, bt.task.aspect, bt.task.level, bt.task.direction, bt.group) == (set_name, aspect, level,
                                                                                          direction, group):
                return t
        raise KeyError(f"no task {set_name} {aspect} {level} {direction} {group}")

    def summary(self) -> list[Summary]:
        """Per aspect kind and metric: mean correlation and mean cluster rank over the tasks where it has a figure,
        tasks won (top cluster), and tasks where it failed; best mean first."""
        out = []
        for kind in KINDS:
            per: dict[str, list[Row]] = {}
            for t in self.tasks:
                if t.task.kind == kind and not t.degenerate:
                    for r in t.rows:
                        per.setdefault(r.metric, []).append(r)
            for metric, rows in per.items():
                ok = [r for r in rows if not r.failed and not math.isnan(r.statistic)]
                ranks = [r.rank for r in ok if r.rank is not None]
                out.append(Summary(kind, metric, float(np.mean([r.statistic for r in ok])) if ok else math.nan,
                                   float(np.mean(ranks)) if ranks else math.nan, sum(1 for r in ranks if r == 1),
                                   len(ok), sum(1 for r in rows if r.failed)))
        return sorted(out, key=lambda s: (KINDS.index(s.kind), -(s.mean if not math.isnan(s.mean) else -9)))

    def repeated_ratings(self) -> list[str]:
        """Per set whose judgments had several ratings of one key: how many, and the rule that made them one."""
        out = []
        for name, rep in (self.settings.get("repeated_ratings") or {}).items():
            if rep.get("keys"):
                out.append(f"{name}: {rep['ratings']:,} ratings of {rep['keys']:,} (system, segment, annotator, "
                           f"aspect) key(s) rated more than once, aggregated by rule {rep['rule']!r} "
                           "(benchmark.json \"repeated_ratings\")")
        return out

    def left_out(self) -> list[str]:
        """The degenerate tasks the summary leaves out, each with why (label: reason)."""
        return [f"{t.task.label}: {t.degenerate}" for t in self.tasks if t.degenerate]

    def to_frame(self) -> pd.DataFrame:
        """One row per task and metric: set, kind, label, task name, every figure."""
        rows = []
        for t in self.tasks:
            for r in t.rows:
                rows.append({"set": t.task.set, "kind": t.task.kind, "aspect": t.task.task.aspect,
                             "level": t.task.task.level, "method": t.task.task.method,
                             "direction": t.task.task.direction, "group": t.task.group,
                             "subset": t.task.subset, "label": t.task.label,
                             "metric": r.metric, "origin": r.origin, "statistic": r.statistic,
                             "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n, "rank": r.rank,
                             "partial": r.partial, "failed": r.failed, "notes": "; ".join(r.notes),
                             "degenerate": t.degenerate, "task": t.task.name, **_ceiling_columns(t, r)})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {"settings": self.settings, "signatures": self.signatures, "skipped_tasks": self.skipped,
                "left_out_of_summary": self.left_out(),
                "tasks": [{"name": t.task.name, "label": t.task.label, "set": t.task.set, "kind": t.task.kind,
                           "group": t.task.group, "subset": t.task.subset, "degenerate": t.degenerate or None,
                           "inputs": t.inputs or None,
                           "rows": [{**r.to_dict(), **_share(t, r)} for r in t.rows], **_human_parts(t),
                           "clusters": {"alpha": t.clusters.alpha, "n_permutations": t.clusters.n_permutations,
                                        "pvalues": [{"better": a, "worse": b, "p": clean(p)}
                                                    for (a, b), p in t.clusters.pvalues.items()]}}
                          for t in self.tasks],
                "summary": [{"kind": s.kind, "metric": s.metric, "mean": clean(s.mean),
                             "mean_rank": clean(s.mean_rank), "wins": s.wins, "n_tasks": s.n_tasks,
                             "n_failed": s.n_failed} for s in self.summary()]}


def _ceiling_columns(t: TaskResult, r: Row) -> dict[str, Any]:
    """The CSV columns of a task's human ceiling beside one metric's row (none when no ceiling was asked for)."""
    if t.ceiling is None:
        return {}
    low, high = t.ceiling.interval("ceiling")
    return {"ceiling": t.ceiling.ceiling, "ceiling_low": low, "ceiling_high": high, "one_rater": t.ceiling.one_rater,
            "share_of_ceiling": t.share_of_ceiling(r)}


def _share(t: TaskResult, r: Row) -> dict[str, Any]:
    if t.ceiling is None:
        return {}
    share = t.share_of_ceiling(r)
    return {"share_of_ceiling": None if math.isnan(share) else share}


def _human_parts(t: TaskResult) -> dict[str, Any]:
    return {**({"ceiling": t.ceiling.to_dict()} if t.ceiling is not None else {}),
            **({"strata": t.strata.to_dict()} if t.strata is not None else {})}


def recommended_metrics() -> list[str]:
    """The metric ``evaluate`` relies on for style, content and fluency (``evaluation.plan.RECOMMENDED``)."""
    from ..evaluation.plan import RECOMMENDED

    return [RECOMMENDED[kind][0] for kind in KINDS]


def _kinds_of(spec: str) -> set[str]:
    """The aspect kinds a metric spec's columns judge (builds the metric: an unknown name is an error now)."""
    return {m.aspect.value for m in build_metrics([spec], ("source", "references"), True)}


def plan_sets(sets: Sequence[str | BenchSet] | None, root: str | Path | None, inputs: int | None = None
              ) -> list[BenchSet]:
    """The sets by name (default: every built-in set), each cut to its first ``inputs`` inputs when given."""
    names: Sequence[str | BenchSet] = list(sets) if sets else ["lai2022", "mir2019", "sgdd-tst"]
    planned = [s if isinstance(s, BenchSet) else builtin_set(s, root) for s in names]
    return planned if inputs is None else [first_inputs(s, inputs) for s in planned]


def dry_run(metrics: Sequence[str], sets: Sequence[str | BenchSet] | None = None, *, root: str | Path | None = None
            ) -> list[dict[str, Any]]:
    """For each set and server judge among ``metrics``: the requests and tokens that scoring would send (nothing
    is sent), and the cost with ``price=``."""
    out = []
    for bench_set in plan_sets(sets, root):
        records = bench_set.records()
        for spec in metrics:
            estimate = dry_run_estimate(spec, records)
            if estimate is not None:
                out.append({"set": bench_set.name, "subset": bench_set.subset, "metric": spec, **estimate})
    return out


@dataclass(frozen=True)
class BenchStatistics:
    """The statistics of a benchmark: ``ci`` bootstrap resamples of each figure's interval at ``confidence`` (0:
    none); ``n_permutations`` resamples of each pairwise test behind the clusters at level ``alpha`` (0: no test,
    rank by figure); ``seed`` seeds both. ``ceiling``: each task's human ceiling and one rater against the rest
    (:mod:`styleval.meta.ceiling`, intervals from ``ci`` resamples); ``strata``: each segment-level task's figures
    where the raters agree and where they do not."""

    ci: int = 200
    confidence: float = 0.95
    n_permutations: int = 200
    alpha: float = 0.05
    seed: int = 0
    ceiling: bool = False
    strata: bool = False

    @classmethod
    def given(cls, **fields: Any) -> "BenchStatistics":
        unknown = sorted(set(fields) - {f.name for f in dataclass_fields(cls)})
        if unknown:
            raise InputError(f"benchmark has no statistics option(s) {', '.join(unknown)}; its options: "
                             f"{', '.join(f.name for f in dataclass_fields(cls))}")
        return cls(**fields)


def benchmark(metrics: Sequence[str] = (), sets: Sequence[str | BenchSet] | None = None, *,
              root: str | Path | None = None, scores: Sequence[str] = (), stored: bool = True,
              cache_dir: StrPath | None = None, progress: Progress | None = None,
              **statistics: Any) -> BenchmarkResult:
    """Benchmark metric specs (and a user's scores files ``NAME:KIND=FILE``) on the sets (default: every built-in
    set), next to the stored scores (``stored``). ``statistics``: the fields of :class:`BenchStatistics` (``ci``,
    ``confidence``, ``n_permutations``, ``alpha``, ``seed``); ``cache_dir``: where scores are kept between runs.
    A set cut to its first inputs (``plan_sets(..., inputs=N)``, :func:`~styleval.benchmark.sets.first_inputs`)
    says so in every task's name and label and in ``settings["subsets"]``."""
    stats = BenchStatistics.given(**statistics)
    kinds_of = {spec: _kinds_of(spec) for spec in metrics}
    labels = joint_labels(metrics)
    user = [read_user_scores(s) for s in scores]
    bench_sets = plan_sets(sets, root)
    signatures: dict[str, str] = {}
    results: list[TaskResult] = []
    skipped: list[str] = []
    log: list[dict[str, Any]] = []
    needed_on = {s.name: [m for m in metrics if kinds_of[m] & {bt.kind for bt in s.tasks}] for s in bench_sets}
    work = ScoringWork.plan(bench_sets, needed_on, cache_dir)
    for bench_set in bench_sets:
        needed = needed_on[bench_set.name]  # a metric no task of the set judges: not scored
        scored, failures = _scores_of(bench_set, needed, user, len(bench_sets), cache_dir, progress, work)
        scored = [relabelled(s, labels[s.spec]) if s.origin == SCORED else s for s in scored]
        log += [{"set": bench_set.name, "metric": s.spec, "origin": s.origin, "cached": s.cached,
                 "columns": list(s.kinds)} for s in scored]
        log += [{"set": bench_set.name, "metric": f.spec, "failed": f.reason} for f in failures]
        tables = [s.table for s in scored]
        kinds: dict[str, str] = {}
        origin: dict[str, str] = {}
        lower: set[str] = set(bench_set.lower_is_better)
        for s in scored:
            kinds.update(s.kinds)
            lower |= s.lower_is_better
            for c in s.kinds:
                sig = s.signatures.get(c, "")
                if signatures.setdefault(c, sig) != sig:  # another set signs it otherwise (auto-corpus decisions)
                    signatures[f"{bench_set.name}:{c}"] = sig
                origin[c] = s.origin
        if stored:
            tables.append(bench_set.stored)
            for c, kind in bench_set.stored_kinds.items():
                kinds[c] = kind
                origin[c] = STORED
                signatures[f"{bench_set.name}:{c}"] = f"{c}|stored with {bench_set.name}"
        table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
            columns=["system", "segment", "metric", "score"])
        if bench_set.inputs is not None:  # a user's scores of the whole set: only the subset's inputs count
            table = table[table["segment"].isin(bench_set.inputs)]
        for bt in bench_set.tasks:
            names = [m for m in dict.fromkeys(table["metric"]) if kinds.get(m) == bt.kind]
            failed = [f for f in failures if bt.kind in kinds_of.get(f.spec, {bt.kind})]
            if not names and not failed:
                skipped.append(f"{bt.label}: no metric judges {bt.kind}")
                continue
            chosen = TaskMetrics(table[table["metric"].isin(names)], names, origin, lower, failed)
            results.append(_task(bt, bench_set, chosen, stats, progress))
    if progress and work.total:
        progress(f"benchmark: scored [{SCORING_UNIT}]", work.total, work.total)
    settings = {"metrics": list(metrics), "scores": list(scores), "sets": [s.name for s in bench_sets],
                "subsets": {s.name: s.subset for s in bench_sets if s.subset},
                "repeated_ratings": {s.name: s.repeated for s in bench_sets if s.repeated},
                "stored": stored, "ci": stats.ci, "confidence": stats.confidence,
                "n_permutations": stats.n_permutations, "alpha": stats.alpha, "seed": stats.seed, "scoring": log,
                **({"ceiling": True} if stats.ceiling else {}), **({"strata": True} if stats.strata else {}),
                "clusters": "sorted by figure; a metric opens a new cluster when one of the current cluster is "
                            "better by a one-sided paired permutation test (p < alpha)"}
    return BenchmarkResult(results, signatures, settings, skipped)


#: what the benchmark's own progress counts: outputs scored by one metric spec (cached specs count nothing)
SCORING_UNIT = "outputs x metrics"


@dataclass
class ScoringWork:
    """The scoring a benchmark has to do, counted in outputs scored by one spec, so the time left comes from the
    work done (a set of 10,000 pairs weighs what it holds, not one set of three), model loading included."""

    todo: dict[tuple[str, str], int]  # (set, spec) -> outputs to score (0: cached)
    total: int
    done: int = 0

    @classmethod
    def plan(cls, bench_sets: Sequence[BenchSet], needed_on: dict[str, list[str]],
             cache_dir: StrPath | None) -> "ScoringWork":
        todo: dict[tuple[str, str], int] = {}
        for bench_set in bench_sets:
            if not needed_on[bench_set.name]:
                continue
            records = bench_set.records()
            for spec in needed_on[bench_set.name]:
                todo[(bench_set.name, spec)] = 0 if is_cached(spec, records, bench_set.name, cache_dir) \
                    else len(records)
        return cls(todo, sum(todo.values()))


def _scores_of(bench_set: BenchSet, metrics: Sequence[str], user: Sequence[tuple[str, str, Path]], n_sets: int,
               cache_dir: StrPath | None, progress: Progress | None,
               work: ScoringWork | None = None) -> tuple[list[Scored], list[Failure]]:
    scored: list[Scored] = []
    failures: list[Failure] = []
    records = bench_set.records() if metrics else []
    for spec in metrics:
        size = work.todo.get((bench_set.name, spec), 0) if work is not None else 0
        if progress and work is not None and work.total:
            progress(f"benchmark: scoring {spec} on {bench_set.name} [{SCORING_UNIT}]", work.done, work.total)
        got = score_metric(spec, records, bench_set.name, cache_dir=cache_dir, progress=progress)
        if work is not None:
            work.done += size
        (failures if isinstance(got, Failure) else scored).append(got)  # type: ignore[arg-type]
    for name, kind, path in user:
        one = user_scores_on(name, kind, path, bench_set.name, n_sets)
        if one is not None:
            scored.append(one)
    return scored, failures


def _meta_results(bt: BenchTask, bench_set: BenchSet, chosen: "TaskMetrics", stats: BenchStatistics,
                  progress: Progress | None) -> dict[str, MetaResult | str]:
    """Every metric's :class:`MetaResult` on the task from one ``meta.run``; when that fails, each metric on its
    own, so the one that cannot be correlated fails alone (its reason in place of a result). The figures,
    intervals (one seed per metric) and notes do not depend on which metrics run together."""
    names = chosen.names
    try:
        res = meta_run(bt.task, bench_set.judgments, chosen.table, metrics=names, lower_is_better=chosen.lower,
                       options=MetaRunOptions(unmatched="report", ci=stats.ci, confidence=stats.confidence,
                                              seed=stats.seed),
                       progress=progress)
        return {m: res for m in names}
    except InputError as exc:
        if len(names) == 1:
            return {names[0]: " ".join(str(exc).split())}
    out: dict[str, MetaResult | str] = {}
    for metric in names:
        out.update(_meta_results(bt, bench_set, replace(chosen, names=[metric]), stats, progress))
    return out


@dataclass(frozen=True)
class TaskMetrics:
    """What one task correlates: the scores ``table`` of the metrics ``names``, where each came from (``origin``),
    which are lower-is-better (``lower``) and the metrics that failed to score on the task's set (``failed``)."""

    table: pd.DataFrame
    names: list[str]
    origin: dict[str, str]
    lower: set[str]
    failed: list[Failure]


def _task(bt: BenchTask, bench_set: BenchSet, chosen: TaskMetrics, stats: BenchStatistics,
          progress: Progress | None = None) -> TaskResult:
    names, origin, failed = chosen.names, chosen.origin, chosen.failed
    per: dict[str, MetaResult] = {}
    rows: dict[str, Row] = {}
    got = _meta_results(bt, bench_set, chosen, stats, progress)
    for metric in names:
        row = Row(metric, origin.get(metric, STORED))
        res = got[metric]
        if isinstance(res, str):  # e.g. the metric has no score on the systems this task keeps
            row.failed = res
            rows[metric] = row
            continue
        per[metric] = res
        figure = res[metric]
        row.statistic, row.n = float(figure.statistic), int(figure.n)
        if metric in res.cis:
            row.ci_low, row.ci_high = float(res.cis[metric].low), float(res.cis[metric].high)
        row.notes = list(res.notes.get(metric, []))
        used = res.options["metrics"][metric]
        missing = int(used["n_human_without_score"]) - int(used["n_nan_dropped"])
        if missing > 0:
            row.notes.append(f"{missing} judged (system, segment) pair(s) without a score of this metric left out")
        row.partial = bool(used["n_nan_dropped"] or missing > 0)
        rows[metric] = row
    degenerate = degenerate_reason(bt, per)
    if degenerate:  # shown with its notes, never ranked: its figures say nothing about which metric is better
        clusters = Clusters({}, alpha=stats.alpha, n_permutations=0)
    else:
        if progress:
            progress(f"significance clusters · {bt.label} [metrics]", len(names), len(names))
        clusters = significance_clusters(per, n_permutations=stats.n_permutations, alpha=stats.alpha,
                                         seed=stats.seed)
    for metric, rank in clusters.ranks.items():
        rows[metric].rank = rank
    for f in failed:
        rows[f.spec] = Row(f.spec, SCORED, failed=f.reason)
    order = sorted(rows.values(), key=lambda r: (r.rank is None, r.rank or 0,
                                                 -(r.statistic if not math.isnan(r.statistic) else -9)))
    out = TaskResult(bt, order, clusters, degenerate=degenerate, inputs=inputs_kept(per))
    _add_human_parts(out, bench_set, per, stats)
    return out


def _add_human_parts(out: TaskResult, bench_set: BenchSet, per: dict[str, MetaResult], stats: BenchStatistics) -> None:
    """The task's human ceiling and agreement strata, when asked for."""
    task = out.task.task
    if stats.ceiling:
        out.ceiling = task_ceiling(task, bench_set.judgments, ci=stats.ci, confidence=stats.confidence,
                                   seed=stats.seed)
    if stats.strata and task.level == "segment" and per and (out.ceiling is None or not out.ceiling.single):
        oriented = {m: res.oriented[m] for m, res in per.items()}
        try:
            out.strata = strata_of(task, oriented, bench_set.judgments, ci=stats.ci, confidence=stats.confidence,
                                   seed=stats.seed)
        except InputError:  # one score per item: no strata, the ceiling says so
            out.strata = None


def _used(per: dict[str, MetaResult]) -> list[dict[str, Any]]:
    return [res.options["metrics"][metric] for metric, res in per.items()]


def degenerate_reason(bt: BenchTask, per: dict[str, MetaResult]) -> str:
    """Why the task's figures cannot rank metrics ("" when they can): a system-level task over fewer than
    :data:`MIN_SYSTEMS` systems, a segment-level one over fewer than :data:`MIN_ITEMS` judged inputs (a per-input
    task: inputs kept)."""
    used = _used(per)
    if not used:
        return ""
    if bt.task.level == "system":
        n = max(int(u["n_systems"]) for u in used)
        return f"only {n} system(s) (fewer than {MIN_SYSTEMS}): not ranked nor averaged" if n < MIN_SYSTEMS else ""
    n = max(int(u["inputs"]["kept"]) if "inputs" in u else int(u["n_segments"]) for u in used)
    return f"only {n} judged input(s) (fewer than {MIN_ITEMS}): not ranked nor averaged" if n < MIN_ITEMS else ""


def inputs_kept(per: dict[str, MetaResult]) -> str:
    """A per-input task's completeness: the inputs kept (every system has a judgment and a score on them) and
    dropped, and the systems lacking the dropped ones; "" for other tasks."""
    got = [u["inputs"] for u in _used(per) if "inputs" in u]
    if not got:
        return ""
    kept = sorted({g["kept"] for g in got})
    total = max(g["kept"] + g["dropped"] for g in got)
    lacking: dict[str, int] = {}
    for g in got:
        for system, n in g["lacking"].items():
            lacking[system] = max(lacking.get(system, 0), n)
    shown = str(kept[0]) if len(kept) == 1 else f"{kept[0]}-{kept[-1]} (by metric)"
    text = (f"per input: {shown} of {total} inputs kept, {total - kept[-1] if len(kept) == 1 else 'the rest'} "
            "dropped (an input counts only when every system has a judgment and a score on it)")
    if lacking:
        text += "; lacking inputs: " + ", ".join(f"{s} {n}" for s, n in sorted(lacking.items()))
    return text
