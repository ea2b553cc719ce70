"""The one seeded split of the project: shuffle ``range(n)`` with ``random.Random(seed)`` and cut it in order.

Every trainer and every held-out set built from a shuffled dataset goes through :func:`shuffled_parts`, so a
seed names the same items wherever it is used (the shipped models were trained on these exact cuts: the
ParaDetox classifier, the ParaDetox transfer baselines and the preservation model's ParaDetox rewrites).
"""
from __future__ import annotations

import random
from typing import Literal, Sequence

from ..errors import InputError


def shuffled_parts(n: int, fractions: Sequence[float], *, seed: int,
                   rounding: Literal["floor", "nearest"] = "floor", at_least: int = 0) -> list[list[int]]:
    """Indices ``0..n-1`` shuffled with ``seed``, cut into ``len(fractions) + 1`` consecutive parts.

    Part ``k < len(fractions)`` holds ``int(n * fractions[k])`` indices (``rounding="nearest"``:
    ``int(round(n * fractions[k]))``; never fewer than ``at_least``); the last part holds the rest. Indices keep
    their shuffled order within each part.
    """
    if n < 0:
        raise InputError(f"cannot split {n} items")
    if any(not 0 <= f <= 1 for f in fractions) or sum(fractions) > 1:
        raise InputError(f"fractions must lie in [0, 1] and sum to at most 1, got {tuple(fractions)}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    parts: list[list[int]] = []
    start = 0
    for fraction in fractions:
        size = int(n * fraction) if rounding == "floor" else int(round(n * fraction))
        size = max(at_least, size)
        parts.append(order[start:start + size])
        start += size
    parts.append(order[start:])
    return parts
