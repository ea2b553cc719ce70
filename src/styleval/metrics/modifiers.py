"""Modifiers of content metrics: wrap any content metric to change its inputs or its segment scores.

Two kinds exist, both recorded in the signature of the wrapped metric:

* text transforms (style masking, style removal) rewrite outputs and comparison texts before the inner
  metric sees them; the corpus score stays the inner metric's own aggregate (corpus BLEU stays corpus BLEU);
* score adjustments (entity-aware, sentiment-aware) combine each segment's inner score with a second score
  computed from the texts; the corpus score is then the mean of the adjusted segment scores.

A modifier is built around an inner metric: ``StyleMask(inner=registry.create("bleu"), lexicon=...)``; it
is not registered by name, the CLI applies it to every content metric through flags.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..signature import Signature
from .base import Against, Batch, ContentMetric, SegmentStats
from .identity import MetricId, freeze_params


class ContentModifier(ContentMetric):
    """Base class of modifiers. Subclasses set ``suffix`` and override :meth:`transform` and/or :meth:`adjust`.

    Statistics are ``[adjusted score, *extra columns, *inner statistics]``; ``n_extra`` says how many extra
    columns :meth:`adjust` returns after the score.
    """

    suffix: ClassVar[str]
    adjusts_scores: ClassVar[bool] = False
    n_extra: ClassVar[int] = 0

    def __init__(self, *, inner: ContentMetric) -> None:
        self.inner = inner

    # identity follows the inner metric
    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.inner.name}+{self.suffix}"

    @property
    def against(self) -> Against:  # type: ignore[override]
        return self.inner.against

    @property
    def aspect(self):  # type: ignore[override]
        return self.inner.aspect

    @property
    def higher_is_better(self) -> bool:  # type: ignore[override]
        return self.inner.higher_is_better

    @property
    def value_range(self) -> tuple[float, float]:  # type: ignore[override]
        return self.inner.value_range

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return self.inner.batch_independent

    @property
    def batch_dependence(self) -> str:  # type: ignore[override]
        return self.inner.batch_dependence

    @property
    def metric_id(self) -> MetricId:
        inner = self.inner.metric_id
        return MetricId(name=inner.name, params=inner.params, against=inner.against, tokens=inner.tokens,
                        modifiers=(*inner.modifiers, (self.suffix, freeze_params(self.modifier_params()))))

    def modifier_params(self) -> dict[str, Any]:
        """Parameters of the modifier itself (everything but ``inner``)."""
        return {k: v for k, v in self.get_params().items() if k != "inner"}

    def resources(self) -> dict[str, str]:
        return dict(self.inner.resources())

    def signature(self, batch: Batch | None = None, resolved: dict[str, str] | None = None) -> Signature:
        base = self.inner.signature(batch, resolved)
        params = dict(base.params)
        params.update({f"{self.suffix}.{k}": v for k, v in self.modifier_params().items()})
        libs = dict(base.libraries)
        libs.update({lib: v for lib, v in super().signature(batch).libraries.items()})
        return Signature(metric=self.name, version=f"{base.version}+{self.suffix}.{self.version}",
                         against=base.against, nrefs=base.nrefs, params=params,
                         resources={**base.resources, **self.resources()}, libraries=libs)

    # -- the two hooks -----------------------------------------------------------------------------
    def transform(self, outputs: list[str], comparisons: list[list[str]]) -> tuple[list[str], list[list[str]]]:
        """Rewrite the texts before the inner metric scores them (identity by default)."""
        return outputs, comparisons

    def adjust(self, outputs: list[str], comparisons: list[list[str]], scores: np.ndarray) -> np.ndarray:
        """Adjusted segment scores, shape (n,) or (n, 1 + n_extra); the default keeps the inner scores."""
        return scores

    # -- statistics ----------------------------------------------------------------------------------
    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> SegmentStats:
        """``[adjusted score, *extra, *inner statistics]``; the inner metric's flags, facts and resolved resources
        are kept."""
        t_out, t_comp = self.transform(outputs, comparisons)
        inner = SegmentStats.of(self.inner.pair_stats(t_out, t_comp))
        inner_stats = np.asarray(inner.values, dtype=float)
        adjusted = np.asarray(self.adjust(outputs, comparisons, self.inner.scores_from_stats(inner_stats)), float)
        if adjusted.ndim == 1:
            adjusted = adjusted[:, None]
        return SegmentStats(values=np.column_stack([adjusted, inner_stats]), flags=dict(inner.flags),
                            extra=dict(inner.extra), resources=dict(inner.resources))

    @property
    def n_stats(self) -> int:
        return 1 + self.n_extra + self.inner.n_stats

    def _inner_stats(self, stats: np.ndarray) -> np.ndarray:
        return np.asarray(stats, dtype=float)[:, 1 + self.n_extra:]

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return np.asarray(stats, dtype=float)[:, 0]

    def aggregate(self, stats: np.ndarray) -> float:
        if self.adjusts_scores:
            scores = self.scores_from_stats(stats)
            return float(np.nanmean(scores)) if len(scores) else float("nan")
        return self.inner.aggregate(self._inner_stats(stats))

    def sum_aggregate(self):
        if self.adjusts_scores:
            return None
        inner = self.inner.sum_aggregate()
        if inner is None:
            return None
        start = 1 + self.n_extra
        return lambda sums: inner(np.asarray(sums)[start:])
