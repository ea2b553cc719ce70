"""Text normalisation before LM-based fluency scores: undo PTB-style tokenization and restore casing.

Released style-transfer outputs (Yelp, GYAFC) are often lower-cased and tokenized (``i did n't like it .``). A
language model trained on ordinary text finds such strings unlikely for reasons that have nothing to do with their
grammar. :func:`normalize` maps them back towards ordinary text:

* ``detokenize``: sacremoses' Moses detokenizer (English), plus the PTB contraction splits it leaves
  (``did n't`` -> ``didn't``, ``can not`` stays), so ``it 's good , really .`` -> ``it's good, really.``;
* ``truecase``: a rule-based true-caser: the first letter of the text and of every sentence after ``. ! ?`` is
  upper-cased, and the pronoun ``i`` (alone or in ``i'm``, ``i've``, ``i'd``, ``i'll``) becomes ``I``. It only
  raises letters; text that already has capitals keeps them.

:data:`MODES` names the choices a metric's ``normalize=`` parameter takes; the chosen mode is part of its
signature (``none``, ``detok``, ``truecase``, ``detok+truecase``, ``auto``, ``auto-corpus``):

* ``auto`` decides per text, from that text alone, so a text's score never depends on the texts scored with it: a
  text with no capital letter is true-cased, one that shows PTB tokenization (`` n't``, `` 's``, a space before
  ``. , ! ?``) is detokenized;
* ``auto-corpus`` decides once for all the texts given together (one system's outputs, :func:`resolve_auto`):
  true-casing only when no text has a capital letter (a lower-cased release: the casing carries no information),
  detokenizing only when at least a fifth of the texts show PTB tokenization. Text that writers cased and spaced
  themselves is then left alone as a whole, so a lower-case ``i`` in informal writing still counts against it, but
  one cased row added to a lower-cased system changes how every other row is read; a metric names the mode it
  applied to each system in its signature (``normalized_as``).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from ..errors import InputError

AUTO, AUTO_CORPUS = "auto", "auto-corpus"
MODES = ("none", "detok", "truecase", "detok+truecase", AUTO, AUTO_CORPUS)
#: ``auto-corpus`` detokenizes when at least this share of a system's outputs shows PTB tokenization: short tokenized
#: sentences often show none (``very good``), while text its writers spaced themselves almost never does.
TOKENIZED_SHARE = 0.2

_NT = re.compile(r"(\w) n't\b", re.IGNORECASE)
_PTB = re.compile(r"\w n't\b|\w '(?:s|re|ve|m|ll|d)\b|\w [.,!?]", re.IGNORECASE)
_SPLIT_NT = re.compile(r"(\w)n '(t)\b", re.IGNORECASE)
_SENT_START = re.compile(r"(^|[.!?]\s+)([a-z])")
_PRONOUN_I = re.compile(r"(?<![\w'])i(?=(?:'(?:m|ve|d|ll))?(?![\w']))")


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else an :class:`InputError` naming them."""
    if mode not in MODES:
        raise InputError(f"normalize must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


@lru_cache(maxsize=1)
def _tokenizer():
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang="en")


def tokenize_lower(text: str) -> str:
    """The form in which many TST outputs are released: Moses-tokenized with PTB contractions (``do n't``),
    lower-cased (the inverse direction of :func:`normalize`, used to make training data of that form)."""
    tok = _tokenizer().tokenize(text, escape=False)
    return _SPLIT_NT.sub(r"\1 n'\2", " ".join(tok)).lower()


@lru_cache(maxsize=1)
def _detokenizer():
    try:
        from sacremoses import MosesDetokenizer
    except ImportError:  # a main dependency; a broken install says so plainly
        from ..errors import ResourceUnavailableError

        raise ResourceUnavailableError("detokenizing needs sacremoses: pip install sacremoses") from None
    return MosesDetokenizer(lang="en")


def detokenize(text: str) -> str:
    """Moses detokenization of a whitespace-tokenized English text, with PTB ``n't`` splits joined."""
    out = _detokenizer().detokenize(text.split())
    return _NT.sub(r"\1n't", out)


def truecase(text: str) -> str:
    """Capitalize sentence starts and the pronoun ``i``; other letters are left as they are."""
    text = _PRONOUN_I.sub("I", text)
    return _SENT_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def resolve_auto(texts: Sequence[str]) -> str:
    """The fixed mode that ``auto-corpus`` means for these texts (one system's outputs), and ``auto`` for one text:
    see the module doc."""
    texts = [t for t in texts if t.strip()]
    if not texts:
        return "none"
    lowered = not any(c.isupper() for t in texts for c in t)
    tokenized = sum(bool(_PTB.search(t)) for t in texts) >= TOKENIZED_SHARE * len(texts)
    return {(True, True): "detok+truecase", (True, False): "truecase", (False, True): "detok",
            (False, False): "none"}[(lowered, tokenized)]


def normalize(text: str, mode: str = "detok+truecase") -> str:
    """``text`` under normalisation ``mode`` (one of :data:`MODES`; ``auto`` and ``auto-corpus`` decide from this text
    alone)."""
    check_mode(mode)
    if mode in (AUTO, AUTO_CORPUS):
        mode = resolve_auto([text])
    if mode in ("detok", "detok+truecase"):
        text = detokenize(text)
    if mode in ("truecase", "detok+truecase"):
        text = truecase(text)
    return text


def normalize_all(texts: Sequence[str], mode: str = "detok+truecase") -> list[str]:
    """:func:`normalize` of each text (identical texts are normalised once; ``auto`` decides per text,
    ``auto-corpus`` once for all)."""
    check_mode(mode)
    if mode == AUTO_CORPUS:
        mode = resolve_auto(texts)
    if mode == "none":
        return list(texts)
    done: dict[str, str] = {}
    return [done[t] if t in done else done.setdefault(t, normalize(t, mode)) for t in texts]
