"""TER (Snover et al., 2006) as computed by sacrebleu (lower is better).

Statistics per segment are sacrebleu's ``[edits, average reference length]``: the fewest edits
(shifts included) against any of the segment's references, and the mean length of those
references. Corpus score = ``sacrebleu.corpus_ter`` = 100 * sum(edits) / sum(avg ref len); segment
score = ``sacrebleu.sentence_ter``. Scores can exceed 100.

The edit counts are sacrebleu's, computed by :mod:`.ter_edits` (the same shift search, faster), and each
distinct (tokenized output, tokenized reference) pair is computed once per process (a bounded memo), so
outputs repeated across systems or segments, and outputs equal to their source, cost a lookup.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..base import Against
from ..registry import register
from ._common import check_bool, check_lengths
from ._sacrebleu import SacrebleuMetric
from .ter_edits import ter_edits

_MEMO_LIMIT = 500_000
_memo: dict[tuple[str, str], int] = {}


def pair_edits(hyp: str, ref: str) -> int:
    """TER edits of a tokenized output against a tokenized reference (memoized; the memo is emptied when it
    reaches ``_MEMO_LIMIT`` entries so memory stays bounded on any corpus)."""
    key = (hyp, ref)
    edits = _memo.get(key)
    if edits is None:
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        edits = _memo[key] = ter_edits(hyp.split(), ref.split())[0]
    return edits


@register
class TER(SacrebleuMetric):
    name = "ter"
    parameter_help: ClassVar[dict[str, str]] = {
        "normalized": "sacrebleu's TER normalisation",
        "no_punct": "remove punctuation first",
        "asian_support": "sacrebleu's tokenisation of Asian scripts",
        "case_sensitive": "keep case",
    }
    reference = ("sacrebleu TER: sentence_ter and corpus_ter; equal within 1e-9 "
                 "(tests/test_lexical_metrics.py)")
    version = "1"
    higher_is_better = False
    value_range = (0.0, float("inf"))
    description = "sacrebleu TER (0-100+, lower is better): edits per reference word; multi-reference"

    def __init__(self, *, against: str | Against = "references", normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False, case_sensitive: bool = False) -> None:
        from sacrebleu.metrics.ter import TER as SacreTER

        self.against = Against.parse(against)
        for param, value in (("normalized", normalized), ("no_punct", no_punct), ("asian_support", asian_support),
                             ("case_sensitive", case_sensitive)):
            check_bool(self.name, param, value)
        self.normalized = normalized
        self.no_punct = no_punct
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self._sb = SacreTER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                            case_sensitive=case_sensitive)
        self._init_cache()

    @property
    def n_stats(self) -> int:
        return 2

    def reference_info(self, comparisons):  # type: ignore[override]
        """Each segment's references, tokenized, as strings (the memo's keys)."""
        pre = self._sb._preprocess_segment
        return self._ref_cache.get(comparisons, lambda: [[pre(r) for r in refs if r is not None]
                                                          for refs in comparisons])

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        """sacrebleu's ``[fewest edits over the references, mean reference length]`` per segment."""
        check_lengths(self.name, outputs, comparisons)
        pre = self._sb._preprocess_segment
        rows = np.empty((len(outputs), 2), dtype=float)
        for k, (hyp, refs) in enumerate(zip(outputs, self.reference_info(comparisons))):
            hyp_tok = pre(hyp)
            best = int(1e16)
            ref_len = 0
            for ref in refs:
                best = min(best, pair_edits(hyp_tok, ref))
                ref_len += len(ref.split())
            rows[k, 0] = best
            rows[k, 1] = ref_len / len(refs)
        return rows

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        """sacrebleu's ``100 * edits / ref_len`` per row (100 for edits against empty references, else 0)."""
        stats = np.asarray(stats, dtype=float)
        edits, ref_len = stats[:, 0], stats[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(ref_len > 0, edits / np.where(ref_len > 0, ref_len, 1.0),
                            np.where(edits > 0, 1.0, 0.0))
        return 100 * rate

    def _corpus_from_sums(self, sums: list[float]) -> float:
        return float(self._sb._compute_score_from_stats(sums).score)
