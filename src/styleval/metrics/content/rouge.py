"""ROUGE-1/2/3/L (Lin, 2004) as computed by Google's ``rouge-score`` package.

Per segment the statistics are ``[precision, recall, fmeasure]`` against the reference chosen as
``rouge_score.rouge_scorer.RougeScorer.score_multi`` chooses it: the one with the highest F-measure
(the first such one on ties); the segment score is the column named by ``measure``. So with
``measure="precision"`` a segment gets the precision against its best-F reference, exactly as
``score_multi`` reports it. Corpus score = mean of segment scores.

Tokenization is rouge-score's default (lowercase, non-alphanumeric characters are separators,
optional Porter stemming of words longer than 3 characters). Tokenized references are cached per
metric instance, so the next system scored against the same references reuses them.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..base import Against, ContentMetric
from ..registry import register
from ._common import ComparisonCache, check_bool, check_choice, check_lengths

MEASURES = ("precision", "recall", "fmeasure")


class _Rouge(ContentMetric):
    rouge_type: ClassVar[str]
    parameter_help: ClassVar[dict[str, str]] = {
        "measure": "which ROUGE figure: fmeasure, precision or recall",
        "use_stemmer": "Porter-stem words before matching",
    }
    n_stats = 3
    libraries: ClassVar[tuple[str, ...]] = ("rouge-score", "nltk")
    version = "1"
    higher_is_better = True
    value_range = (0.0, 1.0)

    def __init__(self, *, against: str | Against = "references", measure: str = "fmeasure",
                 use_stemmer: bool = False) -> None:
        from rouge_score import rouge_scorer

        self.against = Against.parse(against)
        check_choice(self.name, "measure", measure, MEASURES)
        check_bool(self.name, "use_stemmer", use_stemmer)
        self.measure = measure
        self.use_stemmer = use_stemmer
        self._scorer = rouge_scorer.RougeScorer([self.rouge_type], use_stemmer=use_stemmer)
        self._tokenize = self._scorer._tokenizer.tokenize
        if self.rouge_type == "rougeL":
            self._prepare = lambda tokens: tokens
            self._score = rouge_scorer._score_lcs
        else:
            n = int(self.rouge_type[5:])
            self._prepare = lambda tokens: rouge_scorer._create_ngrams(tokens, n)
            self._score = rouge_scorer._score_ngrams
        self._ref_cache = ComparisonCache()

    def _prepared_refs(self, comparisons: list[list[str]]) -> list[list[Any]]:
        def build() -> list[list[Any]]:
            return [[self._prepare(self._tokenize(ref)) for ref in refs] for refs in comparisons]

        return self._ref_cache.get(comparisons, build)

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        check_lengths(self.name, outputs, comparisons)
        prepared = self._prepared_refs(comparisons)
        rows = np.zeros((len(outputs), 3), dtype=float)
        for i, (output, refs) in enumerate(zip(outputs, prepared)):
            pred = self._prepare(self._tokenize(output))
            best: Any = None
            for ref in refs:  # score_multi: argmax of F-measure, first one on ties
                s = self._score(ref, pred)
                if best is None or s.fmeasure > best.fmeasure:
                    best = s
            rows[i] = (best.precision, best.recall, best.fmeasure)
        return rows

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return np.asarray(stats, dtype=float)[:, MEASURES.index(self.measure)]


@register
class Rouge1(_Rouge):
    name = "rouge1"
    reference = ("rouge-score RougeScorer, score_multi over references; equal within 1e-9 "
                 "(tests/test_lexical_metrics.py)")
    rouge_type = "rouge1"
    description = "ROUGE-1 (rouge-score; F-measure by default), unigram overlap; multi-reference: best-F reference"


@register
class Rouge2(_Rouge):
    name = "rouge2"
    reference = "rouge-score RougeScorer (tests/test_lexical_metrics.py)"
    rouge_type = "rouge2"
    description = "ROUGE-2 (rouge-score; F-measure by default), bigram overlap; multi-reference: best-F reference"


@register
class Rouge3(_Rouge):
    name = "rouge3"
    reference = "rouge-score RougeScorer (tests/test_lexical_metrics.py)"
    rouge_type = "rouge3"
    description = "ROUGE-3 (rouge-score; F-measure by default), trigram overlap; multi-reference: best-F reference"


@register
class RougeL(_Rouge):
    name = "rougeL"
    reference = "rouge-score RougeScorer (tests/test_lexical_metrics.py)"
    rouge_type = "rougeL"
    description = ("ROUGE-L (rouge-score; F-measure by default), longest common subsequence; "
                   "multi-reference: best-F reference")
