"""Degraded texts for the quality-control test: outputs damaged so that an attentive annotator scores them lower."""
from __future__ import annotations

import random


def scramble(text: str, rng: random.Random) -> str:
    """Shuffle the words and drop about a quarter of them (at least one when there are four or more)."""
    words = text.split()
    if len(words) < 2:
        return (text + " " + text).strip() or "\u2026"
    drop = max(1, len(words) // 4) if len(words) >= 4 else 0
    for _ in range(drop):
        words.pop(rng.randrange(len(words)))
    original = text.split()
    for _ in range(10):
        rng.shuffle(words)
        if words != original[:len(words)]:
            break
    return " ".join(words)
