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
from .records import Record, group_by_system, name_problem
from .results import ScoreResult


__all__ = ["SIGNIFICANCE_METHODS", "Modifier", "StatisticsOptions", "build_metrics",
           "metric_labels", "score", "score_records", "with_modifiers"]


def _check_unique_segments(records: Sequence[Record]) -> None:
    """A segment id appears once per system (the engine's one check, :func:`check_unique_ids`), before any model
    runs: two inputs under one system name would otherwise be mixed into one system's scores. A system name or id
    must be a non-blank label without control characters (:func:`name_problem`): an empty name or one holding a tab
    or a line break breaks every table printed or written."""
    numbers: dict[str, list[int]] = {}  # system -> the 1-based numbers of its records, grouped once
    for k, r in enumerate(records, start=1):
        numbers.setdefault(r.system, []).append(k)
    for system, lines in numbers.items():
        problem = name_problem(system) if isinstance(system, str) else None
        if problem:
            raise InputError(f"record {records[lines[0] - 1].id!r}: {problem}")
        bad = next((records[k - 1].id for k in lines
                    if isinstance(records[k - 1].id, str) and name_problem(records[k - 1].id, "segment id")), None)
        if bad is not None:
            raise InputError(f"system {system!r}: {name_problem(bad, 'segment id')}")
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

    ``progress`` hears one stage per metric and system, ``scoring K/N LABEL · SYSTEM [segments]`` counting that
    system's segments, the stages of the models inside it (``...: loading style model X``,
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
    result = driver.finalize(options or StatisticsOptions(), progress=progress)
    result.texts = {(r.system, r.id): (r.source, r.output, tuple(r.references)) for r in records}
    return result


class _ScoringStages:
    """Turns the worker's steps and the models' reports into ``scoring`` stages for a progress callback."""

    def __init__(self, progress: Progress, n_metrics: int, sizes: dict[str, int]) -> None:
        self.progress, self.n_metrics, self.sizes = progress, n_metrics, sizes
        self.label, self.system, self.k = "", "", 0
        self.stage = "scoring"

    def step(self, label: str, system: str) -> None:
        """Before ``label`` computes ``system``'s statistics: a stage counting that system's segments (not the
        whole corpus's: each system is scored on its own)."""
        if label != self.label:
            self.label, self.k = label, self.k + 1
        self.system = system
        self.stage = f"scoring {self.k}/{self.n_metrics} {label} · {system}"
        self.progress(f"{self.stage} [segments]", 0, self.sizes[system])

    def inner(self, description: str, done: int, total: int) -> None:
        """A model's report from inside the current step; when its stage ends, the step's own stage shows again."""
        self.progress(f"{self.stage}: {description}", done, total)
        if done >= total:
            self.progress(f"{self.stage} [segments]", 0, self.sizes[self.system])


def score(records: Iterable[Record], metrics: Iterable[str | Metric] = ("bleu", "chrf"), *,
          against: Sequence[str] = ("source", "references"), modifiers: Sequence[Modifier] = (),
          options: StatisticsOptions | None = None, progress: Progress | None = None,
          **statistics: Any) -> ScoreResult:
    """Score records (from any reader) with metrics given by name, spec or instance.

    ``options``: intervals and paired tests (:class:`StatisticsOptions`); its fields may also be given as
    keywords (``bootstrap=0``, ``significance="paired-bootstrap"``). ``modifiers`` add, after each content metric,
    a variant built by each modifier, e.g. ``lambda m: StyleMask(inner=m, lexicon="lexicon.json")``.

    ``progress``: a callable ``progress(description, done, total)`` that hears every stage (scoring each metric
    and system, loading models, encoding texts, intervals); ``styleval.terminal_progress()`` draws them::

        with styleval.terminal_progress() as bar:
            result = styleval.score(records, ["bleu", "sentence_cosine"], progress=bar)

    Third-party libraries' own bars and logs stay hidden. The result holds every number as pandas frames:
    ``result.corpus_table()`` (systems x metrics), ``result.to_dataframe("segment")`` (a row per segment score,
    with its ``source``, ``output`` and ``references``), ``result.to_dataframe("comparisons")`` (a row per paired
    test, given ``significance="paired-bootstrap"``), and ``result.signatures()``.

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
