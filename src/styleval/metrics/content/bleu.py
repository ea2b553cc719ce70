"""BLEU (Papineni et al., 2002) as computed by sacrebleu.

Statistics per segment are sacrebleu's: ``[hyp_len, ref_len, correct_1..N, total_1..N]`` where
``ref_len`` is the closest reference length and ``correct_n`` the clipped n-gram matches against the
maximum counts over all of the segment's references.

* corpus score = ``sacrebleu.corpus_bleu(hyps, refs, smooth_method=smooth_method, ...)`` from the
  summed statistics (no effective order, as sacrebleu's corpus BLEU);
* segment score = ``sacrebleu.sentence_bleu(hyp, refs, smooth_method=sentence_smooth_method, ...)``:
  effective order and, by default, exponential ('exp') smoothing, as ``sentence_bleu``.

Scores are on sacrebleu's 0-100 scale.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..base import Against
from ..registry import register
from ._common import check_bool, check_choice, check_number
from ._sacrebleu import SacrebleuMetric

SMOOTH_METHODS = ("none", "floor", "add-k", "exp")
#: sacrebleu's SentencePiece tokenizers fetch a model from the internet when made; styleval never
#: downloads at run time, so they are not offered.
DOWNLOADING_TOKENIZERS = ("spm", "flores101", "flores200", "spBLEU-1K")


@register
class BLEU(SacrebleuMetric):
    name = "bleu"
    parameter_help: ClassVar[dict[str, str]] = {
        "tokenize": "sacrebleu tokenizer: 13a (default), intl, char, none, zh, ja-mecab, ko-mecab",
        "smooth_method": "corpus BLEU smoothing: exp, floor, add-k or none",
        "smooth_value": "the value of floor or add-k smoothing (default: sacrebleu's)",
        "sentence_smooth_method": "smoothing of segment BLEU (sentence_bleu): exp, floor, add-k or none",
        "sentence_smooth_value": "the value of the segment smoothing (default: sacrebleu's)",
        "max_ngram_order": "longest n-gram counted",
    }
    reference = ("sacrebleu BLEU: sentence_bleu per segment, corpus_bleu from summed statistics; equal within "
                 "1e-9 to sacrebleu's Python API and command line (tests/test_lexical_metrics.py)")
    version = "1"
    higher_is_better = True
    value_range = (0.0, 100.0)
    description = ("sacrebleu BLEU (0-100): corpus BLEU from summed n-gram statistics; segment scores are "
                   "sentence BLEU (effective order, 'exp' smoothing by default); multi-reference")

    def __init__(self, *, against: str | Against = "references", tokenize: str = "13a", lowercase: bool = False,
                 smooth_method: str = "exp", smooth_value: float | None = None,
                 sentence_smooth_method: str = "exp", sentence_smooth_value: float | None = None,
                 max_ngram_order: int = 4) -> None:
        from sacrebleu.metrics.bleu import BLEU as SacreBLEU

        self.against = Against.parse(against)
        check_choice(self.name, "tokenize", tokenize,
                     [t for t in SacreBLEU.TOKENIZERS if t not in DOWNLOADING_TOKENIZERS])
        check_bool(self.name, "lowercase", lowercase)
        check_choice(self.name, "smooth_method", smooth_method, SMOOTH_METHODS)
        check_choice(self.name, "sentence_smooth_method", sentence_smooth_method, SMOOTH_METHODS)
        for param, value in (("smooth_value", smooth_value), ("sentence_smooth_value", sentence_smooth_value)):
            if value is not None:
                check_number(self.name, param, value, low=0)
        check_number(self.name, "max_ngram_order", max_ngram_order, low=1, high=9, integer=True)
        self.tokenize = tokenize
        self.lowercase = lowercase
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.sentence_smooth_method = sentence_smooth_method
        self.sentence_smooth_value = sentence_smooth_value
        self.max_ngram_order = max_ngram_order
        try:
            # The corpus-level object (as corpus_bleu makes it); it also does tokenization and statistics.
            self._sb = SacreBLEU(lowercase=lowercase, force=True, tokenize=tokenize, smooth_method=smooth_method,
                                 smooth_value=smooth_value, max_ngram_order=max_ngram_order, effective_order=False)
        except Exception as exc:  # e.g. a tokenizer whose optional dependency is missing
            from ...errors import InputError

            raise InputError(f"metric 'bleu': cannot make sacrebleu's BLEU with tokenize={tokenize!r}: {exc}") from exc
        self._init_cache()

    @property
    def n_stats(self) -> int:
        return 2 + 2 * self.max_ngram_order

    def _bleu(self, row: Any, *, sentence: bool) -> float:
        n = self.max_ngram_order
        vals = [int(round(v)) for v in row]
        return self._sb.compute_bleu(
            correct=vals[2:2 + n], total=vals[2 + n:2 + 2 * n], sys_len=vals[0], ref_len=vals[1],
            smooth_method=self.sentence_smooth_method if sentence else self.smooth_method,
            smooth_value=self.sentence_smooth_value if sentence else self.smooth_value,
            effective_order=sentence, max_ngram_order=n).score

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=float)
        return np.array([self._bleu(row, sentence=True) for row in stats], dtype=float)

    def _corpus_from_sums(self, sums: list[float]) -> float:
        return self._bleu(sums, sentence=False)
