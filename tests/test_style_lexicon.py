"""Style lexicons (Mir et al. 2019 §4.1): loading the published lexicon, masking real Yelp sentences, building
one from labelled text, and the StyleMask / StyleRemove content modifiers."""
from __future__ import annotations

import json

import pytest

from styleval.errors import InputError
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.metrics.style import StyleMask, StyleRemove
from styleval.records import Direction
from styleval.style_models.lexicon import (MIR_PLACEHOLDER, StyleLexicon, build_lexicon, load_lexicon, mask_style_words,
                                    remove_style_words, write_lexicon)


@pytest.fixture(scope="module")
def mir_lexicon(shared_data) -> StyleLexicon:
    return load_lexicon(shared_data / "mir2019/style_lexicon/style_words_and_weights.json")


@pytest.fixture(scope="module")
def mir_sentences(shared_data) -> list[str]:
    lines = (shared_data / "mir2019/data/sentiment.test.0").read_text(encoding="utf-8").splitlines()
    return lines + (shared_data / "mir2019/data/sentiment.test.1").read_text(encoding="utf-8").splitlines()


def test_published_lexicon_loads(mir_lexicon) -> None:
    assert list(mir_lexicon.styles) == ["binary sentiment"]
    assert len(mir_lexicon) == 433
    assert {"rude", "terrible", "delicious", "n't"} <= mir_lexicon.words
    assert mir_lexicon.identity()["lexicon_words"] == "433"


def test_masking_real_sentences(mir_lexicon, mir_sentences) -> None:
    words = mir_lexicon.words
    rude = next(s for s in mir_sentences if " rude " in f" {s} " and " ignorant " not in f" {s} ")
    masked = mask_style_words(rude, mir_lexicon)
    assert "rude" not in masked.split() and MIR_PLACEHOLDER in masked.split()
    # only lexicon words change: the other tokens stay in place
    for a, b in zip(rude.split(), masked.split()):
        assert a == b or (a.lower() in words and b == MIR_PLACEHOLDER)
    assert len(masked.split()) == len(rude.split())
    removed = remove_style_words(rude, mir_lexicon)
    assert len(removed.split()) == len(rude.split()) - sum(t.lower() in words for t in rude.split())
    # a sentence without style words is unchanged; case is ignored when matching
    neutral = next(s for s in mir_sentences if not any(t.lower() in words for t in s.split()))
    assert mask_style_words(neutral, mir_lexicon) == neutral
    assert mask_style_words("The food was Terrible .", mir_lexicon) == f"The food was {MIR_PLACEHOLDER} ."
    # masking over the whole set touches most sentences (the lexicon targets sentiment words)
    touched = sum(mask_style_words(s, mir_lexicon) != s for s in mir_sentences)
    assert touched > len(mir_sentences) // 2


def test_build_write_load_roundtrip(tmp_path) -> None:
    pos = ["great food and great service", "the staff was friendly and great", "great prices , friendly people",
           "i love this place , great", "friendly staff , lovely room", "lovely and great"] * 3
    neg = ["terrible food and slow service", "the staff was rude and terrible", "awful prices , rude people",
           "i hate this place , terrible", "rude staff , dirty room", "dirty and awful"] * 3
    lex = build_lexicon(pos + neg, ["positive"] * len(pos) + ["negative"] * len(neg), n_std=None, C=10.0,
                        style_name="sentiment")
    words = lex.words
    assert {"great", "terrible"} <= words and "the" not in words
    top = build_lexicon(pos + neg, ["positive"] * len(pos) + ["negative"] * len(neg), top_k=2, C=10.0)
    assert len(top) == 2
    for layout in ("styleval", "mir"):
        path = write_lexicon(lex, tmp_path / f"{layout}.json", layout=layout)
        again = load_lexicon(path)
        assert again.words == words and again.content_hash() == lex.content_hash()
    plain = tmp_path / "words.txt"
    plain.write_text("great\t1.5\nterrible\n", encoding="utf-8")
    assert load_lexicon(plain).words == {"great", "terrible"}
    bad = tmp_path / "bad.txt"
    bad.write_text("great\tvery\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.txt:1"):
        load_lexicon(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(InputError):
        load_lexicon(broken)


def test_style_mask_modifier(mir_lexicon, shared_data) -> None:
    path = shared_data / "mir2019/style_lexicon/style_words_and_weights.json"
    src = ["the food was terrible and the staff was rude ."]
    out = ["the food was delicious and the staff was excellent ."]
    batch = Batch(ids=["0"], outputs=out, sources=src, references=[[]],
                  directions=[Direction("negative", "positive")])
    plain = registry.create("bleu", against="source").score(batch)
    masked_metric = StyleMask(inner=registry.create("bleu", against="source"), lexicon=str(path))
    masked = masked_metric.score(batch)
    removed = StyleRemove(inner=registry.create("bleu", against="source"), lexicon=mir_lexicon).score(batch)
    # the sentiment words are the only difference: masking and removal make the texts identical
    assert plain.corpus_score < 90
    assert masked.corpus_score == pytest.approx(100.0)
    assert removed.corpus_score == pytest.approx(100.0)
    sig = masked.signature
    assert sig.metric == "bleu+style_mask"
    assert sig.params["style_mask.placeholder"] == MIR_PLACEHOLDER
    assert sig.params["style_mask.lexicon"] == str(path)
    assert sig.resources["lexicon_hash"] == mir_lexicon.content_hash()[:12]
    assert json.dumps(sig.params)  # parameters stay JSON-serialisable
    assert removed.signature.params["style_remove.lexicon"]
