"""Perplexity of the outputs under a causal LM, optionally one LM per target style (Lai et al. 2022).

Statistics per segment: ``[nll_sum, n_tokens, truncated]`` (natural-log NLL over the scored tokens, see
:mod:`styleval.lm.causal`). Segment score: ``exp(nll_sum / n_tokens)``. Corpus score (``corpus="tokens"``,
the default): ``exp(sum nll / sum n_tokens)``, the perplexity of the whole output text; ``corpus="mean"`` averages
segment perplexities instead. Lower is better.

``style_lms`` maps a target style to an LM (a folder written by ``styleval train-lm`` or any causal-LM folder):
each segment is scored by the LM of its direction's target style; segments whose style has no LM (or that have no
direction) fall back to ``model``, and the signature says so (``lm_fallback:<styles>``).

``normalize`` (``none``, ``detok``, ``truecase``, ``detok+truecase``, ``auto``; :mod:`styleval.textnorm.readable`)
rewrites each output before the LM sees it (lower-cased tokenized releases read as ordinary text); it is a signature
parameter unless ``none``. ``auto`` decides per text, as ``acceptability`` does (``auto-corpus``: once per system
batch from all its outputs, the mode it took named in the signature as ``normalized_as``); with the same LM the two
metrics then read one LM pass (``evaluate`` asks for it, issue #46).
"""
from __future__ import annotations

import math
from typing import Any, Callable, ClassVar

import numpy as np

from ...errors import InputError
from ...models.catalog import DEFAULT_CAUSAL_LM
from ..content._common import check_number
from ..base import Aspect, Batch, Metric, SegmentStats
from ..registry import register
from .lm_shared import CORPUS_NORMALISATION, StyleLMs, applied_normalisation, scored_texts

NLL, NTOK, TRUNC = 0, 1, 2


def parse_style_lms(value: "str | dict[str, str] | None") -> dict[str, str]:
    """``{"formal": dir, ...}`` from a dict or ``"formal=DIR;informal=DIR"`` (the CLI spec form); ``none`` (what the
    signature writes for no style LMs) is none."""
    if value is None or value == "" or (isinstance(value, str) and value.strip().lower() == "none"):
        return {}
    if isinstance(value, dict):
        return {str(k).strip().lower(): str(v) for k, v in value.items()}
    out: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in str(value).split(";"))):
        style, sep, path = item.partition("=")
        if not sep or not style.strip() or not path.strip():
            raise InputError(f"style_lms: {item!r} is not style=path (use 'formal=DIR;informal=DIR')")
        out[style.strip().lower()] = path.strip()
    return out


@register
class Perplexity(StyleLMs, Metric):
    """Perplexity under a causal LM (default SmolLM2-135M), per target style when style LMs are given."""

    name = "perplexity"
    parameter_help: ClassVar[dict[str, str]] = {
        "corpus": "corpus score: tokens (exp of total NLL / total tokens) or mean of segments",
        "model": "the generic causal LM: catalog name or folder",
    }
    batch_dependence = CORPUS_NORMALISATION
    reference = ("transformers causal LM loop: corpus perplexity within 1.4e-5 (relative; "
                 "benchmarks/bench_perplexity.py)")
    n_stats = 3
    version = "1"
    aspect = Aspect.FLUENCY
    higher_is_better = False
    value_range = (1.0, math.inf)
    pass_threshold = 200.0  # J's fluency test on perplexity (evaluate --fluency perplexity)
    description = "LM perplexity exp(NLL/tokens) of each output; corpus: exp(sum NLL / sum tokens)"
    libraries: ClassVar[tuple[str, ...]] = ("torch", "transformers")

    def __init__(self, *, model: str = DEFAULT_CAUSAL_LM, style_lms: "str | dict[str, str] | None" = None,
                 corpus: str = "tokens", batch_tokens: int = 4096, max_tokens: int = 0,
                 normalize: str = "none") -> None:
        from ...textnorm.readable import check_mode

        if corpus not in ("tokens", "mean"):
            raise InputError(f"perplexity: corpus must be 'tokens' or 'mean', not {corpus!r}")
        self.model = model
        self.style_lms = style_lms
        self.corpus = corpus
        check_number(self.name, "batch_tokens", batch_tokens, low=1, integer=True)
        check_number(self.name, "max_tokens", max_tokens, low=0, integer=True)
        self.batch_tokens = int(batch_tokens)
        self.max_tokens = int(max_tokens)
        self._style_lms = parse_style_lms(style_lms)
        self.normalize = check_mode(normalize)  # text normalisation before the LM (styleval.textnorm.readable)

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return self.normalize != "auto-corpus"

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("batch_tokens", None)  # does not change scores
        if params.get("normalize") == "none":
            params.pop("normalize")  # signatures from before the option read the same
        params["style_lms"] = ";".join(f"{k}={v}" for k, v in sorted(self._style_lms.items())) or "none"
        return params

    def segment_stats(self, batch: Batch) -> SegmentStats:
        groups = self._groups(batch)
        stats = np.zeros((len(batch), 3))
        backends: set[str] = set()  # the code that ran each LM ("native" or "transformers")
        # auto-corpus decides from the whole batch (not per LM group), as acceptability does: both read the same texts
        mode, applied = applied_normalisation(self.normalize, batch.outputs)
        for lm_name, rows in groups.items():
            # the LM pass slor, mean_logprob and acceptability share (sums equal lm.causal.token_nll's)
            scored, _ = scored_texts(lm_name, [batch.outputs[i] for i in rows], normalize=mode,
                                     batch_tokens=self.batch_tokens, max_tokens=self.max_tokens, backends=backends)
            stats[rows, NLL] = [-float(lp.sum()) for lp in scored.logprobs]
            stats[rows, NTOK] = [len(lp) for lp in scored.logprobs]
            stats[rows, TRUNC] = scored.truncated
        return SegmentStats(values=stats, flags={"truncated": [int(i) for i in np.flatnonzero(stats[:, TRUNC])]},
                            resources={**({"lm_backend": ",".join(sorted(backends))} if backends else {}),
                                       **applied})

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        stats = np.asarray(stats, dtype=float)
        n = stats[:, NTOK]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, np.exp(stats[:, NLL] / np.maximum(n, 1)), np.nan)

    def aggregate(self, stats: np.ndarray) -> float:
        stats = np.asarray(stats, dtype=float)
        if self.corpus == "mean":
            scores = self.scores_from_stats(stats)
            return float(np.nanmean(scores)) if np.isfinite(scores).any() else float("nan")
        return _from_sums(stats.sum(axis=0)) if len(stats) else float("nan")

    def sum_aggregate(self) -> "Callable[[np.ndarray], float] | None":
        return _from_sums if self.corpus == "tokens" else None


def _from_sums(sums: np.ndarray) -> float:
    return math.exp(sums[NLL] / sums[NTOK]) if sums[NTOK] > 0 else float("nan")
