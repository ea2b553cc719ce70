"""EntityAware: merge any content metric with a named-entity score, ``M·(1−p) + NE·p`` (Babakov et al.).

NE is the entity score of the output against the comparison text (``coverage``: share of the comparison's
entities kept, SGDD-TST's score; or ``jaccard``) and p the share of entity word tokens in both texts. With several
references, NE and p are computed against each and the reference with the highest NE (then lowest p) is used.
Statistics: ``[merged, NE, p, *inner statistics]``; the corpus score is the mean merged score.

Scale: NE lies in [0, 1]; it is mapped onto ``[max(lo, 0), hi]`` of the inner metric's native range (BLEU and chrF
in styleval run 0-100, so NE counts as 0-100 there; cosine and BERTScore, range [-1, 1], get NE as it is, as in
the paper) and the merged score stays in the inner metric's units. ``ne_range=(lo, hi)`` overrides that; a metric
with an open upper bound needs it.
Lower-is-better metrics (TER, WMD) are refused: the merge assumes that higher means more content kept.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...entities import NE_SCORES, SHARE_RULES, entity_score, entity_share, extract_entities
from ...errors import InputError
from ...models import catalog as cat
from ..base import ContentMetric
from ..modifiers import ContentModifier


def check_similarity(inner: ContentMetric) -> None:
    if not inner.higher_is_better:
        raise InputError(f"{inner.display_name} is lower-is-better; entity- and sentiment-aware scores need a "
                         "similarity (higher is better)")


def check_range(inner: ContentMetric, given: tuple[float, float] | None, what: str) -> tuple[float, float]:
    """The (lo, hi) scale a [0, 1] score is mapped onto: ``given``, else ``[max(lo, 0), hi]`` of the inner range."""
    check_similarity(inner)
    if given is not None:
        lo, hi = float(given[0]), float(given[1])
    else:
        lo, hi = max(float(inner.value_range[0]), 0.0), float(inner.value_range[1])
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise InputError(f"{inner.display_name} has the range {inner.value_range}; give {what}=(lo, hi) to say "
                         "what scale to use")
    return (lo, hi)


def spacy_identity(name: str) -> str:
    """``module@version`` of a catalog spaCy model, or the resolved path of a local one."""
    from ...models.spec import model_spec
    from ...signature import library_version

    spec = model_spec(name, expect=cat.SPACY)
    if spec.entry is not None:
        return f"{spec.entry.module}@{library_version(spec.entry.distribution)}"
    return str(spec.path)


class EntityAware(ContentModifier):
    suffix: ClassVar[str] = "ne"
    version: ClassVar[str] = "1"
    adjusts_scores: ClassVar[bool] = True
    n_extra: ClassVar[int] = 2
    libraries: ClassVar[tuple[str, ...]] = ("spacy",)
    description: ClassVar[str] = "content metric merged with a named-entity score: M(1-p) + NE p"

    def __init__(self, *, inner: ContentMetric, ne_score: str = "coverage", share: str = "span",
                 spacy_model: str = cat.DEFAULT_SPACY, ne_range: tuple[float, float] | None = None) -> None:
        super().__init__(inner=inner)
        self.ne_range = check_range(inner, ne_range, "ne_range")
        if ne_score not in NE_SCORES:
            raise InputError(f"ne_score must be one of {', '.join(NE_SCORES)}; got {ne_score!r}")
        if share not in SHARE_RULES:
            raise InputError(f"share must be one of {', '.join(SHARE_RULES)}; got {share!r}")
        self.ne_score = ne_score
        self.share = share
        self.spacy_model = spacy_model

    def resources(self) -> dict[str, str]:
        res = dict(self.inner.resources())
        res["ner"] = spacy_identity(self.spacy_model)
        return res

    def entity_columns(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        """(n, 2): NE score and entity share p of each output against its best comparison text."""
        flat = [c for comps in comparisons for c in comps]
        ents = extract_entities(list(outputs) + flat, self.spacy_model)
        out_ents, comp_ents = ents[:len(outputs)], ents[len(outputs):]
        rows = np.zeros((len(outputs), 2))
        k = 0
        for i, comps in enumerate(comparisons):
            best = (-1.0, 0.0)
            for _ in comps:
                ne = entity_score(comp_ents[k], out_ents[i], self.ne_score)
                p = entity_share(comp_ents[k], out_ents[i], self.share)
                if ne > best[0] or (ne == best[0] and p < best[1]):
                    best = (ne, p)
                k += 1
            rows[i] = best if best[0] >= 0 else (0.0, 0.0)
        return rows

    def adjust(self, outputs: list[str], comparisons: list[list[str]], scores: np.ndarray) -> np.ndarray:
        cols = self.entity_columns(outputs, comparisons)
        ne, p = cols[:, 0], cols[:, 1]
        lo, hi = self.ne_range
        merged = np.asarray(scores, dtype=float) * (1.0 - p) + (lo + ne * (hi - lo)) * p
        return np.column_stack([merged, ne, p])
