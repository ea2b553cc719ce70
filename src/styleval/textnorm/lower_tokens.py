"""Text normalisation a style model can apply before its features, so that cased, detokenized text and its
lower-cased, tokenized release (as many style-transfer outputs are published) get the same features.

``lower-tokens``: HTML entities unescaped, clitics split as the Penn Treebank does (``don't`` -> ``do n't``,
``it's`` -> ``it 's``), every punctuation mark a token of its own, whitespace collapsed, lower-cased. It is
idempotent, so text that is already tokenized this way (PT16, many GYAFC releases) is left as it is.
"""
from __future__ import annotations

import html
import re
from typing import Callable, Sequence

from ..errors import InputError

_NEG = re.compile(r"(\w)(n't)\b", re.IGNORECASE)
_CLITIC = re.compile(r"(\w)('(?:s|re|ve|ll|d|m))\b", re.IGNORECASE)
_PUNCT = re.compile(r"([^\w\s'])")
# a quote mark (not an apostrophe inside a word, not a clitic's): set apart
_QUOTE = re.compile(r"(?:(?<=\s)|^)'(?!(?:s|re|ve|ll|d|m)\b)(?=\w)|(?<=\w)'(?=\s|$)", re.IGNORECASE)


def lower_tokens(text: str) -> str:
    t = html.unescape(text)
    t = _NEG.sub(r"\1 \2", t)
    t = _CLITIC.sub(r"\1 \2", t)
    t = _PUNCT.sub(r" \1 ", t)
    t = _QUOTE.sub(" ' ", t)
    return " ".join(t.split()).lower()


def unescape_only(text: str) -> str:
    return html.unescape(text)


NORMALISERS: dict[str, Callable[[str], str]] = {"html.unescape": unescape_only, "lower-tokens": lower_tokens}
#: The normalisations after which a model cannot see case (a model that applies one is case-blind).
CASE_BLIND = frozenset({"lower-tokens"})


def normaliser(name: str) -> Callable[[str], str]:
    try:
        return NORMALISERS[name]
    except KeyError:
        raise InputError(f"unknown text normalisation {name!r} (known: {', '.join(NORMALISERS)})") from None


def normalise(texts: Sequence[str], name: str = "html.unescape") -> list[str]:
    fn = normaliser(name)
    return [fn(t) for t in texts]
