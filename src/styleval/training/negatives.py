"""Automatically made negatives: rewrites that keep a text's style but change what it says.

Each operation edits one text through its spaCy parse and returns ``None`` when it does not apply:
``entity`` (a named entity for another of the same label), ``number`` (a number for another), ``noun`` and
``verb`` (a content word for another of the same fine tag), ``negation`` (add or remove a negation),
``delete`` (drop a clause, phrase or sentence of at least two words) and ``insert`` (add a phrase or clause taken
from another text). Replacements come from a :class:`DonorPool` built from other texts, so they are real words
in real use; the rest of the text, and so its style, stays as it was.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..nlp import ParsedText, Token
from ..preservation.lexical import ENTITY_LABELS, TONE_WORDS, token_offsets

OPERATIONS = ("entity", "number", "noun", "verb", "negation", "delete", "insert")
_CLAUSE_DEPS = frozenset({"advcl", "conj", "ccomp", "xcomp", "relcl", "prep", "acl", "npadvmod"})
_PHRASE_DEPS = frozenset({"prep", "advcl", "relcl", "acl"})
_NUMBER_WORDS = "two three four five six seven eight nine ten twelve twenty fifty hundred".split()


def _subtree(parsed: ParsedText, root: int) -> list[int]:
    children: dict[int, list[int]] = defaultdict(list)
    for i, t in enumerate(parsed.tokens):
        if t.head != i:
            children[t.head].append(i)
    out, stack = [], [root]
    while stack:
        k = stack.pop()
        out.append(k)
        stack.extend(children.get(k, []))
    return sorted(out)


def _is_contiguous(idx: list[int]) -> bool:
    return bool(idx) and idx[-1] - idx[0] + 1 == len(idx)


def _replace(parsed: ParsedText, start_tok: int, end_tok: int, new: str) -> str:
    spans = token_offsets(parsed)
    a, b = spans[start_tok][0], spans[end_tok - 1][1]
    text = parsed.text
    out = text[:a] + new + text[b:]
    return " ".join(out.split())


@dataclass
class DonorPool:
    """Entities by label, content words by fine tag, and phrases, gathered from parsed texts."""

    entities: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    words: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    phrases: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, parsed: Sequence[ParsedText]) -> "DonorPool":
        pool = cls()
        seen_e: set[tuple[str, str]] = set()
        seen_w: set[tuple[str, str]] = set()
        for p in parsed:
            for e in p.entities:
                if e.label in ENTITY_LABELS and (e.label, e.text) not in seen_e:
                    seen_e.add((e.label, e.text))
                    pool.entities[e.label].append(e.text)
            for i, t in enumerate(p.tokens):
                if t.pos in ("NOUN", "VERB") and t.text.isalpha() and not t.is_stop and len(t.text) > 2 \
                        and t.text.lower() not in TONE_WORDS and (t.tag, t.text.lower()) not in seen_w:
                    seen_w.add((t.tag, t.text.lower()))
                    pool.words[t.tag].append(t.text.lower())
                if t.dep in _PHRASE_DEPS:
                    idx = _subtree(p, i)
                    if 3 <= len(idx) <= 8 and _is_contiguous(idx):
                        spans = token_offsets(p)
                        text = p.text[spans[idx[0]][0]:spans[idx[-1]][1]]
                        if not any(ch in text for ch in ".!?"):
                            pool.phrases.append(text)
        return pool


def _pick_other(rng: random.Random, items: Sequence[str], current: str) -> str | None:
    options = [x for x in items if x.lower() != current.lower()]
    return rng.choice(options) if options else None


def swap_entity(p: ParsedText, pool: DonorPool, rng: random.Random) -> str | None:
    ents = [e for e in p.entities if e.label in ENTITY_LABELS and pool.entities.get(e.label)]
    if not ents:
        return None
    e = rng.choice(ents)
    new = _pick_other(rng, pool.entities[e.label][:5000], e.text)
    return None if new is None else _replace(p, e.start, e.end, new)


def swap_number(p: ParsedText, pool: DonorPool, rng: random.Random) -> str | None:
    idx = [i for i, t in enumerate(p.tokens) if t.pos == "NUM" or t.text.replace(",", "").isdigit()]
    if not idx:
        return None
    i = rng.choice(idx)
    old = p.tokens[i].text
    if old.replace(",", "").isdigit():
        value = int(old.replace(",", ""))
        new = str(rng.choice([v for v in (value + 1, value + 2, value * 2 + 1, max(0, value - 1) or 7, value * 10)
                              if v != value]))
    else:
        new = _pick_other(rng, _NUMBER_WORDS, old) or "seven"
    return _replace(p, i, i + 1, new)


def _swap_pos(p: ParsedText, pool: DonorPool, rng: random.Random, pos: str) -> str | None:
    idx = [i for i, t in enumerate(p.tokens) if t.pos == pos and t.text.isalpha() and not t.is_stop
           and t.text.lower() not in TONE_WORDS and pool.words.get(t.tag)]
    if not idx:
        return None
    i = rng.choice(idx)
    tok = p.tokens[i]
    new = _pick_other(rng, pool.words[tok.tag], tok.text)
    if new is None:
        return None
    if tok.text[:1].isupper():
        new = new[:1].upper() + new[1:]
    return _replace(p, i, i + 1, new)


def swap_noun(p: ParsedText, pool: DonorPool, rng: random.Random) -> str | None:
    return _swap_pos(p, pool, rng, "NOUN")


def swap_verb(p: ParsedText, pool: DonorPool, rng: random.Random) -> str | None:
    return _swap_pos(p, pool, rng, "VERB")


def negate(p: ParsedText, pool: DonorPool, rng: random.Random) -> str | None:
    toks: Sequence[Token] = p.tokens
    neg = [i for i, t in enumerate(toks) if t.text.lower() in ("not", "n't", "never")]
    if neg:
        i = rng.choice(neg)
        text = _replace(p, i, i + 1, "")
        return text.replace(" ,", ",")
    aux = [i for i, t in enumerate(toks) if t.pos == "AUX" and t.dep != "auxpass" and t.text.isalpha()
           and not (i + 1 < len(toks) and toks[i + 1].text.lower() in ("nt", "n't", "not"))]
    if not aux:
        return None
    i = aux[0]
    return _replace(p, i, i + 1, toks[i].text + " not")


def delete_clause(p: ParsedText, pool: DonorPool, rng: random.Random) -> str | None:
    sentences = p.sentences()
    n_words = sum(1 for t in p.tokens if t.is_word)
    if len(sentences) > 1 and rng.random() < 0.5:
        k = rng.randrange(len(sentences))
        start = sum(len(s) for s in sentences[:k])
        return _replace(p, start, start + len(sentences[k]), "") or None
    options = []
    for i, t in enumerate(p.tokens):
        if t.dep in _CLAUSE_DEPS:
            idx = _subtree(p, i)
            words = sum(1 for k in idx if p.tokens[k].is_word)
            if _is_contiguous(idx) and 2 <= words <= max(2, int(0.6 * n_words)):
                options.append(idx)
    if not options:
        return None
    idx = rng.choice(options)
    start, end = idx[0], idx[-1] + 1
    if start > 0 and p.tokens[start - 1].dep == "cc" or start > 0 and p.tokens[start - 1].text == ",":
        start -= 1
    text = _replace(p, start, end, "")
    return text if text.strip() and sum(ch.isalnum() for ch in text) > 2 else None


def insert_phrase(p: ParsedText, pool: DonorPool, rng: random.Random) -> str | None:
    if not pool.phrases or not p.tokens:
        return None
    phrase = rng.choice(pool.phrases)
    toks = p.tokens
    end = len(toks)
    while end > 0 and toks[end - 1].is_punct:
        end -= 1
    if end == 0:
        return None
    spans = token_offsets(p)
    cut = spans[end - 1][1]
    return " ".join((p.text[:cut] + " " + phrase + p.text[cut:]).split())


OPERATION_FUNCTIONS: dict[str, Callable[[ParsedText, DonorPool, random.Random], str | None]] = {
    "entity": swap_entity, "number": swap_number, "noun": swap_noun, "verb": swap_verb, "negation": negate,
    "delete": delete_clause, "insert": insert_phrase,
}


def corrupt(p: ParsedText, pool: DonorPool, rng: random.Random,
            operations: Sequence[str] = OPERATIONS) -> tuple[str, str] | None:
    """(operation, changed text) for the first applicable operation in a random order, or ``None``."""
    ops = list(operations)
    rng.shuffle(ops)
    for op in ops:
        new = OPERATION_FUNCTIONS[op](p, pool, rng)
        if new and new.strip() and new.strip() != p.text.strip():
            return op, new
    return None
