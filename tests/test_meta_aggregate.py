"""Aggregation of judgments: means, z-scores, system scores, Rao & Tetreault average rank."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from styleval.meta import Judgments, mean_scores, rao_tetreault_average_rank, system_scores, z_scores


def _j(rows):
    return Judgments.from_records(
        {"system": s, "segment": g, "annotator": a, "aspect": asp, "score": x} for s, g, a, asp, x in rows)


J = _j([
    ("A", "1", "r1", "c", 10), ("A", "1", "r2", "c", 60),
    ("B", "1", "r1", "c", 20), ("B", "1", "r2", "c", 80),
    ("A", "2", "r1", "c", 30), ("A", "2", "r2", "c", 70),
    ("B", "2", "r1", "c", 40),  # r2 did not rate B/2
    ("A", "1", "r1", "s", 1),
])


def test_mean_scores():
    m = mean_scores(J, "c").set_index(["system", "segment"])
    assert m.loc[("A", "1"), "score"] == 35 and m.loc[("B", "2"), "score"] == 40
    assert m.loc[("B", "2"), "n_annotators"] == 1


def test_mean_scores_needs_an_aspect_when_several():
    with pytest.raises(ValueError):
        mean_scores(J)


@pytest.mark.parametrize("ddof", [0, 1])
def test_z_scores_per_annotator(ddof):
    r1 = np.array([10, 20, 30, 40.0])
    r2 = np.array([60, 80, 70.0])
    z1 = (r1 - r1.mean()) / r1.std(ddof=ddof)
    z2 = (r2 - r2.mean()) / r2.std(ddof=ddof)
    z = z_scores(J, "c", ddof=ddof).set_index(["system", "segment"])["score"]
    assert z[("A", "1")] == pytest.approx((z1[0] + z2[0]) / 2)
    assert z[("B", "1")] == pytest.approx((z1[1] + z2[1]) / 2)
    assert z[("B", "2")] == pytest.approx(z1[3])


def test_z_scores_constant_annotator_gives_zero():
    j = _j([("A", "1", "r", "c", 5), ("B", "1", "r", "c", 5)])
    assert z_scores(j, "c")["score"].tolist() == [0.0, 0.0]


def test_system_scores_from_judgments_and_tables():
    s = system_scores(J, "c").set_index("system")["score"]
    assert s["A"] == pytest.approx((35 + 50) / 2) and s["B"] == pytest.approx((50 + 40) / 2)
    metric = pd.DataFrame({"system": ["A", "A", "B"], "segment": ["1", "2", "1"], "metric": "m",
                           "score": [1.0, 3.0, 5.0]})
    out = system_scores(metric)
    assert list(out.columns) == ["metric", "system", "score", "n_segments"]
    assert out.set_index("system").loc["A", "score"] == 2.0


def test_rao_tetreault_average_rank_from_ranks():
    rows = []
    # two items, two annotators; ranks 1 = best
    for seg, ann, ranks in [("1", "x", (1, 2, 3)), ("1", "y", (1, 3, 2)), ("2", "x", (2, 1, 3)), ("2", "y", (1, 2, 3))]:
        rows += [(s, seg, ann, "overall", r) for s, r in zip("ABC", ranks)]
    out = rao_tetreault_average_rank(_j(rows), "overall")
    assert out["system"].tolist() == ["A", "B", "C"]
    assert out.set_index("system")["average_rank"].to_dict() == pytest.approx({"A": 1.25, "B": 2.0, "C": 2.75})
    # weighted-average form: sum_r r * count(r) / sum_r count(r)
    assert (1 * 3 + 2 * 1) / 4 == 1.25
    assert out["n"].tolist() == [4, 4, 4]


def test_rao_tetreault_average_rank_from_scores_with_ties():
    rows = [("A", "1", "x", "o", 90), ("B", "1", "x", "o", 50), ("C", "1", "x", "o", 50)]
    out = rao_tetreault_average_rank(_j(rows), from_scores=True).set_index("system")["average_rank"]
    assert out.to_dict() == {"A": 1.0, "B": 2.0, "C": 2.0}
    out = rao_tetreault_average_rank(_j(rows), from_scores=True, ties="average").set_index("system")
    assert out["average_rank"].to_dict() == {"A": 1.0, "B": 2.5, "C": 2.5}
