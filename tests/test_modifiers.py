"""Content-metric modifiers: a text transform keeps the inner corpus aggregate, a score adjustment averages."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.metrics.modifiers import ContentModifier


class Lowercase(ContentModifier):
    suffix = "lower"

    def transform(self, outputs, comparisons):
        return [o.lower() for o in outputs], [[c.lower() for c in comp] for comp in comparisons]


class Halve(ContentModifier):
    suffix = "half"
    adjusts_scores = True
    n_extra = 1

    def __init__(self, *, inner, factor: float = 0.5):
        super().__init__(inner=inner)
        self.factor = factor

    def adjust(self, outputs, comparisons, scores):
        return np.column_stack([scores * self.factor, np.full(len(scores), self.factor)])


@pytest.fixture()
def batch():
    return Batch(ids=["1", "2", "3"], outputs=["The Cat sat.", "A dog Barked loudly.", "Hello World"],
                 sources=["the cat sat .", "a dog barked", "hello world"],
                 references=[["The cat sat."], ["A dog barked loudly."], ["Hello world!"]],
                 directions=[None] * 3, system="S")


def test_transform_equals_inner_option(batch):
    wrapped = Lowercase(inner=registry.create("bleu"))
    direct = registry.create("bleu", lowercase=True)
    a, b = wrapped.score(batch), direct.score(batch)
    assert a.corpus_score == pytest.approx(b.corpus_score, abs=1e-12)
    np.testing.assert_allclose(a.segment_scores, b.segment_scores, atol=1e-12)
    assert a.metric == "bleu+lower/ref"
    sig = str(a.signature)
    assert sig.startswith("bleu+lower.v1+lower.1") and "nrefs:1" in sig and "tokenize:13a" in sig
    # the resampling fast path sums the inner statistics only
    assert wrapped.sum_aggregate()(a.stats.sum(axis=0)) == pytest.approx(a.corpus_score)


def test_adjustment_averages_adjusted_scores(batch):
    inner = registry.create("chrf")
    plain = inner.score(batch)
    halved = Halve(inner=registry.create("chrf"), factor=0.5).score(batch)
    np.testing.assert_allclose(halved.segment_scores, plain.segment_scores * 0.5)
    assert halved.corpus_score == pytest.approx(np.mean(plain.segment_scores) * 0.5)
    assert "half.factor:0.5" in str(halved.signature)
    assert Halve(inner=inner).sum_aggregate() is None
