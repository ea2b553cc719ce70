"""Length-normalised LM scores: ``slor`` (Kann et al. 2018) and ``mean_logprob``.

For an output ``s`` of ``n`` LM tokens (after the ``normalize`` option, see :mod:`styleval.textnorm.readable`):

* ``mean_logprob`` = log P_LM(s) / n, the mean token log-probability (natural log; ``-log`` of the segment
  perplexity). Statistics ``[logprob_sum, n_tokens, truncated]``.
* ``slor`` = (log P_LM(s) - log P_unigram(s)) / n, where P_unigram is a unigram model over the same LM tokens
  estimated on a named corpus (``unigram=``; the shipped ``smollm2-mixed-public``, see
  :mod:`styleval.acceptability.unigram`), so rare words do not count as disfluency. Statistics
  ``[logprob_sum, unigram_logprob_sum, n_tokens, truncated]``.

``normalize`` defaults to ``auto``: each output is detokenized when it shows tokenization spaces and true-cased when
it has no capital letter, decided per text (``auto-corpus``: once per system, the mode in the signature as
``normalized_as``).
Log-probabilities are those of :mod:`styleval.lm.causal` (BOS prefix, every text token scored). Corpus score: the
mean of the segment scores (empty outputs, which have no score, are left out and flagged). Higher is better.
Target-style LMs (``style_lms``) work as in ``perplexity``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, ClassVar

import numpy as np

from ...models.catalog import DEFAULT_CAUSAL_LM
from ..content._common import check_number
from ..base import Aspect, Batch, Metric, SegmentStats
from ..registry import register
from .lm_shared import (CORPUS_NORMALISATION, StyleLMs, applied_normalisation, lm_params,
                        scored_texts)
from .perplexity import parse_style_lms


class _LMScore(StyleLMs, Metric):
    """A per-segment score from one LM pass over the normalised outputs; the corpus score is their mean."""

    aspect = Aspect.FLUENCY
    higher_is_better = True
    value_range = (-math.inf, math.inf)
    libraries = ("torch", "sacremoses")
    batch_dependence = CORPUS_NORMALISATION

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return self.normalize != "auto-corpus"

    def __init__(self, *, model: str = DEFAULT_CAUSAL_LM, style_lms: "str | dict[str, str] | None" = None,
                 normalize: str = "auto", batch_tokens: int = 4096, max_tokens: int = 0) -> None:
        from ...textnorm.readable import check_mode

        self.model = model
        self.style_lms = style_lms
        self.normalize = check_mode(normalize)
        check_number(self.name, "batch_tokens", batch_tokens, low=1, integer=True)
        check_number(self.name, "max_tokens", max_tokens, low=0, integer=True)
        self.batch_tokens = int(batch_tokens)
        self.max_tokens = int(max_tokens)
        self._style_lms = parse_style_lms(style_lms)
        self.progress: Callable[[str, int, int], None] | None = None

    def get_params(self) -> dict[str, Any]:
        return lm_params(self, super().get_params())

    def _per_lm(self, batch: Batch, stats: np.ndarray, fill: Callable[[list[int], Any], None]) -> SegmentStats:
        """Run each LM on its rows, let ``fill`` write their statistics (truncation in the last column)."""
        backends: set[str] = set()
        mode, applied = applied_normalisation(self.normalize, batch.outputs)
        for lm_name, rows in self._groups(batch).items():
            scored, _ = scored_texts(lm_name, [batch.outputs[i] for i in rows], normalize=mode,
                                     batch_tokens=self.batch_tokens, max_tokens=self.max_tokens,
                                     progress=self.progress, backends=backends)
            fill(rows, scored)
            stats[rows, -1] = scored.truncated
        return SegmentStats(values=stats, flags={"truncated": [int(i) for i in np.flatnonzero(stats[:, -1])]},
                            resources={**({"lm_backend": ",".join(sorted(backends))} if backends else {}),
                                       **applied})

    def aggregate(self, stats: np.ndarray) -> float:
        scores = self.scores_from_stats(stats)
        return float(np.nanmean(scores)) if np.isfinite(scores).any() else float("nan")


@register
class MeanLogprob(_LMScore):
    """Mean token log-probability of each output under a causal LM (default SmolLM2-135M)."""

    name = "mean_logprob"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the causal LM: catalog name or folder",
    }
    reference = "the same LM pass as perplexity"
    n_stats = 3
    version = "2"  # 2: normalize=auto decides per text (1: per system, now auto-corpus)
    description = "mean token log-probability log P_LM(s)/|s| (natural log); corpus: mean over segments"

    def segment_stats(self, batch: Batch) -> SegmentStats:
        stats = np.zeros((len(batch), 3))

        def fill(rows: list[int], scored: Any) -> None:
            stats[rows, 0] = [float(np.sum(lp)) for lp in scored.logprobs]
            stats[rows, 1] = [len(lp) for lp in scored.logprobs]

        return self._per_lm(batch, stats, fill)

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=float)
        n = stats[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, stats[:, 0] / np.maximum(n, 1), np.nan)


@register
class Slor(_LMScore):
    """SLOR (Kann et al. 2018): LM log-probability minus unigram log-probability, per token."""

    name = "slor"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the causal LM: catalog name or folder",
        "unigram": "the unigram counts over the LM's tokens (shipped name or file)",
    }
    reference = "Kann et al. 2018's formula over the LM's tokens"
    n_stats = 4
    version = "2"  # 2: normalize=auto decides per text (1: per system, now auto-corpus)
    description = ("SLOR (Kann et al. 2018): (log P_LM(s) - log P_unigram(s)) / |s| with a unigram model over the "
                   "LM's tokens from a named corpus; corpus: mean over segments")

    def __init__(self, *, model: str = DEFAULT_CAUSAL_LM, style_lms: "str | dict[str, str] | None" = None,
                 unigram: str = "smollm2-mixed-public", normalize: str = "auto", batch_tokens: int = 4096,
                 max_tokens: int = 0) -> None:
        super().__init__(model=model, style_lms=style_lms, normalize=normalize, batch_tokens=batch_tokens,
                         max_tokens=max_tokens)
        from ...acceptability.unigram import load_unigram

        self.unigram = unigram
        self._unigram = load_unigram(unigram)
        self._checked: set[str] = set()

    def segment_stats(self, batch: Batch) -> SegmentStats:
        from ...acceptability.features import slor_parts
        from ...lm.loading import load_causal_lm

        stats = np.zeros((len(batch), 4))

        def fill(rows: list[int], scored: Any) -> None:
            stats[rows, 0], stats[rows, 1], stats[rows, 2] = slor_parts(scored, self._unigram)

        for lm_name in self._groups(batch):
            if lm_name not in self._checked:
                self._unigram.check_tokenizer(load_causal_lm(lm_name).tokenizer)
                self._checked.add(lm_name)
        return self._per_lm(batch, stats, fill)

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=float)
        n = stats[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, (stats[:, 0] - stats[:, 1]) / np.maximum(n, 1), np.nan)

    def resources(self) -> dict[str, str]:
        out = super().resources()
        out.update(self._unigram.identity())
        out["unigram_corpus"] = str(self._unigram.meta.get("corpus", "")).split(":")[0]
        return out
