"""Parse texts with a spaCy pipeline from the model pool and keep light, picklable results.

Metrics that need linguistic structure (entity-aware and sentiment-aware content scores, error analysis) all
call :func:`parse_many`; each distinct text is parsed once per process and model (an in-memory cache), and the
pipeline itself is loaded once through :func:`styleval.models.pool.spacy_pipeline`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..models import catalog as cat


@dataclass(frozen=True)
class Token:
    """One spaCy token: surface text, lemma, universal and fine POS, dependency label, sentence start flag."""

    text: str
    lemma: str
    pos: str
    tag: str
    dep: str
    is_sent_start: bool
    is_punct: bool
    is_space: bool
    is_stop: bool
    ent_index: int  # index into ParsedText.entities, -1 outside any entity
    head: int = -1  # index of the syntactic head in ParsedText.tokens (itself for the root)

    @property
    def is_word(self) -> bool:
        """Has at least one letter or digit (the tokens counted in entity shares)."""
        return any(ch.isalnum() for ch in self.text)


@dataclass(frozen=True)
class EntitySpan:
    """A named entity: text, label and token range ``[start, end)``."""

    text: str
    label: str
    start: int
    end: int


@dataclass(frozen=True)
class ParsedText:
    text: str
    tokens: tuple[Token, ...]
    entities: tuple[EntitySpan, ...]
    model: str

    def sentences(self) -> list[list[Token]]:
        """Tokens grouped by sentence (spaCy's parser decides the boundaries)."""
        out: list[list[Token]] = []
        for tok in self.tokens:
            if tok.is_sent_start or not out:
                out.append([])
            out[-1].append(tok)
        return out


_CACHE: dict[tuple[str, str], ParsedText] = {}
_LOCK = threading.Lock()


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()


def _convert(doc, model: str) -> ParsedText:
    ents = tuple(EntitySpan(e.text, e.label_, e.start, e.end) for e in doc.ents)
    owner = [-1] * len(doc)
    for k, e in enumerate(ents):
        for i in range(e.start, e.end):
            owner[i] = k
    toks = tuple(Token(t.text, t.lemma_, t.pos_, t.tag_, t.dep_, bool(t.is_sent_start), t.is_punct, t.is_space,
                       t.is_stop, owner[t.i], t.head.i) for t in doc)
    return ParsedText(doc.text, toks, ents, model)


def parse_many(texts: Sequence[str] | Iterable[str], model: str = cat.DEFAULT_SPACY, *,
               batch_size: int = 256) -> list[ParsedText]:
    """Parse texts (duplicates and texts seen before are parsed once); results in input order."""
    texts = list(texts)
    with _LOCK:
        todo = list(dict.fromkeys(t for t in texts if (model, t) not in _CACHE))
    if todo:
        from ..models.pool import spacy_pipeline

        nlp = spacy_pipeline(model)
        parsed = [_convert(doc, model) for doc in nlp.pipe(todo, batch_size=batch_size)]
        with _LOCK:
            for t, p in zip(todo, parsed):
                _CACHE[(model, t)] = p
    with _LOCK:
        return [_CACHE[(model, t)] for t in texts]


def parse(text: str, model: str = cat.DEFAULT_SPACY) -> ParsedText:
    return parse_many([text], model)[0]
