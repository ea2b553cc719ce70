"""PINC (Chen & Dolan, 2011): how many of the output's n-grams are new with respect to the source.

    PINC(s, c) = 1/N' * sum_{n=1..N, c has n-grams} (1 - |ngrams_n(c) ∩ ngrams_n(s)| / |ngrams_n(c)|)

with n-gram *sets* (not multisets), as in the authors' Perl script; orders the output is too short
for are left out of the average (N' = number of orders with at least one output n-gram). An output
with no tokens gets 0.0. Higher = more novel (less copying). Scale 0-1; corpus score = mean.

PINC compares the output with its *source* by definition, so the metric takes no ``against``
parameter: it is always scored against the source.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InputError
from ..base import Against, ContentMetric
from ..registry import register
from ._common import WORD_TOKENIZERS, ComparisonCache, check_bool, check_choice, check_lengths, check_number, \
    make_word_tokenizer


def ngram_set(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def pinc(source_tokens: list[str], output_tokens: list[str], max_n: int = 4) -> float:
    """PINC of one output against its source (token lists)."""
    total, orders = 0.0, 0
    for n in range(1, max_n + 1):
        out = ngram_set(output_tokens, n)
        if not out:
            break  # no n-grams of this order, hence none of higher orders
        src = ngram_set(source_tokens, n)
        total += 1.0 - len(out & src) / len(out)
        orders += 1
    return total / orders if orders else 0.0


@register
class PINC(ContentMetric):
    name = "pinc"
    parameter_help: ClassVar[dict[str, str]] = {
        "max_n": "longest n-gram whose novelty is averaged",
    }
    reference = "Chen & Dolan 2011, written here"
    version = "1"
    higher_is_better = True
    measures_novelty = True  # higher = less of the source kept: the benchmark negates it against content judgments
    value_range = (0.0, 1.0)
    description = ("PINC (Chen & Dolan 2011): share of output n-grams (n=1..4, sets) not in the source, "
                   "averaged over orders; always against the source; higher = more novel")
    libraries = ()
    #: the side PINC is always scored against (a spec may name it: ``pinc:against=source``)
    fixed_against: ClassVar[Against] = Against.SOURCE

    def __init__(self, *, max_n: int = 4, lowercase: bool = True, tokenize: str = "whitespace") -> None:
        check_number(self.name, "max_n", max_n, low=1, high=20, integer=True)
        check_bool(self.name, "lowercase", lowercase)
        check_choice(self.name, "tokenize", tokenize, WORD_TOKENIZERS)
        self.against = self.fixed_against  # fixed: PINC is defined against the source
        self.max_n = max_n
        self.lowercase = lowercase
        self.tokenize = tokenize
        self._tok = make_word_tokenizer(self.name, tokenize)
        self._src_cache = ComparisonCache()

    def _tokens(self, text: str) -> list[str]:
        return self._tok(text.lower() if self.lowercase else text)

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        check_lengths(self.name, outputs, comparisons)
        bad = [i for i, c in enumerate(comparisons) if len(c) != 1]
        if bad:
            raise InputError(f"metric 'pinc' compares each output with its one source; segment {bad[0]} has "
                             f"{len(comparisons[bad[0]])} texts to compare with")
        sources = self._src_cache.get(comparisons, lambda: [self._tokens(c[0]) for c in comparisons])
        scores = [pinc(src, self._tokens(out), self.max_n) for out, src in zip(outputs, sources)]
        return np.asarray(scores, dtype=float).reshape(len(outputs), 1)
