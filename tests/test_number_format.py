"""One number format in every table: the interval's half-width to two significant digits, the score rounded to the
same decimal place (``styleval score``, ``score --stream``, the evaluation's terminal, HTML and Markdown tables)."""
from __future__ import annotations

import math

import pytest

import styleval
from styleval.cli.score_table import format_table
from styleval.evaluation.summary import aspect_rows, estimate, estimate_decimals
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
])
def test_estimate(value, ci, text):
    assert estimate(value, ci) == text


def test_decimals_follow_the_half_width():
    assert [estimate_decimals((0, 2 * h)) for h in (0.0123, 0.5, 2.8, 12.0)] == [3, 2, 1, 0]
    assert estimate_decimals(None) is None and estimate_decimals((math.nan, 1.0)) is None


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
