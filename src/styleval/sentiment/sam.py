"""SAM, the sentiment-aware measure of Saadany et al. (RANLP 2021), on parsed texts.

For an output (hypothesis) h and a comparison text r (reference, or the source):

1. *matching step* (styleval's): align the two word sequences and keep the **mismatched** words of each side
   (``alignment="sequence"``: the words outside the longest matching blocks of the lemma sequences, as difflib
   finds them; ``"bag"``: lemma multiset difference, order ignored). Words are tokens with a letter or digit,
   compared by lower-cased lemma;
2. *lexicon lookup* (styleval's): each mismatched word's prior polarity s by (lemma, POS), POS from spaCy mapped to
   n/v/a/r by :func:`~styleval.sentiment.lexicon.lexicon_pos`; 0 when absent;
3. (the paper's eq. 1-4) weights ``w_i = |s_i|``, side sentiment ``S = Σ (w_i / Σ_j w_j)·s_i = Σ s·|s| / Σ |s|``;
   when every weight is zero (no mismatched word, or only neutral ones) ``S = 0``, as the paper's Table 1 gives
   ``S_h = 0`` for a hypothesis whose only mismatched word has polarity 0;
4. (eq. 5, 6) ``p = |S_r − S_h| / 2`` in [0, 1], and the sentiment-aware score is ``C·(1 − p)`` for a content
   score C.

Steps 3-4 are checked against the paper's equations and both worked examples of its Table 1 (tests/test_sam.py);
steps 1-2 are where styleval chooses (the paper does not specify its matching or tagger in code). Negation and
intensifiers are not modelled: only prior polarities of changed words are compared.
"""
from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..nlp import ParsedText, Token
from .lexicon import PolarityLexicon, lexicon_pos

ALIGNMENTS = ("sequence", "bag")


@dataclass(frozen=True)
class SamDetail:
    p: float
    s_output: float
    s_comparison: float
    output_words: tuple[tuple[str, float], ...]  # mismatched (word, polarity) with polarity != 0
    comparison_words: tuple[tuple[str, float], ...]


def _words(parsed: ParsedText) -> list[Token]:
    return [t for t in parsed.tokens if t.is_word]


def _key(tok: Token) -> str:
    return (tok.lemma or tok.text).lower()


def mismatched(output: ParsedText, comparison: ParsedText, alignment: str = "sequence"
               ) -> tuple[list[Token], list[Token]]:
    """Words of each side left unaligned."""
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {alignment!r}")
    a, b = _words(output), _words(comparison)
    ka, kb = [_key(t) for t in a], [_key(t) for t in b]
    if alignment == "bag":
        extra_a = Counter(ka) - Counter(kb)
        extra_b = Counter(kb) - Counter(ka)
        out_a: list[Any] = []
        out_b: list[Any] = []
        for toks, extra, sink in ((a, extra_a, out_a), (b, extra_b, out_b)):
            for t in toks:
                if extra[_key(t)] > 0:
                    extra[_key(t)] -= 1
                    sink.append(t)
        return out_a, out_b
    matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    used_a: set[int] = set()
    used_b: set[int] = set()
    for block in matcher.get_matching_blocks():
        used_a.update(range(block.a, block.a + block.size))
        used_b.update(range(block.b, block.b + block.size))
    return ([t for i, t in enumerate(a) if i not in used_a], [t for i, t in enumerate(b) if i not in used_b])


def polarities(tokens: list[Token], lexicon: PolarityLexicon) -> list[tuple[str, float]]:
    """(word, prior polarity) for tokens with a non-zero polarity; POS from spaCy mapped to n/v/a/r."""
    out = []
    for t in tokens:
        s = lexicon.lookup(t.lemma or t.text, lexicon_pos(t.pos, t.tag), t.text)
        if s:
            out.append((t.text, float(s)))
    return out


def weighted_sentiment(scores: list[float]) -> float:
    """``Σ s·|s| / Σ |s|`` (eq. 1-4: |s|-weighted mean); 0 when all weights are zero (no or only neutral words)."""
    den = sum(abs(s) for s in scores)
    return sum(s * abs(s) for s in scores) / den if den else 0.0


def sam_penalty(s_output: float, s_comparison: float) -> float:
    """``p = |S_r − S_h| / 2``."""
    return abs(s_comparison - s_output) / 2.0


def sam_detail(output: ParsedText, comparison: ParsedText, lexicon: PolarityLexicon,
               alignment: str = "sequence") -> SamDetail:
    mo, mc = mismatched(output, comparison, alignment)
    po, pc = polarities(mo, lexicon), polarities(mc, lexicon)
    sh = weighted_sentiment([s for _, s in po])
    sr = weighted_sentiment([s for _, s in pc])
    return SamDetail(sam_penalty(sh, sr), sh, sr, tuple(po), tuple(pc))
