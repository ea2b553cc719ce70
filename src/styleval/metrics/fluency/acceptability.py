"""``acceptability``: the shipped classifier's probability that each output is acceptable English.

Segment score: P(acceptable) from :mod:`styleval.acceptability.model` (SmolLM2 token statistics of the output
after ``normalize``: by default ``auto``, which decides per text: a text with no capital letter is true-cased, one
showing tokenization spaces detokenized, so a score never depends on the other rows of its system; ``auto-corpus``
decides once per system, see :mod:`styleval.textnorm.readable`; a logistic regression trained on
detok+truecase human-written sentences of four registers against automatically corrupted copies). The model's
decision threshold is folded into it: an output is acceptable when its score is >= 0.5, and the corpus score is the
share of acceptable outputs (the FL of ParaDetox, Logacheva et al. 2022). Statistics ``[p, acceptable, truncated]``;
an empty output scores 0 and is flagged. The signature names the model (with its content hash), its LM and its
unigram model.
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar

import numpy as np

from ..base import Aspect, Batch, Metric, SegmentStats
from ..content._common import check_number
from ..registry import register
from .lm_shared import (CORPUS_NORMALISATION, applied_normalisation, normalisation_resources,
                        scored_texts)

P, ACCEPTABLE, TRUNC = 0, 1, 2


@register
class Acceptability(Metric):
    """Share of outputs that the shipped acceptability classifier finds acceptable English (segment: P)."""

    name = "acceptability"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the acceptability classifier: shipped name or model folder",
    }
    n_stats = 3
    version = "2"  # 2: normalize=auto decides per text (1: per system, now auto-corpus)
    aspect = Aspect.FLUENCY
    higher_is_better = True
    value_range = (0.0, 1.0)
    description = ("P(acceptable English) from a classifier on SmolLM2 token statistics (trained on human text vs "
                   "corrupted copies); corpus: share of outputs with P >= 0.5")
    libraries = ("torch", "sacremoses")

    def __init__(self, *, model: str = "acceptability-smollm2", normalize: str = "auto",
                 batch_tokens: int = 4096) -> None:
        from ...acceptability.model import load_acceptability
        from ...textnorm.readable import check_mode

        self.model = model
        self.normalize = check_mode(normalize)
        check_number(self.name, "batch_tokens", batch_tokens, low=1, integer=True)
        self.batch_tokens = int(batch_tokens)
        self._model = load_acceptability(model)
        self.progress: Callable[[str, int, int], None] | None = None

    batch_dependence = CORPUS_NORMALISATION

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return self.normalize != "auto-corpus"

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("batch_tokens", None)  # does not change scores
        return params

    def segment_stats(self, batch: Batch) -> SegmentStats:
        backends: set[str] = set()
        mode, applied = applied_normalisation(self.normalize, batch.outputs)
        scored, _ = scored_texts(self._model.lm, batch.outputs, normalize=mode,
                                 batch_tokens=self.batch_tokens, progress=self.progress, backends=backends)
        p = self._model.predict_scored(scored)
        stats = np.column_stack([p, (p >= 0.5).astype(float), scored.truncated.astype(float)])
        return SegmentStats(values=stats, flags={"truncated": [int(i) for i in np.flatnonzero(stats[:, TRUNC])]},
                            resources={**({"lm_backend": ",".join(sorted(backends))} if backends else {}),
                                       **applied})

    def aggregate(self, stats: np.ndarray) -> float:
        stats = np.asarray(stats, dtype=float)
        return float(np.mean(stats[:, ACCEPTABLE])) if len(stats) else float("nan")

    def resources(self) -> dict[str, str]:
        from ...acceptability.unigram import load_unigram
        from ...lm.loading import resolve_causal_lm

        out = dict(self._model.identity())
        out.update(resolve_causal_lm(self._model.lm).identity())
        out.update(load_unigram(self._model.unigram).identity())
        out["trained_on"] = f"normalize={self._model.normalize}"
        out.update(normalisation_resources(self.normalize))
        return out
