"""Helpers shared by the lexical content metrics: a small cache of per-reference work, tokenizers."""
from __future__ import annotations

import math
import re
from collections import OrderedDict
from typing import Any, Callable, Hashable, Sequence

from ...errors import InputError


class ComparisonCache:
    """Remembers work done on a list of comparison texts (tokenized references, n-gram counts ...).

    Scoring many systems of one data set passes the same references (and sources) again and again;
    the key is the texts themselves, so equal lists built afresh still hit. A few entries are kept
    (least recently used goes first): at most ``maxsize`` lists, and beside the newest entry no more than
    ``max_segments`` segments in all, so that a streamed run, which sees new references in every chunk, holds the
    work of about one chunk instead of ``maxsize`` of them (issue #46: BLEU's memory climbed with the record count
    until eight chunks were cached).
    """

    def __init__(self, maxsize: int = 8, max_segments: int = 5_000) -> None:
        self.maxsize = maxsize
        self.max_segments = max_segments
        self._data: OrderedDict[Hashable, tuple[int, Any]] = OrderedDict()
        self._segments = 0

    @staticmethod
    def key(comparisons: Sequence[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(c) for c in comparisons)

    def get(self, comparisons: Sequence[Sequence[str]], build: Callable[[], Any]) -> Any:
        key = self.key(comparisons)
        if key in self._data:
            self._data.move_to_end(key)
            return self._data[key][1]
        value = build()
        self._data[key] = (len(comparisons), value)
        self._segments += len(comparisons)
        while len(self._data) > 1 and (len(self._data) > self.maxsize or self._segments > self.max_segments):
            size, _ = self._data.popitem(last=False)[1]
            self._segments -= size
        return value

    def clear(self) -> None:
        self._data.clear()
        self._segments = 0

    def __len__(self) -> int:
        return len(self._data)

    @property
    def segments(self) -> int:
        """Segments held in all entries."""
        return self._segments


def check_lengths(metric: str, outputs: Sequence[str], comparisons: Sequence[Sequence[str]]) -> None:
    if len(outputs) != len(comparisons):
        raise InputError(f"metric {metric!r}: {len(outputs)} outputs but {len(comparisons)} comparison lists")
    for i, comp in enumerate(comparisons):
        if isinstance(comp, str):
            raise InputError(f"metric {metric!r}: the comparisons of segment {i} are a string, not a list of strings")
        if len(comp) == 0:
            raise InputError(f"metric {metric!r}: segment {i} has nothing to compare with (no references)")


def check_choice(metric: str, param: str, value: Any, choices: Sequence[Any]) -> None:
    if value not in choices:
        raise InputError(f"metric {metric!r}: {param}={value!r} is not one of {', '.join(map(repr, choices))}")


def check_bool(metric: str, param: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InputError(f"metric {metric!r}: {param} must be true or false, got {value!r}")


def check_number(metric: str, param: str, value: Any, *, low: float | None = None, high: float | None = None,
                 integer: bool = False) -> None:
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or (low is not None and value < low) \
            or (high is not None and value > high):
        what = "an integer" if integer else "a finite number"
        bounds = f" in [{low}, {high}]" if low is not None and high is not None else (
            f" >= {low}" if low is not None else (f" <= {high}" if high is not None else ""))
        raise InputError(f"metric {metric!r}: {param} must be {what}{bounds}, got {value!r}")


# -- word tokenizers (METEOR, PINC) --------------------------------------------------------------
_WORDPUNCT = re.compile(r"\w+|[^\w\s]+")


def make_word_tokenizer(metric: str, name: str) -> Callable[[str], list[str]]:
    """``whitespace`` (str.split), ``wordpunct`` (NLTK's wordpunct_tokenize regex), ``13a`` (sacrebleu's
    mteval-v13a tokenizer, then split)."""
    if name == "whitespace":
        return str.split
    if name == "wordpunct":
        return _WORDPUNCT.findall
    if name == "13a":
        from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

        tok = Tokenizer13a()
        return lambda s: tok(s.rstrip()).split()
    raise InputError(f"metric {metric!r}: tokenize={name!r} is not one of 'whitespace', 'wordpunct', '13a'")


WORD_TOKENIZERS = ("whitespace", "wordpunct", "13a")
