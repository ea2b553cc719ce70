"""chrF (Popović, 2015) and chrF++ (Popović, 2017) as computed by sacrebleu.

Statistics per segment are sacrebleu's ``[hyp, ref, match]`` counts per character n-gram order
(then per word n-gram order for chrF++), taken from the reference with the best segment F-score.
Corpus score = ``sacrebleu.corpus_chrf`` (from summed statistics); segment score =
``sacrebleu.sentence_chrf``. 0-100 scale.
"""
from __future__ import annotations

import numpy as np

from ..base import Against
from ..registry import register
from ._common import check_bool, check_number
from ._sacrebleu import SacrebleuMetric


@register
class CHRF(SacrebleuMetric):
    name = "chrf"
    version = "1"
    higher_is_better = True
    value_range = (0.0, 100.0)
    description = "sacrebleu chrF (0-100): character n-gram F-score (beta=2); multi-reference (best reference)"

    def __init__(self, *, against: str | Against = "references", char_order: int = 6, word_order: int = 0,
                 beta: int = 2, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False) -> None:
        from sacrebleu.metrics.chrf import CHRF as SacreCHRF

        self.against = Against.parse(against)
        check_number(self.name, "char_order", char_order, low=1, high=20, integer=True)
        check_number(self.name, "word_order", word_order, low=0, high=10, integer=True)
        check_number(self.name, "beta", beta, low=0)
        check_bool(self.name, "lowercase", lowercase)
        check_bool(self.name, "whitespace", whitespace)
        check_bool(self.name, "eps_smoothing", eps_smoothing)
        self.char_order = char_order
        self.word_order = word_order
        self.beta = beta
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing
        self._sb = SacreCHRF(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
                             whitespace=whitespace, eps_smoothing=eps_smoothing)
        self._init_cache()

    @property
    def n_stats(self) -> int:
        return 3 * (self.char_order + self.word_order)

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=float)
        return np.array([self._sb._compute_f_score([int(round(v)) for v in row]) for row in stats], dtype=float)

    def _corpus_from_sums(self, sums: list[float]) -> float:
        return float(self._sb._compute_f_score([int(round(v)) for v in sums]))


@register
class CHRFPlusPlus(CHRF):
    name = "chrf++"
    description = ("sacrebleu chrF++ (0-100): chrF with word unigrams and bigrams (word_order=2); "
                   "multi-reference (best reference)")

    def __init__(self, *, against: str | Against = "references", char_order: int = 6, word_order: int = 2,
                 beta: int = 2, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False) -> None:
        super().__init__(against=against, char_order=char_order, word_order=word_order, beta=beta,
                         lowercase=lowercase, whitespace=whitespace, eps_smoothing=eps_smoothing)
