"""The Metric protocol: per-segment statistics first, aggregation second.

Keeping the two stages apart lets bootstrap resampling and paired tests work on cached
statistics (as sacrebleu does) instead of re-running a metric.
"""
from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from ..errors import InputError
from ..records import Direction, Record
from ..signature import Signature, library_version
from .identity import MetricId, freeze_params, spec_tokens


class Aspect(str, Enum):
    STYLE = "style"
    CONTENT = "content"
    FLUENCY = "fluency"
    OVERALL = "overall"


class Against(str, Enum):
    """What a content metric compares the output with."""

    SOURCE = "source"
    REFERENCES = "references"

    @classmethod
    def parse(cls, value: "str | Against") -> "Against":
        if isinstance(value, Against):
            return value
        aliases = {"src": cls.SOURCE, "source": cls.SOURCE, "ref": cls.REFERENCES, "refs": cls.REFERENCES,
                   "reference": cls.REFERENCES, "references": cls.REFERENCES}
        try:
            return aliases[value.lower()]
        except KeyError:
            raise InputError(f"'against' must be 'source' or 'references', got {value!r}") from None

    @property
    def short(self) -> str:
        return "src" if self is Against.SOURCE else "ref"


@dataclass
class Batch:
    """The texts of one system, aligned by segment, as metrics receive them."""

    ids: list[str]
    outputs: list[str]
    sources: list[str]
    references: list[list[str]]
    directions: list[Direction | None]
    system: str = "system"

    @classmethod
    def from_records(cls, records: Sequence[Record]) -> "Batch":
        return cls(
            ids=[r.id for r in records],
            outputs=[r.output for r in records],
            sources=[r.source for r in records],
            references=[list(r.references) for r in records],
            directions=[r.direction for r in records],
            system=records[0].system if records else "system",
        )

    def __len__(self) -> int:
        return len(self.outputs)

    def blanks_emptied(self) -> "Batch":
        """This batch with every whitespace-only output, source and reference made empty, for metrics that would
        otherwise read the whitespace (a language model's prompt) and score it apart from an empty text."""
        def blank(text: str) -> str:
            return text if text.strip() else ""

        return Batch(ids=self.ids, outputs=[blank(t) for t in self.outputs], sources=[blank(t) for t in self.sources],
                     references=[[blank(t) for t in refs] for refs in self.references], directions=self.directions,
                     system=self.system)

    @property
    def nrefs(self) -> int:
        return max((len(r) for r in self.references), default=0)


@dataclass
class SegmentStats:
    """What a metric computes for a batch: per-segment statistics and what it learnt on the way.

    ``values``: sufficient statistics, shape (n_segments, n_stats), the only thing resampling needs;
    ``flags``: flag name -> row indices of the segments it marks (e.g. ``truncated``, ``no_vocabulary_word``);
    ``extra``: run facts reported with the result (OOV rates, counts);
    ``resources``: resources resolved while computing (the style model ``auto`` chose, the LM backend), which join
    the signature.
    """

    values: np.ndarray
    flags: dict[str, list[int]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, stats: "SegmentStats | np.ndarray") -> "SegmentStats":
        """Wrap a bare statistics array (what simple metrics return) as SegmentStats."""
        if isinstance(stats, SegmentStats):
            return stats
        return cls(values=np.asarray(stats, dtype=float))

    # read like the statistics array, so callers that only need the numbers can index it
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.values, dtype=dtype)

    def __getitem__(self, key: Any) -> Any:
        return self.values[key]

    def __len__(self) -> int:
        return len(self.values)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self.values))


@dataclass
class MetricResult:
    """Scores of one metric for one system: segment scores, cached statistics, corpus score, signature."""

    metric: str
    system: str
    ids: list[str]
    segment_scores: np.ndarray
    stats: np.ndarray
    corpus_score: float
    signature: Signature
    higher_is_better: bool
    aspect: Aspect
    flags: dict[str, list[str]] = field(default_factory=dict)
    ci: tuple[float, float] | None = None
    ci_level: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    metric_id: MetricId | None = None


class Metric(ABC):
    """Base class of every metric.

    Subclasses declare class facts and keyword-only constructor parameters; the parameters are read
    back by introspection for ``repr`` and the signature, as scikit-learn estimators do.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    aspect: ClassVar[Aspect]
    needs: ClassVar[frozenset[str]] = frozenset()  # subset of {"source", "references", "target_style"}
    higher_is_better: ClassVar[bool] = True
    value_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    #: The range mapped linearly onto [0, 1] (then clipped) when the metric enters an overall score; None (the
    #: default for an unbounded ``value_range``) means it has no such map and needs a threshold there.
    unit_range: ClassVar[tuple[float, float] | None] = None
    description: ClassVar[str] = ""
    libraries: ClassVar[tuple[str, ...]] = ()
    #: True when the run facts are counts that add up over batches (then a streamed run reports them too)
    facts_add_up: ClassVar[bool] = False
    #: parameter -> what it means (``styleval metrics NAME``); inherited, and shared meanings live in ``guide.COMMON``
    parameter_help: ClassVar[dict[str, str]] = {}
    #: True for a novelty or distance measure filed as higher-is-better (PINC: higher = further from the source):
    #: against human judgments of its aspect (content preservation) agreement reads as a negative correlation, so
    #: the benchmark negates it, as it negates lower-is-better metrics, and a positive figure means agreement
    measures_novelty: ClassVar[bool] = False
    #: the implementation this metric's scores equal, and the test that checks it ('' when none)
    reference: ClassVar[str] = ""
    #: True when a segment's statistics depend on that segment alone, not on the others scored with it (an
    #: instance may say otherwise, e.g. BERTScore with idf); only then may a corpus be scored in chunks
    batch_independent: ClassVar[bool] = True
    #: why it is not batch-independent (shown when a streamed run refuses it)
    batch_dependence: ClassVar[str] = ""
    #: the segment value at or past which an output passes (``>=``, or ``<=`` when lower is better), where the metric
    #: has a documented one: J's fluency factor takes it when no ``fluency_threshold`` is given (None: no such value)
    pass_threshold: ClassVar[float | None] = None

    @property
    def streamable(self) -> bool:
        """Whether ``score_stream`` (chunks, a statistics cache, Ray) gives this metric the numbers of one pass:
        exactly when its segment statistics are batch-independent."""
        return self.batch_independent

    # -- parameters -------------------------------------------------------------------------
    @classmethod
    def param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]

    def get_params(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.param_names()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    @property
    def metric_id(self) -> MetricId:
        """This metric's identity (name, parameters, ``against``, modifiers); renders its display name."""
        against = getattr(self, "against", None)
        params = {k: v for k, v in self.get_params().items() if k != "against"}
        return MetricId(name=self.name, params=freeze_params(params),
                        against=against.value if isinstance(against, Against) else None,
                        tokens=spec_tokens({k: v for k, v in params.items() if k in self.param_names()}))

    @property
    def display_name(self) -> str:
        return self.metric_id.label

    def to_unit(self, values: Any) -> np.ndarray:
        """Scores mapped onto [0, 1] for overall scores: ``unit_range`` (or a finite ``value_range``) linearly,
        then clipped; higher stays better. Raises when the metric declares no such map."""
        lo, hi = self.unit_range or self.value_range
        if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
            raise InputError(f"metric {self.display_name!r} has no map to [0, 1] (range {self.value_range}); "
                             "use it through a threshold")
        v = (np.asarray(values, dtype=float) - lo) / (hi - lo)
        if not self.higher_is_better:
            v = 1.0 - v
        return np.clip(v, 0.0, 1.0)

    def components(self) -> "dict[str, Metric]":
        """The metrics a composite metric combines, by role (empty for a plain metric); see
        :class:`styleval.metrics.overall.CompositeMetric`."""
        return {}

    def combine(self, parts: "dict[str, SegmentStats]") -> "SegmentStats":
        """A composite's statistics from its components' statistics (plain metrics have no components)."""
        raise NotImplementedError(f"{self.name} is not a composite metric")

    # -- the two stages ---------------------------------------------------------------------
    @abstractmethod
    def segment_stats(self, batch: Batch) -> "SegmentStats | np.ndarray":
        """Per-segment sufficient statistics, shape (n_segments, n_stats): a :class:`SegmentStats`, or the bare
        array when the metric has no flags or resolved resources to report."""

    @property
    def n_stats(self) -> int:
        """How many statistics columns :meth:`segment_stats` returns: declared, never learnt from a run (a
        composite's layout is built from its components' ``n_stats``). One unless a metric says otherwise."""
        return 1

    def merge_facts(self, earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
        """One system's run facts (``SegmentStats.extra``) from two of its batches: numbers add up when the metric's
        facts are counts (``facts_add_up``: requests, tokens, costs), else the later batch's value of a key wins."""
        if not self.facts_add_up:
            return {**earlier, **later}
        out = dict(earlier)
        for key, value in later.items():
            before = out.get(key)
            numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (before, value))
            out[key] = before + value if numbers else value
        return out

    def check_complete(self, systems: "dict[str, tuple[int, dict[str, list[str]]]]") -> None:
        """Raise (a :class:`~styleval.errors.StyleEvalError`) when the run's statistics may not make a corpus score
        under this metric's settings: given each system's number of segments and flags (flag -> segment ids),
        before any result is made. Nothing to check by default; ``llm_judge`` refuses unrated segments here."""
        return None

    def compute(self, batch: Batch) -> SegmentStats:
        """:meth:`segment_stats` as :class:`SegmentStats`, checked against the declared shape."""
        self.check_batch(batch)
        out = SegmentStats.of(self.segment_stats(batch))
        out.values = np.asarray(out.values, dtype=float)
        if out.values.ndim != 2 or out.values.shape != (len(batch), self.n_stats):
            raise RuntimeError(f"{self.name}: statistics of shape {out.values.shape} for {len(batch)} segments; "
                               f"{self.n_stats} column(s) declared")
        return out

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        """Segment scores from statistics; by default the first column is the score."""
        return np.asarray(stats, dtype=float)[:, 0]

    def aggregate(self, stats: np.ndarray) -> float:
        """Corpus score from (possibly resampled) statistics; by default the mean segment score."""
        scores = self.scores_from_stats(stats)
        return float(np.mean(scores)) if len(scores) else float("nan")

    def resample_stats(self, stats: np.ndarray) -> np.ndarray:
        """The statistics intervals and paired tests resample, a segment left out when any of its values is not
        finite (NaN marks an unscorable segment); by default ``stats`` themselves. A metric whose statistics hold NaN
        in a column its :meth:`aggregate` does not read, for segments that are scored, gives them a finite value
        here, so that the interval covers every segment the score is made of."""
        return stats

    def sum_aggregate(self) -> "Callable[[np.ndarray], float] | None":
        """For metrics whose corpus score is a function of the column sums of their statistics (BLEU, chrF,
        TER): that function, so resampling can sum statistics by matrix products. ``None`` otherwise."""
        return None

    # -- identity ---------------------------------------------------------------------------
    def resources(self) -> dict[str, str]:
        """Identity of models or lexicons used (path or id and a content hash)."""
        return {}

    def signature(self, batch: Batch | None = None, resolved: dict[str, str] | None = None) -> Signature:
        """How scores are made; ``resolved``: resources a computation resolved (see :class:`SegmentStats`)."""
        libs = {lib: library_version(lib) for lib in self.libraries}
        libs["styleval"] = library_version("styleval")
        params = {k: (v.metric_id.spec() if isinstance(v, Metric) else v)  # components of composites: their spec
                  for k, v in self.get_params().items() if k != "against"}
        against = getattr(self, "against", None)
        nrefs = None
        if isinstance(against, Against):
            nrefs = 1 if against is Against.SOURCE else (batch.nrefs if batch is not None else None)
            against = against.value
        return Signature(metric=self.name, version=self.version, against=against, nrefs=nrefs,
                         params=params, resources={**self.resources(), **(resolved or {})}, libraries=libs)

    # -- convenience --------------------------------------------------------------------------
    def check_batch(self, batch: Batch) -> None:
        """Raise a clear error when the batch lacks what the metric needs."""
        if "target_style" in self.needs and any(d is None for d in batch.directions):
            raise InputError(f"metric {self.name!r} needs the transfer direction of every segment "
                             f"(system {batch.system!r}); pass --direction or a 'direction' column")

    def score(self, batch: Batch, metric_id: MetricId | None = None) -> MetricResult:
        """Compute statistics, segment scores and the corpus score of one system (``metric_id``: the labelled id
        the run gave this metric; its own by default)."""
        return self.result(batch, self.compute(batch), metric_id)

    def result(self, batch: Batch, computed: SegmentStats, metric_id: MetricId | None = None) -> MetricResult:
        """The result of one system from statistics already computed."""
        flags: dict[str, list[str]] = {}
        empty = [i for i, o in zip(batch.ids, batch.outputs) if not o.strip()]
        if empty:
            flags["empty_output"] = empty
        for flag, rows in computed.flags.items():
            if len(rows):
                flags[flag] = [batch.ids[i] for i in rows]
        return self.summarise(batch.system, computed.values, ids=batch.ids, flags=flags, extra=dict(computed.extra),
                              signature=self.signature(batch, computed.resources), metric_id=metric_id)

    def summarise(self, system: str, stats: np.ndarray, *, ids: Sequence[str] | None, flags: dict[str, list[str]],
                  extra: dict[str, Any], signature: Signature, metric_id: MetricId | None = None) -> MetricResult:
        """The result of one system from all its statistics rows: the corpus score, and with ``ids`` (one per row)
        the segment scores; without, a result of corpus figures only (``ids`` and segment scores empty)."""
        mid = metric_id or self.metric_id
        return MetricResult(
            metric=mid.label, system=system, ids=list(ids) if ids is not None else [],
            segment_scores=self.scores_from_stats(stats) if ids is not None else np.empty(0), stats=stats,
            corpus_score=self.aggregate(stats), signature=signature, higher_is_better=self.higher_is_better,
            aspect=self.aspect, flags=flags, extra=extra, metric_id=mid,
        )


class ContentMetric(Metric):
    """A metric comparing each output with its source or with its references.

    With ``against="references"`` a segment's statistics use all of its references (multi-reference);
    with ``against="source"`` the source is the single reference.
    """

    aspect = Aspect.CONTENT
    against: Against

    @property
    def needs(self) -> frozenset[str]:  # type: ignore[override]
        return frozenset({"source"} if self.against is Against.SOURCE else {"references"})

    def comparisons(self, batch: Batch) -> list[list[str]]:
        if self.against is Against.SOURCE:
            return [[s] for s in batch.sources]
        missing = [i for i, refs in zip(batch.ids, batch.references) if not refs]
        if missing:
            raise InputError(
                f"metric {self.display_name!r} needs references but {len(missing)} of {len(batch)} segments of "
                f"system {batch.system!r} have none (first: id {missing[0]!r}); give --reference files or "
                "score against the source")
        return batch.references

    def segment_stats(self, batch: Batch) -> "SegmentStats | np.ndarray":
        return self.pair_stats(batch.outputs, self.comparisons(batch))

    @abstractmethod
    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> "SegmentStats | np.ndarray":
        """Statistics of each output against its list of comparison texts (as :meth:`Metric.segment_stats`)."""
