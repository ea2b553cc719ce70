"""Perplexity under an n-gram LM (modified Kneser-Ney, queried with KenLM), one LM per target style.

Same statistics and aggregation as :mod:`.perplexity` (``[nll_sum, n_tokens, 0]``; tokens are the words of
:func:`styleval.lm.ngram.tokenize` plus ``</s>``). ``model`` is an ARPA/KenLM file used for every segment
without a style LM; ``style_lms`` maps target styles to such files (``formal=F.arpa;informal=I.arpa``).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InputError
from ..base import Batch
from ..registry import register
from .perplexity import NLL, NTOK, Perplexity


@register
class NgramPerplexity(Perplexity):
    """Perplexity under a modified Kneser-Ney n-gram LM (KenLM), per target style when style LMs are given."""

    name = "ngram-perplexity"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the ARPA n-gram LM (required unless style_lms covers every target)",
        "corpus": "corpus score: tokens (exp of total NLL / total tokens) or mean of segments",
    }
    reference = "KenLM scoring of ARPA models"
    version = "1"
    description = "n-gram (modified Kneser-Ney, KenLM) perplexity; corpus: exp(sum NLL / sum tokens)"
    libraries: ClassVar[tuple[str, ...]] = ("ufal.kenlm",)

    def __init__(self, *, model: str = "", style_lms: "str | dict[str, str] | None" = None,
                 corpus: str = "tokens", lowercase: bool = True) -> None:
        super().__init__(model=model, style_lms=style_lms, corpus=corpus)
        if not model and not self._style_lms:
            raise InputError("ngram-perplexity needs model=<ARPA file> and/or style_lms=style=<ARPA>;... "
                             "(train them with `styleval train-lm --kind ngram`)")
        self.lowercase = lowercase
        self._lms: dict[str, object] = {}

    def _lm(self, path: str):
        from ...lm.ngram import NgramLM

        if path not in self._lms:
            self._lms[path] = NgramLM(path, lowercase=self.lowercase)
        return self._lms[path]

    def segment_stats(self, batch: Batch) -> np.ndarray:  # type: ignore[override]
        stats = np.zeros((len(batch), 3))
        groups: dict[str, list[int]] = {}
        for i, d in enumerate(batch.directions):
            groups.setdefault(self._lm_for(d.target_style if d is not None else None), []).append(i)
        for path, rows in groups.items():
            if not path:
                raise InputError(f"ngram-perplexity: no LM for the target style of {len(rows)} segment(s) and no "
                                 "generic model= given")
            nll, n = self._lm(path).token_nll([batch.outputs[i] for i in rows])
            stats[rows, NLL] = nll
            stats[rows, NTOK] = n
        return stats

    def resources(self) -> dict[str, str]:
        from ...models.hashing import content_hash

        out: dict[str, str] = {}
        if self.model:
            out["lm"] = self.model
            out["lm_hash"] = content_hash(self.model)[:12]
        for style, path in sorted(self._style_lms.items()):
            out[f"lm[{style}]"] = path
            out[f"lm[{style}]_hash"] = content_hash(path)[:12]
        return out
