"""TER (Snover et al., 2006) as computed by sacrebleu (lower is better).

Statistics per segment are sacrebleu's ``[edits, average reference length]``: the fewest edits
(shifts included) against any of the segment's references, and the mean length of those
references. Corpus score = ``sacrebleu.corpus_ter`` = 100 * sum(edits) / sum(avg ref len); segment
score = ``sacrebleu.sentence_ter``. Scores can exceed 100.
"""
from __future__ import annotations

import numpy as np

from ..base import Against
from ..registry import register
from ._common import check_bool
from ._sacrebleu import SacrebleuMetric


@register
class TER(SacrebleuMetric):
    name = "ter"
    version = "1"
    higher_is_better = False
    value_range = (0.0, float("inf"))
    description = "sacrebleu TER (0-100+, lower is better): edits per reference word; multi-reference"

    def __init__(self, *, against: str | Against = "references", normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False, case_sensitive: bool = False) -> None:
        from sacrebleu.metrics.ter import TER as SacreTER

        self.against = Against.parse(against)
        for param, value in (("normalized", normalized), ("no_punct", no_punct), ("asian_support", asian_support),
                             ("case_sensitive", case_sensitive)):
            check_bool(self.name, param, value)
        self.normalized = normalized
        self.no_punct = no_punct
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self._sb = SacreTER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                            case_sensitive=case_sensitive)
        self._init_cache()

    @property
    def n_stats(self) -> int:
        return 2

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=float)
        return np.array([self._sb._compute_score_from_stats([row[0], row[1]]).score for row in stats], dtype=float)

    def _corpus_from_sums(self, sums: list[float]) -> float:
        return float(self._sb._compute_score_from_stats(sums).score)
