"""COMET (Rei et al., 2020) through the optional ``unbabel-comet`` library and a local checkpoint.

The checkpoint is a ``.ckpt`` file or a downloaded model folder holding ``checkpoints/model.ckpt``.
Nothing is faked: without the library or the checkpoint the metric raises ResourceUnavailableError
when it is made. COMET reads the source too: each triple is (source, output, reference); with
``against="source"`` the source is also the reference. Several references: the largest score.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...errors import ResourceUnavailableError
from ..base import Against, Batch, ContentMetric
from ..registry import register
from ._common import check_lengths, check_number
from ._optional import require_checkpoint, require_library


@register
class COMET(ContentMetric):
    name = "comet"
    parameter_help: ClassVar[dict[str, str]] = {
        "gpus": "GPUs for COMET (0: CPU)",
    }
    reference = "the unbabel-comet package with the user's checkpoint"
    version = "1"
    higher_is_better = True
    value_range = (-1.5, 1.5)
    description = "COMET with a local checkpoint (needs the optional 'unbabel-comet' library); max over references"
    libraries = ("unbabel-comet", "torch")

    def __init__(self, *, against: str | Against = "references", checkpoint: str | None = None,
                 batch_size: int = 16, gpus: int = 0) -> None:
        self.against = Against.parse(against)
        check_number(self.name, "batch_size", batch_size, low=1, integer=True)
        check_number(self.name, "gpus", gpus, low=0, integer=True)
        require_library(self.name, "comet", "unbabel-comet")
        path = require_checkpoint(self.name, checkpoint, "a COMET model folder or its checkpoints/model.ckpt")
        if path.is_dir():
            ckpt = path / "checkpoints" / "model.ckpt"
            if not ckpt.is_file():
                raise ResourceUnavailableError(f"metric 'comet': no checkpoints/model.ckpt in {path}")
            path = ckpt
        self._ckpt = path
        self.checkpoint = checkpoint
        self.batch_size = batch_size
        self.gpus = gpus
        self._model: Any = None

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("batch_size", None)
        params.pop("gpus", None)
        return params

    @property
    def needs(self) -> frozenset[str]:  # type: ignore[override]
        return frozenset({"source"} if self.against is Against.SOURCE else {"source", "references"})

    def resources(self) -> dict[str, str]:
        from ...models.hashing import short_hash

        return {"checkpoint": self._ckpt.parent.parent.name or self._ckpt.name,
                "checkpoint_hash": short_hash(self._ckpt)}

    def _get_model(self) -> Any:
        if self._model is None:
            from ...models.pool import get_pool

            def load() -> Any:
                from comet import load_from_checkpoint

                return load_from_checkpoint(str(self._ckpt))

            self._model = get_pool().get(f"comet:{self._ckpt}", load)
        return self._model

    def segment_stats(self, batch: Batch) -> np.ndarray:
        return self.triple_stats(batch.sources, batch.outputs, self.comparisons(batch))

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        """Without sources at hand (a modifier's rewritten texts), each comparison's first text stands in."""
        return self.triple_stats([comp[0] for comp in comparisons], outputs, comparisons)

    def triple_stats(self, sources: list[str], outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        """The largest score of each (source, output, comparison) triple over the output's comparisons."""
        check_lengths(self.name, outputs, comparisons)
        triples = list(dict.fromkeys((s, o, c) for s, o, comp in zip(sources, outputs, comparisons) for c in comp))
        data = [{"src": s, "mt": o, "ref": c} for s, o, c in triples]
        pred = self._get_model().predict(data, batch_size=self.batch_size, gpus=self.gpus, progress_bar=False)
        scores = getattr(pred, "scores", None)
        if scores is None:  # older COMET returned (scores, system_score)
            scores = pred[0]
        by = dict(zip(triples, (float(v) for v in scores)))
        return np.array([[max(by[(s, o, c)] for c in comp)] for s, o, comp in zip(sources, outputs, comparisons)])
