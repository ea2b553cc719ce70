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

    @property
    def nrefs(self) -> int:
        return max((len(r) for r in self.references), default=0)


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
    description: ClassVar[str] = ""
    libraries: ClassVar[tuple[str, ...]] = ()

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
    def display_name(self) -> str:
        return self.name

    # -- the two stages ---------------------------------------------------------------------
    @abstractmethod
    def segment_stats(self, batch: Batch) -> np.ndarray:
        """Per-segment sufficient statistics, shape (n_segments, n_stats)."""

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        """Segment scores from statistics; by default the first column is the score."""
        return np.asarray(stats, dtype=float)[:, 0]

    def aggregate(self, stats: np.ndarray) -> float:
        """Corpus score from (possibly resampled) statistics; by default the mean segment score."""
        scores = self.scores_from_stats(stats)
        return float(np.mean(scores)) if len(scores) else float("nan")

    def sum_aggregate(self) -> "Callable[[np.ndarray], float] | None":
        """For metrics whose corpus score is a function of the column sums of their statistics (BLEU, chrF,
        TER): that function, so resampling can sum statistics by matrix products. ``None`` otherwise."""
        return None

    # -- identity ---------------------------------------------------------------------------
    def resources(self) -> dict[str, str]:
        """Identity of models or lexicons used (path or id and a content hash)."""
        return {}

    def signature(self, batch: Batch | None = None) -> Signature:
        libs = {lib: library_version(lib) for lib in self.libraries}
        libs["styleval"] = library_version("styleval")
        params = {k: v for k, v in self.get_params().items() if k != "against"}
        against = getattr(self, "against", None)
        nrefs = None
        if isinstance(against, Against):
            nrefs = 1 if against is Against.SOURCE else (batch.nrefs if batch is not None else None)
            against = against.value
        return Signature(metric=self.name, version=self.version, against=against, nrefs=nrefs,
                         params=params, resources=self.resources(), libraries=libs)

    # -- convenience --------------------------------------------------------------------------
    def check_batch(self, batch: Batch) -> None:
        """Raise a clear error when the batch lacks what the metric needs."""
        if "target_style" in self.needs and any(d is None for d in batch.directions):
            raise InputError(f"metric {self.name!r} needs the transfer direction of every segment "
                             f"(system {batch.system!r}); pass --direction or a 'direction' column")

    def score(self, batch: Batch) -> MetricResult:
        """Compute statistics, segment scores and the corpus score of one system."""
        self.check_batch(batch)
        stats = np.asarray(self.segment_stats(batch), dtype=float)
        if stats.ndim != 2 or stats.shape[0] != len(batch):
            raise RuntimeError(f"{self.name}: statistics of shape {stats.shape} for {len(batch)} segments")
        flags: dict[str, list[str]] = {}
        empty = [i for i, o in zip(batch.ids, batch.outputs) if not o.strip()]
        if empty:
            flags["empty_output"] = empty
        return MetricResult(
            metric=self.display_name, system=batch.system, ids=list(batch.ids),
            segment_scores=self.scores_from_stats(stats), stats=stats, corpus_score=self.aggregate(stats),
            signature=self.signature(batch), higher_is_better=self.higher_is_better, aspect=self.aspect,
            flags=flags,
        )


class ContentMetric(Metric):
    """A metric comparing each output with its source or with its references.

    With ``against="references"`` a segment's statistics use all of its references (multi-reference);
    with ``against="source"`` the source is the single reference.
    """

    aspect = Aspect.CONTENT
    against: Against

    @property
    def display_name(self) -> str:
        return f"{self.name}/{self.against.short}"

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

    def segment_stats(self, batch: Batch) -> np.ndarray:
        return self.pair_stats(batch.outputs, self.comparisons(batch))

    @abstractmethod
    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        """Statistics of each output against its list of comparison texts."""
