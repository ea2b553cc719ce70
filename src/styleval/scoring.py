"""Score records in memory: the engine behind ``styleval.score`` and ``styleval score``.

The in-memory run is the streaming engine's path with one chunk: the worker side computes every metric's
statistics groups (:func:`styleval.engine.worker.compute_groups`: plain metrics, then composites from their
components' statistics), the driver (:class:`styleval.engine.driver.Driver`) keeps them in memory and reduces
them to corpus scores, bootstrap intervals and paired tests resampled from those statistics.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from .engine.driver import Driver, check_unique_ids, segment_digests
from .engine.metric_specs import Modifier, build_metrics, metric_labels, with_modifiers
from .engine.options import SIGNIFICANCE_METHODS, StatisticsOptions
from .engine.worker import compute_groups
from .errors import InputError
from .metrics.base import Metric
from .progress import Progress, reporting
from .records import Record, group_by_system
from .results import ScoreResult


__all__ = ["SIGNIFICANCE_METHODS", "Modifier", "StatisticsOptions", "build_metrics",
           "metric_labels", "score", "score_records", "with_modifiers"]


def _check_unique_segments(records: Sequence[Record]) -> None:
    """A segment id appears once per system (the engine's one check, :func:`check_unique_ids`), before any model
    runs: two inputs under one system name would otherwise be mixed into one system's scores."""
    numbers: dict[str, list[int]] = {}
    for k, r in enumerate(records, start=1):
        numbers.setdefault(r.system, []).append(k)
    for system, lines in numbers.items():
        ids = [records[k - 1].id for k in lines]
        check_unique_ids(system, segment_digests(ids), _RecordPlace(lines), ids)


class _RecordPlace:
    """Where a system's ``position``-th record lies: ``("records", its number among all records)``."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers

    def __call__(self, position: int) -> tuple[str, int]:
        return "records", self.numbers[position]


def score_records(records: Sequence[Record], metrics: Sequence[Metric], *,
                  options: StatisticsOptions | None = None, progress: Progress | None = None) -> ScoreResult:
    """Score every system in ``records`` with every metric; add intervals and paired tests as ``options`` ask
    (the defaults when None).

    ``progress`` hears one stage per metric and system, ``scoring K/N LABEL · SYSTEM [segments]`` counting the
    segments of that metric's earlier systems, the stages of the models inside it (``...: loading style model X``,
    ``...: encoding texts [texts]``), then the intervals and tests (:meth:`Driver.finalize`)."""
    if not records:
        raise InputError("no records to score")
    _check_unique_segments(records)
    sizes = {system: len(recs) for system, recs in group_by_system(records).items()}
    scoring = _ScoringStages(progress, len(metrics), sizes) if progress else None
    with reporting(scoring.inner if scoring else None):
        groups = compute_groups(metrics, records, list(range(1, len(records) + 1)), ["records"] * len(records),
                                step=scoring.step if scoring else None)
    driver = Driver(metrics, keep_segments=True)
    for group in groups:
        driver.reduce(group)
    return driver.finalize(options or StatisticsOptions(), progress=progress)


class _ScoringStages:
    """Turns the worker's steps and the models' reports into ``scoring`` stages for a progress callback."""

    def __init__(self, progress: Progress, n_metrics: int, sizes: dict[str, int]) -> None:
        self.progress, self.n_metrics, self.sizes = progress, n_metrics, sizes
        self.total = sum(sizes.values())
        self.label, self.system, self.k, self.done = "", "", 0, 0
        self.stage = "scoring"

    def step(self, label: str, system: str) -> None:
        """Before ``label`` computes ``system``'s statistics."""
        if label != self.label:
            self.label, self.k, self.done = label, self.k + 1, 0
        else:
            self.done += self.sizes[self.system]
        self.system = system
        self.stage = f"scoring {self.k}/{self.n_metrics} {label} · {system}"
        self.progress(f"{self.stage} [segments]", self.done, self.total)

    def inner(self, description: str, done: int, total: int) -> None:
        """A model's report from inside the current step; when its stage ends, the step's own stage shows again."""
        self.progress(f"{self.stage}: {description}", done, total)
        if done >= total:
            self.progress(f"{self.stage} [segments]", self.done, self.total)


def score(records: Iterable[Record], metrics: Iterable[str | Metric] = ("bleu", "chrf"), *,
          against: Sequence[str] = ("source", "references"), modifiers: Sequence[Modifier] = (),
          options: StatisticsOptions | None = None, progress: Progress | None = None,
          **statistics: Any) -> ScoreResult:
    """Score records (from any reader) with metrics given by name, spec or instance.

    ``options``: intervals and paired tests (:class:`StatisticsOptions`); its fields may also be given as
    keywords (``bootstrap=0``, ``significance="paired-bootstrap"``). ``modifiers`` add, after each content metric,
    a variant built by each modifier, e.g. ``lambda m: StyleMask(inner=m, lexicon="lexicon.json")``.

    >>> from styleval import Record, score
    >>> recs = [Record("1", "i luv it", "I love it.", ["I love it."], system="A")]
    >>> round(score(recs, ["bleu"], bootstrap=0).get("bleu/ref", "A").corpus_score, 1)
    100.0
    """
    opts = StatisticsOptions.given(options, **statistics)
    records = list(records)
    has_refs = any(r.references for r in records)
    built = with_modifiers(build_metrics(metrics, against, has_refs), modifiers)
    if not built:
        raise InputError("no metric to compute: the metrics asked for need references and none were given")
    return score_records(records, built, options=opts, progress=progress)
