"""From a judge's answer to a rating: probability-weighted over the rating tokens (G-Eval's expected score, Liu
et al. 2023) or parsed from the generated text.

Probability-weighted: at the first answer position the backend returns its ``top_logprobs`` most likely tokens
with their log-probabilities. A token counts for rating ``r`` when its text, stripped of white space, is exactly
the digit ``r`` of the template's scale (so ``"4"`` and ``" 4"`` both count for 4). Each rating's probability is the
sum over its tokens; the rating is ``sum_r r * p(r) / sum_r p(r)``, and ``sum_r p(r)`` (the probability mass the
judge put on valid ratings) is kept as a diagnostic. Tokens outside the top ``k`` count as zero, on both backends
alike (the local backend truncates its full distribution to the same ``k``). No rating token among them: no
probability-weighted rating (NaN), and the caller falls back to the parsed rating.

Parsed: the first digit in the generated text that stands alone (not part of a longer number) and lies on the
scale; NaN when there is none.
"""
from __future__ import annotations

import math
import re
from typing import Iterable, Sequence

_DIGIT = re.compile(r"(?<![0-9])([0-9])(?![0-9])")


def weighted_rating(top: Iterable[tuple[str, float]], scale: Sequence[int]) -> tuple[float, float]:
    """``(expected rating, probability mass on the rating tokens)`` from ``(token text, log-probability)`` pairs;
    ``(nan, 0.0)`` when no token is a rating."""
    allowed = {str(r): r for r in scale}
    prob = {r: 0.0 for r in scale}
    for text, logprob in top:
        rating = allowed.get(text.strip())
        if rating is not None and math.isfinite(logprob):
            prob[rating] += math.exp(logprob)
    mass = sum(prob.values())
    if mass <= 0.0:
        return float("nan"), 0.0
    return sum(r * p for r, p in prob.items()) / mass, mass


def parse_rating(text: str, scale: Sequence[int]) -> float:
    """The first stand-alone digit of ``text`` if it is on the scale, else NaN."""
    match = _DIGIT.search(text)
    if match is None:
        return float("nan")
    value = int(match.group(1))
    return float(value) if value in scale else float("nan")
