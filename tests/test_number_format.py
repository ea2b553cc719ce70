"""One number format in every table: the interval's half-width to two significant digits, the score rounded to the
same decimal place (``styleval score``, ``score --stream``, the evaluation's terminal, HTML and Markdown tables)."""
from __future__ import annotations

import math

import pytest

import styleval
from styleval.cli.score_table import format_table
from styleval.evaluation.summary import aspect_rows, display_decimals, estimate, estimate_decimals
from styleval.examples import get
from styleval.readers import read_system_dir


@pytest.mark.parametrize("value,ci,text", [
    (35.7, (32.7, 38.7), "35.7 ±3.0"),        # the "35.7 ±3" keeps the digit its interval supports
    (57.31, (54.5, 60.1), "57.3 ±2.8"),       # ... and "57.31 ±2.8" drops the one it does not
    (0.8298, (0.79, 0.87), "0.830 ±0.040"),
    (9.953, (5.0, 14.9), "10.0 ±5.0"),
    (37.75, (27.8, 47.72), "38 ±10"),         # 9.96 rounds to 10: no decimal left
    (1234.56, (1100.0, 1350.0), "1235 ±125"),  # half-widths of 10 or more: whole numbers
    (-0.001, (-0.3, 0.3), "0.00 ±0.30"),      # no "-0.00"
    (100.0, (100.0, 100.0), "100 ±0"),        # zero width
    (0.5, None, "0.5"),                       # no interval: .4g
    (float("nan"), (1.0, 2.0), "nan"),
    # an interval narrower than the display precision (four significant digits) prints at that precision
    (1.000000062, (1.00000004, 1.000000084), "1.000 ±0.000"),   # the copy system's cosine (issue #45)
    (0.99789, (0.99741, 0.99837), "0.9979 ±0.0005"),            # ... and its METEOR: four digits, as .4g
    (35.71234, (35.7, 35.72), "35.71 ±0.01"),                   # a BLEU: two decimals at most
    (0.0123456, (0.01234, 0.01236), "0.01235 ±0.00001"),        # a small score keeps its four digits
    (1234.5678, (1234.5, 1234.6), "1235 ±0"),                   # whole numbers at four digits
])
def test_estimate(value, ci, text):
    assert estimate(value, ci) == text


def test_decimals_follow_the_half_width():
    assert [estimate_decimals((0, 2 * h)) for h in (0.0123, 0.5, 2.8, 12.0)] == [3, 2, 1, 0]
    assert estimate_decimals(None) is None and estimate_decimals((math.nan, 1.0)) is None
    assert estimate_decimals((0.9999, 1.0001), 1.0) == 3 and estimate_decimals((0.9999, 1.0001)) == 3
    assert display_decimals(0.5) == 4 and display_decimals(35.7) == 2 and display_decimals(0.0, (0.0, 0.0)) is None


def test_score_and_evaluation_tables_print_the_same_cell():
    ex = get("formality")
    records = read_system_dir(ex.systems_dir, ex.source, ex.references, direction=ex.direction)
    result = styleval.score(records, ["bleu", "pinc"], bootstrap=100)
    table = format_table(result)
    data = {"score": result.to_dict(), "aspects": {"content": result.metrics}, "overall": []}
    data["score"]["settings"]["systems"] = result.systems
    rows = {r["metric"]: r for r in aspect_rows(data, "content")}
    for r in result:
        cell = estimate(r.corpus_score, r.ci)
        assert cell in table and rows[r.metric]["cells"][r.system]["text"] == cell
