"""Run metrics over records: the engine behind ``styleval.score`` and ``styleval score``.

Data flows one way: records -> one Batch per system -> each metric's segment statistics ->
corpus score, bootstrap interval and paired tests resampled from those cached statistics.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Iterable, Sequence

import numpy as np

from .errors import InputError
from .metrics import registry
from .metrics.base import Against, Batch, ContentMetric, Metric, MetricResult, SegmentStats
from .metrics.identity import MetricId, assign_labels
from .records import Record, group_by_system
from .results import Comparison, ScoreResult
from .progress import Progress


SIGNIFICANCE_METHODS = ("none", "paired-bootstrap", "approx-randomization")


@dataclass(frozen=True)
class ResamplingOptions:
    """Choices for confidence intervals and paired tests, stored with the result."""

    bootstrap: int = 1000
    confidence: float = 0.95
    significance: str = "none"
    baseline: str | None = None
    n_trials: int = 10000
    seed: int = 12345


def build_metrics(specs: Iterable[str | Metric], against: Sequence[str | Against], has_references: bool
                  ) -> list[Metric]:
    """Instantiate metric specs (``name`` or ``name:key=value``), one instance per requested ``against``.

    A content metric asked to compare with references is skipped when no record has any, unless the
    spec names ``against`` itself (then the missing references are an error at scoring time). Two specs that
    build the same metric (``bleu`` and ``bleu:lowercase=false``) are an error naming both.
    """
    sides = [Against.parse(a) for a in against]
    metrics: list[Metric] = []
    origins: list[str] = []
    for spec in specs:
        if isinstance(spec, Metric):
            metrics.append(spec)
            origins.append(repr(spec))
            continue
        name, params = registry.parse_spec(spec)
        cls = registry.metric_class(name)
        if "against" in params or not registry.accepts_against(cls):
            metrics.append(registry.create(name, **params))
            origins.append(spec)
            continue
        allowed = getattr(cls, "allowed_against", tuple(Against))
        for side in sides:
            if side not in allowed or (side is Against.REFERENCES and not has_references):
                continue
            metrics.append(registry.create(name, against=side, **params))
            origins.append(f"{spec} (against {side.value})")
    assign_labels([m.metric_id for m in metrics], origins)  # refuses duplicates early, naming both specs
    return metrics


def _check_unique_segments(groups: dict[str, list[Record]]) -> None:
    """A segment id appears once per system: two inputs under one system name would otherwise be mixed into one
    system's scores."""
    for system, recs in groups.items():
        seen: dict[str, int] = {}
        for k, r in enumerate(recs):
            if r.id in seen:
                raise InputError(f"system {system!r} has segment id {r.id!r} twice (records {seen[r.id] + 1} and "
                                 f"{k + 1} of that system): two inputs seem to share the system name {system!r}; "
                                 "give each system its own name")
            seen[r.id] = k


def _check_alignment(groups: dict[str, list[Record]]) -> None:
    """Systems compared by paired tests must cover the same segments in the same order."""
    systems = list(groups)
    first = [r.id for r in groups[systems[0]]]
    for system in systems[1:]:
        ids = [r.id for r in groups[system]]
        if ids != first:
            raise InputError(f"systems {systems[0]!r} ({len(first)} segments) and {system!r} ({len(ids)} segments) "
                             "do not cover the same segment ids in the same order; paired tests need aligned systems")


def finite_rows(*stats: np.ndarray) -> np.ndarray:
    """Mask of segments whose statistics are all finite in every given array (NaN marks an unscorable segment,
    e.g. WMD of an output with no in-vocabulary word; the metric's own aggregate leaves those out too)."""
    mask = np.ones(len(stats[0]), dtype=bool)
    for st in stats:
        mask &= np.isfinite(st).all(axis=1)
    return mask


def _add_interval(result: MetricResult, metric: Metric, options: ResamplingOptions) -> None:
    from .stats.significance import bootstrap_ci

    ok = finite_rows(result.stats)
    if ok.sum() < 2:
        result.extra["ci_skipped"] = f"{int(ok.sum())} segment(s) with finite statistics; an interval needs 2"
        return
    ci = bootstrap_ci(result.stats[ok], metric.aggregate, sum_then=metric.sum_aggregate(),
                      n_resamples=options.bootstrap, confidence=options.confidence, seed=options.seed)
    result.ci, result.ci_level = (float(ci.low), float(ci.high)), options.confidence
    if not ok.all():
        result.extra["ci_excluded_segments"] = int((~ok).sum())


def paired_comparison(metric: str, system: str, a: np.ndarray, baseline: str, b: np.ndarray,
                      aggregate: Callable[[np.ndarray], float] | None,
                      sum_then: Callable[[np.ndarray], float] | None, options: ResamplingOptions) -> Comparison:
    """``system`` (statistics ``a``) against ``baseline`` (``b``) on the segments finite in both, by the test that
    ``options`` names; ``aggregate``/``sum_then`` turn rows or summed rows into the corpus score."""
    from .stats.significance import approximate_randomization, paired_bootstrap

    ok = finite_rows(a, b)
    if options.significance == "paired-bootstrap":
        test = paired_bootstrap(a[ok], b[ok], aggregate, sum_then=sum_then, n_resamples=options.bootstrap,
                                seed=options.seed)
        n = options.bootstrap
    else:
        test = approximate_randomization(a[ok], b[ok], aggregate, sum_then=sum_then, n_trials=options.n_trials,
                                         seed=options.seed)
        n = options.n_trials
    return Comparison(metric=metric, system=system, baseline=baseline, delta=float(test.delta),
                      p_value=float(test.pvalue), method=options.significance, n_resamples=n, seed=options.seed,
                      excluded_segments=int((~ok).sum()))


def comparison_pairs(systems: Sequence[str], baseline: str | None) -> list[tuple[str, str]]:
    """The (system, baseline) pairs that paired tests compare: each system against ``baseline``, or every pair."""
    if baseline is not None:
        return [(s, baseline) for s in systems if s != baseline]
    return list(combinations(systems, 2))


def _stored_or_computed(stored: SegmentStats | None, metric: Metric, batch: Batch) -> SegmentStats:
    """A component's statistics from this run when it was scored, else computed now."""
    return stored if stored is not None else metric.compute(batch)


def metric_labels(metrics: Sequence[Metric]) -> list[MetricId]:
    """The ids of one run's metrics, labelled so that every column name is unique (see
    :func:`styleval.metrics.identity.assign_labels`)."""
    return assign_labels([m.metric_id for m in metrics])


def score_records(records: Sequence[Record], metrics: Sequence[Metric], *,
                  options: ResamplingOptions = ResamplingOptions(), progress: Progress | None = None) -> ScoreResult:
    """Score every system in ``records`` with every metric; add intervals and paired tests as asked."""
    if not records:
        raise InputError("no records to score")
    if options.significance not in SIGNIFICANCE_METHODS:
        raise InputError(f"significance must be one of {', '.join(SIGNIFICANCE_METHODS)}, got {options.significance!r}")
    groups = group_by_system(records)
    _check_unique_segments(groups)
    ids = metric_labels(metrics)
    batches = {system: Batch.from_records(recs) for system, recs in groups.items()}
    total = len(metrics) * len(batches)
    done = 0
    # plain metrics first, so that composites (hm, gm, j) reuse their components' statistics from this run
    order = sorted(range(len(metrics)), key=lambda k: bool(metrics[k].components()))
    by_position: dict[int, list[MetricResult]] = {}
    computed: dict[tuple[MetricId, str], SegmentStats] = {}
    for k in order:
        metric, mid = metrics[k], ids[k]
        for system, batch in batches.items():
            if progress:
                progress(f"{mid.label} · {system}", done, total)
            if metric.components():
                metric.check_batch(batch)
                parts = {role: _stored_or_computed(computed.get((comp.metric_id, system)), comp, batch)
                         for role, comp in metric.components().items()}
                stats = metric.combine(parts)
            else:
                stats = metric.compute(batch)
                computed[(mid, system)] = stats
            result = metric.result(batch, stats, mid)
            if options.bootstrap > 0:
                _add_interval(result, metric, options)
            by_position.setdefault(k, []).append(result)
            done += 1
    results = [r for k in range(len(metrics)) for r in by_position.get(k, [])]
    if progress:
        progress("done", done, total)

    comparisons: list[Comparison] = []
    if options.significance != "none" and len(batches) > 1:
        _check_alignment(groups)
        systems = list(batches)
        if options.baseline is not None and options.baseline not in batches:
            raise InputError(f"baseline system {options.baseline!r} not found; systems: {', '.join(systems)}")
        by_key = {(r.metric, r.system): r for r in results}
        for metric, mid in zip(metrics, ids):
            for system, baseline in comparison_pairs(systems, options.baseline):
                a, b = by_key[(mid.label, system)], by_key[(mid.label, baseline)]
                comparisons.append(paired_comparison(mid.label, system, a.stats, baseline, b.stats,
                                                     metric.aggregate, metric.sum_aggregate(), options))
    settings = {"bootstrap": options.bootstrap, "confidence": options.confidence, "seed": options.seed,
                "significance": options.significance, "baseline": options.baseline,
                "n_trials": options.n_trials if options.significance == "approx-randomization" else None,
                "systems": list(batches), "n_records": len(records)}
    return ScoreResult(results=results, comparisons=comparisons, settings=settings)


Modifier = Callable[[ContentMetric], "Metric | None"]
"""Builds a modified variant of a content metric (style masking, entity-aware, ...), or None where the
modifier does not apply to that metric."""


def with_modifiers(metrics: Sequence[Metric], modifiers: Sequence[Modifier]) -> list[Metric]:
    """Each metric followed by its modified variants; modifiers apply to content metrics only."""
    out: list[Metric] = []
    for metric in metrics:
        out.append(metric)
        if isinstance(metric, ContentMetric):
            out.extend(v for v in (modify(metric) for modify in modifiers) if v is not None)
    return out


def score(records: Sequence[Record], metrics: Iterable[str | Metric] = ("bleu", "chrf"), *,
          against: Sequence[str] = ("source", "references"), modifiers: Sequence[Modifier] = (),
          bootstrap: int = 1000, confidence: float = 0.95,
          significance: str = "none", baseline: str | None = None, seed: int = 12345,
          progress: Progress | None = None) -> ScoreResult:
    """Score records (from any reader) with metrics given by name, spec or instance.

    ``modifiers`` add, after each content metric, a variant built by each modifier, e.g.
    ``lambda m: StyleMask(inner=m, lexicon="lexicon.json")``.

    >>> from styleval import Record, score
    >>> recs = [Record("1", "i luv it", "I love it.", ["I love it."], system="A")]
    >>> round(score(recs, ["bleu"], bootstrap=0).get("bleu/ref", "A").corpus_score, 1)
    100.0
    """
    records = list(records)
    has_refs = any(r.references for r in records)
    built = with_modifiers(build_metrics(metrics, against, has_refs), modifiers)
    if not built:
        raise InputError("no metric to compute: the metrics asked for need references and none were given")
    options = ResamplingOptions(bootstrap=bootstrap, confidence=confidence, significance=significance,
                                baseline=baseline, seed=seed)
    return score_records(records, built, options=options, progress=progress)
