"""Overall scores: harmonic/geometric mean, joint score J, Rao & Tetreault combined, ScoreResult helper."""
from __future__ import annotations

import math

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.metrics.base import Aspect, MetricResult
from styleval.metrics.overall import (Column, combine_result, geometric_mean, harmonic_mean, joint_score,
                                      joint_segments, rao_tetreault_combined)
from styleval.results import ScoreResult
from styleval.signature import Signature


def test_harmonic_and_geometric_by_hand():
    assert harmonic_mean(0.8, 0.4) == pytest.approx(2 * 0.8 * 0.4 / 1.2)  # 0.5333
    assert geometric_mean(0.8, 0.2) == pytest.approx(0.4)
    assert harmonic_mean(0.0, 0.0) == 0.0
    np.testing.assert_allclose(harmonic_mean([1, 0.5], [1, 0.5]), [1, 0.5])
    with pytest.raises(InputError, match="rescale"):
        harmonic_mean(0.9, 35.0)  # BLEU on 0-100 must be rescaled


def test_joint_score_by_hand():
    sta, sim, fl = [1, 0, 1, 1], [0.9, 0.8, 0.5, 0.7], [1, 1, 0, 1]
    assert joint_segments(sta, sim, fl).tolist() == pytest.approx([0.9, 0, 0, 0.7])
    assert joint_score(sta, sim, fl) == pytest.approx(1.6 / 4)
    with pytest.raises(InputError, match="segments"):
        joint_score([1], [1, 1], [1])


def test_rao_tetreault_combined_by_hand():
    # formality 0 on -3..3 -> .5; fluency 4 on 1..4 -> 1; meaning 2.5 on 0..5 -> .5; mean = 2/3
    assert rao_tetreault_combined(0.0, 4.0, 2.5) == pytest.approx(2 / 3)
    assert rao_tetreault_combined(9.0, 0.0, -1.0) == pytest.approx(1 / 3)  # clipped to 1, 0, 0
    assert rao_tetreault_combined(3.0, 1.0, 0.0, weights=(2, 1, 1)) == pytest.approx(0.5)
    assert rao_tetreault_combined(1.0, 2.0, 3.0, scales={"formality": (0, 2), "fluency": (0, 4),
                                                        "meaning": (0, 6)}) == pytest.approx(0.5)


def _mr(metric: str, system: str, ids, scores, hib=True) -> MetricResult:
    s = np.asarray(scores, dtype=float)
    return MetricResult(metric=metric, system=system, ids=list(ids), segment_scores=s, stats=s[:, None],
                        corpus_score=float(s.mean()), signature=Signature(metric, "1"), higher_is_better=hib,
                        aspect=Aspect.OVERALL)


def test_combine_result_aligns_by_id_and_system():
    res = ScoreResult(results=[
        _mr("acc", "A", ["1", "2"], [1, 0]),
        _mr("bleu/src", "A", ["2", "1"], [50, 100]),  # other order: aligned by id
        _mr("ppl", "A", ["1", "2"], [20, 500], hib=False),
        _mr("acc", "B", ["1", "2"], [1, 1]),
        _mr("bleu/src", "B", ["1", "2"], [20, 20]),
        _mr("ppl", "B", ["1", "2"], [30, 40], hib=False),
    ])
    out = combine_result(res, style="acc", content=Column("bleu/src", scale=0.01),
                         fluency=Column("ppl", threshold=100, higher_is_better=False))
    t = out.table.set_index(["system", "score"])["value"]
    # A: style mean .5, content mean .75 -> hm .6, gm sqrt(.375); J = (1*1*1 + 0*.5*0)/2
    assert t["A", "hm"] == pytest.approx(0.6)
    assert t["A", "gm"] == pytest.approx(math.sqrt(0.375))
    assert t["A", "j"] == pytest.approx(0.5)
    assert t["B", "j"] == pytest.approx(0.2)
    assert out.segments["A"].loc["2", "content"] == pytest.approx(0.5)
