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
