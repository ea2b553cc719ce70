"""Named entities of a text, normalised so that surface variants of one entity compare equal.

Normalisation (after Babakov et al.'s SGDD-TST code, re-implemented on spaCy): each token of the entity span is
lower-cased and lemmatised (spaCy's lemma), a token made only of digits is written in words (``4`` -> ``four``),
and the tokens are joined by single spaces. "4 people" and "four people" then share the entity ``four``; "4th of
March" and "the fourth of March" stay different (as in SGDD-TST).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..models import catalog as cat
from ..nlp import ParsedText, parse_many
from .numbers import digits_to_words

SHARE_RULES = ("span", "substring")


@dataclass(frozen=True)
class Entity:
    text: str
    label: str
    norm: str
    start: int
    end: int


@dataclass(frozen=True)
class TextEntities:
    """Entities of one text and its token counts (word tokens: tokens with a letter or digit)."""

    text: str
    entities: tuple[Entity, ...]
    n_words: int
    n_entity_words_span: int
    n_entity_words_substring: int

    @property
    def norms(self) -> list[str]:
        return [e.norm for e in self.entities]

    def n_entity_words(self, rule: str = "span") -> int:
        return self.n_entity_words_span if rule == "span" else self.n_entity_words_substring


def normalize_tokens(lemmas: Sequence[str]) -> str:
    """Lower-case, digits in words, joined by spaces."""
    return " ".join(digits_to_words(lemma.lower().strip()) for lemma in lemmas if lemma.strip())


def entities_of(parsed: ParsedText) -> TextEntities:
    """Entities and entity-token counts of a parsed text.

    Two ways of counting entity tokens: ``span`` counts word tokens inside an entity span; ``substring`` counts a
    word token whenever its text occurs inside any entity's text (the rule of the SGDD-TST code, which also counts
    e.g. "on" when an entity "Monday" is present; kept to compare with the stored ``scipy_proprotion``).
    """
    toks = parsed.tokens
    ents = tuple(Entity(e.text, e.label, normalize_tokens([t.lemma or t.text for t in toks[e.start:e.end]]),
                        e.start, e.end) for e in parsed.entities)
    words = [t for t in toks if t.is_word]
    in_span = sum(1 for t in words if t.ent_index >= 0)
    ent_texts = [e.text for e in parsed.entities]
    in_sub = sum(1 for t in words if any(t.text in s for s in ent_texts))
    return TextEntities(parsed.text, ents, len(words), in_span, in_sub)


def extract_entities(texts: Sequence[str], model: str = cat.DEFAULT_SPACY) -> list[TextEntities]:
    """Entities of each text, parsed with the pooled spaCy pipeline ``model``."""
    return [entities_of(p) for p in parse_many(texts, model)]
