"""Cardinal numbers in words (``4`` -> ``four``), so that "4 people" and "four people" share an entity."""
from __future__ import annotations

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10 ** 12, "trillion"), (10 ** 9, "billion"), (10 ** 6, "million"), (1000, "thousand"))


def _below_thousand(n: int) -> list[str]:
    words: list[str] = []
    if n >= 100:
        words += [_ONES[n // 100], "hundred"]
        n %= 100
        if n:
            words.append("and")
    if n >= 20:
        words.append(_TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else ""))
    elif n or not words:
        words.append(_ONES[n])
    return words


def number_to_words(n: int) -> str:
    """English words of a non-negative integer below 10**15 (``115`` -> ``one hundred and fifteen``)."""
    if n < 0 or n >= 10 ** 15:
        raise ValueError(f"number out of range: {n}")
    words: list[str] = []
    for value, name in _SCALES:
        if n >= value:
            words += _below_thousand(n // value) + [name]
            n %= value
    if n or not words:
        words += _below_thousand(n)
    return " ".join(words)


def digits_to_words(token: str) -> str:
    """``token`` in words when it is all ASCII digits (commas allowed: ``1,000``), else unchanged."""
    plain = token.replace(",", "")
    if plain.isascii() and plain.isdigit() and len(plain) <= 15:
        return number_to_words(int(plain))
    return token
