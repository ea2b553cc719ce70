"""Adversarial naturalness: cross-fitted classifiers, the share of outputs judged more natural, agreement."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.naturalness import AdversarialResult, adversarial_scores, agreement

HUMAN = [f"the {w} was really good and i liked it ." for w in
         ("food", "pizza", "service", "staff", "place", "room", "coffee", "beer", "wine", "music")] * 3
MACHINE = [f"the {w} was was good good the the ." for w in
           ("food", "pizza", "service", "staff", "place", "room", "coffee", "beer", "wine", "music")] * 3


def test_unigram_separates_obvious_outputs():
    res = adversarial_scores(HUMAN, MACHINE, classifier="unigram", folds=5, seed=1)
    assert res.accuracy > 0.9
    assert res.share_more_natural == 0.0
    assert np.all(res.p_input > res.p_output)


def test_identical_outputs_are_indistinguishable():
    res = adversarial_scores(HUMAN, HUMAN, classifier="unigram", folds=5)
    np.testing.assert_allclose(res.p_input, res.p_output)  # same text, same fold model
    assert res.share_more_natural == 0.0 and (res.more_natural == 0.5).all()


def test_agreement_counts_only_ab_choices():
    res = AdversarialResult(p_input=np.array([0.9, 0.2, 0.5, 0.4]), p_output=np.array([0.1, 0.8, 0.5, 0.3]),
                            classifier="unigram", accuracy=0.5)
    # A = input preferred, B = output preferred, None = no preference (left out); a classifier tie disagrees
    assert agreement(res, ["A", "B", "A", None]) == (pytest.approx(2 / 3), 3)
    with pytest.raises(InputError):
        agreement(res, ["A"])


def test_bad_arguments():
    with pytest.raises(InputError):
        adversarial_scores(["a"], ["b", "c"])
    with pytest.raises(InputError):
        adversarial_scores(HUMAN, MACHINE, classifier="cnn")


def _records(outputs_by_system):
    from styleval import Record

    return [Record(id=str(i), source=HUMAN[i], output=out, system=system)
            for system, outputs in outputs_by_system.items() for i, out in enumerate(outputs)]


def test_naturalness_metric_equals_adversarial_share():
    from styleval.metrics import registry
    from styleval.metrics.base import Batch

    metric = registry.create("naturalness", folds=5, seed=1)
    noisy = [h if i % 3 else m for i, (h, m) in enumerate(zip(HUMAN, MACHINE))]  # a third of outputs degraded
    batch = Batch.from_records(_records({"A": noisy}))
    result = metric.score(batch)
    direct = adversarial_scores(batch.sources, batch.outputs, classifier="unigram", folds=5, seed=1)
    np.testing.assert_array_equal(result.segment_scores, (direct.p_output > direct.p_input).astype(float))
    assert result.corpus_score == pytest.approx(direct.share_more_natural)
    assert result.stats.shape == (len(HUMAN), 3)
    sig = str(result.signature)
    assert "naturalness.v1" in sig and "classifier:unigram" in sig and "folds:5" in sig and "encoder" not in sig
    with pytest.raises(InputError):
        registry.create("naturalness", classifier="bigram")


def test_naturalness_through_score_with_interval_and_test():
    import styleval

    records = _records({"copy": HUMAN, "broken": MACHINE})
    res = styleval.score(records, ["naturalness"], bootstrap=200, significance="paired-bootstrap", baseline="copy")
    table = res.corpus_table()
    assert table.loc["broken", "naturalness"] == 0.0
    broken = res.get("naturalness", "broken")
    assert broken.ci is not None
    assert res.comparisons and res.comparisons[0].metric == "naturalness"
