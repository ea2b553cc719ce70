"""chrF (Popović, 2015) and chrF++ (Popović, 2017) as computed by sacrebleu.

Statistics per segment are sacrebleu's ``[hyp, ref, match]`` counts per character n-gram order
(then per word n-gram order for chrF++), taken from the reference with the best segment F-score.
Corpus score = ``sacrebleu.corpus_chrf`` (from summed statistics); segment score =
``sacrebleu.sentence_chrf``. 0-100 scale.

The statistics are sacrebleu's counts computed faster (same integers): an output's n-grams are extracted once
per process (shared by the source and reference sides and by chrF and chrF++), matches are summed over the
n-grams common to both sides only, and segment scores from statistics run sacrebleu's formula on whole columns
(the same floating-point operations in the same order).
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any, ClassVar, Sequence

import numpy as np

from ..base import Against
from ..registry import register
from ._common import check_bool, check_number
from ._sacrebleu import SacrebleuMetric
from ._common import check_lengths

_Ngrams = tuple[tuple[Counter, int], ...]  # per order: the n-gram counts and their total


def _with_totals(counters: list[Counter]) -> _Ngrams:
    return tuple((c, sum(c.values())) for c in counters)


@lru_cache(maxsize=1 << 16)
def _char_ngrams(text: str, order: int, whitespace: bool) -> _Ngrams:
    from sacrebleu.metrics.helpers import extract_all_char_ngrams

    return _with_totals(extract_all_char_ngrams(text, order, whitespace))


@lru_cache(maxsize=1 << 16)
def _word_ngrams(text: str, order: int) -> _Ngrams:
    from sacrebleu.metrics.chrf import CHRF as SacreCHRF
    from sacrebleu.metrics.helpers import extract_word_ngrams

    words = SacreCHRF._remove_punctuation(_PUNCT_SPLITTER, text)  # type: ignore[arg-type]  # uses no CHRF state
    return _with_totals([extract_word_ngrams(words, n) for n in range(1, order + 1)])


class _PunctSplitter:
    """What sacrebleu's ``CHRF._remove_punctuation`` reads from its instance."""

    from sacrebleu.metrics.chrf import CHRF as _SacreCHRF

    _PUNCTS = _SacreCHRF._PUNCTS


_PUNCT_SPLITTER = _PunctSplitter()


def _match_stats(hyp: _Ngrams, ref: _Ngrams) -> list[int]:
    """sacrebleu's ``_get_match_statistics`` for every order: [hyp count (0 if the reference has no n-gram of
    that order), ref count, matches]."""
    out: list[int] = []
    for (h, h_total), (r, r_total) in zip(hyp, ref):
        common = h.keys() & r.keys()  # the loops below run in C
        match = sum(map(min, map(h.__getitem__, common), map(r.__getitem__, common)))
        out += (h_total if r else 0, r_total, match)
    return out


@register
class CHRF(SacrebleuMetric):
    name = "chrf"
    parameter_help: ClassVar[dict[str, str]] = {
        "char_order": "longest character n-gram",
        "word_order": "longest word n-gram (0: chrF, 2: chrF++)",
        "beta": "recall weight of the F-score",
        "whitespace": "keep whitespace in character n-grams",
        "eps_smoothing": "sacrebleu's epsilon smoothing instead of chrF++'s effective order",
    }
    reference = ("sacrebleu CHRF (word_order=0): sentence_chrf and corpus_chrf; equal within 1e-9 "
                 "(tests/test_lexical_metrics.py)")
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

    def _ngrams(self, text: str) -> _Ngrams:
        grams = _char_ngrams(text, self.char_order, self.whitespace)
        if self.word_order > 0:
            grams = grams + _word_ngrams(text, self.word_order)
        return grams

    def reference_info(self, comparisons: Sequence[Sequence[str]]) -> list[Any]:  # type: ignore[override]
        pre = self._sb._preprocess_segment
        return self._ref_cache.get(comparisons, lambda: [[self._ngrams(pre(r)) for r in refs if r is not None]
                                                          for refs in comparisons])

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        """sacrebleu's statistics against the reference with the best segment F-score (the first on ties)."""
        check_lengths(self.name, outputs, comparisons)
        sb = self._sb
        rows = np.zeros((len(outputs), self.n_stats), dtype=float)
        for k, (hyp, refs) in enumerate(zip(outputs, self.reference_info(comparisons))):
            grams = self._ngrams(sb._preprocess_segment(hyp))
            best: list[int] = []
            best_f = -1.0
            for ref in refs:
                stats = _match_stats(grams, ref)
                f = sb._compute_f_score(stats)
                if f > best_f:
                    best_f, best = f, stats
            if best:
                rows[k] = best
        return rows

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        """sacrebleu's ``_compute_f_score`` of each row, on whole columns (same operations, same order)."""
        st = np.rint(np.asarray(stats, dtype=float)).reshape(-1, self.n_stats)
        n = len(st)
        eps = 1e-16
        factor = self.beta ** 2
        score = np.zeros(n)
        avg_prec, avg_rec, eff = np.zeros(n), np.zeros(n), np.zeros(n, dtype=int)
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in range(self.char_order + self.word_order):
                n_hyp, n_ref, n_match = st[:, 3 * i], st[:, 3 * i + 1], st[:, 3 * i + 2]
                prec = np.where(n_hyp > 0, n_match / np.where(n_hyp > 0, n_hyp, 1), eps)
                rec = np.where(n_ref > 0, n_match / np.where(n_ref > 0, n_ref, 1), eps)
                denom = factor * prec + rec
                score = score + np.where(denom > 0, (1 + factor) * prec * rec / np.where(denom > 0, denom, 1), eps)
                both = (n_hyp > 0) & (n_ref > 0)
                avg_prec = np.where(both, avg_prec + prec, avg_prec)
                avg_rec = np.where(both, avg_rec + rec, avg_rec)
                eff = eff + both
            if self.eps_smoothing:
                return 100 * score / (self.char_order + self.word_order)
            has = eff > 0
            avg_prec = np.where(has, avg_prec / np.where(has, eff, 1), 0.0)
            avg_rec = np.where(has, avg_rec / np.where(has, eff, 1), 0.0)
            pos = (avg_prec + avg_rec) != 0
            out = (1 + factor) * avg_prec * avg_rec
            out = out / np.where(pos, (factor * avg_prec) + avg_rec, 1)
        return np.where(pos, 100 * out, 0.0)

    def _corpus_from_sums(self, sums: list[float]) -> float:
        return float(self._sb._compute_f_score([int(round(v)) for v in sums]))


@register
class CHRFPlusPlus(CHRF):
    name = "chrf++"
    reference = "sacrebleu CHRF (word_order=2); equal within 1e-9 (tests/test_lexical_metrics.py)"
    description = ("sacrebleu chrF++ (0-100): chrF with word unigrams and bigrams (word_order=2); "
                   "multi-reference (best reference)")

    def __init__(self, *, against: str | Against = "references", char_order: int = 6, word_order: int = 2,
                 beta: int = 2, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False) -> None:
        super().__init__(against=against, char_order=char_order, word_order=word_order, beta=beta,
                         lowercase=lowercase, whitespace=whitespace, eps_smoothing=eps_smoothing)
