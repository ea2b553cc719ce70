"""SentimentAware: SAM (Saadany et al. 2021) around any content metric, ``C·(1 − p)``.

``p = |S_r − S_h| / 2`` from the prior polarities of the words that differ between the output and the comparison
text (see :mod:`styleval.sentiment.sam`). With several references the smallest p is used (the reference whose
sentiment the output matches best). Statistics: ``[score, p, S_output, S_comparison, *inner statistics]``; the
corpus score is the mean adjusted score. The score shrinks towards 0 (C in the inner metric's own units);
lower-is-better metrics are refused. S, p and the score follow the paper's equations 1-6 and reproduce both worked
examples of its Table 1; the matching step, lexicon lookup and POS mapping are styleval's (see
:mod:`styleval.sentiment.sam`). Version 2: POS from the Penn tag when the universal POS is not mapped ("not" -> r).

For sentiment *transfer* scored against the source, a successful transfer changes the sentiment on purpose, so
SAM penalises it: use it against references, or for tasks where sentiment must be kept (formality, detoxification,
translation).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InputError
from ...models import catalog as cat
from ...nlp import parse_many
from ...sentiment import ALIGNMENTS, PolarityLexicon, load_lexicon, sam_detail
from ..base import ContentMetric
from ..modifiers import ContentModifier
from .entity import check_similarity, spacy_identity


class SentimentAware(ContentModifier):
    suffix: ClassVar[str] = "sam"
    version: ClassVar[str] = "2"
    adjusts_scores: ClassVar[bool] = True
    n_extra: ClassVar[int] = 3
    libraries: ClassVar[tuple[str, ...]] = ("spacy",)
    description: ClassVar[str] = "content metric scaled by sentiment closeness (SAM): C(1-p)"

    def __init__(self, *, inner: ContentMetric, lexicon: str | PolarityLexicon, alignment: str = "sequence",
                 spacy_model: str = cat.DEFAULT_SPACY) -> None:
        super().__init__(inner=inner)
        check_similarity(inner)
        if alignment not in ALIGNMENTS:
            raise InputError(f"alignment must be one of {', '.join(ALIGNMENTS)}; got {alignment!r}")
        if isinstance(lexicon, PolarityLexicon):
            self._lexicon: PolarityLexicon | None = lexicon
            self.lexicon = lexicon.spec
        elif isinstance(lexicon, str) and lexicon.strip():
            self._lexicon = None
            self.lexicon = lexicon.strip()
        else:
            raise InputError("SentimentAware needs a lexicon: 'vader', 'sentiwordnet:PATH', 'file:PATH' or a "
                             "PolarityLexicon")
        self.alignment = alignment
        self.spacy_model = spacy_model

    def lexicon_object(self) -> PolarityLexicon:
        if self._lexicon is None:
            self._lexicon = load_lexicon(self.lexicon)
        return self._lexicon

    def resources(self) -> dict[str, str]:
        res = dict(self.inner.resources())
        res["lexicon"] = self.lexicon_object().identity
        res["pos_tagger"] = spacy_identity(self.spacy_model)
        return res

    def sam_columns(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        """(n, 3): p, S_output, S_comparison against the best-matching comparison text."""
        lex = self.lexicon_object()
        flat = [c for comps in comparisons for c in comps]
        parsed = parse_many(list(outputs) + flat, self.spacy_model)
        outs, comps_p = parsed[:len(outputs)], parsed[len(outputs):]
        rows = np.zeros((len(outputs), 3))
        k = 0
        for i, comps in enumerate(comparisons):
            best = None
            for _ in comps:
                d = sam_detail(outs[i], comps_p[k], lex, self.alignment)
                if best is None or d.p < best.p:
                    best = d
                k += 1
            if best is not None:
                rows[i] = (best.p, best.s_output, best.s_comparison)
        return rows

    def adjust(self, outputs: list[str], comparisons: list[list[str]], scores: np.ndarray) -> np.ndarray:
        cols = self.sam_columns(outputs, comparisons)
        adjusted = np.asarray(scores, dtype=float) * (1.0 - cols[:, 0])
        return np.column_stack([adjusted, cols])
