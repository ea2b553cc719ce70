"""Automatic corruption of well-formed sentences: the negative examples of the acceptability classifier.

Each operation imitates an error that style-transfer systems make: a dropped word, a repeated word or phrase
(decoders looping), two words swapped or a short span shuffled, a wrong inflection (agreement, tense, article), a
sentence cut short, a stray token inserted, and a word replaced by an unrelated word from another sentence
(a slot filled wrongly by retrieval or deletion systems). :func:`corrupt` applies one to three operations to the
whitespace tokens of a text and never returns the text unchanged.
"""
from __future__ import annotations

import random
from typing import Callable, Sequence

#: Pairs that swap into a wrong form (both directions are used).
INFLECTIONS = [("is", "are"), ("was", "were"), ("has", "have"), ("does", "do"), ("a", "an"), ("this", "these"),
               ("it", "they"), ("he", "they"), ("i", "me"), ("we", "us"), ("am", "is"), ("its", "it"),
               ("their", "they"), ("his", "he"), ("to", "too"), ("than", "then"), ("much", "many"),
               ("go", "went"), ("come", "came"), ("get", "got"), ("make", "made"), ("take", "took"),
               ("be", "been"), ("is", "be"), ("good", "well"), ("the", "a")]
_SWAP: dict[str, list[str]] = {}
for _a, _b in INFLECTIONS:
    _SWAP.setdefault(_a, []).append(_b)
    _SWAP.setdefault(_b, []).append(_a)
STRAY = ["the", "and", "of", "to", "a", "is", "it", ",", ".", "!", "'s", "n't", "<unk>", "was", "that", "very",
         "not", "but", "with", "for"]


def _match_case(new: str, old: str) -> str:
    return new.capitalize() if old[:1].isupper() else new


def _inflect(word: str, rng: random.Random) -> str | None:
    low = word.lower()
    if low in _SWAP:
        return _match_case(rng.choice(_SWAP[low]), word)
    if not low.isalpha() or len(low) < 4:
        return None
    if low.endswith("ing"):
        return word[:-3] + rng.choice(["ed", "s", ""])
    if low.endswith("ed"):
        return word[:-2] + rng.choice(["ing", "s"])
    if low.endswith("s") and not low.endswith("ss"):
        return word[:-1]
    return word + rng.choice(["s", "ed", "ing"])


def drop(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    k = min(len(tok) - 2, rng.choice([1, 1, 2]))
    for _ in range(max(k, 1)):
        del tok[rng.randrange(len(tok))]
    return tok


def repeat(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    n = rng.choice([1, 1, 2, 3])
    i = rng.randrange(max(1, len(tok) - n + 1))
    return tok[:i + n] + tok[i:i + n] + tok[i + n:]


def swap(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    i = rng.randrange(len(tok) - 1)
    tok[i], tok[i + 1] = tok[i + 1], tok[i]
    return tok


def shuffle_span(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    n = min(len(tok), rng.choice([3, 4, 5]))
    i = rng.randrange(len(tok) - n + 1)
    span = tok[i:i + n]
    for _ in range(5):
        rng.shuffle(span)
        if span != tok[i:i + n]:
            break
    return tok[:i] + span + tok[i + n:]


def inflect(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    spots = list(range(len(tok)))
    rng.shuffle(spots)
    for i in spots:
        new = _inflect(tok[i], rng)
        if new and new != tok[i]:
            tok[i] = new
            return tok
    return drop(tok, rng, pool)


def truncate(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    body = tok[:-1] if tok[-1] in (".", "!", "?") else tok
    keep = max(2, int(len(body) * rng.uniform(0.35, 0.75)))
    return body[:keep] + ([tok[-1]] if body is not tok and rng.random() < 0.5 else [])


def stray(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    i = rng.randrange(len(tok) + 1)
    return tok[:i] + [rng.choice(STRAY)] + tok[i:]


def replace(tok: list[str], rng: random.Random, pool: Sequence[str]) -> list[str]:
    words = rng.choice(pool).split() if pool else []
    if not words:
        return stray(tok, rng, pool)
    tok[rng.randrange(len(tok))] = rng.choice(words)
    return tok


OPERATIONS: dict[str, Callable[[list[str], random.Random, Sequence[str]], list[str]]] = {
    "drop": drop, "repeat": repeat, "swap": swap, "shuffle": shuffle_span, "inflect": inflect,
    "truncate": truncate, "stray": stray, "replace": replace}


def corrupt(text: str, rng: random.Random, pool: Sequence[str] = (), max_ops: int = 3) -> tuple[str, list[str]]:
    """A corrupted copy of ``text`` (whitespace tokens) and the operations applied; ``pool`` supplies words for
    ``replace``. Texts of fewer than three tokens only get words repeated or inserted."""
    tok = text.split()
    names = list(OPERATIONS) if len(tok) >= 3 else ["repeat", "stray"]
    if not tok:
        return rng.choice(STRAY), ["stray"]
    applied: list[str] = []
    n_ops = rng.choice([1, 1, 1, 2, 2, 3][: max_ops * 2])
    for _ in range(20):
        name = rng.choice(names)
        tok = OPERATIONS[name](list(tok), rng, pool)
        applied.append(name)
        if len(applied) >= n_ops and " ".join(tok) != text:
            break
        if len(tok) < 3:
            names = ["repeat", "stray"]
    return " ".join(tok), applied
