"""Common ground of the metrics computed with sacrebleu (BLEU, chrF, TER).

sacrebleu already works in two stages: ``_extract_reference_info`` / ``_compute_segment_statistics``
give per-segment sufficient statistics, ``_compute_score_from_stats`` turns (summed) statistics into a
score. These classes call those stages directly, so that

* the statistics of a segment are exactly those sacrebleu computes for it (in ``sentence_score``
  and in ``corpus_score``), and the corpus score from summed statistics is exactly sacrebleu's
  corpus score;
* a segment's references are just its list of comparison texts: segments may have different
  numbers of references. This is what sacrebleu does when a reference stream holds ``None`` for a
  segment (``_cache_references`` drops the ``None`` entries per segment); ``None`` entries are
  dropped here too, while an empty string stays an (empty) reference, as in sacrebleu;
* pre-processed reference information is cached per metric instance and keyed by the texts, so
  scoring the next system against the same references (or sources) skips that work.

Those stages are private in sacrebleu. Its public API cannot replace them: ``sentence_score`` exposes BLEU's counts
and TER's edits but not chrF's per-order statistics, and it preprocesses every segment's references again for each
system (studies/log.md, "sacrebleu's private stages", has the measurement). So the members used are listed in
:data:`PRIVATE_API`, the dependency is pinned to the minor versions checked (pyproject.toml), and
:func:`check_private_api` refuses, in one line naming the member, a sacrebleu whose private API changed shape.
"""
from __future__ import annotations

import inspect
from abc import abstractmethod
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from ...errors import ResourceUnavailableError
from ..base import ContentMetric
from ._common import ComparisonCache, check_lengths

#: sacrebleu's private members the metrics call, with the parameters each must take (after ``self``); chrF's
#: ``_compute_f_score`` is checked on the classes that have it.
PRIVATE_API: dict[str, tuple[str, ...]] = {
    "_preprocess_segment": ("sent",),
    "_extract_reference_info": ("refs",),
    "_compute_segment_statistics": ("hypothesis", "ref_kwargs"),
    "_compute_score_from_stats": ("stats",),
}
CHRF_PRIVATE_API: dict[str, tuple[str, ...]] = {"_compute_f_score": ("statistics",)}
_CHECKED: set[str] = set()


def check_private_api(sacrebleu_class: type) -> None:
    """Refuse a sacrebleu whose private stages (:data:`PRIVATE_API`) are missing or take other parameters, naming
    the member, instead of scoring with them (a metric checks its class once per process)."""
    from ...signature import library_version

    wanted = dict(PRIVATE_API)
    if sacrebleu_class.__name__ == "CHRF":
        wanted.update(CHRF_PRIVATE_API)
    for name, params in wanted.items():
        member = getattr(sacrebleu_class, name, None)
        found = tuple(inspect.signature(member).parameters)[1:] if callable(member) else None
        if found != params:
            shape = "is missing" if found is None else f"takes ({', '.join(found)})"
            raise ResourceUnavailableError(
                f"sacrebleu {library_version('sacrebleu')}'s private {sacrebleu_class.__name__}.{name} {shape}, not "
                f"({', '.join(params)}): styleval's BLEU, chrF and TER statistics call it; install the sacrebleu "
                "versions pyproject.toml pins")


def sequential_sum(stats: np.ndarray, block: int = 65_536) -> list[float]:
    """Column sums in row order (as sacrebleu's ``sum_of_lists``), so float statistics add up bit for bit.

    Summed a block of rows at a time (each block's running sum starts from the total so far), so that the extra
    memory is one block, not a copy of all the rows."""
    stats = np.asarray(stats, dtype=float)
    if len(stats) == 0:
        return [0.0] * (stats.shape[1] if stats.ndim == 2 else 0)
    total = stats[:1].copy()
    for start in range(1, len(stats), block):
        total = np.cumsum(np.concatenate([total, stats[start:start + block]]), axis=0)[-1:]
    return total[0].tolist()


class SacrebleuMetric(ContentMetric):
    """A content metric whose statistics and scores are sacrebleu's."""

    libraries: ClassVar[tuple[str, ...]] = ("sacrebleu",)
    value_range: ClassVar[tuple[float, float]] = (0.0, 100.0)

    _sb: Any  # the sacrebleu metric object (made once per instance)

    def _init_cache(self) -> None:
        cls = type(self._sb)
        if cls.__qualname__ not in _CHECKED:
            check_private_api(cls)
            _CHECKED.add(cls.__qualname__)
        self._ref_cache = ComparisonCache()

    @property
    @abstractmethod
    def n_stats(self) -> int:
        """Number of statistics per segment."""

    def reference_info(self, comparisons: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
        """sacrebleu's pre-processed reference information of each segment (cached)."""
        sb = self._sb

        def build() -> list[dict[str, Any]]:
            return [sb._extract_reference_info([sb._preprocess_segment(r) for r in refs if r is not None])
                    for refs in comparisons]

        return self._ref_cache.get(comparisons, build)

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        check_lengths(self.name, outputs, comparisons)
        infos = self.reference_info(comparisons)
        sb = self._sb
        rows = [sb._compute_segment_statistics(sb._preprocess_segment(hyp), info)
                for hyp, info in zip(outputs, infos)]
        return np.array(rows, dtype=float).reshape(len(outputs), self.n_stats)

    def aggregate(self, stats: np.ndarray) -> float:
        stats = np.asarray(stats, dtype=float)
        if len(stats) == 0:
            return float("nan")
        return float(self._corpus_from_sums(sequential_sum(stats)))

    def sum_aggregate(self) -> Callable[[np.ndarray], float]:
        return lambda sums: float(self._corpus_from_sums(list(sums)))

    @abstractmethod
    def _corpus_from_sums(self, sums: list[float]) -> float:
        """Corpus score from column sums of the statistics."""
