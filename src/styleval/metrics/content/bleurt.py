"""BLEURT (Sellam et al., 2020) through the optional ``bleurt`` library and a local checkpoint folder.

Nothing is faked: without the library or the checkpoint the metric raises ResourceUnavailableError
when it is made, saying what to install or pass. Several references: the largest score.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..base import Against, ContentMetric
from ..registry import register
from ._common import check_lengths, check_number
from ._optional import require_checkpoint, require_library


#: the pip requirement that installs the bleurt library (it is not on PyPI)
BLEURT_SOURCE = "git+https://github.com/google-research/bleurt.git"


@register
class BLEURT(ContentMetric):
    name = "bleurt"
    reference = "the bleurt package with the user's checkpoint"
    version = "1"
    higher_is_better = True
    value_range = (-2.0, 2.0)
    description = "BLEURT with a local checkpoint (needs the optional 'bleurt' library); max over references"
    libraries = ("bleurt", "tensorflow")

    def __init__(self, *, against: str | Against = "references", checkpoint: str | None = None,
                 batch_size: int = 32) -> None:
        self.against = Against.parse(against)
        check_number(self.name, "batch_size", batch_size, low=1, integer=True)
        require_library(self.name, "bleurt", "bleurt", source=BLEURT_SOURCE)
        self._path = require_checkpoint(self.name, checkpoint, "a BLEURT checkpoint folder, e.g. BLEURT-20")
        self.checkpoint = checkpoint
        self.batch_size = batch_size
        self._scorer: Any = None

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("batch_size", None)
        return params

    def resources(self) -> dict[str, str]:
        from ...models.hashing import short_hash

        return {"checkpoint": self._path.name, "checkpoint_hash": short_hash(self._path)}

    def _get_scorer(self) -> Any:
        if self._scorer is None:
            from ...models.pool import get_pool

            def load() -> Any:
                from bleurt import score as bleurt_score

                return bleurt_score.BleurtScorer(str(self._path))

            self._scorer = get_pool().get(f"bleurt:{self._path}", load)
        return self._scorer

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        check_lengths(self.name, outputs, comparisons)
        cands = [o for o, comp in zip(outputs, comparisons) for _ in comp]
        refs = [c for comp in comparisons for c in comp]
        pairs = list(dict.fromkeys(zip(cands, refs)))  # score each distinct pair once
        values = self._get_scorer().score(references=[r for _, r in pairs], candidates=[c for c, _ in pairs],
                                          batch_size=self.batch_size)
        by_pair = dict(zip(pairs, (float(v) for v in values)))
        return np.array([[max(by_pair[(o, c)] for c in comp)] for o, comp in zip(outputs, comparisons)])
