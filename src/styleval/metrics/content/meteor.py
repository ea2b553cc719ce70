"""METEOR (Banerjee & Lavie, 2005; Lavie & Agarwal, 2007) as computed by NLTK.

Segment score = ``nltk.translate.meteor_score.meteor_score(refs, hyp)`` with NLTK's defaults
(alpha=0.9, beta=3, gamma=0.5, lowercasing via ``preprocess=str.lower``, Porter stemmer, WordNet
synonyms); with several references NLTK takes the maximum over them. Corpus score = mean.

NLTK wants pre-tokenized input; the ``tokenize`` parameter says how texts are split:
``whitespace`` (``str.split``; the default, right for the already tokenized outputs common in style
transfer data), ``wordpunct`` (NLTK's ``wordpunct_tokenize`` regex ``\\w+|[^\\w\\s]+``) or ``13a``
(sacrebleu's mteval-v13a tokenizer). Lowercasing is NLTK's own.

NLTK's alignment applies the synonym stage to the *stemmed* leftovers of the stem stage, so a pair
like "big"/"large" (stem "larg") is not matched as synonyms, while "car"/"auto" is. That is NLTK's
behaviour, kept so that scores equal NLTK's.

WordNet comes from :mod:`styleval.resources.wordnet` (Debian's dictionary files); the reader is
rooted at exactly that folder, and the signature names WordNet's version and content hash. The
stemmer and WordNet look-ups are memoized (pure functions of the word), which changes no score.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from ..base import Against, ContentMetric
from ..registry import register
from ._common import WORD_TOKENIZERS, ComparisonCache, check_choice, check_lengths, check_number, make_word_tokenizer


class _MemoStemmer:
    """NLTK's PorterStemmer with a memo (METEOR stems every word against every reference)."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self.stem = lru_cache(maxsize=1 << 17)(PorterStemmer().stem)


class _Lemma:
    """A lemma as METEOR reads it: only ``name()``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name.__str__


class _Synonyms:
    """One stand-in synset holding a word's distinct synonym names across all of its synsets."""

    __slots__ = ("_lemmas",)

    def __init__(self, names: list[str]) -> None:
        self._lemmas = tuple(_Lemma(n) for n in names)

    def lemmas(self) -> tuple[_Lemma, ...]:
        return self._lemmas


class _MemoWordNet:
    """The part of a WordNet reader METEOR uses (``synsets``), memoized. NLTK's METEOR only takes the set of
    lemma names of a word's synsets, so one stand-in synset with the distinct names gives the same set with
    fewer iterations."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.synsets = lru_cache(maxsize=1 << 17)(self._synonyms)

    def _synonyms(self, word: str) -> tuple[_Synonyms, ...]:
        names = dict.fromkeys(lemma.name() for synset in self.reader.synsets(word) for lemma in synset.lemmas())
        return (_Synonyms(list(names)),) if names else ()


@register
class Meteor(ContentMetric):
    name = "meteor"
    parameter_help: ClassVar[dict[str, str]] = {
        "alpha": "NLTK's alpha: the precision-recall weight",
        "beta": "NLTK's beta: the shape of the fragmentation penalty",
        "gamma": "NLTK's gamma: the weight of the fragmentation penalty",
    }
    reference = "NLTK meteor_score with WordNet 3.0; equal within 1e-9 (tests/test_lexical_metrics.py)"
    version = "1"
    higher_is_better = True
    value_range = (0.0, 1.0)
    description = ("METEOR (NLTK): unigram alignment with exact, stem and WordNet synonym matches, "
                   "fragmentation penalty; multi-reference: best reference")
    libraries = ("nltk",)

    def __init__(self, *, against: str | Against = "references", alpha: float = 0.9, beta: float = 3.0,
                 gamma: float = 0.5, tokenize: str = "whitespace") -> None:
        self.against = Against.parse(against)
        check_number(self.name, "alpha", alpha, low=0, high=1)
        check_number(self.name, "beta", beta, low=0)
        check_number(self.name, "gamma", gamma, low=0, high=1)
        check_choice(self.name, "tokenize", tokenize, WORD_TOKENIZERS)
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.tokenize = tokenize
        self._tok = make_word_tokenizer(self.name, tokenize)
        self._ref_cache = ComparisonCache()
        self._wordnet: _MemoWordNet | None = None
        self._stemmer: _MemoStemmer | None = None
        self._wordnet_info: Any = None

    def _load(self) -> None:
        if self._wordnet is None:
            from ...models.passes import timed
            from ...resources.wordnet import wordnet_reader

            with timed("load", "wordnet and nltk"):  # NLTK's import included
                import nltk.translate.meteor_score  # noqa: F401

                reader, self._wordnet_info = wordnet_reader()
                self._wordnet = _MemoWordNet(reader)
                self._stemmer = _MemoStemmer()

    def resources(self) -> dict[str, str]:
        if self._wordnet_info is None:
            from ...resources.wordnet import ensure_wordnet

            self._wordnet_info = ensure_wordnet()
        return self._wordnet_info.as_resources()

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        check_lengths(self.name, outputs, comparisons)
        self._load()
        from nltk.translate.meteor_score import meteor_score

        tok = self._tok
        refs_tok = self._ref_cache.get(comparisons, lambda: [[tok(r) for r in refs] for refs in comparisons])
        kwargs = dict(stemmer=self._stemmer, wordnet=self._wordnet, alpha=self.alpha, beta=self.beta,
                      gamma=self.gamma)
        scores = [meteor_score(refs, tok(out), **kwargs) for out, refs in zip(outputs, refs_tok)]
        return np.asarray(scores, dtype=float).reshape(len(outputs), 1)
