"""Heylighen & Dewaele's (1999) formality F-score from part-of-speech frequencies, with spaCy tags.

``F = (noun + adjective + preposition + article - pronoun - verb - adverb - interjection + 100) / 2``, each a
percentage of the words of the text. Tags (Universal POS from spaCy): nouns NOUN + PROPN, adjectives ADJ,
prepositions ADP, articles DET tokens *a*, *an*, *the*, pronouns PRON, verbs VERB + AUX, adverbs ADV,
interjections INTJ; words are tokens that are not PUNCT, SYM, SPACE or X. A text with no words scores NaN.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

ARTICLES = frozenset({"a", "an", "the"})
POSITIVE = {"NOUN": "noun", "PROPN": "noun", "ADJ": "adjective", "ADP": "preposition"}
NEGATIVE = {"PRON": "pronoun", "VERB": "verb", "AUX": "verb", "ADV": "adverb", "INTJ": "interjection"}
NOT_WORDS = frozenset({"PUNCT", "SYM", "SPACE", "X"})


def fscore_from_tags(tokens: Iterable[tuple[str, str]]) -> float:
    """F-score from ``(text, universal POS)`` pairs."""
    words = [(t.lower(), pos) for t, pos in tokens if pos not in NOT_WORDS]
    if not words:
        return float("nan")
    plus = sum(pos in POSITIVE or (pos == "DET" and t in ARTICLES) for t, pos in words)
    minus = sum(pos in NEGATIVE for t, pos in words)
    return (100.0 * (plus - minus) / len(words) + 100.0) / 2.0


def fscores(texts: Sequence[str], pipeline: str = "spacy-en-sm", batch_size: int = 256) -> np.ndarray:
    """F-scores of texts, tagged by a spaCy pipeline loaded once through the model pool."""
    from ..models.pool import spacy_pipeline

    nlp = spacy_pipeline(pipeline)
    disable = [p for p in ("ner", "parser", "lemmatizer") if p in nlp.pipe_names]
    out = [fscore_from_tags((tok.text, tok.pos_) for tok in doc)
           for doc in nlp.pipe(list(texts), batch_size=batch_size, disable=disable)]
    return np.asarray(out, dtype=float)
