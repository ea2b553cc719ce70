"""Character-level Levenshtein edit distance (rapidfuzz), lower is better.

``normalized=False`` (default): the raw number of character insertions, deletions and substitutions.
``normalized=True``: distance / max(len(output), len(reference)) (0 when both are empty), in [0, 1].
With several references a segment gets the smallest (normalized) distance. Corpus score = mean.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..base import Against, ContentMetric
from ..registry import register
from ._common import check_bool, check_lengths


@register
class Levenshtein(ContentMetric):
    name = "levenshtein"
    parameter_help: ClassVar[dict[str, str]] = {
        "normalized": "divide the distance by the longer text's length",
    }
    reference = "rapidfuzz Levenshtein.distance on characters"
    version = "1"
    higher_is_better = False
    value_range = (0.0, float("inf"))
    description = ("character Levenshtein distance (rapidfuzz), raw or normalized by the longer string; "
                   "multi-reference: closest reference; lower is better")
    libraries = ("rapidfuzz",)

    def __init__(self, *, against: str | Against = "references", normalized: bool = False,
                 lowercase: bool = False) -> None:
        from rapidfuzz.distance import Levenshtein as _Lev

        self.against = Against.parse(against)
        check_bool(self.name, "normalized", normalized)
        check_bool(self.name, "lowercase", lowercase)
        self.normalized = normalized
        self.lowercase = lowercase
        if normalized:
            self.value_range = (0.0, 1.0)  # type: ignore[misc]  # the normalised distance is bounded
        self._dist = _Lev.normalized_distance if normalized else _Lev.distance

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        check_lengths(self.name, outputs, comparisons)
        dist = self._dist
        low = self.lowercase
        rows = []
        for out, refs in zip(outputs, comparisons):
            if low:
                out, refs = out.lower(), [r.lower() for r in refs]
            rows.append(min(dist(out, r) for r in refs))
        return np.asarray(rows, dtype=float).reshape(len(outputs), 1)
