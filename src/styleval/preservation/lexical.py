"""Content words of a parsed text: what a rewrite must keep, with style words set aside.

A content word is a noun, proper noun, verb, adjective or number that is not a stopword and not a *style word*
(words whose job is tone rather than meaning: sentiment-bearing words, politeness and formality markers,
intensifiers, profanity). The style-word list is part of a preservation model (stored in its folder), so that a
sentiment flip, a politer or a less vulgar wording does not count as lost content while a changed noun does.
Numbers are normalised to words (``4`` -> ``four``) so "4 kids" and "four kids" agree.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..entities.numbers import digits_to_words
from ..nlp import ParsedText

CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})
NEGATIONS = frozenset({"not", "n't", "never", "no", "nothing", "nobody", "none", "neither", "nor", "cannot",
                       "without", "nowhere"})
# Entity labels whose change alters what a text says (dates, amounts and names; not ORDINAL-like style).
ENTITY_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW",
                           "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "CARDINAL", "ORDINAL"})

#: Formality, politeness, hedging and intensity markers that carry tone, not content (lower-case lemmas).
#: Sentiment and profanity come from a polarity lexicon at training time (see ``train.default_style_words``).
TONE_WORDS = frozenset("""
please kindly thank thanks sorry apologize apologise appreciate regard regards dear sir madam mr mrs ms
lol lmao omg haha hahaha hehe wow yeah yea yep nope ok okay gonna wanna gotta kinda sorta dude guy guys bro man
really very quite rather truly totally absolutely definitely certainly surely indeed literally actually
basically seriously honestly simply just extremely incredibly highly super pretty
thing stuff way lot bit kind sort
would could might may shall must will can should
think guess feel believe suppose seem
""".split())


@dataclass(frozen=True)
class ContentWord:
    key: str  # lower-case lemma, numbers in words
    start: int  # character offsets in the text
    end: int
    entity: bool


@dataclass(frozen=True)
class ContentView:
    """The parts of one text that preservation features compare."""

    text: str
    words: tuple[ContentWord, ...]
    entities: tuple[str, ...]  # normalised entity strings
    numbers: tuple[str, ...]
    negations: int
    n_words: int


def token_offsets(parsed: ParsedText) -> list[tuple[int, int]]:
    """Character span of every token (spaCy tokens are non-overlapping substrings, in order)."""
    spans, pos = [], 0
    for tok in parsed.tokens:
        at = parsed.text.find(tok.text, pos)
        if at < 0:  # cannot happen for spaCy's tokenizer; keep the previous position rather than fail
            at = pos
        spans.append((at, at + len(tok.text)))
        pos = at + len(tok.text)
    return spans


def _key(text: str, lemma: str) -> str:
    word = (lemma or text).lower().strip()
    return digits_to_words(word.replace(",", "")) if word.replace(",", "").isdigit() else word


def content_view(parsed: ParsedText, style_words: frozenset[str]) -> ContentView:
    offsets = token_offsets(parsed)
    words: list[ContentWord] = []
    numbers: list[str] = []
    negations = 0
    n_words = 0
    for tok, (start, end) in zip(parsed.tokens, offsets):
        if not tok.is_word:
            continue
        n_words += 1
        low = tok.text.lower()
        if low in NEGATIONS or tok.lemma.lower() in NEGATIONS:
            negations += 1
            continue
        key = _key(tok.text, tok.lemma)
        is_number = tok.pos == "NUM" or low.replace(",", "").replace(".", "").isdigit()
        if is_number:
            numbers.append(key)
        if tok.pos not in CONTENT_POS and not is_number:
            continue
        in_entity = tok.ent_index >= 0
        if not in_entity and not is_number and (tok.is_stop or key in style_words or low in style_words):
            continue
        words.append(ContentWord(key, start, end, in_entity))
    ents = []
    for e in parsed.entities:
        if e.label in ENTITY_LABELS:
            toks = parsed.tokens[e.start:e.end]
            norm = " ".join(_key(t.text, t.lemma) for t in toks if t.is_word and t.pos != "DET")
            if norm:
                ents.append(norm)
    return ContentView(parsed.text, tuple(words), tuple(dict.fromkeys(ents)), tuple(dict.fromkeys(numbers)),
                       negations, n_words)
