"""Sentence types (declarative, interrogative, imperative, exclamatory) from punctuation and a dependency parse.

Rules, in order, for one sentence: ends with ``?`` -> interrogative; ends with ``!`` -> exclamatory; starts with an
auxiliary or modal followed by its subject, at the start of the sentence or of a clause after a comma or
conjunction ("can you find ...", "hi, can you ...") or with a wh-word followed by an auxiliary ("where
is ...") -> interrogative; its root is a base-form verb (tag ``VB``) without a subject and only interjections,
"please", adverbs or conjunctions before it -> imperative; otherwise declarative.
"""
from __future__ import annotations

from ..nlp import ParsedText, Token

SENTENCE_TYPES = ("declarative", "interrogative", "imperative", "exclamatory")
_WH = {"what", "who", "whom", "whose", "which", "when", "where", "why", "how"}
_SUBJ = {"nsubj", "nsubjpass", "expl", "csubj"}
_PRE_IMPERATIVE = {"INTJ", "ADV", "CCONJ", "PUNCT", "SPACE"}


def sentence_type(tokens: list[Token], offset: int = 0) -> str:
    """Type of one sentence; ``offset`` is the index of its first token in the parsed text (for heads)."""
    words = [t for t in tokens if not t.is_space]
    if not words:
        return "declarative"
    last = next((t.text for t in reversed(words) if t.is_punct and t.text in "?!."), "")
    end = "".join(t.text for t in words[-2:])
    if last == "?" or end.endswith("?"):
        return "interrogative"
    if last == "!" or end.endswith("!"):
        return "exclamatory"
    content = [t for t in words if t.is_word]
    if not content:
        return "declarative"
    first = content[0]
    for i, t in enumerate(words):  # an auxiliary opening the sentence or a clause, then a subject: "can you ..."
        opens = t is first or (i > 0 and (words[i - 1].text == "," or words[i - 1].pos == "CCONJ"))
        if opens and t.pos == "AUX" and i + 1 < len(words) and words[i + 1].dep in _SUBJ:
            return "interrogative"
    if first.text.lower() in _WH and len(content) > 1 and content[1].pos == "AUX":
        return "interrogative"
    root_i = next((i for i, t in enumerate(tokens) if t.dep == "ROOT"), None)
    if root_i is not None:
        root = tokens[root_i]
        has_subject = any(t.dep in _SUBJ and t.head == offset + root_i for t in tokens)
        before = tokens[:root_i]
        if root.tag == "VB" and not has_subject and all(
                t.pos in _PRE_IMPERATIVE or t.text.lower() == "please" for t in before):
            return "imperative"
    return "declarative"


def text_types(parsed: ParsedText) -> list[str]:
    """Types of each sentence of a text, in order."""
    out, offset = [], 0
    for sent in parsed.sentences():
        if any(t.is_word for t in sent):
            out.append(sentence_type(sent, offset))
        offset += len(sent)
    return out
