"""Was a release lower-cased or tokenized? The evidence that decides ``case=auto`` for the style metrics.

A corpus's inputs (its sources, and its references when given) say how the release treated text: when nearly every
one of them lacks a capital letter, or many show Penn-Treebank tokenization (`` n't``, `` 's``, a space before
``. , ! ? ; :``), the release lower-cased or tokenized the text, and case says nothing about a system's output: the
style model should not see it (**blind**). Otherwise the release is cased as people wrote it, and a system that
lower-cases its output has chosen to, so the model sees the output as written (**sensitive**).

The thresholds, measured on ``../shared/data``: the sources + references of Lai et al.'s cased GYAFC release have
no capital in .27 of their sentences (.53 of the informal inputs alone) and tokenization in .01; yelp-dualrl's
lower-cased tokenized files have 1.00 and 1.00; PT16 (cased but tokenized) .01-.22 and .92-.996.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

BLIND, SENSITIVE = "blind", "sensitive"
#: At or above this share of texts without any capital letter (among texts with a letter), the release lower-cased
#: its text: informal writers leave out capitals often (half of GYAFC's informal inputs) but not nine times in ten
#: once formal sources or references are among the texts.
LOWERCASED_SHARE = 0.9
#: At or above this share of texts showing PTB tokenization, the release tokenized its text (cased text that its
#: writers spaced themselves shows it in about 1 %).
TOKENIZED_SHARE = 0.3

_PTB = re.compile(r"\w n't\b|\w '(?:s|re|ve|m|ll|d)\b|\w [.,!?;:]", re.IGNORECASE)


def has_capital(text: str) -> bool:
    return any(c.isupper() for c in text)


def is_tokenized(text: str) -> bool:
    """Whether ``text`` shows Penn-Treebank tokenization (a split clitic, or a space before punctuation)."""
    return bool(_PTB.search(text))


@dataclass(frozen=True)
class CaseEvidence:
    """What the detector measured on a set of texts, and the decision it makes.

    ``n_texts``: texts with at least one letter (the others say nothing about case); ``no_capital_share``: the share
    of those without any capital letter; ``tokenized_share``: the share showing PTB tokenization."""

    n_texts: int
    no_capital_share: float
    tokenized_share: float

    @property
    def lowercased(self) -> bool:
        return self.n_texts > 0 and self.no_capital_share >= LOWERCASED_SHARE

    @property
    def tokenized(self) -> bool:
        return self.n_texts > 0 and self.tokenized_share >= TOKENIZED_SHARE

    @property
    def decision(self) -> str:
        """``blind`` for a lower-cased or tokenized release, else ``sensitive``."""
        return BLIND if self.lowercased or self.tokenized else SENSITIVE

    def reason(self, what: str = "sources and references") -> str:
        """One sentence: the decision and the measured shares against their thresholds."""
        if self.n_texts == 0:
            return f"case-sensitive: the {what} have no letters to judge casing by"
        shares = (f"{self.no_capital_share:.0%} of the {self.n_texts} {what} have no capital letter (lower-cased at "
                  f"≥ {LOWERCASED_SHARE:.0%}), {self.tokenized_share:.0%} show tokenization (tokenized at "
                  f"≥ {TOKENIZED_SHARE:.0%})")
        if self.decision == BLIND:
            done = " and ".join(w for w, on in (("lower-cased", self.lowercased), ("tokenized", self.tokenized)) if on)
            return f"case-blind: the release {done} its text ({shares}), so case says nothing about a system"
        return (f"case-sensitive: the release is cased as written ({shares}), so a system that lower-cases its "
                "output has chosen to")

    def to_dict(self) -> dict[str, object]:
        return {"decision": self.decision, "n_texts": self.n_texts,
                "no_capital_share": round(self.no_capital_share, 4),
                "tokenized_share": round(self.tokenized_share, 4),
                "thresholds": {"no_capital_share": LOWERCASED_SHARE, "tokenized_share": TOKENIZED_SHARE}}


def case_evidence(texts: Iterable[str]) -> CaseEvidence:
    """The detector's shares over ``texts`` (texts without a letter are left out)."""
    lettered = [t for t in texts if any(c.isalpha() for c in t)]
    if not lettered:
        return CaseEvidence(0, 0.0, 0.0)
    n = len(lettered)
    return CaseEvidence(n, sum(not has_capital(t) for t in lettered) / n, sum(map(is_tokenized, lettered)) / n)


def release_case(sources: Sequence[str], references: Sequence[Sequence[str]] = ()) -> CaseEvidence:
    """The evidence of a corpus's inputs: its sources and, when given, every reference, pooled. Informal sources
    may lack capitals in a cased release; its references and formal sources have them, so pooling keeps such a
    release case-sensitive."""
    return case_evidence([*sources, *(r for refs in references for r in refs)])
